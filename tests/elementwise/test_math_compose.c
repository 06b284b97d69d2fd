/* test_math_compose.c — logaddexp, log2, log10, isfinite, isposinf,
 * isneginf, nan_to_num, square, reciprocal, linspace and tri against
 * references computed here (f64 / long double, numpy's special values),
 * for every float dtype, integer inputs, broadcast and strided inputs, and
 * their error cases. Runs again at every ISA level. */
#include "test_util.h"

static const emlx_dtype fdts[] = {EMLX_FLOAT32, EMLX_FLOAT64, EMLX_FLOAT16, EMLX_BFLOAT16};

static void test_logaddexp(void) {
  const double av[8] = {0, 1, -3, 30, -INFINITY, INFINITY, NAN, 700};
  const double bv[8] = {0, -2, -3, -30, -INFINITY, 5, 1, 699};
  for (int t = 0; t < 4; t++) {
    emlx_dtype d = fdts[t];
    emlx_array *a = tu_make1(d, 8, av), *b = tu_make1(d, 8, bv);
    double ref[8];
    for (int i = 0; i < 8; i++) {
      long double x = tu_quant(d, av[i]), y = tu_quant(d, bv[i]);
      if (isnan((double)x) || isnan((double)y))
        ref[i] = NAN;
      else if (x == y)
        ref[i] = (double)(x + logl(2.0L));
      else {
        long double hi = x > y ? x : y, lo = x > y ? y : x;
        ref[i] = (double)(hi + log1pl(expl(lo - hi)));
      }
    }
    emlx_array *r = emlx_logaddexp(a, b);
    tu_check_array(r, d, (int64_t[]){8}, 1, ref, d == EMLX_FLOAT64 ? 4 : 3, "logaddexp");
    emlx_release(r);
    emlx_release(a);
    emlx_release(b);
  }
  /* integers give float32; broadcasting */
  const double iv[3] = {1, 2, 3};
  emlx_array *i = tu_make1(EMLX_INT32, 3, iv), *z = emlx_scalar_tensor(0, EMLX_INT32, EMLX_CPU);
  emlx_array *r = emlx_logaddexp(i, z);
  double ref[3];
  for (int k = 0; k < 3; k++)
    ref[k] = log(exp(iv[k]) + 1);
  tu_check_array(r, EMLX_FLOAT32, (int64_t[]){3}, 1, ref, 3, "logaddexp int32 broadcast");
  emlx_release(r);
  emlx_release(i);
  emlx_release(z);
  CHECK_NULL_ERR(emlx_logaddexp(NULL, NULL));
  emlx_array *c = emlx_scalar_tensor_complex(1, 1, EMLX_CPU);
  CHECK_NULL_ERR(emlx_logaddexp(c, c));
  emlx_release(c);
}

static void test_logs(void) {
  const double v[9] = {1, 2, 8, 1024, 10, 1000, 0.1, 0, -1};
  for (int t = 0; t < 4; t++) {
    emlx_dtype d = fdts[t];
    emlx_array *a = tu_make1(d, 9, v);
    double r2[9], r10[9];
    for (int i = 0; i < 9; i++) {
      double x = tu_quant(d, v[i]);
      r2[i] = (double)log2l(x);
      r10[i] = (double)log10l(x);
    }
    emlx_array *l2 = emlx_log2(a), *l10 = emlx_log10(a);
    double ulp = d == EMLX_FLOAT64 ? 2 : 0.5; /* narrower floats: correctly rounded here */
    tu_check_array(l2, d, (int64_t[]){9}, 1, r2, ulp, "log2");
    tu_check_array(l10, d, (int64_t[]){9}, 1, r10, ulp, "log10");
    emlx_release(l2);
    emlx_release(l10);
    emlx_release(a);
  }
  /* exact at powers (numpy gives 3 and 3 exactly) */
  const double p[2] = {8, 1000};
  emlx_array *a = tu_make1(EMLX_FLOAT32, 2, p), *l2 = emlx_log2(a), *l10 = emlx_log10(a);
  double *g2 = tu_read(l2), *g10 = tu_read(l10);
  CHECK(g2 && g2[0] == 3.0 && g10 && g10[1] == 3.0);
  free(g2);
  free(g10);
  emlx_release(l2);
  emlx_release(l10);
  emlx_release(a);
  const double iv[2] = {4, 100};
  emlx_array *i = tu_make1(EMLX_UINT8, 2, iv), *li = emlx_log2(i);
  CHECK(li && emlx_array_dtype(li) == EMLX_FLOAT32);
  emlx_release(li);
  emlx_release(i);
  CHECK_NULL_ERR(emlx_log10(NULL));
}

