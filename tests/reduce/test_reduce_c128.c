/* test_reduce_c128.c — the reductions and scans on complex128 (the rf_*
 * loops of the family's other tests hold 8-byte values): sum, product,
 * mean, max, min, all, any over each axis and all axes, on a contiguous
 * matrix, its transpose (strided) and a long row (the parallel paths), and
 * the refusals of argmax and sort (clear errors), and the inclusive / exclusive, forward / reverse cumulative sum and product,
 * against sequential references in long double complex. Max and min order
 * lexicographically (real part, then imaginary), as complex64 does. */
#include "../c128_test_util.h"

enum { R_SUM, R_PROD, R_MEAN, R_MAX, R_MIN, R_COUNT };
static const char *const rname[R_COUNT] = {"sum", "product", "mean", "max", "min"};

static emlx_array *run(int op, emlx_array *a, const int *axes, int naxes) {
  switch (op) {
  case R_SUM:
    return emlx_sum(a, axes, naxes, false);
  case R_PROD:
    return emlx_product(a, axes, naxes, false);
  case R_MEAN:
    return emlx_mean(a, axes, naxes, false);
  case R_MAX:
    return emlx_max(a, axes, naxes, false);
  default:
    return emlx_min(a, axes, naxes, false);
  }
}

static bool lex_gt(lz a, lz b) {
  return creall(a) > creall(b) || (creall(a) == creall(b) && cimagl(a) > cimagl(b));
}

/* Reduces the n values at v[0], v[s], ... of an r x c row-major matrix. */
static lz ref_fold(int op, const double *v, int64_t first, int64_t s, int64_t n) {
  lz acc = op == R_PROD ? 1.0L : 0.0L, best = zt_lz(v + 2 * first);
  for (int64_t i = 0; i < n; i++) {
    lz x = zt_lz(v + 2 * (first + i * s));
    acc = op == R_PROD ? acc * x : acc + x;
    if ((op == R_MAX && lex_gt(x, best)) || (op == R_MIN && lex_gt(best, x)))
      best = x;
  }
  if (op == R_MEAN)
    return acc / (long double)n;
  return op == R_MAX || op == R_MIN ? best : acc;
}

static void check_matrix(tu_rng *rng, int64_t r, int64_t c, bool transposed) {
  double *v = zt_random(rng, r * c);
  int64_t shape[2] = {r, c};
  emlx_array *base = zt_make(v, shape, 2);
  /* the transposed case reduces the c x r view of the same buffer */
  emlx_array *a = transposed ? emlx_transpose(base, NULL, 2) : emlx_retain(base);
  int64_t R = transposed ? c : r, C = transposed ? r : c;
  int64_t sr = transposed ? 1 : c, sc = transposed ? c : 1; /* strides of a(i, j) in v */
  for (int op = 0; op < R_COUNT; op++) {
    for (int ax = 0; ax < 3; ax++) { /* axis 0, axis 1, both */
      int axes[2] = {ax == 1 ? 1 : 0, 1};
      int naxes = ax == 2 ? 2 : 1;
      int64_t nout = ax == 0 ? C : ax == 1 ? R : 1;
      lz *ref = malloc((size_t)nout * sizeof *ref);
      for (int64_t o = 0; o < nout; o++) {
        if (ax == 0)
          ref[o] = ref_fold(op, v, o * sc, sr, R);
        else if (ax == 1)
          ref[o] = ref_fold(op, v, o * sr, sc, C);
        else if (!transposed)
          ref[o] = ref_fold(op, v, 0, 1, R * C);
        else { /* all of a transposed matrix: the same multiset, another order */
          lz acc = op == R_PROD ? 1.0L : 0.0L, best = zt_lz(v);
          for (int64_t i = 0; i < R; i++)
            for (int64_t j = 0; j < C; j++) {
              lz x = zt_lz(v + 2 * (i * sr + j * sc));
              acc = op == R_PROD ? acc * x : acc + x;
              if ((op == R_MAX && lex_gt(x, best)) || (op == R_MIN && lex_gt(best, x)))
                best = x;
            }
          ref[o] = op == R_MEAN ? acc / (long double)(R * C) : op >= R_MAX ? best : acc;
        }
      }
      char what[96];
      snprintf(what, sizeof what, "%s c128 %lldx%lld%s axes %d", rname[op], (long long)R,
               (long long)C, transposed ? " (transposed)" : "", ax);
      double *got = zt_take(run(op, a, axes, naxes), nout, what);
      /* sums of n terms: n ulps of the terms' size; products: n ulps */
      double n = (double)(ax == 0 ? R : ax == 1 ? C : R * C);
      zt_check(got, ref, nout, op >= R_MAX ? 0 : 2 * n, op == R_PROD ? 1e-300 : 1.0, what);
      free(got);
      free(ref);
    }
  }
  emlx_release(a);
  emlx_release(base);
  free(v);
}

