/* math_vec_scalar.h — the math family's vector layer for the scalar
 * (baseline x86-64) units: SLEEF's scalar functions over contiguous tiles.
 * Included by math_scalar.c after vec_scalar.h. */
#ifndef EMLX_MATH_VEC_SCALAR_H
#define EMLX_MATH_VEC_SCALAR_H

#include <math.h>
#include <sleef.h>
#include <stdint.h>

#define MV_HAS_FMA 0

#define MV_UN(NAME, T, F)                                                                          \
  static inline void NAME(const T *in, T *out, int64_t n) {                                        \
    for (int64_t i = 0; i < n; i++)                                                                \
      out[i] = F(in[i]);                                                                           \
  }
#define MV_BIN(NAME, T, F)                                                                         \
  static inline void NAME(const T *a, const T *b, T *out, int64_t n) {                             \
    for (int64_t i = 0; i < n; i++)                                                                \
      out[i] = F(a[i], b[i]);                                                                      \
  }
#define MV_SLEEF(FN, SUF)                                                                          \
  MV_UN(mv_##FN##_f32, float, Sleef_##FN##f_##SUF)                                                 \
  MV_UN(mv_##FN##_f64, double, Sleef_##FN##_##SUF)

MV_UN(mv_sqrt_f32, float, sqrtf)
MV_UN(mv_sqrt_f64, double, sqrt)
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
MV_BIN(mv_atan2_f32, float, Sleef_atan2f_u10)
MV_BIN(mv_atan2_f64, double, Sleef_atan2_u10)
MV_BIN(mv_pow_f32, float, Sleef_powf_u10)
MV_BIN(mv_pow_f64, double, Sleef_pow_u10)

#endif
