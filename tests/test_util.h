/* test_util.h — the tiny harness every C test program includes.
 *
 * CHECK macros print file:line on failure and count passes and failures;
 * tu_finish() prints the closing line "N passed, M failed" and returns the
 * exit status. Helpers build arrays of any dtype from doubles, read them back
 * (through guard bytes that catch out-of-bounds writes by emlx_to_blob), and
 * compare against references computed here in f64: exact for integers,
 * within k ulp of the correctly rounded reference for floats, or by NMSE.
 *
 * The f16/bf16 helpers are deliberately independent of the library: decoding
 * is written from the IEEE formulas, and rounding searches the sorted table
 * of representable values for the nearest one (ties to the even pattern).
 * Tests use only the public API (emlx.h). */
#ifndef EMLX_TEST_UTIL_H
#define EMLX_TEST_UTIL_H

#include <fcntl.h>
#include <float.h>
#include <spawn.h>
#include <sys/wait.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emlx.h"

/* ---- counting checks ------------------------------------------------------- */

static _Atomic long tu_passed __attribute__((unused));
static _Atomic long tu_failed __attribute__((unused));

static inline bool tu_record(bool ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline bool tu_record(bool ok, const char *file, int line, const char *fmt, ...) {
  if (ok) {
    tu_passed++;
    return true;
  }
  tu_failed++;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s:%d: FAIL: ", file, line);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  const char *err = emlx_last_error();
  if (err && err[0])
    fprintf(stderr, "  [emlx_last_error: %s]", err);
  fputc('\n', stderr);
  return false;
}

#define CHECK(cond) tu_record((cond) ? true : false, __FILE__, __LINE__, "%s", #cond)
#define CHECK_MSG(cond, ...) tu_record((cond) ? true : false, __FILE__, __LINE__, __VA_ARGS__)
#define CHECK_EQ_I64(a, b)                                                                         \
  do {                                                                                             \
    int64_t tu_a_ = (int64_t)(a), tu_b_ = (int64_t)(b);                                            \
    tu_record(tu_a_ == tu_b_, __FILE__, __LINE__, "%s == %s (%" PRId64 " vs %" PRId64 ")", #a, #b, \
              tu_a_, tu_b_);                                                                       \
  } while (0)
#define CHECK_EQ_U64(a, b)                                                                         \
  do {                                                                                             \
    uint64_t tu_a_ = (uint64_t)(a), tu_b_ = (uint64_t)(b);                                         \
    tu_record(tu_a_ == tu_b_, __FILE__, __LINE__, "%s == %s (%" PRIu64 " vs %" PRIu64 ")", #a, #b, \
              tu_a_, tu_b_);                                                                       \
  } while (0)
#define CHECK_EQ_STR(a, b)                                                                         \
  do {                                                                                             \
    const char *tu_a_ = (a), *tu_b_ = (b);                                                         \
    tu_record(tu_a_ &&tu_b_ &&strcmp(tu_a_, tu_b_) == 0, __FILE__, __LINE__,                       \
              "%s == %s (\"%s\" vs \"%s\")", #a, #b, tu_a_ ? tu_a_ : "(null)",                     \
              tu_b_ ? tu_b_ : "(null)");                                                           \
  } while (0)
#define CHECK_NEAR(a, b, tol)                                                                      \
  do {                                                                                             \
    double tu_a_ = (double)(a), tu_b_ = (double)(b), tu_t_ = (double)(tol);                        \
    tu_record(fabs(tu_a_ - tu_b_) <= tu_t_, __FILE__, __LINE__, "%s ~ %s (%.17g vs %.17g)", #a,    \
              #b, tu_a_, tu_b_);                                                                   \
  } while (0)
/* A call that must succeed with a non-NULL handle. */
#define CHECK_NOT_NULL(p) tu_record((p) != NULL, __FILE__, __LINE__, "%s is not NULL", #p)

/* A call that must fail: returns NULL and sets a non-empty message. The
 * result is released in case the library wrongly returned an array. */
#define CHECK_NULL_ERR(expr)                                                                       \
  do {                                                                                             \
    emlx_clear_error();                                                                            \
    emlx_array *tu_r_ = (expr);                                                                    \
    const char *tu_e_ = emlx_last_error();                                                         \
    tu_record(tu_r_ == NULL && tu_e_ != NULL && tu_e_[0] != '\0', __FILE__, __LINE__,              \
              "%s fails with a message (got %s, message \"%s\")", #expr,                           \
              tu_r_ ? "an array" : "NULL", tu_e_ ? tu_e_ : "(null)");                              \
    emlx_release(tu_r_);                                                                           \
    emlx_clear_error();                                                                            \
  } while (0)

/* A status call that must fail: returns non-zero and sets a message. */
#define CHECK_FAILS(expr)                                                                          \
  do {                                                                                             \
    emlx_clear_error();                                                                            \
    int tu_s_ = (int)(expr);                                                                       \
    const char *tu_e_ = emlx_last_error();                                                         \
    tu_record(tu_s_ != 0 && tu_e_ != NULL && tu_e_[0] != '\0', __FILE__, __LINE__,                 \
              "%s fails with a message (status %d, message \"%s\")", #expr, tu_s_,                 \
              tu_e_ ? tu_e_ : "(null)");                                                           \
    emlx_clear_error();                                                                            \
  } while (0)
#define CHECK_OK(expr)                                                                             \
  do {                                                                                             \
    int tu_s_ = (int)(expr);                                                                       \
    tu_record(tu_s_ == 0, __FILE__, __LINE__, "%s returns 0 (got %d)", #expr, tu_s_);              \
  } while (0)

/* Prints the closing line and returns the process status. */
static inline int tu_finish(void) {
  long p = tu_passed, f = tu_failed;
  printf("%ld passed, %ld failed\n", p, f);
  fflush(stdout);
  return f == 0 && p > 0 ? 0 : 1;
}

/* ---- deterministic random numbers ------------------------------------------ */

typedef struct tu_rng {
  uint64_t s;
} tu_rng;

static inline uint64_t tu_next(tu_rng *r) { /* splitmix64 */
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static inline double tu_uniform(tu_rng *r, double lo, double hi) {
  return lo + (hi - lo) * ((double)(tu_next(r) >> 11) * 0x1p-53);
}
static inline int64_t tu_randint(tu_rng *r, int64_t lo, int64_t hi) { /* [lo, hi] */
  return lo + (int64_t)(tu_next(r) % (uint64_t)(hi - lo + 1));
}

/* ---- reference f16 / bf16 ------------------------------------------------------ */

static inline uint32_t tu_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static inline float tu_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* IEEE binary16 decode, straight from the definition. */
static inline double tu_f16_decode(uint16_t h) {
  int sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v;
  if (e == 0)
    v = ldexp((double)m, -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = ldexp((double)(1024 + m), e - 25);
  return sign ? -v : v;
}
/* bfloat16 is the top half of a binary32. */
static inline double tu_bf16_decode(uint16_t h) { return (double)tu_bits_f32((uint32_t)h << 16); }

static inline bool tu_f16_is_nan(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x3FF); }
static inline bool tu_bf16_is_nan(uint16_t h) { return (h & 0x7F80) == 0x7F80 && (h & 0x7F); }

/* Magnitude of a positive pattern, with the infinity pattern read as the next
 * binade's first value (2^16 or 2^128) so that overflow rounds like any other
 * step and a tie with the largest finite value goes to the even pattern (inf). */
static inline double tu_mag16(uint16_t p, bool bf) {
  if (bf)
    return p == 0x7F80 ? 0x1p128 : tu_bf16_decode(p);
  return p == 0x7C00 ? 65536.0 : tu_f16_decode(p);
}
/* Nearest f16 (bf == false) or bf16 pattern to x, ties to even; NaN maps to a
 * quiet NaN. Binary search over the monotone table of positive patterns. */
static inline uint16_t tu_round16(double x, bool bf) {
  uint16_t inf = bf ? 0x7F80 : 0x7C00;
  if (isnan(x))
    return bf ? 0x7FC0 : 0x7E00;
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  double a = fabs(x);
  if (a >= tu_mag16(inf, bf))
    return sign | inf;
  uint16_t lo = 0, hi = inf; /* invariant: mag(lo) <= a < mag(hi) */
  while (hi - lo > 1) {
    uint16_t mid = (uint16_t)((lo + hi) / 2);
    if (tu_mag16(mid, bf) <= a)
      lo = mid;
    else
      hi = mid;
  }
  double dlo = a - tu_mag16(lo, bf), dhi = tu_mag16(hi, bf) - a;
  uint16_t p = dlo < dhi ? lo : dhi < dlo ? hi : ((lo & 1) ? hi : lo);
  return sign | p;
}
static inline uint16_t tu_round_f16(double x) { return tu_round16(x, false); }
static inline uint16_t tu_round_bf16(double x) { return tu_round16(x, true); }

/* ---- dtype helpers --------------------------------------------------------------- */

static const emlx_dtype tu_all_dtypes[EMLX_DTYPE_COUNT] __attribute__((unused)) = {
    EMLX_BOOL,    EMLX_UINT8,   EMLX_UINT16,   EMLX_UINT32,   EMLX_UINT64,
    EMLX_INT8,    EMLX_INT16,   EMLX_INT32,    EMLX_INT64,    EMLX_FLOAT16,
    EMLX_FLOAT32, EMLX_FLOAT64, EMLX_BFLOAT16, EMLX_COMPLEX64, EMLX_COMPLEX128};

static inline size_t tu_dsize(emlx_dtype d) {
  switch (d) {
  case EMLX_BOOL:
  case EMLX_UINT8:
  case EMLX_INT8:
    return 1;
  case EMLX_UINT16:
  case EMLX_INT16:
  case EMLX_FLOAT16:
  case EMLX_BFLOAT16:
    return 2;
  case EMLX_UINT32:
  case EMLX_INT32:
  case EMLX_FLOAT32:
    return 4;
  case EMLX_UINT64:
  case EMLX_INT64:
  case EMLX_FLOAT64:
  case EMLX_COMPLEX64:
    return 8;
  case EMLX_COMPLEX128:
    return 16;
  default:
    return 0;
  }
}
static inline bool tu_is_float(emlx_dtype d) {
  return d == EMLX_FLOAT16 || d == EMLX_BFLOAT16 || d == EMLX_FLOAT32 || d == EMLX_FLOAT64;
}
static inline bool tu_is_int(emlx_dtype d) { return d >= EMLX_UINT8 && d <= EMLX_INT64; }
static inline const char *tu_dname(emlx_dtype d) {
  static const char *n[] = {"bool", "u8",  "u16", "u32", "u64", "s8",   "s16",
                            "s32",  "s64", "f16", "f32", "f64", "bf16", "c64", "c128"};
  return (unsigned)d < EMLX_DTYPE_COUNT ? n[d] : "?";
}

/* Stores v as one element of dtype d at p (complex: real v, imaginary 0).
 * Integer values are converted through int64/uint64 (wrapping as C does for
 * unsigned targets). */
static inline void tu_store(void *p, emlx_dtype d, double v) {
  switch (d) {
  case EMLX_BOOL: {
    uint8_t x = v != 0;
    memcpy(p, &x, 1);
    break;
  }
  case EMLX_UINT8: {
    uint8_t x = (uint8_t)(int64_t)v;
    memcpy(p, &x, 1);
    break;
  }
  case EMLX_UINT16: {
    uint16_t x = (uint16_t)(int64_t)v;
    memcpy(p, &x, 2);
    break;
  }
  case EMLX_UINT32: {
    uint32_t x = (uint32_t)(int64_t)v;
    memcpy(p, &x, 4);
    break;
  }
  case EMLX_UINT64: {
    uint64_t x = v >= 0x1p63 ? (uint64_t)v : (uint64_t)(int64_t)v;
    memcpy(p, &x, 8);
    break;
  }
  case EMLX_INT8: {
    int8_t x = (int8_t)(int64_t)v;
    memcpy(p, &x, 1);
    break;
  }
  case EMLX_INT16: {
    int16_t x = (int16_t)(int64_t)v;
    memcpy(p, &x, 2);
    break;
  }
  case EMLX_INT32: {
    int32_t x = (int32_t)(int64_t)v;
    memcpy(p, &x, 4);
    break;
  }
  case EMLX_INT64: {
    int64_t x = (int64_t)v;
    memcpy(p, &x, 8);
    break;
  }
  case EMLX_FLOAT16: {
    uint16_t x = tu_round_f16(v);
    memcpy(p, &x, 2);
    break;
  }
  case EMLX_BFLOAT16: {
    uint16_t x = tu_round_bf16(v);
    memcpy(p, &x, 2);
    break;
  }
  case EMLX_FLOAT32: {
    float x = (float)v;
    memcpy(p, &x, 4);
    break;
  }
  case EMLX_FLOAT64:
    memcpy(p, &v, 8);
    break;
  case EMLX_COMPLEX64: {
    float x[2] = {(float)v, 0.0f};
    memcpy(p, x, 8);
    break;
  }
  case EMLX_COMPLEX128: {
    double x[2] = {v, 0.0};
    memcpy(p, x, 16);
    break;
  }
  default:
    break;
  }
}
/* Reads one element of dtype d at p as a double (complex: the real part). */
static inline double tu_load(const void *p, emlx_dtype d) {
  switch (d) {
  case EMLX_BOOL: {
    uint8_t x;
    memcpy(&x, p, 1);
    return x ? 1.0 : 0.0;
  }
  case EMLX_UINT8: {
    uint8_t x;
    memcpy(&x, p, 1);
    return x;
  }
  case EMLX_UINT16: {
    uint16_t x;
    memcpy(&x, p, 2);
    return x;
  }
  case EMLX_UINT32: {
    uint32_t x;
    memcpy(&x, p, 4);
    return x;
  }
  case EMLX_UINT64: {
    uint64_t x;
    memcpy(&x, p, 8);
    return (double)x;
  }
  case EMLX_INT8: {
    int8_t x;
    memcpy(&x, p, 1);
    return x;
  }
  case EMLX_INT16: {
    int16_t x;
    memcpy(&x, p, 2);
    return x;
  }
  case EMLX_INT32: {
    int32_t x;
    memcpy(&x, p, 4);
    return x;
  }
  case EMLX_INT64: {
    int64_t x;
    memcpy(&x, p, 8);
    return (double)x;
  }
  case EMLX_FLOAT16: {
    uint16_t x;
    memcpy(&x, p, 2);
    return tu_f16_decode(x);
  }
  case EMLX_BFLOAT16: {
    uint16_t x;
    memcpy(&x, p, 2);
    return tu_bf16_decode(x);
  }
  case EMLX_FLOAT32: {
    float x;
    memcpy(&x, p, 4);
    return (double)x;
  }
  case EMLX_FLOAT64: {
    double x;
    memcpy(&x, p, 8);
    return x;
  }
  case EMLX_COMPLEX64: {
    float x[2];
    memcpy(x, p, 8);
    return (double)x[0];
  }
  case EMLX_COMPLEX128: {
    double x[2];
    memcpy(x, p, 16);
    return x[0];
  }
  default:
    return NAN;
  }
}
/* The value v becomes once stored as dtype d. */
static inline double tu_quant(emlx_dtype d, double v) {
  unsigned char buf[16];
  tu_store(buf, d, v);
  return tu_load(buf, d);
}

/* ---- building and reading arrays ---------------------------------------------------- */

static inline int64_t tu_numel(const int64_t *shape, int ndim) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++)
    n *= shape[i];
  return n;
}

/* An array of dtype d and the given shape from row-major doubles. */
static inline emlx_array *tu_make(emlx_dtype d, const int64_t *shape, int ndim,
                                  const double *vals) {
  int64_t n = tu_numel(shape, ndim);
  unsigned char *buf = malloc((size_t)(n > 0 ? n : 1) * 16);
  for (int64_t i = 0; i < n; i++)
    tu_store(buf + (size_t)i * tu_dsize(d), d, vals[i]);
  emlx_array *a = emlx_from_blob(buf, d, shape, ndim, EMLX_CPU);
  free(buf);
  return a;
}
/* 1-D shorthand. */
static inline emlx_array *tu_make1(emlx_dtype d, int64_t n, const double *vals) {
  return tu_make(d, &n, 1, vals);
}
/* Values f(i) for a row-major index i, in a fresh malloc'd buffer. */
static inline double *tu_iota(int64_t n, double start, double step) {
  double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  for (int64_t i = 0; i < n; i++)
    v[i] = start + step * (double)i;
  return v;
}

#define TU_GUARD 64
#define TU_GUARD_BYTE 0xA5

/* Reads a through emlx_to_blob into a buffer followed by guard bytes, checks
 * the guard and the byte count, and returns the raw bytes (malloc'd, caller
 * frees) or NULL on failure (already recorded as a failed check). */
static inline unsigned char *tu_read_raw_at(emlx_array *a, const char *file, int line) {
  if (!tu_record(a != NULL, file, line, "array to read is not NULL"))
    return NULL;
  size_t n = emlx_nbytes(a);
  size_t expect = (size_t)emlx_size(a) * tu_dsize(emlx_array_dtype(a));
  if (!tu_record(n == expect, file, line, "emlx_nbytes %zu == size * dtype size %zu", n, expect))
    return NULL;
  unsigned char *buf = malloc(n + 2 * TU_GUARD);
  memset(buf, TU_GUARD_BYTE, n + 2 * TU_GUARD);
  int rc = emlx_to_blob(a, buf + TU_GUARD, n);
  if (!tu_record(rc == 0, file, line, "emlx_to_blob returns 0 (got %d)", rc)) {
    free(buf);
    return NULL;
  }
  bool guard_ok = true;
  for (size_t i = 0; i < TU_GUARD; i++)
    if (buf[i] != TU_GUARD_BYTE || buf[TU_GUARD + n + i] != TU_GUARD_BYTE)
      guard_ok = false;
  if (!tu_record(guard_ok, file, line, "guard bytes around the to_blob output intact")) {
    free(buf);
    return NULL;
  }
  memmove(buf, buf + TU_GUARD, n);
  return buf;
}
#define tu_read_raw(a) tu_read_raw_at((a), __FILE__, __LINE__)

/* Reads a as doubles (complex: real parts); malloc'd, NULL on failure. */
static inline double *tu_read_at(emlx_array *a, const char *file, int line) {
  unsigned char *raw = tu_read_raw_at(a, file, line);
  if (!raw)
    return NULL;
  int64_t n = emlx_size(a);
  emlx_dtype d = emlx_array_dtype(a);
  double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  for (int64_t i = 0; i < n; i++)
    v[i] = tu_load(raw + (size_t)i * tu_dsize(d), d);
  free(raw);
  return v;
}
#define tu_read(a) tu_read_at((a), __FILE__, __LINE__)

/* ---- comparisons -------------------------------------------------------------------- */

/* Spacing of dtype d's values at the magnitude of x (x a value of d). */
static inline double tu_ulp(emlx_dtype d, double x) {
  double a = fabs(x);
  int e;
  switch (d) {
  case EMLX_FLOAT16:
    if (a < 0x1p-14)
      return 0x1p-24;
    frexp(a, &e);
    return ldexp(1.0, e - 11);
  case EMLX_BFLOAT16:
    if (a < 0x1p-126)
      return 0x1p-133;
    frexp(a, &e);
    return ldexp(1.0, e - 8);
  case EMLX_FLOAT32:
  case EMLX_COMPLEX64:
    if (a < 0x1p-126)
      return 0x1p-149;
    frexp(a, &e);
    return ldexp(1.0, e - 24);
  case EMLX_FLOAT64:
  case EMLX_COMPLEX128:
    if (a < 0x1p-1022)
      return 0x1p-1074;
    frexp(a, &e);
    return ldexp(1.0, e - 53);
  default:
    return 0.0;
  }
}

/* got[i] (values of dtype d) against the f64 reference ref[i]: the reference
 * is rounded to d first; floats may differ by max_ulp ulp of that rounded
 * value (NaN must match NaN, infinities must match exactly), everything else
 * must be equal. Prints the first few mismatches; one check in all. */
static inline bool tu_check_values_at(const double *got, const double *ref, int64_t n, emlx_dtype d,
                                      double max_ulp, const char *what, const char *file,
                                      int line) {
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double r = tu_quant(d, ref[i]), g = got[i];
    bool ok;
    if (isnan(r))
      ok = isnan(g);
    else if (isinf(r) || isinf(g) || !(tu_is_float(d) || d == EMLX_COMPLEX64 || d == EMLX_COMPLEX128))
      ok = g == r;
    else
      ok = fabs(g - r) <= max_ulp * tu_ulp(d, r);
    if (!ok && bad++ < 5)
      fprintf(stderr, "%s:%d: %s [%s] element %" PRId64 ": got %.17g, want %.17g\n", file, line,
              what, tu_dname(d), i, g, r);
  }
  return tu_record(bad == 0, file, line, "%s [%s]: %" PRId64 " of %" PRId64 " elements differ",
                   what, tu_dname(d), bad, n);
}
#define tu_check_values(got, ref, n, d, ulp, what)                                                 \
  tu_check_values_at((got), (ref), (n), (d), (ulp), (what), __FILE__, __LINE__)

/* Reads a, checks its dtype and shape, and compares it with ref (see above). */
static inline bool tu_check_array_at(emlx_array *a, emlx_dtype d, const int64_t *shape, int ndim,
                                     const double *ref, double max_ulp, const char *what,
                                     const char *file, int line) {
  if (!tu_record(a != NULL, file, line, "%s: result is not NULL", what))
    return false;
  bool ok = tu_record(emlx_array_dtype(a) == d, file, line, "%s: dtype %s (got %s)", what,
                      tu_dname(d), tu_dname(emlx_array_dtype(a)));
  bool shape_ok = emlx_ndim(a) == ndim;
  for (int i = 0; shape_ok && i < ndim; i++)
    shape_ok = emlx_shape(a)[i] == shape[i];
  ok &= tu_record(shape_ok, file, line, "%s: shape matches (ndim %d vs %d)", what, emlx_ndim(a),
                  ndim);
  if (!ok)
    return false;
  double *got = tu_read_at(a, file, line);
  if (!got)
    return false;
  ok = tu_check_values_at(got, ref, tu_numel(shape, ndim), d, max_ulp, what, file, line);
  free(got);
  return ok;
}
#define tu_check_array(a, d, shape, ndim, ref, ulp, what)                                          \
  tu_check_array_at((a), (d), (shape), (ndim), (ref), (ulp), (what), __FILE__, __LINE__)

/* Normalised mean squared error sum((g-r)^2) / sum(r^2) (0 when both are 0);
 * +inf if any value is NaN/Inf where the reference is finite. */
static inline double tu_nmse(const double *got, const double *ref, int64_t n) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!isfinite(got[i]) && isfinite(ref[i]))
      return (double)INFINITY;
    double e = got[i] - ref[i];
    num += e * e;
    den += ref[i] * ref[i];
  }
  if (den == 0)
    return num == 0 ? 0.0 : (double)INFINITY;
  return num / den;
}
/* True when no value is NaN or Inf. */
static inline bool tu_all_finite(const double *v, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (!isfinite(v[i]))
      return false;
  return true;
}

