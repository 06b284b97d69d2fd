/* math_cr_body.h — f32 exp, sin and cos as the C library's double result
 * rounded once: (float)exp((double)x) bit for bit, which is what
 * Nx.BinaryBackend computes (f32 ops in f64 through Erlang's :math, the
 * platform libm, then rounded to f32).
 *
 * Each lane is widened to double and evaluated with an error below 2^-51
 * relative (range reduction plus a polynomial: exp's degree-11 Chebyshev
 * fit on |r| <= ln2/2, 2^-55.8 with its double coefficients; sin and cos
 * fdlibm's degree-13/14 kernels, 2^-58 on |r| <= pi/4, after a 3-part
 * Cody-Waite reduction by pi/2 exact for |x| < 2^20). That double y is then
 * rounded to f32, unless the band y (1 +- MCR_GUARD) holds an f32 rounding
 * boundary: then the exact value and libm's double might round apart, and
 * the lane takes libm's own (float)f((double)x). Outside the band both lie
 * inside it (our error < 2^-51, libm's < 1 ulp = 2^-52) and round alike, so
 * every result is libm's; the band catches ~2^-20 of the lanes. Lanes the
 * fast path does not cover (sin/cos of |x| >= 2^20, inf, NaN) and the tail
 * of a tile shorter than two vectors take libm's path too.
 *
 * Written once over a lane layer that the including unit defines
 * (math_cr_{scalar,avx2,avx512}.h): crv, CR_N and the cr_* operations. */
#ifndef EMLX_MATH_CR_BODY_H
#define EMLX_MATH_CR_BODY_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Relative half-width of the band checked around each double result. */
#define MCR_GUARD 0x1p-45
#define MCR_MAGIC 0x1.8p52 /* t + MAGIC - MAGIC rounds t to an integer, |t| < 2^51 */

/* ---- exp ------------------------------------------------------------------------ */
/* exp(x) = 2^k exp(r), k = rint(x / ln 2), r = x - k ln 2 (ln 2 in two
 * parts: k * MCR_LN2_HI is exact for |k| < 2^21, and x - k * MCR_LN2_HI
 * is exact by Sterbenz's lemma). x is clamped to [-150, 100] first, where
 * the result rounds to 0 or inf in f32 anyway and 2^k stays a normal double;
 * the clamp keeps NaN. */
#define MCR_LN2_HI 0x1.62e42feep-1
#define MCR_LN2_LO 0x1.a39ef35793c76p-33
static inline crv mcr_exp_core(crv x) {
  crv xc = cr_max(cr_set(-150.0), cr_min(cr_set(100.0), x));
  crv t = cr_fma(xc, cr_set(0x1.71547652b82fep+0), cr_set(MCR_MAGIC));
  crv k = cr_sub(t, cr_set(MCR_MAGIC));
  crv r = cr_sub(xc, cr_mul(k, cr_set(MCR_LN2_HI)));
  r = cr_sub(r, cr_mul(k, cr_set(MCR_LN2_LO)));
  crv p = cr_set(0x1.af632a0f7e2cep-26);
  p = cr_fma(p, r, cr_set(0x1.28b4101c77212p-22));
  p = cr_fma(p, r, cr_set(0x1.71ddf56d8deb5p-19));
  p = cr_fma(p, r, cr_set(0x1.a01991a10d9aep-16));
  p = cr_fma(p, r, cr_set(0x1.a01a01b1461c5p-13));
  p = cr_fma(p, r, cr_set(0x1.6c16c1880029fp-10));
  p = cr_fma(p, r, cr_set(0x1.111111110f21ep-7));
  p = cr_fma(p, r, cr_set(0x1.555555554f0bap-5));
  p = cr_fma(p, r, cr_set(0x1.555555555555ap-3));
  p = cr_fma(p, r, cr_set(0x1.0000000000011p-1));
  p = cr_fma(p, r, cr_set(1.0));
  p = cr_fma(p, r, cr_set(1.0));
  return cr_mul(p, cr_pow2i(t)); /* t's low bits are k */
}

/* ---- sin, cos -------------------------------------------------------------------- */
/* x = k pi/2 + r, |r| <= pi/4 (+ 2^-32 from rounding x * 2/pi): pi/2 in
 * three parts, the first two of 33 bits so that k * MCR_PIO2_1 and
 * k * MCR_PIO2_2 are exact for |k| < 2^20; x - k * MCR_PIO2_1 is exact
 * (Sterbenz). sin(x) and cos(x) are +-sin(r) or +-cos(r) by the quadrant
 * k mod 4 (cos is sin one quadrant on). */
