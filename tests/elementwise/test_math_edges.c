/* test_math_edges.c — the unary transcendentals at the ends of their range:
 * overflow and underflow thresholds, saturation points, poles, +-0,
 * subnormals, the largest finite values, +-inf and NaN, for every float
 * dtype and every ISA level. The references are the correctly rounded
 * results in math_edges_ref.h (mpmath, math_edges_gen.py); each result
 * must lie within the ulp bound include/emlx/elementwise.h states for the
 * function and dtype, counted in steps of the dtype's values (so the step
 * from the largest finite value to inf is one ulp, and a zero of the wrong
 * sign is an error). */
#include <math.h>
#include <string.h>

#include "test_util.h"

typedef enum { ME_F64, ME_F32, ME_F16, ME_BF16, ME_NFMT } me_fmt;
typedef struct {
  const char *fn;
  me_fmt fmt;
  double x, ref;
} me_case;
#include "math_edges_ref.h"

static const emlx_dtype me_dtype[ME_NFMT] = {EMLX_FLOAT64, EMLX_FLOAT32, EMLX_FLOAT16,
                                             EMLX_BFLOAT16};

/* The header's bounds: f32 per function (exp, sin, cos: libm's double
 * rounded once, 1 ulp where that double rounding errs), f64 SLEEF's 1 ulp (erf_inv 4),
 * f16 / bf16 1 ulp of the correctly rounded value. */
typedef struct {
  const char *name;
  emlx_array *(*op)(emlx_array *);
  double ulp_f32, ulp_f64;
} me_fn;
static const me_fn fns[] = {
    {"exp", emlx_exp, 1, 1},     {"expm1", emlx_expm1, 2, 1},     {"log", emlx_log, 2, 1},
    {"log1p", emlx_log1p, 2, 1}, {"sqrt", emlx_sqrt, 1, 1},       {"rsqrt", emlx_rsqrt, 1, 1},
    {"sin", emlx_sin, 1, 1},     {"cos", emlx_cos, 1, 1},         {"tan", emlx_tan, 2, 1},
    {"asin", emlx_asin, 2, 1},   {"acos", emlx_acos, 2, 1},       {"atan", emlx_atan, 2, 1},
    {"sinh", emlx_sinh, 2, 1},   {"cosh", emlx_cosh, 2, 1},       {"tanh", emlx_tanh, 2, 1},
    {"asinh", emlx_asinh, 2, 1}, {"acosh", emlx_acosh, 2, 1},     {"atanh", emlx_atanh, 2, 1},
    {"erf", emlx_erf, 2, 1},     {"erf_inv", emlx_erf_inv, 2, 4}, {"sigmoid", emlx_sigmoid, 3, 1},
};

/* v's position among the format's values in order (+0 and -0 both 0). */
static int64_t ordinal(double v, me_fmt f) {
  uint64_t bits, mag;
  bool neg;
  if (f == ME_F64) {
    memcpy(&bits, &v, 8);
    neg = bits >> 63;
    mag = bits & ~(1ull << 63);
  } else if (f == ME_F32) {
    uint32_t b = tu_f32_bits((float)v);
    neg = b >> 31;
    mag = b & 0x7FFFFFFFu;
  } else {
    uint16_t h = f == ME_F16 ? tu_round_f16(v) : tu_round_bf16(v);
    neg = h >> 15;
    mag = h & 0x7FFFu;
  }
  return neg ? -(int64_t)mag : (int64_t)mag;
}

static void check_group(const me_fn *fn, me_fmt f, const me_case *c, int64_t n) {
  emlx_dtype d = me_dtype[f];
  double *xs = malloc((size_t)n * sizeof *xs);
  for (int64_t i = 0; i < n; i++)
    xs[i] = c[i].x;
  emlx_array *a = tu_make1(d, n, xs);
  emlx_array *y = a ? fn->op(a) : NULL;
  double *got = y ? tu_read(y) : NULL;
  CHECK_MSG(got != NULL, "%s(%s): %s", fn->name, tu_dname(d), emlx_last_error());
  double tol = f == ME_F32 ? fn->ulp_f32 : f == ME_F64 ? fn->ulp_f64 : 1.0;
  int bad = 0;
  for (int64_t i = 0; got && i < n; i++) {
    double g = got[i], r = c[i].ref;
    bool ok;
    if (isnan(r) || isnan(g))
      ok = isnan(r) && isnan(g);
    else if (r == 0.0 && g == 0.0)
      ok = signbit(r) == signbit(g);
    else
      ok = (double)llabs(ordinal(g, f) - ordinal(r, f)) <= tol;
    if (!ok && bad++ < 8)
      fprintf(stderr, "  %s(%s) at %a: got %a, want %a (within %g ulp)\n", fn->name, tu_dname(d),
              c[i].x, g, r, tol);
  }
  CHECK_MSG(got && bad == 0, "%s(%s): %d of %lld range-end values beyond %g ulp", fn->name,
            tu_dname(d), bad, (long long)n, tol);
  free(got);
  free(xs);
  emlx_release(y);
  emlx_release(a);
}

static void test_range_ends(void) {
  int64_t ncases = (int64_t)(sizeof me_cases / sizeof me_cases[0]);
  for (size_t k = 0; k < sizeof fns / sizeof fns[0]; k++)
    for (int f = 0; f < ME_NFMT; f++) {
      int64_t first = -1, n = 0;
      for (int64_t i = 0; i < ncases; i++)
        if (me_cases[i].fmt == (me_fmt)f && strcmp(me_cases[i].fn, fns[k].name) == 0) {
          if (first < 0)
            first = i;
          n++;
        }
      CHECK_MSG(n > 0 && first + n <= ncases, "%s has cases for format %d", fns[k].name, f);
      if (n > 0)
        check_group(&fns[k], (me_fmt)f, me_cases + first, n); /* the generator groups them */
    }
}

/* The points the issue named, spelled out: finite where the true value is. */
static void test_named_points(void) {
  static const struct {
    emlx_array *(*op)(emlx_array *);
    emlx_dtype d;
    double x, want;
  } pts[] = {
      {emlx_sinh, EMLX_FLOAT32, 89.0, 2.2448064e+38},
      {emlx_cosh, EMLX_FLOAT32, -89.0, 2.2448064e+38},
      {emlx_sinh, EMLX_FLOAT64, 710.0, 1.1169973830808557e+308},
      {emlx_asinh, EMLX_FLOAT32, 1e30, 69.7707},
      {emlx_asinh, EMLX_FLOAT64, 1e200, 461.2101657793691},
      {emlx_acosh, EMLX_FLOAT64, 1e200, 461.2101657793691},
      {emlx_log1p, EMLX_FLOAT32, 3e38, 88.59685},
      {emlx_log1p, EMLX_FLOAT64, 1.1e307, 706.9889},
  };
  for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++) {
    emlx_array *a = tu_make1(pts[i].d, 1, &pts[i].x);
    emlx_array *y = pts[i].op(a);
    double *g = tu_read(y);
    CHECK_MSG(g && isfinite(g[0]) && fabs(g[0] - pts[i].want) <= 1e-6 * fabs(pts[i].want),
              "point %zu (%s at %g): got %g, want %g", i, tu_dname(pts[i].d), pts[i].x,
              g ? g[0] : (double)NAN, pts[i].want);
    free(g);
    emlx_release(y);
    emlx_release(a);
  }
}

int main(void) {
  test_range_ends();
  test_named_points();
  return tu_finish();
}
