/* conv_tile.h — the f32 convolution kernels of the AVX2 and AVX-512 levels
 * (conv_tile.c: the driver; conv_tile_avx2.c, conv_tile_avx512.c: the
 * micro-kernels).
 *
 * Implicit GEMM without an im2col matrix: one call computes an MR x NR
 * block of the output, MR output positions (rows) by NR output channels of
 * one group, over every tap and input channel of the group. Row r reads, at
 * tap t, the Cg input channels at a + toff[t] + r * rs (floats): for MR
 * consecutive positions of one output row whose taps all land inside the
 * input that is the input itself (a = the image, rs = stride x C_in); any
 * other block is first gathered into a small MR x (taps x Cg) tile with
 * zeros for padding (rs = taps x Cg, toff[t] = t x Cg). B is the group's
 * weight panel, [taps x Cg][NR] (zero past the group's channels). The block
 * is written to c (row stride ldc): mv rows and nv columns of it. */
#ifndef EMLX_CPU_CONV_TILE_H
#define EMLX_CPU_CONV_TILE_H

#include <stdint.h>

typedef void (*emlx_conv_tile_fn)(const float *a, const int64_t *toff, int64_t rs, int64_t taps,
                                  int64_t cg, const float *b, float *c, int64_t ldc, int mv,
                                  int nv);

typedef struct emlx_conv_tile_kernel {
  int mr, nr;
  emlx_conv_tile_fn tile;
} emlx_conv_tile_kernel;

extern const emlx_conv_tile_kernel emlx_conv_tile_avx2, emlx_conv_tile_avx512;

#endif
