/* test_scan.c — cumulative sum / product / max / min against sequential
 * references computed here (exact integers with wrapping, f64 for floats):
 * every dtype, both directions, inclusive and exclusive, contiguous and
 * strided / reversed / broadcast inputs, empty inputs, NaN propagation,
 * identities of exclusive scans, the two-pass parallel paths (checked for
 * thread-count independence), in-place (donated) scans, and errors. */
#include "reduce_family_util.h"

enum { S_SUM, S_PROD, S_MAX, S_MIN, S_COUNT };
static const char *const sop_name[S_COUNT] = {"cumulative_sum", "cumulative_product",
                                              "cumulative_max", "cumulative_min"};

static emlx_array *run_scan(int op, emlx_array *a, int axis, bool reverse, bool inclusive) {
  switch (op) {
  case S_SUM:
    return emlx_cumulative_sum(a, axis, reverse, inclusive);
  case S_PROD:
    return emlx_cumulative_product(a, axis, reverse, inclusive);
  case S_MAX:
    return emlx_cumulative_max(a, axis, reverse, inclusive);
  default:
    return emlx_cumulative_min(a, axis, reverse, inclusive);
  }
}

static emlx_dtype scan_dtype(int op, emlx_dtype d) {
  return op == S_SUM && d == EMLX_BOOL ? EMLX_INT32 : d;
}

/* The identity of an exclusive scan's first element, as a value of od. */
static rf_val identity(int op, emlx_dtype od) {
  if (op == S_SUM)
    return rf_from_i64(od, 0);
  if (op == S_PROD)
    return rf_from_i64(od, 1);
  bool hi = op == S_MIN;
  if (od == EMLX_COMPLEX64)
    return hi ? rf_complex(INFINITY, INFINITY) : rf_complex(-INFINITY, -INFINITY);
  if (tu_is_float(od))
    return rf_from_f64(od, hi ? INFINITY : -INFINITY);
  if (od == EMLX_BOOL)
    return hi;
  if (rf_is_unsigned(od))
    return hi ? rf_from_i64(od, -1) : 0;
  int bits = (int)tu_dsize(od) * 8;
  int64_t mx = bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
  return rf_from_i64(od, hi ? mx : -mx - 1);
}

/* Running state of the reference for one line. */
typedef struct ref_state {
  uint64_t iacc;
  double re, im, abs_sum;
  rf_val best;
  bool seen, nan;
  int64_t count;
} ref_state;

static void ref_step(int op, emlx_dtype d, ref_state *s, rf_val x) {
  s->count++;
  bool cplx = d == EMLX_COMPLEX64, fl = tu_is_float(d) || cplx;
  if (op == S_SUM || op == S_PROD) {
    if (!fl) {
      uint64_t v = (uint64_t)rf_i64(d, x);
      s->iacc = op == S_SUM ? s->iacc + v : s->iacc * v;
    } else if (op == S_SUM) {
      s->re += rf_f64(d, x);
      s->im += rf_imag(d, x);
      s->abs_sum += fabs(rf_f64(d, x)) + fabs(rf_imag(d, x));
    } else {
      double xr = rf_f64(d, x), xi = rf_imag(d, x);
      double r = s->re * xr - s->im * xi, i = s->re * xi + s->im * xr;
      s->re = r;
      s->im = i;
    }
    return;
  }
  if (rf_is_nan(d, x))
    s->nan = true;
  int c = s->seen ? rf_cmp(d, x, s->best) : 1;
  if (op == S_MIN)
    c = -c;
  if (!s->seen || c > 0)
    s->best = x;
  s->seen = true;
}

