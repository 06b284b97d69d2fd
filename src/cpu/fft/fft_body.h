/* fft_body.h — the FFT's inner machinery on the lane layout of fft.h,
 * written once against a thin vector layer and compiled per ISA by
 * fft_{scalar,avx2,avx512}.c, which define before including it:
 *
 *   FV_W              lanes (floats per vector)
 *   fv                the vector type
 *   fv_ld, fv_st      aligned load / store;  fv_ldu: unaligned load
 *   fv_set1, fv_zero, fv_add, fv_sub, fv_mul, fv_neg
 *   fv_fmadd(a,b,c) = a*b+c,  fv_fmsub(a,b,c) = a*b-c
 *   fv_ld_cplx(p, &re, &im)   FV_W interleaved complex at p -> split
 *   fv_st_cplx(p, re, im)     the reverse
 *   fv_transpose(m)           m[0..W-1] (rows) becomes its transpose
 *   FFT_SUFFIX        scalar / avx2 / avx512
 *
 * Everything is a forward transform (exponent -2 pi i jk/n). Passes are
 * Stockham (ping-pong between two buffers, no bit reversal); butterflies
 * are vector arithmetic on W independent sequences with the twiddle
 * broadcast, so every radix is as simple as its scalar formula. */
#include <string.h>

#include "fft.h"

#define E2 (2 * FV_W) /* floats per element of the lane layout */

#define FFT_CAT2(a, b) a##_##b
#define FFT_CAT(a, b) FFT_CAT2(a, b)

typedef struct cv {
  fv r, i;
} cv;

static inline cv cv_ld(const float *p) {
  cv z;
  z.r = fv_ld(p);
  z.i = fv_ld(p + FV_W);
  return z;
}
static inline void cv_st(float *p, cv z) {
  fv_st(p, z.r);
  fv_st(p + FV_W, z.i);
}
static inline cv cv_add(cv a, cv b) {
  cv z = {fv_add(a.r, b.r), fv_add(a.i, b.i)};
  return z;
}
static inline cv cv_sub(cv a, cv b) {
  cv z = {fv_sub(a.r, b.r), fv_sub(a.i, b.i)};
  return z;
}
/* a * (-i) */
static inline cv cv_negi(cv a) {
  cv z = {a.i, fv_neg(a.r)};
  return z;
}
static inline cv cv_conj(cv a) {
  cv z = {a.r, fv_neg(a.i)};
  return z;
}
/* a * (wr + i wi), the same factor in every lane. */
static inline cv cv_mul_s(cv a, fv wr, fv wi) {
  cv z = {fv_fmsub(a.r, wr, fv_mul(a.i, wi)), fv_fmadd(a.r, wi, fv_mul(a.i, wr))};
  return z;
}
/* a * w for the complex w at p (two floats). */
static inline cv cv_tw(cv a, const float *p) { return cv_mul_s(a, fv_set1(p[0]), fv_set1(p[1])); }

/* ---- butterflies (in place on a[0..p-1]) ----------------------------------- */

static inline void dft4(cv x0, cv x1, cv x2, cv x3, cv *o0, cv *o1, cv *o2, cv *o3) {
  cv t0 = cv_add(x0, x2), t1 = cv_sub(x0, x2), t2 = cv_add(x1, x3), t3 = cv_negi(cv_sub(x1, x3));
  *o0 = cv_add(t0, t2);
  *o2 = cv_sub(t0, t2);
  *o1 = cv_add(t1, t3);
  *o3 = cv_sub(t1, t3);
}

static inline void bfly_2(cv *a) {
  cv t = a[0];
  a[0] = cv_add(t, a[1]);
  a[1] = cv_sub(t, a[1]);
}

static inline void bfly_4(cv *a) { dft4(a[0], a[1], a[2], a[3], &a[0], &a[1], &a[2], &a[3]); }

