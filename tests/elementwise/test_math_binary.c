/* test_math_binary.c — the math family's binary ops against f64 references
 * computed here: quotient / floor_divide / remainder / remainder_trunc, pow,
 * atan2, maximum / minimum, the six comparisons, logical and bitwise ops and
 * shifts, on every dtype they accept, contiguous, transposed, sliced,
 * broadcast (row and 0-d) and empty; the defined edge cases (integer
 * division and remainder by zero, INT_MIN / -1, shifts by the width or
 * more and by negative counts, integer pow overflow and negative
 * exponents, NaN and signed zeros in maximum / minimum, NaN in
 * comparisons); promotion of mixed dtypes; complex64; every error case.
 *
 * Tolerances: integers, comparisons, max/min, remainders exact; quotient
 * exact against the quotient rounded in the compute dtype; pow and atan2
 * 2 ulp (f32), 4 ulp (f64), 1 ulp of the correctly rounded f16/bf16. The
 * program runs at every ISA level (EMLX_ISA, one CTest test each). */
#include <complex.h>

#include "math_test_util.h"

static emlx_dtype g_dt; /* the compute dtype the references round to */

/* x / y as the engine computes it: in f64 for f64, else in f32. */
static double div_in(double x, double y) {
  return g_dt == EMLX_FLOAT64 ? x / y : (double)(float)(x / y);
}
static bool is_fl(void) { return tu_is_float(g_dt); }

/* Integer references work on exact int64 values (inputs are small). */
static double r_qtrunc(double x, double y) {
  if (is_fl())
    return trunc(div_in(x, y));
  if (y == 0)
    return 0;
  return trunc(x / y);
}
static double r_qfloor(double x, double y) {
  if (is_fl())
    return floor(div_in(x, y));
  if (y == 0)
    return 0;
  return floor(x / y);
}
static double r_rtrunc(double x, double y) {
  if (is_fl())
    return fmod(x, y);
  if (y == 0)
    return 0;
  return fmod(x, y);
}
static double r_rfloor(double x, double y) {
  if (!is_fl() && y == 0)
    return 0;
  double r = fmod(x, y);
  if (r != 0 && ((r < 0) != (y < 0)))
    r = is_fl() ? (g_dt == EMLX_FLOAT64 ? r + y : (double)(float)(r + y)) : r + y;
  return r == 0 ? copysign(0.0, y) : r;
}
static double r_pow(double x, double y) { return pow(x, y); }
static double r_atan2(double x, double y) { return atan2(x, y); }
static double r_max(double x, double y) {
  return isnan(x) || isnan(y) ? (double)NAN : x > y ? x : y;
}
static double r_min(double x, double y) {
  return isnan(x) || isnan(y) ? (double)NAN : x < y ? x : y;
}
static double r_eq(double x, double y) { return x == y; }
static double r_ne(double x, double y) { return x != y; }
static double r_gt(double x, double y) { return x > y; }
static double r_ge(double x, double y) { return x >= y; }
static double r_lt(double x, double y) { return x < y; }
static double r_le(double x, double y) { return x <= y; }
static double r_land(double x, double y) { return (x != 0) && (y != 0); }
static double r_lor(double x, double y) { return (x != 0) || (y != 0); }
static double r_lxor(double x, double y) { return (x != 0) != (y != 0); }

static const emlx_dtype all_ints[8] = {EMLX_UINT8, EMLX_UINT16, EMLX_UINT32, EMLX_UINT64,
                                       EMLX_INT8,  EMLX_INT16,  EMLX_INT32,  EMLX_INT64};
static const emlx_dtype all_floats[4] = {EMLX_FLOAT32, EMLX_FLOAT64, EMLX_FLOAT16, EMLX_BFLOAT16};

static void fill(double *v, uint64_t seed, double lo, double hi, bool integral) {
  tu_rng r = {seed};
  for (int64_t i = 0; i < MT_N; i++) {
    v[i] = tu_uniform(&r, lo, hi);
    if (integral)
      v[i] = floor(v[i]);
  }
}

