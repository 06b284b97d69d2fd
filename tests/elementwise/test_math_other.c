/* test_math_other.c — where, clip, isclose and allclose against references
 * computed here: every dtype, three-way broadcasting, strided inputs
 * (transposed and sliced), empty inputs, the promotion of mixed dtypes,
 * NaN handling (clip propagates it; isclose with and without equal_nan;
 * infinities), bounds given as NULL, complex64, and every error case. All
 * results are exact. The program also reruns itself under EMLX_ISA=scalar
 * and avx2. */
#include "math_test_util.h"

static const emlx_dtype every[14] = {EMLX_BOOL,     EMLX_UINT8,    EMLX_UINT16,  EMLX_UINT32,
                                     EMLX_UINT64,   EMLX_INT8,     EMLX_INT16,   EMLX_INT32,
                                     EMLX_INT64,    EMLX_FLOAT16,  EMLX_FLOAT32, EMLX_FLOAT64,
                                     EMLX_BFLOAT16, EMLX_COMPLEX64};

static double value_for(emlx_dtype d, tu_rng *r) {
  if (d == EMLX_BOOL)
    return (double)tu_randint(r, 0, 1);
  if (d >= EMLX_UINT8 && d <= EMLX_UINT64)
    return (double)tu_randint(r, 0, 50);
  if (d >= EMLX_INT8 && d <= EMLX_INT64)
    return (double)tu_randint(r, -50, 50);
  return floor(tu_uniform(r, -50, 50) * 4) / 4;
}

/* ---- where ------------------------------------------------------------------------------- */
static void test_where(void) {
  /* cond [R, 1] (int32: converted to bool), x [R, C] transposed, y [C]. */
  for (int k = 0; k < 14; k++) {
    emlx_dtype d = every[k];
    tu_rng r = {300 + (uint64_t)k};
    double c[MT_R], x[MT_N], y[MT_C], ref[MT_N];
    for (int i = 0; i < MT_R; i++)
      c[i] = (double)tu_randint(&r, -1, 1);
    for (int i = 0; i < MT_N; i++)
      x[i] = value_for(d, &r);
    for (int i = 0; i < MT_C; i++)
      y[i] = value_for(d, &r);
    for (int i = 0; i < MT_R; i++)
      for (int j = 0; j < MT_C; j++)
        ref[i * MT_C + j] = tu_quant(d, c[i] != 0 ? x[i * MT_C + j] : y[j]);
    int64_t sc[2] = {MT_R, 1}, sy[1] = {MT_C}, sh[2] = {MT_R, MT_C};
    emlx_array *ca = tu_make(EMLX_INT32, sc, 2, c), *xa = mt_transposed(d, x, MT_R, MT_C);
    emlx_array *ya = tu_make(d, sy, 1, y);
    emlx_array *w = emlx_where(ca, xa, ya);
    tu_check_array(w, d, sh, 2, ref, 0, "where");
    emlx_release(w);
    /* sliced x, contiguous everything else */
    emlx_array *xs = mt_sliced(d, x, MT_R, MT_C);
    emlx_array *cb = emlx_broadcast_to(ca, sh, 2);
    w = emlx_where(cb, xs, ya);
    tu_check_array(w, d, sh, 2, ref, 0, "where sliced");
    emlx_release(w);
    emlx_release(cb);
    emlx_release(xs);
    emlx_release(ca);
    emlx_release(xa);
    emlx_release(ya);
  }
  /* Promotion: int8 x with float32 y gives float32; NaN cond is true. */
  double c[3] = {NAN, 0, 1}, x[3] = {1, 2, 3}, y[3] = {1.5, 2.5, 3.5}, ref[3] = {1, 2.5, 3};
  int64_t n3 = 3;
  emlx_array *ca = tu_make1(EMLX_FLOAT32, 3, c), *xa = tu_make1(EMLX_INT8, 3, x);
  emlx_array *ya = tu_make1(EMLX_FLOAT32, 3, y);
  emlx_array *w = emlx_where(ca, xa, ya);
  tu_check_array(w, EMLX_FLOAT32, &n3, 1, ref, 0, "where promotes");
  emlx_release(w);
  /* Empty. */
  int64_t she[2] = {0, 3};
  emlx_array *e = tu_make(EMLX_BOOL, she, 2, NULL);
  w = emlx_where(e, xa, ya);
  tu_check_array(w, EMLX_FLOAT32, she, 2, NULL, 0, "where empty");
  emlx_release(w);
  emlx_release(e);
  /* Errors. */
  double four[4] = {0};
  emlx_array *bad = tu_make1(EMLX_FLOAT32, 4, four);
  CHECK_NULL_ERR(emlx_where(NULL, xa, ya));
  CHECK_NULL_ERR(emlx_where(ca, NULL, ya));
  CHECK_NULL_ERR(emlx_where(ca, xa, NULL));
  CHECK_NULL_ERR(emlx_where(bad, xa, ya));
  CHECK_NULL_ERR(emlx_where(ca, bad, ya));
  emlx_release(bad);
  emlx_release(ca);
  emlx_release(xa);
  emlx_release(ya);
}

