/* vec_scalar.h — the thin vector layer for the scalar (baseline x86-64)
 * units: f16 tile conversions in software (bit-exact with F16C) and SLEEF's
 * scalar exp. Included by the *_scalar.c units before a kernel body. */
#ifndef EMLX_VEC_SCALAR_H
#define EMLX_VEC_SCALAR_H

#include <math.h>
#include <sleef.h>
#include <stdint.h>

#include "convert.h"

#define EMLX_ISA_SUFFIX scalar

static inline void vl_f16_to_f32(const uint16_t *in, float *out, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    out[i] = emlx_cv_f16_to_f32(in[i]);
}
static inline void vl_f32_to_f16(const float *in, uint16_t *out, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    out[i] = emlx_cv_f32_to_f16(in[i]);
}
static inline void vl_exp_f32(const float *in, float *out, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    out[i] = Sleef_expf_u10(in[i]);
}
static inline void vl_exp_f64(const double *in, double *out, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    out[i] = Sleef_exp_u10(in[i]);
}

/* lanes[j] += x[32 * b + j] for nb blocks: the fixed 32-lane order every
 * ISA uses for contiguous float sums. */
static inline void vl_sum32_f32(const float *x, int64_t nb, double *lanes) {
  for (int64_t b = 0; b < nb; b++)
    for (int j = 0; j < 32; j++)
      lanes[j] += (double)x[32 * b + j];
}
static inline void vl_sum32_f64(const double *x, int64_t nb, double *lanes) {
  for (int64_t b = 0; b < nb; b++)
    for (int j = 0; j < 32; j++)
      lanes[j] += x[32 * b + j];
}
/* *out = max of the non-NaN values of x[0..n) (-Inf if none); returns
 * whether a NaN was seen. */
static inline int vl_max_f32(const float *x, int64_t n, float *out) {
  float m = -INFINITY;
  int nan = 0;
  for (int64_t i = 0; i < n; i++) {
    nan |= x[i] != x[i];
    m = x[i] > m ? x[i] : m;
  }
  *out = m;
  return nan;
}
static inline int vl_max_f64(const double *x, int64_t n, double *out) {
  double m = -(double)INFINITY;
  int nan = 0;
  for (int64_t i = 0; i < n; i++) {
    nan |= x[i] != x[i];
    m = x[i] > m ? x[i] : m;
  }
  *out = m;
  return nan;
}

#endif
