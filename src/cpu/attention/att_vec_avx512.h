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
#define AV_EXP_SUM av_exp_sum
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
 * a, the generic att_row_max's select, lane by lane; the lanes' maxima
 * (NaN-free unless m0 is NaN) are then combined in a vector reduction (the
 * order of a max does not change its value). */
static inline float av_row_max(const float *s, int64_t n, float m0) {
  __m512 a = _mm512_set1_ps(m0);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    a = _mm512_max_ps(_mm512_loadu_ps(s + j), a);
  if (j < n) {
    __mmask16 k = (__mmask16)((1u << (n - j)) - 1u);
    a = _mm512_mask_max_ps(a, k, _mm512_maskz_loadu_ps(k, s + j), a);
  }
  return _mm512_reduce_max_ps(a);
}

/* exp(x), inline: att_vec_avx2.h's av_exp in 16 lanes (the same
 * reduction, polynomial and bounds: within 1.3 ulp of exp over
 * [-87.3, 88.3], 0 below, clamped above, NaN kept). */
static inline __m512 av_exp(__m512 x) {
  const __m512 hi = _mm512_set1_ps(88.3762626647949f), lo = _mm512_set1_ps(-87.3365478515625f);
  __m512 xc = _mm512_min_ps(_mm512_max_ps(x, lo), hi);
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), xc);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  __m512 y = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  __m512i e = _mm512_slli_epi32(_mm512_cvtps_epi32(n), 23);
  y = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(y), e));
  y = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, lo, _CMP_NLT_UQ), y);      /* underflow: 0 */
  return _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x); /* NaN: NaN */
}

/* s[j] = exp(s[j] - m) over s[0 .. n); returns their sum (16 lane sums,
 * then a vector reduction). */
static inline float av_exp_sum(float *s, int64_t n, float m) {
  const __m512 mv = _mm512_set1_ps(m);
  __m512 acc = _mm512_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    __m512 e = av_exp(_mm512_sub_ps(_mm512_loadu_ps(s + j), mv));
    _mm512_storeu_ps(s + j, e);
    acc = _mm512_add_ps(acc, e);
  }
  if (j < n) {
    __mmask16 k = (__mmask16)((1u << (n - j)) - 1u);
    __m512 e = _mm512_maskz_mov_ps(k, av_exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, s + j), mv)));
    _mm512_mask_storeu_ps(s + j, k, e);
    acc = _mm512_add_ps(acc, e);
  }
  return _mm512_reduce_add_ps(acc);
}

#endif
