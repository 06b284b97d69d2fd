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
static inline crv cr_fnma(crv a, crv b, crv c) { return _mm256_fnmadd_pd(a, b, c); }
/* c < x ? c : x and c > x ? c : x: a NaN x comes out as itself. */
static inline crv cr_min(crv c, crv x) { return _mm256_min_pd(c, x); }
static inline crv cr_max(crv c, crv x) { return _mm256_max_pd(c, x); }
static inline __m256i cr_bits(crv a) { return _mm256_castpd_si256(a); }
static inline crv cr_abs(crv a) {
  return _mm256_castsi256_pd(_mm256_and_si256(cr_bits(a), _mm256_set1_epi64x(INT64_MAX)));
}
/* 2^(k/64) from t = k + MCR_MAGIC: tab[k & 63] (tab[j] = 2^(j/64)) with
 * k >> 6 added to its exponent. */
static inline crv cr_exp2_table(const double *tab, crv t) {
  __m256i j = _mm256_and_si256(cr_bits(t), _mm256_set1_epi64x(63));
  __m256i e = _mm256_slli_epi64(_mm256_srli_epi64(cr_bits(t), 6), 52);
  __m256d v = _mm256_i64gather_pd(tab, j, 8);
  return _mm256_castsi256_pd(_mm256_add_epi64(cr_bits(v), e));
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
/* Bit j set where !(a[j] < lim) (NaN included). */
static inline unsigned cr_not_below(crv a, double lim) {
  return (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(a, _mm256_set1_pd(lim), _CMP_NLT_UQ));
}
static inline crv cr_load(const float *p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
static inline void cr_store(float *p, crv y) { _mm_storeu_ps(p, _mm256_cvtpd_ps(y)); }
/* Bit j set where lo < a[j] < hi. */
static inline unsigned cr_between(crv a, double lo, double hi) {
  __m256d m = _mm256_and_pd(_mm256_cmp_pd(a, _mm256_set1_pd(lo), _CMP_GT_OQ),
                            _mm256_cmp_pd(a, _mm256_set1_pd(hi), _CMP_LT_OQ));
  return (unsigned)_mm256_movemask_pd(m);
}
/* Bit j set where y[j]'s low 29 bits lie within band of 1 << 28:
 * (bits - (2^28 - band)) mod 2^29 < 2 band. */
static inline unsigned cr_near_half(crv y, int64_t band) {
  __m256i u = _mm256_and_si256(_mm256_sub_epi64(cr_bits(y), _mm256_set1_epi64x((1 << 28) - band)),
                               _mm256_set1_epi64x((1 << 29) - 1));
  __m256i m = _mm256_cmpgt_epi64(_mm256_set1_epi64x(2 * band), u);
  return (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(m));
}

#include "math_cr_body.h"

#endif
