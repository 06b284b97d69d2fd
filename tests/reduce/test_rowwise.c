/* test_rowwise.c — mean, var, std, logsumexp, softmax and log_softmax (the
 * fused ROW_REDUCE / ROW_SOFTMAX kernels) against references computed here
 * in f64 from the values the test chose: every float dtype and integer /
 * bool inputs, every subset of axes (negative, none, all), keep_dims,
 * ddof (numpy's inf / NaN for ddof >= n), transposed / stepped / reversed /
 * broadcast / empty inputs, rows long enough to be cut into parallel
 * pieces, NaN / inf / -inf rows and values large enough to overflow a
 * naive exp, and the error cases. Runs again at every ISA level. */
#include "test_util.h"

enum { OP_MEAN, OP_VAR, OP_STD, OP_LSE, OP_SOFTMAX, OP_LOGSM, OP_COUNT };
static const char *const op_name[OP_COUNT] = {"mean",      "var",     "std",
                                              "logsumexp", "softmax", "log_softmax"};

static emlx_array *run(int op, emlx_array *a, const int *axes, int naxes, bool keep, int ddof) {
  switch (op) {
  case OP_MEAN:
    return emlx_mean(a, axes, naxes, keep);
  case OP_VAR:
    return emlx_var(a, axes, naxes, keep, ddof);
  case OP_STD:
    return emlx_std(a, axes, naxes, keep, ddof);
  case OP_LSE:
    return emlx_logsumexp(a, axes, naxes, keep);
  case OP_SOFTMAX:
    return emlx_softmax(a, axes, naxes, false);
  default:
    return emlx_log_softmax(a, axes, naxes, true);
  }
}

/* ---- the f64 reference -------------------------------------------------------- */
/* The statistic of one row of n values. */
static double ref_stat(int op, const double *x, int64_t n, int ddof) {
  if (op == OP_MEAN || op == OP_VAR || op == OP_STD) {
    long double s = 0;
    for (int64_t i = 0; i < n; i++)
      s += x[i];
    long double mean = s / (long double)n;
    if (op == OP_MEAN)
      return (double)mean;
    long double q = 0;
    for (int64_t i = 0; i < n; i++)
      q += (x[i] - mean) * (x[i] - mean);
    long double d = (long double)n - ddof;
    long double v = q / (d > 0 ? d : 0.0L);
    return op == OP_STD ? (double)sqrtl(v) : (double)v;
  }
  double m = -INFINITY;
  for (int64_t i = 0; i < n; i++) {
    if (isnan(x[i]))
      return NAN;
    m = x[i] > m ? x[i] : m;
  }
  if (isinf(m))
    return m;
  long double s = 0;
  for (int64_t i = 0; i < n; i++)
    s += expl((long double)x[i] - m);
  return (double)(m + logl(s));
}

/* References for op over the axes (mask) of x (shape, nd): ref gets one value
 * per output element, in the output's row-major order (for softmax: x's). */
static void ref_op(int op, const double *x, const int64_t *shape, int nd, const bool *mask,
                   int ddof, double *ref) {
  int64_t n = tu_numel(shape, nd), rowlen = 1, nrows = 1;
  int64_t kshape[16], rshape[16];
  int nk = 0, nr = 0;
  for (int d = 0; d < nd; d++) {
    if (mask[d])
      rshape[nr++] = shape[d], rowlen *= shape[d];
    else
      kshape[nk++] = shape[d], nrows *= shape[d];
  }
  double *rows = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  int64_t *where = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  for (int64_t i = 0; i < n; i++) {
    int64_t idx[16], ki[16], ri[16];
    tu_unravel(i, shape, nd, idx);
    int a = 0, b = 0;
    for (int d = 0; d < nd; d++) {
      if (mask[d])
        ri[b++] = idx[d];
      else
        ki[a++] = idx[d];
    }
    int64_t k = tu_ravel(ki, kshape, nk), r = tu_ravel(ri, rshape, nr);
    rows[k * rowlen + r] = x[i];
    where[i] = k * rowlen + r;
  }
  if (op == OP_SOFTMAX || op == OP_LOGSM) {
    double *lse = malloc((size_t)(nrows > 0 ? nrows : 1) * sizeof(double));
    double *mx = malloc((size_t)(nrows > 0 ? nrows : 1) * sizeof(double));
    for (int64_t k = 0; k < nrows; k++) {
      const double *row = rows + k * rowlen;
      lse[k] = ref_stat(OP_LSE, row, rowlen, 0);
      mx[k] = -INFINITY;
      for (int64_t j = 0; j < rowlen; j++)
        mx[k] = row[j] > mx[k] ? row[j] : mx[k];
    }
    for (int64_t i = 0; i < n; i++) {
      int64_t k = where[i] / rowlen;
      if (isnan(lse[k]) || isinf(mx[k]))
        ref[i] = NAN;
      else
        ref[i] = op == OP_SOFTMAX ? (double)expl((long double)x[i] - lse[k]) : x[i] - lse[k];
    }
    free(lse);
    free(mx);
  } else {
    for (int64_t k = 0; k < nrows; k++)
      ref[k] = ref_stat(op, rows + k * rowlen, rowlen, ddof);
  }
  free(rows);
  free(where);
}