/* ---- division and remainder ------------------------------------------------------------- */
static void test_divmod(void) {
  struct {
    const char *name;
    mt_bin_fn fn;
    mt_ref2 ref;
  } ops[] = {{"quotient", emlx_quotient, r_qtrunc},
             {"floor_divide", emlx_floor_divide, r_qfloor},
             {"remainder_trunc", emlx_remainder_trunc, r_rtrunc},
             {"remainder", emlx_remainder, r_rfloor}};
  double va[MT_N], vb[MT_N];
  for (int k = 0; k < 8; k++) {
    g_dt = all_ints[k];
    bool sgn = k >= 4;
    fill(va, 10 + (uint64_t)k, sgn ? -120 : 0, 120, true);
    fill(vb, 20 + (uint64_t)k, sgn ? -9 : 0, 9, true); /* includes zeros */
    for (int o = 0; o < 4; o++)
      mt_check_binary(ops[o].name, ops[o].fn, ops[o].ref, g_dt, g_dt, va, vb, 0);
  }
  for (int k = 0; k < 4; k++) {
    g_dt = all_floats[k];
    fill(va, 30 + (uint64_t)k, -50, 50, false);
    fill(vb, 40 + (uint64_t)k, -6, 6, false);
    for (int64_t i = 0; i < MT_N; i += 7)
      vb[i] = 0.0; /* x / 0: inf / NaN; fmod(x, 0): NaN */
    for (int o = 0; o < 4; o++)
      mt_check_binary(ops[o].name, ops[o].fn, ops[o].ref, g_dt, g_dt, va, vb, 0);
  }
  /* bool: quotient a & b, remainder 0. */
  double ba[4] = {0, 0, 1, 1}, bb[4] = {0, 1, 0, 1}, rq[4] = {0, 0, 0, 1}, rr[4] = {0, 0, 0, 0};
  int64_t n4 = 4;
  emlx_array *a = tu_make1(EMLX_BOOL, 4, ba), *b = tu_make1(EMLX_BOOL, 4, bb);
  emlx_array *q = emlx_quotient(a, b), *r = emlx_remainder(a, b);
  tu_check_array(q, EMLX_BOOL, &n4, 1, rq, 0, "quotient bool");
  tu_check_array(r, EMLX_BOOL, &n4, 1, rr, 0, "remainder bool");
  emlx_release(q);
  emlx_release(r);
  emlx_release(a);
  emlx_release(b);
  /* INT_MIN / -1 wraps (no SIGFPE), remainder 0; x / 0 == 0 and x % 0 == 0. */
  int32_t xa[4] = {INT32_MIN, INT32_MIN, 7, -7}, xb[4] = {-1, 0, 0, 0};
  int64_t s64a[2] = {INT64_MIN, 5}, s64b[2] = {-1, 0};
  int8_t s8a[1] = {INT8_MIN}, s8b[1] = {-1};
  emlx_array *ia = emlx_from_blob(xa, EMLX_INT32, &n4, 1, EMLX_CPU);
  emlx_array *ib = emlx_from_blob(xb, EMLX_INT32, &n4, 1, EMLX_CPU);
  mt_bin_fn fns[4] = {emlx_quotient, emlx_floor_divide, emlx_remainder, emlx_remainder_trunc};
  for (int o = 0; o < 4; o++) {
    int32_t got[4];
    emlx_array *c = fns[o](ia, ib);
    CHECK(c && emlx_to_blob(c, got, sizeof got) == 0);
    if (o < 2)
      CHECK(got[0] == INT32_MIN && got[1] == 0 && got[2] == 0 && got[3] == 0);
    else
      CHECK(got[0] == 0 && got[1] == 0 && got[2] == 0 && got[3] == 0);
    emlx_release(c);
  }
  emlx_release(ia);
  emlx_release(ib);
  int64_t two = 2, one = 1;
  ia = emlx_from_blob(s64a, EMLX_INT64, &two, 1, EMLX_CPU);
  ib = emlx_from_blob(s64b, EMLX_INT64, &two, 1, EMLX_CPU);
  emlx_array *c = emlx_floor_divide(ia, ib);
  int64_t g64[2];
  CHECK(c && emlx_to_blob(c, g64, sizeof g64) == 0 && g64[0] == INT64_MIN && g64[1] == 0);
  emlx_release(c);
  emlx_release(ia);
  emlx_release(ib);
  ia = emlx_from_blob(s8a, EMLX_INT8, &one, 1, EMLX_CPU);
  ib = emlx_from_blob(s8b, EMLX_INT8, &one, 1, EMLX_CPU);
  c = emlx_quotient(ia, ib);
  int8_t g8 = 0;
  CHECK(c && emlx_to_blob(c, &g8, 1) == 0 && g8 == INT8_MIN);
  emlx_release(c);
  emlx_release(ia);
  emlx_release(ib);
  /* Float signs: remainder(-0.0, 3) == +0.0 (divisor's sign), fmod keeps
   * the dividend's; remainder(-5, inf) == inf, remainder_trunc(-5, inf) = -5. */
  double fa[3] = {-0.0, -5, 5}, fb[3] = {3, INFINITY, INFINITY};
  int64_t n3 = 3;
  a = tu_make1(EMLX_FLOAT32, 3, fa);
  b = tu_make1(EMLX_FLOAT32, 3, fb);
  r = emlx_remainder(a, b);
  emlx_array *t = emlx_remainder_trunc(a, b);
  double rf[3] = {0.0, INFINITY, 5}, rt[3] = {-0.0, -5, 5};
  tu_check_array(r, EMLX_FLOAT32, &n3, 1, rf, 0, "remainder float edges");
  tu_check_array(t, EMLX_FLOAT32, &n3, 1, rt, 0, "remainder_trunc float edges");
  double *gr = tu_read(r), *gt = tu_read(t);
  CHECK(gr && gt && !signbit(gr[0]) && signbit(gt[0]));
  free(gr);
  free(gt);
  emlx_release(r);
  emlx_release(t);
  emlx_release(a);
  emlx_release(b);
}

