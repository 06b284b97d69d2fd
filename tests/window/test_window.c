/* test_window.c — window_sum / max / min / product and window_scatter_max /
 * min against naive f64 references computed here: 1-D to 4-D, strides,
 * (asymmetric) padding, dilation, every real dtype, strided views, empty
 * inputs, windows wholly in the padding, ties and NaN, and the error cases. */
#include "test_util.h"

#define MAXR 6

typedef struct wspec {
  int r;
  int64_t shape[MAXR], w[MAXR], s[MAXR], lo[MAXR], hi[MAXR], d[MAXR];
} wspec;

static int64_t out_extent(const wspec *sp, int i) {
  int64_t eff = (sp->w[i] - 1) * sp->d[i] + 1, span = sp->shape[i] + sp->lo[i] + sp->hi[i];
  return span < eff ? 0 : (span - eff) / sp->s[i] + 1;
}

static double ident(emlx_window_op op, emlx_dtype dt) {
  switch (op) {
  case EMLX_WINDOW_SUM:
    return 0;
  case EMLX_WINDOW_PRODUCT:
    return 1;
  case EMLX_WINDOW_MAX:
    if (tu_is_float(dt))
      return -(double)INFINITY;
    switch (dt) {
    case EMLX_BOOL:
      return 0;
    case EMLX_INT8:
      return -128;
    case EMLX_INT16:
      return -32768;
    case EMLX_INT32:
      return -2147483648.0;
    case EMLX_INT64:
      return -9223372036854775808.0;
    default:
      return 0; /* unsigned */
    }
  default:
    if (tu_is_float(dt))
      return (double)INFINITY;
    switch (dt) {
    case EMLX_BOOL:
      return 1;
    case EMLX_INT8:
      return 127;
    case EMLX_UINT8:
      return 255;
    case EMLX_INT16:
      return 32767;
    case EMLX_UINT16:
      return 65535;
    case EMLX_INT32:
      return 2147483647.0;
    case EMLX_UINT32:
      return 4294967295.0;
    case EMLX_INT64:
      return 9223372036854775807.0; /* not exact: see test_reductions */
    default:
      return 0;
    }
  }
}

/* Reference reduction; returns the output size, fills oshape and ref. */
static int64_t ref_window(emlx_window_op op, emlx_dtype dt, const wspec *sp, const double *x,
                          int64_t *oshape, double **ref) {
  int r = sp->r;
  for (int i = 0; i < r; i++)
    oshape[i] = out_extent(sp, i);
  int64_t n = tu_numel(oshape, r);
  *ref = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  int64_t oc[MAXR], kc[MAXR], ic[MAXR];
  int64_t taps = tu_numel(sp->w, r);
  for (int64_t j = 0; j < n; j++) {
    tu_unravel(j, oshape, r, oc);
    double acc = ident(op, dt);
    for (int64_t t = 0; t < taps; t++) {
      tu_unravel(t, sp->w, r, kc);
      bool in = true;
      for (int i = 0; i < r; i++) {
        ic[i] = oc[i] * sp->s[i] + kc[i] * sp->d[i] - sp->lo[i];
        in = in && ic[i] >= 0 && ic[i] < sp->shape[i];
      }
      if (!in)
        continue;
      double v = x[tu_ravel(ic, sp->shape, r)];
      switch (op) {
      case EMLX_WINDOW_SUM:
        acc += v;
        break;
      case EMLX_WINDOW_PRODUCT:
        acc *= v;
        break;
      case EMLX_WINDOW_MAX:
        acc = (isnan(v) || isnan(acc)) ? (double)NAN : (v > acc ? v : acc);
        break;
      default:
        acc = (isnan(v) || isnan(acc)) ? (double)NAN : (v < acc ? v : acc);
        break;
      }
    }
    if (dt == EMLX_BOOL)
      acc = acc != 0;
    (*ref)[j] = acc;
  }
  return n;
}

static emlx_window_options opts_of(const wspec *sp) {
  return (emlx_window_options){
      .strides = sp->s, .padding_low = sp->lo, .padding_high = sp->hi, .window_dilations = sp->d};
}