/* Does got (a value of od) match the state's value? */
static bool ref_match(int op, emlx_dtype d, emlx_dtype od, const ref_state *s, rf_val got,
                      char *msg, size_t msz) {
  bool cplx = od == EMLX_COMPLEX64, fl = tu_is_float(od) || cplx;
  if (op == S_MAX || op == S_MIN) {
    if (s->nan) {
      if (rf_is_nan(od, got))
        return true;
      snprintf(msg, msz, "want NaN, got %g", rf_f64(od, got));
      return false;
    }
    if (!rf_is_nan(od, got) && rf_cmp(d, got, s->best) == 0)
      return true;
    snprintf(msg, msz, "got %.17g%+.17gi want %.17g%+.17gi", rf_f64(od, got), rf_imag(od, got),
             rf_f64(d, s->best), rf_imag(d, s->best));
    return false;
  }
  if (!fl) {
    rf_val want = rf_from_i64(od, (int64_t)s->iacc);
    if (got == want)
      return true;
    snprintf(msg, msz, "got %lld want %lld", (long long)rf_i64(od, got),
             (long long)rf_i64(od, want));
    return false;
  }
  double eps = od == EMLX_FLOAT64 ? 0x1p-53 : 0x1p-24; /* the accumulator's */
  double gr = rf_f64(od, got), gi = rf_imag(od, got);
  /* Products: the rigorous relative bound (count + 2) eps. Sums: the test's
   * values make every partial sum exact in the accumulator, so only the final
   * rounding (and a few eps of the magnitudes) may differ. */
  double tol =
      op == S_SUM ? 4 * eps * s->abs_sum : (double)(s->count + 2) * eps * hypot(s->re, s->im);
  tol += tu_ulp(od, s->re) + tu_ulp(od, s->im);
  if (fabs(gr - s->re) <= tol && fabs(gi - s->im) <= tol)
    return true;
  if (isinf(s->re) && gr == s->re)
    return true;
  snprintf(msg, msz, "got %.17g%+.17gi want %.17g%+.17gi", gr, gi, s->re, s->im);
  return false;
}

static void check_scan(int op, emlx_array *a, emlx_dtype d, const int64_t *shape, int nd,
                       const rf_val *v, int axis, bool reverse, bool inclusive, const char *what) {
  emlx_dtype od = scan_dtype(op, d);
  emlx_array *r = run_scan(op, a, axis, reverse, inclusive);
  rf_val *got = rf_result(r, od, shape, nd, what);
  if (got) {
    int ax = axis < 0 ? axis + nd : axis;
    int64_t n = shape[ax], inner = 1, total = tu_numel(shape, nd);
    for (int k = ax + 1; k < nd; k++)
      inner *= shape[k];
    int64_t lines = n > 0 ? total / n : 0, bad = 0;
    rf_val id = identity(op, od);
    char msg[200];
    for (int64_t l = 0; l < lines; l++) {
      int64_t base = (l / inner) * n * inner + l % inner;
      ref_state s = {
          op == S_PROD ? 1u : 0u, op == S_PROD ? 1.0 : 0.0, 0.0, 0.0, 0, false, false, 0};
      for (int64_t t = 0; t < n; t++) {
        int64_t i = reverse ? n - 1 - t : t, at = base + i * inner;
        bool ok;
        if (inclusive) {
          ref_step(op, d, &s, v[at]);
          ok = ref_match(op, d, od, &s, got[at], msg, sizeof msg);
        } else if (t == 0) {
          ok = got[at] == id;
          snprintf(msg, sizeof msg, "exclusive identity: got bits %llx want %llx",
                   (unsigned long long)got[at], (unsigned long long)id);
          ref_step(op, d, &s, v[at]);
        } else {
          ok = ref_match(op, d, od, &s, got[at], msg, sizeof msg);
          ref_step(op, d, &s, v[at]);
        }
        if (!ok && bad++ < 3)
          fprintf(stderr, "  %s: line %lld position %lld: %s\n", what, (long long)l, (long long)i,
                  msg);
      }
    }
    CHECK_MSG(bad == 0, "%s: %lld elements differ", what, (long long)bad);
  }
  free(got);
  emlx_release(r);
}

static void test_grid(void) {
  static const struct {
    int nd;
    int64_t shape[3];
    int axis;
  } cases[] = {{2, {5, 7}, 0},    {2, {5, 7}, 1},     {3, {3, 4, 6}, 0},
               {3, {3, 4, 6}, 1}, {3, {3, 4, 6}, -1}, {1, {50}, 0},
               {2, {0, 3}, 0},    {2, {3, 0}, 1},     {2, {4, 0}, 0}};
  tu_rng rng = {4242};
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_dtype d = tu_all_dtypes[di];
    if (rf_skip_c128(d))
      continue;
    for (int op = 0; op < S_COUNT; op++) {
      rf_profile prof = op == S_SUM ? RF_GENERAL : op == S_PROD ? RF_PROD : RF_DUPS;
      for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        for (int lay = 0; lay < RF_LAYOUT_COUNT; lay++) {
          rf_val *v;
          emlx_array *a =
              rf_input(d, cases[ci].shape, cases[ci].nd, (rf_layout)lay, &rng, prof, &v);
          for (int dir = 0; a && dir < 4; dir++) {
            bool reverse = dir & 1, inclusive = !(dir & 2);
            char what[160];
            snprintf(what, sizeof what, "%s %s case %zu %s reverse=%d inclusive=%d", sop_name[op],
                     tu_dname(d), ci, rf_layout_name[lay], reverse, inclusive);
            check_scan(op, a, d, cases[ci].shape, cases[ci].nd, v, cases[ci].axis, reverse,
                       inclusive, what);
          }
          emlx_release(a);
          free(v);
        }
      }
    }
  }
}