/* ---- pow --------------------------------------------------------------------------------- */
static double ipow_ref(double x, double y) {
  /* Naive repeated multiplication in wrapping uint64, then to the dtype. */
  int64_t xi = (int64_t)x, yi = (int64_t)y;
  if (yi < 0)
    return xi == 1 ? 1 : xi == -1 ? ((yi % 2) ? -1 : 1) : 0;
  uint64_t r = 1;
  for (int64_t k = 0; k < yi; k++)
    r *= (uint64_t)xi;
  switch (g_dt) {
  case EMLX_UINT8:
    return (uint8_t)r;
  case EMLX_UINT16:
    return (uint16_t)r;
  case EMLX_UINT32:
    return (uint32_t)r;
  case EMLX_INT8:
    return (int8_t)(uint8_t)r;
  case EMLX_INT16:
    return (int16_t)(uint16_t)r;
  case EMLX_INT32:
    return (int32_t)(uint32_t)r;
  case EMLX_INT64:
    return (double)(int64_t)r;
  default:
    return (double)r;
  }
}

static void test_pow(void) {
  double va[MT_N], vb[MT_N];
  for (int k = 0; k < 8; k++) {
    g_dt = all_ints[k];
    bool sgn = k >= 4, wide = g_dt == EMLX_INT64 || g_dt == EMLX_UINT64;
    fill(va, 50 + (uint64_t)k, sgn ? -5 : 0, 6, true);
    fill(vb, 60 + (uint64_t)k, sgn ? -3 : 0, wide ? 12 : 40, true); /* wraps below 64 bits */
    mt_check_binary("pow int", emlx_pow, ipow_ref, g_dt, g_dt, va, vb, 0);
  }
  for (int k = 0; k < 4; k++) {
    g_dt = all_floats[k];
    fill(va, 70 + (uint64_t)k, 0.01, 4, false);
    fill(vb, 80 + (uint64_t)k, -3, 3, false);
    for (int64_t i = 0; i < MT_N; i += 5) { /* negative bases with integral exponents */
      va[i] = -va[i];
      vb[i] = round(vb[i]);
    }
    double ulp = g_dt == EMLX_FLOAT32 ? 2 : g_dt == EMLX_FLOAT64 ? 4 : 1;
    mt_check_binary("pow", emlx_pow, r_pow, g_dt, g_dt, va, vb, ulp);
    fill(vb, 90 + (uint64_t)k, -8, 8, false);
    mt_check_binary("atan2", emlx_atan2, r_atan2, g_dt, g_dt, vb, va, ulp);
  }
  /* atan2 of ints gives float32; signed zeros pick the quadrant. */
  g_dt = EMLX_INT32;
  fill(va, 91, -5, 5, true);
  fill(vb, 92, -5, 5, true);
  mt_check_binary("atan2 int", emlx_atan2, r_atan2, EMLX_INT32, EMLX_FLOAT32, va, vb, 2);
  double za[4] = {-0.0, 0.0, -0.0, 0.0}, zb[4] = {-0.0, -0.0, 0.0, 0.0};
  double rz[4] = {atan2(-0.0, -0.0), atan2(0.0, -0.0), -0.0, 0.0};
  int64_t n4 = 4;
  emlx_array *a = tu_make1(EMLX_FLOAT64, 4, za), *b = tu_make1(EMLX_FLOAT64, 4, zb);
  emlx_array *c = emlx_atan2(a, b);
  tu_check_array(c, EMLX_FLOAT64, &n4, 1, rz, 0, "atan2 signed zeros");
  double *g = tu_read(c);
  CHECK(g && signbit(g[2]) && !signbit(g[3]));
  free(g);
  emlx_release(c);
  emlx_release(a);
  emlx_release(b);
  /* bool pow: a | !b. */
  double ba[4] = {0, 0, 1, 1}, bb[4] = {0, 1, 0, 1}, rp[4] = {1, 0, 1, 1};
  a = tu_make1(EMLX_BOOL, 4, ba);
  b = tu_make1(EMLX_BOOL, 4, bb);
  c = emlx_pow(a, b);
  tu_check_array(c, EMLX_BOOL, &n4, 1, rp, 0, "pow bool");
  emlx_release(c);
  emlx_release(a);
  emlx_release(b);
}

