/* test_math_unary.c — the math family's unary ops against f64 references
 * (libm in double, computed here): every float function on f32, f64, f16,
 * bf16 and on integer/bool inputs (which compute in float32), laid out
 * contiguously, transposed, sliced with a step, broadcast and empty;
 * special values (NaN, infinities, signed zeros); exhaustive f16 and bf16
 * checks of the functions we implement ourselves or stage through f32;
 * complex64 against C99 <complex.h> in double; integer abs/sign/bitwise_not
 * exactly (wrapping abs of INT_MIN); the identities; every error case.
 *
 * Tolerances (ulp of the correctly rounded f32 result): sqrt, abs, floor,
 * ceil, round, sign exact; rsqrt 1; SLEEF functions (log, log1p, expm1,
 * trig, inverse trig, hyperbolic, erf, erfc) 2; our tanh 2, erf_inv 2,
 * sigmoid 3. f64: 4 ulp. f16/bf16: 1 ulp of the correctly rounded result.
 * Integers exact. CTest runs the program at every ISA level
 * (EMLX_ISA). */
#include <complex.h>

#include "math_test_util.h"

/* ---- references ------------------------------------------------------------------- */
static double r_sqrt(double x) { return sqrt(x); }
static double r_rsqrt(double x) { return 1.0 / sqrt(x); }
static double r_log(double x) { return log(x); }
static double r_log1p(double x) { return log1p(x); }
static double r_expm1(double x) { return expm1(x); }
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
static double r_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double r_abs(double x) { return fabs(x); }
static double r_floor(double x) { return floor(x); }
static double r_ceil(double x) { return ceil(x); }
static double r_round(double x) { return nearbyint(x); } /* ties to even */
static double r_round_away(double x) { return round(x); }
static double r_sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }
/* erf_inv by Newton's method on libm's erf/erfc, from a crude start. */
static double r_erf_inv(double y) {
  if (isnan(y) || fabs(y) > 1)
    return NAN;
  if (fabs(y) == 1)
    return copysign(INFINITY, y);
  if (y == 0)
    return y;
  double a = fabs(y), z = a < 0.9 ? a : sqrt(-log(1 - a));
  for (int k = 0; k < 60; k++) {
    double res = a < 0.5 ? erf(z) - a : (1 - a) - erfc(z);
    double step = res / (1.1283791670955126 * exp(-z * z));
    z -= step;
    if (fabs(step) <= 1e-17 * z)
      break;
  }
  return copysign(z, y);
}

typedef struct fcase {
  const char *name;
  mt_un_fn fn;
  mt_ref1 ref;
  double lo, hi; /* input domain */
  double ulp32;  /* f32 tolerance */
  bool integral; /* exact results (no tolerance anywhere) */
} fcase;

static const fcase fcases[] = {
    {"sqrt", emlx_sqrt, r_sqrt, 0, 100, 0, false},
    {"rsqrt", emlx_rsqrt, r_rsqrt, 0.01, 100, 1, false},
    {"log", emlx_log, r_log, 0.001, 100, 2, false},
    {"log1p", emlx_log1p, r_log1p, -0.99, 10, 2, false},
    {"expm1", emlx_expm1, r_expm1, -10, 10, 2, false},
    {"sin", emlx_sin, r_sin, -10, 10, 2, false},
    {"cos", emlx_cos, r_cos, -10, 10, 2, false},
    {"tan", emlx_tan, r_tan, -1.5, 1.5, 2, false},
    {"asin", emlx_asin, r_asin, -1, 1, 2, false},
    {"acos", emlx_acos, r_acos, -1, 1, 2, false},
    {"atan", emlx_atan, r_atan, -10, 10, 2, false},
    {"sinh", emlx_sinh, r_sinh, -10, 10, 2, false},
    {"cosh", emlx_cosh, r_cosh, -10, 10, 2, false},
    {"tanh", emlx_tanh, r_tanh, -10, 10, 2, false},
    {"asinh", emlx_asinh, r_asinh, -10, 10, 2, false},
    {"acosh", emlx_acosh, r_acosh, 1, 100, 2, false},
    {"atanh", emlx_atanh, r_atanh, -0.99, 0.99, 2, false},
    {"erf", emlx_erf, r_erf, -4, 4, 2, false},
    {"erfc", emlx_erfc, r_erfc, -4, 9, 2, false},
    {"erf_inv", emlx_erf_inv, r_erf_inv, -0.9999, 0.9999, 2, false},
    {"sigmoid", emlx_sigmoid, r_sigmoid, -30, 30, 3, false},
    {"abs", emlx_abs, r_abs, -10, 10, 0, true},
    {"sign", emlx_sign, r_sign, -3, 3, 0, true},
    {"floor", emlx_floor, r_floor, -10, 10, 0, true},
    {"ceil", emlx_ceil, r_ceil, -10, 10, 0, true},
    {"round", emlx_round, r_round, -10, 10, 0, true},
    {"round_half_away", emlx_round_half_away, r_round_away, -10, 10, 0, true},
};
#define NF (sizeof fcases / sizeof fcases[0])