/* The logical array x laid out so that it is not row-contiguous: a reversed-
 * axes base transposed back (views == 1), or a step-2 slice of a base twice
 * as long on axis 0 (views == 2). */
static emlx_array *make_view(emlx_dtype dt, const wspec *sp, const double *x, int views) {
  int r = sp->r;
  int64_t n = tu_numel(sp->shape, r), idx[MAXR], bidx[MAXR], bshape[MAXR];
  if (views == 0 || r == 0)
    return tu_make(dt, sp->shape, r, x);
  if (views == 1) {
    for (int i = 0; i < r; i++)
      bshape[i] = sp->shape[r - 1 - i];
    double *b = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    for (int64_t j = 0; j < n; j++) {
      tu_unravel(j, sp->shape, r, idx);
      for (int i = 0; i < r; i++)
        bidx[i] = idx[r - 1 - i];
      b[tu_ravel(bidx, bshape, r)] = x[j];
    }
    emlx_array *base = tu_make(dt, bshape, r, b);
    free(b);
    int axes[MAXR];
    for (int i = 0; i < r; i++)
      axes[i] = r - 1 - i;
    emlx_array *v = emlx_transpose(base, axes, r);
    emlx_release(base);
    return v;
  }
  memcpy(bshape, sp->shape, sizeof bshape);
  bshape[0] *= 2;
  int64_t bn = tu_numel(bshape, r);
  double *b = calloc((size_t)(bn > 0 ? bn : 1), sizeof(double));
  for (int64_t j = 0; j < n; j++) {
    tu_unravel(j, sp->shape, r, idx);
    memcpy(bidx, idx, sizeof bidx);
    bidx[0] = 2 * idx[0] + 1;
    b[tu_ravel(bidx, bshape, r)] = x[j];
  }
  emlx_array *base = tu_make(dt, bshape, r, b);
  free(b);
  int64_t st[MAXR] = {0}, sto[MAXR], str[MAXR];
  for (int i = 0; i < r; i++) {
    sto[i] = bshape[i];
    str[i] = 1;
  }
  st[0] = 1;
  str[0] = 2;
  emlx_array *v = emlx_slice(base, st, sto, str, r);
  emlx_release(base);
  return v;
}

static double rand_val(tu_rng *g, emlx_dtype dt, emlx_window_op op) {
  if (dt == EMLX_BOOL)
    return (double)tu_randint(g, 0, 1);
  if (!tu_is_float(dt)) {
    if (op == EMLX_WINDOW_PRODUCT)
      return (double)tu_randint(g, 1, 3);
    bool sgn = dt == EMLX_INT8 || dt == EMLX_INT16 || dt == EMLX_INT32 || dt == EMLX_INT64;
    return (double)tu_randint(g, sgn ? -9 : 0, 9);
  }
  if (op == EMLX_WINDOW_PRODUCT)
    return tu_quant(dt, tu_uniform(g, 0.5, 1.5));
  return tu_quant(dt, tu_uniform(g, -4, 4));
}

static void check_reduce(emlx_window_op op, emlx_dtype dt, const wspec *sp, int views,
                         const char *what) {
  static tu_rng g = {42};
  int64_t n = tu_numel(sp->shape, sp->r);
  double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  for (int64_t i = 0; i < n; i++)
    x[i] = rand_val(&g, dt, op);
  double *ref;
  int64_t oshape[MAXR];
  ref_window(op, dt, sp, x, oshape, &ref);
  emlx_array *a = make_view(dt, sp, x, views);
  emlx_window_options o = opts_of(sp);
  emlx_array *y = emlx_window_reduce(a, op, sp->w, sp->r, &o);
  char buf[160];
  snprintf(buf, sizeof buf, "%s op %d views %d", what, (int)op, views);
  tu_check_array(y, dt, oshape, sp->r, ref, 1, buf);
  emlx_release(y);
  emlx_release(a);
  free(ref);
  free(x);
}

