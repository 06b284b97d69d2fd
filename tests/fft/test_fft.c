/* test_fft.c — the FFT family (emlx_fft, emlx_ifft, emlx_fft2, emlx_ifft2,
 * emlx_fftn, emlx_ifftn) against a direct DFT computed here in f64.
 *
 * Errors are relative L2 norms, ||got - ref|| / ||ref||, against a bound of
 * K * (log2(n) + 1) * 2^-24 (K larger for lengths that go through
 * Bluestein). Lengths 1..64 and 97, 128, 1000, 1024, 4096, 10007 are checked
 * against the O(n^2) DFT; longer ones (beyond the lane path) against exact
 * tones and by round trips. Also: batches (tile paths), non-last axes,
 * transposed / stepped / broadcast inputs, real inputs of every kind,
 * padding and truncation, empty arrays, errors, and threads sharing the plan
 * cache. CTest runs the program at every ISA level (EMLX_ISA). */
#include <pthread.h>

#include "test_util.h"

#define EPS 0x1p-24

/* ---- complex arrays and the reference ---------------------------------------------- */

static void rand_c(tu_rng *r, double *v, int64_t count) {
  for (int64_t i = 0; i < 2 * count; i++)
    v[i] = tu_uniform(r, -1.0, 1.0);
}

/* A complex64 array from interleaved doubles. */
static emlx_array *make_c64(const double *v, const int64_t *shape, int nd) {
  int64_t n = tu_numel(shape, nd);
  float *buf = malloc(sizeof(float) * (size_t)(2 * n + 2));
  for (int64_t i = 0; i < 2 * n; i++)
    buf[i] = (float)v[i];
  emlx_array *a = emlx_from_blob(buf, EMLX_COMPLEX64, shape, nd, EMLX_CPU);
  free(buf);
  return a;
}

/* The values of a as interleaved doubles (NULL if a is NULL, not complex64,
 * or fails to evaluate). */
static double *read_c64(emlx_array *a) {
  if (!a || emlx_array_dtype(a) != EMLX_COMPLEX64)
    return NULL;
  int64_t n = emlx_size(a);
  float *buf = malloc(sizeof(float) * (size_t)(2 * n + 2));
  double *out = malloc(sizeof(double) * (size_t)(2 * n + 2));
  if (emlx_to_blob(a, buf, (size_t)n * 8) != 0) {
    free(buf);
    free(out);
    return NULL;
  }
  for (int64_t i = 0; i < 2 * n; i++)
    out[i] = (double)buf[i];
  free(buf);
  return out;
}

/* Direct DFT along axis of x (row-major, interleaved), length n (truncated
 * or zero-padded); oshape receives the result's shape. inverse: +i and 1/n. */
static double *ref_dft(const double *x, const int64_t *shape, int nd, int axis, int64_t n,
                       bool inverse, int64_t *oshape) {
  int64_t len = shape[axis], outer = 1, inner = 1;
  for (int d = 0; d < axis; d++)
    outer *= shape[d];
  for (int d = axis + 1; d < nd; d++)
    inner *= shape[d];
  for (int d = 0; d < nd; d++)
    oshape[d] = shape[d];
  oshape[axis] = n;
  double *w = malloc(sizeof(double) * 2 * (size_t)n);
  for (int64_t e = 0; e < n; e++) {
    double a = (inverse ? 2.0 : -2.0) * M_PI * (double)e / (double)n;
    w[2 * e] = cos(a);
    w[2 * e + 1] = sin(a);
  }
  double *y = malloc(sizeof(double) * 2 * (size_t)(outer * n * inner + 1));
  int64_t used = len < n ? len : n;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++)
      for (int64_t k = 0; k < n; k++) {
        double sr = 0.0, si = 0.0;
        int64_t e = 0; /* j * k mod n, stepped without a division */
        for (int64_t j = 0; j < used; j++) {
          const double *v = x + 2 * ((o * len + j) * inner + i);
          const double *t = w + 2 * e;
          sr += v[0] * t[0] - v[1] * t[1];
          si += v[0] * t[1] + v[1] * t[0];
          e += k;
          if (e >= n)
            e -= n;
        }
        double *out = y + 2 * ((o * n + k) * inner + i);
        out[0] = inverse ? sr / (double)n : sr;
        out[1] = inverse ? si / (double)n : si;
      }
  free(w);
  return y;
}

