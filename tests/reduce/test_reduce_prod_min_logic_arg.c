/* test_reduce_prod_min_logic_arg.c — product, min, all, any (any axes, keep_dims) and argmax /
 * argmin (one axis or flattened) against references computed here from the
 * values the test chose: every dtype, contiguous / transposed / stepped /
 * reversed / broadcast inputs, empty inputs, NaN and -0.0, integer
 * wrapping, the parallel split paths (checked for thread-count
 * independence), and every error case. */
#include "reduce_family_util.h"

enum { OP_PROD, OP_MIN, OP_ALL, OP_ANY, OP_COUNT };
static const char *const op_name[OP_COUNT] = {"product", "min", "all", "any"};

static emlx_array *run_op(int op, emlx_array *a, const int *axes, int naxes, bool keep) {
  switch (op) {
  case OP_PROD:
    return emlx_product(a, axes, naxes, keep);
  case OP_MIN:
    return emlx_min(a, axes, naxes, keep);
  case OP_ALL:
    return emlx_all(a, axes, naxes, keep);
  default:
    return emlx_any(a, axes, naxes, keep);
  }
}

static emlx_dtype product_dtype(emlx_dtype d) {
  switch (d) {
  case EMLX_BOOL:
  case EMLX_INT8:
  case EMLX_INT16:
  case EMLX_INT32:
    return EMLX_INT32;
  case EMLX_UINT8:
  case EMLX_UINT16:
  case EMLX_UINT32:
    return EMLX_UINT32;
  default:
    return d;
  }
}

static emlx_dtype out_dtype(int op, emlx_dtype d) {
  return op == OP_PROD ? product_dtype(d) : op == OP_MIN ? d : EMLX_BOOL;
}

static bool truthy(emlx_dtype d, rf_val v) {
  if (d == EMLX_COMPLEX64)
    return rf_f64(d, v) != 0 || rf_imag(d, v) != 0;
  if (tu_is_float(d))
    return rf_f64(d, v) != 0 || isnan(rf_f64(d, v));
  return v != 0;
}

/* Largest finite magnitude of a float dtype (overflow boundary of rounding). */
static double overflow_at(emlx_dtype d) {
  switch (d) {
  case EMLX_FLOAT16:
    return 65520.0;
  case EMLX_BFLOAT16:
    return 0x1.ffp127;
  case EMLX_FLOAT32:
  case EMLX_COMPLEX64:
    return 0x1.ffffffp127;
  default:
    return INFINITY;
  }
}

/* ---- the reference -------------------------------------------------------------- */
typedef struct ref_acc {
  uint64_t iprod;
  double re, im;
  rf_val best;
  bool nan, seen, truth;
  int64_t count;
} ref_acc;

/* Reduces v (shape[nd]) over red[] into acc[nout] (kept dims, row-major). */
static void ref_reduce(int op, emlx_dtype d, const int64_t *shape, int nd, const bool *red,
                       const rf_val *v, ref_acc *acc, int64_t nout) {
  for (int64_t o = 0; o < nout; o++) {
    acc[o] = (ref_acc){1, 1.0, 0.0, 0, false, false, op == OP_ALL, 0};
  }
  int64_t n = tu_numel(shape, nd), idx[EMLX_MAX_NDIM];
  for (int64_t i = 0; i < n; i++) {
    tu_unravel(i, shape, nd, idx);
    int64_t o = 0;
    for (int k = 0; k < nd; k++)
      if (!red[k])
        o = o * shape[k] + idx[k];
    ref_acc *a = &acc[o];
    rf_val x = v[i];
    a->count++;
    switch (op) {
    case OP_PROD:
      if (d == EMLX_COMPLEX64) {
        double xr = rf_f64(d, x), xi = rf_imag(d, x);
        double r = a->re * xr - a->im * xi, im = a->re * xi + a->im * xr;
        a->re = r;
        a->im = im;
      } else if (tu_is_float(d)) {
        a->re *= rf_f64(d, x);
      } else {
        a->iprod *= (uint64_t)rf_i64(d, x);
      }
      break;
    case OP_MIN:
      if (rf_is_nan(d, x))
        a->nan = true;
      if (!a->seen || rf_cmp(d, x, a->best) < 0)
        a->best = x;
      a->seen = true;
      break;
    case OP_ALL:
      a->truth = a->truth && truthy(d, x);
      break;
    default:
      a->truth = a->truth || truthy(d, x);
      break;
    }
  }
}