/* ---- strided indexing for references -------------------------------------------------- */

/* Row-major unravel of flat index i over shape into idx. */
static inline void tu_unravel(int64_t i, const int64_t *shape, int ndim, int64_t *idx) {
  for (int k = ndim - 1; k >= 0; k--) {
    idx[k] = shape[k] ? i % shape[k] : 0;
    i = shape[k] ? i / shape[k] : 0;
  }
}
static inline int64_t tu_ravel(const int64_t *idx, const int64_t *shape, int ndim) {
  int64_t i = 0;
  for (int k = 0; k < ndim; k++)
    i = i * shape[k] + idx[k];
  return i;
}

/* ---- every SIMD level ----------------------------------------------------------------- */

/* CTest runs every program once per ISA level with EMLX_ISA=scalar|avx2|avx512
 * (CMakeLists.txt): the library picks its kernels once, at start-up, so a
 * level needs its own process. EMLX_ISA only caps the level, so on a machine
 * that lacks the level asked for the program would quietly run a lower one
 * again; instead it says so and exits 77, which CTest reports as skipped. An
 * unknown level is an error (the library would ignore it). This runs before
 * main, so no program has to remember to call it. */
__attribute__((constructor)) static void tu_isa_gate(void) {
  const char *want = getenv("EMLX_ISA");
  if (!want)
    return;
  if (strcmp(want, "scalar") && strcmp(want, "avx2") && strcmp(want, "avx512")) {
    fprintf(stderr, "EMLX_ISA=%s is not a level (scalar, avx2 or avx512)\n", want);
    exit(2);
  }
  const char *got = emlx_simd_level();
  if (strcmp(want, got) != 0) {
    printf("skipped: EMLX_ISA=%s, but this machine runs at most %s\n", want, got);
    fflush(stdout);
    exit(77);
  }
}

#endif
