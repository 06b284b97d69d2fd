/* rowwise_body.h — inner loops of mean, var, std, logsumexp, softmax and
 * log_softmax over a contiguous run, compiled per ISA by
 * rowwise_{scalar,avx2,avx512}.c (table: rowwise.h).
 *
 * Sums accumulate in f64 in 16 lanes (GCC vector extensions, two 8-lane
 * vectors) folded by a fixed tree, then the tail in order: the same order
 * on every ISA. exp is SLEEF's (vl_exp_*, <= 1 ulp), applied to tiles. */
#include "simd/body.h"

#include "rowwise.h"

typedef float rw_v8f_u __attribute__((vector_size(32), aligned(4), may_alias));
typedef double rw_v8d __attribute__((vector_size(64)));
typedef double rw_v8d_u __attribute__((vector_size(64), aligned(8), may_alias));

#define RW_TILE 256 /* elements staged for exp */

/* By pointer: a 64-byte vector passed by value would change the ABI on the
 * ISAs without AVX-512 (GCC's -Wpsabi) when this is not inlined. */
static double rw_fold(const rw_v8d *a0, const rw_v8d *a1) {
  rw_v8d t = *a0 + *a1;
  for (int w = 4; w >= 1; w /= 2)
    for (int j = 0; j < w; j++)
      t[j] += t[j + w];
  return t[0];
}

static double sum_f32(const float *x, int64_t n) {
  rw_v8d a0 = {0}, a1 = {0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 += __builtin_convertvector(*(const rw_v8f_u *)(x + i), rw_v8d);
    a1 += __builtin_convertvector(*(const rw_v8f_u *)(x + i + 8), rw_v8d);
  }
  double s = rw_fold(&a0, &a1);
  for (; i < n; i++)
    s += (double)x[i];
  return s;
}

static double sum_f64(const double *x, int64_t n) {
  rw_v8d a0 = {0}, a1 = {0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 += *(const rw_v8d_u *)(x + i);
    a1 += *(const rw_v8d_u *)(x + i + 8);
  }
  double s = rw_fold(&a0, &a1);
  for (; i < n; i++)
    s += x[i];
  return s;
}

static double sqdev_f32(const float *x, int64_t n, double mean) {
  rw_v8d a0 = {0}, a1 = {0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    rw_v8d d0 = __builtin_convertvector(*(const rw_v8f_u *)(x + i), rw_v8d) - mean;
    rw_v8d d1 = __builtin_convertvector(*(const rw_v8f_u *)(x + i + 8), rw_v8d) - mean;
    a0 += d0 * d0;
    a1 += d1 * d1;
  }
  double s = rw_fold(&a0, &a1);
  for (; i < n; i++) {
    double d = (double)x[i] - mean;
    s += d * d;
  }
  return s;
}

static double sqdev_f64(const double *x, int64_t n, double mean) {
  rw_v8d a0 = {0}, a1 = {0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    rw_v8d d0 = *(const rw_v8d_u *)(x + i) - mean;
    rw_v8d d1 = *(const rw_v8d_u *)(x + i + 8) - mean;
    a0 += d0 * d0;
    a1 += d1 * d1;
  }
  double s = rw_fold(&a0, &a1);
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
};
