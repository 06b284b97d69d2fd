/* math_vec_avx512.h — the math family's vector layer for the AVX-512 units:
 * SLEEF's 16-lane f32 / 8-lane f64 functions over contiguous tiles (tails by
 * masked loads and stores) and the hardware square root. Included by
 * math_avx512.c after vec_avx512.h. */
#ifndef EMLX_MATH_VEC_AVX512_H
#define EMLX_MATH_VEC_AVX512_H

#include <immintrin.h>
#include <sleef.h>
#include <stdint.h>

#define MV_HAS_FMA 1

static inline __mmask8 mv_tail8(int64_t r) { return (__mmask8)((1u << r) - 1u); }

/* out[i] = F(in[i]) for a one-argument vector function. */
#define MV_UN_F32(NAME, VF)                                                                        \
  static inline void NAME(const float *in, float *out, int64_t n) {                                \
    int64_t i = 0;                                                                                 \
    for (; i + 16 <= n; i += 16)                                                                   \
      _mm512_storeu_ps(out + i, VF(_mm512_loadu_ps(in + i)));                                      \
    if (i < n) {                                                                                   \
      __mmask16 k = (__mmask16)((1u << (n - i)) - 1u);                                             \
      _mm512_mask_storeu_ps(out + i, k, VF(_mm512_maskz_loadu_ps(k, in + i)));                     \
    }                                                                                              \
  }
#define MV_UN_F64(NAME, VF)                                                                        \
  static inline void NAME(const double *in, double *out, int64_t n) {                              \
    int64_t i = 0;                                                                                 \
    for (; i + 8 <= n; i += 8)                                                                     \
      _mm512_storeu_pd(out + i, VF(_mm512_loadu_pd(in + i)));                                      \
    if (i < n) {                                                                                   \
      __mmask8 k = mv_tail8(n - i);                                                                \
      _mm512_mask_storeu_pd(out + i, k, VF(_mm512_maskz_loadu_pd(k, in + i)));                     \
    }                                                                                              \
  }
#define MV_BIN_F32(NAME, VF)                                                                       \
  static inline void NAME(const float *a, const float *b, float *out, int64_t n) {                 \
    int64_t i = 0;                                                                                 \
    for (; i + 16 <= n; i += 16)                                                                   \
      _mm512_storeu_ps(out + i, VF(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));               \
    if (i < n) {                                                                                   \
      __mmask16 k = (__mmask16)((1u << (n - i)) - 1u);                                             \
      _mm512_mask_storeu_ps(out + i, k,                                                            \
                            VF(_mm512_maskz_loadu_ps(k, a + i), _mm512_maskz_loadu_ps(k, b + i))); \
    }                                                                                              \
  }
#define MV_BIN_F64(NAME, VF)                                                                       \
  static inline void NAME(const double *a, const double *b, double *out, int64_t n) {              \
    int64_t i = 0;                                                                                 \
    for (; i + 8 <= n; i += 8)                                                                     \
      _mm512_storeu_pd(out + i, VF(_mm512_loadu_pd(a + i), _mm512_loadu_pd(b + i)));               \
    if (i < n) {                                                                                   \
      __mmask8 k = mv_tail8(n - i);                                                                \
      _mm512_mask_storeu_pd(out + i, k,                                                            \
                            VF(_mm512_maskz_loadu_pd(k, a + i), _mm512_maskz_loadu_pd(k, b + i))); \
    }                                                                                              \
  }