static const wspec cases[] = {
    {1, {10}, {3}, {1}, {0}, {0}, {1}},
    {1, {11}, {4}, {3}, {2}, {1}, {2}},
    {2, {7, 9}, {2, 3}, {2, 1}, {1, 0}, {0, 2}, {1, 2}},
    {2, {5, 6}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {1, 1}},
    {3, {4, 5, 6}, {2, 2, 3}, {1, 2, 2}, {0, 1, 1}, {1, 0, 1}, {1, 1, 1}},
    /* NHWC pooling: the channels driver */
    {4, {2, 9, 8, 5}, {1, 3, 3, 1}, {1, 2, 2, 1}, {0, 1, 0, 0}, {0, 1, 2, 0}, {1, 1, 1, 1}},
    {4, {1, 6, 6, 300}, {1, 2, 3, 1}, {1, 2, 1, 1}, {0, 0, 1, 0}, {0, 0, 1, 0}, {1, 2, 1, 1}},
    /* more taps than the f32 folds take at once (36 > 32), windows partly
     * and wholly in padding, 40 channels */
    {3, {3, 4, 40}, {4, 9, 1}, {3, 1, 1}, {2, 4, 0}, {3, 4, 0}, {1, 1, 1}},
    /* NCHW pooling over the last axes, window larger than input + padding */
    {4, {2, 3, 4, 5}, {1, 1, 3, 3}, {1, 1, 2, 2}, {0, 0, 1, 1}, {0, 0, 1, 1}, {1, 1, 1, 1}},
    {2, {2, 2}, {3, 3}, {2, 2}, {3, 3}, {3, 3}, {1, 1}}, /* windows wholly in padding */
    {0, {0}, {0}, {0}, {0}, {0}, {0}},                   /* scalar */
    {2, {0, 4}, {1, 2}, {1, 1}, {0, 0}, {0, 0}, {1, 1}}, /* empty */
    {2, {0, 4}, {1, 2}, {1, 1}, {1, 0}, {1, 0}, {1, 1}}, /* empty, padded to non-empty */
};

static void test_reductions(void) {
  const emlx_dtype dts[] = {EMLX_FLOAT32, EMLX_FLOAT64, EMLX_FLOAT16, EMLX_BFLOAT16, EMLX_INT32,
                            EMLX_UINT8,   EMLX_INT8,    EMLX_INT64,   EMLX_UINT16,   EMLX_BOOL};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
      for (int op = 0; op < EMLX_WINDOW_OP_COUNT; op++)
        for (int v = 0; v < 3; v++) {
          if (v > 0 && (t > 1 || op > 1))
            continue; /* views on f32/f64 sum & max */
          /* INT64_MAX (min's identity, for windows wholly in padding) has no
           * double; those outputs are checked by test_semantics' int8 case. */
          if (dts[t] == EMLX_INT64 && op == EMLX_WINDOW_MIN && (c == 9 || c == 12))
            continue;
          char what[64];
          snprintf(what, sizeof what, "case %zu", c);
          check_reduce((emlx_window_op)op, dts[t], &cases[c], v, what);
        }
}