/* Values in [lo, hi]; every fourth a multiple of 1/2 (ties for rounding,
 * exact small values), the first a zero when the domain holds one. */
static void domain_values(const fcase *c, double *v, uint64_t seed) {
  tu_rng r = {seed};
  for (int64_t i = 0; i < MT_N; i++) {
    double x = tu_uniform(&r, c->lo, c->hi);
    if (i % 4 == 1)
      x = floor(x * 2) / 2;
    if (x < c->lo)
      x = c->lo;
    v[i] = x;
  }
  if (c->lo <= 0 && c->hi >= 0)
    v[0] = 0.0;
}

static void test_float_functions(void) {
  static const emlx_dtype fd[4] = {EMLX_FLOAT32, EMLX_FLOAT64, EMLX_FLOAT16, EMLX_BFLOAT16};
  double v[MT_N];
  for (size_t k = 0; k < NF; k++) {
    const fcase *c = &fcases[k];
    domain_values(c, v, 100 + k);
    for (int j = 0; j < 4; j++) {
      emlx_dtype d = fd[j];
      double ulp = c->integral ? 0 : d == EMLX_FLOAT32 ? c->ulp32 : d == EMLX_FLOAT64 ? 4 : 1;
      mt_check_unary(c->name, c->fn, c->ref, d, d, v, ulp);
    }
    /* Integer and bool inputs: float32 results, except for the
     * dtype-preserving ops. */
    for (int64_t i = 0; i < MT_N; i++)
      v[i] = round(v[i]);
    emlx_dtype od = c->integral ? EMLX_INT32 : EMLX_FLOAT32;
    mt_check_unary(c->name, c->fn, c->ref, EMLX_INT32, od, v, c->integral ? 0 : c->ulp32);
    if (!c->integral && c->lo <= 0 && c->hi >= 1) {
      for (int64_t i = 0; i < MT_N; i++)
        v[i] = (double)(i % 2);
      mt_check_unary(c->name, c->fn, c->ref, EMLX_BOOL, EMLX_FLOAT32, v, c->ulp32);
      mt_check_unary(c->name, c->fn, c->ref, EMLX_UINT8, EMLX_FLOAT32, v, c->ulp32);
    }
  }
}

/* Every f16 and every bf16 value through the functions that stage halves
 * through f32: within 1 ulp of the correctly rounded result. */
static void test_half_exhaustive(void) {
  static const fcase *pick[] = {&fcases[0],  &fcases[1],  &fcases[2],  &fcases[13], &fcases[17],
                                &fcases[18], &fcases[19], &fcases[24], &fcases[25]};
  int64_t n = 65536;
  double *vals = malloc((size_t)n * sizeof *vals), *ref = malloc((size_t)n * sizeof *ref);
  for (int h = 0; h < 2; h++) {
    emlx_dtype d = h ? EMLX_BFLOAT16 : EMLX_FLOAT16;
    uint16_t *bits = malloc((size_t)n * 2);
    for (int64_t i = 0; i < n; i++) {
      bits[i] = (uint16_t)i;
      vals[i] = h ? tu_bf16_decode(bits[i]) : tu_f16_decode(bits[i]);
    }
    emlx_array *a = emlx_from_blob(bits, d, &n, 1, EMLX_CPU);
    for (size_t k = 0; k < sizeof pick / sizeof pick[0]; k++) {
      for (int64_t i = 0; i < n; i++)
        ref[i] = pick[k]->ref(vals[i]);
      emlx_array *r = pick[k]->fn(a);
      char w[64];
      snprintf(w, sizeof w, "%s every value", pick[k]->name);
      tu_check_array(r, d, &n, 1, ref, pick[k]->integral ? 0 : 1, w);
      emlx_release(r);
    }
    emlx_release(a);
    free(bits);
  }
  free(vals);
  free(ref);
}