/* Radix 2 across the halves, the odd half rotated by w8^j, then two DFT4s. */
static inline void bfly_8(cv *a) {
  const fv r = fv_set1(0.70710678118654752f), nr = fv_set1(-0.70710678118654752f);
  cv b0 = cv_add(a[0], a[4]), b1 = cv_add(a[1], a[5]), b2 = cv_add(a[2], a[6]),
     b3 = cv_add(a[3], a[7]);
  cv c0 = cv_sub(a[0], a[4]), c1 = cv_sub(a[1], a[5]), c2 = cv_sub(a[2], a[6]),
     c3 = cv_sub(a[3], a[7]);
  cv d1 = {fv_mul(fv_add(c1.r, c1.i), r), fv_mul(fv_sub(c1.i, c1.r), r)}; /* (1-i)/sqrt2 */
  cv d2 = cv_negi(c2);
  cv d3 = {fv_mul(fv_sub(c3.i, c3.r), r), fv_mul(fv_add(c3.r, c3.i), nr)}; /* (-1-i)/sqrt2 */
  dft4(b0, b1, b2, b3, &a[0], &a[2], &a[4], &a[6]);
  dft4(c0, d1, d2, d3, &a[1], &a[3], &a[5], &a[7]);
}

/* Odd p: y_m = a0 + sum_q (s_q cos - i d_q sin)(2 pi q m / p) with
 * s_q = a_q + a_{p-q}, d_q = a_q - a_{p-q}; y_{p-m} flips the sine term. */
static inline __attribute__((always_inline)) void bfly_odd(cv *a, int p, const float *rot) {
  const int h = (p - 1) / 2;
  cv s[(EMLX_FFT_MAX_RADIX - 1) / 2], d[(EMLX_FFT_MAX_RADIX - 1) / 2];
  cv a0 = a[0], y0 = a[0];
  for (int q = 1; q <= h; q++) {
    s[q - 1] = cv_add(a[q], a[p - q]);
    d[q - 1] = cv_sub(a[q], a[p - q]);
    y0 = cv_add(y0, s[q - 1]);
  }
  for (int m = 1; m <= h; m++) {
    cv R = a0, I = {fv_zero(), fv_zero()};
    for (int q = 1; q <= h; q++) {
      const float *cs = rot + 2 * ((q - 1) * h + (m - 1));
      fv c = fv_set1(cs[0]), sn = fv_set1(cs[1]);
      R.r = fv_fmadd(s[q - 1].r, c, R.r);
      R.i = fv_fmadd(s[q - 1].i, c, R.i);
      I.r = fv_fmadd(d[q - 1].r, sn, I.r);
      I.i = fv_fmadd(d[q - 1].i, sn, I.i);
    }
    cv ym = {fv_add(R.r, I.i), fv_sub(R.i, I.r)};
    cv yp = {fv_sub(R.r, I.i), fv_add(R.i, I.r)};
    a[m] = ym;
    a[p - m] = yp;
  }
  a[0] = y0;
}
static inline void bfly_3(cv *a, const float *rot) { bfly_odd(a, 3, rot); }
static inline void bfly_5(cv *a, const float *rot) { bfly_odd(a, 5, rot); }
static inline void bfly_7(cv *a, const float *rot) { bfly_odd(a, 7, rot); }

/* ---- passes ------------------------------------------------------------------ */
/* Input (i, q, k) at i + ido*(q + P*k); output (i, k, m) at i + ido*(k + l1*m),
 * output m > 0 times tw[(m-1)*ido + i] (1 for i = 0). BFLY(a) is the
 * butterfly; P is a constant so the loops unroll and a[] lives in registers. */
