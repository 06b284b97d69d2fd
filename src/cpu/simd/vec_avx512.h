/* vec_avx512.h — the thin vector layer for the AVX-512 units (compiled with
 * -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512bf16 -mfma -mf16c):
 * 16-lane f16 conversions and SLEEF's 16-lane exp, tails by masked loads
 * and stores. */
#ifndef EMLX_VEC_AVX512_H
#define EMLX_VEC_AVX512_H

#include <immintrin.h>
#include <math.h>
#include <sleef.h>
#include <stdint.h>

#include "convert.h"

#define EMLX_ISA_SUFFIX avx512

static inline __mmask16 vl_tail16(int64_t r) { return (__mmask16)((1u << r) - 1u); }

static inline void vl_f16_to_f32(const uint16_t *in, float *out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(in + i))));
  if (i < n) {
    __mmask16 k = vl_tail16(n - i);
    _mm512_mask_storeu_ps(out + i, k, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(k, in + i)));
  }
}
static inline void vl_f32_to_f16(const float *in, uint16_t *out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256((__m256i *)(out + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  if (i < n) {
    __mmask16 k = vl_tail16(n - i);
    _mm256_mask_storeu_epi16(
        out + i, k, _mm512_cvtps_ph(_mm512_maskz_loadu_ps(k, in + i), _MM_FROUND_TO_NEAREST_INT));
  }
}
static inline void vl_exp_f32(const float *in, float *out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(out + i, Sleef_expf16_u10avx512f(_mm512_loadu_ps(in + i)));
  if (i < n) {
    __mmask16 k = vl_tail16(n - i);
    _mm512_mask_storeu_ps(out + i, k, Sleef_expf16_u10avx512f(_mm512_maskz_loadu_ps(k, in + i)));
  }
}
static inline void vl_exp_f64(const double *in, double *out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm512_storeu_pd(out + i, Sleef_expd8_u10avx512f(_mm512_loadu_pd(in + i)));
  if (i < n) {
    __mmask8 k = (__mmask8)((1u << (n - i)) - 1u);
    _mm512_mask_storeu_pd(out + i, k, Sleef_expd8_u10avx512f(_mm512_maskz_loadu_pd(k, in + i)));
  }
}

/* lanes[j] += x[32 * b + j] (32 double lanes in 4 registers). */
static inline void vl_sum32_f32(const float *x, int64_t nb, double *lanes) {
  __m512d a[4];
  for (int k = 0; k < 4; k++)
    a[k] = _mm512_loadu_pd(lanes + 8 * k);
  for (int64_t b = 0; b < nb; b++)
    for (int k = 0; k < 4; k++)
      a[k] = _mm512_add_pd(a[k], _mm512_cvtps_pd(_mm256_loadu_ps(x + 32 * b + 8 * k)));
  for (int k = 0; k < 4; k++)
    _mm512_storeu_pd(lanes + 8 * k, a[k]);
}
static inline void vl_sum32_f64(const double *x, int64_t nb, double *lanes) {
  __m512d a[4];
  for (int k = 0; k < 4; k++)
    a[k] = _mm512_loadu_pd(lanes + 8 * k);
  for (int64_t b = 0; b < nb; b++)
    for (int k = 0; k < 4; k++)
      a[k] = _mm512_add_pd(a[k], _mm512_loadu_pd(x + 32 * b + 8 * k));
  for (int k = 0; k < 4; k++)
    _mm512_storeu_pd(lanes + 8 * k, a[k]);
}
/* max ignoring NaN (VMAXPS returns its second operand on NaN); returns
 * whether a NaN was seen. */
static inline int vl_max_f32(const float *x, int64_t n, float *out) {
  __m512 m0 = _mm512_set1_ps(-INFINITY), m1 = m0;
  __mmask16 bad = 0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
    bad |= _mm512_cmp_ps_mask(v0, v1, _CMP_UNORD_Q);
    m0 = _mm512_max_ps(v0, m0);
    m1 = _mm512_max_ps(v1, m1);
  }
  if (i + 16 <= n) {
    __m512 v0 = _mm512_loadu_ps(x + i);
    bad |= _mm512_cmp_ps_mask(v0, v0, _CMP_UNORD_Q);
    m0 = _mm512_max_ps(v0, m0);
    i += 16;
  }
  if (i < n) {
    __mmask16 k = vl_tail16(n - i);
    __m512 v0 = _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), k, x + i);
    bad |= _mm512_cmp_ps_mask(v0, v0, _CMP_UNORD_Q);
    m0 = _mm512_max_ps(v0, m0);
  }
  *out = _mm512_reduce_max_ps(_mm512_max_ps(m0, m1));
  return bad != 0;
}
static inline int vl_max_f64(const double *x, int64_t n, double *out) {
  __m512d m0 = _mm512_set1_pd(-(double)INFINITY), m1 = m0;
  __mmask8 bad = 0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512d v0 = _mm512_loadu_pd(x + i), v1 = _mm512_loadu_pd(x + i + 8);
    bad |= _mm512_cmp_pd_mask(v0, v1, _CMP_UNORD_Q);
    m0 = _mm512_max_pd(v0, m0);
    m1 = _mm512_max_pd(v1, m1);
  }
  for (; i < n; i += 8) {
    __mmask8 k = (__mmask8)(n - i >= 8 ? 0xFF : (1u << (n - i)) - 1u);
    __m512d v0 = _mm512_mask_loadu_pd(_mm512_set1_pd(-(double)INFINITY), k, x + i);
    bad |= _mm512_cmp_pd_mask(v0, v0, _CMP_UNORD_Q);
    m0 = _mm512_max_pd(v0, m0);
  }
  *out = _mm512_reduce_max_pd(_mm512_max_pd(m0, m1));
  return bad != 0;
}

#endif
