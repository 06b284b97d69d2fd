/* test_math_libm.c — float64 transcendentals equal the C library's libm bit
 * for bit (math_libm.c; Nx.BinaryBackend computes f64 with Erlang's :math,
 * which is libm), on random inputs over each function's domain and beyond,
 * on tiny, huge and special inputs (signed units, infinities, NaN, domain
 * edges), contiguous, strided and through a fused chain; erfc on f32, f16
 * and bf16 against libm's erfc in double (SLEEF's erfc), where 1 - erf would
 * lose every digit. Runs at every SIMD level (once per level, through CTest): the
 * libm path is the same at each. */
#include <math.h>

#include "test_util.h"

typedef struct lcase {
  const char *name;
  emlx_array *(*fn)(emlx_array *);
  double (*ref)(double);
  double lo, hi;
} lcase;

static double r_exp(double x) { return exp(x); }
static double r_expm1(double x) { return expm1(x); }
static double r_log(double x) { return log(x); }
static double r_log1p(double x) { return log1p(x); }
static double r_sin(double x) { return sin(x); }
static double r_cos(double x) { return cos(x); }
static double r_tan(double x) { return tan(x); }
static double r_asin(double x) { return asin(x); }
static double r_acos(double x) { return acos(x); }
static double r_atan(double x) { return atan(x); }
static double r_sinh(double x) { return sinh(x); }
static double r_cosh(double x) { return cosh(x); }
static double r_tanh(double x) { return tanh(x); }
static double r_asinh(double x) { return asinh(x); }
static double r_acosh(double x) { return acosh(x); }
static double r_atanh(double x) { return atanh(x); }
static double r_erf(double x) { return erf(x); }
static double r_erfc(double x) { return erfc(x); }

static const lcase cases[] = {
    {"exp", emlx_exp, r_exp, -745, 710},     {"expm1", emlx_expm1, r_expm1, -40, 710},
    {"log", emlx_log, r_log, 0, 1e300},      {"log1p", emlx_log1p, r_log1p, -1, 1e10},
    {"sin", emlx_sin, r_sin, -1e6, 1e6},     {"cos", emlx_cos, r_cos, -1e6, 1e6},
    {"tan", emlx_tan, r_tan, -1e3, 1e3},     {"asin", emlx_asin, r_asin, -1, 1},
    {"acos", emlx_acos, r_acos, -1, 1},      {"atan", emlx_atan, r_atan, -1e6, 1e6},
    {"sinh", emlx_sinh, r_sinh, -720, 720},  {"cosh", emlx_cosh, r_cosh, -720, 720},
    {"tanh", emlx_tanh, r_tanh, -25, 25},    {"asinh", emlx_asinh, r_asinh, -1e10, 1e10},
    {"acosh", emlx_acosh, r_acosh, 1, 1e10}, {"atanh", emlx_atanh, r_atanh, -1, 1},
    {"erf", emlx_erf, r_erf, -7, 7},         {"erfc", emlx_erfc, r_erfc, -7, 28},
};
#define NCASES (sizeof cases / sizeof cases[0])

#define NRAND 20000
static const double specials[] = {
    0.0,    -0.0,    1.0,  -1.0,  0.5,   -0.5,   2.0,   3.0,    0.1,  0.9,      1e-300,    -1e-300,
    5e-324, -5e-324, 1e-8, -1e-8, 1e300, -1e300, 710.5, -745.5, 27.0, INFINITY, -INFINITY, NAN};
#define NSPECIAL (sizeof specials / sizeof specials[0])

/* Inputs: specials, random in [lo, hi], random magnitudes (log-uniform
 * over 1e-20..1e20, both signs), in a buffer of n + specials. */
static double *inputs(const lcase *c, uint64_t seed, int64_t *count) {
  int64_t n = NRAND + (int64_t)NSPECIAL;
  double *v = malloc((size_t)n * sizeof(double));
  tu_rng r = {seed};
  for (size_t i = 0; i < NSPECIAL; i++)
    v[i] = specials[i];
  for (int64_t i = (int64_t)NSPECIAL; i < n; i++) {
    if (i % 2)
      v[i] = tu_uniform(&r, c->lo, c->hi);
    else {
      double m = pow(10.0, tu_uniform(&r, -20, 20));
      v[i] = (i % 4) ? m : -m;
    }
  }
  *count = n;
  return v;
}

static bool same_bits(double a, double b) {
  if (isnan(a) && isnan(b))
    return true;
  uint64_t x, y;
  memcpy(&x, &a, 8);
  memcpy(&y, &b, 8);
  return x == y;
}

