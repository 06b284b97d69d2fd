/* vec_avx2.h — the thin vector layer for the AVX2 units (compiled with
 * -mavx2 -mfma -mf16c): F16C tile conversions and SLEEF's 8-lane exp.
 * Tails go through a zero-padded register so every element takes the same
 * instruction path. */
#ifndef EMLX_VEC_AVX2_H
#define EMLX_VEC_AVX2_H

#include <immintrin.h>
#include <math.h>
#include <sleef.h>
#include <stdint.h>
#include <string.h>

#include "convert.h"

#define EMLX_ISA_SUFFIX avx2

static inline void vl_f16_to_f32(const uint16_t *in, float *out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(in + i))));
  if (i < n) {
    uint16_t t[8] = {0};
    float o[8];
    memcpy(t, in + i, (size_t)(n - i) * sizeof *t);
    _mm256_storeu_ps(o, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)t)));
    memcpy(out + i, o, (size_t)(n - i) * sizeof *o);
  }
}
static inline void vl_f32_to_f16(const float *in, uint16_t *out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  if (i < n) {
    float t[8] = {0};
    uint16_t o[8];
    memcpy(t, in + i, (size_t)(n - i) * sizeof *t);
    _mm_storeu_si128((__m128i *)o, _mm256_cvtps_ph(_mm256_loadu_ps(t), _MM_FROUND_TO_NEAREST_INT));
    memcpy(out + i, o, (size_t)(n - i) * sizeof *o);
  }
}
static inline void vl_exp_f32(const float *in, float *out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, Sleef_expf8_u10avx2(_mm256_loadu_ps(in + i)));
  if (i < n) {
    float t[8] = {0}, o[8];
    memcpy(t, in + i, (size_t)(n - i) * sizeof *t);
    _mm256_storeu_ps(o, Sleef_expf8_u10avx2(_mm256_loadu_ps(t)));
    memcpy(out + i, o, (size_t)(n - i) * sizeof *o);
  }
}
static inline void vl_exp_f64(const double *in, double *out, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    _mm256_storeu_pd(out + i, Sleef_expd4_u10avx2(_mm256_loadu_pd(in + i)));
  if (i < n) {
    double t[4] = {0}, o[4];
    memcpy(t, in + i, (size_t)(n - i) * sizeof *t);
    _mm256_storeu_pd(o, Sleef_expd4_u10avx2(_mm256_loadu_pd(t)));
    memcpy(out + i, o, (size_t)(n - i) * sizeof *o);
  }
}

/* lanes[j] += x[32 * b + j] (32 double lanes in 8 registers). */
static inline void vl_sum32_f32(const float *x, int64_t nb, double *lanes) {
  __m256d a[8];
  for (int k = 0; k < 8; k++)
    a[k] = _mm256_loadu_pd(lanes + 4 * k);
  for (int64_t b = 0; b < nb; b++)
    for (int k = 0; k < 8; k++)
      a[k] = _mm256_add_pd(a[k], _mm256_cvtps_pd(_mm_loadu_ps(x + 32 * b + 4 * k)));
  for (int k = 0; k < 8; k++)
    _mm256_storeu_pd(lanes + 4 * k, a[k]);
}
static inline void vl_sum32_f64(const double *x, int64_t nb, double *lanes) {
  __m256d a[8];
  for (int k = 0; k < 8; k++)
    a[k] = _mm256_loadu_pd(lanes + 4 * k);
  for (int64_t b = 0; b < nb; b++)
    for (int k = 0; k < 8; k++)
      a[k] = _mm256_add_pd(a[k], _mm256_loadu_pd(x + 32 * b + 4 * k));
  for (int k = 0; k < 8; k++)
    _mm256_storeu_pd(lanes + 4 * k, a[k]);
}
/* max ignoring NaN (MAXPS returns its second operand on NaN); returns
 * whether a NaN was seen. */
static inline int vl_max_f32(const float *x, int64_t n, float *out) {
  __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0, bad = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
    bad = _mm256_or_ps(bad, _mm256_cmp_ps(v0, v1, _CMP_UNORD_Q));
    m0 = _mm256_max_ps(v0, m0);
    m1 = _mm256_max_ps(v1, m1);
  }
  float t[8], m = -INFINITY;
  _mm256_storeu_ps(t, _mm256_max_ps(m0, m1));
  for (int j = 0; j < 8; j++)
    m = t[j] > m ? t[j] : m;
  int nan = _mm256_movemask_ps(bad) != 0;
  for (; i < n; i++) {
    nan |= x[i] != x[i];
    m = x[i] > m ? x[i] : m;
  }
  *out = m;
  return nan;
}
static inline int vl_max_f64(const double *x, int64_t n, double *out) {
  __m256d m0 = _mm256_set1_pd(-(double)INFINITY), m1 = m0, bad = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256d v0 = _mm256_loadu_pd(x + i), v1 = _mm256_loadu_pd(x + i + 4);
    bad = _mm256_or_pd(bad, _mm256_cmp_pd(v0, v1, _CMP_UNORD_Q));
    m0 = _mm256_max_pd(v0, m0);
    m1 = _mm256_max_pd(v1, m1);
  }
  double t[4], m = -(double)INFINITY;
  _mm256_storeu_pd(t, _mm256_max_pd(m0, m1));
  for (int j = 0; j < 4; j++)
    m = t[j] > m ? t[j] : m;
  int nan = _mm256_movemask_pd(bad) != 0;
  for (; i < n; i++) {
    nan |= x[i] != x[i];
    m = x[i] > m ? x[i] : m;
  }
  *out = m;
  return nan;
}

#endif
