/* test_complex128.c — complex128 as a dtype and in the elementwise family:
 * from_blob/to_blob bits, casts to and from every dtype (and back), the
 * promotion entries that make c128 (through real ops' result dtypes and
 * values), full / scalar_tensor_complex128 / item, and every elementwise op
 * complex64 supports, unfused and fused, against references computed here
 * in long double with glibc's <complex.h> long double functions (cexpl,
 * clogl, ...) and rounded once to double. Tolerance: a few ulps of double
 * relative to |reference|. */
#include <complex.h>

#include "test_util.h"

typedef long double _Complex lz;

static emlx_array *make_z(const double *re_im, int64_t n) {
  return emlx_from_blob(re_im, EMLX_COMPLEX128, &n, 1, EMLX_CPU);
}

/* Reads a complex128 array into out (2n doubles); false on failure. */
static bool read_z(emlx_array *a, int64_t n, double *out) {
  if (!CHECK_MSG(a && emlx_array_dtype(a) == EMLX_COMPLEX128 && emlx_size(a) == n,
                 "complex128 result of %lld elements (got %s)", (long long)n,
                 a ? tu_dname(emlx_array_dtype(a)) : "NULL"))
    return false;
  unsigned char *raw = tu_read_raw(a);
  if (!raw)
    return false;
  memcpy(out, raw, (size_t)n * 16);
  free(raw);
  return true;
}

/* read_z, then releases a (the arrays the checks make and read once). */
static bool take_z(emlx_array *a, int64_t n, double *out) {
  bool ok = read_z(a, n, out);
  emlx_release(a);
  return ok;
}
static unsigned char *take_raw(emlx_array *a) {
  unsigned char *raw = tu_read_raw(a);
  emlx_release(a);
  return raw;
}

/* |got - ref| <= ulps * 2^-52 * max(|ref|, tiny), NaN matching NaN (per part). */
static bool close_z(double gre, double gim, lz ref, double ulps) {
  double rre = (double)creall(ref), rim = (double)cimagl(ref);
  if (isnan(rre) || isnan(rim))
    return isnan(gre) || isnan(gim);
  if (isinf(rre) || isinf(rim))
    return gre == rre && gim == rim;
  double mag = (double)cabsl(ref);
  double tol = ulps * 0x1p-52 * (mag > 1e-300 ? mag : 1e-300);
  return hypot(gre - rre, gim - rim) <= tol;
}

/* Inputs away from branch cuts and overflow, both signs, small and large. */
#define NV 12
static const double zin[NV][2] = {
    {0.5, 0.25},  {-1.25, 2.0},   {3.0, -0.75},   {-0.1, -0.3},  {1e-8, 2e-9},   {7.5, 0.125},
    {-2.0, 1e-5}, {0.75, -1.5},   {1.0 / 3, 0.2}, {-0.6, 0.8},   {12.0, -9.0},   {0.01, 5.0},
};