/* One output element against its reference; false (and a message) if off. */
static bool check_one(int op, emlx_dtype d, emlx_dtype od, const ref_acc *a, rf_val got, char *msg,
                      size_t msz) {
  switch (op) {
  case OP_ALL:
  case OP_ANY:
    if (got == (rf_val)a->truth)
      return true;
    snprintf(msg, msz, "got %llu want %d", (unsigned long long)got, a->truth);
    return false;
  case OP_MIN: {
    if (a->nan) {
      if (rf_is_nan(d, got))
        return true;
      snprintf(msg, msz, "want NaN, got %g", rf_f64(d, got));
      return false;
    }
    if (rf_cmp(d, got, a->best) == 0 && !rf_is_nan(d, got))
      return true;
    snprintf(msg, msz, "got %.17g%+.17gi want %.17g%+.17gi", rf_f64(d, got), rf_imag(d, got),
             rf_f64(d, a->best), rf_imag(d, a->best));
    return false;
  }
  default:
    break;
  }
  if (!tu_is_float(od) && od != EMLX_COMPLEX64) { /* wrapping integer product */
    rf_val want = rf_from_i64(od, (int64_t)a->iprod);
    if (got == want)
      return true;
    snprintf(msg, msz, "got %lld want %lld", (long long)rf_i64(od, got),
             (long long)rf_i64(od, want));
    return false;
  }
  double tol_rel = (double)(a->count + 2) * (od == EMLX_FLOAT64 ? 0x1p-52 : 0x1p-23);
  double gr = rf_f64(od, got), gi = rf_imag(od, got);
  double mag = od == EMLX_COMPLEX64 ? hypot(a->re, a->im) : fabs(a->re);
  if (mag >= overflow_at(od)) {
    if (isinf(gr) || isinf(gi) || isnan(gr))
      return true; /* overflow (inf or inf*0 lanes) */
    snprintf(msg, msz, "want overflow, got %g", gr);
    return false;
  }
  double tol = tol_rel * mag + (tu_is_float(od) ? tu_ulp(od, a->re) : 0.0) + 1e-300;
  if (fabs(gr - a->re) <= tol && fabs(gi - a->im) <= tol)
    return true;
  snprintf(msg, msz, "got %.17g%+.17gi want %.17g%+.17gi", gr, gi, a->re, a->im);
  return false;
}

/* Runs op on a (logical values v) and checks shape, dtype and values. */
static void check_reduce(int op, emlx_array *a, emlx_dtype d, const int64_t *shape, int nd,
                         const rf_val *v, const int *axes, int naxes, bool keep, const char *what) {
  bool red[EMLX_MAX_NDIM] = {false};
  if (!axes) {
    for (int k = 0; k < nd; k++)
      red[k] = true;
  } else {
    for (int k = 0; k < naxes; k++)
      red[axes[k] < 0 ? axes[k] + nd : axes[k]] = true;
  }
  int64_t oshape[EMLX_MAX_NDIM], nout = 1;
  int ond = 0;
  for (int k = 0; k < nd; k++) {
    if (!red[k]) {
      oshape[ond++] = shape[k];
      nout *= shape[k];
    } else if (keep) {
      oshape[ond++] = 1;
    }
  }
  emlx_dtype od = out_dtype(op, d);
  emlx_array *r = run_op(op, a, axes, naxes, keep);
  rf_val *got = rf_result(r, od, oshape, ond, what);
  if (got) {
    ref_acc *acc = malloc((size_t)(nout > 0 ? nout : 1) * sizeof *acc);
    ref_reduce(op, d, shape, nd, red, v, acc, nout);
    int64_t bad = 0;
    char msg[200];
    for (int64_t o = 0; o < nout; o++)
      if (!check_one(op, d, od, &acc[o], got[o], msg, sizeof msg) && bad++ < 3)
        fprintf(stderr, "  %s: output %lld: %s\n", what, (long long)o, msg);
    CHECK_MSG(bad == 0, "%s: %lld of %lld outputs differ", what, (long long)bad, (long long)nout);
    free(acc);
  }
  free(got);
  emlx_release(r);
}