/* ---- maximum / minimum --------------------------------------------------------------------- */
static void test_maxmin(void) {
  double va[MT_N], vb[MT_N];
  for (int k = 0; k < 8; k++) {
    g_dt = all_ints[k];
    fill(va, 100 + (uint64_t)k, k >= 4 ? -100 : 0, 100, true);
    fill(vb, 110 + (uint64_t)k, k >= 4 ? -100 : 0, 100, true);
    mt_check_binary("maximum", emlx_maximum, r_max, g_dt, g_dt, va, vb, 0);
    mt_check_binary("minimum", emlx_minimum, r_min, g_dt, g_dt, va, vb, 0);
  }
  for (int k = 0; k < 4; k++) {
    g_dt = all_floats[k];
    fill(va, 120 + (uint64_t)k, -10, 10, false);
    fill(vb, 130 + (uint64_t)k, -10, 10, false);
    va[3] = NAN;
    vb[8] = NAN;
    mt_check_binary("maximum", emlx_maximum, r_max, g_dt, g_dt, va, vb, 0);
    mt_check_binary("minimum", emlx_minimum, r_min, g_dt, g_dt, va, vb, 0);
  }
  /* Signed zeros: -0 < +0 in either order. */
  double za[2] = {-0.0, 0.0}, zb[2] = {0.0, -0.0};
  emlx_array *a = tu_make1(EMLX_FLOAT32, 2, za), *b = tu_make1(EMLX_FLOAT32, 2, zb);
  emlx_array *mx = emlx_maximum(a, b), *mn = emlx_minimum(a, b);
  double *gx = tu_read(mx), *gn = tu_read(mn);
  CHECK(gx && !signbit(gx[0]) && !signbit(gx[1]));
  CHECK(gn && signbit(gn[0]) && signbit(gn[1]));
  free(gx);
  free(gn);
  emlx_release(mx);
  emlx_release(mn);
  emlx_release(a);
  emlx_release(b);
  /* Mixed dtypes promote: int8 with uint8 -> int16; int32 with f32 -> f32. */
  double ia[3] = {-5, 100, 7}, ib[3] = {200, 3, 7}, rmax[3] = {200, 100, 7};
  int64_t n3 = 3;
  a = tu_make1(EMLX_INT8, 3, ia);
  b = tu_make1(EMLX_UINT8, 3, ib);
  mx = emlx_maximum(a, b);
  tu_check_array(mx, EMLX_INT16, &n3, 1, rmax, 0, "maximum int8 uint8");
  emlx_release(mx);
  emlx_release(a);
  emlx_release(b);
  a = tu_make1(EMLX_INT32, 3, ia);
  b = tu_make1(EMLX_FLOAT32, 3, ib);
  mx = emlx_maximum(a, b);
  tu_check_array(mx, EMLX_FLOAT32, &n3, 1, rmax, 0, "maximum int32 float32");
  emlx_release(mx);
  emlx_release(a);
  emlx_release(b);
  /* bool: or / and. */
  double ba[4] = {0, 0, 1, 1}, bb[4] = {0, 1, 0, 1}, ror[4] = {0, 1, 1, 1}, rand_[4] = {0, 0, 0, 1};
  int64_t n4 = 4;
  a = tu_make1(EMLX_BOOL, 4, ba);
  b = tu_make1(EMLX_BOOL, 4, bb);
  mx = emlx_maximum(a, b);
  mn = emlx_minimum(a, b);
  tu_check_array(mx, EMLX_BOOL, &n4, 1, ror, 0, "maximum bool");
  tu_check_array(mn, EMLX_BOOL, &n4, 1, rand_, 0, "minimum bool");
  emlx_release(mx);
  emlx_release(mn);
  emlx_release(a);
  emlx_release(b);
}