/* ---- clip -------------------------------------------------------------------------------- */
static double clip_ref(double a, double lo, double hi) {
  if (isnan(a) || isnan(lo) || isnan(hi))
    return NAN;
  double m = a > lo ? a : lo;
  return m < hi ? m : hi;
}

static void test_clip(void) {
  for (int k = 1; k < 13; k++) { /* every real dtype but bool */
    emlx_dtype d = every[k];
    tu_rng r = {400 + (uint64_t)k};
    double a[MT_N], lo[MT_C], hi[MT_R], ref[MT_N], rlo[MT_N], rhi[MT_N];
    for (int i = 0; i < MT_N; i++)
      a[i] = value_for(d, &r);
    for (int i = 0; i < MT_C; i++)
      lo[i] = value_for(d, &r) / 2;
    for (int i = 0; i < MT_R; i++)
      hi[i] = value_for(d, &r);
    if (tu_is_float(d)) {
      a[5] = NAN;
      lo[3] = NAN;
    }
    for (int i = 0; i < MT_R; i++)
      for (int j = 0; j < MT_C; j++) {
        double qa = tu_quant(d, a[i * MT_C + j]), ql = tu_quant(d, lo[j]), qh = tu_quant(d, hi[i]);
        ref[i * MT_C + j] = clip_ref(qa, ql, qh);
        rlo[i * MT_C + j] = clip_ref(qa, ql, (double)INFINITY);
        rhi[i * MT_C + j] = clip_ref(qa, -(double)INFINITY, qh);
      }
    int64_t sl[1] = {MT_C}, shh[2] = {MT_R, 1}, sh[2] = {MT_R, MT_C};
    emlx_array *aa = mt_transposed(d, a, MT_R, MT_C), *la = tu_make(d, sl, 1, lo);
    emlx_array *ha = tu_make(d, shh, 2, hi);
    emlx_array *c = emlx_clip(aa, la, ha);
    tu_check_array(c, d, sh, 2, ref, 0, "clip");
    emlx_release(c);
    c = emlx_clip(aa, la, NULL);
    tu_check_array(c, d, sh, 2, rlo, 0, "clip lower only");
    emlx_release(c);
    c = emlx_clip(aa, NULL, ha);
    tu_check_array(c, d, sh, 2, rhi, 0, "clip upper only");
    emlx_release(c);
    emlx_release(aa);
    emlx_release(la);
    emlx_release(ha);
  }
  /* lo > hi gives hi; scalar bounds; promotion int8 with a float32 bound. */
  double a[4] = {-3, 0, 5, 9}, ref[4] = {-1.5, 0, 2, 2}, rlh[4] = {1, 1, 1, 1};
  double lo = -1.5, hi = 2, big = 4;
  int64_t n4 = 4;
  emlx_array *aa = tu_make1(EMLX_INT8, 4, a), *la = tu_make(EMLX_FLOAT32, NULL, 0, &lo);
  emlx_array *ha = tu_make(EMLX_INT32, NULL, 0, &hi), *ba = tu_make(EMLX_INT32, NULL, 0, &big);
  emlx_array *c = emlx_clip(aa, la, ha);
  tu_check_array(c, EMLX_FLOAT32, &n4, 1, ref, 0, "clip promotes to float32");
  emlx_release(c);
  double one = 1;
  emlx_array *oa = tu_make(EMLX_INT8, NULL, 0, &one);
  c = emlx_clip(aa, ba, oa); /* lo 4 > hi 1 */
  tu_check_array(c, EMLX_INT32, &n4, 1, rlh, 0, "clip with lo > hi");
  emlx_release(c);
  /* complex64: lexicographic. */
  float pc[4] = {1, 5, 3, -1}, plo[2] = {1, 0}, phi[2] = {2, 0};
  int64_t two = 2, one64 = 1;
  emlx_array *cc = emlx_from_blob(pc, EMLX_COMPLEX64, &two, 1, EMLX_CPU);
  emlx_array *cl = emlx_from_blob(plo, EMLX_COMPLEX64, &one64, 1, EMLX_CPU);
  emlx_array *ch = emlx_from_blob(phi, EMLX_COMPLEX64, &one64, 1, EMLX_CPU);
  c = emlx_clip(cc, cl, ch);
  float got[4];
  CHECK(c && emlx_to_blob(c, got, sizeof got) == 0 && got[0] == 1 && got[1] == 5 && got[2] == 2 &&
        got[3] == 0);
  emlx_release(c);
  /* Empty; errors. */
  int64_t she[2] = {0, 2};
  emlx_array *e = tu_make(EMLX_FLOAT32, she, 2, NULL);
  c = emlx_clip(e, la, ha);
  tu_check_array(c, EMLX_FLOAT32, she, 2, NULL, 0, "clip empty");
  emlx_release(c);
  emlx_release(e);
  double three[3] = {0};
  emlx_array *bad = tu_make1(EMLX_INT32, 3, three);
  CHECK_NULL_ERR(emlx_clip(aa, NULL, NULL));
  CHECK_NULL_ERR(emlx_clip(NULL, la, ha));
  CHECK_NULL_ERR(emlx_clip(aa, bad, ha));
  CHECK_NULL_ERR(emlx_clip(aa, la, bad));
  emlx_release(bad);
  emlx_release(cc);
  emlx_release(cl);
  emlx_release(ch);
  emlx_release(oa);
  emlx_release(aa);
  emlx_release(la);
  emlx_release(ha);
  emlx_release(ba);
}