/* ---- the grid: dtypes x ops x shapes/axes x layouts x keep_dims ------------------- */
typedef struct red_case {
  int nd;
  int64_t shape[4];
  int naxes; /* -1: axes NULL */
  int axes[3];
} red_case;

static void test_grid(void) {
  static const red_case cases[] = {
      {2, {5, 7}, -1, {0}},      {2, {5, 7}, 1, {0}},
      {2, {5, 7}, 1, {-1}},      {3, {3, 4, 6}, 2, {0, 2}},
      {3, {3, 4, 6}, 2, {2, 1}}, {3, {3, 4, 6}, 1, {1}},
      {3, {3, 4, 6}, 0, {0}},    {4, {2, 3, 2, 5}, 3, {0, 1, 3}},
      {1, {40}, 1, {0}},         {0, {0}, -1, {0}},
      {2, {70, 3}, 1, {0}}, /* column mode */
  };
  tu_rng rng = {12345};
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_dtype d = tu_all_dtypes[di];
    if (rf_skip_c128(d))
      continue;
    for (int op = 0; op < OP_COUNT; op++) {
      for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const red_case *c = &cases[ci];
        for (int lay = 0; lay < RF_LAYOUT_COUNT; lay++) {
          rf_val *v;
          rf_profile prof = op == OP_PROD ? RF_PROD : op == OP_MIN ? RF_DUPS : RF_GENERAL;
          if (op == OP_ALL && d != EMLX_BOOL)
            prof = RF_PROD; /* mostly non-zero */
          emlx_array *a = rf_input(d, c->shape, c->nd, (rf_layout)lay, &rng, prof, &v);
          char what[160];
          bool keep = (ci + (size_t)lay) % 2 == 1;
          snprintf(what, sizeof what, "%s %s case %zu %s keep=%d", op_name[op], tu_dname(d), ci,
                   rf_layout_name[lay], keep);
          if (a)
            check_reduce(op, a, d, c->shape, c->nd, v, c->naxes < 0 ? NULL : c->axes,
                         c->naxes < 0 ? 0 : c->naxes, keep, what);
          emlx_release(a);
          free(v);
        }
      }
    }
  }
}

/* ---- specific cases ------------------------------------------------------------------- */
static void test_dtypes_and_wrap(void) {
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_dtype d = tu_all_dtypes[di];
    if (rf_skip_c128(d))
      continue;
    int64_t n = 2;
    rf_val v[2] = {rf_from_i64(d, 1), rf_from_i64(d, 1)};
    emlx_array *a = rf_make(d, &n, 1, v);
    emlx_array *p = emlx_product(a, NULL, 0, false), *m = emlx_min(a, NULL, 0, false);
    emlx_array *al = emlx_all(a, NULL, 0, false), *an = emlx_any(a, NULL, 0, false);
    CHECK_MSG(p && emlx_array_dtype(p) == product_dtype(d), "product dtype of %s", tu_dname(d));
    CHECK_MSG(m && emlx_array_dtype(m) == d, "min dtype of %s", tu_dname(d));
    CHECK(al && emlx_array_dtype(al) == EMLX_BOOL && an && emlx_array_dtype(an) == EMLX_BOOL);
    emlx_release(p);
    emlx_release(m);
    emlx_release(al);
    emlx_release(an);
    emlx_release(a);
  }
  /* int32: 100000^2 wraps to 1410065408; int64: 2^62 * 4 wraps to 0; uint8
   * widens to uint32 (200 * 200 = 40000, no wrap). */
  int64_t n = 2;
  rf_val w32[2] = {100000, 100000};
  emlx_array *a = rf_make(EMLX_INT32, &n, 1, w32);
  emlx_array *p = emlx_product(a, NULL, 0, false);
  rf_val *g = rf_result(p, EMLX_INT32, NULL, 0, "int32 wrap");
  if (g)
    CHECK_EQ_I64(rf_i64(EMLX_INT32, g[0]), 1410065408);
  free(g);
  emlx_release(p);
  emlx_release(a);
  rf_val w64[2] = {UINT64_C(1) << 62, 4};
  a = rf_make(EMLX_INT64, &n, 1, w64);
  p = emlx_product(a, NULL, 0, false);
  g = rf_result(p, EMLX_INT64, NULL, 0, "int64 wrap");
  if (g)
    CHECK_EQ_I64(rf_i64(EMLX_INT64, g[0]), 0);
  free(g);
  emlx_release(p);
  emlx_release(a);
  rf_val u8[2] = {200, 200};
  a = rf_make(EMLX_UINT8, &n, 1, u8);
  p = emlx_product(a, NULL, 0, false);
  g = rf_result(p, EMLX_UINT32, NULL, 0, "uint8 widens");
  if (g)
    CHECK_EQ_U64(g[0], 40000);
  free(g);
  emlx_release(p);
  emlx_release(a);
}

