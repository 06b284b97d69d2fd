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


#endif