/* NaN, infinities and signed zeros on f32 and f64. */
static void test_specials(void) {
  static const double sp[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5};
  int64_t n = sizeof sp / sizeof sp[0];
  for (int f64 = 0; f64 < 2; f64++) {
    emlx_dtype d = f64 ? EMLX_FLOAT64 : EMLX_FLOAT32;
    emlx_array *a = tu_make1(d, n, sp);
    for (size_t k = 0; k < NF; k++) {
      double ref[16];
      for (int64_t i = 0; i < n; i++)
        ref[i] = fcases[k].ref(sp[i]);
      emlx_array *r = fcases[k].fn(a);
      char w[64];
      snprintf(w, sizeof w, "%s specials", fcases[k].name);
      tu_check_array(r, d, &n, 1, ref, fcases[k].integral ? 0 : 4, w);
      /* The sign of zero results must match too. */
      double *got = r ? tu_read(r) : NULL;
      for (int64_t i = 0; got && i < n; i++)
        if (ref[i] == 0)
          CHECK_MSG(signbit(got[i]) == signbit(ref[i]), "%s(%g) has the sign of %g", fcases[k].name,
                    sp[i], ref[i]);
      free(got);
      emlx_release(r);
    }
    emlx_release(a);
  }
  /* Named edge cases. */
  float m05 = -0.5f;
  int64_t one = 1;
  emlx_array *x = emlx_from_blob(&m05, EMLX_FLOAT32, &one, 1, EMLX_CPU);
  emlx_array *r = emlx_round(x);
  CHECK(mt_f32_bits_of(r) == 0x80000000u); /* round(-0.5) == -0.0 */
  emlx_release(r);
  r = emlx_round_half_away(x);
  CHECK(mt_f32_bits_of(r) == tu_f32_bits(-1.0f));
  emlx_release(r);
  emlx_release(x);
}

/* Integer dtypes: abs, sign, bitwise_not exactly; identities. */
static double wrap_to(emlx_dtype d, double v) { return tu_quant(d, v); }

