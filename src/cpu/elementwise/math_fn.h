/* math_fn.h — the math family's own elementwise functions, written as
 * branch-free scalar code over contiguous tiles so that GCC vectorises the
 * loops for whichever ISA the including unit targets (MF_FMAF is a fused
 * multiply-add where the unit has FMA, else a multiply and an add).
 *
 * - mf_exp_tile_f32: exp over the whole f32 range (subnormal results,
 *   overflow to inf): Cody-Waite reduction, a degree-6 minimax polynomial,
 *   scaling by two powers of two. <= 1 ulp (checked over every f32).
 * - mf_tanh_tile_f32: |x| < 0.75: x + x^3 P(x^2) (degree-5 minimax in x^2);
 *   else sign(x) (1 - 2 / (exp(2|x|) + 1)), which is 1 from |x| > 9.01 on.
 *   <= 2 ulp (checked over every f32). NaN propagates.
 * - mf_sigmoid_tile_f32: with e = exp(-|x|): 1 / (1 + e) for x >= 0, e / (1
 *   + e) for x < 0, so both tails keep their relative accuracy. <= 3 ulp.
 * - mf_erfinv_tile_f64: Giles' double-precision approximation ("Approximating
 *   the erfinv function", GPU Computing Gems, 2011) refined by one Newton
 *   step on erf (|y| < 0.5) or erfc (the tails, where 1 - |y| is exact).
 *   Used for every float dtype (f32 and halves convert through f64). */
#ifndef EMLX_SIMD_MATH_FN_H
#define EMLX_SIMD_MATH_FN_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if MV_HAS_FMA
#define MF_FMAF(a, b, c) fmaf((a), (b), (c))
#else
#define MF_FMAF(a, b, c) ((a) * (b) + (c))
#endif

#define MF_TILE 512