/* |got - ref| <= rel * |ref| + abs_tol, NaN matches NaN, inf matches inf. */
static bool close_at(const double *got, const double *ref, int64_t n, double rel, double abs_tol,
                     const char *what, int line) {
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) {
    bool ok = isnan(ref[i])   ? isnan(got[i])
              : isinf(ref[i]) ? got[i] == ref[i]
                              : fabs(got[i] - ref[i]) <= rel * fabs(ref[i]) + abs_tol;
    if (!ok && bad++ < 4)
      fprintf(stderr, "%s:%d: %s element %" PRId64 ": got %.17g want %.17g\n", __FILE__, line, what,
              i, got[i], ref[i]);
  }
  return tu_record(bad == 0, __FILE__, line, "%s: %" PRId64 " of %" PRId64 " differ", what, bad, n);
}

/* Tolerances per op and dtype: stats are one rounding of an f64 result;
 * softmax's x - max is rounded in f32, so its error grows with |x - max|
 * (inputs here lie within 8 of each other). */
static void tol(int op, emlx_dtype d, double *rel, double *abs_tol) {
  double u = d == EMLX_FLOAT64    ? 0x1p-52
             : d == EMLX_FLOAT16  ? 0x1p-10
             : d == EMLX_BFLOAT16 ? 0x1p-7
                                  : 0x1p-23;
  bool low = d == EMLX_FLOAT16 || d == EMLX_BFLOAT16;
  *abs_tol = 0;
  if (op <= OP_STD) {
    *rel = d == EMLX_FLOAT64 ? 1e-12 : 1.01 * u; /* f64: the f64 sums' own error */
    *abs_tol = d == EMLX_FLOAT64 ? 1e-15 : 0;    /* var of equal values: 0 */
  } else if (op == OP_SOFTMAX) {
    *rel = low ? 1.01 * u : d == EMLX_FLOAT64 ? 1e-12 : 24 * u;
  } else {
    *rel = low ? 1.01 * u : 64 * u;
    *abs_tol = low ? 0 : (d == EMLX_FLOAT64 ? 1e-14 : 4e-6);
  }
}

static void out_shape(int op, const int64_t *shape, int nd, const bool *mask, bool keep,
                      int64_t *os, int *ond) {
  int k = 0;
  for (int d = 0; d < nd; d++) {
    if (op >= OP_SOFTMAX || !mask[d])
      os[k++] = shape[d];
    else if (keep)
      os[k++] = 1;
  }
  *ond = k;
}

