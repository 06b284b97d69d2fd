/* math_cr_body.h — f32 exp, sin and cos as the C library's double result
 * rounded once: (float)exp((double)x) bit for bit, which is what
 * Nx.BinaryBackend computes (f32 ops in f64 through Erlang's :math, the
 * platform libm, then rounded to f32).
 *
 * Each lane is widened to double and evaluated to within 2^-47 relative,
 * a few dozen units in the double's last place at most (range reduction
 * plus a short polynomial, each bound derived at its function: exp by
 * ln2/64 with a 64-entry table of 2^(j/64), 2^-51.5; sin and cos by pi/2
 * in three parts, exact for |x| < 2^20, 2^-47.4). That double y is then
 * rounded to f32, unless its low 29 bits (those the rounding drops) lie
 * within MCR_BAND units of the half-way pattern: only there can the exact
 * value, our y and libm's double (< 1 unit from the exact value) round
 * apart, and the lane takes libm's own (float)f((double)x). Elsewhere all
 * three round alike, so every result is libm's; the band catches 2^-18 of
 * the lanes. Lanes the fast path does not cover (sin/cos of |x| >= 2^20,
 * inf, NaN; exp with an f32-subnormal result, where the rounding drops
 * other bits) and the tail of a tile shorter than two vectors take libm's
 * path too. An exhaustive run over every f32 input of the fast paths (a
 * one-off program outside the test suite) found no mismatch, and y within
 * 1 unit of libm's double for exp, 39 for sin and cos (band: 1024);
 * tests/elementwise/test_math_f32_libm.c checks bit equality on ~7M
 * inputs each.
 *
 * Written once over a lane layer that the including unit defines
 * (math_cr_{scalar,avx2,avx512}.h): crv, CR_N and the cr_* operations. */
#ifndef EMLX_MATH_CR_BODY_H
#define EMLX_MATH_CR_BODY_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Half-width of the band checked around each double result, in units of
 * its last place: the lanes whose low 29 bits (those an f32 rounding drops)
 * lie within MCR_BAND of the half-way pattern 1 << 28. */
#define MCR_BAND 1024
#define MCR_MAGIC 0x1.8p52 /* t + MAGIC - MAGIC rounds t to an integer, |t| < 2^51 */

/* ---- exp ------------------------------------------------------------------------ */
/* exp(x) = 2^(k/64) exp(r), k = rint(x * 64 / ln 2), r = x - k ln2/64,
 * |r| <= ln2/128 (ln2/64 in two parts: k * MCR_LN2_64_HI is exact for
 * |k| < 2^21, and x - k * MCR_LN2_64_HI is exact by Sterbenz's lemma).
 * 2^(k/64) is 2^(k >> 6) times a table entry 2^(j/64), j = k & 63 (each
 * the double nearest, relative error <= 2^-53). exp(r) - 1 is its Taylor
 * polynomial to r^5, whose remainder is below |r|^6/720 e^|r| <= 2^-54.6.
 * With the rounding of the table entry (2^-53), of the last fma (2^-53)
 * and of the polynomial's steps (< 2^-60), the double y is within 2^-51.5
 * of exp(x), 3 units in y's last place. x is clamped to [-150, 100] first,
 * where the result rounds to 0 or inf in f32 anyway and the scaled table
 * entries stay normal doubles; the clamp keeps NaN. */