/* NaN propagates through min in every path (short runs, lanes, columns). */
static void test_min_nan(void) {
  const emlx_dtype fl[] = {EMLX_FLOAT16, EMLX_BFLOAT16, EMLX_FLOAT32, EMLX_FLOAT64, EMLX_COMPLEX64};
  for (size_t k = 0; k < sizeof fl / sizeof fl[0]; k++) {
    emlx_dtype d = fl[k];
    for (int64_t at = 0; at < 1000; at += 333) {
      int64_t shape[2] = {2, 1000};
      rf_val *v = malloc(2000 * sizeof *v);
      for (int64_t i = 0; i < 2000; i++)
        v[i] = rf_from_f64(d, (double)(i % 17) - 3.0);
      v[at] = rf_from_f64(d, NAN);
      emlx_array *a = rf_make(d, shape, 2, v);
      int ax1 = 1, ax0 = 0;
      char what[64];
      snprintf(what, sizeof what, "min NaN %s at %lld (rows)", tu_dname(d), (long long)at);
      check_reduce(OP_MIN, a, d, shape, 2, v, &ax1, 1, false, what);
      emlx_array *t = emlx_transpose(a, NULL, 0); /* the same values as columns */
      int64_t tshape[2] = {1000, 2};
      rf_val *tv = malloc(2000 * sizeof *tv);
      for (int64_t i = 0; i < 1000; i++)
        for (int j = 0; j < 2; j++)
          tv[i * 2 + j] = v[j * 1000 + i];
      snprintf(what, sizeof what, "min NaN %s at %lld (columns)", tu_dname(d), (long long)at);
      check_reduce(OP_MIN, t, d, tshape, 2, tv, &ax0, 1, false, what);
      emlx_release(t);
      emlx_release(a);
      free(v);
      free(tv);
    }
  }
  /* -0.0 and +0.0 are equal: either is a correct minimum. */
  int64_t n = 2;
  rf_val z[2] = {rf_from_f64(EMLX_FLOAT32, 0.0), rf_from_f64(EMLX_FLOAT32, -0.0)};
  emlx_array *a = rf_make(EMLX_FLOAT32, &n, 1, z);
  emlx_array *m = emlx_min(a, NULL, 0, false);
  rf_val *g = rf_result(m, EMLX_FLOAT32, NULL, 0, "min of zeros");
  if (g)
    CHECK(rf_f64(EMLX_FLOAT32, g[0]) == 0.0);
  free(g);
  emlx_release(m);
  emlx_release(a);
}

