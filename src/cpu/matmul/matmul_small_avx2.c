/* matmul_small_avx2.c — small f32 products without BLAS on AVX2 + FMA
 * (driver: matmul.c; the AVX-512 kernels are
 * matmul_small_avx512.c).
 *
 * Each row of C (N <= 64: up to eight ymm of accumulators) is the sum of
 * a[i, k] * B[k, :] over k, B rows read in place (unit column stride), a
 * broadcast from any strides, the tail of N masked. The rows handled at once
 * shrink as N grows so accumulators and B vectors fit the 16 ymm registers:
 * 4 rows up to N = 16, 2 up to 32, 1 up to 64. A batch of products runs one
 * after the other in one call, with no per-product dispatch. */
#include <immintrin.h>

#include "matmul.h"

/* R rows of C at a time with NV accumulators each. */
#define SMALL_BLOCK(R, NV)                                                                         \
  static inline void small_block_##R##_##NV(const float *arow, int64_t a_rs, int64_t a_cs,         \
                                            const float *B, int64_t b_rs, float *crow,             \
                                            int64_t ldc, int64_t K, const __m256i *m) {            \
    __m256 acc[R][NV];                                                                             \
    _Pragma("GCC unroll 4") for (int r = 0; r < R; r++)                                            \
        _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++) acc[r][v] = _mm256_setzero_ps();      \
    const float *brow = B;                                                                         \
    for (int64_t k = 0; k < K; k++, brow += b_rs) {                                                \
      __m256 b[NV];                                                                                \
      _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++) b[v] =                                  \
          _mm256_maskload_ps(brow + 8 * v, m[v]);                                                  \
      _Pragma("GCC unroll 4") for (int r = 0; r < R; r++) {                                        \
        __m256 x = _mm256_set1_ps(arow[r * a_rs + k * a_cs]);                                      \
        _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++) acc[r][v] =                           \
            _mm256_fmadd_ps(x, b[v], acc[r][v]);                                                   \
      }                                                                                            \
    }                                                                                              \
    _Pragma("GCC unroll 4") for (int r = 0; r < R; r++)                                            \
        _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++)                                       \
            _mm256_maskstore_ps(crow + r * ldc + 8 * v, m[v], acc[r][v]);                          \
  }

#define SMALL_ROWS(R, NV)                                                                          \
  SMALL_BLOCK(R, NV)                                                                               \
  SMALL_BLOCK(1, NV)                                                                               \
  static void small_rows_##NV(const float *A, int64_t a_rs, int64_t a_cs, const float *B,          \
                              int64_t b_rs, float *C, int64_t ldc, int64_t M, int64_t K,           \
                              const __m256i *m) {                                                  \
    int64_t i = 0;                                                                                 \
    for (; i + R <= M; i += R)                                                                     \
      small_block_##R##_##NV(A + i * a_rs, a_rs, a_cs, B, b_rs, C + i * ldc, ldc, K, m);           \
    for (; i < M; i++)                                                                             \
      small_block_1_##NV(A + i * a_rs, a_rs, a_cs, B, b_rs, C + i * ldc, ldc, K, m);               \
  }

SMALL_ROWS(4, 2)
SMALL_ROWS(2, 4)
SMALL_BLOCK(1, 8)

static void small_rows_8(const float *A, int64_t a_rs, int64_t a_cs, const float *B, int64_t b_rs,
                         float *C, int64_t ldc, int64_t M, int64_t K, const __m256i *m) {
  for (int64_t i = 0; i < M; i++)
    small_block_1_8(A + i * a_rs, a_rs, a_cs, B, b_rs, C + i * ldc, ldc, K, m);
}

void emlx_mm_small_f32_avx2(const emlx_gemm *g) {
  __m256i m[8];
  for (int v = 0; v < 8; v++) {
    int64_t left = g->N - 8 * v;
    int lanes = left >= 8 ? 8 : left <= 0 ? 0 : (int)left;
    m[v] = _mm256_cmpgt_epi32(_mm256_set1_epi32(lanes), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  const float *A = g->a, *B = g->b;
  float *C = g->c;
  if (g->N <= 16)
    small_rows_2(A, g->a_rs, g->a_cs, B, g->b_rs, C, g->ldc, g->M, g->K, m);
  else if (g->N <= 32)
    small_rows_4(A, g->a_rs, g->a_cs, B, g->b_rs, C, g->ldc, g->M, g->K, m);
  else
    small_rows_8(A, g->a_rs, g->a_cs, B, g->b_rs, C, g->ldc, g->M, g->K, m);
}

void emlx_mm_small_f32_batch_avx2(const emlx_gemm *g, int64_t count, int64_t a_bs, int64_t b_bs) {
  emlx_gemm one = *g;
  int64_t c_bs = g->M * g->ldc;
  for (int64_t e = 0; e < count; e++) {
    one.a = (const float *)g->a + e * a_bs;
    one.b = (const float *)g->b + e * b_bs;
    one.c = (float *)g->c + e * c_bs;
    emlx_mm_small_f32_avx2(&one);
  }
}
