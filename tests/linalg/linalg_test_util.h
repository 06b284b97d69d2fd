/* linalg_test_util.h — helpers shared by the linalg tests (test_linalg.c,
 * test_linalg_solve.c): arrays of float32 / float64 / complex64 built from
 * and read back into complex f64 host values, naive f64 matrix products,
 * norms, and the tolerances the checks use.
 *
 * Every reference here is computed independently of the library, in
 * complex double with plain loops: results are checked by reconstruction
 * (Q R = A, U S Vt = A, ...) and by structure (orthogonality, triangles),
 * not against another LAPACK. Residuals are relative Frobenius norms. */
#ifndef EMLX_LINALG_TEST_UTIL_H
#define EMLX_LINALG_TEST_UTIL_H

#include <complex.h>

#include "test_util.h"

typedef double _Complex lt_c;

static const emlx_dtype lt_dtypes[3]
    __attribute__((unused)) = {EMLX_FLOAT32, EMLX_FLOAT64, EMLX_COMPLEX64};

static inline double lt_eps(emlx_dtype d) { return d == EMLX_FLOAT64 ? 0x1p-52 : 0x1p-23; }
/* Allowed relative residual for matrices of order n. */
static inline double lt_tol(emlx_dtype d, int64_t n) {
  return 40.0 * (double)(n > 4 ? n : 4) * lt_eps(d);
}

/* ---- host values <-> arrays ---------------------------------------------------------- */

/* count values uniform in [-1, 1) (complex: both parts) */
static inline lt_c *lt_random(tu_rng *r, int64_t count, bool complex_values) {
  lt_c *v = malloc((size_t)(count > 0 ? count : 1) * sizeof *v);
  for (int64_t i = 0; i < count; i++) {
    double re = tu_uniform(r, -1, 1), im = complex_values ? tu_uniform(r, -1, 1) : 0.0;
    v[i] = CMPLX(re, im);
  }
  return v;
}

/* An array of dtype d (float32, float64, complex64, or any real dtype via
 * tu_store) from complex values (the imaginary part dropped for real d). */
static inline emlx_array *lt_make(emlx_dtype d, const int64_t *shape, int nd, const lt_c *v) {
  int64_t n = tu_numel(shape, nd);
  size_t es = tu_dsize(d);
  unsigned char *buf = calloc((size_t)(n > 0 ? n : 1), es);
  for (int64_t i = 0; i < n; i++) {
    if (d == EMLX_COMPLEX64) {
      float f[2] = {(float)creal(v[i]), (float)cimag(v[i])};
      memcpy(buf + (size_t)i * 8, f, 8);
    } else {
      tu_store(buf + (size_t)i * es, d, creal(v[i]));
    }
  }
  emlx_array *a = emlx_from_blob(buf, d, shape, nd, EMLX_CPU);
  free(buf);
  return a;
}

/* Evaluates a and reads it (row-major) as complex doubles; NULL (with a
 * failed check) when that fails. */
static inline lt_c *lt_read_at(emlx_array *a, const char *file, int line) {
  unsigned char *raw = tu_read_raw_at(a, file, line);
  if (!raw)
    return NULL;
  int64_t n = emlx_size(a);
  emlx_dtype d = emlx_array_dtype(a);
  lt_c *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  for (int64_t i = 0; i < n; i++) {
    if (d == EMLX_COMPLEX64) {
      float f[2];
      memcpy(f, raw + (size_t)i * 8, 8);
      v[i] = CMPLX((double)f[0], (double)f[1]);
    } else {
      v[i] = tu_load(raw + (size_t)i * tu_dsize(d), d);
    }
  }
  free(raw);
  return v;
}
#define lt_read(a) lt_read_at((a), __FILE__, __LINE__)

/* True when a has this dtype and shape (recorded as one check). */
static inline bool lt_check_shape_at(emlx_array *a, emlx_dtype d, const int64_t *shape, int nd,
                                     const char *what, const char *file, int line) {
  bool ok = a != NULL && emlx_array_dtype(a) == d && emlx_ndim(a) == nd;
  for (int i = 0; ok && i < nd; i++)
    ok = emlx_shape(a)[i] == shape[i];
  return tu_record(ok, file, line, "%s: dtype %s and rank %d as expected (got %s, rank %d)", what,
                   tu_dname(d), nd, a ? tu_dname(emlx_array_dtype(a)) : "NULL",
                   a ? emlx_ndim(a) : -1);
}
#define lt_check_shape(a, d, shape, nd, what)                                                      \
  lt_check_shape_at((a), (d), (shape), (nd), (what), __FILE__, __LINE__)

/* ---- naive matrix algebra (row-major, complex f64) ---------------------------------------- */