static void test_specials(void) {
  /* int8 sums wrap in int8; bool sums give int32; bool products are AND. */
  int64_t n = 3;
  rf_val i8[3] = {100, 100, 100};
  emlx_array *a = rf_make(EMLX_INT8, &n, 1, i8);
  emlx_array *r = emlx_cumulative_sum(a, 0, false, true);
  rf_val *g = rf_result(r, EMLX_INT8, &n, 1, "int8 cumsum wraps");
  if (g)
    CHECK(rf_i64(EMLX_INT8, g[1]) == -56 && rf_i64(EMLX_INT8, g[2]) == 44);
  free(g);
  emlx_release(r);
  emlx_release(a);
  rf_val b[3] = {1, 0, 1};
  a = rf_make(EMLX_BOOL, &n, 1, b);
  r = emlx_cumulative_sum(a, 0, false, true);
  g = rf_result(r, EMLX_INT32, &n, 1, "bool cumsum");
  if (g)
    CHECK(g[0] == 1 && g[1] == 1 && g[2] == 2);
  free(g);
  emlx_release(r);
  r = emlx_cumulative_product(a, 0, false, true);
  g = rf_result(r, EMLX_BOOL, &n, 1, "bool cumprod");
  if (g)
    CHECK(g[0] == 1 && g[1] == 0 && g[2] == 0);
  free(g);
  emlx_release(r);
  emlx_release(a);
  /* f16 accumulates in f32: 60000 + 60000 - 60000 is 60000 (not a sticky inf). */
  rf_val h[3] = {rf_from_f64(EMLX_FLOAT16, 60000), rf_from_f64(EMLX_FLOAT16, 60000),
                 rf_from_f64(EMLX_FLOAT16, -60000)};
  a = rf_make(EMLX_FLOAT16, &n, 1, h);
  r = emlx_cumulative_sum(a, 0, false, true);
  g = rf_result(r, EMLX_FLOAT16, &n, 1, "f16 cumsum in f32");
  if (g)
    CHECK(isinf(rf_f64(EMLX_FLOAT16, g[1])) && rf_f64(EMLX_FLOAT16, g[2]) == 60000.0);
  free(g);
  emlx_release(r);
  emlx_release(a);
  /* NaN sticks in max / min from its position on. */
  rf_val f[4] = {rf_from_f64(EMLX_FLOAT32, 1), rf_from_f64(EMLX_FLOAT32, NAN),
                 rf_from_f64(EMLX_FLOAT32, 5), rf_from_f64(EMLX_FLOAT32, -5)};
  n = 4;
  a = rf_make(EMLX_FLOAT32, &n, 1, f);
  r = emlx_cumulative_min(a, 0, false, true);
  g = rf_result(r, EMLX_FLOAT32, &n, 1, "cummin NaN");
  if (g)
    CHECK(rf_f64(EMLX_FLOAT32, g[0]) == 1 && isnan(rf_f64(EMLX_FLOAT32, g[1])) &&
          isnan(rf_f64(EMLX_FLOAT32, g[3])));
  free(g);
  emlx_release(r);
  emlx_release(a);
}

