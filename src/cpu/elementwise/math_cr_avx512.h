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
static inline crv cr_fnma(crv a, crv b, crv c) { return _mm512_fnmadd_pd(a, b, c); }
/* c < x ? c : x and c > x ? c : x: a NaN x comes out as itself. */
static inline crv cr_min(crv c, crv x) { return _mm512_min_pd(c, x); }
static inline crv cr_max(crv c, crv x) { return _mm512_max_pd(c, x); }
static inline __m512i cr_bits(crv a) { return _mm512_castpd_si512(a); }
static inline crv cr_abs(crv a) {
  return _mm512_castsi512_pd(_mm512_and_si512(cr_bits(a), _mm512_set1_epi64(INT64_MAX)));
}
/* 2^(k/64) from t = k + MCR_MAGIC: tab[k & 63] (tab[j] = 2^(j/64)) with
 * k >> 6 added to its exponent. */
static inline crv cr_exp2_table(const double *tab, crv t) {
  __m512i j = _mm512_and_si512(cr_bits(t), _mm512_set1_epi64(63));
  __m512i e = _mm512_slli_epi64(_mm512_srli_epi64(cr_bits(t), 6), 52);
  __m512d v = _mm512_i64gather_pd(j, tab, 8);
  return _mm512_castsi512_pd(_mm512_add_epi64(cr_bits(v), e));
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
/* Bit j set where !(a[j] < lim) (NaN included). */
static inline unsigned cr_not_below(crv a, double lim) {
  return (unsigned)_mm512_cmp_pd_mask(a, _mm512_set1_pd(lim), _CMP_NLT_UQ);
}
static inline crv cr_load(const float *p) { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }
static inline void cr_store(float *p, crv y) { _mm256_storeu_ps(p, _mm512_cvtpd_ps(y)); }
/* Bit j set where lo < a[j] < hi. */
static inline unsigned cr_between(crv a, double lo, double hi) {
  __mmask8 m = _mm512_cmp_pd_mask(a, _mm512_set1_pd(lo), _CMP_GT_OQ);
  return (unsigned)_mm512_mask_cmp_pd_mask(m, a, _mm512_set1_pd(hi), _CMP_LT_OQ);
}
/* Bit j set where y[j]'s low 29 bits lie within band of 1 << 28:
 * (bits - (2^28 - band)) mod 2^29 < 2 band. */
static inline unsigned cr_near_half(crv y, int64_t band) {
  __m512i u = _mm512_and_si512(_mm512_sub_epi64(cr_bits(y), _mm512_set1_epi64((1 << 28) - band)),
                               _mm512_set1_epi64((1 << 29) - 1));
  return (unsigned)_mm512_cmplt_epu64_mask(u, _mm512_set1_epi64(2 * band));
}

#include "math_cr_body.h"

#endif
