/* reduce_family_util.h — helpers shared by the reduce family's tests
 * (test_reduce_prod_min_logic_arg.c, test_scan.c, test_sort.c), on top of test_util.h.
 *
 * Values travel as raw element bits (rf_val: the element's bytes,
 * zero-extended), so integers of every width are exact and floats keep
 * their sign of zero and NaN payloads. rf_input() builds an input of any
 * dtype and layout (contiguous, transposed, stepped slice, reversed,
 * broadcast) and hands back its logical row-major values, computed here
 * from the values the test chose, never read back from the library. The
 * order helpers define the value order of emlx/reduce.h independently of
 * the library (NaN largest, -0.0 == +0.0, complex lexicographic). */
#ifndef EMLX_REDUCE_FAMILY_UTIL_H
#define EMLX_REDUCE_FAMILY_UTIL_H

#include "test_util.h"

typedef uint64_t rf_val; /* the element's bits, zero-extended */

/* ---- conversions ------------------------------------------------------------ */
static inline bool rf_is_complex(emlx_dtype d) { return d == EMLX_COMPLEX64; }
static inline bool rf_is_signed_int(emlx_dtype d) { return d >= EMLX_INT8 && d <= EMLX_INT64; }
static inline bool rf_is_unsigned(emlx_dtype d) {
  return d == EMLX_BOOL || (d >= EMLX_UINT8 && d <= EMLX_UINT64);
}

static inline rf_val rf_load(const unsigned char *raw, emlx_dtype d, int64_t i) {
  rf_val v = 0;
  size_t s = tu_dsize(d);
  memcpy(&v, raw + (size_t)i * s, s); /* little-endian */
  return v;
}
static inline void rf_store(unsigned char *raw, emlx_dtype d, int64_t i, rf_val v) {
  size_t s = tu_dsize(d);
  memcpy(raw + (size_t)i * s, &v, s);
}

/* Signed value of an integer element (sign-extended), unsigned for others. */
static inline int64_t rf_i64(emlx_dtype d, rf_val v) {
  switch (d) {
  case EMLX_INT8:
    return (int8_t)(uint8_t)v;
  case EMLX_INT16:
    return (int16_t)(uint16_t)v;
  case EMLX_INT32:
    return (int32_t)(uint32_t)v;
  case EMLX_INT64:
    return (int64_t)v;
  default:
    return (int64_t)v;
  }
}
/* Real value (complex: the real part). */
static inline double rf_f64(emlx_dtype d, rf_val v) {
  unsigned char b[16];
  memcpy(b, &v, 8);
  if (rf_is_signed_int(d))
    return (double)rf_i64(d, v);
  if (rf_is_unsigned(d))
    return (double)v;
  return tu_load(b, d);
}
static inline double rf_imag(emlx_dtype d, rf_val v) {
  if (d != EMLX_COMPLEX64)
    return 0.0;
  float im;
  uint32_t u = (uint32_t)(v >> 32);
  memcpy(&im, &u, 4);
  return (double)im;
}
static inline rf_val rf_from_f64(emlx_dtype d, double x) {
  unsigned char b[16] = {0};
  tu_store(b, d, x);
  rf_val v = 0;
  memcpy(&v, b, tu_dsize(d));
  return v;
}
static inline rf_val rf_from_i64(emlx_dtype d, int64_t x) {
  if (tu_is_float(d) || d == EMLX_COMPLEX64)
    return rf_from_f64(d, (double)x);
  if (d == EMLX_BOOL)
    return x != 0;
  uint64_t u = (uint64_t)x;
  size_t s = tu_dsize(d);
  return s == 8 ? u : u & ((UINT64_C(1) << (8 * s)) - 1);
}
static inline rf_val rf_complex(float re, float im) {
  uint32_t a, b;
  memcpy(&a, &re, 4);
  memcpy(&b, &im, 4);
  return (uint64_t)a | ((uint64_t)b << 32);
}
static inline bool rf_is_nan(emlx_dtype d, rf_val v) {
  if (d == EMLX_COMPLEX64)
    return isnan(rf_f64(d, v)) || isnan(rf_imag(d, v));
  return (tu_is_float(d)) && isnan(rf_f64(d, v));
}