static void test_predicates_and_nan_to_num(void) {
  const double v[6] = {1, NAN, INFINITY, -INFINITY, -0.0, 1e300};
  for (int t = 0; t < 4; t++) {
    emlx_dtype d = fdts[t];
    emlx_array *a = tu_make1(d, 6, v);
    double rf[6], rp[6], rn[6], r0[6], r1[6];
    double big = d == EMLX_FLOAT16    ? 65504
                 : d == EMLX_BFLOAT16 ? 0x1.fep127
                 : d == EMLX_FLOAT32  ? (double)FLT_MAX
                                      : DBL_MAX;
    for (int i = 0; i < 6; i++) {
      double x = tu_quant(d, v[i]);
      rf[i] = isfinite(x);
      rp[i] = isinf(x) && x > 0;
      rn[i] = isinf(x) && x < 0;
      r0[i] = isnan(x) ? 0 : isinf(x) ? (x > 0 ? big : -big) : x;
      r1[i] = isnan(x) ? -7 : isinf(x) ? (x > 0 ? 5 : -5) : x;
    }
    emlx_array *f = emlx_isfinite(a), *p = emlx_isposinf(a), *n = emlx_isneginf(a);
    tu_check_array(f, EMLX_BOOL, (int64_t[]){6}, 1, rf, 0, "isfinite");
    tu_check_array(p, EMLX_BOOL, (int64_t[]){6}, 1, rp, 0, "isposinf");
    tu_check_array(n, EMLX_BOOL, (int64_t[]){6}, 1, rn, 0, "isneginf");
    emlx_array *z0 = emlx_nan_to_num(a, 0, NULL, NULL);
    double pi = 5, ni = -5;
    emlx_array *z1 = emlx_nan_to_num(a, -7, &pi, &ni);
    tu_check_array(z0, d, (int64_t[]){6}, 1, r0, 0, "nan_to_num defaults");
    tu_check_array(z1, d, (int64_t[]){6}, 1, r1, 0, "nan_to_num values");
    emlx_release(f);
    emlx_release(p);
    emlx_release(n);
    emlx_release(z0);
    emlx_release(z1);
    emlx_release(a);
  }
  /* integers: all finite, nan_to_num the identity */
  const double iv[3] = {-1, 0, 7};
  emlx_array *i = tu_make1(EMLX_INT16, 3, iv), *f = emlx_isfinite(i),
             *z = emlx_nan_to_num(i, 0, NULL, NULL);
  const double ones[3] = {1, 1, 1};
  tu_check_array(f, EMLX_BOOL, (int64_t[]){3}, 1, ones, 0, "isfinite int16");
  tu_check_array(z, EMLX_INT16, (int64_t[]){3}, 1, iv, 0, "nan_to_num int16");
  emlx_release(f);
  emlx_release(z);
  emlx_release(i);
  emlx_array *c = emlx_scalar_tensor_complex(1, 1, EMLX_CPU);
  CHECK_NULL_ERR(emlx_nan_to_num(c, 0, NULL, NULL));
  CHECK_NULL_ERR(emlx_isposinf(c));
  emlx_release(c);
  CHECK_NULL_ERR(emlx_isfinite(NULL));
}