static void test_bits_and_casts(void) {
  /* from_blob / to_blob keep every bit (NaN payloads, -0.0, subnormals) */
  uint64_t bits[8] = {0x7ff8000000000123u, 0x8000000000000000u, 1u, 0x3fd5555555555555u,
                      0xfff0000000000000u, 0x0010000000000000u, 0x7fefffffffffffffu, 0};
  int64_t n = 4;
  emlx_array *a = emlx_from_blob(bits, EMLX_COMPLEX128, &n, 1, EMLX_CPU);
  unsigned char *raw = tu_read_raw(a);
  CHECK(raw && memcmp(raw, bits, 64) == 0);
  free(raw);
  /* a strided copy moves whole 16-byte elements */
  emlx_array *r = emlx_slice(a, (int64_t[]){3}, (int64_t[]){-5}, (int64_t[]){-2}, 1);
  emlx_array *rc = r ? emlx_copy(r) : NULL;
  raw = rc ? tu_read_raw(rc) : NULL;
  CHECK(raw && memcmp(raw, bits + 6, 16) == 0 && memcmp(raw + 16, bits + 2, 16) == 0);
  free(raw);
  emlx_release(rc), emlx_release(r), emlx_release(a);

  /* every dtype -> c128: the value (exact in f64 for these), imaginary 0 */
  static const double v[5] = {0, 1, 3, 100, 7};
  for (int d = 0; d < EMLX_DTYPE_COUNT; d++) {
    emlx_dtype dt = (emlx_dtype)d;
    emlx_array *x = tu_make1(dt, 5, v);
    emlx_array *z = emlx_astype(x, EMLX_COMPLEX128);
    double got[10];
    if (read_z(z, 5, got)) {
      bool ok = true;
      for (int i = 0; i < 5; i++)
        ok &= got[2 * i] == tu_quant(dt, v[i]) && got[2 * i + 1] == 0.0;
      CHECK_MSG(ok, "astype %s -> c128", tu_dname(dt));
    }
    /* and back: the real part, converted like f64 (bool: either part) */
    emlx_array *back = z ? emlx_astype(z, dt) : NULL;
    if (dt != EMLX_COMPLEX128)
      tu_check_array(back, dt, (int64_t[]){5}, 1, v, 0, "c128 -> dtype round trip");
    emlx_release(back), emlx_release(z), emlx_release(x);
  }
  /* c128 -> real drops the imaginary part; -> bool looks at both parts;
   * -> c64 rounds each part once; -> f16 rounds once from the double */
  const double zv[6] = {1.0 / 3, 5.0, 0.0, -2.0, 65519.99, 0.0};
  emlx_array *z = make_z(zv, 3), *zf = emlx_astype(z, EMLX_FLOAT64);
  double *f = tu_read(zf);
  emlx_release(zf);
  CHECK(f && f[0] == 1.0 / 3 && f[1] == 0.0 && f[2] == 65519.99);
  free(f);
  emlx_array *b = emlx_astype(z, EMLX_BOOL);
  raw = tu_read_raw(b);
  CHECK(raw && raw[0] == 1 && raw[1] == 1 && raw[2] == 1);
  free(raw);
  emlx_array *c = emlx_astype(z, EMLX_COMPLEX64);
  raw = tu_read_raw(c);
  float cf[6];
  if (raw)
    memcpy(cf, raw, 24);
  CHECK(raw && cf[0] == (float)(1.0 / 3) && cf[1] == 5.0f && cf[3] == -2.0f);
  free(raw);
  emlx_array *h = emlx_astype(z, EMLX_FLOAT16);
  raw = tu_read_raw(h);
  uint16_t hv[3];
  if (raw)
    memcpy(hv, raw, 6);
  CHECK(raw && hv[0] == tu_round_f16(1.0 / 3) && hv[2] == tu_round_f16(65519.99));
  free(raw);
  /* c64 -> c128 is exact */
  emlx_array *cz = emlx_astype(c, EMLX_COMPLEX128);
  double czv[6];
  CHECK(read_z(cz, 3, czv) && czv[0] == (double)(float)(1.0 / 3) && czv[1] == 5.0);
  emlx_release(cz), emlx_release(h), emlx_release(c), emlx_release(b), emlx_release(z);
}