static void test_semantics(void) {
  /* NaN propagates through max and min; -inf identity in full padding. */
  double xv[5] = {1, (double)NAN, 3, -2, 5};
  emlx_array *a = tu_make1(EMLX_FLOAT32, 5, xv);
  int64_t w = 2, s = 2, lo = 0, hi = 3;
  emlx_window_options o = {.strides = &s, .padding_high = &hi, .padding_low = &lo};
  emlx_array *mx = emlx_window_max(a, &w, 1, &o), *mn = emlx_window_min(a, &w, 1, &o);
  int64_t osh = 4;
  double rmax[4] = {(double)NAN, 3, 5, -(double)INFINITY},
         rmin[4] = {(double)NAN, -2, 5, (double)INFINITY};
  tu_check_array(mx, EMLX_FLOAT32, &osh, 1, rmax, 0, "max NaN/identity");
  tu_check_array(mn, EMLX_FLOAT32, &osh, 1, rmin, 0, "min NaN/identity");
  emlx_release(mx);
  emlx_release(mn);
  emlx_release(a);
  /* The same through the channels driver (last axis untouched; f32 max and
   * min run in f32 there): NaN as the first and as the second tap. */
  double cv[15] = {1, (double)NAN, 1, (double)NAN, 1, 2, 3, 3, (double)NAN, -2, -2, -2, 5, 5, 5};
  emlx_array *a2 = tu_make(EMLX_FLOAT32, (int64_t[]){5, 3}, 2, cv);
  int64_t w2d[2] = {2, 1}, s2d[2] = {2, 1}, lo2d[2] = {0, 0}, hi2d[2] = {3, 0};
  emlx_window_options o2d = {.strides = s2d, .padding_high = hi2d, .padding_low = lo2d};
  emlx_array *mx2 = emlx_window_max(a2, w2d, 2, &o2d), *mn2 = emlx_window_min(a2, w2d, 2, &o2d);
  double nan = (double)NAN, inf = (double)INFINITY;
  double rmax2[12] = {nan, nan, 2, 3, 3, nan, 5, 5, 5, -inf, -inf, -inf};
  double rmin2[12] = {nan, nan, 1, -2, -2, nan, 5, 5, 5, inf, inf, inf};
  int64_t osh2d[2] = {4, 3};
  tu_check_array(mx2, EMLX_FLOAT32, osh2d, 2, rmax2, 0, "max NaN/identity, channels");
  tu_check_array(mn2, EMLX_FLOAT32, osh2d, 2, rmin2, 0, "min NaN/identity, channels");
  emlx_release(mx2);
  emlx_release(mn2);
  emlx_release(a2);
  /* The same pattern over 70 channels (channel c follows column c % 3), so
   * the vector folds' full blocks, masked and scalar tails all see NaN as
   * the first and the second tap; and ties of +0 and -0 keep the first. */
  enum { WC = 70 };
  double wv[5 * WC], rmaxw[4 * WC], rminw[4 * WC];
  for (int r = 0; r < 5; r++)
    for (int c = 0; c < WC; c++)
      wv[r * WC + c] = cv[r * 3 + c % 3];
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < WC; c++)
      rmaxw[r * WC + c] = rmax2[r * 3 + c % 3], rminw[r * WC + c] = rmin2[r * 3 + c % 3];
  wv[69] = 0.0, wv[WC + 69] = -0.0; /* rows 0, 1 of channel 69: +0 then -0 */
  rmaxw[69] = rminw[69] = 0.0;
  wv[2 * WC + 68] = -0.0, wv[3 * WC + 68] = 0.0; /* rows 2, 3 of channel 68: -0 then +0 */
  rmaxw[WC + 68] = rminw[WC + 68] = -0.0;
  emlx_array *aw = tu_make(EMLX_FLOAT32, (int64_t[]){5, WC}, 2, wv);
  emlx_array *mxw = emlx_window_max(aw, w2d, 2, &o2d), *mnw = emlx_window_min(aw, w2d, 2, &o2d);
  int64_t oshw[2] = {4, WC};
  tu_check_array(mxw, EMLX_FLOAT32, oshw, 2, rmaxw, 0, "max NaN/identity, 70 channels");
  tu_check_array(mnw, EMLX_FLOAT32, oshw, 2, rminw, 0, "min NaN/identity, 70 channels");
  float got[2][4 * WC];
  if (emlx_to_blob(mxw, got[0], sizeof got[0]) == 0 &&
      emlx_to_blob(mnw, got[1], sizeof got[1]) == 0)
    for (int k = 0; k < 2; k++) {
      CHECK_MSG(!signbit(got[k][69]), "%s: +0 then -0 keeps +0", k ? "min" : "max");
      CHECK_MSG(signbit(got[k][WC + 68]), "%s: -0 then +0 keeps -0", k ? "min" : "max");
    }
  emlx_release(mxw);
  emlx_release(mnw);
  emlx_release(aw);
  /* integer sums wrap; int max identity is the dtype minimum */
  double iv[3] = {100, 100, -128};
  emlx_array *b = tu_make1(EMLX_INT8, 3, iv);
  int64_t w2 = 2, lo2 = 1, hi2 = 1;
  emlx_window_options o2 = {.padding_low = &lo2, .padding_high = &hi2};
  emlx_array *sm = emlx_window_sum(b, &w2, 1, &o2);
  double rs[4] = {100, -56, -28, -128};
  int64_t osh2 = 4;
  tu_check_array(sm, EMLX_INT8, &osh2, 1, rs, 0, "int8 sum wraps");
  emlx_release(sm);
  emlx_release(b);
}

