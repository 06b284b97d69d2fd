/* rowwise_body.h — inner loops of mean, var, std, logsumexp, softmax and
 * log_softmax over a contiguous run, compiled per ISA by
 * rowwise_{scalar,avx2,avx512}.c (table: rowwise.h).
 *
 * Sums accumulate in f64 in 16 lanes (GCC vector extensions, four 4-lane
 * vectors) folded by a fixed tree, then the tail in order: the same order
 * on every ISA. exp is SLEEF's (vl_exp_*, <= 1 ulp), applied to tiles. */
#include "simd/body.h"

#include "rowwise.h"

typedef float rw_v4f_u __attribute__((vector_size(16), aligned(4), may_alias));
typedef double rw_v4d __attribute__((vector_size(32)));
typedef double rw_v4d_u __attribute__((vector_size(32), aligned(8), may_alias));

#define RW_TILE 256 /* elements staged for exp */

/* 16 lanes in four 4-double vectors (a[q] holds lanes 4q..4q+3: vectors no
 * wider than AVX2's, so no ISA falls back to scalar code), folded by the
 * fixed tree lane j + lane j + 8, then + 4, + 2, + 1. */
static double rw_fold(const rw_v4d *a) {
  rw_v4d t = (a[0] + a[2]) + (a[1] + a[3]);
  return (t[0] + t[2]) + (t[1] + t[3]);
}

/* Macros, not functions: a 32-byte vector return changes the ABI below AVX. */
#define RW_LOAD4F(x) __builtin_convertvector(*(const rw_v4f_u *)(x), rw_v4d)
#define RW_LOAD4D(x) (*(const rw_v4d_u *)(x))

static double sum_f32(const float *x, int64_t n) {
  rw_v4d a[4] = {{0}, {0}, {0}, {0}};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int q = 0; q < 4; q++)
      a[q] += RW_LOAD4F(x + i + 4 * q);
  double s = rw_fold(a);
  for (; i < n; i++)
    s += (double)x[i];
  return s;
}

static double sum_f64(const double *x, int64_t n) {
  rw_v4d a[4] = {{0}, {0}, {0}, {0}};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int q = 0; q < 4; q++)
      a[q] += RW_LOAD4D(x + i + 4 * q);
  double s = rw_fold(a);
  for (; i < n; i++)
    s += x[i];
  return s;
}

static double sqdev_f32(const float *x, int64_t n, double mean) {
  rw_v4d a[4] = {{0}, {0}, {0}, {0}};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int q = 0; q < 4; q++) {
      rw_v4d d = RW_LOAD4F(x + i + 4 * q) - mean;
      a[q] += d * d;
    }
  double s = rw_fold(a);
  for (; i < n; i++) {
    double d = (double)x[i] - mean;
    s += d * d;
  }
  return s;
}

static double sqdev_f64(const double *x, int64_t n, double mean) {
  rw_v4d a[4] = {{0}, {0}, {0}, {0}};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int q = 0; q < 4; q++) {
      rw_v4d d = RW_LOAD4D(x + i + 4 * q) - mean;
      a[q] += d * d;
    }
  double s = rw_fold(a);
  for (; i < n; i++) {
    double d = x[i] - mean;
    s += d * d;
  }
  return s;
}

static int max_f32(const float *x, int64_t n, float *m) { return vl_max_f32(x, n, m); }
static int max_f64(const double *x, int64_t n, double *m) { return vl_max_f64(x, n, m); }

static double expsum_f32(const float *x, int64_t n, float m, float *e) {
  float t[RW_TILE];
  double s = 0.0;
  for (int64_t i = 0; i < n; i += RW_TILE) {
    int64_t len = bd_min64(RW_TILE, n - i);
    for (int64_t k = 0; k < len; k++)
      t[k] = x[i + k] - m;
    float *dst = e ? e + i : t;
    vl_exp_f32(t, dst, len);
    s += sum_f32(dst, len);
  }
  return s;
}

static double expsum_f64(const double *x, int64_t n, double m, double *e) {
  double t[RW_TILE];
  double s = 0.0;
  for (int64_t i = 0; i < n; i += RW_TILE) {
    int64_t len = bd_min64(RW_TILE, n - i);
    for (int64_t k = 0; k < len; k++)
      t[k] = x[i + k] - m;
    double *dst = e ? e + i : t;
    vl_exp_f64(t, dst, len);
    s += sum_f64(dst, len);
  }
  return s;
}

static void expscale_f32(const float *x, int64_t n, float m, float s, float *y) {
  float t[RW_TILE];
  for (int64_t i = 0; i < n; i += RW_TILE) {
    int64_t len = bd_min64(RW_TILE, n - i);
    for (int64_t k = 0; k < len; k++)
      t[k] = x[i + k] - m;
    vl_exp_f32(t, t, len);
    for (int64_t k = 0; k < len; k++)
      y[i + k] = t[k] * s;
  }
}

static void expscale_f64(const double *x, int64_t n, double m, double s, double *y) {
  double t[RW_TILE];
  for (int64_t i = 0; i < n; i += RW_TILE) {
    int64_t len = bd_min64(RW_TILE, n - i);
    for (int64_t k = 0; k < len; k++)
      t[k] = x[i + k] - m;
    vl_exp_f64(t, t, len);
    for (int64_t k = 0; k < len; k++)
      y[i + k] = t[k] * s;
  }
}

static void scale_f32(const float *x, int64_t n, float s, float *y) {
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] * s;
}
static void scale_f64(const double *x, int64_t n, double s, double *y) {
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] * s;
}
static void shift_f32(const float *x, int64_t n, float c, float *y) {
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] - c;
}
static void shift_f64(const double *x, int64_t n, double c, double *y) {
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] - c;
}

static void col_add_f32(const float *x, int64_t w, double *acc) {
  for (int64_t c = 0; c < w; c++)
    acc[c] += (double)x[c];
}
static void col_add_f64(const double *x, int64_t w, double *acc) {
  for (int64_t c = 0; c < w; c++)
    acc[c] += x[c];
}
static void col_sqdev_f32(const float *x, int64_t w, const double *mean, double *acc) {
  for (int64_t c = 0; c < w; c++) {
    double d = (double)x[c] - mean[c];
    acc[c] += d * d;
  }
}
static void col_sqdev_f64(const double *x, int64_t w, const double *mean, double *acc) {
  for (int64_t c = 0; c < w; c++) {
    double d = x[c] - mean[c];
    acc[c] += d * d;
  }
}

const emlx_cpu_rowwise_table EMLX_ISA_NAME(emlx_cpu_rowwise) = {
    .sum_f32 = sum_f32,
    .sum_f64 = sum_f64,
    .sqdev_f32 = sqdev_f32,
    .sqdev_f64 = sqdev_f64,
    .max_f32 = max_f32,
    .max_f64 = max_f64,
    .expsum_f32 = expsum_f32,
    .expsum_f64 = expsum_f64,
    .expscale_f32 = expscale_f32,
    .expscale_f64 = expscale_f64,
    .scale_f32 = scale_f32,
    .scale_f64 = scale_f64,
    .shift_f32 = shift_f32,
    .shift_f64 = shift_f64,
    .col_add_f32 = col_add_f32,
    .col_add_f64 = col_add_f64,
    .col_sqdev_f32 = col_sqdev_f32,
    .col_sqdev_f64 = col_sqdev_f64,
};