static void test_reductions(void) {
  tu_rng rng = {2024};
  check_matrix(&rng, 5, 7, false);
  check_matrix(&rng, 5, 7, true);
  check_matrix(&rng, 3, 40000, false); /* long rows: the parallel paths */
}

static void test_logic(void) {
  /* all / any: an element is true when either part is non-zero (-0.0 is false) */
  const double v[8] = {0.0, 1.0, -0.0, 0.0, 2.0, 0.0, -0.0, -0.0};
  int64_t n = 4;
  emlx_array *a = zt_make(v, &n, 1);
  emlx_array *al = emlx_all(a, NULL, 0, false), *an = emlx_any(a, NULL, 0, false);
  unsigned char *ra = tu_read_raw(al), *rn = tu_read_raw(an);
  CHECK(ra && ra[0] == 0 && rn && rn[0] == 1);
  free(ra), free(rn);
  int64_t two = 2;
  emlx_array *b = zt_make(v, &two, 1), *bl = emlx_all(b, NULL, 0, false);
  ra = tu_read_raw(bl);
  CHECK(ra && ra[0] == 0); /* (0, 1) true, (-0, 0) false */
  free(ra);
  emlx_release(bl), emlx_release(b), emlx_release(an), emlx_release(al), emlx_release(a);
  /* argmax refuses complex128 with a message, never a wrong index */
  emlx_array *z = zt_make(v, &n, 1);
  emlx_array *am = emlx_argmax(z, 0, false, false);
  CHECK(am == NULL || emlx_eval(&am, 1) != 0);
  CHECK(strstr(emlx_last_error(), "complex128") != NULL);
  emlx_clear_error();
  /* so do sort and topk (the sort kernel's key table has no complex128 row) */
  emlx_array *so = emlx_sort(z, 0, NULL);
  CHECK(so == NULL || emlx_eval(&so, 1) != 0);
  CHECK(strstr(emlx_last_error(), "complex128") != NULL);
  emlx_clear_error();
  emlx_release(so), emlx_release(am), emlx_release(z);
}

static void test_scans(void) {
  tu_rng rng = {77};
  int64_t r = 4, c = 9;
  double *v = zt_random(&rng, r * c);
  int64_t shape[2] = {r, c};
  emlx_array *a = zt_make(v, shape, 2);
  for (int prod = 0; prod < 2; prod++)
    for (int axis = 0; axis < 2; axis++)
      for (int rev = 0; rev < 2; rev++)
        for (int inc = 0; inc < 2; inc++) {
          lz *ref = malloc((size_t)(r * c) * sizeof *ref);
          int64_t len = axis ? c : r, lines = axis ? r : c;
          for (int64_t l = 0; l < lines; l++) {
            lz acc = prod ? 1.0L : 0.0L;
            for (int64_t k = 0; k < len; k++) {
              int64_t p = rev ? len - 1 - k : k;
              int64_t at = axis ? l * c + p : p * c + l;
              lz x = zt_lz(v + 2 * at);
              if (inc)
                acc = prod ? acc * x : acc + x;
              ref[at] = acc;
              if (!inc)
                acc = prod ? acc * x : acc + x;
            }
          }
          char what[96];
          snprintf(what, sizeof what, "cumulative_%s c128 axis %d reverse %d inclusive %d",
                   prod ? "product" : "sum", axis, rev, inc);
          emlx_array *s = prod ? emlx_cumulative_product(a, axis, rev, inc)
                               : emlx_cumulative_sum(a, axis, rev, inc);
          double *got = zt_take(s, r * c, what);
          zt_check(got, ref, r * c, 4.0 * (double)len, prod ? 1e-300 : 1.0, what);
          free(got);
          free(ref);
        }
  emlx_release(a);
  free(v);
}

int main(void) {
  test_reductions();
  test_logic();
  test_scans();
  return tu_finish();
}