static void test_errors(void) {
  double xv[6] = {0};
  int64_t sh[2] = {2, 3}, w[2] = {1, 2}, bad0[2] = {0, 1}, neg[2] = {-1, 0};
  emlx_array *a = tu_make(EMLX_FLOAT32, sh, 2, xv);
  CHECK_NULL_ERR(emlx_window_sum(NULL, w, 2, NULL));
  CHECK_NULL_ERR(emlx_window_sum(a, NULL, 2, NULL));
  CHECK_NULL_ERR(emlx_window_sum(a, w, 1, NULL));
  CHECK_NULL_ERR(emlx_window_sum(a, w, -1, NULL));
  CHECK_NULL_ERR(emlx_window_max(a, bad0, 2, NULL));
  emlx_window_options o = {.strides = bad0};
  CHECK_NULL_ERR(emlx_window_min(a, w, 2, &o));
  o = (emlx_window_options){.window_dilations = bad0};
  CHECK_NULL_ERR(emlx_window_product(a, w, 2, &o));
  o = (emlx_window_options){.padding_low = neg};
  CHECK_NULL_ERR(emlx_window_sum(a, w, 2, &o));
  CHECK_NULL_ERR(emlx_window_reduce(a, (emlx_window_op)9, w, 2, NULL));
  emlx_array *c = emlx_astype(a, EMLX_COMPLEX64);
  CHECK_NULL_ERR(emlx_window_sum(c, w, 2, NULL));
  /* scatter errors */
  int64_t ssh[2] = {2, 2};
  emlx_array *src = tu_make(EMLX_FLOAT32, ssh, 2, xv), *bad = tu_make(EMLX_FLOAT32, sh, 2, xv);
  emlx_array *init = tu_make(EMLX_FLOAT32, NULL, 0, xv), *init2 = tu_make1(EMLX_FLOAT32, 2, xv);
  CHECK_NOT_NULL(src);
  emlx_array *ok = emlx_window_scatter_max(a, src, init, w, 2, NULL);
  CHECK_NOT_NULL(ok);
  emlx_release(ok);
  CHECK_NULL_ERR(emlx_window_scatter_max(a, bad, init, w, 2, NULL));
  CHECK_NULL_ERR(emlx_window_scatter_max(a, src, init2, w, 2, NULL));
  CHECK_NULL_ERR(emlx_window_scatter_min(NULL, src, init, w, 2, NULL));
  CHECK_NULL_ERR(emlx_window_scatter_min(a, NULL, init, w, 2, NULL));
  CHECK_NULL_ERR(emlx_window_scatter_min(a, src, NULL, w, 2, NULL));
  CHECK_NULL_ERR(emlx_window_scatter_min(a, src, init, w, 1, NULL));
  emlx_release(src);
  emlx_release(bad);
  emlx_release(init);
  emlx_release(init2);
  emlx_release(c);
  emlx_release(a);
}

/* ---- scatter ---------------------------------------------------------------- */

static void ref_scatter(bool is_max, const wspec *sp, const double *x, const double *src,
                        double init, double *ref) {
  int r = sp->r;
  int64_t n = tu_numel(sp->shape, r), oshape[MAXR], oc[MAXR], kc[MAXR], ic[MAXR];
  for (int64_t i = 0; i < n; i++)
    ref[i] = init;
  for (int i = 0; i < r; i++)
    oshape[i] = out_extent(sp, i);
  int64_t no = tu_numel(oshape, r), taps = tu_numel(sp->w, r);
  for (int64_t j = 0; j < no; j++) {
    tu_unravel(j, oshape, r, oc);
    int64_t best = -1;
    for (int64_t t = 0; t < taps; t++) {
      tu_unravel(t, sp->w, r, kc);
      bool in = true;
      for (int i = 0; i < r; i++) {
        ic[i] = oc[i] * sp->s[i] + kc[i] * sp->d[i] - sp->lo[i];
        in = in && ic[i] >= 0 && ic[i] < sp->shape[i];
      }
      if (!in)
        continue;
      int64_t p = tu_ravel(ic, sp->shape, r);
      if (best < 0) {
        best = p;
        continue;
      }
      double v = x[p], b = x[best];
      if (isnan(b))
        continue;
      if (isnan(v) || (is_max ? v > b : v < b))
        best = p;
    }
    if (best >= 0)
      ref[best] += src[j];
  }
}

