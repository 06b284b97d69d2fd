/* conv_tile.h — the f32 convolution kernels of the AVX2 and AVX-512 levels
 * (conv_tile.c: the driver; conv_tile_avx2.c, conv_tile_avx512.c: the
 * micro-kernels).
 *
 * Implicit GEMM without an im2col matrix: one call computes an MR x NR
 * block of the output, MR output positions (rows) by NR output channels of
 * one group, over every tap and input channel of the group. Row r reads, at
 * tap t, the Cg input channels at ta[t] + r * trs[t] (floats), times the
 * weights at b + tb[t] (taps lists the taps that read anything). For MR
 * consecutive positions of one output row that is the input itself where
 * the tap lands inside it for every row (trs = stride x C_in), nothing
 * where it lands outside for every row (the tap is left out), a gathered
 * MR x Cg strip otherwise; other blocks are gathered whole (MR x taps x Cg,
 * zeros for padding). B is the group's weight panel, [taps x Cg][NR] (zero
 * past the group's channels). The block is written to c (row stride ldc):
 * mv rows and nv columns of it. */
#ifndef EMLX_CPU_CONV_TILE_H
#define EMLX_CPU_CONV_TILE_H

#include <stdint.h>

typedef void (*emlx_conv_tile_fn)(const float *const *ta, const int64_t *trs, const int64_t *tb,
                                  int64_t taps, int64_t cg, const float *b, float *c, int64_t ldc,
                                  int mv, int nv);

typedef struct emlx_conv_tile_kernel {
  int mr, nr;
  emlx_conv_tile_fn tile;
} emlx_conv_tile_kernel;

extern const emlx_conv_tile_kernel emlx_conv_tile_avx2, emlx_conv_tile_avx512;

#endif