static void check_equal(const char *name, const char *how, const double *in, const double *got,
                        int64_t n, double (*ref)(double)) {
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < n; i++) {
    volatile double x = in[i]; /* keep the compiler from folding ref(x) */
    if (!same_bits(got[i], ref(x))) {
      if (first < 0)
        first = i;
      bad++;
    }
  }
  if (first >= 0) {
    volatile double x = in[first];
    CHECK_MSG(false, "%s f64 %s: %lld of %lld differ from libm, first %.17g -> %.17g (libm %.17g)",
              name, how, (long long)bad, (long long)n, in[first], got[first], ref(x));
  } else {
    CHECK_MSG(true, "%s f64 %s", name, how);
  }
}

static void test_f64_bit_exact(void) {
  for (size_t k = 0; k < NCASES; k++) {
    const lcase *c = &cases[k];
    int64_t n;
    double *in = inputs(c, 0x5eed0000u + k, &n);
    emlx_array *a = tu_make1(EMLX_FLOAT64, n, in);

    /* contiguous */
    emlx_array *r = c->fn(a);
    double *got = tu_read(r);
    if (got)
      check_equal(c->name, "contiguous", in, got, n, c->ref);
    free(got);
    emlx_release(r);

    /* strided: every third element of the input */
    int64_t start = 1, stop = n, stride = 3;
    emlx_array *s = emlx_slice(a, &start, &stop, &stride, 1);
    int64_t m = (n - 1 + 2) / 3;
    double *sin_ = malloc((size_t)m * sizeof(double));
    for (int64_t i = 0; i < m; i++)
      sin_[i] = in[1 + 3 * i];
    r = c->fn(s);
    got = tu_read(r);
    if (got)
      check_equal(c->name, "strided", sin_, got, m, c->ref);
    free(got);
    free(sin_);
    emlx_release(r);
    emlx_release(s);

    /* fused: fn(x * 1) runs through the fused interpreter's loop (x * 1 is
     * x, -0.0 included) */
    emlx_array *unit = emlx_full(NULL, 0, 1.0, EMLX_FLOAT64, EMLX_CPU);
    emlx_array *plus = emlx_multiply(a, unit);
    r = c->fn(plus);
    got = tu_read(r);
    if (got)
      check_equal(c->name, "fused", in, got, n, c->ref);
    free(got);
    emlx_release(r);
    emlx_release(plus);
    emlx_release(unit);

    emlx_release(a);
    free(in);
  }
}

/* erfc in f32/f16/bf16 (SLEEF): within a few ulp of libm's erfc in double,
 * out to where 1 - erf(x) is 0 but erfc(x) is still a normal f32. */
static void test_erfc_low_precision(void) {
  static const emlx_dtype dts[] = {EMLX_FLOAT32, EMLX_FLOAT16, EMLX_BFLOAT16};
  int64_t n = 4001;
  double *v = tu_iota(n, -4.0, 0.0035); /* -4 .. 10 */
  for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
    emlx_dtype d = dts[k];
    double *q = malloc((size_t)n * sizeof(double)), *ref = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
      q[i] = tu_quant(d, v[i]);
      ref[i] = erfc(q[i]);
    }
    emlx_array *a = tu_make1(d, n, q);
    emlx_array *r = emlx_erfc(a);
    double *got = tu_read(r);
    if (got)
      tu_check_values(got, ref, n, d, d == EMLX_FLOAT32 ? 2 : 1, "erfc");
    free(got);
    emlx_release(r);
    emlx_release(a);
    free(q);
    free(ref);
  }
  free(v);
  /* erfc(9) ~ 4.1e-37: 1 - erf(9) is exactly 0 in f32. */
  double x = 9.0;
  emlx_array *a = tu_make1(EMLX_FLOAT32, 1, &x);
  emlx_array *r = emlx_erfc(a);
  double *got = tu_read(r);
  if (got)
    CHECK_MSG(got[0] > 4.0e-37 && got[0] < 4.2e-37, "erfc(9) f32 = %g", got[0]);
  free(got);
  emlx_release(r);
  emlx_release(a);
}

static void test_erfc_errors(void) {
  double x = 1.0;
  emlx_array *c = tu_make1(EMLX_COMPLEX64, 1, &x);
  CHECK_NULL_ERR(emlx_erfc(c));
  CHECK_NULL_ERR(emlx_erfc(NULL));
  emlx_release(c);
  /* integers compute in float32, as erf does */
  emlx_array *i = tu_make1(EMLX_INT32, 1, &x);
  emlx_array *r = emlx_erfc(i);
  CHECK(r && emlx_array_dtype(r) == EMLX_FLOAT32);
  emlx_release(r);
  emlx_release(i);
}

int main(void) {
  test_f64_bit_exact();
  test_erfc_low_precision();
  test_erfc_errors();
  return tu_finish();
}