#define MCR_LN2_64_HI 0x1.62e42feep-7
#define MCR_LN2_64_LO 0x1.a39ef35793c76p-39
static const double mcr_exp2_64[64] = {
    0x1.0000000000000p+0, 0x1.02c9a3e778061p+0, 0x1.059b0d3158574p+0, 0x1.0874518759bc8p+0,
    0x1.0b5586cf9890fp+0, 0x1.0e3ec32d3d1a2p+0, 0x1.11301d0125b51p+0, 0x1.1429aaea92de0p+0,
    0x1.172b83c7d517bp+0, 0x1.1a35beb6fcb75p+0, 0x1.1d4873168b9aap+0, 0x1.2063b88628cd6p+0,
    0x1.2387a6e756238p+0, 0x1.26b4565e27cddp+0, 0x1.29e9df51fdee1p+0, 0x1.2d285a6e4030bp+0,
    0x1.306fe0a31b715p+0, 0x1.33c08b26416ffp+0, 0x1.371a7373aa9cbp+0, 0x1.3a7db34e59ff7p+0,
    0x1.3dea64c123422p+0, 0x1.4160a21f72e2ap+0, 0x1.44e086061892dp+0, 0x1.486a2b5c13cd0p+0,
    0x1.4bfdad5362a27p+0, 0x1.4f9b2769d2ca7p+0, 0x1.5342b569d4f82p+0, 0x1.56f4736b527dap+0,
    0x1.5ab07dd485429p+0, 0x1.5e76f15ad2148p+0, 0x1.6247eb03a5585p+0, 0x1.6623882552225p+0,
    0x1.6a09e667f3bcdp+0, 0x1.6dfb23c651a2fp+0, 0x1.71f75e8ec5f74p+0, 0x1.75feb564267c9p+0,
    0x1.7a11473eb0187p+0, 0x1.7e2f336cf4e62p+0, 0x1.82589994cce13p+0, 0x1.868d99b4492edp+0,
    0x1.8ace5422aa0dbp+0, 0x1.8f1ae99157736p+0, 0x1.93737b0cdc5e5p+0, 0x1.97d829fde4e50p+0,
    0x1.9c49182a3f090p+0, 0x1.a0c667b5de565p+0, 0x1.a5503b23e255dp+0, 0x1.a9e6b5579fdbfp+0,
    0x1.ae89f995ad3adp+0, 0x1.b33a2b84f15fbp+0, 0x1.b7f76f2fb5e47p+0, 0x1.bcc1e904bc1d2p+0,
    0x1.c199bdd85529cp+0, 0x1.c67f12e57d14bp+0, 0x1.cb720dcef9069p+0, 0x1.d072d4a07897cp+0,
    0x1.d5818dcfba487p+0, 0x1.da9e603db3285p+0, 0x1.dfc97337b9b5fp+0, 0x1.e502ee78b3ff6p+0,
    0x1.ea4afa2a490dap+0, 0x1.efa1bee615a27p+0, 0x1.f50765b6e4540p+0, 0x1.fa7c1819e90d8p+0,
};
static inline crv mcr_exp_core(crv x) {
  crv xc = cr_max(cr_set(-150.0), cr_min(cr_set(100.0), x));
  crv t = cr_fma(xc, cr_set(0x1.71547652b82fep+6), cr_set(MCR_MAGIC));
  crv k = cr_sub(t, cr_set(MCR_MAGIC));
  crv r = cr_fnma(k, cr_set(MCR_LN2_64_HI), xc);
  r = cr_fnma(k, cr_set(MCR_LN2_64_LO), r);
  crv r2 = cr_mul(r, r);
  crv a = cr_fma(r, cr_set(1.0 / 6), cr_set(0.5));
  crv b = cr_fma(r, cr_set(1.0 / 120), cr_set(1.0 / 24));
  crv p = cr_fma(r2, cr_fma(r2, b, a), r); /* exp(r) - 1 */
  crv s = cr_exp2_table(mcr_exp2_64, t);   /* 2^(k/64): t's low bits are k */
  return cr_fma(s, p, s);
}

/* ---- sin, cos -------------------------------------------------------------------- */
/* x = k pi/2 + r, |r| <= pi/4 (+ 2^-32 from rounding x * 2/pi): pi/2 in
 * three parts, the first two of 33 bits so that k * MCR_PIO2_1 and
 * k * MCR_PIO2_2 are exact for |k| < 2^20; x - k * MCR_PIO2_1 is exact
 * (Sterbenz), the next two steps round once each (2^-53 of |r|; k *
 * MCR_PIO2_3's own rounding is below 2^-100). The products of the last two
 * steps are independent of r, which keeps the chain short. sin(x)
 * and cos(x) are +-sin(r) or +-cos(r) by the quadrant k mod 4 (cos is sin
 * one quadrant on). With z = r^2: sin(r) = r (1 + z S(z)), cos(r) =
 * 1 + z C(z), S of degree 4 and C of degree 5, fits of the relative error
 * on |r| <= pi/4 (2^-47.5 and 2^-53.4 with these double coefficients),
 * evaluated by Estrin's scheme (z, z^2, z^4) for a short dependency chain;
 * their roundings add < 2^-51, so y is within 2^-47.4 of sin(x) or cos(x):
 * 50 units in y's last place, well inside MCR_BAND. r (1 + z S) keeps the
 * sign of r = -0. */