static void test_empty(void) {
  int64_t e1 = 0, s30[2] = {3, 0}, s03[2] = {0, 3};
  emlx_array *a = emlx_zeros(&e1, 1, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *p = emlx_product(a, NULL, 0, false);
  rf_val *g = rf_result(p, EMLX_FLOAT32, NULL, 0, "product of nothing");
  if (g)
    CHECK(rf_f64(EMLX_FLOAT32, g[0]) == 1.0);
  free(g);
  emlx_release(p);
  emlx_array *al = emlx_all(a, NULL, 0, false), *an = emlx_any(a, NULL, 0, false);
  rf_val *ga = rf_result(al, EMLX_BOOL, NULL, 0, "all of nothing");
  rf_val *gn = rf_result(an, EMLX_BOOL, NULL, 0, "any of nothing");
  if (ga)
    CHECK_EQ_U64(ga[0], 1);
  if (gn)
    CHECK_EQ_U64(gn[0], 0);
  free(ga);
  free(gn);
  emlx_release(al);
  emlx_release(an);
  CHECK_NULL_ERR(emlx_min(a, NULL, 0, false));
  emlx_release(a);

  emlx_array *b = emlx_zeros(s30, 2, EMLX_INT16, EMLX_CPU);
  int ax1 = 1, ax0 = 0;
  p = emlx_product(b, &ax1, 1, false);
  int64_t three = 3, zero = 0;
  g = rf_result(p, EMLX_INT32, &three, 1, "product over an empty axis");
  if (g)
    CHECK(g[0] == 1 && g[1] == 1 && g[2] == 1);
  free(g);
  emlx_release(p);
  CHECK_NULL_ERR(emlx_min(b, &ax1, 1, false));
  emlx_array *m = emlx_min(b, &ax0, 1, false); /* empty result: fine */
  g = rf_result(m, EMLX_INT16, &zero, 1, "min with an empty result");
  free(g);
  emlx_release(m);
  emlx_release(b);
  emlx_array *c = emlx_zeros(s03, 2, EMLX_FLOAT64, EMLX_CPU);
  CHECK_NULL_ERR(emlx_min(c, &ax0, 1, false));
  an = emlx_any(c, &ax0, 1, true);
  int64_t k13[2] = {1, 3};
  g = rf_result(an, EMLX_BOOL, k13, 2, "any over an empty axis, keep_dims");
  if (g)
    CHECK(g[0] == 0 && g[1] == 0 && g[2] == 0);
  free(g);
  emlx_release(an);
  emlx_release(c);
}

/* The parallel splits give the right answer and the same bits on 1 and 2 threads. */
static void test_large(void) {
  tu_rng rng = {777};
  struct {
    int64_t shape[2];
    int axis;
  } cfg[] = {{{2, 150000}, 1}, {{150000, 3}, 0}, {{5000, 3}, 0}, {{300, 2000}, 0}, {{3000, 70}, 1}};
  for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
    int64_t n = cfg[c].shape[0] * cfg[c].shape[1];
    rf_val *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++)
      v[i] = rf_from_f64(EMLX_FLOAT32, 1.0 + (double)tu_randint(&rng, -64, 64) / 65536.0);
    v[n / 2] = rf_from_f64(EMLX_FLOAT32, -0.5);
    emlx_array *a = rf_make(EMLX_FLOAT32, cfg[c].shape, 2, v);
    for (int op = 0; op < OP_COUNT; op++) {
      char what[96];
      snprintf(what, sizeof what, "large %s %lldx%lld axis %d", op_name[op],
               (long long)cfg[c].shape[0], (long long)cfg[c].shape[1], cfg[c].axis);
      check_reduce(op, a, EMLX_FLOAT32, cfg[c].shape, 2, v, &cfg[c].axis, 1, false, what);
      int old = emlx_set_num_threads(1);
      emlx_array *r1 = run_op(op, a, &cfg[c].axis, 1, false);
      emlx_set_num_threads(old > 0 ? old : 2);
      emlx_array *r2 = run_op(op, a, &cfg[c].axis, 1, false);
      unsigned char *b1 = tu_read_raw(r1), *b2 = tu_read_raw(r2);
      CHECK_MSG(b1 && b2 && memcmp(b1, b2, emlx_nbytes(r1)) == 0,
                "%s: same bits on 1 and 2 threads", what);
      free(b1);
      free(b2);
      emlx_release(r1);
      emlx_release(r2);
    }
    emlx_release(a);
    free(v);
  }
  /* all / any over a long bool run stop early and still see the last element. */
  int64_t big = 1 << 20;
  rf_val *v = malloc((size_t)big * sizeof *v);
  for (int64_t i = 0; i < big; i++)
    v[i] = 1;
  v[big - 1] = 0;
  emlx_array *a = rf_make(EMLX_BOOL, &big, 1, v);
  check_reduce(OP_ALL, a, EMLX_BOOL, &big, 1, v, NULL, 0, false, "all of 1M bools");
  check_reduce(OP_ANY, a, EMLX_BOOL, &big, 1, v, NULL, 0, false, "any of 1M bools");
  emlx_release(a);
  free(v);
}