/* A 0-d operand on either side of a row longer than two staging tiles
 * (the float loops stage a broadcast operand once for every tile): each
 * element against max/min computed here, exactly. */
static void test_scalar_operand_long_row(void) {
  enum { N = 1500 };
  static double v[N], ra[N], rb[N];
  fill(v, 140, -10, 10, false);
  const double c = 0.25;
  static const emlx_dtype dts[2] = {EMLX_FLOAT32, EMLX_FLOAT64};
  for (int k = 0; k < 2; k++) {
    emlx_array *x = tu_make1(dts[k], N, v);
    emlx_array *s = tu_make(dts[k], NULL, 0, &c);
    emlx_array *mx = emlx_maximum(x, s), *mn = emlx_minimum(s, x);
    for (int i = 0; i < N; i++) {
      double xi = dts[k] == EMLX_FLOAT32 ? (double)(float)v[i] : v[i];
      ra[i] = xi > c ? xi : c;
      rb[i] = xi < c ? xi : c;
    }
    int64_t n = N;
    tu_check_array(mx, dts[k], &n, 1, ra, 0, "maximum(row, 0-d) over 1500");
    tu_check_array(mn, dts[k], &n, 1, rb, 0, "minimum(0-d, row) over 1500");
    emlx_release(mx);
    emlx_release(mn);
    emlx_release(s);
    emlx_release(x);
  }
}

