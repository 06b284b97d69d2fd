/* matmul_small_avx512.c — small f32 products without BLAS (driver:
 * src/cpu/matmul.c).
 *
 * For a product of a few thousand multiply-adds, a BLAS call costs more in
 * set-up than in arithmetic; a batch of 16 x 16 matrices is dominated by it.
 * Here each row of C (N <= 64: up to four zmm of accumulators, the count
 * fixed at compile time so they stay in registers) is the sum of
 * a[i, k] * B[k, :] over k, B rows read in place (unit column stride), a
 * broadcast from any strides, the tail of N masked. */
#include <immintrin.h>

#include "../matmul.h"

/* R rows of C at a time with NV accumulators each (R independent FMA chains
 * hide the FMA latency). Strides are copied to locals: __m512 is a
 * may_alias type, so the compiler would otherwise reload them after every
 * vector store. */
#define SMALL_BLOCK(R, NV)                                                                         \
  static inline void small_block_##R##_##NV(const float *arow, int64_t a_rs, int64_t a_cs,         \
                                            const float *B, int64_t b_rs, float *crow,             \
                                            int64_t ldc, int64_t K, const __mmask16 *m) {          \
    __m512 acc[R][NV];                                                                             \
    _Pragma("GCC unroll 4") for (int r = 0; r < R; r++)                                            \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_ps();      \
    const float *brow = B;                                                                         \
    for (int64_t k = 0; k < K; k++, brow += b_rs) {                                                \
      __m512 b[NV];                                                                                \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) b[v] =                                  \
          _mm512_maskz_loadu_ps(m[v], brow + 16 * v);                                              \
      _Pragma("GCC unroll 4") for (int r = 0; r < R; r++) {                                        \
        __m512 x = _mm512_set1_ps(arow[r * a_rs + k * a_cs]);                                      \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[r][v] =                           \
            _mm512_fmadd_ps(x, b[v], acc[r][v]);                                                   \
      }                                                                                            \
    }                                                                                              \
    _Pragma("GCC unroll 4") for (int r = 0; r < R; r++)                                            \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                                       \
            _mm512_mask_storeu_ps(crow + r * ldc + 16 * v, m[v], acc[r][v]);                       \
  }

#define SMALL_ROWS(NV)                                                                             \
  SMALL_BLOCK(4, NV)                                                                               \
  SMALL_BLOCK(1, NV)                                                                               \
  static void small_rows_##NV(const float *A, int64_t a_rs, int64_t a_cs, const float *B,          \
                              int64_t b_rs, float *C, int64_t ldc, int64_t M, int64_t K,           \
                              const __mmask16 *m) {                                                \
    int64_t i = 0;                                                                                 \
    for (; i + 4 <= M; i += 4)                                                                     \
      small_block_4_##NV(A + i * a_rs, a_rs, a_cs, B, b_rs, C + i * ldc, ldc, K, m);               \
    for (; i < M; i++)                                                                             \
      small_block_1_##NV(A + i * a_rs, a_rs, a_cs, B, b_rs, C + i * ldc, ldc, K, m);               \
  }

SMALL_ROWS(1)
SMALL_ROWS(2)
SMALL_ROWS(3)
SMALL_ROWS(4)

void emlx_mm_small_f32_avx512(const emlx_gemm *g) {
  __mmask16 m[4];
  for (int v = 0; v < 4; v++) {
    int64_t left = g->N - 16 * v;
    m[v] = left >= 16 ? 0xFFFF : left <= 0 ? 0 : (__mmask16)((1u << left) - 1u);
  }
  const float *A = g->a, *B = g->b;
  float *C = g->c;
  switch ((g->N + 15) / 16) {
  case 1:
    small_rows_1(A, g->a_rs, g->a_cs, B, g->b_rs, C, g->ldc, g->M, g->K, m);
    break;
  case 2:
    small_rows_2(A, g->a_rs, g->a_cs, B, g->b_rs, C, g->ldc, g->M, g->K, m);
    break;
  case 3:
    small_rows_3(A, g->a_rs, g->a_cs, B, g->b_rs, C, g->ldc, g->M, g->K, m);
    break;
  default:
    small_rows_4(A, g->a_rs, g->a_cs, B, g->b_rs, C, g->ldc, g->M, g->K, m);
    break;
  }
}