static void test_errors(void) {
  int64_t shape[2] = {2, 3};
  emlx_array *a = emlx_ones(shape, 2, EMLX_FLOAT32, EMLX_CPU);
  int bad[2] = {2, 0}, dup[2] = {1, -1}, neg[1] = {-3};
  for (int op = 0; op < OP_COUNT; op++) {
    CHECK_NULL_ERR(run_op(op, NULL, NULL, 0, false));
    CHECK_NULL_ERR(run_op(op, a, bad, 1, false));
    CHECK_NULL_ERR(run_op(op, a, dup, 2, false));
    CHECK_NULL_ERR(run_op(op, a, neg, 1, false));
    CHECK_NULL_ERR(run_op(op, a, bad, 3, false)); /* more axes than dims */
    CHECK_NULL_ERR(run_op(op, a, bad, -1, false));
  }
  emlx_release(a);
}

/* ---- argmax / argmin ----------------------------------------------------------------- */
/* Reference: the first (last) index of the largest (smallest) along axis;
 * the first NaN wins regardless. */
static int64_t ref_arg(emlx_dtype d, const rf_val *v, int64_t base, int64_t stride, int64_t n,
                       bool is_min, bool last) {
  int64_t best = -1;
  for (int64_t i = 0; i < n; i++) {
    rf_val x = v[base + i * stride];
    if (rf_is_nan(d, x))
      return i;
    if (best < 0) {
      best = i;
      continue;
    }
    int c = rf_cmp(d, x, v[base + best * stride]);
    if (is_min)
      c = -c;
    if (c > 0 || (c == 0 && last))
      best = i;
  }
  /* A NaN earlier than best was returned above; any later NaN returned too. */
  return best;
}

static void check_arg(emlx_array *a, emlx_dtype d, const int64_t *shape, int nd, const rf_val *v,
                      int axis, bool all, bool keep, bool is_min, const emlx_arg_reduce_options *o,
                      const char *what) {
  emlx_dtype idt = o && o->index_dtype != EMLX_BOOL ? o->index_dtype : EMLX_UINT32;
  bool last = o && o->last_index;
  int64_t oshape[EMLX_MAX_NDIM], nout = 1;
  int ond = 0;
  int ax = axis < 0 ? axis + nd : axis;
  for (int k = 0; k < nd; k++) {
    if (!all && k != ax) {
      oshape[ond++] = shape[k];
      nout *= shape[k];
    } else if (keep) {
      oshape[ond++] = 1;
    }
  }
  emlx_array *r = all ? (is_min ? emlx_argmin_all(a, keep, o) : emlx_argmax_all(a, keep, o))
                      : (is_min ? emlx_argmin(a, axis, keep, o) : emlx_argmax(a, axis, keep, o));
  rf_val *got = rf_result(r, idt, oshape, ond, what);
  if (got) {
    int64_t bad = 0;
    int64_t inner = 1;
    for (int k = ax + 1; !all && k < nd; k++)
      inner *= shape[k];
    for (int64_t oi = 0; oi < nout; oi++) {
      int64_t want;
      if (all) {
        want = ref_arg(d, v, 0, 1, tu_numel(shape, nd), is_min, last);
      } else {
        int64_t base = (oi / inner) * shape[ax] * inner + oi % inner;
        want = ref_arg(d, v, base, inner, shape[ax], is_min, last);
      }
      if ((int64_t)got[oi] != want && bad++ < 3)
        fprintf(stderr, "  %s: output %lld: got %lld want %lld\n", what, (long long)oi,
                (long long)got[oi], (long long)want);
    }
    CHECK_MSG(bad == 0, "%s: %lld of %lld outputs differ", what, (long long)bad, (long long)nout);
  }
  free(got);
  emlx_release(r);
}

