/* math_cr_avx512.h — math_cr_body.h's lane layer for the AVX-512 units:
 * eight doubles a vector (each from an f32 lane), FMA, mask registers for
 * the selections. Included by math_avx512.c and ew_avx512.c. */
#ifndef EMLX_MATH_CR_AVX512_H
#define EMLX_MATH_CR_AVX512_H

#include <immintrin.h>

typedef __m512d crv;
#define CR_N 8

static inline crv cr_set(double v) { return _mm512_set1_pd(v); }
static inline crv cr_add(crv a, crv b) { return _mm512_add_pd(a, b); }
static inline crv cr_sub(crv a, crv b) { return _mm512_sub_pd(a, b); }
static inline crv cr_mul(crv a, crv b) { return _mm512_mul_pd(a, b); }
static inline crv cr_fma(crv a, crv b, crv c) { return _mm512_fmadd_pd(a, b, c); }
/* c < x ? c : x and c > x ? c : x: a NaN x comes out as itself. */
static inline crv cr_min(crv c, crv x) { return _mm512_min_pd(c, x); }
static inline crv cr_max(crv c, crv x) { return _mm512_max_pd(c, x); }
static inline __m512i cr_bits(crv a) { return _mm512_castpd_si512(a); }
static inline crv cr_abs(crv a) {
  return _mm512_castsi512_pd(_mm512_and_si512(cr_bits(a), _mm512_set1_epi64(INT64_MAX)));
}
/* 2^k from t = k + MCR_MAGIC (k in t's low mantissa bits). */
static inline crv cr_pow2i(crv t) {
  return _mm512_castsi512_pd(
      _mm512_slli_epi64(_mm512_add_epi64(cr_bits(t), _mm512_set1_epi64(1023)), 52));
}
/* Lanes whose t has bit b set take y, the others x. */
static inline crv cr_sel_bit(crv t, int b, crv x, crv y) {
  __mmask8 m = _mm512_test_epi64_mask(cr_bits(t), _mm512_set1_epi64(INT64_C(1) << b));
  return _mm512_mask_blend_pd(m, x, y);
}
/* y negated in the lanes whose t has bit b set. */
static inline crv cr_neg_bit(crv t, int b, crv y) {
  __m512i s = _mm512_and_si512(_mm512_slli_epi64(cr_bits(t), (unsigned)(63 - b)),
                               _mm512_set1_epi64(INT64_MIN));
  return _mm512_castsi512_pd(_mm512_xor_si512(cr_bits(y), s));
}
/* s with the sign bit of r or'ed in. */
static inline crv cr_sign_of(crv s, crv r) {
  __m512i sg = _mm512_and_si512(cr_bits(r), _mm512_set1_epi64(INT64_MIN));
  return _mm512_castsi512_pd(_mm512_or_si512(cr_bits(s), sg));
}
/* Bit j set where !(a[j] < lim) (NaN included). */
static inline unsigned cr_not_below(crv a, double lim) {
  return (unsigned)_mm512_cmp_pd_mask(a, _mm512_set1_pd(lim), _CMP_NLT_UQ);
}
static inline crv cr_load(const float *p) { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }
static inline void cr_store(float *p, crv y) { _mm256_storeu_ps(p, _mm512_cvtpd_ps(y)); }
/* Bit j set where y[j] (1 - g) and y[j] (1 + g) round to different f32. */
static inline unsigned cr_hard(crv y, double g) {
  crv gv = _mm512_set1_pd(g);
  __m256 lo = _mm512_cvtpd_ps(_mm512_fnmadd_pd(y, gv, y));
  __m256 hi = _mm512_cvtpd_ps(_mm512_fmadd_pd(y, gv, y));
  return (unsigned)_mm256_cmpneq_epi32_mask(_mm256_castps_si256(lo), _mm256_castps_si256(hi));
}

#include "math_cr_body.h"

#endif
