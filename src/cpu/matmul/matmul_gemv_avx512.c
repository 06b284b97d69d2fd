/* matmul_gemv_avx512.c — the f16/bf16 few-row products at AVX-512
 * (matmul_gemv_body.h). */
#include <immintrin.h>

#define GV_W 16
#define GV_JB 4 /* columns per dot block: 4 x 4 accumulators, 4 B vectors */
#define GV_VEC __m512
#define GV_ZERO() _mm512_setzero_ps()
#define GV_SET1(x) _mm512_set1_ps(x)
#define GV_LOAD(p) _mm512_loadu_ps(p)
#define GV_STORE(p, v) _mm512_storeu_ps((p), (v))
#define GV_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define GV_WIDEN_F16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(p)))
#define GV_WIDEN_BF16(p)                                                                           \
  _mm512_castsi512_ps(_mm512_slli_epi32(                                                           \
      _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(p))), 16))
#define GV_HSUM(v) _mm512_reduce_add_ps(v)

#define GEMV_NAME emlx_mm_gemv_lowp_avx512
#define GEMV_T_NAME emlx_mm_gemv_t_lowp_avx512
#include "matmul_gemv_body.h"