static void check_scatter(bool is_max, emlx_dtype dt, const wspec *sp, int views, bool ties) {
  static tu_rng g = {7};
  int r = sp->r;
  int64_t n = tu_numel(sp->shape, r), oshape[MAXR];
  for (int i = 0; i < r; i++)
    oshape[i] = out_extent(sp, i);
  int64_t no = tu_numel(oshape, r);
  double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  double *s = malloc((size_t)(no > 0 ? no : 1) * sizeof(double));
  double *ref = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  for (int64_t i = 0; i < n; i++)
    x[i] = ties ? (double)tu_randint(&g, 0, 2) : rand_val(&g, dt, EMLX_WINDOW_SUM);
  for (int64_t i = 0; i < no; i++)
    s[i] = (double)tu_randint(&g, 1, 5);
  double init = 0.5 * (tu_is_float(dt) ? 1 : 0) + 2;
  ref_scatter(is_max, sp, x, s, init, ref);
  emlx_array *a = make_view(dt, sp, x, views), *sa = tu_make(dt, oshape, r, s);
  emlx_array *ia = tu_make(dt, NULL, 0, &init);
  emlx_window_options o = opts_of(sp);
  emlx_array *y = is_max ? emlx_window_scatter_max(a, sa, ia, sp->w, r, &o)
                         : emlx_window_scatter_min(a, sa, ia, sp->w, r, &o);
  char what[96];
  snprintf(what, sizeof what, "scatter %s r%d views %d ties %d", is_max ? "max" : "min", r, views,
           ties);
  tu_check_array(y, dt, sp->shape, r, ref, 1, what);
  emlx_release(y);
  emlx_release(a);
  emlx_release(sa);
  emlx_release(ia);
  free(x);
  free(s);
  free(ref);
}

static void test_scatter(void) {
  const emlx_dtype dts[] = {EMLX_FLOAT32, EMLX_FLOAT64, EMLX_BFLOAT16,
                            EMLX_INT32,   EMLX_UINT8,   EMLX_INT8};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
      for (int m = 0; m < 2; m++) {
        check_scatter(m == 0, dts[t], &cases[c], 0, false);
        check_scatter(m == 0, dts[t], &cases[c], 0, true);
        if (t == 0) {
          check_scatter(m == 0, dts[t], &cases[c], 1, true);
          check_scatter(m == 0, dts[t], &cases[c], 2, false);
        }
      }
  /* Nx's doc example: window_scatter_max */
  double xv[] = {7, 2, 5, 3, 10, 2, 3, 8, 9, 3, 4, 2, 1, 5, 7, 5, 6, 1, 0, 6, 2, 7, 2, 8};
  double sv[] = {2, 6, 3, 1};
  int64_t sh[2] = {4, 6}, ssh[2] = {2, 2}, w[2] = {2, 3}, st[2] = {2, 3};
  double zero = 0;
  emlx_array *a = tu_make(EMLX_INT64, sh, 2, xv), *s = tu_make(EMLX_INT64, ssh, 2, sv);
  emlx_array *z = tu_make(EMLX_INT64, NULL, 0, &zero);
  emlx_window_options o = {.strides = st};
  emlx_array *y = emlx_window_scatter_max(a, s, z, w, 2, &o);
  double want[] = {0, 0, 0, 0, 6, 0, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  tu_check_array(y, EMLX_INT64, sh, 2, want, 0, "Nx window_scatter_max example");
  emlx_release(y);
  emlx_release(a);
  emlx_release(s);
  emlx_release(z);
}

int main(void) {
  test_reductions();
  test_semantics();
  test_errors();
  test_scatter();
  return tu_finish();
}