/* ---- comparisons and logical ------------------------------------------------------------- */
static void test_compare(void) {
  struct {
    const char *name;
    mt_bin_fn fn;
    mt_ref2 ref;
  } ops[] = {{"equal", emlx_equal, r_eq},
             {"not_equal", emlx_not_equal, r_ne},
             {"greater", emlx_greater, r_gt},
             {"greater_equal", emlx_greater_equal, r_ge},
             {"less", emlx_less, r_lt},
             {"less_equal", emlx_less_equal, r_le},
             {"logical_and", emlx_logical_and, r_land},
             {"logical_or", emlx_logical_or, r_lor},
             {"logical_xor", emlx_logical_xor, r_lxor}};
  double va[MT_N], vb[MT_N];
  emlx_dtype ds[13];
  for (int k = 0; k < 8; k++)
    ds[k] = all_ints[k];
  for (int k = 0; k < 4; k++)
    ds[8 + k] = all_floats[k];
  ds[12] = EMLX_BOOL;
  for (int k = 0; k < 13; k++) {
    g_dt = ds[k];
    bool sgn = g_dt >= EMLX_INT8;
    fill(va, 140 + (uint64_t)k,
         g_dt == EMLX_BOOL ? 0
         : sgn             ? -4
                           : 0,
         g_dt == EMLX_BOOL ? 2 : 4, true);
    fill(vb, 150 + (uint64_t)k,
         g_dt == EMLX_BOOL ? 0
         : sgn             ? -4
                           : 0,
         g_dt == EMLX_BOOL ? 2 : 4, true);
    if (tu_is_float(g_dt)) {
      va[2] = NAN;
      vb[2] = NAN;
      va[4] = NAN;
      va[6] = -0.0;
      vb[6] = 0.0;
    }
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
      mt_check_binary(ops[o].name, ops[o].fn, ops[o].ref, g_dt, EMLX_BOOL, va, vb, 0);
  }
  /* Logical ops of mixed dtypes (float with int) give bool. */
  double fa[4] = {0.0, NAN, 2.5, -0.0}, ib[4] = {3, 0, 1, 0}, rl[4] = {0, 0, 1, 0};
  int64_t n4 = 4;
  emlx_array *a = tu_make1(EMLX_FLOAT32, 4, fa), *b = tu_make1(EMLX_INT64, 4, ib);
  emlx_array *c = emlx_logical_and(a, b);
  tu_check_array(c, EMLX_BOOL, &n4, 1, rl, 0, "logical_and float int");
  emlx_release(c);
  emlx_release(a);
  emlx_release(b);
}

/* ---- bitwise and shifts ---------------------------------------------------------------------- */
static double g_bits; /* width of g_dt */
static uint64_t mask_of(void) {
  return g_bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << (int)g_bits) - 1;
}
static double from_bits(uint64_t u) {
  u &= mask_of();
  bool sgn = g_dt >= EMLX_INT8 && g_dt <= EMLX_INT64;
  if (sgn && g_bits < 64 && (u >> ((int)g_bits - 1)))
    return (double)u - ldexp(1.0, (int)g_bits);
  if (sgn && g_bits == 64)
    return (double)(int64_t)u;
  return (double)u;
}
static uint64_t to_bits(double x) { return (uint64_t)(int64_t)x; }
static double r_band(double x, double y) { return from_bits(to_bits(x) & to_bits(y)); }
static double r_bor(double x, double y) { return from_bits(to_bits(x) | to_bits(y)); }
static double r_bxor(double x, double y) { return from_bits(to_bits(x) ^ to_bits(y)); }
static double r_shl(double x, double y) {
  uint64_t c = to_bits(y) & mask_of();
  return c >= (uint64_t)g_bits ? 0 : from_bits(to_bits(x) << c);
}
static double r_shr(double x, double y) {
  uint64_t c = to_bits(y) & mask_of();
  bool sgn = g_dt >= EMLX_INT8;
  if (c >= (uint64_t)g_bits)
    return sgn && x < 0 ? -1 : 0;
  return sgn ? floor(x / ldexp(1.0, (int)c)) : from_bits((to_bits(x) & mask_of()) >> c);
}

