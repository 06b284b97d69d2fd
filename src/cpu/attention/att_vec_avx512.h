/* att_vec_avx512.h — the few vector operations of the attention tile loop
 * (attention_body.h) for the avx512 unit: 16 f32 lanes. */
#ifndef EMLX_ATT_VEC_AVX512_H
#define EMLX_ATT_VEC_AVX512_H

#include <immintrin.h>

#include "att_kt8.h"
#include "simd/vec_avx512.h"

#define AV_W 16
#define AV_NV 4 /* vectors of one micro-tile row (4 rows x 4 vectors: 16 accumulators) */
/* K tiles transposed in 8 x 8 register blocks (the generic loop is a
 * strided scalar copy: a quarter of a causal prefill's time), and score
 * rows' maxima in vectors */
#define AV_KT_PACK av_kt_pack
#define AV_ROW_MAX av_row_max
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

/* The max of s[0 .. n) and m0, NaNs skipped: max_ps(s, a) is s > a ? s :
 * a, the generic att_row_max's select, lane by lane; the lanes' maxima are
 * then combined the same way (the order of a max does not change its
 * value). */
static inline float av_row_max(const float *s, int64_t n, float m0) {
  __m512 a = _mm512_set1_ps(m0);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    a = _mm512_max_ps(_mm512_loadu_ps(s + j), a);
  if (j < n) {
    __mmask16 k = (__mmask16)((1u << (n - j)) - 1u);
    a = _mm512_mask_max_ps(a, k, _mm512_maskz_loadu_ps(k, s + j), a);
  }
  float v[16], r = m0;
  _mm512_storeu_ps(v, a);
  for (int x = 0; x < 16; x++)
    r = v[x] > r ? v[x] : r;
  return r;
}

#endif