/* One op on a (whose logical values are x, in x's dtype-quantised form). */
static void check_case(int op, emlx_array *a, const double *x, const int *axes, int naxes,
                       bool keep, int ddof, const char *what) {
  int nd = emlx_ndim(a);
  const int64_t *shape = emlx_shape(a);
  bool mask[16] = {false};
  if (!axes)
    for (int d = 0; d < nd; d++)
      mask[d] = true;
  for (int i = 0; axes && i < naxes; i++)
    mask[axes[i] < 0 ? axes[i] + nd : axes[i]] = true;
  int64_t os[16];
  int ond;
  out_shape(op, shape, nd, mask, keep, os, &ond);
  emlx_dtype in = emlx_array_dtype(a);
  emlx_dtype want =
      (in == EMLX_FLOAT16 || in == EMLX_BFLOAT16 || in == EMLX_FLOAT32 || in == EMLX_FLOAT64)
          ? in
          : EMLX_FLOAT32;
  int64_t on = tu_numel(os, ond);
  double *ref = malloc((size_t)(on > 0 ? on : 1) * sizeof(double));
  ref_op(op, x, shape, nd, mask, ddof, ref);
  for (int64_t i = 0; i < on; i++)
    ref[i] = tu_quant(want, ref[i]);
  emlx_array *r = run(op, a, axes, naxes, keep, ddof);
  char msg[160];
  snprintf(msg, sizeof msg, "%s %s of %s (ddof %d, keep %d)", op_name[op], what, tu_dname(in), ddof,
           keep);
  bool ok = CHECK_MSG(r != NULL, "%s: built", msg);
  ok = ok && CHECK_MSG(emlx_array_dtype(r) == want, "%s: dtype %s", msg, tu_dname(want));
  ok = ok && CHECK_MSG(emlx_ndim(r) == ond, "%s: rank %d (got %d)", msg, ond, emlx_ndim(r));
  for (int d = 0; ok && d < ond; d++)
    ok = CHECK_MSG(emlx_shape(r)[d] == os[d], "%s: dim %d", msg, d);
  if (ok) {
    double *got = tu_read(r);
    double rel, at;
    tol(op, want, &rel, &at);
    if (got)
      close_at(got, ref, on, rel, at, msg, __LINE__);
    free(got);
  }
  emlx_release(r);
  free(ref);
}

static double *random_values(int64_t n, emlx_dtype d, uint64_t seed, double lo, double hi) {
  tu_rng rng = {seed};
  double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  for (int64_t i = 0; i < n; i++) {
    double u = tu_uniform(&rng, lo, hi);
    bool uns = d == EMLX_UINT8 || d == EMLX_UINT16 || d == EMLX_UINT32 || d == EMLX_UINT64;
    v[i] = tu_is_float(d)   ? tu_quant(d, u)
           : d == EMLX_BOOL ? (u > 0)
                            : floor((uns ? fabs(u) : u) * 10);
  }
  return v;
}

/* ---- every axis subset, every dtype -------------------------------------------- */
static void test_axes_and_dtypes(void) {
  static const emlx_dtype dts[] = {EMLX_FLOAT32, EMLX_FLOAT64, EMLX_FLOAT16, EMLX_BFLOAT16,
                                   EMLX_INT32,   EMLX_UINT8,   EMLX_BOOL,    EMLX_INT64};
  const int64_t shape[3] = {3, 5, 7};
  static const int sets[][3] = {{0}, {1}, {2}, {-1}, {0, 2}, {-3, 1}, {1, 2}, {0, 1, 2}};
  static const int nset[] = {1, 1, 1, 1, 2, 2, 2, 3};
  for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++) {
    double *x = random_values(105, dts[t], 11 + t, -3, 4);
    emlx_array *a = tu_make(dts[t], shape, 3, x);
    for (int op = 0; op < OP_COUNT; op++) {
      for (size_t s = 0; s < sizeof nset / sizeof nset[0]; s++)
        for (int keep = 0; keep < 2; keep++)
          check_case(op, a, x, sets[s], nset[s], keep,
                     op == OP_VAR || op == OP_STD ? (int)(s % 2) : 0, "axes");
      check_case(op, a, x, NULL, 0, false, 0, "all axes");
      int none = 0;
      check_case(op, a, x, &none, 0, false, 0, "no axes");
    }
    emlx_release(a);
    free(x);
  }
}

