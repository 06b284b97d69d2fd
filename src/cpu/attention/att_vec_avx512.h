/* att_vec_avx512.h — the few vector operations of the attention tile loop
 * (attention_body.h) for the avx512 unit: 16 f32 lanes. */
#ifndef EMLX_ATT_VEC_AVX512_H
#define EMLX_ATT_VEC_AVX512_H

#include <immintrin.h>

#include "simd/vec_avx512.h"

#define AV_W 16
#define AV_NV 4 /* vectors of one micro-tile row (4 rows x 4 vectors: 16 accumulators) */
typedef __m512 av_f;

static inline av_f av_zero(void) { return _mm512_setzero_ps(); }
static inline av_f av_set1(float x) { return _mm512_set1_ps(x); }
static inline av_f av_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void av_store(float *p, av_f v) { _mm512_storeu_ps(p, v); }
static inline av_f av_fma(av_f a, av_f b, av_f c) { return _mm512_fmadd_ps(a, b, c); }
static inline av_f av_mul(av_f a, av_f b) { return _mm512_mul_ps(a, b); }
static inline float av_hsum(av_f v) { return _mm512_reduce_add_ps(v); }
static inline av_f av_load_bf16(const uint16_t *p) {
  __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}

#endif