static void test_integers(void) {
  static const emlx_dtype id[8] = {EMLX_UINT8, EMLX_UINT16, EMLX_UINT32, EMLX_UINT64,
                                   EMLX_INT8,  EMLX_INT16,  EMLX_INT32,  EMLX_INT64};
  static const double minv[8] = {0, 0, 0, 0, -128, -32768, -2147483648.0, -9223372036854775808.0};
  for (int k = 0; k < 8; k++) {
    emlx_dtype d = id[k];
    bool sgn = k >= 4;
    double v[MT_N], ra[MT_N], rs[MT_N], rn[MT_N];
    tu_rng r = {7 + (uint64_t)k};
    for (int64_t i = 0; i < MT_N; i++) {
      v[i] = (double)tu_randint(&r, sgn ? -100 : 0, 100);
      if (i == 3)
        v[i] = minv[k];
    }
    for (int64_t i = 0; i < MT_N; i++) {
      double x = tu_quant(d, v[i]);
      ra[i] = x == minv[k] ? x : fabs(x); /* abs(INT_MIN) wraps to INT_MIN */
      rs[i] = x > 0 ? 1 : x < 0 ? -1 : 0;
      rn[i] = sgn ? -x - 1 : (k == 3 ? 18446744073709551615.0 - x : wrap_to(d, -x - 1));
    }
    int64_t sh[2] = {MT_R, MT_C};
    emlx_array *a = tu_make(d, sh, 2, v);
    emlx_array *ab = emlx_abs(a), *sg = emlx_sign(a), *bn = emlx_bitwise_not(a);
    tu_check_array(ab, d, sh, 2, ra, 0, "abs int");
    tu_check_array(sg, d, sh, 2, rs, 0, "sign int");
    if (k != 3 && k != 7) /* 64-bit patterns do not round-trip through double */
      tu_check_array(bn, d, sh, 2, rn, 0, "bitwise_not int");
    emlx_release(ab);
    emlx_release(sg);
    emlx_release(bn);
    /* floor/ceil/round/conjugate/real of integers are the input itself. */
    emlx_array *f = emlx_floor(a), *c = emlx_round(a), *re = emlx_real(a), *cj = emlx_conjugate(a);
    CHECK(f == a && c == a && re == a && cj == a);
    emlx_release(f);
    emlx_release(c);
    emlx_release(re);
    emlx_release(cj);
    /* imag of a real array is zeros of its dtype; is_nan/is_infinity false. */
    double zeros[MT_N] = {0};
    emlx_array *im = emlx_imag(a), *nn = emlx_is_nan(a), *in = emlx_is_infinity(a);
    tu_check_array(im, d, sh, 2, zeros, 0, "imag of int");
    tu_check_array(nn, EMLX_BOOL, sh, 2, zeros, 0, "is_nan of int");
    tu_check_array(in, EMLX_BOOL, sh, 2, zeros, 0, "is_infinity of int");
    emlx_release(im);
    emlx_release(nn);
    emlx_release(in);
    emlx_release(a);
  }
  /* 64-bit bitwise_not exactly through the raw bits. */
  int64_t s64[3] = {0, -1, INT64_MIN}, n3 = 3, got[3];
  emlx_array *a = emlx_from_blob(s64, EMLX_INT64, &n3, 1, EMLX_CPU), *b = emlx_bitwise_not(a);
  CHECK_OK(emlx_to_blob(b, got, sizeof got));
  CHECK(got[0] == -1 && got[1] == 0 && got[2] == INT64_MAX);
  emlx_release(a);
  emlx_release(b);
  /* bool: abs/sign identity, bitwise_not and logical_not negate. */
  double bv[4] = {0, 1, 1, 0}, nb[4] = {1, 0, 0, 1};
  int64_t n4 = 4;
  a = tu_make1(EMLX_BOOL, 4, bv);
  emlx_array *ab = emlx_abs(a), *sg = emlx_sign(a);
  CHECK(ab == a && sg == a);
  emlx_release(ab);
  emlx_release(sg);
  b = emlx_bitwise_not(a);
  tu_check_array(b, EMLX_BOOL, &n4, 1, nb, 0, "bitwise_not bool");
  emlx_release(b);
  b = emlx_logical_not(a);
  tu_check_array(b, EMLX_BOOL, &n4, 1, nb, 0, "logical_not bool");
  emlx_release(b);
  emlx_release(a);
}

/* Predicates on floats and logical_not of every kind of input. */
static void test_predicates(void) {
  static const double sp[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.5, -2.0, 1e30};
  int64_t n = 8;
  double rnan[8], rnot[8];
  for (int i = 0; i < n; i++) {
    rnan[i] = isnan(sp[i]);
    rnot[i] = sp[i] == 0;
  }
  static const emlx_dtype fd[4] = {EMLX_FLOAT32, EMLX_FLOAT64, EMLX_FLOAT16, EMLX_BFLOAT16};
  for (int k = 0; k < 4; k++) {
    emlx_array *a = tu_make1(fd[k], n, sp);
    emlx_array *p = emlx_is_nan(a), *q = emlx_is_infinity(a), *l = emlx_logical_not(a);
    double rinf_k[8];
    for (int i = 0; i < n; i++) /* 1e30 overflows to inf in f16 */
      rinf_k[i] = isinf(tu_quant(fd[k], sp[i]));
    tu_check_array(p, EMLX_BOOL, &n, 1, rnan, 0, "is_nan");
    tu_check_array(q, EMLX_BOOL, &n, 1, rinf_k, 0, "is_infinity");
    tu_check_array(l, EMLX_BOOL, &n, 1, rnot, 0, "logical_not float");
    emlx_release(p);
    emlx_release(q);
    emlx_release(l);
    emlx_release(a);
  }
  double iv[4] = {0, 3, -2, 0}, inot[4] = {1, 0, 0, 1};
  int64_t n4 = 4;
  emlx_array *a = tu_make1(EMLX_INT16, 4, iv), *l = emlx_logical_not(a);
  tu_check_array(l, EMLX_BOOL, &n4, 1, inot, 0, "logical_not int");
  emlx_release(l);
  emlx_release(a);
}