/* ---- layouts: transposed, stepped, reversed, broadcast -------------------------- */
static void test_layouts(void) {
  const int64_t shape[3] = {4, 6, 10};
  double *x = random_values(240, EMLX_FLOAT32, 5, -4, 4);
  emlx_array *base = tu_make(EMLX_FLOAT32, shape, 3, x);
  /* transposed: (10, 4, 6) */
  int perm[3] = {2, 0, 1};
  emlx_array *t = emlx_transpose(base, perm, 3);
  const int64_t ts[3] = {10, 4, 6};
  double *tx = malloc(240 * sizeof(double));
  for (int64_t i = 0; i < 240; i++) {
    int64_t id[3];
    tu_unravel(i, ts, 3, id);
    tx[i] = x[(id[1] * 6 + id[2]) * 10 + id[0]];
  }
  /* stepped and reversed: [::-1, ::2, 1::3] -> (4, 3, 3) */
  const int64_t st[3] = {-1, 0, 1}, sp[3] = {INT64_MIN, 6, 10}, ss[3] = {-1, 2, 3};
  emlx_array *sl = emlx_slice(base, st, sp, ss, 3);
  const int64_t sls[3] = {4, 3, 3};
  double sx[36];
  for (int64_t i = 0; i < 36; i++) {
    int64_t id[3];
    tu_unravel(i, sls, 3, id);
    sx[i] = x[((3 - id[0]) * 6 + id[1] * 2) * 10 + 1 + id[2] * 3];
  }
  /* broadcast: a (1, 10) row to (6, 10) */
  const int64_t rs[2] = {1, 10}, bs[2] = {6, 10};
  emlx_array *row = tu_make(EMLX_FLOAT32, rs, 2, x);
  emlx_array *b = emlx_broadcast_to(row, bs, 2);
  double bx[60];
  for (int i = 0; i < 60; i++)
    bx[i] = x[i % 10];
  static const int sets[][2] = {{0}, {1}, {2}, {-1}, {0, 2}, {1, 2}};
  static const int nset[] = {1, 1, 1, 1, 2, 2};
  for (int op = 0; op < OP_COUNT; op++) {
    for (size_t s = 0; s < 6; s++) {
      check_case(op, t, tx, sets[s], nset[s], false, 0, "transposed");
      check_case(op, sl, sx, sets[s], nset[s], s % 2, op == OP_VAR ? 1 : 0, "stepped/reversed");
      if (s < 2)
        check_case(op, b, bx, sets[s], nset[s], false, 0, "broadcast");
    }
  }
  emlx_release(b);
  emlx_release(row);
  emlx_release(sl);
  emlx_release(t);
  emlx_release(base);
  free(tx);
  free(x);
}

/* ---- long rows (cut into pieces), f32 and f16 ----------------------------------- */
static void test_long_rows(void) {
  static const emlx_dtype dts[] = {EMLX_FLOAT32, EMLX_FLOAT16, EMLX_FLOAT64};
  for (int t = 0; t < 3; t++) {
    const int64_t shape[2] = {2, 150001};
    double *x = random_values(300002, dts[t], 99 + t, -2, 6);
    emlx_array *a = tu_make(dts[t], shape, 2, x);
    int ax = 1;
    for (int op = 0; op < OP_COUNT; op++) {
      check_case(op, a, x, &ax, 1, false, op == OP_VAR ? 1 : 0, "long rows");
      check_case(op, a, x, NULL, 0, false, 0, "whole array");
    }
    /* strided long rows: the column (axis 0 of the transpose) */
    int perm[2] = {1, 0};
    emlx_array *tr = emlx_transpose(a, perm, 2);
    const int64_t ts[2] = {150001, 2};
    double *tx = malloc(300002 * sizeof(double));
    for (int64_t i = 0; i < 300002; i++)
      tx[i] = x[(i % 2) * 150001 + i / 2];
    int ax0 = 0;
    (void)ts;
    check_case(OP_VAR, tr, tx, &ax0, 1, true, 0, "long strided rows");
    check_case(OP_SOFTMAX, tr, tx, &ax0, 1, false, 0, "long strided rows");
    emlx_release(tr);
    free(tx);
    emlx_release(a);
    free(x);
  }
}

