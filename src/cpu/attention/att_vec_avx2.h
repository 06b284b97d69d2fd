/* att_vec_avx2.h — the few vector operations of the attention tile loop
 * (attention_body.h) for the avx2 unit: 8 f32 lanes. */
#ifndef EMLX_ATT_VEC_AVX2_H
#define EMLX_ATT_VEC_AVX2_H

#include <immintrin.h>

#include "att_kt8.h"
#include "simd/vec_avx2.h"

#define AV_W 8
#define AV_NV 2
/* 6 rows x 2 vectors: 12 accumulators of the 16 registers (4 x 2 leaves 8
 * FMA chains in flight, too few for two FMA pipes of latency 4-5) */
#define AV_RB 6
/* units of fewer rows (decode) run P V by rows of V (pv_rows) */
#define AV_PV_STREAM 8
#define AV_KT_PACK av_kt_pack
#define AV_EXP_SUM av_exp_sum
typedef __m256 av_f;

static inline av_f av_zero(void) { return _mm256_setzero_ps(); }
static inline av_f av_set1(float x) { return _mm256_set1_ps(x); }
static inline av_f av_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void av_store(float *p, av_f v) { _mm256_storeu_ps(p, v); }
static inline av_f av_fma(av_f a, av_f b, av_f c) { return _mm256_fmadd_ps(a, b, c); }
static inline av_f av_mul(av_f a, av_f b) { return _mm256_mul_ps(a, b); }
static inline float av_hsum(av_f v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
static inline av_f av_load_bf16(const uint16_t *p) {
  __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

/* bf16 K/V rows read 16 values at a time in "pairs" order (AV_BF16_PAIRS):
 * one 256-bit load gives the even values (shifted up into f32) and the odd
 * ones (masked, already f32), half the loads and widening operations of
 * av_load_bf16. A chunk c of 16 query values (or of a P V accumulator row)
 * is then held as [c0 c2 .. c14 | c1 c3 .. c15]; av_pairs_from / av_pairs_to
 * convert a 16-float chunk to and from that order. */
#define AV_BF16_PAIRS 1
static inline void av_load_bf16_pair(const uint16_t *p, av_f *even, av_f *odd) {
  __m256i w = _mm256_loadu_si256((const __m256i *)p);
  *even = _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  *odd = _mm256_castsi256_ps(_mm256_and_si256(w, _mm256_set1_epi32((int)0xFFFF0000u)));
}
static inline void av_pairs_from(float *c) { /* natural -> pairs */
  __m256 a = _mm256_loadu_ps(c), b = _mm256_loadu_ps(c + 8);
  __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)); /* a0 a2 b0 b2 | a4 a6 b4 b6 */
  __m256 o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
  e = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
  o = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0)));
  _mm256_storeu_ps(c, e);
  _mm256_storeu_ps(c + 8, o);
}
static inline void av_pairs_to(float *c) { /* pairs -> natural */
  __m256 e = _mm256_loadu_ps(c), o = _mm256_loadu_ps(c + 8);
  __m256 lo = _mm256_unpacklo_ps(e, o), hi = _mm256_unpackhi_ps(e, o);
  _mm256_storeu_ps(c, _mm256_permute2f128_ps(lo, hi, 0x20));
  _mm256_storeu_ps(c + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
}

/* The sums of v[0 .. 8), stored two by two: v[2x], v[2x + 1] to s[x * ld],
 * s[x * ld + 1] (4 rows x 2 keys of S), in 14 shuffles and 7 adds where 8
 * av_hsum take 24 and 24. */
static inline void av_hsum_4x2(const av_f *v, float *s, int64_t ld) {
  __m256 t[4], u[2];
  for (int i = 0; i < 4; i++)
    t[i] = _mm256_add_ps(_mm256_unpacklo_ps(v[2 * i], v[2 * i + 1]),
                         _mm256_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  for (int i = 0; i < 2; i++) {
    __m256d a = _mm256_castps_pd(t[2 * i]), b = _mm256_castps_pd(t[2 * i + 1]);
    u[i] = _mm256_add_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(a, b)),
                         _mm256_castpd_ps(_mm256_unpackhi_pd(a, b)));
  }
  __m256 r = _mm256_add_ps(_mm256_permute2f128_ps(u[0], u[1], 0x20),
                           _mm256_permute2f128_ps(u[0], u[1], 0x31));
  __m128 lo = _mm256_castps256_ps128(r), hi = _mm256_extractf128_ps(r, 1);
  _mm_storel_pi((__m64 *)(void *)s, lo);
  _mm_storeh_pi((__m64 *)(void *)(s + ld), lo);
  _mm_storel_pi((__m64 *)(void *)(s + 2 * ld), hi);
  _mm_storeh_pi((__m64 *)(void *)(s + 3 * ld), hi);
}

/* exp(x), inline (SLEEF's expf8 is a library call, ~5 cycles an element):
 * x = n ln2 + r, |r| <= ln2 / 2, e^r by Cephes' degree-7 expf polynomial,
 * times 2^n through the exponent bits; within 1.3 ulp of exp over
 * [-87.3, 88.3] (measured against libm's exp in f64), 0 below (where exp is
 * subnormal or underflows), clamped above, NaN kept. The scores it meets
 * are s - max <= 0. */
static inline __m256 av_exp(__m256 x) {
  const __m256 hi = _mm256_set1_ps(88.3762626647949f), lo = _mm256_set1_ps(-87.3365478515625f);
  __m256 xc = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
  __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), xc);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  __m256 y = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  __m256i e = _mm256_slli_epi32(_mm256_cvtps_epi32(n), 23);
  y = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(y), e));
  y = _mm256_andnot_ps(_mm256_cmp_ps(x, lo, _CMP_LT_OQ), y);        /* underflow: 0 */
  return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q)); /* NaN: NaN */
}

/* s[j] = exp(s[j] - m) over s[0 .. n); returns their sum, in the order of
 * the generic att_row_sum (8 lane sums, added pairwise). */
static inline float av_exp_sum(float *s, int64_t n, float m) {
  const __m256 mv = _mm256_set1_ps(m);
  __m256 acc = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    __m256 e = av_exp(_mm256_sub_ps(_mm256_loadu_ps(s + j), mv));
    _mm256_storeu_ps(s + j, e);
    acc = _mm256_add_ps(acc, e);
  }
  if (j < n) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i msk = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - j)), lane);
    __m256 e = av_exp(_mm256_sub_ps(_mm256_maskload_ps(s + j, msk), mv));
    e = _mm256_and_ps(e, _mm256_castsi256_ps(msk));
    _mm256_maskstore_ps(s + j, msk, e);
    acc = _mm256_add_ps(acc, e);
  }
  float a[8];
  _mm256_storeu_ps(a, acc);
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

#endif