/* ---- complex64 ---------------------------------------------------------------------------- */
typedef double _Complex (*cref)(double _Complex);
static double _Complex c_rsqrt(double _Complex z) { return 1.0 / csqrt(z); }
static double _Complex c_log1p(double _Complex z) { return clog(1.0 + z); }
static double _Complex c_conj(double _Complex z) { return conj(z); }

static emlx_array *make_c64(const float *parts, int64_t n) {
  return emlx_from_blob(parts, EMLX_COMPLEX64, &n, 1, EMLX_CPU);
}

static void test_complex(void) {
  enum { N = 64 };
  float parts[2 * N];
  tu_rng r = {99};
  for (int i = 0; i < 2 * N; i++)
    parts[i] = (float)tu_uniform(&r, -2, 2);
  parts[0] = parts[1] = 0.0f;
  int64_t n = N;
  emlx_array *a = make_c64(parts, n);
  struct {
    const char *name;
    mt_un_fn fn;
    cref ref;
  } cs[] = {{"sqrt", emlx_sqrt, csqrt},
            {"rsqrt", emlx_rsqrt, c_rsqrt},
            {"log", emlx_log, clog},
            {"log1p", emlx_log1p, c_log1p},
            {"sin", emlx_sin, csin},
            {"cos", emlx_cos, ccos},
            {"tan", emlx_tan, ctan},
            {"asin", emlx_asin, casin},
            {"acos", emlx_acos, cacos},
            {"atan", emlx_atan, catan},
            {"sinh", emlx_sinh, csinh},
            {"cosh", emlx_cosh, ccosh},
            {"tanh", emlx_tanh, ctanh},
            {"asinh", emlx_asinh, casinh},
            {"acosh", emlx_acosh, cacosh},
            {"atanh", emlx_atanh, catanh},
            {"conjugate", emlx_conjugate, c_conj}};
  for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
    emlx_array *o = cs[k].fn(a);
    float got[2 * N];
    bool ok = o && emlx_array_dtype(o) == EMLX_COMPLEX64 && emlx_to_blob(o, got, sizeof got) == 0;
    int bad = 0;
    for (int i = 1; ok && i < N; i++) { /* element 0 (zero) hits poles of some */
      double _Complex z = CMPLX((double)parts[2 * i], (double)parts[2 * i + 1]);
      double _Complex w = cs[k].ref(z);
      double scale = fmax(fabs(creal(w)), fabs(cimag(w)));
      double tol = 4 * tu_ulp(EMLX_FLOAT32, scale) + 1e-30;
      if (fabs((double)got[2 * i] - creal(w)) > tol ||
          fabs((double)got[2 * i + 1] - cimag(w)) > tol)
        bad++;
    }
    CHECK_MSG(ok && bad == 0, "complex %s: %d of %d elements off", cs[k].name, bad, N - 1);
    emlx_release(o);
  }
  /* log1p near 0 keeps relative precision: the reference is the series
   * z - z^2/2 + z^3/3 - z^4/4 (|z| <= 1e-3: the rest is below 1e-15). */
  {
    float tiny[8] = {1e-10f, 2e-10f, -3e-8f, 1e-9f, 1e-20f, -1e-20f, 4e-4f, -7e-4f};
    emlx_array *t = make_c64(tiny, 4), *o = emlx_log1p(t);
    float got[8];
    bool ok = o && emlx_to_blob(o, got, sizeof got) == 0;
    int bad = 0;
    for (int i = 0; ok && i < 4; i++) {
      double _Complex z = CMPLX((double)tiny[2 * i], (double)tiny[2 * i + 1]);
      double _Complex w = z - z * z / 2 + z * z * z / 3 - z * z * z * z / 4;
      if (fabs((double)got[2 * i] - creal(w)) > 4 * tu_ulp(EMLX_FLOAT32, fabs(creal(w))) ||
          fabs((double)got[2 * i + 1] - cimag(w)) > 4 * tu_ulp(EMLX_FLOAT32, fabs(cimag(w))))
        bad++;
    }
    CHECK_MSG(ok && bad == 0, "complex log1p near 0: %d of 4 elements off", bad);
    emlx_release(o);
    emlx_release(t);
  }
  /* abs -> float32 magnitude, real/imag -> parts, sign -> z/|z|, round both
   * parts, is_nan. */
  double rabs[N], rre[N], rim[N];
  for (int i = 0; i < N; i++) {
    rabs[i] = hypot(parts[2 * i], parts[2 * i + 1]);
    rre[i] = parts[2 * i];
    rim[i] = parts[2 * i + 1];
  }
  emlx_array *o = emlx_abs(a);
  tu_check_array(o, EMLX_FLOAT32, &n, 1, rabs, 1, "abs complex");
  emlx_release(o);
  o = emlx_real(a);
  tu_check_array(o, EMLX_FLOAT32, &n, 1, rre, 0, "real complex");
  emlx_release(o);
  o = emlx_imag(a);
  tu_check_array(o, EMLX_FLOAT32, &n, 1, rim, 0, "imag complex");
  emlx_release(o);
  float sg[2 * N], rd[2 * N];
  o = emlx_sign(a);
  CHECK(o && emlx_to_blob(o, sg, sizeof sg) == 0);
  emlx_release(o);
  o = emlx_round(a);
  CHECK(o && emlx_to_blob(o, rd, sizeof rd) == 0);
  emlx_release(o);
  bool sok = sg[0] == 0 && sg[1] == 0, rok = true;
  for (int i = 1; i < N; i++) {
    sok &= fabs((double)sg[2 * i] - (double)parts[2 * i] / rabs[i]) < 1e-6 &&
           fabs((double)sg[2 * i + 1] - (double)parts[2 * i + 1] / rabs[i]) < 1e-6;
    rok &= rd[2 * i] == (float)nearbyint(parts[2 * i]) &&
           rd[2 * i + 1] == (float)nearbyint(parts[2 * i + 1]);
  }
  CHECK_MSG(sok, "sign of complex is z / |z|");
  CHECK_MSG(rok, "round of complex rounds both parts");
  /* Infinite parts: the unit on the infinite axis, NaN for two (NumPy 2's
   * results, which z / |z| gives as NaN). */
  {
    float zi[12] = {1, INFINITY,  INFINITY, 1,        -INFINITY, 1,
                    1, -INFINITY, INFINITY, INFINITY, NAN,       INFINITY};
    float want[12] = {0, 1, 1, 0, -1, 0, 0, -1, NAN, NAN, 0, 1};
    emlx_array *z = make_c64(zi, 6), *s = emlx_sign(z);
    float got[12];
    bool ok = s && emlx_to_blob(s, got, sizeof got) == 0;
    for (int i = 0; ok && i < 12; i++)
      ok = isnan(want[i]) ? isnan(got[i]) : got[i] == want[i];
    CHECK_MSG(ok, "sign of complex with infinite parts (sign(1 + inf j) == 1j, "
                  "sign(inf + 1j) == 1)");
    emlx_release(s);
    emlx_release(z);
  }
  /* round_half_away on complex64: both parts, ties away from zero. */
  {
    float zr[8] = {0.5f, -0.5f, 2.5f, -2.5f, 1.49f, -7.5f, 3.0f, 0.0f};
    float want[8] = {1, -1, 3, -3, 1, -8, 3, 0};
    emlx_array *z = make_c64(zr, 4), *ra = emlx_round_half_away(z);
    float got[8];
    bool ok =
        ra && emlx_array_dtype(ra) == EMLX_COMPLEX64 && emlx_to_blob(ra, got, sizeof got) == 0;
    for (int i = 0; ok && i < 8; i++)
      ok = got[i] == want[i];
    CHECK_MSG(ok, "round_half_away of complex64 rounds both parts, ties away: %s",
              ra ? "" : emlx_last_error());
    emlx_release(ra);
    emlx_release(z);
  }
  float nanc[4] = {0.0f, NAN, INFINITY, 1.0f};
  emlx_array *b = make_c64(nanc, 2);
  emlx_array *p = emlx_is_nan(b), *q = emlx_is_infinity(b);
  int64_t two = 2;
  double rn[2] = {1, 0}, ri[2] = {0, 1};
  tu_check_array(p, EMLX_BOOL, &two, 1, rn, 0, "is_nan complex");
  tu_check_array(q, EMLX_BOOL, &two, 1, ri, 0, "is_infinity complex");
  emlx_release(p);
  emlx_release(q);
  emlx_release(b);
  emlx_release(a);
}