/* ---- isclose / allclose -----------------------------------------------------------------------
 */
static double close_ref(double a, double b, double rtol, double atol, bool equal_nan) {
  if (isnan(a) || isnan(b))
    return equal_nan && isnan(a) && isnan(b);
  if (isinf(a) || isinf(b))
    return a == b;
  return fabs(a - b) <= atol + rtol * fabs(b);
}

static void test_isclose(void) {
  for (int k = 0; k < 13; k++) {
    emlx_dtype d = every[k];
    tu_rng r = {500 + (uint64_t)k};
    double a[MT_N], b[MT_C], ref[MT_N], refn[MT_N];
    for (int i = 0; i < MT_N; i++)
      a[i] = value_for(d, &r);
    for (int j = 0; j < MT_C; j++)
      b[j] = tu_quant(d, a[j] + (tu_is_float(d) ? tu_uniform(&r, -0.3, 0.3) : 0));
    b[1] = tu_quant(d, a[1] + 1); /* one clear miss in row 0 */
    if (tu_is_float(d)) {
      a[2] = b[2] = NAN;
      a[3] = INFINITY;
      b[3] = INFINITY;
      a[4] = -INFINITY;
      b[4] = INFINITY;
      a[6] = NAN;
    }
    double rtol = 0.01, atol = 0.1;
    for (int i = 0; i < MT_N; i++) {
      double qa = tu_quant(d, a[i]), qb = tu_quant(d, b[i % MT_C]);
      ref[i] = close_ref(qa, qb, rtol, atol, false);
      refn[i] = close_ref(qa, qb, rtol, atol, true);
    }
    int64_t sh[2] = {MT_R, MT_C}, sb[1] = {MT_C};
    emlx_array *aa = mt_sliced(d, a, MT_R, MT_C), *ba = tu_make(d, sb, 1, b);
    emlx_array *c = emlx_isclose(aa, ba, rtol, atol, false);
    tu_check_array(c, EMLX_BOOL, sh, 2, ref, 0, "isclose");
    emlx_release(c);
    c = emlx_isclose(aa, ba, rtol, atol, true);
    tu_check_array(c, EMLX_BOOL, sh, 2, refn, 0, "isclose equal_nan");
    emlx_release(c);
    bool all = true;
    for (int i = 0; i < MT_N; i++)
      all = all && ref[i] != 0;
    double ra = all;
    c = emlx_allclose(aa, ba, rtol, atol, false);
    tu_check_array(c, EMLX_BOOL, NULL, 0, &ra, 0, "allclose");
    emlx_release(c);
    c = emlx_allclose(aa, aa, 0, 0, true);
    double yes = 1;
    tu_check_array(c, EMLX_BOOL, NULL, 0, &yes, 0, "allclose with itself");
    emlx_release(c);
    emlx_release(aa);
    emlx_release(ba);
  }
  /* complex: magnitudes of a - b and b. */
  float pa[4] = {1, 1, 0, 1}, pb[4] = {1, 1.05f, 0, 2};
  int64_t two = 2;
  emlx_array *ca = emlx_from_blob(pa, EMLX_COMPLEX64, &two, 1, EMLX_CPU);
  emlx_array *cb = emlx_from_blob(pb, EMLX_COMPLEX64, &two, 1, EMLX_CPU);
  emlx_array *c = emlx_isclose(ca, cb, 0.1, 0, false);
  double rc[2] = {1, 0};
  tu_check_array(c, EMLX_BOOL, &two, 1, rc, 0, "isclose complex");
  emlx_release(c);
  /* Empty: isclose is empty, allclose is true. */
  int64_t she[1] = {0};
  emlx_array *e = tu_make(EMLX_FLOAT32, she, 1, NULL);
  c = emlx_isclose(e, e, 1e-5, 1e-8, false);
  tu_check_array(c, EMLX_BOOL, she, 1, NULL, 0, "isclose empty");
  emlx_release(c);
  c = emlx_allclose(e, e, 1e-5, 1e-8, false);
  double yes = 1;
  tu_check_array(c, EMLX_BOOL, NULL, 0, &yes, 0, "allclose empty");
  emlx_release(c);
  /* Errors. */
  CHECK_NULL_ERR(emlx_isclose(NULL, e, 1e-5, 1e-8, false));
  CHECK_NULL_ERR(emlx_isclose(e, NULL, 1e-5, 1e-8, false));
  CHECK_NULL_ERR(emlx_isclose(e, e, -1, 1e-8, false));
  CHECK_NULL_ERR(emlx_isclose(e, e, 1e-5, NAN, false));
  CHECK_NULL_ERR(emlx_allclose(e, e, INFINITY, 0, false));
  CHECK_NULL_ERR(emlx_isclose(ca, e, 1e-5, 1e-8, false)); /* [2] vs [0] */
  CHECK_NULL_ERR(emlx_allclose(NULL, e, 1e-5, 1e-8, false));
  emlx_release(e);
  emlx_release(ca);
  emlx_release(cb);
}

int main(void) {
  tu_run_isa_variants();
  test_where();
  test_clip();
  test_isclose();
  return tu_finish();
}