static double rel_err(const double *got, const double *ref, int64_t count) {
  double num = 0.0, den = 0.0;
  for (int64_t i = 0; i < 2 * count; i++) {
    double d = got[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  if (!(num == num)) /* NaN */
    return (double)INFINITY;
  return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

static double bound(int64_t n, double k) { return k * (log2((double)(n > 1 ? n : 2)) + 1.0) * EPS; }

/* Worst error seen per kind, reported at the end. */
static double g_worst_direct, g_worst_blue;

static bool is_smooth(int64_t n) {
  for (int64_t p = 2; p * p <= n; p++)
    while (n % p == 0)
      n /= p;
  return n <= 31;
}

/* Checks got (an array, released here) against ref with shape oshape. */
#define CHECK_RESULT(got, ref, oshape, nd, n, ...)                                                 \
  check_result_at(got, ref, oshape, nd, n, __FILE__, __LINE__, __VA_ARGS__)
static void check_result_at(emlx_array *got, const double *ref, const int64_t *oshape, int nd,
                            int64_t n, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));
static void check_result_at(emlx_array *got, const double *ref, const int64_t *oshape, int nd,
                            int64_t n, const char *file, int line, const char *fmt, ...) {
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  bool shape_ok = got && emlx_ndim(got) == nd;
  for (int d = 0; shape_ok && d < nd; d++)
    shape_ok = emlx_shape(got)[d] == oshape[d];
  if (!tu_record(shape_ok && emlx_array_dtype(got) == EMLX_COMPLEX64, file, line,
                 "%s: complex64 result of the right shape", what)) {
    emlx_release(got);
    return;
  }
  double *g = read_c64(got);
  int64_t count = tu_numel(oshape, nd);
  double e = g ? rel_err(g, ref, count) : (double)INFINITY;
  bool smooth = is_smooth(n);
  double tol = bound(n, smooth ? 2.0 : 6.0);
  double *worst = smooth ? &g_worst_direct : &g_worst_blue;
  if (e / bound(n, 1.0) > *worst)
    *worst = e / bound(n, 1.0);
  tu_record(e <= tol, file, line, "%s: relative error %.3g <= %.3g", what, e, tol);
  free(g);
  emlx_release(got);
}

/* fft/ifft of a random array of shape along axis with length n (0: own). */
static void check_1d(tu_rng *rng, const int64_t *shape, int nd, int axis, int64_t n) {
  int64_t count = tu_numel(shape, nd);
  double *x = malloc(sizeof(double) * 2 * (size_t)(count + 1));
  rand_c(rng, x, count);
  emlx_array *a = make_c64(x, shape, nd);
  int ax = axis < 0 ? axis + nd : axis;
  int64_t len = n ? n : shape[ax];
  int64_t oshape[8];
  for (int inv = 0; inv < 2; inv++) {
    double *ref = ref_dft(x, shape, nd, ax, len, inv, oshape);
    emlx_array *y = inv ? emlx_ifft(a, n, axis) : emlx_fft(a, n, axis);
    CHECK_RESULT(y, ref, oshape, nd, len, "%s n=%lld axis=%d of shape[%d]=(%lld,...)",
                 inv ? "ifft" : "fft", (long long)len, axis, nd, (long long)shape[0]);
    free(ref);
  }
  emlx_release(a);
  free(x);
}

/* ---- tests -------------------------------------------------------------------------- */

static void test_lengths(void) {
  tu_rng rng = {1};
  for (int64_t n = 1; n <= 64; n++) {
    check_1d(&rng, (int64_t[]){n}, 1, 0, 0);
    check_1d(&rng, (int64_t[]){5, n}, 2, -1, 0); /* a partial tile */
    check_1d(&rng, (int64_t[]){37, n}, 2, 1, 0); /* full tiles and a tail */
  }
  static const int64_t more[] = {97, 128, 1000, 1024, 4096, 10007};
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
    check_1d(&rng, (int64_t[]){more[i]}, 1, 0, 0); /* one row: lanes or row plans */
  check_1d(&rng, (int64_t[]){3, 97}, 2, 1, 0);
  check_1d(&rng, (int64_t[]){40, 1000}, 2, 1, 0); /* tiles */
  check_1d(&rng, (int64_t[]){40, 1024}, 2, 1, 0);
  check_1d(&rng, (int64_t[]){3, 4096}, 2, 1, 0);  /* row plans, row by row */
  check_1d(&rng, (int64_t[]){34, 1031}, 2, 1, 0); /* Bluestein in lanes */
  check_1d(&rng, (int64_t[]){2, 2053}, 2, 1, 0);  /* Bluestein on rows */
  static const int64_t odd[] = {121, 169, 289, 361, 529, 841, 961, 1369, 2 * 37, 3 * 41};
  for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
    check_1d(&rng, (int64_t[]){3, odd[i]}, 2, 1, 0);
}

/* Lengths beyond the lane path: against exact tones, and round trips. */
static void test_long(void) {
  tu_rng rng = {2};
  static const int64_t lens[] = {(int64_t)1 << 17, 177147, 65537, 3 * 65537, 100000};
  for (size_t t = 0; t < sizeof lens / sizeof lens[0]; t++) {
    int64_t n = lens[t];
    /* x[j] = a + b exp(2 pi i f j / n) -> X = n a at 0 and n b at f. */
    int64_t f = n / 3 + 1;
    double ar = 0.25, ai = -0.5, br = 0.75, bi = 0.125;
    double *x = malloc(sizeof(double) * 2 * (size_t)n), *ref = calloc(2 * (size_t)n, 8);
    for (int64_t j = 0; j < n; j++) {
      double a = 2.0 * M_PI * (double)((j * f) % n) / (double)n, c = cos(a), s = sin(a);
      x[2 * j] = ar + br * c - bi * s;
      x[2 * j + 1] = ai + br * s + bi * c;
    }
    ref[0] = (double)n * ar;
    ref[1] = (double)n * ai;
    ref[2 * f] = (double)n * br;
    ref[2 * f + 1] = (double)n * bi;
    emlx_array *a = make_c64(x, (int64_t[]){n}, 1);
    CHECK_RESULT(emlx_fft(a, 0, 0), ref, (int64_t[]){n}, 1, n, "fft of tones, n=%lld",
                 (long long)n);
    emlx_release(a);
    /* Round trip of noise. */
    rand_c(&rng, x, n);
    a = make_c64(x, (int64_t[]){n}, 1);
    emlx_array *y = emlx_fft(a, 0, -1);
    CHECK_RESULT(emlx_ifft(y, 0, -1), x, (int64_t[]){n}, 1, n, "ifft(fft(x)), n=%lld",
                 (long long)n);
    emlx_release(y);
    emlx_release(a);
    free(x);
    free(ref);
  }
}

static void test_roundtrip(void) {
  tu_rng rng = {3};
  for (int64_t n = 1; n <= 300; n += (n < 40 ? 1 : 13)) {
    double *x = malloc(sizeof(double) * 2 * (size_t)(3 * n));
    rand_c(&rng, x, 3 * n);
    emlx_array *a = make_c64(x, (int64_t[]){3, n}, 2);
    emlx_array *y = emlx_fft(a, 0, 1);
    CHECK_RESULT(emlx_ifft(y, 0, 1), x, ((int64_t[]){3, n}), 2, n, "round trip n=%lld",
                 (long long)n);
    emlx_release(y);
    emlx_release(a);
    free(x);
  }
}

/* fft2 / fftn against successive 1-D reference DFTs. */
static void check_nd(tu_rng *rng, const int64_t *shape, int nd, const int64_t *s, const int *axes,
                     int naxes, int kind /* 0 fftn, 1 fft2, 2 fft2 default axes */) {
  int64_t count = tu_numel(shape, nd);
  double *x = malloc(sizeof(double) * 2 * (size_t)(count + 1));
  rand_c(rng, x, count);
  emlx_array *a = make_c64(x, shape, nd);
  for (int inv = 0; inv < 2; inv++) {
    int64_t cur[8], next[8];
    memcpy(cur, shape, sizeof(int64_t) * (size_t)nd);
    double *ref = malloc(sizeof(double) * 2 * (size_t)(count + 1));
    memcpy(ref, x, sizeof(double) * 2 * (size_t)count);
    int64_t maxlen = 1;
    for (int i = 0; i < naxes; i++) {
      int ax = axes[i] < 0 ? axes[i] + nd : axes[i];
      int64_t len = s && s[i] ? s[i] : cur[ax];
      maxlen = len > maxlen ? len : maxlen;
      double *r2 = ref_dft(ref, cur, nd, ax, len, inv, next);
      free(ref);
      ref = r2;
      memcpy(cur, next, sizeof next);
    }
    emlx_array *y;
    if (kind == 0)
      y = inv ? emlx_ifftn(a, s, axes, naxes) : emlx_fftn(a, s, axes, naxes);
    else if (kind == 1)
      y = inv ? emlx_ifft2(a, s, axes) : emlx_fft2(a, s, axes);
    else
      y = inv ? emlx_ifft2(a, s, NULL) : emlx_fft2(a, s, NULL);
    CHECK_RESULT(y, ref, cur, nd, maxlen * 4, "%s%s over %d axes (kind %d)", inv ? "i" : "",
                 kind ? "fft2" : "fftn", naxes, kind);
    free(ref);
  }
  emlx_release(a);
  free(x);
}

static void test_multi(void) {
  tu_rng rng = {4};
  check_nd(&rng, (int64_t[]){6, 10}, 2, NULL, (int[]){-2, -1}, 2, 2);
  check_nd(&rng, (int64_t[]){6, 10}, 2, (int64_t[]){4, 13}, (int[]){-2, -1}, 2, 2);
  check_nd(&rng, (int64_t[]){6, 10}, 2, (int64_t[]){13, 0}, (int[]){1, 0}, 2, 1);
  check_nd(&rng, (int64_t[]){3, 7, 20}, 3, NULL, (int[]){0, 2}, 2, 1);
  check_nd(&rng, (int64_t[]){3, 4, 5}, 3, NULL, (int[]){0, 1, 2}, 3, 0);
  check_nd(&rng, (int64_t[]){4, 3, 17}, 3, (int64_t[]){5, 2}, (int[]){2, 0}, 2, 0);
  check_nd(&rng, (int64_t[]){2, 33, 40}, 3, NULL, (int[]){-1, -2, 0}, 3, 0);
  /* axes NULL: every axis. */
  int64_t shape[2] = {5, 6};
  double x[60];
  rand_c(&rng, x, 30);
  emlx_array *a = make_c64(x, shape, 2);
  int64_t s1[2], s2[2];
  double *r1 = ref_dft(x, shape, 2, 1, 6, false, s1);
  double *r2 = ref_dft(r1, s1, 2, 0, 5, false, s2);
  CHECK_RESULT(emlx_fftn(a, NULL, NULL, 7), r2, s2, 2, 6, "fftn over all axes");
  free(r1);
  free(r2);
  /* naxes 0: a conversion only. */
  emlx_array *f = emlx_astype(a, EMLX_FLOAT32);
  double xr[60];
  for (int i = 0; i < 30; i++) {
    xr[2 * i] = (double)(float)x[2 * i];
    xr[2 * i + 1] = 0.0;
  }
  CHECK_RESULT(emlx_fftn(f, NULL, (int[]){0}, 0), xr, shape, 2, 1, "fftn over no axes");
  emlx_release(f);
  emlx_release(a);
}

static void test_axes(void) {
  tu_rng rng = {5};
  check_1d(&rng, (int64_t[]){12, 40}, 2, 0, 0);  /* column tiles of 16, 16, 8 */
  check_1d(&rng, (int64_t[]){4, 9, 5}, 3, 1, 0); /* inner 5: rows gathered one by one */
  check_1d(&rng, (int64_t[]){33, 20}, 2, 0, 0);
  check_1d(&rng, (int64_t[]){3, 17, 48}, 3, 1, 0);
  check_1d(&rng, (int64_t[]){3, 17, 48}, 3, 0, 0);
  check_1d(&rng, (int64_t[]){1100, 3}, 2, 0, 0); /* long column, few of them: row plans */
  check_1d(&rng, (int64_t[]){2, 1024, 2}, 3, 1, 0);
  check_1d(&rng, (int64_t[]){1031, 2}, 2, 0, 0); /* Bluestein row with a stride */
  check_1d(&rng, (int64_t[]){1200, 33}, 2, 0, 0); /* long columns in tiles of 16, 16, 1 */
  check_1d(&rng, (int64_t[]){12, 40}, 2, 0, 7);  /* truncate a column */
  check_1d(&rng, (int64_t[]){12, 40}, 2, 0, 30); /* pad a column */
}

/* Strided views: transposed, stepped, reversed, broadcast. */
static void test_strided(void) {
  tu_rng rng = {6};
  static const int64_t shapes[][2] = {{20, 8}, {9, 40}, {4096, 2}, {3000, 3}};
  for (size_t t = 0; t < 4; t++) {
    int64_t r = shapes[t][0], c = shapes[t][1];
    double *x = malloc(sizeof(double) * 2 * (size_t)(r * c));
    rand_c(&rng, x, r * c);
    emlx_array *a = make_c64(x, shapes[t], 2);
    emlx_array *at = emlx_transpose(a, NULL, 0); /* (c, r), strides (1, c) */
    double *xt = malloc(sizeof(double) * 2 * (size_t)(r * c));
    for (int64_t i = 0; i < r; i++)
      for (int64_t j = 0; j < c; j++) {
        xt[2 * (j * r + i)] = x[2 * (i * c + j)];
        xt[2 * (j * r + i) + 1] = x[2 * (i * c + j) + 1];
      }
    int64_t ts[2] = {c, r}, os[2];
    for (int axis = 0; axis < 2; axis++) {
      int64_t lens[3] = {0, ts[axis] + 5, ts[axis] / 2 + 1};
      for (int li = 0; li < 3; li++) {
        int64_t n = lens[li] ? lens[li] : ts[axis];
        double *ref = ref_dft(xt, ts, 2, axis, n, false, os);
        CHECK_RESULT(emlx_fft(at, lens[li], axis), ref, os, 2, n,
                     "fft of a transposed (%lld,%lld) along %d, n=%lld", (long long)c, (long long)r,
                     axis, (long long)n);
        free(ref);
        ref = ref_dft(xt, ts, 2, axis, n, true, os);
        CHECK_RESULT(emlx_ifft(at, lens[li], axis), ref, os, 2, n,
                     "ifft of a transposed (%lld,%lld) along %d, n=%lld", (long long)c,
                     (long long)r, axis, (long long)n);
        free(ref);
      }
    }
    emlx_release(at);
    emlx_release(a);
    free(x);
    free(xt);
  }
  /* Every other row, columns reversed. */
  int64_t shape[2] = {10, 24};
  double x[480];
  rand_c(&rng, x, 240);
  emlx_array *a = make_c64(x, shape, 2);
  emlx_array *v = emlx_slice(a, (int64_t[]){1, -1}, (int64_t[]){10, -25}, (int64_t[]){2, -1}, 2);
  int64_t vs[2] = {5, 24}, os[2];
  double xv[240];
  for (int64_t i = 0; i < 5; i++)
    for (int64_t j = 0; j < 24; j++) {
      xv[2 * (i * 24 + j)] = x[2 * ((1 + 2 * i) * 24 + 23 - j)];
      xv[2 * (i * 24 + j) + 1] = x[2 * ((1 + 2 * i) * 24 + 23 - j) + 1];
    }
  for (int axis = 0; axis < 2; axis++) {
    double *ref = ref_dft(xv, vs, 2, axis, vs[axis], false, os);
    CHECK_RESULT(emlx_fft(v, 0, axis), ref, os, 2, vs[axis], "fft of a stepped view, axis %d",
                 axis);
    free(ref);
  }
  emlx_release(v);
  /* A broadcast row (stride 0 along axis 0). */
  emlx_array *row = emlx_slice(a, (int64_t[]){0, 0}, (int64_t[]){1, 24}, NULL, 2);
  emlx_array *b = emlx_broadcast_to(row, (int64_t[]){20, 24}, 2);
  double xb[960];
  for (int64_t i = 0; i < 20; i++)
    memcpy(xb + 2 * 24 * i, x, sizeof(double) * 48);
  int64_t bs[2] = {20, 24};
  for (int axis = 0; axis < 2; axis++) {
    double *ref = ref_dft(xb, bs, 2, axis, bs[axis], false, os);
    CHECK_RESULT(emlx_fft(b, 0, axis), ref, os, 2, bs[axis], "fft of a broadcast, axis %d", axis);
    free(ref);
  }
  emlx_release(b);
  emlx_release(row);
  emlx_release(a);
}

/* Real inputs of every kind but float64 are promoted to complex64 (float64
 * goes to complex128: tests/fft/test_fft_c128.c). */
static void test_real(void) {
  tu_rng rng = {7};
  static const emlx_dtype dts[] = {EMLX_BOOL,    EMLX_UINT8,  EMLX_INT16,    EMLX_INT32,
                                   EMLX_INT64,   EMLX_UINT64, EMLX_FLOAT16,  EMLX_BFLOAT16,
                                   EMLX_FLOAT32};
  int64_t shape[2] = {3, 30}, os[2];
  for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++) {
    emlx_dtype d = dts[t];
    double v[90], xc[180];
    for (int i = 0; i < 90; i++) {
      double r = d == EMLX_BOOL ? (double)(tu_next(&rng) & 1)
                 : tu_is_int(d) ? (double)tu_randint(&rng, 0, 100)
                                : tu_uniform(&rng, -2.0, 2.0);
      v[i] = tu_quant(d, r);
      xc[2 * i] = v[i];
      xc[2 * i + 1] = 0.0;
    }
    emlx_array *a = tu_make(d, shape, 2, v);
    double *ref = ref_dft(xc, shape, 2, 1, 30, false, os);
    CHECK_RESULT(emlx_fft(a, 0, 1), ref, os, 2, 30, "fft of %s", tu_dname(d));
    free(ref);
    ref = ref_dft(xc, shape, 2, 0, 4, true, os);
    CHECK_RESULT(emlx_ifft(a, 4, 0), ref, os, 2, 4, "ifft of %s along 0, n=4", tu_dname(d));
    free(ref);
    emlx_release(a);
  }
}

static void test_empty(void) {
  double z[1] = {0};
  emlx_array *a = make_c64(z, (int64_t[]){0, 4}, 2);
  emlx_array *y = emlx_fft(a, 0, 1);
  CHECK(y && emlx_size(y) == 0 && emlx_shape(y)[1] == 4 && emlx_array_dtype(y) == EMLX_COMPLEX64);
  CHECK_OK(y ? emlx_eval(&y, 1) : -1);
  emlx_release(y);
  y = emlx_ifft2(a, (int64_t[]){2, 8}, NULL); /* padding an empty axis */
  double zeros[32] = {0};
  CHECK_RESULT(y, zeros, ((int64_t[]){2, 8}), 2, 8, "ifft2 of (0, 4) to (2, 8)");
  emlx_release(a);
  a = make_c64(z, (int64_t[]){3, 0}, 2);
  CHECK_RESULT(emlx_fft(a, 4, 1), zeros, ((int64_t[]){3, 4}), 2, 4, "fft of (3, 0) with n=4");
  CHECK_NULL_ERR(emlx_fft(a, 0, 1)); /* a zero-point transform */
  CHECK_NULL_ERR(emlx_fftn(a, NULL, NULL, 0));
  y = emlx_fft(a, 0, 0); /* other axes empty: an empty result */
  CHECK(y && emlx_size(y) == 0);
  CHECK_OK(y ? emlx_eval(&y, 1) : -1);
  emlx_release(y);
  emlx_release(a);
}

static void test_errors(void) {
  double x[24] = {0};
  emlx_array *a = make_c64(x, (int64_t[]){3, 4}, 2);
  CHECK_NULL_ERR(emlx_fft(NULL, 0, 0));
  CHECK_NULL_ERR(emlx_ifft(NULL, 4, -1));
  CHECK_NULL_ERR(emlx_fft2(NULL, NULL, NULL));
  CHECK_NULL_ERR(emlx_fftn(NULL, NULL, NULL, 0));
  CHECK_NULL_ERR(emlx_fft(a, 0, 2));
  CHECK_NULL_ERR(emlx_fft(a, 0, -3));
  CHECK_NULL_ERR(emlx_ifft(a, -1, 0));
  CHECK_NULL_ERR(emlx_fft2(a, (int64_t[]){4, -2}, NULL));
  CHECK_NULL_ERR(emlx_fft2(a, NULL, (int[]){1, 1}));
  CHECK_NULL_ERR(emlx_fft2(a, NULL, (int[]){0, -2})); /* the same axis twice */
  CHECK_NULL_ERR(emlx_fft2(a, NULL, (int[]){0, 2}));
  CHECK_NULL_ERR(emlx_fftn(a, NULL, (int[]){0, 1}, -1));
  CHECK_NULL_ERR(emlx_fftn(a, NULL, (int[]){0, 1, 0}, 3));
  CHECK_NULL_ERR(emlx_ifftn(a, (int64_t[]){-5}, (int[]){1}, 1));
  emlx_array *v = make_c64(x, (int64_t[]){4}, 1);
  CHECK_NULL_ERR(emlx_fft2(v, NULL, NULL)); /* rank 1 */
  emlx_array *s = make_c64(x, (int64_t[]){0}, 0);
  CHECK_NULL_ERR(emlx_fft(s, 0, 0));            /* rank 0 */
  emlx_array *sy = emlx_fftn(s, NULL, NULL, 0); /* no axes: a conversion */
  CHECK(sy && emlx_ndim(sy) == 0 && emlx_array_dtype(sy) == EMLX_COMPLEX64);
  emlx_release(sy);
  emlx_release(s);
  emlx_release(v);
  emlx_release(a);
}

/* Threads transforming many lengths at once: the plan cache (32 plans) is
 * shared, filled, evicted and cleared under them. */
typedef struct thread_arg {
  int id;
  int failures;
} thread_arg;

static void *thread_main(void *p) {
  thread_arg *t = p;
  tu_rng rng = {100 + (uint64_t)t->id};
  for (int it = 0; it < 40; it++) {
    int64_t n = 2 + (it * 7 + t->id * 13) % 70, os[2];
    double x[2 * 4 * 80];
    rand_c(&rng, x, 4 * n);
    emlx_array *a = make_c64(x, (int64_t[]){4, n}, 2);
    emlx_array *y = emlx_fft(a, 0, 1);
    double *g = read_c64(y);
    double *ref = ref_dft(x, (int64_t[]){4, n}, 2, 1, n, false, os);
    if (!g || rel_err(g, ref, 4 * n) > bound(n, 6.0))
      t->failures++;
    free(g);
    free(ref);
    emlx_release(y);
    emlx_release(a);
  }
  return NULL;
}

static void test_threads(void) {
  pthread_t th[4];
  thread_arg args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (thread_arg){i, 0};
    pthread_create(&th[i], NULL, thread_main, &args[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    CHECK_MSG(args[i].failures == 0, "thread %d: %d wrong transforms", i, args[i].failures);
  }
}

int main(void) {
  test_lengths();
  test_long();
  test_roundtrip();
  test_multi();
  test_axes();
  test_strided();
  test_real();
  test_empty();
  test_errors();
  test_threads();
  printf("simd=%s worst error / ((log2 n + 1) 2^-24): direct %.3f, bluestein %.3f\n",
         emlx_simd_level(), g_worst_direct, g_worst_blue);
  return tu_finish();
}