/* ---- order (NaN largest, -0.0 == +0.0, complex lexicographic) ----------------- */
static inline int rf_cmp_real(double a, double b) {
  bool na = isnan(a), nb = isnan(b);
  if (na || nb)
    return na && nb ? 0 : na ? 1 : -1;
  return a < b ? -1 : a > b ? 1 : 0;
}
static inline int rf_cmp(emlx_dtype d, rf_val a, rf_val b) {
  if (rf_is_signed_int(d)) {
    int64_t x = rf_i64(d, a), y = rf_i64(d, b);
    return x < y ? -1 : x > y;
  }
  if (rf_is_unsigned(d))
    return a < b ? -1 : a > b;
  int c = rf_cmp_real(rf_f64(d, a), rf_f64(d, b));
  if (c || d != EMLX_COMPLEX64)
    return c;
  return rf_cmp_real(rf_imag(d, a), rf_imag(d, b));
}

/* ---- random values ------------------------------------------------------------ */
typedef enum rf_profile {
  RF_GENERAL, /* ints in [-9, 9] ([0, 18] unsigned), floats k/8 in [-4, 4] */
  RF_PROD,    /* factors whose products stay moderate: {1, 2, 3, -1, -2} / floats near 1 */
  RF_DUPS,    /* few distinct values (ties) and, for floats, NaN, -NaN, -0.0, +-inf */
  RF_WIDE     /* the dtype's whole range (random bits; floats finite) */
} rf_profile;

static inline rf_val rf_random(tu_rng *r, emlx_dtype d, rf_profile p) {
  if (d == EMLX_BOOL)
    return p == RF_PROD ? (tu_randint(r, 0, 9) != 0) : (rf_val)tu_randint(r, 0, 1);
  if (d == EMLX_COMPLEX64) {
    if (p == RF_DUPS) {
      static const float part[] = {0.0f, 1.0f, -1.0f, 2.0f};
      float re = part[tu_randint(r, 0, 3)], im = part[tu_randint(r, 0, 3)];
      if (tu_randint(r, 0, 15) == 0)
        re = NAN;
      if (tu_randint(r, 0, 15) == 0)
        im = -0.0f;
      return rf_complex(re, im);
    }
    if (p == RF_PROD) {
      double ang = tu_uniform(r, 0, 6.283185307179586);
      return rf_complex((float)cos(ang), (float)sin(ang));
    }
    return rf_complex((float)tu_randint(r, -32, 32) / 8.0f, (float)tu_randint(r, -32, 32) / 8.0f);
  }
  bool is_f = tu_is_float(d);
  switch (p) {
  case RF_GENERAL:
    if (is_f)
      return rf_from_f64(d, (double)tu_randint(r, -32, 32) / 8.0);
    return rf_from_i64(d, rf_is_unsigned(d) ? tu_randint(r, 0, 18) : tu_randint(r, -9, 9));
  case RF_PROD: {
    if (is_f) {
      static const double f[] = {0.5, 0.75, 1.0, 1.25, 1.5, 2.0, -1.0, -0.875};
      return rf_from_f64(d, f[tu_randint(r, 0, 7)]);
    }
    static const int64_t s[] = {1, 2, 3, -1, -2}, u[] = {1, 2, 3, 1, 5};
    int64_t k = tu_randint(r, 0, 4);
    return rf_from_i64(d, rf_is_unsigned(d) ? u[k] : s[k]);
  }
  case RF_DUPS:
    if (is_f) {
      static const double f[] = {1.0, -1.0, 0.0, -0.0, 2.5, NAN, -NAN, INFINITY, -INFINITY, 1.0};
      return rf_from_f64(d, f[tu_randint(r, 0, 9)]);
    }
    return rf_from_i64(d, rf_is_unsigned(d) ? tu_randint(r, 0, 4) : tu_randint(r, -2, 2));
  case RF_WIDE:
  default: {
    if (is_f) {
      double m = tu_uniform(r, -1, 1);
      int e = (int)tu_randint(r, d == EMLX_FLOAT16 ? -14 : -60, d == EMLX_FLOAT16 ? 14 : 60);
      return rf_from_f64(d, ldexp(m, e));
    }
    return rf_from_i64(d, (int64_t)tu_next(r));
  }
  }
}