#define FFT_DEFINE_PASS(P, BFLY)                                                                   \
  static void pass_##P(const emlx_fft_stage *st, const float *in, float *out) {                    \
    const int64_t l1 = st->l1, ido = st->ido, is = ido * E2, os = ido * l1 * E2;                   \
    const float *tw = st->tw;                                                                      \
    const float *rot = st->rot;                                                                    \
    (void)rot;                                                                                     \
    for (int64_t k = 0; k < l1; k++) {                                                             \
      const float *ib = in + k * P * is;                                                           \
      float *ob = out + k * ido * E2;                                                              \
      cv a[P];                                                                                     \
      for (int q = 0; q < P; q++)                                                                  \
        a[q] = cv_ld(ib + q * is);                                                                 \
      BFLY;                                                                                        \
      for (int m = 0; m < P; m++)                                                                  \
        cv_st(ob + m * os, a[m]);                                                                  \
      for (int64_t i = 1; i < ido; i++) {                                                          \
        for (int q = 0; q < P; q++)                                                                \
          a[q] = cv_ld(ib + q * is + i * E2);                                                      \
        BFLY;                                                                                      \
        for (int m = 1; m < P; m++)                                                                \
          a[m] = cv_tw(a[m], tw + 2 * ((m - 1) * ido + i));                                        \
        for (int m = 0; m < P; m++)                                                                \
          cv_st(ob + m * os + i * E2, a[m]);                                                       \
      }                                                                                            \
    }                                                                                              \
  }

FFT_DEFINE_PASS(2, bfly_2(a))
FFT_DEFINE_PASS(4, bfly_4(a))
FFT_DEFINE_PASS(8, bfly_8(a))
FFT_DEFINE_PASS(3, bfly_3(a, rot))
FFT_DEFINE_PASS(5, bfly_5(a, rot))
FFT_DEFINE_PASS(7, bfly_7(a, rot))

/* Any odd radix up to EMLX_FFT_MAX_RADIX, p known only at run time. */
static void pass_generic(const emlx_fft_stage *st, const float *in, float *out) {
  const int p = (int)st->p;
  const int64_t l1 = st->l1, ido = st->ido, is = ido * E2, os = ido * l1 * E2;
  cv a[EMLX_FFT_MAX_RADIX];
  for (int64_t k = 0; k < l1; k++) {
    const float *ib = in + k * p * is;
    float *ob = out + k * ido * E2;
    for (int64_t i = 0; i < ido; i++) {
      for (int q = 0; q < p; q++)
        a[q] = cv_ld(ib + q * is + i * E2);
      bfly_odd(a, p, st->rot);
      if (i > 0)
        for (int m = 1; m < p; m++)
          a[m] = cv_tw(a[m], st->tw + 2 * ((m - 1) * ido + i));
      for (int m = 0; m < p; m++)
        cv_st(ob + m * os + i * E2, a[m]);
    }
  }
}

static float *direct_exec(const emlx_fft_plan *p, float *a, float *b) {
  for (int s = 0; s < p->nstages; s++) {
    const emlx_fft_stage *st = &p->stage[s];
    switch (st->p) {
    case 2:
      pass_2(st, a, b);
      break;
    case 3:
      pass_3(st, a, b);
      break;
    case 4:
      pass_4(st, a, b);
      break;
    case 5:
      pass_5(st, a, b);
      break;
    case 7:
      pass_7(st, a, b);
      break;
    case 8:
      pass_8(st, a, b);
      break;
    default:
      pass_generic(st, a, b);
      break;
    }
    float *t = a;
    a = b;
    b = t;
  }
  return a;
}

static void zero_elements(float *buf, int64_t from, int64_t to) {
  if (to > from)
    memset(buf + from * E2, 0, (size_t)(to - from) * E2 * sizeof(float));
}

/* Chirp-z: X = w . ifft_m(fft_m(x . w) . fft_m(b)), the inverse done as
 * conj(fft(conj(.))) with 1/m folded into bk. */
static float *bluestein_exec(const emlx_fft_plan *p, float *a, float *b) {
  const int64_t n = p->n, m = p->m;
  for (int64_t j = 0; j < n; j++)
    cv_st(b + j * E2, cv_tw(cv_ld(a + j * E2), p->chirp + 2 * j));
  zero_elements(b, n, m);
  float *r = direct_exec(p->sub, b, a);
  float *o = r == b ? a : b;
  for (int64_t j = 0; j < m; j++)
    cv_st(r + j * E2, cv_conj(cv_tw(cv_ld(r + j * E2), p->bk + 2 * j)));
  float *r2 = direct_exec(p->sub, r, o);
  for (int64_t j = 0; j < n; j++)
    cv_st(r2 + j * E2, cv_tw(cv_conj(cv_ld(r2 + j * E2)), p->chirp + 2 * j));
  return r2;
}