static void test_promotion_and_creation(void) {
  /* c64 + f64 -> c128, computed in double: 1/3 keeps its f64 bits */
  float c64v[2] = {1.5f, -2.0f};
  double third = 1.0 / 3;
  int64_t one = 1;
  emlx_array *c = emlx_from_blob(c64v, EMLX_COMPLEX64, &one, 1, EMLX_CPU);
  emlx_array *f = emlx_from_blob(&third, EMLX_FLOAT64, &one, 1, EMLX_CPU);
  emlx_array *s = emlx_add(c, f);
  double got[2];
  CHECK(read_z(s, 1, got) && got[0] == 1.5 + third && got[1] == -2.0);
  /* int64 + c64 stays c64 (MLX); anything + c128 is c128 */
  CHECK(emlx_promote_types(EMLX_INT64, EMLX_COMPLEX64) == EMLX_COMPLEX64);
  CHECK(emlx_promote_types(EMLX_BOOL, EMLX_COMPLEX128) == EMLX_COMPLEX128);
  emlx_release(s), emlx_release(f), emlx_release(c);

  emlx_array *k = emlx_scalar_tensor_complex128(third, -0.1, EMLX_CPU);
  CHECK(read_z(k, 1, got) && got[0] == third && got[1] == -0.1);
  double item = 0;
  CHECK(emlx_item_f64(k, &item) == 0 && item == third);
  int64_t sh[2] = {3, 5};
  emlx_array *full = emlx_full(sh, 2, third, EMLX_COMPLEX128, EMLX_CPU);
  double fv[30];
  bool ok = read_z(full, 15, fv);
  for (int i = 0; ok && i < 15; i++)
    ok = fv[2 * i] == third && fv[2 * i + 1] == 0.0;
  CHECK_MSG(ok, "full c128");
  emlx_array *eye = emlx_eye(3, 3, 0, EMLX_COMPLEX128, EMLX_CPU);
  double ev[18];
  ok = read_z(eye, 9, ev);
  for (int i = 0; ok && i < 9; i++)
    ok = ev[2 * i] == (i % 4 == 0 ? 1.0 : 0.0) && ev[2 * i + 1] == 0.0;
  CHECK_MSG(ok, "eye c128");
  emlx_release(eye), emlx_release(full), emlx_release(k);
}

typedef emlx_array *(*un_fn)(emlx_array *);
typedef lz (*un_ref)(lz);

static lz r_exp(lz z) { return cexpl(z); }
static lz r_log(lz z) { return clogl(z); }
/* |1 + z|^2 = 1 + 2x + x^2 + y^2 exactly: 1 + z itself would round away
 * the low bits of a tiny z even in long double. */
static lz r_log1p(lz z) {
  long double x = creall(z), y = cimagl(z);
  return 0.5L * log1pl(2.0L * x + x * x + y * y) + atan2l(y, 1.0L + x) * (lz)I;
}
static lz r_sqrt(lz z) { return csqrtl(z); }
static lz r_rsqrt(lz z) { return 1.0L / csqrtl(z); }
static lz r_sin(lz z) { return csinl(z); }
static lz r_cos(lz z) { return ccosl(z); }
static lz r_tan(lz z) { return ctanl(z); }
static lz r_asin(lz z) { return casinl(z); }
static lz r_acos(lz z) { return cacosl(z); }
static lz r_atan(lz z) { return catanl(z); }
static lz r_sinh(lz z) { return csinhl(z); }
static lz r_cosh(lz z) { return ccoshl(z); }
static lz r_tanh(lz z) { return ctanhl(z); }
static lz r_asinh(lz z) { return casinhl(z); }
static lz r_acosh(lz z) { return cacoshl(z); }
static lz r_atanh(lz z) { return catanhl(z); }
static lz r_neg(lz z) { return -z; }
static lz r_conj(lz z) { return conjl(z); }
static lz r_sign(lz z) { return z / cabsl(z); }

static lz lz_of(const double *p) { return (long double)p[0] + (long double)p[1] * (lz)I; }