static void test_bitwise(void) {
  static const int widths[8] = {8, 16, 32, 64, 8, 16, 32, 64};
  struct {
    const char *name;
    mt_bin_fn fn;
    mt_ref2 ref;
  } ops[] = {{"bitwise_and", emlx_bitwise_and, r_band},
             {"bitwise_or", emlx_bitwise_or, r_bor},
             {"bitwise_xor", emlx_bitwise_xor, r_bxor},
             {"left_shift", emlx_left_shift, r_shl},
             {"right_shift", emlx_right_shift, r_shr}};
  double va[MT_N], vb[MT_N];
  for (int k = 0; k < 8; k++) {
    g_dt = all_ints[k];
    g_bits = widths[k];
    bool sgn = k >= 4;
    fill(va, 160 + (uint64_t)k, sgn ? -100 : 0, 100, true);
    for (int o = 0; o < 3; o++) {
      fill(vb, 170 + (uint64_t)k, sgn ? -100 : 0, 100, true);
      mt_check_binary(ops[o].name, ops[o].fn, ops[o].ref, g_dt, g_dt, va, vb, 0);
    }
    /* Counts from below zero to beyond the width. */
    fill(va, 180 + (uint64_t)k, sgn ? -1000 : 0, 1000, true);
    fill(vb, 190 + (uint64_t)k, sgn ? -3 : 0, widths[k] + 4, true);
    if (widths[k] == 64) /* keep left shifts of 64-bit values exact in double */
      for (int64_t i = 0; i < MT_N; i++)
        vb[i] = vb[i] > 40 && vb[i] < 64 ? 40 : vb[i];
    for (int o = 3; o < 5; o++)
      mt_check_binary(ops[o].name, ops[o].fn, ops[o].ref, g_dt, g_dt, va, vb, 0);
  }
  /* bool: bitwise ops stay bool; shifts promote to uint8. */
  double ba[4] = {0, 0, 1, 1}, bb[4] = {0, 1, 0, 1}, rx[4] = {0, 1, 1, 0}, rs[4] = {0, 0, 1, 2};
  int64_t n4 = 4;
  emlx_array *a = tu_make1(EMLX_BOOL, 4, ba), *b = tu_make1(EMLX_BOOL, 4, bb);
  emlx_array *c = emlx_bitwise_xor(a, b), *s = emlx_left_shift(a, b);
  tu_check_array(c, EMLX_BOOL, &n4, 1, rx, 0, "bitwise_xor bool");
  tu_check_array(s, EMLX_UINT8, &n4, 1, rs, 0, "left_shift bool");
  emlx_release(c);
  emlx_release(s);
  emlx_release(a);
  emlx_release(b);
  /* Named edges: 1 << 31 (int32) is INT_MIN, 1 << 32 is 0, -8 >> 40 is -1,
   * 255u8 >> 1 is 127 (logical). */
  int32_t xa[4] = {1, 1, -8, -8}, xb[4] = {31, 32, 40, 1}, got[4];
  emlx_array *ia = emlx_from_blob(xa, EMLX_INT32, &n4, 1, EMLX_CPU);
  emlx_array *ib = emlx_from_blob(xb, EMLX_INT32, &n4, 1, EMLX_CPU);
  c = emlx_left_shift(ia, ib);
  CHECK(c && emlx_to_blob(c, got, sizeof got) == 0 && got[0] == INT32_MIN && got[1] == 0);
  emlx_release(c);
  c = emlx_right_shift(ia, ib);
  CHECK(c && emlx_to_blob(c, got, sizeof got) == 0 && got[2] == -1 && got[3] == -4);
  emlx_release(c);
  emlx_release(ia);
  emlx_release(ib);
}

/* ---- complex64
 * ----------------------------------------------------------------------------------- */