/* c (m x n) = a (m x k) b (k x n) */
static inline void lt_matmul(const lt_c *a, const lt_c *b, lt_c *c, int64_t m, int64_t k,
                             int64_t n) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      lt_c s = 0;
      for (int64_t t = 0; t < k; t++)
        s += a[i * k + t] * b[t * n + j];
      c[i * n + j] = s;
    }
}
/* out (n x m) = a^H (a is m x n); conj false: a^T */
static inline void lt_transpose(const lt_c *a, lt_c *out, int64_t m, int64_t n, bool conjugate) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++)
      out[j * m + i] = conjugate ? conj(a[i * n + j]) : a[i * n + j];
}
static inline double lt_norm(const lt_c *a, int64_t count) {
  double s = 0;
  for (int64_t i = 0; i < count; i++)
    s += creal(a[i] * conj(a[i]));
  return sqrt(s);
}
/* ||a - b||_F / max(||b||_F, 1e-300) */
static inline double lt_rel_diff(const lt_c *a, const lt_c *b, int64_t count) {
  double s = 0;
  for (int64_t i = 0; i < count; i++) {
    lt_c d = a[i] - b[i];
    s += creal(d * conj(d));
  }
  double nb = lt_norm(b, count);
  return sqrt(s) / (nb > 1e-300 ? nb : 1.0);
}
/* ||a^H a - I||_F for a (m x k): how far the k columns are from orthonormal. */
static inline double lt_orth_cols(const lt_c *a, int64_t m, int64_t k) {
  double s = 0;
  for (int64_t i = 0; i < k; i++)
    for (int64_t j = 0; j < k; j++) {
      lt_c d = 0;
      for (int64_t t = 0; t < m; t++)
        d += conj(a[t * k + i]) * a[t * k + j];
      d -= i == j ? 1.0 : 0.0;
      s += creal(d * conj(d));
    }
  return sqrt(s);
}
/* Same for the k rows of a (k x n). */
static inline double lt_orth_rows(const lt_c *a, int64_t k, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < k; i++)
    for (int64_t j = 0; j < k; j++) {
      lt_c d = 0;
      for (int64_t t = 0; t < n; t++)
        d += a[i * n + t] * conj(a[j * n + t]);
      d -= i == j ? 1.0 : 0.0;
      s += creal(d * conj(d));
    }
  return sqrt(s);
}
/* True when every element strictly below (lower true) or above the diagonal
 * of the r x c matrix a is exactly zero. */
static inline bool lt_triangle_zero(const lt_c *a, int64_t r, int64_t c, bool lower) {
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < c; j++)
      if ((lower ? j < i : j > i) && a[i * c + j] != 0)
        return false;
  return true;
}
/* count matrices of order n, each B + n I (diagonally dominant enough to be
 * well conditioned) where B is uniform in [-1, 1). */
static inline lt_c *lt_well_conditioned(tu_rng *r, int64_t count, int64_t n, bool complex_values) {
  lt_c *v = lt_random(r, count * n * n, complex_values);
  for (int64_t b = 0; b < count; b++)
    for (int64_t i = 0; i < n; i++)
      v[(b * n + i) * n + i] += (double)n;
  return v;
}
/* count Hermitian positive-definite matrices B B^H + n I. */
static inline lt_c *lt_hpd(tu_rng *r, int64_t count, int64_t n, bool complex_values) {
  lt_c *b = lt_random(r, count * n * n, complex_values);
  lt_c *v = malloc((size_t)(count * n * n > 0 ? count * n * n : 1) * sizeof *v);
  for (int64_t m = 0; m < count; m++) {
    const lt_c *bm = b + m * n * n;
    lt_c *vm = v + m * n * n;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        lt_c s = i == j ? (double)n : 0.0;
        for (int64_t t = 0; t < n; t++)
          s += bm[i * n + t] * conj(bm[j * n + t]);
        vm[i * n + j] = s;
      }
  }
  free(b);
  return v;
}

/* Shape = batch (nb axes) followed by r, c; returns the rank. */
static inline int lt_shape(int64_t *shape, const int64_t *batch, int nb, int64_t r, int64_t c) {
  for (int i = 0; i < nb; i++)
    shape[i] = batch[i];
  shape[nb] = r;
  shape[nb + 1] = c;
  return nb + 2;
}

/* An evaluation that must fail with a message containing `needle`. */
#define LT_EVAL_FAILS(arr, needle)                                                                 \
  do {                                                                                             \
    emlx_array *lt_a_ = (arr);                                                                     \
    emlx_clear_error();                                                                            \
    int lt_rc_ = lt_a_ ? emlx_eval(&lt_a_, 1) : 0;                                                 \
    const char *lt_e_ = emlx_last_error();                                                         \
    tu_record(lt_a_ != NULL && lt_rc_ != 0 && strstr(lt_e_, (needle)) != NULL, __FILE__, __LINE__, \
              "eval of %s fails with \"%s\" (rc %d, message \"%s\")", #arr, (needle), lt_rc_,      \
              lt_e_);                                                                              \
    emlx_clear_error();                                                                            \
  } while (0)

#endif