#define MCR_TRIG_MAX 0x1p20 /* |x| below this takes the fast path */
#define MCR_PIO2_1 0x1.921fb544p+0
#define MCR_PIO2_2 0x1.0b4611a6p-34
#define MCR_PIO2_3 0x1.3198a2e037073p-69
static inline crv mcr_trig_core(crv x, double quadrant_shift) {
  crv t = cr_fma(x, cr_set(0x1.45f306dc9c883p-1), cr_set(MCR_MAGIC));
  crv k = cr_sub(t, cr_set(MCR_MAGIC));
  crv r = cr_fnma(k, cr_set(MCR_PIO2_1), x);
  r = cr_sub(r, cr_mul(k, cr_set(MCR_PIO2_2)));
  r = cr_sub(r, cr_mul(k, cr_set(MCR_PIO2_3)));
  crv z = cr_mul(r, r);
  crv z2 = cr_mul(z, z);
  crv z4 = cr_mul(z2, z2);
  /* S = (s0 + s1 z) + z^2 (s2 + s3 z) + z^4 s4 */
  crv sa = cr_fma(z, cr_set(0x1.1111110c87234p-7), cr_set(-0x1.5555555552238p-3));
  crv sb = cr_fma(z, cr_set(0x1.71d76d0ebdc4cp-19), cr_set(-0x1.a019f939575fcp-13));
  crv sp = cr_fma(z4, cr_set(-0x1.a9619f150ef1bp-26), cr_fma(z2, sb, sa));
  crv s = cr_mul(r, cr_fma(z, sp, cr_set(1.0)));
  /* C = (c0 + c1 z) + z^2 (c2 + c3 z) + z^4 (c4 + c5 z) */
  crv ca = cr_fma(z, cr_set(0x1.555555554f0a9p-5), cr_set(-0x1.fffffffffff96p-2));
  crv cb = cr_fma(z, cr_set(0x1.a019f81ca8156p-16), cr_set(-0x1.6c16c1640a98bp-10));
  crv cc = cr_fma(z, cr_set(0x1.1b8b98014f193p-29), cr_set(-0x1.27df4604d7fabp-22));
  crv cp = cr_fma(z4, cc, cr_fma(z2, cb, ca));
  crv c = cr_fma(z, cp, cr_set(1.0));
  crv q = cr_add(t, cr_set(quadrant_shift)); /* exact: t's ulp is 1 */
  return cr_neg_bit(q, 1, cr_sel_bit(q, 0, s, c));
}
static inline crv mcr_sin_core(crv x) { return mcr_trig_core(x, 0.0); }
static inline crv mcr_cos_core(crv x) { return mcr_trig_core(x, 1.0); }

/* ---- tiles --------------------------------------------------------------------- */
/* out[i] = (float)REF((double)in[i]), MCR_UNROLL vectors a step (their
 * chains interleave); in == out is allowed (a step reads its inputs before
 * it writes). HARD(x, y) gives the lanes that take libm's path. */
#define MCR_UNROLL 2 /* 4 spills registers on AVX2 and runs slower */
#define MCR_TILE(NAME, CORE, REF, HARD)                                                            \
  static inline void NAME(const float *in, float *out, int64_t n) {                                \
    enum { STEP = MCR_UNROLL * CR_N };                                                             \
    int64_t i = 0;                                                                                 \
    for (; i + STEP <= n; i += STEP) {                                                             \
      crv y[MCR_UNROLL];                                                                           \
      unsigned h = 0;                                                                              \
      for (int u = 0; u < MCR_UNROLL; u++) {                                                       \
        crv x = cr_load(in + i + u * CR_N);                                                        \
        y[u] = CORE(x);                                                                            \
        h |= HARD(x, y[u]) << u * CR_N;                                                            \
      }                                                                                            \
      if (h) {                                                                                     \
        float t[STEP];                                                                             \
        for (int u = 0; u < MCR_UNROLL; u++)                                                       \
          cr_store(t + u * CR_N, y[u]);                                                            \
        for (int j = 0; j < STEP; j++)                                                             \
          if (h >> j & 1u)                                                                         \
            t[j] = (float)REF((double)in[i + j]);                                                  \
        memcpy(out + i, t, sizeof t);                                                              \
      } else {                                                                                     \
        for (int u = 0; u < MCR_UNROLL; u++)                                                       \
          cr_store(out + i + u * CR_N, y[u]);                                                      \
      }                                                                                            \
    }                                                                                              \
    for (; i < n; i++)                                                                             \
      out[i] = (float)REF((double)in[i]);                                                          \
  }
/* exp: the band, and the inputs whose result is an f32 subnormal
 * (exp(x) < 2^-126 from x < -87.34; below -104.5 it rounds to 0 on both
 * sides, far from 2^-150, the first boundary), where the band's bits are
 * not the ones the rounding drops. */
static inline unsigned mcr_exp_hard(crv x, crv y) {
  return cr_near_half(y, MCR_BAND) | cr_between(x, -104.5, -87.0);
}
/* sin, cos: the band, and the inputs off the fast path. Their results are
 * never f32 subnormals but where |x| is tiny, and there y = x exactly. */
static inline unsigned mcr_trig_hard(crv x, crv y) {
  return cr_near_half(y, MCR_BAND) | cr_not_below(cr_abs(x), MCR_TRIG_MAX);
}

MCR_TILE(mcr_exp_f32, mcr_exp_core, exp, mcr_exp_hard)
MCR_TILE(mcr_sin_f32, mcr_sin_core, sin, mcr_trig_hard)
MCR_TILE(mcr_cos_f32, mcr_cos_core, cos, mcr_trig_hard)

#endif