static void test_complex(void) {
  float pa[8] = {1, 2, 1, 2, 2, 0, NAN, 0}, pb[8] = {1, 1, 1, 2, 1, 5, 1, 0};
  int64_t n = 4;
  emlx_array *a = emlx_from_blob(pa, EMLX_COMPLEX64, &n, 1, EMLX_CPU);
  emlx_array *b = emlx_from_blob(pb, EMLX_COMPLEX64, &n, 1, EMLX_CPU);
  double req[4] = {0, 1, 0, 0}, rne[4] = {1, 0, 1, 1}, rgt[4] = {1, 0, 1, 0}, rle[4] = {0, 1, 0, 0};
  emlx_array *c = emlx_equal(a, b);
  tu_check_array(c, EMLX_BOOL, &n, 1, req, 0, "equal complex");
  emlx_release(c);
  c = emlx_not_equal(a, b);
  tu_check_array(c, EMLX_BOOL, &n, 1, rne, 0, "not_equal complex");
  emlx_release(c);
  c = emlx_greater(a, b);
  tu_check_array(c, EMLX_BOOL, &n, 1, rgt, 0, "greater complex (lexicographic)");
  emlx_release(c);
  c = emlx_less_equal(a, b);
  tu_check_array(c, EMLX_BOOL, &n, 1, rle, 0, "less_equal complex");
  emlx_release(c);
  float got[8];
  c = emlx_maximum(a, b);
  CHECK(c && emlx_to_blob(c, got, sizeof got) == 0);
  CHECK(got[0] == 1 && got[1] == 2 && got[4] == 2 && got[5] == 0 && isnan(got[6]));
  emlx_release(c);
  c = emlx_pow(a, b);
  CHECK(c && emlx_to_blob(c, got, sizeof got) == 0);
  double _Complex w = cpow(CMPLX(1.0, 2.0), CMPLX(1.0, 1.0));
  CHECK(fabs((double)got[0] - creal(w)) < 1e-5 && fabs((double)got[1] - cimag(w)) < 1e-5);
  emlx_release(c);
  emlx_release(a);
  emlx_release(b);
}

/* ---- errors ---------------------------------------------------------------------------------- */
static void test_errors(void) {
  mt_bin_fn all[] = {emlx_quotient,    emlx_floor_divide, emlx_remainder,   emlx_remainder_trunc,
                     emlx_pow,         emlx_atan2,        emlx_maximum,     emlx_minimum,
                     emlx_equal,       emlx_not_equal,    emlx_greater,     emlx_greater_equal,
                     emlx_less,        emlx_less_equal,   emlx_logical_and, emlx_logical_or,
                     emlx_logical_xor, emlx_bitwise_and,  emlx_bitwise_or,  emlx_bitwise_xor,
                     emlx_left_shift,  emlx_right_shift};
  double v[6] = {1, 2, 3, 4, 5, 6};
  int64_t s23[2] = {2, 3}, s3[1] = {3};
  emlx_array *a = tu_make(EMLX_INT32, s23, 2, v), *b = tu_make(EMLX_INT32, s3, 1, v);
  emlx_array *bad = tu_make1(EMLX_INT32, 2, v);
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
    CHECK_NULL_ERR(all[k](NULL, b));
    CHECK_NULL_ERR(all[k](a, NULL));
    CHECK_NULL_ERR(all[k](a, bad)); /* [2, 3] and [2] do not broadcast */
    emlx_array *ok = all[k](a, b);
    CHECK_MSG(ok != NULL, "op %zu broadcasts [2,3] with [3]", k);
    emlx_release(ok);
  }
  float parts[2] = {1, 2};
  int64_t one = 1;
  emlx_array *c = emlx_from_blob(parts, EMLX_COMPLEX64, &one, 1, EMLX_CPU);
  emlx_array *f = tu_make1(EMLX_FLOAT32, 1, v);
  mt_bin_fn no_complex[] = {emlx_quotient, emlx_floor_divide, emlx_remainder, emlx_remainder_trunc,
                            emlx_atan2};
  for (size_t k = 0; k < sizeof no_complex / sizeof no_complex[0]; k++)
    CHECK_NULL_ERR(no_complex[k](c, c));
  mt_bin_fn ints_only[] = {emlx_bitwise_and, emlx_bitwise_or, emlx_bitwise_xor, emlx_left_shift,
                           emlx_right_shift};
  for (size_t k = 0; k < sizeof ints_only / sizeof ints_only[0]; k++) {
    CHECK_NULL_ERR(ints_only[k](f, b));
    CHECK_NULL_ERR(ints_only[k](c, c));
  }
  emlx_release(c);
  emlx_release(f);
  emlx_release(a);
  emlx_release(b);
  emlx_release(bad);
}

int main(void) {
  test_divmod();
  test_pow();
  test_maxmin();
  test_scalar_operand_long_row();
  test_compare();
  test_bitwise();
  test_complex();
  test_errors();
  return tu_finish();
}