static inline uint32_t mf_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static inline float mf_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static inline uint64_t mf_bits64(double f) {
  uint64_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static inline double mf_double(uint64_t u) {
  double f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* exp(y), y any f32 (clamped to [-104, 89], outside which the result is 0
 * or inf anyway). */
static inline float mf_expf(float y) {
  float yc = y < 89.0f ? y : 89.0f;
  yc = yc > -104.0f ? yc : -104.0f;
  float k = MF_FMAF(yc, 1.44269504088896341f, 12582912.0f); /* round(y / ln 2) + 1.5 * 2^23 */
  float n = k - 12582912.0f;
  int32_t ni = (int32_t)(mf_bits(k) - mf_bits(12582912.0f));
  float r = MF_FMAF(n, -0.693359375f, yc); /* ln 2 split: exact high part */
  r = MF_FMAF(n, 2.12194440e-4f, r);
  float q = 0.001381461275741458f;
  q = MF_FMAF(q, r, 0.008368710055947304f);
  q = MF_FMAF(q, r, 0.04166838899254799f);
  q = MF_FMAF(q, r, 0.1666652113199234f);
  q = MF_FMAF(q, r, 0.4999999403953552f);
  float p = MF_FMAF(r * r, q, r) + 1.0f;
  int32_t n1 = ni / 2, n2 = ni - n1; /* two steps keep each factor a normal number */
  float e = p * mf_float((uint32_t)(n1 + 127) << 23) * mf_float((uint32_t)(n2 + 127) << 23);
  return y != y ? y : e;
}

static inline void mf_exp_tile_f32(const float *in, float *out, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    out[i] = mf_expf(in[i]);
}

static inline float mf_tanhf(float x) {
  float ax = fabsf(x);
  float s = x * x;
  float p = 0.0017369359266012907f;
  p = MF_FMAF(p, s, -0.007657255511730909f);
  p = MF_FMAF(p, s, 0.021452033892273903f);
  p = MF_FMAF(p, s, -0.053892724215984344f);
  p = MF_FMAF(p, s, 0.1333269476890564f);
  p = MF_FMAF(p, s, -0.33333316445350647f);
  float small = MF_FMAF(ax * s, p, ax);
  /* exp(y) for y = 2|x| in [1.5, 20]: no range issues, one scaling. */
  float y = 2.0f * ax;
  y = y < 20.0f ? y : 20.0f;
  float k = MF_FMAF(y, 1.44269504088896341f, 12582912.0f);
  float n = k - 12582912.0f;
  uint32_t ni = mf_bits(k) - mf_bits(12582912.0f);
  float r = MF_FMAF(n, -0.693359375f, y);
  r = MF_FMAF(n, 2.12194440e-4f, r);
  float q = 0.001381461275741458f;
  q = MF_FMAF(q, r, 0.008368710055947304f);
  q = MF_FMAF(q, r, 0.04166838899254799f);
  q = MF_FMAF(q, r, 0.1666652113199234f);
  q = MF_FMAF(q, r, 0.4999999403953552f);
  float e = mf_float(mf_bits(MF_FMAF(r * r, q, r) + 1.0f) + (ni << 23));
  float large = 1.0f - 2.0f / (e + 1.0f);
  float t = ax >= 0.75f ? large : small; /* NaN takes the small path and stays NaN */
  return mf_float(mf_bits(t) | (mf_bits(x) & 0x80000000u)); /* tanh is odd; keeps -0 */
}

static inline void mf_tanh_tile_f32(const float *in, float *out, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    out[i] = mf_tanhf(in[i]);
}

static inline float mf_sigmoidf(float x) {
  float e = mf_expf(-fabsf(x));
  float d = 1.0f / (1.0f + e);
  return x >= 0.0f ? d : (x < 0.0f ? e * d : x);
}

static inline void mf_sigmoid_tile_f32(const float *in, float *out, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    out[i] = mf_sigmoidf(in[i]);
}

/* ---- erf_inv ---------------------------------------------------------------- */
static inline double mf_erfinv_central(double w) {
  w = w - 3.125;
  double p = -3.6444120640178196996e-21;
  p = -1.685059138182016589e-19 + p * w;
  p = 1.2858480715256400167e-18 + p * w;
  p = 1.115787767802518096e-17 + p * w;
  p = -1.333171662854620906e-16 + p * w;
  p = 2.0972767875968561637e-17 + p * w;
  p = 6.6376381343583238325e-15 + p * w;
  p = -4.0545662729752068639e-14 + p * w;
  p = -8.1519341976054721522e-14 + p * w;
  p = 2.6335093153082322977e-12 + p * w;
  p = -1.2975133253453532498e-11 + p * w;
  p = -5.4154120542946279317e-11 + p * w;
  p = 1.051212273321532285e-09 + p * w;
  p = -4.1126339803469836976e-09 + p * w;
  p = -2.9070369957882005086e-08 + p * w;
  p = 4.2347877827932403518e-07 + p * w;
  p = -1.3654692000834678645e-06 + p * w;
  p = -1.3882523362786468719e-05 + p * w;
  p = 0.0001867342080340571352 + p * w;
  p = -0.00074070253416626697512 + p * w;
  p = -0.0060336708714301490533 + p * w;
  p = 0.24015818242558961693 + p * w;
  return 1.6536545626831027356 + p * w;
}
static inline double mf_erfinv_mid(double s) {
  double w = s - 3.25;
  double p = 2.2137376921775787049e-09;
  p = 9.0756561938885390979e-08 + p * w;
  p = -2.7517406297064545428e-07 + p * w;
  p = 1.8239629214389227755e-08 + p * w;
  p = 1.5027403968909827627e-06 + p * w;
  p = -4.013867526981545969e-06 + p * w;
  p = 2.9234449089955446044e-06 + p * w;
  p = 1.2475304481671778723e-05 + p * w;
  p = -4.7318229009055733981e-05 + p * w;
  p = 6.8284851459573175448e-05 + p * w;
  p = 2.4031110387097893999e-05 + p * w;
  p = -0.0003550375203628474796 + p * w;
  p = 0.00095328937973738049703 + p * w;
  p = -0.0016882755560235047313 + p * w;
  p = 0.0024914420961078508066 + p * w;
  p = -0.0037512085075692412107 + p * w;
  p = 0.005370914553590063617 + p * w;
  p = 1.0052589676941592334 + p * w;
  return 3.0838856104922207635 + p * w;
}
static inline double mf_erfinv_tail(double s) {
  double w = s - 5.0;
  double p = -2.7109920616438573243e-11;
  p = -2.5556418169965252055e-10 + p * w;
  p = 1.5076572693500548083e-09 + p * w;
  p = -3.7894654401267369937e-09 + p * w;
  p = 7.6157012080783393804e-09 + p * w;
  p = -1.4960026627149240478e-08 + p * w;
  p = 2.9147953450901080826e-08 + p * w;
  p = -6.7711997758452339498e-08 + p * w;
  p = 2.2900482228026654717e-07 + p * w;
  p = -9.9298272942317002539e-07 + p * w;
  p = 4.5260625972231537039e-06 + p * w;
  p = -1.9681778105531670567e-05 + p * w;
  p = 7.5995277030017761139e-05 + p * w;
  p = -0.00021503011930044477347 + p * w;
  p = -0.00013871931833623122026 + p * w;
  p = 1.0103004648645343977 + p * w;
  return 4.8499064014085844221 + p * w;
}

/* erf_inv over a tile of doubles (in-place safe). Needs the unit's
 * mv_log_f64, mv_sqrt_f64, mv_erf_f64, mv_erfc_f64 and mv_exp_f64. */
#define MF_ERFINV_RUN 128 /* six runs of doubles on the stack: 6 KiB */
static inline void mf_erfinv_tile_f64(const double *in, double *out, int64_t n) {
  double a[MF_ERFINV_RUN], w[MF_ERFINV_RUN], s[MF_ERFINV_RUN], z[MF_ERFINV_RUN], f[MF_ERFINV_RUN],
      g[MF_ERFINV_RUN];
  for (int64_t i0 = 0; i0 < n; i0 += MF_ERFINV_RUN) {
    int64_t len = n - i0 < MF_ERFINV_RUN ? n - i0 : MF_ERFINV_RUN;
    const double *x = in + i0;
    for (int64_t i = 0; i < len; i++) {
      double ai = fabs(x[i]);
      a[i] = ai < 1.0 ? ai : 0.0; /* out-of-domain lanes are fixed at the end */
      w[i] = (1.0 - a[i]) * (1.0 + a[i]);
    }
    mv_log_f64(w, w, len);
    for (int64_t i = 0; i < len; i++)
      w[i] = -w[i];
    mv_sqrt_f64(w, s, len);
    for (int64_t i = 0; i < len; i++) {
      double p = w[i] < 6.25 ? mf_erfinv_central(w[i])
                             : (w[i] < 16.0 ? mf_erfinv_mid(s[i]) : mf_erfinv_tail(s[i]));
      z[i] = p * a[i];
      g[i] = -(z[i] * z[i]);
    }
    /* One Newton step: z -= (erf(z) - a) / erf'(z), the residual taken
     * through erfc where a >= 0.5 (1 - a is exact there). */
    mv_erf_f64(z, f, len);
    mv_erfc_f64(z, s, len);
    mv_exp_f64(g, g, len);
    for (int64_t i = 0; i < len; i++) {
      double res = a[i] < 0.5 ? f[i] - a[i] : (1.0 - a[i]) - s[i];
      double d = 1.1283791670955126 * g[i]; /* 2 / sqrt(pi) exp(-z^2) */
      double zi = d > 0.0 ? z[i] - res / d : z[i];
      double ax = fabs(x[i]);
      zi = ax < 1.0 ? zi : (ax == 1.0 ? (double)INFINITY : (double)NAN);
      zi = x[i] != x[i] ? x[i] : zi;
      out[i0 + i] = x[i] < 0.0 ? -zi : (x[i] == 0.0 ? x[i] : zi);
    }
  }
}

#endif
