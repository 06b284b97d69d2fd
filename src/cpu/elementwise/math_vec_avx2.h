/* math_vec_avx2.h — the math family's vector layer for the AVX2 units:
 * SLEEF's 8-lane f32 / 4-lane f64 functions over contiguous tiles (tails
 * through a zero-padded register) and the hardware square root. Included by
 * math_avx2.c after vec_avx2.h. */
#ifndef EMLX_MATH_VEC_AVX2_H
#define EMLX_MATH_VEC_AVX2_H

#include <immintrin.h>
#include <sleef.h>
#include <stdint.h>
#include <string.h>

#define MV_HAS_FMA 1

#define MV_UN_F32(NAME, VF)                                                                        \
  static inline void NAME(const float *in, float *out, int64_t n) {                                \
    int64_t i = 0;                                                                                 \
    for (; i + 8 <= n; i += 8)                                                                     \
      _mm256_storeu_ps(out + i, VF(_mm256_loadu_ps(in + i)));                                      \
    if (i < n) {                                                                                   \
      float t[8] = {0}, o[8];                                                                      \
      memcpy(t, in + i, (size_t)(n - i) * sizeof *t);                                              \
      _mm256_storeu_ps(o, VF(_mm256_loadu_ps(t)));                                                 \
      memcpy(out + i, o, (size_t)(n - i) * sizeof *o);                                             \
    }                                                                                              \
  }
#define MV_UN_F64(NAME, VF)                                                                        \
  static inline void NAME(const double *in, double *out, int64_t n) {                              \
    int64_t i = 0;                                                                                 \
    for (; i + 4 <= n; i += 4)                                                                     \
      _mm256_storeu_pd(out + i, VF(_mm256_loadu_pd(in + i)));                                      \
    if (i < n) {                                                                                   \
      double t[4] = {0}, o[4];                                                                     \
      memcpy(t, in + i, (size_t)(n - i) * sizeof *t);                                              \
      _mm256_storeu_pd(o, VF(_mm256_loadu_pd(t)));                                                 \
      memcpy(out + i, o, (size_t)(n - i) * sizeof *o);                                             \
    }                                                                                              \
  }
#define MV_BIN_F32(NAME, VF)                                                                       \
  static inline void NAME(const float *a, const float *b, float *out, int64_t n) {                 \
    int64_t i = 0;                                                                                 \
    for (; i + 8 <= n; i += 8)                                                                     \
      _mm256_storeu_ps(out + i, VF(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));               \
    if (i < n) {                                                                                   \
      float ta[8] = {0}, tb[8] = {0}, o[8];                                                        \
      memcpy(ta, a + i, (size_t)(n - i) * sizeof *ta);                                             \
      memcpy(tb, b + i, (size_t)(n - i) * sizeof *tb);                                             \
      _mm256_storeu_ps(o, VF(_mm256_loadu_ps(ta), _mm256_loadu_ps(tb)));                           \
      memcpy(out + i, o, (size_t)(n - i) * sizeof *o);                                             \
    }                                                                                              \
  }
#define MV_BIN_F64(NAME, VF)                                                                       \
  static inline void NAME(const double *a, const double *b, double *out, int64_t n) {              \
    int64_t i = 0;                                                                                 \
    for (; i + 4 <= n; i += 4)                                                                     \
      _mm256_storeu_pd(out + i, VF(_mm256_loadu_pd(a + i), _mm256_loadu_pd(b + i)));               \
    if (i < n) {                                                                                   \
      double ta[4] = {0}, tb[4] = {0}, o[4];                                                       \
      memcpy(ta, a + i, (size_t)(n - i) * sizeof *ta);                                             \
      memcpy(tb, b + i, (size_t)(n - i) * sizeof *tb);                                             \
      _mm256_storeu_pd(o, VF(_mm256_loadu_pd(ta), _mm256_loadu_pd(tb)));                           \
      memcpy(out + i, o, (size_t)(n - i) * sizeof *o);                                             \
    }                                                                                              \
  }