/* ---- empty inputs ------------------------------------------------------------------- */
static void test_empty(void) {
  const int64_t shape[2] = {0, 4};
  emlx_array *a = emlx_zeros(shape, 2, EMLX_FLOAT32, EMLX_CPU);
  double dummy[1] = {0};
  int ax0 = 0, ax1 = 1;
  for (int op = 0; op < OP_COUNT; op++) {
    check_case(op, a, dummy, &ax0, 1, false, 0, "empty axis"); /* NaN / -inf per column */
    check_case(op, a, dummy, &ax1, 1, true, 0, "empty result");
    check_case(op, a, dummy, NULL, 0, false, 0, "empty array");
  }
  /* the values numpy gives */
  emlx_array *m = emlx_mean(a, &ax0, 1, false), *l = emlx_logsumexp(a, &ax0, 1, false);
  double *mv = tu_read(m), *lv = tu_read(l);
  CHECK(mv && isnan(mv[0]));
  CHECK(lv && isinf(lv[0]) && lv[0] < 0);
  free(mv);
  free(lv);
  emlx_release(m);
  emlx_release(l);
  emlx_release(a);
}

/* ---- ddof, special values, overflow -------------------------------------------- */
static double item(emlx_array *r) {
  double v = NAN;
  if (!r || emlx_item_f64(r, &v) != 0)
    tu_record(false, __FILE__, __LINE__, "item readable");
  emlx_release(r);
  return v;
}

static void test_ddof_and_specials(void) {
  const double a12[2] = {1, 2}, a11[2] = {1, 1};
  emlx_array *x = tu_make1(EMLX_FLOAT64, 2, a12), *y = tu_make1(EMLX_FLOAT64, 2, a11);
  CHECK(isinf(item(emlx_var(x, NULL, 0, false, 2)))); /* 0.5 / 0 */
  CHECK(isinf(item(emlx_var(x, NULL, 0, false, 3)))); /* n - ddof < 0: / 0 too */
  CHECK(isnan(item(emlx_var(y, NULL, 0, false, 2)))); /* 0 / 0 */
  CHECK(isinf(item(emlx_std(x, NULL, 0, false, 5))));
  CHECK_NEAR(item(emlx_var(x, NULL, 0, false, 1)), 0.5, 0);
  CHECK_NEAR(item(emlx_var(x, NULL, 0, false, -1)), 0.5 / 3, 1e-17);
  CHECK_NEAR(item(emlx_std(x, NULL, 0, false, 0)), 0.5, 0);
  emlx_release(x);
  emlx_release(y);

  const double big[3] = {1000, 1000, 999}, neg[2] = {-INFINITY, -INFINITY}, inf1[2] = {INFINITY, 1},
               nan1[3] = {1, NAN, 2};
  emlx_array *b = tu_make1(EMLX_FLOAT32, 3, big), *n = tu_make1(EMLX_FLOAT32, 2, neg),
             *i = tu_make1(EMLX_FLOAT32, 2, inf1), *q = tu_make1(EMLX_FLOAT32, 3, nan1);
  double want = 1000 + log(2 + exp(-1.0));
  CHECK_NEAR(item(emlx_logsumexp(b, NULL, 0, false)), want, 1e-4);
  double *sm = NULL;
  emlx_array *s = emlx_softmax(b, NULL, 0, false);
  sm = tu_read(s);
  CHECK(sm && fabs(sm[0] - 1 / (2 + exp(-1.0))) < 1e-6 &&
        fabs(sm[2] - exp(-1.0) / (2 + exp(-1.0))) < 1e-6);
  free(sm);
  emlx_release(s);
  double v = item(emlx_logsumexp(n, NULL, 0, false));
  CHECK(isinf(v) && v < 0);
  v = item(emlx_logsumexp(i, NULL, 0, false));
  CHECK(isinf(v) && v > 0);
  CHECK(isnan(item(emlx_logsumexp(q, NULL, 0, false))));
  CHECK(isnan(item(emlx_mean(q, NULL, 0, false))));
  CHECK(isnan(item(emlx_var(i, NULL, 0, false, 0)))); /* inf - inf */
  emlx_array *arrs[3] = {n, i, q};
  for (int k = 0; k < 3; k++) {
    emlx_array *r = emlx_softmax(arrs[k], NULL, 0, true),
               *l = emlx_log_softmax(arrs[k], NULL, 0, false);
    double *rv = tu_read(r), *lv = tu_read(l);
    int64_t m = emlx_size(arrs[k]);
    bool all_nan = rv && lv;
    for (int64_t e = 0; all_nan && e < m; e++)
      all_nan = isnan(rv[e]) && isnan(lv[e]);
    CHECK_MSG(all_nan, "softmax / log_softmax of a row with NaN or a +-inf max is NaN (case %d)",
              k);
    free(rv);
    free(lv);
    emlx_release(r);
    emlx_release(l);
  }
  emlx_release(b);
  emlx_release(n);
  emlx_release(i);
  emlx_release(q);

  /* f16 values whose exp overflows f16 and f32 */
  const double hv[4] = {60000, 59000, -60000, 0};
  emlx_array *h = tu_make1(EMLX_FLOAT16, 4, hv);
  double hx[4];
  for (int k = 0; k < 4; k++)
    hx[k] = tu_quant(EMLX_FLOAT16, hv[k]);
  check_case(OP_LSE, h, hx, NULL, 0, false, 0, "f16 large");
  check_case(OP_SOFTMAX, h, hx, NULL, 0, false, 0, "f16 large");
  check_case(OP_LOGSM, h, hx, NULL, 0, false, 0, "f16 large");
  emlx_release(h);

  /* complex mean: sum / n */
  emlx_array *c = emlx_scalar_tensor_complex(2.0f, -4.0f, EMLX_CPU);
  const int64_t cs[1] = {3};
  emlx_array *cb = emlx_broadcast_to(c, cs, 1), *cm = emlx_mean(cb, NULL, 0, false);
  float cv[2] = {0, 0};
  CHECK(cm && emlx_array_dtype(cm) == EMLX_COMPLEX64 && emlx_to_blob(cm, cv, sizeof cv) == 0 &&
        fabsf(cv[0] - 2.0f) < 1e-6f && fabsf(cv[1] + 4.0f) < 1e-6f);
  emlx_release(cm);
  emlx_release(cb);
  emlx_release(c);
}

