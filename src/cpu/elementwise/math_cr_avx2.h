/* math_cr_avx2.h — math_cr_body.h's lane layer for the AVX2 units: four
 * doubles a vector (each from an f32 lane), FMA, sign-bit blends for the
 * selections. Included by math_avx2.c and ew_avx2.c. */
#ifndef EMLX_MATH_CR_AVX2_H
#define EMLX_MATH_CR_AVX2_H

#include <immintrin.h>

typedef __m256d crv;
#define CR_N 4

static inline crv cr_set(double v) { return _mm256_set1_pd(v); }
static inline crv cr_add(crv a, crv b) { return _mm256_add_pd(a, b); }
static inline crv cr_sub(crv a, crv b) { return _mm256_sub_pd(a, b); }
static inline crv cr_mul(crv a, crv b) { return _mm256_mul_pd(a, b); }
static inline crv cr_fma(crv a, crv b, crv c) { return _mm256_fmadd_pd(a, b, c); }
/* c < x ? c : x and c > x ? c : x: a NaN x comes out as itself. */
static inline crv cr_min(crv c, crv x) { return _mm256_min_pd(c, x); }
static inline crv cr_max(crv c, crv x) { return _mm256_max_pd(c, x); }
static inline __m256i cr_bits(crv a) { return _mm256_castpd_si256(a); }
static inline crv cr_abs(crv a) {
  return _mm256_castsi256_pd(_mm256_and_si256(cr_bits(a), _mm256_set1_epi64x(INT64_MAX)));
}
/* 2^k from t = k + MCR_MAGIC (k in t's low mantissa bits). */
static inline crv cr_pow2i(crv t) {
  return _mm256_castsi256_pd(
      _mm256_slli_epi64(_mm256_add_epi64(cr_bits(t), _mm256_set1_epi64x(1023)), 52));
}
/* Lanes whose t has bit b set take y, the others x (blendv reads the sign
 * bit, where the shift puts bit b). */
static inline crv cr_sel_bit(crv t, int b, crv x, crv y) {
  return _mm256_blendv_pd(x, y, _mm256_castsi256_pd(_mm256_slli_epi64(cr_bits(t), 63 - b)));
}
/* y negated in the lanes whose t has bit b set. */
static inline crv cr_neg_bit(crv t, int b, crv y) {
  __m256i s =
      _mm256_and_si256(_mm256_slli_epi64(cr_bits(t), 63 - b), _mm256_set1_epi64x(INT64_MIN));
  return _mm256_castsi256_pd(_mm256_xor_si256(cr_bits(y), s));
}
/* s with the sign bit of r or'ed in. */
static inline crv cr_sign_of(crv s, crv r) {
  __m256i sg = _mm256_and_si256(cr_bits(r), _mm256_set1_epi64x(INT64_MIN));
  return _mm256_castsi256_pd(_mm256_or_si256(cr_bits(s), sg));
}
/* Bit j set where !(a[j] < lim) (NaN included). */
static inline unsigned cr_not_below(crv a, double lim) {
  return (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(a, _mm256_set1_pd(lim), _CMP_NLT_UQ));
}
static inline crv cr_load(const float *p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
static inline void cr_store(float *p, crv y) { _mm_storeu_ps(p, _mm256_cvtpd_ps(y)); }
/* Bit j set where y[j] (1 - g) and y[j] (1 + g) round to different f32. */
static inline unsigned cr_hard(crv y, double g) {
  crv gv = _mm256_set1_pd(g);
  __m128i lo = _mm_castps_si128(_mm256_cvtpd_ps(_mm256_fnmadd_pd(y, gv, y)));
  __m128i hi = _mm_castps_si128(_mm256_cvtpd_ps(_mm256_fmadd_pd(y, gv, y)));
  return (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(lo, hi))) ^ 0xFu;
}

#include "math_cr_body.h"

#endif