/* ---- inputs of every layout ----------------------------------------------------- */
typedef enum rf_layout {
  RF_CONTIG,
  RF_TRANSPOSED, /* a transpose (axes reversed) of a contiguous array */
  RF_STEPPED,    /* every other element of the last axis (a slice with step 2) */
  RF_REVERSED,   /* the first axis walked backwards (a slice with step -1) */
  RF_BROADCAST,  /* the first axis broadcast from size 1 */
  RF_LAYOUT_COUNT
} rf_layout;

static const char *const rf_layout_name[RF_LAYOUT_COUNT]
    __attribute__((unused)) = {"contig", "transposed", "stepped", "reversed", "broadcast"};

/* An array of dtype d and logical shape[nd] in the given layout; *vals gets
 * its nd-row-major logical values (malloc'd). NULL on failure (recorded). */
static inline emlx_array *rf_input(emlx_dtype d, const int64_t *shape, int nd, rf_layout lay,
                                   tu_rng *r, rf_profile prof, rf_val **vals) {
  int64_t n = tu_numel(shape, nd);
  size_t es = tu_dsize(d);
  rf_val *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  *vals = v;
  if (nd == 0 && lay != RF_CONTIG)
    lay = RF_CONTIG;
  emlx_array *out = NULL;
  int64_t idx[EMLX_MAX_NDIM];
  if (lay == RF_CONTIG || lay == RF_TRANSPOSED || lay == RF_REVERSED) {
    int64_t bshape[EMLX_MAX_NDIM];
    for (int k = 0; k < nd; k++)
      bshape[k] = lay == RF_TRANSPOSED ? shape[nd - 1 - k] : shape[k];
    unsigned char *raw = calloc((size_t)(n > 0 ? n : 1), es);
    for (int64_t i = 0; i < n; i++)
      v[i] = rf_random(r, d, prof);
    for (int64_t i = 0; i < n; i++) { /* base position of logical element i */
      tu_unravel(i, shape, nd, idx);
      int64_t bidx[EMLX_MAX_NDIM];
      for (int k = 0; k < nd; k++)
        bidx[k] = lay == RF_TRANSPOSED ? idx[nd - 1 - k] : idx[k];
      if (lay == RF_REVERSED)
        bidx[0] = shape[0] - 1 - idx[0];
      rf_store(raw, d, tu_ravel(bidx, bshape, nd), v[i]);
    }
    emlx_array *base = emlx_from_blob(raw, d, bshape, nd, EMLX_CPU);
    free(raw);
    if (lay == RF_CONTIG) {
      out = base;
    } else if (lay == RF_TRANSPOSED) {
      out = emlx_transpose(base, NULL, 0);
      emlx_release(base);
    } else {
      int64_t start[EMLX_MAX_NDIM], stop[EMLX_MAX_NDIM], step[EMLX_MAX_NDIM];
      for (int k = 0; k < nd; k++) {
        start[k] = 0;
        stop[k] = shape[k];
        step[k] = 1;
      }
      start[0] = shape[0] - 1;
      stop[0] = -shape[0] - 1;
      step[0] = -1;
      out = emlx_slice(base, start, stop, step, nd);
      emlx_release(base);
    }
  } else if (lay == RF_STEPPED) {
    int64_t bshape[EMLX_MAX_NDIM];
    for (int k = 0; k < nd; k++)
      bshape[k] = shape[k];
    bshape[nd - 1] = 2 * shape[nd - 1] + 1;
    int64_t bn = tu_numel(bshape, nd);
    unsigned char *raw = calloc((size_t)(bn > 0 ? bn : 1), es);
    for (int64_t i = 0; i < bn; i++)
      rf_store(raw, d, i, rf_random(r, d, prof)); /* filler */
    for (int64_t i = 0; i < n; i++) {
      v[i] = rf_random(r, d, prof);
      tu_unravel(i, shape, nd, idx);
      idx[nd - 1] = 2 * idx[nd - 1] + 1;
      rf_store(raw, d, tu_ravel(idx, bshape, nd), v[i]);
    }
    emlx_array *base = emlx_from_blob(raw, d, bshape, nd, EMLX_CPU);
    free(raw);
    int64_t start[EMLX_MAX_NDIM], stop[EMLX_MAX_NDIM], step[EMLX_MAX_NDIM];
    for (int k = 0; k < nd; k++) {
      start[k] = 0;
      stop[k] = bshape[k];
      step[k] = 1;
    }
    start[nd - 1] = 1;
    step[nd - 1] = 2;
    out = emlx_slice(base, start, stop, step, nd);
    emlx_release(base);
  } else { /* RF_BROADCAST */
    int64_t bshape[EMLX_MAX_NDIM];
    for (int k = 0; k < nd; k++)
      bshape[k] = shape[k];
    bshape[0] = 1;
    int64_t bn = tu_numel(bshape, nd);
    unsigned char *raw = calloc((size_t)(bn > 0 ? bn : 1), es);
    for (int64_t i = 0; i < bn; i++)
      rf_store(raw, d, i, rf_random(r, d, prof));
    for (int64_t i = 0; i < n; i++)
      v[i] = rf_load(raw, d, bn > 0 ? i % bn : 0);
    emlx_array *base = emlx_from_blob(raw, d, bshape, nd, EMLX_CPU);
    free(raw);
    out = emlx_broadcast_to(base, shape, nd);
    emlx_release(base);
  }
  CHECK_MSG(out != NULL, "rf_input %s %s: %s", tu_dname(d), rf_layout_name[lay], emlx_last_error());
  return out;
}