#define MV_SLEEF(FN, SUF)                                                                          \
  MV_UN_F32(mv_##FN##_f32, Sleef_##FN##f8_##SUF##avx2)                                             \
  MV_UN_F64(mv_##FN##_f64, Sleef_##FN##d4_##SUF##avx2)

MV_UN_F32(mv_sqrt_f32, _mm256_sqrt_ps)
MV_UN_F64(mv_sqrt_f64, _mm256_sqrt_pd)
MV_SLEEF(exp, u10)
MV_SLEEF(log, u10)
MV_SLEEF(log1p, u10)
MV_SLEEF(expm1, u10)
MV_SLEEF(sin, u10)
MV_SLEEF(cos, u10)
MV_SLEEF(tan, u10)
MV_SLEEF(asin, u10)
MV_SLEEF(acos, u10)
MV_SLEEF(atan, u10)
MV_SLEEF(sinh, u10)
MV_SLEEF(cosh, u10)
MV_SLEEF(tanh, u10)
MV_SLEEF(asinh, u10)
MV_SLEEF(acosh, u10)
MV_SLEEF(atanh, u10)
MV_SLEEF(erf, u10)
MV_SLEEF(erfc, u15)
MV_BIN_F32(mv_atan2_f32, Sleef_atan2f8_u10avx2)
MV_BIN_F64(mv_atan2_f64, Sleef_atan2d4_u10avx2)
MV_BIN_F32(mv_pow_f32, Sleef_powf8_u10avx2)
MV_BIN_F64(mv_pow_f64, Sleef_powd4_u10avx2)

/* tanh and sigmoid over 8 f32 lanes: math_fn.h's mf_tanhf and mf_sigmoidf
 * (with mf_expf) written lane-wise, operation for operation (the same FMAs,
 * the same IEEE division), so they give the values of those functions, and
 * their ulp bounds, bit for bit. GCC does not vectorise the scalar loops for
 * AVX2 (their selects are control flow to it without mask registers): they
 * ran one element at a time. */
static inline __m256 mv_tanh8(__m256 x) {
  const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  const __m256 shifter = _mm256_set1_ps(12582912.0f);
  __m256 ax = _mm256_and_ps(x, absm), s = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(0.0017369359266012907f);
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(-0.007657255511730909f));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(0.021452033892273903f));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(-0.053892724215984344f));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(0.1333269476890564f));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(-0.33333316445350647f));
  __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(ax, s), p, ax);
  /* min_ps gives its second operand for NaN, as y < 20 ? y : 20 does. */
  __m256 y = _mm256_min_ps(_mm256_mul_ps(_mm256_set1_ps(2.0f), ax), _mm256_set1_ps(20.0f));
  __m256 k = _mm256_fmadd_ps(y, _mm256_set1_ps(1.44269504088896341f), shifter);
  __m256 n = _mm256_sub_ps(k, shifter);
  __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(k), _mm256_castps_si256(shifter));
  __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-0.693359375f), y);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(2.12194440e-4f), r);
  __m256 q = _mm256_set1_ps(0.001381461275741458f);
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0.008368710055947304f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0.04166838899254799f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0.1666652113199234f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0.4999999403953552f));
  __m256 pe = _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(r, r), q, r), _mm256_set1_ps(1.0f));
  __m256 e = _mm256_castsi256_ps(
      _mm256_add_epi32(_mm256_castps_si256(pe), _mm256_slli_epi32(ni, 23)));
  __m256 large = _mm256_sub_ps(
      _mm256_set1_ps(1.0f), _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, _mm256_set1_ps(1.0f))));
  __m256 big = _mm256_cmp_ps(ax, _mm256_set1_ps(0.75f), _CMP_GE_OQ); /* NaN: small, stays NaN */
  __m256 t = _mm256_blendv_ps(small, large, big);
  return _mm256_or_ps(t, _mm256_andnot_ps(absm, x));
}
MV_UN_F32(mv_tanh_fast_f32, mv_tanh8)
#define MV_HAS_TANH_F32 1