static void test_unary(void) {
  static const struct {
    const char *name;
    un_fn fn;
    un_ref ref;
    double ulps;
  } ops[] = {
      {"exp", emlx_exp, r_exp, 4},       {"log", emlx_log, r_log, 4},
      {"log1p", emlx_log1p, r_log1p, 4}, {"sqrt", emlx_sqrt, r_sqrt, 4},
      {"rsqrt", emlx_rsqrt, r_rsqrt, 4}, {"sin", emlx_sin, r_sin, 4},
      {"cos", emlx_cos, r_cos, 4},       {"tan", emlx_tan, r_tan, 8},
      {"asin", emlx_asin, r_asin, 8},    {"acos", emlx_acos, r_acos, 8},
      {"atan", emlx_atan, r_atan, 8},    {"sinh", emlx_sinh, r_sinh, 4},
      {"cosh", emlx_cosh, r_cosh, 4},    {"tanh", emlx_tanh, r_tanh, 8},
      {"asinh", emlx_asinh, r_asinh, 8}, {"acosh", emlx_acosh, r_acosh, 8},
      {"atanh", emlx_atanh, r_atanh, 8}, {"negate", emlx_negate, r_neg, 0},
      {"conjugate", emlx_conjugate, r_conj, 0}, {"sign", emlx_sign, r_sign, 2},
  };
  emlx_array *z = make_z(&zin[0][0], NV);
  /* and a strided view of it (every other element, reversed) */
  emlx_array *zs = emlx_slice(z, (int64_t[]){NV - 1}, (int64_t[]){-NV - 1}, (int64_t[]){-2}, 1);
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    double got[2 * NV];
    if (take_z(ops[k].fn(z), NV, got)) {
      int bad = 0;
      for (int i = 0; i < NV; i++) {
        lz ref = ops[k].ref(lz_of(zin[i]));
        if (!close_z(got[2 * i], got[2 * i + 1], ref, ops[k].ulps) && bad++ < 3)
          fprintf(stderr, "%s(%g%+gi) = %.17g%+.17gi, want %.17Lg%+.17Lgi\n", ops[k].name,
                  zin[i][0], zin[i][1], got[2 * i], got[2 * i + 1], creall(ref), cimagl(ref));
      }
      CHECK_MSG(bad == 0, "%s c128: %d of %d elements off", ops[k].name, bad, NV);
    }
    if (take_z(ops[k].fn(zs), NV / 2, got)) {
      int bad = 0;
      for (int i = 0; i < NV / 2; i++)
        bad += !close_z(got[2 * i], got[2 * i + 1], ops[k].ref(lz_of(zin[NV - 1 - 2 * i])),
                        ops[k].ulps);
      CHECK_MSG(bad == 0, "%s c128 strided: %d off", ops[k].name, bad);
    }
  }
  /* abs, real, imag: float64 results */
  emlx_array *parts[3] = {emlx_abs(z), emlx_real(z), emlx_imag(z)};
  const char *pn[3] = {"abs", "real", "imag"};
  for (int p = 0; p < 3; p++) {
    double ref[NV];
    for (int i = 0; i < NV; i++)
      ref[i] = p == 0 ? (double)cabsl(lz_of(zin[i])) : zin[i][p - 1];
    tu_check_array(parts[p], EMLX_FLOAT64, (int64_t[]){NV}, 1, ref, p == 0 ? 1 : 0, pn[p]);
    emlx_release(parts[p]);
  }
  /* is_nan / is_inf look at both parts */
  const double odd[8] = {NAN, 1.0, 1.0, -INFINITY, 2.0, 3.0, INFINITY, NAN};
  emlx_array *o = make_z(odd, 4);
  unsigned char *rn = take_raw(emlx_is_nan(o)), *ri = take_raw(emlx_is_infinity(o));
  CHECK(rn && rn[0] == 1 && rn[1] == 0 && rn[2] == 0 && rn[3] == 1);
  CHECK(ri && ri[0] == 0 && ri[1] == 1 && ri[2] == 0 && ri[3] == 1);
  free(rn), free(ri);
  emlx_release(o), emlx_release(zs), emlx_release(z);
}