static float *lane_exec(const emlx_fft_plan *p, float *a, float *b) {
  return p->kind == EMLX_FFT_LANE_BLUESTEIN ? bluestein_exec(p, a, b) : direct_exec(p, a, b);
}

/* ---- moving data in and out of the lane layout ------------------------------- */

static void gather_cols(const float *x, int64_t sx, int64_t len, int64_t n, float *buf, int conj) {
  const fv zero = fv_zero();
  for (int64_t j = 0; j < len; j++) {
    fv re, im;
    fv_ld_cplx(x + 2 * j * sx, &re, &im);
    fv_st(buf + j * E2, re);
    fv_st(buf + j * E2 + FV_W, conj ? fv_sub(zero, im) : im);
  }
  zero_elements(buf, len, n);
}

static void scatter_cols(const float *buf, int64_t n, float *y, int64_t sy, float scale, int conj) {
  const fv sr = fv_set1(scale), si = fv_set1(conj ? -scale : scale);
  for (int64_t j = 0; j < n; j++)
    fv_st_cplx(y + 2 * j * sy, fv_mul(fv_ld(buf + j * E2), sr),
               fv_mul(fv_ld(buf + j * E2 + FV_W), si));
}

/* Rows side by side: W blocks of W complex from W rows, deinterleaved and
 * transposed in registers into W elements of the lane layout. */
static int64_t gather_rows_simd(const float *const *src, int64_t len, float *buf, int conj) {
  int64_t j0 = 0;
  for (; j0 + FV_W <= len; j0 += FV_W) {
    fv re[FV_W], im[FV_W];
    for (int l = 0; l < FV_W; l++)
      fv_ld_cplx(src[l] + 2 * j0, &re[l], &im[l]);
    fv_transpose(re);
    fv_transpose(im);
    for (int j = 0; j < FV_W; j++) {
      fv_st(buf + (j0 + j) * E2, re[j]);
      fv_st(buf + (j0 + j) * E2 + FV_W, conj ? fv_neg(im[j]) : im[j]);
    }
  }
  return j0;
}

static void gather_lanes(const float *const *src, const int64_t *len, int nl, int64_t sx, int64_t n,
                         float *buf, int conj) {
  const float sgn = conj ? -1.0f : 1.0f;
  int64_t common = n;
  for (int l = 0; l < nl; l++)
    common = len[l] < common ? len[l] : common;
  int64_t j = sx == 1 && nl == FV_W ? gather_rows_simd(src, common, buf, conj) : 0;
  /* Row by row while every lane has data: nl streams read in step. */
  for (; j < common; j++) {
    float *e = buf + j * E2;
    int l = 0;
    for (; l < nl; l++) {
      const float *s = src[l] + 2 * j * sx;
      e[l] = s[0];
      e[FV_W + l] = sgn * s[1];
    }
    for (; l < FV_W; l++)
      e[l] = e[FV_W + l] = 0.0f;
  }
  zero_elements(buf, common, n);
  for (int l = 0; l < nl; l++)
    for (j = common; j < len[l] && j < n; j++) {
      const float *s = src[l] + 2 * j * sx;
      buf[j * E2 + l] = s[0];
      buf[j * E2 + FV_W + l] = sgn * s[1];
    }
}

static void scatter_lanes(const float *buf, int nl, int64_t n, float *const *dst, int64_t sy,
                          float scale, int conj) {
  const float si = conj ? -scale : scale;
  int64_t j = 0;
  if (sy == 1 && nl == FV_W) { /* the transpose of gather_rows_simd */
    const fv vr = fv_set1(scale), vi = fv_set1(si);
    for (; j + FV_W <= n; j += FV_W) {
      fv re[FV_W], im[FV_W];
      for (int k = 0; k < FV_W; k++) {
        re[k] = fv_ld(buf + (j + k) * E2);
        im[k] = fv_ld(buf + (j + k) * E2 + FV_W);
      }
      fv_transpose(re);
      fv_transpose(im);
      for (int l = 0; l < FV_W; l++)
        fv_st_cplx(dst[l] + 2 * j, fv_mul(re[l], vr), fv_mul(im[l], vi));
    }
  }
  for (; j < n; j++) {
    const float *e = buf + j * E2;
    for (int l = 0; l < nl; l++) {
      float *d = dst[l] + 2 * j * sy;
      d[0] = e[l] * scale;
      d[1] = e[FV_W + l] * si;
    }
  }
}