/* An array from explicit values (row-major bits). */
/* rf_val holds 8 bytes, so complex128 (16) stays out of the rf_* loops over
 * every dtype; its reductions, scans and sorts are checked against
 * long double references in tests/reduce/test_reduce_c128.c. Says so once. */
static inline bool rf_skip_c128(emlx_dtype d) {
  static bool said = false;
  if (d != EMLX_COMPLEX128)
    return false;
  if (!said)
    fprintf(stderr, "note: complex128 skipped here (8-byte rf_val); see test_reduce_c128.c\n");
  said = true;
  return true;
}

static inline emlx_array *rf_make(emlx_dtype d, const int64_t *shape, int nd, const rf_val *v) {
  int64_t n = tu_numel(shape, nd);
  unsigned char *raw = malloc((size_t)(n > 0 ? n : 1) * tu_dsize(d));
  for (int64_t i = 0; i < n; i++)
    rf_store(raw, d, i, v[i]);
  emlx_array *a = emlx_from_blob(raw, d, shape, nd, EMLX_CPU);
  free(raw);
  return a;
}

/* Reads an array's values (evaluating it); malloc'd, NULL on failure. */
static inline rf_val *rf_read_at(emlx_array *a, const char *file, int line) {
  unsigned char *raw = tu_read_raw_at(a, file, line);
  if (!raw)
    return NULL;
  int64_t n = emlx_size(a);
  emlx_dtype d = emlx_array_dtype(a);
  rf_val *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  for (int64_t i = 0; i < n; i++)
    v[i] = rf_load(raw, d, i);
  free(raw);
  return v;
}
#define rf_read(a) rf_read_at((a), __FILE__, __LINE__)

/* Checks dtype and shape; returns the values or NULL (recorded). */
static inline rf_val *rf_result_at(emlx_array *a, emlx_dtype d, const int64_t *shape, int nd,
                                   const char *what, const char *file, int line) {
  if (!tu_record(a != NULL, file, line, "%s: result is not NULL", what))
    return NULL;
  bool ok = tu_record(emlx_array_dtype(a) == d, file, line, "%s: dtype %s (got %s)", what,
                      tu_dname(d), tu_dname(emlx_array_dtype(a)));
  bool shape_ok = emlx_ndim(a) == nd;
  for (int i = 0; shape_ok && i < nd; i++)
    shape_ok = emlx_shape(a)[i] == shape[i];
  ok &= tu_record(shape_ok, file, line, "%s: shape (ndim %d, want %d)", what, emlx_ndim(a), nd);
  return ok ? rf_read_at(a, file, line) : NULL;
}
#define rf_result(a, d, shape, nd, what)                                                           \
  rf_result_at((a), (d), (shape), (nd), (what), __FILE__, __LINE__)

#endif