static void test_binary_and_select(void) {
  emlx_array *a = make_z(&zin[0][0], NV / 2), *b = make_z(&zin[NV / 2][0], NV / 2);
  static const struct {
    const char *name;
    emlx_array *(*fn)(emlx_array *, emlx_array *);
    double ulps;
  } ops[] = {{"add", emlx_add, 1},           {"subtract", emlx_subtract, 1},
             {"multiply", emlx_multiply, 2}, {"divide", emlx_divide, 4},
             {"pow", emlx_pow, 8}};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    double got[NV];
    if (!take_z(ops[k].fn(a, b), NV / 2, got))
      continue;
    int bad = 0;
    for (int i = 0; i < NV / 2; i++) {
      lz x = lz_of(zin[i]), y = lz_of(zin[NV / 2 + i]);
      lz ref = k == 0 ? x + y : k == 1 ? x - y : k == 2 ? x * y : k == 3 ? x / y : cpowl(x, y);
      /* pow is exp(y log x): double's rounding of y log x is amplified by
       * |y log x| (the condition number), whatever the implementation */
      double ulps = k == 4 ? ops[k].ulps * (1.0 + (double)cabsl(y * clogl(x))) : ops[k].ulps;
      if (!close_z(got[2 * i], got[2 * i + 1], ref, ulps) && bad++ < 3)
        fprintf(stderr, "%s: %.17g%+.17gi want %.17Lg%+.17Lgi\n", ops[k].name, got[2 * i],
                got[2 * i + 1], creall(ref), cimagl(ref));
    }
    CHECK_MSG(bad == 0, "%s c128: %d off", ops[k].name, bad);
  }
  /* equal / not_equal compare both parts exactly */
  const double e1[6] = {1.0, 2.0, 1.0, 2.0, 1.0 / 3, 0.0};
  const double e2[6] = {1.0, 2.0, 1.0, -2.0, 1.0 / 3 + 0x1p-54, 0.0};
  emlx_array *x = make_z(e1, 3), *y = make_z(e2, 3);
  unsigned char *eq = take_raw(emlx_equal(x, y)), *ne = take_raw(emlx_not_equal(x, y));
  CHECK(eq && eq[0] == 1 && eq[1] == 0 && eq[2] == 0);
  CHECK(ne && ne[0] == 0 && ne[1] == 1 && ne[2] == 1);
  free(eq), free(ne);
  /* where picks whole elements */
  uint8_t cond[3] = {1, 0, 1};
  int64_t three = 3;
  emlx_array *cnd = emlx_from_blob(cond, EMLX_BOOL, &three, 1, EMLX_CPU);
  double w[6];
  CHECK(take_z(emlx_where(cnd, x, y), 3, w) && w[0] == 1.0 && w[1] == 2.0 && w[2] == 1.0 &&
        w[3] == -2.0 && w[4] == 1.0 / 3 && w[5] == 0.0);
  emlx_release(cnd), emlx_release(x), emlx_release(y), emlx_release(b), emlx_release(a);
}

/* A chain the fusion pass makes one region of: exp(a * b) + conj(a) / 2,
 * broadcast b, against long double. */
static void test_fused_chain(void) {
  emlx_array *a = make_z(&zin[0][0], NV);
  emlx_array *b = emlx_scalar_tensor_complex128(0.25, -0.5, EMLX_CPU);
  emlx_array *h = emlx_scalar_tensor_complex128(0.5, 0.0, EMLX_CPU);
  emlx_array *m = emlx_multiply(a, b), *e = emlx_exp(m), *c = emlx_conjugate(a);
  emlx_array *q = emlx_multiply(c, h), *r = emlx_add(e, q);
  double got[2 * NV];
  if (read_z(r, NV, got)) {
    int bad = 0;
    for (int i = 0; i < NV; i++) {
      lz x = lz_of(zin[i]);
      lz ref = cexpl(x * (0.25L - 0.5L * (lz)I)) + conjl(x) * 0.5L;
      bad += !close_z(got[2 * i], got[2 * i + 1], ref, 8);
    }
    CHECK_MSG(bad == 0, "fused c128 chain: %d off", bad);
  }
  emlx_release(r), emlx_release(q), emlx_release(c), emlx_release(e), emlx_release(m);
  emlx_release(h), emlx_release(b), emlx_release(a);
}

int main(void) {
  test_bits_and_casts();
  test_promotion_and_creation();
  test_unary();
  test_binary_and_select();
  test_fused_chain();
  return tu_finish();
}
