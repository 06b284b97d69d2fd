/* matmul_gemv_avx2.c — the f16/bf16 few-row products at AVX2 + FMA + F16C
 * (matmul_gemv_body.h). */
#include <immintrin.h>

#define GV_W 8
#define GV_JB 2 /* columns per dot block: 4 x 2 accumulators, 2 B vectors */
#define GV_VEC __m256
#define GV_ZERO() _mm256_setzero_ps()
#define GV_SET1(x) _mm256_set1_ps(x)
#define GV_LOAD(p) _mm256_loadu_ps(p)
#define GV_STORE(p, v) _mm256_storeu_ps((p), (v))
#define GV_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define GV_WIDEN_F16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define GV_WIDEN_BF16(p)                                                                           \
  _mm256_castsi256_ps(_mm256_slli_epi32(                                                           \
      _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p))), 16))

static inline float gv_hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
#define GV_HSUM(v) gv_hsum(v)

#define GEMV_NAME emlx_mm_gemv_lowp_avx2
#define GEMV_T_NAME emlx_mm_gemv_t_lowp_avx2
#include "matmul_gemv_body.h"