#define MCR_TRIG_MAX 0x1p20 /* |x| below this takes the fast path */
#define MCR_PIO2_1 0x1.921fb544p+0
#define MCR_PIO2_2 0x1.0b4611a6p-34
#define MCR_PIO2_3 0x1.3198a2e037073p-69
static inline crv mcr_trig_core(crv x, double quadrant_shift) {
  crv t = cr_fma(x, cr_set(0x1.45f306dc9c883p-1), cr_set(MCR_MAGIC));
  crv k = cr_sub(t, cr_set(MCR_MAGIC));
  crv r = cr_sub(x, cr_mul(k, cr_set(MCR_PIO2_1)));
  r = cr_sub(r, cr_mul(k, cr_set(MCR_PIO2_2)));
  r = cr_sub(r, cr_mul(k, cr_set(MCR_PIO2_3)));
  crv z = cr_mul(r, r);
  /* sin(r) = r + r^3 S(r^2) (fdlibm's __kernel_sin); r + r * w is +0 for
   * r = -0, so the sign of r is put back (the sum has it otherwise). */
  crv ps = cr_set(1.58969099521155010221e-10);
  ps = cr_fma(ps, z, cr_set(-2.50507602534068634195e-08));
  ps = cr_fma(ps, z, cr_set(2.75573137070700676789e-06));
  ps = cr_fma(ps, z, cr_set(-1.98412698298579493134e-04));
  ps = cr_fma(ps, z, cr_set(8.33333333332248946124e-03));
  ps = cr_fma(ps, z, cr_set(-1.66666666666666324348e-01));
  crv s = cr_sign_of(cr_fma(cr_mul(r, z), ps, r), r);
  /* cos(r) = 1 - z/2 + z^2 C(z) (fdlibm's __kernel_cos), with the rounding
   * error of 1 - z/2 added back. */
  crv pc = cr_set(-1.13596475577881948265e-11);
  pc = cr_fma(pc, z, cr_set(2.08757232129817482790e-09));
  pc = cr_fma(pc, z, cr_set(-2.75573143513906633035e-07));
  pc = cr_fma(pc, z, cr_set(2.48015872894767294178e-05));
  pc = cr_fma(pc, z, cr_set(-1.38888888888741095749e-03));
  pc = cr_fma(pc, z, cr_set(4.16666666666666019037e-02));
  crv hz = cr_mul(z, cr_set(0.5));
  crv w = cr_sub(cr_set(1.0), hz);
  crv c = cr_add(w, cr_fma(cr_mul(z, z), pc, cr_sub(cr_sub(cr_set(1.0), w), hz)));
  crv q = cr_add(t, cr_set(quadrant_shift)); /* exact: t's ulp is 1 */
  return cr_neg_bit(q, 1, cr_sel_bit(q, 0, s, c));
}
static inline crv mcr_sin_core(crv x) { return mcr_trig_core(x, 0.0); }
static inline crv mcr_cos_core(crv x) { return mcr_trig_core(x, 1.0); }

/* ---- tiles --------------------------------------------------------------------- */
/* out[i] = (float)REF((double)in[i]), two vectors a step; in == out is
 * allowed (a lane's input is read before its output is written). */
#define MCR_TILE(NAME, CORE, REF, OUTSIDE)                                                         \
  static inline void NAME(const float *in, float *out, int64_t n) {                                \
    int64_t i = 0;                                                                                 \
    for (; i + 2 * CR_N <= n; i += 2 * CR_N) {                                                     \
      crv x0 = cr_load(in + i), x1 = cr_load(in + i + CR_N);                                       \
      crv y0 = CORE(x0), y1 = CORE(x1);                                                            \
      unsigned h0 = cr_hard(y0, MCR_GUARD) | OUTSIDE(x0);                                          \
      unsigned h1 = cr_hard(y1, MCR_GUARD) | OUTSIDE(x1);                                          \
      if (h0 | h1) {                                                                               \
        float t[2 * CR_N];                                                                         \
        cr_store(t, y0);                                                                           \
        cr_store(t + CR_N, y1);                                                                    \
        unsigned h = h0 | h1 << CR_N;                                                              \
        for (int j = 0; j < 2 * CR_N; j++)                                                         \
          if (h >> j & 1u)                                                                         \
            t[j] = (float)REF((double)in[i + j]);                                                  \
        memcpy(out + i, t, sizeof t);                                                              \
      } else {                                                                                     \
        cr_store(out + i, y0);                                                                     \
        cr_store(out + i + CR_N, y1);                                                              \
      }                                                                                            \
    }                                                                                              \
    for (; i < n; i++)                                                                             \
      out[i] = (float)REF((double)in[i]);                                                          \
  }
static inline unsigned mcr_exp_outside(crv x) {
  (void)x;
  return 0u; /* the clamp covers every input */
}
static inline unsigned mcr_trig_outside(crv x) { return cr_not_below(cr_abs(x), MCR_TRIG_MAX); }

MCR_TILE(mcr_exp_f32, mcr_exp_core, exp, mcr_exp_outside)
MCR_TILE(mcr_sin_f32, mcr_sin_core, sin, mcr_trig_outside)
MCR_TILE(mcr_cos_f32, mcr_cos_core, cos, mcr_trig_outside)

#endif