/* The two-pass paths (long lines, few wide units) and thread independence. */
static void test_large(void) {
  tu_rng rng = {99};
  static const struct {
    int nd;
    int64_t shape[2];
    int axis;
    emlx_dtype d;
  } cfg[] = {{1, {300000}, 0, EMLX_FLOAT32},    {2, {2, 200000}, 1, EMLX_FLOAT64},
             {2, {100000, 3}, 0, EMLX_FLOAT32}, {2, {2000, 300}, 0, EMLX_FLOAT32},
             {1, {300000}, 0, EMLX_INT64},      {1, {200000}, 0, EMLX_FLOAT16},
             {2, {3, 90000}, 1, EMLX_INT32}};
  for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
    emlx_dtype d = cfg[c].d;
    int64_t n = tu_numel(cfg[c].shape, cfg[c].nd);
    rf_val *v = malloc((size_t)n * sizeof *v);
    for (int op = 0; op < S_COUNT; op++) {
      for (int64_t i = 0; i < n; i++) /* exact partial sums; products near 1 */
        v[i] = op == S_PROD
                   ? rf_from_f64(d, tu_is_float(d) ? 1.0 + (double)tu_randint(&rng, -8, 8) / 4096.0
                                                   : (double)tu_randint(&rng, -3, 3))
                   : rf_random(&rng, d, RF_GENERAL);
      emlx_array *a = rf_make(d, cfg[c].shape, cfg[c].nd, v);
      for (int dir = 0; dir < 4; dir++) {
        bool reverse = dir & 1, inclusive = !(dir & 2);
        char what[128];
        snprintf(what, sizeof what, "large %s %s config %zu reverse=%d inclusive=%d", sop_name[op],
                 tu_dname(d), c, reverse, inclusive);
        if (op != S_PROD || !tu_is_float(d) || dir == 0)
          check_scan(op, a, d, cfg[c].shape, cfg[c].nd, v, cfg[c].axis, reverse, inclusive, what);
        if (dir != 3)
          continue;
        int old = emlx_set_num_threads(1);
        emlx_array *r1 = run_scan(op, a, cfg[c].axis, reverse, inclusive);
        emlx_set_num_threads(old > 0 ? old : 2);
        emlx_array *r2 = run_scan(op, a, cfg[c].axis, reverse, inclusive);
        unsigned char *b1 = tu_read_raw(r1), *b2 = tu_read_raw(r2);
        CHECK_MSG(b1 && b2 && memcmp(b1, b2, emlx_nbytes(r1)) == 0,
                  "%s: the same bits on 1 and 2 threads", what);
        free(b1);
        free(b2);
        emlx_release(r1);
        emlx_release(r2);
      }
      emlx_release(a);
    }
    free(v);
  }
  /* Uniform random floats (inexact sums): thread independence of the split. */
  int64_t n = 1 << 19;
  float *f = malloc((size_t)n * sizeof *f);
  for (int64_t i = 0; i < n; i++)
    f[i] = (float)tu_uniform(&rng, -1, 1);
  emlx_array *a = emlx_from_blob(f, EMLX_FLOAT32, &n, 1, EMLX_CPU);
  int old = emlx_set_num_threads(1);
  emlx_array *r1 = emlx_cumulative_sum(a, 0, false, true);
  emlx_set_num_threads(old > 0 ? old : 2);
  emlx_array *r2 = emlx_cumulative_sum(a, 0, false, true);
  unsigned char *b1 = tu_read_raw(r1), *b2 = tu_read_raw(r2);
  CHECK(b1 && b2 && memcmp(b1, b2, (size_t)n * 4) == 0);
  free(b1);
  free(b2);
  emlx_release(r1);
  emlx_release(r2);
  emlx_release(a);
  free(f);
}

/* A donated input is scanned in place; the original stays intact. */
static void test_in_place(void) {
  int64_t shape[2] = {64, 33};
  tu_rng rng = {5};
  rf_val *v;
  emlx_array *a = rf_input(EMLX_INT32, shape, 2, RF_CONTIG, &rng, RF_GENERAL, &v);
  for (int axis = 0; axis < 2; axis++) {
    emlx_array *b = emlx_copy(a);
    emlx_array *c = emlx_cumulative_sum(b, axis, axis == 1, axis == 0);
    emlx_release(b);
    check_scan(S_SUM, a, EMLX_INT32, shape, 2, v, axis, axis == 1, axis == 0, "reference");
    rf_val *got = rf_result(c, EMLX_INT32, shape, 2, "in place");
    emlx_array *d = emlx_cumulative_sum(a, axis, axis == 1, axis == 0);
    rf_val *want = rf_result(d, EMLX_INT32, shape, 2, "not in place");
    CHECK(got && want && memcmp(got, want, (size_t)(64 * 33) * sizeof *got) == 0);
    free(got);
    free(want);
    emlx_release(c);
    emlx_release(d);
  }
  rf_val *orig = rf_read(a);
  CHECK(orig && memcmp(orig, v, (size_t)(64 * 33) * sizeof *v) == 0);
  free(orig);
  emlx_release(a);
  free(v);
}

static void test_errors(void) {
  int64_t shape[2] = {2, 3};
  emlx_array *a = emlx_ones(shape, 2, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *s = emlx_scalar_tensor(1.0, EMLX_FLOAT32, EMLX_CPU);
  for (int op = 0; op < S_COUNT; op++) {
    CHECK_NULL_ERR(run_scan(op, NULL, 0, false, true));
    CHECK_NULL_ERR(run_scan(op, a, 2, false, true));
    CHECK_NULL_ERR(run_scan(op, a, -3, true, false));
    CHECK_NULL_ERR(run_scan(op, s, 0, false, true));
  }
  emlx_release(s);
  emlx_release(a);
}

int main(void) {
  test_grid();
  test_specials();
  test_large();
  test_in_place();
  test_errors();
  return tu_finish();
}
