/* conv_wino.h — the Winograd F(2x2, 3x3) convolution of the AVX2 and AVX-512
 * levels (conv_wino.c: the driver; conv_wino_body.h: the transforms, built
 * per ISA by conv_wino_avx2.c and conv_wino_avx512.c).
 *
 * A tile is 2 x 2 output positions of one image (tiles row-major over
 * (n, tile row, tile column)); its input patch is the 4 x 4 pixels from
 * (2 * tile row - lo_h, 2 * tile column - lo_w), zero outside the input. The
 * transforms of a chunk of tiles fill / read 16 matrices of ntile_rows rows
 * (tiles, zero-padded to a multiple of the GEMM kernel's MR) by cin (V) or
 * cout (the GEMMs' products) columns, one after the other. */
#ifndef EMLX_CPU_CONV_WINO_H
#define EMLX_CPU_CONV_WINO_H

#include <stdint.h>

typedef struct wino_geom {
  int64_t h, w, oh, ow;       /* input and output extents */
  int64_t lo_h, lo_w;         /* low padding */
  int64_t th, tw;             /* tiles per column and row of an image */
  int64_t cin, cout, cstride; /* channels; input pixel stride in floats */
  int64_t ntile_rows;         /* rows of each of the 16 matrices of a chunk */
} wino_geom;

/* Tiles [t0, t0 + nt) of x (N, h, w, cstride) into V (16 x ntile_rows x cin). */
typedef void (*wino_in_fn)(const wino_geom *w, const float *x, int64_t t0, int64_t nt, float *V);
/* The products Mo (16 x ntile_rows x cout) of tiles [t0, t0 + nt) into out
 * (N, oh, ow, cout). */
typedef void (*wino_out_fn)(const wino_geom *w, const float *Mo, int64_t t0, int64_t nt,
                            float *out);

void emlx_conv_wino_in_avx2(const wino_geom *w, const float *x, int64_t t0, int64_t nt, float *V);
void emlx_conv_wino_out_avx2(const wino_geom *w, const float *Mo, int64_t t0, int64_t nt,
                             float *out);
void emlx_conv_wino_in_avx512(const wino_geom *w, const float *x, int64_t t0, int64_t nt, float *V);
void emlx_conv_wino_out_avx512(const wino_geom *w, const float *Mo, int64_t t0, int64_t nt,
                               float *out);

#endif