/* A large contiguous f32 input: the loops write big outputs with streaming
 * stores from L1 tiles (chunks of >= 512K elements, unaligned chunk
 * starts included). */
static void test_large(void) {
  int64_t n = (INT64_C(1) << 22) + 12345;
  float *x = malloc((size_t)n * sizeof *x), *got = malloc((size_t)n * sizeof *got);
  tu_rng r = {4242};
  for (int64_t i = 0; i < n; i++)
    x[i] = (float)tu_uniform(&r, -6, 6);
  emlx_array *a = emlx_from_blob(x, EMLX_FLOAT32, &n, 1, EMLX_CPU);
  struct {
    mt_un_fn fn;
    mt_ref1 ref;
    double ulp;
  } cs[3] = {{emlx_tanh, r_tanh, 2}, {emlx_sigmoid, r_sigmoid, 3}, {emlx_erf, r_erf, 2}};
  for (int k = 0; k < 3; k++) {
    emlx_array *o = cs[k].fn(a);
    int64_t bad = 0;
    if (CHECK(o && emlx_to_blob(o, got, (size_t)n * sizeof *got) == 0))
      for (int64_t i = 0; i < n; i++) {
        double ref = cs[k].ref((double)x[i]);
        bad += fabs((double)got[i] - ref) > cs[k].ulp * tu_ulp(EMLX_FLOAT32, ref);
      }
    CHECK_MSG(bad == 0, "large op %d: %lld of %lld elements off", k, (long long)bad, (long long)n);
    emlx_release(o);
  }
  emlx_release(a);
  free(x);
  free(got);
}

