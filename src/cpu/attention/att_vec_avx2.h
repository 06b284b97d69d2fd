/* att_vec_avx2.h — the few vector operations of the attention tile loop
 * (attention_body.h) for the avx2 unit: 8 f32 lanes. */
#ifndef EMLX_ATT_VEC_AVX2_H
#define EMLX_ATT_VEC_AVX2_H

#include <immintrin.h>

#include "simd/vec_avx2.h"

#define AV_W 8
#define AV_NV 2 /* 4 rows x 2 vectors: 8 accumulators of the 16 registers */
typedef __m256 av_f;

static inline av_f av_zero(void) { return _mm256_setzero_ps(); }
static inline av_f av_set1(float x) { return _mm256_set1_ps(x); }
static inline av_f av_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void av_store(float *p, av_f v) { _mm256_storeu_ps(p, v); }
static inline av_f av_fma(av_f a, av_f b, av_f c) { return _mm256_fmadd_ps(a, b, c); }
static inline av_f av_mul(av_f a, av_f b) { return _mm256_mul_ps(a, b); }
static inline float av_hsum(av_f v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
static inline av_f av_load_bf16(const uint16_t *p) {
  __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

#endif