static void test_arg_grid(void) {
  static const struct {
    int nd;
    int64_t shape[3];
  } shapes[] = {{2, {6, 5}}, {3, {3, 4, 5}}, {1, {33}}, {2, {40, 3}}};
  tu_rng rng = {999};
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_dtype d = tu_all_dtypes[di];
    if (rf_skip_c128(d))
      continue;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
      for (int lay = 0; lay < RF_LAYOUT_COUNT; lay++) {
        rf_val *v;
        emlx_array *a = rf_input(d, shapes[si].shape, shapes[si].nd, (rf_layout)lay, &rng,
                                 (si + (size_t)lay) % 3 ? RF_DUPS : RF_GENERAL, &v);
        if (!a) {
          free(v);
          continue;
        }
        for (int variant = 0; variant < 4; variant++) {
          bool is_min = variant & 1;
          emlx_arg_reduce_options o = {.last_index = (variant & 2) != 0};
          char what[160];
          for (int axis = -1; axis < shapes[si].nd; axis++) {
            bool keep = (axis + variant) % 2 != 0;
            snprintf(what, sizeof what, "%s %s shape %zu %s axis %d last=%d keep=%d",
                     is_min ? "argmin" : "argmax", tu_dname(d), si, rf_layout_name[lay], axis,
                     o.last_index, keep);
            check_arg(a, d, shapes[si].shape, shapes[si].nd, v, axis, false, keep, is_min, &o,
                      what);
          }
          snprintf(what, sizeof what, "%s_all %s shape %zu %s last=%d",
                   is_min ? "argmin" : "argmax", tu_dname(d), si, rf_layout_name[lay],
                   o.last_index);
          check_arg(a, d, shapes[si].shape, shapes[si].nd, v, 0, true, variant == 3, is_min, &o,
                    what);
        }
        emlx_release(a);
        free(v);
      }
    }
  }
}

static void test_arg_special(void) {
  /* NaN: the first NaN wins argmax and argmin, with either tie rule; ties of
   * -0.0 and +0.0 take the first index. */
  int64_t n = 6;
  rf_val v[6];
  const double f[6] = {1.0, NAN, 3.0, NAN, 3.0, -1.0};
  for (int i = 0; i < 6; i++)
    v[i] = rf_from_f64(EMLX_FLOAT32, f[i]);
  emlx_array *a = rf_make(EMLX_FLOAT32, &n, 1, v);
  emlx_arg_reduce_options hi = {.last_index = true};
  for (int k = 0; k < 4; k++) {
    emlx_array *r = k & 1 ? emlx_argmin(a, 0, false, k & 2 ? &hi : NULL)
                          : emlx_argmax(a, 0, false, k & 2 ? &hi : NULL);
    rf_val *g = rf_result(r, EMLX_UINT32, NULL, 0, "arg with NaN");
    if (g)
      CHECK_EQ_I64(g[0], 1);
    free(g);
    emlx_release(r);
  }
  emlx_release(a);
  rf_val z[3] = {rf_from_f64(EMLX_FLOAT64, -0.0), rf_from_f64(EMLX_FLOAT64, 0.0),
                 rf_from_f64(EMLX_FLOAT64, -0.0)};
  n = 3;
  a = rf_make(EMLX_FLOAT64, &n, 1, z);
  emlx_array *r = emlx_argmax(a, 0, false, NULL), *r2 = emlx_argmin(a, 0, false, &hi);
  rf_val *g = rf_result(r, EMLX_UINT32, NULL, 0, "argmax of zeros");
  rf_val *g2 = rf_result(r2, EMLX_UINT32, NULL, 0, "argmin of zeros, last");
  if (g)
    CHECK_EQ_I64(g[0], 0);
  if (g2)
    CHECK_EQ_I64(g2[0], 2);
  free(g);
  free(g2);
  emlx_release(r);
  emlx_release(r2);
  emlx_release(a);

  /* Index dtypes: int64 and uint8 work; uint8 cannot hold 256; floats are refused. */
  emlx_array *b = emlx_arange(0, 257, 1, EMLX_FLOAT32, EMLX_CPU);
  emlx_arg_reduce_options o64 = {.index_dtype = EMLX_INT64}, o8 = {.index_dtype = EMLX_UINT8},
                          of = {.index_dtype = EMLX_FLOAT32};
  r = emlx_argmax(b, 0, false, &o64);
  g = rf_result(r, EMLX_INT64, NULL, 0, "argmax as int64");
  if (g)
    CHECK_EQ_I64(g[0], 256);
  free(g);
  emlx_release(r);
  CHECK_NULL_ERR(emlx_argmax(b, 0, false, &o8));
  CHECK_NULL_ERR(emlx_argmax_all(b, false, &of));
  int64_t st = 1, sp = 257, step = 1;
  emlx_array *b256 = emlx_slice(b, &st, &sp, &step, 1); /* 256 elements: indices fit uint8 */
  r = emlx_argmin(b256, 0, true, &o8);
  int64_t one = 1;
  g = rf_result(r, EMLX_UINT8, &one, 1, "argmin as uint8");
  if (g)
    CHECK_EQ_I64(g[0], 0);
  free(g);
  emlx_release(r);
  emlx_release(b256);
  emlx_release(b);

  /* Errors: empty axis, empty array, bad axis, NULL. */
  int64_t s03[2] = {0, 3}, s30[2] = {3, 0};
  emlx_array *e = emlx_zeros(s03, 2, EMLX_INT32, EMLX_CPU);
  CHECK_NULL_ERR(emlx_argmax(e, 0, false, NULL));
  CHECK_NULL_ERR(emlx_argmin_all(e, false, NULL));
  CHECK_NULL_ERR(emlx_argmax(e, 2, false, NULL));
  CHECK_NULL_ERR(emlx_argmax(e, -3, false, NULL));
  r = emlx_argmax(e, 1, false, NULL); /* empty result: fine */
  int64_t zero = 0;
  g = rf_result(r, EMLX_UINT32, &zero, 1, "argmax with an empty result");
  free(g);
  emlx_release(r);
  emlx_release(e);
  e = emlx_zeros(s30, 2, EMLX_INT32, EMLX_CPU);
  CHECK_NULL_ERR(emlx_argmin(e, 1, false, NULL));
  emlx_release(e);
  CHECK_NULL_ERR(emlx_argmax(NULL, 0, false, NULL));
  CHECK_NULL_ERR(emlx_argmin_all(NULL, false, NULL));

  /* 0-d: argmax_all is 0, a 0-d has no axis. */
  emlx_array *s = emlx_scalar_tensor(4.0, EMLX_FLOAT32, EMLX_CPU);
  r = emlx_argmax_all(s, true, NULL);
  g = rf_result(r, EMLX_UINT32, NULL, 0, "argmax of a 0-d");
  if (g)
    CHECK_EQ_I64(g[0], 0);
  free(g);
  emlx_release(r);
  CHECK_NULL_ERR(emlx_argmax(s, 0, false, NULL));
  emlx_release(s);
}