/* ---- errors ------------------------------------------------------------------------------ */
static void test_errors(void) {
  for (size_t k = 0; k < NF; k++)
    CHECK_NULL_ERR(fcases[k].fn(NULL));
  mt_un_fn others[] = {emlx_conjugate, emlx_real,        emlx_imag,       emlx_bitwise_not,
                       emlx_is_nan,    emlx_is_infinity, emlx_logical_not};
  for (size_t k = 0; k < sizeof others / sizeof others[0]; k++)
    CHECK_NULL_ERR(others[k](NULL));
  float parts[2] = {1, 2};
  emlx_array *c = make_c64(parts, 1);
  CHECK_NULL_ERR(emlx_erf(c));
  CHECK_NULL_ERR(emlx_erf_inv(c));
  CHECK_NULL_ERR(emlx_expm1(c));
  CHECK_NULL_ERR(emlx_sigmoid(c));
  CHECK_NULL_ERR(emlx_floor(c));
  CHECK_NULL_ERR(emlx_ceil(c));
  CHECK_NULL_ERR(emlx_bitwise_not(c));
  emlx_release(c);
  double one = 1;
  emlx_array *f = tu_make1(EMLX_FLOAT32, 1, &one);
  CHECK_NULL_ERR(emlx_bitwise_not(f));
  emlx_release(f);
}

int main(void) {
  test_float_functions();
  test_half_exhaustive();
  test_specials();
  test_integers();
  test_predicates();
  test_complex();
  test_large();
  test_errors();
  return tu_finish();
}
