/* matmul_int_body.h — the integer GEMM, compiled once per ISA by
 * matmul_int_{scalar,avx2,avx512}.c (each defines MM_ISA first).
 *
 * Integer products wrap, and arithmetic modulo 2^bits is the same for signed
 * and unsigned operands, so one kernel per element width serves both
 * (computed in the unsigned type: no undefined overflow). Blocking: a panel
 * of B (KC x NC) is copied contiguous into scratch, then each C row of the
 * range accumulates a[i, k] * B[k, :] over the panel; the inner loop runs
 * over contiguous columns and is vectorised by the compiler for the unit's
 * ISA. */
#include <string.h>

#include "matmul.h"

#define MM_CAT2(a, b) a##_##b
#define MM_CAT(a, b) MM_CAT2(a, b)
#define MM_NAME(x) MM_CAT(x, MM_ISA)

#define MM_INT_KERNEL(T, W, suffix)                                                                \
  static void MM_NAME(int_rows_##suffix)(const emlx_gemm *g, int64_t i0, int64_t i1,               \
                                         void *scratch) {                                          \
    const T *A = g->a, *B = g->b;                                                                  \
    T *C = g->c;                                                                                   \
    T *panel = scratch;                                                                            \
    for (int64_t i = i0; i < i1; i++)                                                              \
      memset(C + i * g->ldc, 0, (size_t)g->N * sizeof(T));                                         \
    for (int64_t k0 = 0; k0 < g->K; k0 += EMLX_MM_INT_KC) {                                        \
      int64_t kc = g->K - k0 < EMLX_MM_INT_KC ? g->K - k0 : EMLX_MM_INT_KC;                        \
      for (int64_t j0 = 0; j0 < g->N; j0 += EMLX_MM_INT_NC) {                                      \
        int64_t nc = g->N - j0 < EMLX_MM_INT_NC ? g->N - j0 : EMLX_MM_INT_NC;                      \
        for (int64_t k = 0; k < kc; k++) {                                                         \
          const T *src = B + (k0 + k) * g->b_rs + j0 * g->b_cs;                                    \
          T *dst = panel + k * nc;                                                                 \
          if (g->b_cs == 1)                                                                        \
            memcpy(dst, src, (size_t)nc * sizeof(T));                                              \
          else                                                                                     \
            for (int64_t j = 0; j < nc; j++)                                                       \
              dst[j] = src[j * g->b_cs];                                                           \
        }                                                                                          \
        for (int64_t i = i0; i < i1; i++) {                                                        \
          T *restrict crow = C + i * g->ldc + j0;                                                  \
          const T *arow = A + i * g->a_rs + k0 * g->a_cs;                                          \
          for (int64_t k = 0; k < kc; k++) {                                                       \
            T av = arow[k * g->a_cs];                                                              \
            if (av == 0)                                                                           \
              continue;                                                                            \
            const T *restrict brow = panel + k * nc;                                               \
            for (int64_t j = 0; j < nc; j++)                                                       \
              crow[j] = (T)((W)crow[j] + (W)av * (W)brow[j]);                                      \
          }                                                                                        \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }

/* W: an unsigned type at least as wide as int, so that narrow products do
 * not promote to (overflowing) signed int. */
MM_INT_KERNEL(uint8_t, unsigned, u8)
MM_INT_KERNEL(uint16_t, unsigned, u16)
MM_INT_KERNEL(uint32_t, uint32_t, u32)
MM_INT_KERNEL(uint64_t, uint64_t, u64)

const emlx_mm_int_rows_fn MM_NAME(emlx_mm_int_rows)[4] = {
    MM_NAME(int_rows_u8), MM_NAME(int_rows_u16), MM_NAME(int_rows_u32), MM_NAME(int_rows_u64)};