/* Long runs and columns: the split paths. */
static void test_arg_large(void) {
  int64_t n = 300000;
  rf_val *v = malloc((size_t)n * sizeof *v);
  for (int64_t i = 0; i < n; i++)
    v[i] = rf_from_f64(EMLX_FLOAT32, (double)(i % 1000) / 8.0);
  v[250000] = rf_from_f64(EMLX_FLOAT32, 500.0);
  v[260000] = v[250000];
  v[10] = rf_from_f64(EMLX_FLOAT32, -3.0);
  v[290000] = v[10];
  emlx_array *a = rf_make(EMLX_FLOAT32, &n, 1, v);
  emlx_arg_reduce_options hi = {.last_index = true};
  for (int k = 0; k < 4; k++)
    check_arg(a, EMLX_FLOAT32, &n, 1, v, 0, k >= 2, false, k & 1, k & 1 ? &hi : NULL, "long run");
  emlx_release(a);
  v[280000] = rf_from_f64(EMLX_FLOAT32, NAN);
  v[295000] = v[280000];
  a = rf_make(EMLX_FLOAT32, &n, 1, v);
  for (int k = 0; k < 4; k++)
    check_arg(a, EMLX_FLOAT32, &n, 1, v, 0, true, false, k & 1, k & 2 ? &hi : NULL,
              "long run with NaN");
  emlx_release(a);
  int64_t shape[2] = {100000, 3};
  a = rf_make(EMLX_FLOAT32, shape, 2, v);
  for (int k = 0; k < 4; k++)
    check_arg(a, EMLX_FLOAT32, shape, 2, v, 0, false, false, k & 1, k & 2 ? &hi : NULL,
              "long columns");
  emlx_release(a);
  free(v);
}

int main(void) {
  test_grid();
  test_dtypes_and_wrap();
  test_min_nan();
  test_empty();
  test_large();
  test_errors();
  test_arg_grid();
  test_arg_special();
  test_arg_large();
  return tu_finish();
}
