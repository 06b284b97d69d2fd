/* matmul_gemv_body.h — bf16 products with few rows (decode: M <= 4) and a B
 * whose columns are contiguous, read straight from B: no packing, so B (the
 * weights) crosses memory once. Included by matmul_gemv_avx2.c and
 * matmul_gemv_avx512.c, which give it their ISA flags so that the j loops
 * become vector FMAs; GEMV_NAME names the entry point.
 *
 * C[m, j] = sum over k, in order, of A[m, k] * B[k, j], each step one f32
 * FMA (the order and rounding of the packed kernels' f32 path), rounded to
 * bf16 once on the store. Columns are cut into chunks of GEMV_CHUNK whose
 * accumulators stay in L1. */
#include <math.h>

#include "convert.h"
#include "matmul.h"

#define GEMV_CHUNK 512

static inline float gemv_bf16(uint16_t h) { return emlx_cv_bf16_to_f32(h); }

void GEMV_NAME(const emlx_gemm *g, int64_t j0, int64_t j1) {
  float acc[EMLX_MM_GEMV_MAX_M][GEMV_CHUNK];
  const uint16_t *a = g->a, *b = g->b;
  uint16_t *c = g->c;
  for (int64_t c0 = j0; c0 < j1; c0 += GEMV_CHUNK) {
    int64_t n = j1 - c0 < GEMV_CHUNK ? j1 - c0 : GEMV_CHUNK;
    for (int64_t m = 0; m < g->M; m++)
      for (int64_t j = 0; j < n; j++)
        acc[m][j] = 0.0f;
    for (int64_t k = 0; k < g->K; k++) {
      const uint16_t *brow = b + k * g->b_rs + c0;
      for (int64_t m = 0; m < g->M; m++) {
        float x = gemv_bf16(a[m * g->a_rs + k * g->a_cs]);
        float *r = acc[m];
        for (int64_t j = 0; j < n; j++)
          r[j] = fmaf(x, gemv_bf16(brow[j]), r[j]);
      }
    }
    for (int64_t m = 0; m < g->M; m++)
      for (int64_t j = 0; j < n; j++)
        c[m * g->ldc + c0 + j] = emlx_cv_f32_to_bf16(acc[m][j]);
  }
}
