/* matmul_small_avx512.c — small f32 products without BLAS (driver:
 * matmul.c).
 *
 * For a product of a few thousand multiply-adds, a BLAS call costs more in
 * set-up than in arithmetic; a batch of 16 x 16 matrices is dominated by it.
 * Here each row of C (N <= 64: up to four zmm of accumulators, the count
 * fixed at compile time so they stay in registers) is the sum of
 * a[i, k] * B[k, :] over k, B rows read in place (unit column stride), a
 * broadcast from any strides, the tail of N masked.
 *
 * A batch of contiguous 16 x 16 . 16 x 16 products (the commonest small
 * batch: attention heads, block-diagonal layers) has its own kernel: the 16
 * rows of B live in 16 zmm registers for the whole product and each row of
 * C is 16 FMAs whose A operand is an embedded broadcast from memory, with
 * no per-product dispatch between batch elements. */
#include <immintrin.h>

#include "matmul.h"

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

#define MM16_AHEAD 8 /* products between a prefetch and its use */

/* C = A . B for 16 x 16 row-major matrices: B held in registers, four rows
 * of C in flight (four independent FMA chains). */
static inline void mm16_f32(const float *restrict a, const float *restrict b, float *restrict c) {
  __m512 bk[16];
  _Pragma("GCC unroll 16") for (int k = 0; k < 16; k++) bk[k] = _mm512_loadu_ps(b + 16 * k);
  for (int i = 0; i < 16; i += 4) {
    __m512 acc[4];
    _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++) acc[r] =
        _mm512_mul_ps(_mm512_set1_ps(a[(i + r) * 16]), bk[0]);
    _Pragma("GCC unroll 16") for (int k = 1; k < 16; k++)
        _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++) acc[r] =
            _mm512_fmadd_ps(_mm512_set1_ps(a[(i + r) * 16 + k]), bk[k], acc[r]);
    _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++) _mm512_storeu_ps(c + (i + r) * 16, acc[r]);
  }
}

void emlx_mm_small_f32_batch_avx512(const emlx_gemm *g, int64_t count, int64_t a_bs,
                                    int64_t b_bs) {
  const float *A = g->a, *B = g->b;
  float *C = g->c;
  int64_t c_bs = g->M * g->ldc;
  if (g->M == 16 && g->N == 16 && g->K == 16 && g->a_rs == 16 && g->a_cs == 1 && g->b_rs == 16 &&
      g->b_cs == 1 && g->ldc == 16) {
    /* The operands of a product a few ahead come into L1 meanwhile: the
     * batch streams from L3 or memory, and the kernel is short. */
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
    emlx_mm_small_f32_avx512(&one);
  }
}