/* mf_expf for y <= 0 or NaN (what sigmoid asks). */
static inline __m256 mv_exp_nonpos8(__m256 y) {
  const __m256 shifter = _mm256_set1_ps(12582912.0f);
  /* y < 89 ? y : 89, then yc > -104 ? yc : -104 (NaN ends at -104, as there). */
  __m256 yc = _mm256_min_ps(y, _mm256_set1_ps(89.0f));
  yc = _mm256_max_ps(yc, _mm256_set1_ps(-104.0f));
  __m256 k = _mm256_fmadd_ps(yc, _mm256_set1_ps(1.44269504088896341f), shifter);
  __m256 n = _mm256_sub_ps(k, shifter);
  __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(k), _mm256_castps_si256(shifter));
  __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-0.693359375f), yc);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(2.12194440e-4f), r);
  __m256 q = _mm256_set1_ps(0.001381461275741458f);
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0.008368710055947304f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0.04166838899254799f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0.1666652113199234f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0.4999999403953552f));
  __m256 p = _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(r, r), q, r), _mm256_set1_ps(1.0f));
  /* n1 = ni / 2 rounded toward zero (C's division), n2 = ni - n1. */
  __m256i n1 = _mm256_srai_epi32(_mm256_add_epi32(ni, _mm256_srli_epi32(ni, 31)), 1);
  __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  __m256 e = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  return _mm256_blendv_ps(e, y, _mm256_cmp_ps(y, y, _CMP_UNORD_Q));
}

static inline __m256 mv_sigmoid8(__m256 x) {
  const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  __m256 e = mv_exp_nonpos8(_mm256_xor_ps(_mm256_and_ps(x, absm), _mm256_set1_ps(-0.0f)));
  __m256 d = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
  __m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
  __m256 t = _mm256_blendv_ps(d, _mm256_mul_ps(e, d), neg);
  return _mm256_blendv_ps(t, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
MV_UN_F32(mv_sigmoid_fast_f32, mv_sigmoid8)
#define MV_HAS_SIGMOID_F32 1

/* erf over 8 f32 lanes (N. Juffa's erff, "Efficient faithfully-rounded
 * implementation of the error function erff", Stack Overflow 35148198):
 * |x| <= 475/512: x + x P(x^2) (degree 5 in x^2); above, 1 - exp(Q(|x|))
 * with Q of degree 7 (Q(t) ~ log(erfc(t))), its sign put back. |x| is
 * clamped at 4 in Q (erf(4) rounds to 1; so no overflow of x^2), and exp
 * is mv_exp_nonpos8 (Q < 0 there). <= 2 ulp, checked over every f32; NaN
 * takes the first branch and propagates; -0 stays -0. SLEEF's erff u10
 * ran 4x slower than tanh here. */
static inline __m256 mv_erf8(__m256 x) {
  const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  __m256 ax = _mm256_and_ps(x, absm), s = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(-5.96761703e-4f);
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(4.99119423e-3f));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(-2.67681349e-2f));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(1.12819925e-1f));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(-3.76125336e-1f));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(1.28379166e-1f));
  __m256 small = _mm256_fmadd_ps(p, x, x);
  __m256 t = _mm256_min_ps(ax, _mm256_set1_ps(4.0f)), t2 = _mm256_mul_ps(t, t);
  __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(-1.72853470e-5f), t, _mm256_set1_ps(3.83197126e-4f));
  __m256 u = _mm256_fmadd_ps(_mm256_set1_ps(-3.88396438e-3f), t, _mm256_set1_ps(2.42546219e-2f));
  q = _mm256_fmadd_ps(q, t2, u);
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-1.06777877e-1f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-6.34846687e-1f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-1.28717512e-1f));
  q = _mm256_fmadd_ps(q, t, _mm256_sub_ps(_mm256_setzero_ps(), t));
  __m256 large = _mm256_sub_ps(_mm256_set1_ps(1.0f), mv_exp_nonpos8(q));
  large = _mm256_or_ps(large, _mm256_andnot_ps(absm, x));
  __m256 big = _mm256_cmp_ps(ax, _mm256_set1_ps(0.927734375f), _CMP_GT_OQ); /* NaN: small */
  return _mm256_blendv_ps(small, large, big);
}
MV_UN_F32(mv_erf_fast_f32, mv_erf8)
#define MV_HAS_ERF_F32 1

#endif