static void test_square_reciprocal(void) {
  const double v[5] = {-3, 0.5, 0, 7, -0.25};
  const int64_t sh[2] = {5, 2};
  double big[10];
  for (int k = 0; k < 10; k++)
    big[k] = v[k / 2] * (k % 2 ? -1 : 1);
  emlx_array *m = tu_make(EMLX_FLOAT32, sh, 2, big);
  /* strided: column 1 */
  emlx_array *col = emlx_slice(m, (int64_t[]){0, 1}, (int64_t[]){5, 2}, NULL, 2);
  double sq[5], rc[5];
  for (int k = 0; k < 5; k++) {
    sq[k] = v[k] * v[k];
    rc[k] = 1.0 / -v[k];
  }
  emlx_array *s = emlx_square(col), *r = emlx_reciprocal(col);
  tu_check_array(s, EMLX_FLOAT32, ((int64_t[]){5, 1}), 2, sq, 0, "square strided");
  tu_check_array(r, EMLX_FLOAT32, ((int64_t[]){5, 1}), 2, rc, 0, "reciprocal strided");
  emlx_release(s);
  emlx_release(r);
  emlx_array *i = tu_make1(EMLX_INT32, 5, (double[]){-3, 2, 0, 7, 4});
  emlx_array *ri = emlx_reciprocal(i), *si = emlx_square(i);
  tu_check_array(ri, EMLX_FLOAT32, (int64_t[]){5}, 1,
                 ((double[]){-1.0 / 3, 0.5, INFINITY, 1.0 / 7, 0.25}), 0, "reciprocal int32");
  tu_check_array(si, EMLX_INT32, (int64_t[]){5}, 1, ((double[]){9, 4, 0, 49, 16}), 0,
                 "square int32");
  emlx_release(ri);
  emlx_release(si);
  emlx_release(i);
  emlx_release(col);
  emlx_release(m);
  CHECK_NULL_ERR(emlx_square(NULL));
  CHECK_NULL_ERR(emlx_reciprocal(NULL));
}

static void test_linspace_tri(void) {
  static const int64_t nums[] = {0, 1, 2, 5, 50};
  for (int t = 0; t < 4; t++)
    for (int q = 0; q < 5; q++) {
      int64_t n = nums[q];
      double ref[50];
      for (int64_t i = 0; i < n; i++) {
        double tt = n > 1 ? (double)i / (double)(n - 1) : 0;
        ref[i] = n > 1 ? -2.0 * (1 - tt) + 3.5 * tt : -2.0;
      }
      emlx_array *l = emlx_linspace(-2.0, 3.5, n, fdts[t], EMLX_CPU);
      tu_check_array(l, fdts[t], &n, 1, ref, 0, "linspace");
      double *g = n > 0 ? tu_read(l) : NULL;
      if (n > 1)
        CHECK(g && g[0] == -2.0 && g[n - 1] == 3.5); /* both ends exact */
      free(g);
      emlx_release(l);
    }
  emlx_array *li = emlx_linspace(0, 10, 4, EMLX_INT32, EMLX_CPU);
  tu_check_array(li, EMLX_INT32, (int64_t[]){4}, 1, ((double[]){0, 3, 6, 10}), 0, "linspace int32");
  emlx_release(li);
  CHECK_NULL_ERR(emlx_linspace(0, 1, -1, EMLX_FLOAT32, EMLX_CPU));
  CHECK_NULL_ERR(emlx_linspace(0, NAN, 3, EMLX_FLOAT32, EMLX_CPU));
  CHECK_NULL_ERR(emlx_linspace(0, 1, 3, EMLX_COMPLEX64, EMLX_CPU));

  for (int64_t k = -4; k <= 4; k++) {
    double ref[12];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++)
        ref[i * 4 + j] = j - i <= k;
    emlx_array *t = emlx_tri(3, 4, k, EMLX_FLOAT32, EMLX_CPU);
    tu_check_array(t, EMLX_FLOAT32, ((int64_t[]){3, 4}), 2, ref, 0, "tri");
    emlx_release(t);
  }
  CHECK_NULL_ERR(emlx_tri(-1, 2, 0, EMLX_FLOAT32, EMLX_CPU));
}

int main(void) {
  test_logaddexp();
  test_logs();
  test_predicates_and_nan_to_num();
  test_square_reciprocal();
  test_linspace_tri();
  return tu_finish();
}