/* ---- errors ----------------------------------------------------------------------- */
static void test_errors(void) {
  const int64_t shape[2] = {2, 3};
  emlx_array *a = emlx_ones(shape, 2, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *c = emlx_zeros(shape, 2, EMLX_COMPLEX64, EMLX_CPU);
  int bad = 2, neg = -3, dup[2] = {1, -1};
  for (int op = 0; op < OP_COUNT; op++) {
    CHECK_NULL_ERR(run(op, NULL, NULL, 0, false, 0));
    CHECK_NULL_ERR(run(op, a, &bad, 1, false, 0));
    CHECK_NULL_ERR(run(op, a, &neg, 1, false, 0));
    CHECK_NULL_ERR(run(op, a, dup, 2, false, 0));
    CHECK_NULL_ERR(run(op, a, dup, 3, false, 0)); /* more axes than the rank */
    if (op != OP_MEAN)
      CHECK_NULL_ERR(run(op, c, NULL, 0, false, 0));
  }
  emlx_clear_error();
  emlx_array *e = emlx_var(c, NULL, 0, false, 0);
  CHECK(e == NULL && strstr(emlx_last_error(), "var") && strstr(emlx_last_error(), "complex64"));
  emlx_release(e);
  emlx_clear_error();
  e = emlx_softmax(a, &bad, 1, false);
  CHECK(e == NULL && strstr(emlx_last_error(), "softmax") && strstr(emlx_last_error(), "axis 2"));
  emlx_release(e);
  emlx_release(a);
  emlx_release(c);
}

/* ---- inside a compiled program ------------------------------------------------- */
static int trace_norm(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out, size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  int last = -1;
  emlx_array *m = emlx_mean(in[0], &last, 1, true), *v = emlx_var(in[0], &last, 1, true, 0);
  emlx_array *d = emlx_subtract(in[0], m);
  out[0] = emlx_divide(d, v);
  out[1] = emlx_softmax(in[0], &last, 1, false);
  out[2] = emlx_logsumexp(in[0], NULL, 0, false);
  emlx_release(m);
  emlx_release(v);
  emlx_release(d);
  return out[0] && out[1] && out[2] ? 0 : -1;
}

static void test_compiled(void) {
  const int64_t shape[2] = {6, 33};
  emlx_template tpl = {EMLX_FLOAT32, 2, shape};
  emlx_program *p = emlx_compile(trace_norm, NULL, &tpl, 1, 3);
  CHECK_NOT_NULL(p);
  for (int round = 0; p && round < 2; round++) {
    double *x = random_values(198, EMLX_FLOAT32, 500 + round, -3, 3);
    emlx_array *a = tu_make(EMLX_FLOAT32, shape, 2, x);
    emlx_array *got[3] = {NULL, NULL, NULL};
    CHECK_OK(emlx_program_run(p, &a, 1, got, 3));
    emlx_array *want[3] = {NULL, NULL, NULL};
    CHECK_OK(trace_norm(NULL, &a, 1, want, 3));
    for (int k = 0; k < 3; k++) {
      double *g = got[k] ? tu_read(got[k]) : NULL, *w = want[k] ? tu_read(want[k]) : NULL;
      bool same = g && w && emlx_size(got[k]) == emlx_size(want[k]);
      for (int64_t i = 0; same && i < emlx_size(got[k]); i++)
        same = g[i] == w[i];
      CHECK_MSG(same, "compiled output %d equals the eager one (round %d)", k, round);
      free(g);
      free(w);
      emlx_release(got[k]);
      emlx_release(want[k]);
    }
    double *back = tu_read(a); /* the program never writes its input */
    bool untouched = back != NULL;
    for (int i = 0; untouched && i < 198; i++)
      untouched = back[i] == x[i];
    CHECK(untouched);
    free(back);
    emlx_release(a);
    free(x);
  }
  emlx_program_release(p);
}

/* ---- softmax writing over its donated input -------------------------------------- */
static void test_donated(void) {
  /* round 0: one long row (all axes, cut into pieces); round 1: short rows */
  for (int short_rows = 0; short_rows < 2; short_rows++) {
    const int64_t shape[2] = {short_rows ? 700 : 5, short_rows ? 501 : 70001};
    int64_t n = shape[0] * shape[1];
    double *x = random_values(n, EMLX_FLOAT32, 700 + short_rows, -2, 2),
           *ex = malloc(n * sizeof(double));
    for (int64_t i = 0; i < n; i++)
      ex[i] = tu_quant(EMLX_FLOAT32, x[i] * 2);
    emlx_array *a = tu_make(EMLX_FLOAT32, shape, 2, x);
    emlx_array *two = emlx_scalar_tensor(2, EMLX_FLOAT32, EMLX_CPU);
    emlx_array *t = emlx_multiply(a, two); /* a fresh buffer only the softmax holds */
    int ax = -1;
    emlx_array *s = emlx_softmax(t, short_rows ? &ax : NULL, short_rows ? 1 : 0, false);
    emlx_release(t); /* now only the softmax node holds it: its buffer is donated */
    int last = -1;
    emlx_array *t2 = emlx_multiply(a, two), *l = emlx_log_softmax(t2, &last, 1, false);
    emlx_release(t2);
    bool mask[2] = {short_rows ? false : true, true}, m1[2] = {false, true};
    double *ref = malloc(n * sizeof(double)), *got = tu_read(s);
    ref_op(OP_SOFTMAX, ex, shape, 2, mask, 0, ref);
    close_at(got, ref, n, 24 * 0x1p-23, 0, "softmax over a donated input", __LINE__);
    free(got);
    got = tu_read(l);
    ref_op(OP_LOGSM, ex, shape, 2, m1, 0, ref);
    close_at(got, ref, n, 64 * 0x1p-23, 4e-6, "log_softmax over a donated input", __LINE__);
    free(got);
    free(ref);
    emlx_release(s);
    emlx_release(l);
    emlx_release(two);
    emlx_release(a);
    free(x);
    free(ex);
  }
}

int main(void) {
  test_axes_and_dtypes();
  test_layouts();
  test_long_rows();
  test_empty();
  test_ddof_and_specials();
  test_errors();
  test_compiled();
  test_donated();
  return tu_finish();
}
