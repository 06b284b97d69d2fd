/* matmul_small_avx2.c — small f32 products without BLAS on AVX2 + FMA
 * (driver: matmul.c; the AVX-512 kernels are
 * matmul_small_avx512.c).
 *
 * Each row of C (N <= 64: up to eight ymm of accumulators) is the sum of
 * a[i, k] * B[k, :] over k, B rows read in place (unit column stride), a
 * broadcast from any strides, the tail of N masked. The rows handled at once
 * shrink as N grows so accumulators and B vectors fit the 16 ymm registers:
 * 4 rows up to N = 16, 2 up to 32, 1 up to 64. A batch of products runs one
 * after the other in one call, with no per-product dispatch; a batch of
 * contiguous 16 x 16 . 16 x 16 products has its own unmasked kernel. */
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

#define MM16_AHEAD 8 /* products between a prefetch and its use */

/* Rows [i, i + R) of C = A . B for 16 x 16 row-major matrices (R <= 6):
 * 2R accumulators as named locals (an array of them GCC keeps in memory),
 * the two halves of a B row loaded once per k for the R rows. */
#define MM16_ROW(r)                                                                                \
  if (R > r) {                                                                                     \
    x = _mm256_broadcast_ss(a0 + 16 * r + k);                                                      \
    c##r##0 = _mm256_fmadd_ps(x, b0, c##r##0);                                                     \
    c##r##1 = _mm256_fmadd_ps(x, b1, c##r##1);                                                     \
  }
#define MM16_STORE(r)                                                                              \
  if (R > r) {                                                                                     \
    _mm256_storeu_ps(c0 + 16 * r, c##r##0);                                                        \
    _mm256_storeu_ps(c0 + 16 * r + 8, c##r##1);                                                    \
  }
#define MM16_ROWS(R)                                                                               \
  static __attribute__((noinline)) void mm16_rows_##R(const float *restrict a,                     \
                                                      const float *restrict b, float *restrict c, \
                                                      int i) {                                     \
    mm16_rows(a, b, c, i, R);                                                                      \
  }
static inline __attribute__((always_inline)) void mm16_rows(const float *restrict a,
                                                            const float *restrict b,
                                                            float *restrict c, int i, const int R) {
  const float *a0 = a + i * 16;
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  _Pragma("GCC unroll 16") for (int k = 0; k < 16; k++) {
    __m256 b0 = _mm256_loadu_ps(b + 16 * k), b1 = _mm256_loadu_ps(b + 16 * k + 8), x;
    MM16_ROW(0) MM16_ROW(1) MM16_ROW(2) MM16_ROW(3) MM16_ROW(4) MM16_ROW(5)
  }
  float *c0 = c + i * 16;
  MM16_STORE(0) MM16_STORE(1) MM16_STORE(2) MM16_STORE(3) MM16_STORE(4) MM16_STORE(5)
}

/* 16 rows as 6 + 6 + 4: twelve FMA chains in flight where the rows allow
 * (eight hide the FMA latency only just). Not inlined into one another:
 * GCC would keep B's 32 vectors live across the three and spill. */
MM16_ROWS(6)
MM16_ROWS(4)
static inline void mm16_f32(const float *restrict a, const float *restrict b, float *restrict c) {
  mm16_rows_6(a, b, c, 0);
  mm16_rows_6(a, b, c, 6);
  mm16_rows_4(a, b, c, 12);
}

void emlx_mm_small_f32_batch_avx2(const emlx_gemm *g, int64_t count, int64_t a_bs, int64_t b_bs) {
  const float *A = g->a, *B = g->b;
  float *C = g->c;
  int64_t c_bs = g->M * g->ldc;
  if (g->M == 16 && g->N == 16 && g->K == 16 && g->a_rs == 16 && g->a_cs == 1 && g->b_rs == 16 &&
      g->b_cs == 1 && g->ldc == 16) {
    /* As on AVX-512: the operands of a product a few ahead come into L1
     * meanwhile. */
    for (int64_t e = 0; e < count; e++) {
      if (e + MM16_AHEAD < count) {
        const char *pa = (const char *)(A + (e + MM16_AHEAD) * a_bs);
        const char *pb = (const char *)(B + (e + MM16_AHEAD) * b_bs);
        _Pragma("GCC unroll 16") for (int l = 0; l < 16; l++) {
          _mm_prefetch(pa + 64 * l, _MM_HINT_T0);
          _mm_prefetch(pb + 64 * l, _MM_HINT_T0);
        }
      }
      mm16_f32(A + e * a_bs, B + e * b_bs, C + e * c_bs);
    }
    return;
  }
  emlx_gemm one = *g;
  for (int64_t e = 0; e < count; e++) {
    one.a = A + e * a_bs;
    one.b = B + e * b_bs;
    one.c = C + e * c_bs;
    emlx_mm_small_f32_avx2(&one);
  }
}