#define MV_SLEEF(FN, SUF)                                                                          \
  MV_UN_F32(mv_##FN##_f32, Sleef_##FN##f16_##SUF##avx512f)                                         \
  MV_UN_F64(mv_##FN##_f64, Sleef_##FN##d8_##SUF##avx512f)

MV_UN_F32(mv_sqrt_f32, _mm512_sqrt_ps)
MV_UN_F64(mv_sqrt_f64, _mm512_sqrt_pd)
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
MV_BIN_F32(mv_atan2_f32, Sleef_atan2f16_u10avx512f)
MV_BIN_F64(mv_atan2_f64, Sleef_atan2d8_u10avx512f)
MV_BIN_F32(mv_pow_f32, Sleef_powf16_u10avx512f)
MV_BIN_F64(mv_pow_f64, Sleef_powd8_u10avx512f)


/* tanh over 16 f32 lanes: the algorithm of math_fn.h's mf_tanhf (degree-5
 * odd polynomial below |x| = 0.75, 1 - 2 / (exp(2|x|) + 1) above) with
 * AVX-512's roundscale/scalef for the exponential and a reciprocal
 * estimate refined by one Newton step instead of a division. <= 2 ulp
 * (checked over every f32). */
static inline __m512 mv_tanh16(__m512 x) {
  const __m512 absm = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FFFFFFF));
  __m512 ax = _mm512_and_ps(x, absm), s = _mm512_mul_ps(x, x);
  __m512 p = _mm512_set1_ps(0.0017369359266012907f);
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(-0.007657255511730909f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(0.021452033892273903f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(-0.053892724215984344f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(0.1333269476890564f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(-0.33333316445350647f));
  __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(ax, s), p, ax);
  __m512 y = _mm512_min_ps(_mm512_add_ps(ax, ax), _mm512_set1_ps(20.0f));
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(y, _mm512_set1_ps(1.44269504088896341f)),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), y);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 q = _mm512_set1_ps(0.001381461275741458f);
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.008368710055947304f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.04166838899254799f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.1666652113199234f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.4999999403953552f));
  __m512 e = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(r, r), q, r), _mm512_set1_ps(1.0f));
  __m512 d = _mm512_add_ps(_mm512_scalef_ps(e, n), _mm512_set1_ps(1.0f));
  __m512 rc = _mm512_rcp14_ps(d);
  rc = _mm512_fmadd_ps(rc, _mm512_fnmadd_ps(d, rc, _mm512_set1_ps(1.0f)), rc);
  __m512 large = _mm512_fnmadd_ps(_mm512_set1_ps(2.0f), rc, _mm512_set1_ps(1.0f));
  __mmask16 big = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.75f), _CMP_GE_OQ);
  __m512 t = _mm512_mask_blend_ps(big, small, large); /* NaN: small, stays NaN */
  return _mm512_or_ps(t, _mm512_andnot_ps(absm, x));
}
MV_UN_F32(mv_tanh_fast_f32, mv_tanh16)
#define MV_HAS_TANH_F32 1

/* sigmoid over 16 f32 lanes: math_fn.h's mf_sigmoidf (with mf_expf)
 * written lane-wise, operation for operation (the same reduction, the same
 * FMAs, the same IEEE division); scalef's one rounding of p * 2^n is the
 * scalar function's p * 2^n1 * 2^n2 (the first product is exact). So it
 * gives that function's values, and its <= 3 ulp, bit for bit (checked over
 * every f32). GCC's own vectorisation of the scalar loop ran at half this
 * speed (fused SiLU spent most of its time there). */
static inline __m512 mv_exp_nonpos16(__m512 y) {
  const __m512 shifter = _mm512_set1_ps(12582912.0f);
  /* min/max give their second operand for NaN: NaN lanes end at -104, as in mf_expf. */
  __m512 yc = _mm512_max_ps(_mm512_min_ps(y, _mm512_set1_ps(89.0f)), _mm512_set1_ps(-104.0f));
  __m512 k = _mm512_fmadd_ps(yc, _mm512_set1_ps(1.44269504088896341f), shifter);
  __m512 n = _mm512_sub_ps(k, shifter);
  __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693359375f), yc);
  r = _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), r);
  __m512 q = _mm512_set1_ps(0.001381461275741458f);
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.008368710055947304f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.04166838899254799f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.1666652113199234f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.4999999403953552f));
  __m512 p = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(r, r), q, r), _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

static inline __m512 mv_sigmoid16(__m512 x) {
  __m512 e = mv_exp_nonpos16(_mm512_or_ps(x, _mm512_set1_ps(-0.0f))); /* exp(-|x|) */
  __m512 d = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
  __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
  __m512 t = _mm512_mask_mul_ps(d, neg, e, d);
  return _mm512_mask_mov_ps(t, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}
MV_UN_F32(mv_sigmoid_fast_f32, mv_sigmoid16)
#define MV_HAS_SIGMOID_F32 1

#endif