/* Four-step, second step: Y holds the column tiles in the lane layout, tile
 * t (columns tW..tW+W-1) at Y + t*n1*E2. Rows r0..r0+W-1 of the matrix
 * become the lanes of buf (n2 elements): one W x W transpose per tile. */
static void gather_tiles(const float *Y, int64_t n1, int64_t n2, int64_t r0, float *buf) {
  for (int64_t t = 0; t * FV_W < n2; t++) {
    const float *blk = Y + (t * n1 + r0) * E2;
    fv re[FV_W], im[FV_W];
    for (int j = 0; j < FV_W; j++) {
      re[j] = fv_ld(blk + j * E2);
      im[j] = fv_ld(blk + j * E2 + FV_W);
    }
    fv_transpose(re);
    fv_transpose(im);
    int64_t nv = n2 - t * FV_W < FV_W ? n2 - t * FV_W : FV_W;
    for (int64_t l = 0; l < nv; l++) {
      fv_st(buf + (t * FV_W + l) * E2, re[l]);
      fv_st(buf + (t * FV_W + l) * E2 + FV_W, im[l]);
    }
  }
}

static void twiddle_cols(const float *in, float *out, int64_t n1, const float *tw_lane, int lane0,
                         const float *tw_blk) {
  for (int64_t k = 0; k < n1; k++) {
    fv lr = fv_ldu(tw_lane + 32 * k + lane0), li = fv_ldu(tw_lane + 32 * k + 16 + lane0);
    cv w = cv_mul_s((cv){lr, li}, fv_set1(tw_blk[2 * k]), fv_set1(tw_blk[2 * k + 1]));
    cv z = cv_ld(in + k * E2);
    cv y = {fv_fmsub(z.r, w.r, fv_mul(z.i, w.i)), fv_fmadd(z.r, w.i, fv_mul(z.i, w.r))};
    cv_st(out + k * E2, y);
  }
}

static void cmul(const float *x, int64_t sx, const float *w, float *y, int64_t sy, int64_t n,
                 int conj_x, int conj_out, float scale) {
  int64_t j = 0;
  if (sx == 1 && sy == 1) {
    const fv sc = fv_set1(scale);
    for (; j + FV_W <= n; j += FV_W) {
      cv a, b;
      fv_ld_cplx(x + 2 * j, &a.r, &a.i);
      fv_ld_cplx(w + 2 * j, &b.r, &b.i);
      if (conj_x)
        a.i = fv_neg(a.i);
      fv re = fv_fmsub(a.r, b.r, fv_mul(a.i, b.i)), im = fv_fmadd(a.r, b.i, fv_mul(a.i, b.r));
      fv_st_cplx(y + 2 * j, fv_mul(re, sc), fv_mul(conj_out ? fv_neg(im) : im, sc));
    }
  }
  for (; j < n; j++) {
    float ar = x[2 * j * sx], ai = conj_x ? -x[2 * j * sx + 1] : x[2 * j * sx + 1];
    float re = ar * w[2 * j] - ai * w[2 * j + 1], im = ar * w[2 * j + 1] + ai * w[2 * j];
    y[2 * j * sy] = scale * re;
    y[2 * j * sy + 1] = scale * (conj_out ? -im : im);
  }
}

const emlx_cpu_fft_table FFT_CAT(emlx_cpu_fft, FFT_SUFFIX) = {
    .lanes = FV_W,
    .lane_exec = lane_exec,
    .gather_cols = gather_cols,
    .scatter_cols = scatter_cols,
    .gather_lanes = gather_lanes,
    .scatter_lanes = scatter_lanes,
    .gather_tiles = gather_tiles,
    .twiddle_cols = twiddle_cols,
    .cmul = cmul,
};
