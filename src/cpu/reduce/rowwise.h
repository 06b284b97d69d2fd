/* rowwise.h — private to the statistics and softmax kernel (rowwise.c): the
 * per-ISA table of its inner loops over one contiguous run of f32 or f64
 * values (rowwise_body.h, compiled by rowwise_{scalar,avx2,avx512}.c).
 *
 * Sums go to f64 in 16 explicit lanes combined in a fixed tree, so every
 * ISA adds in the same order. */
#ifndef EMLX_CPU_ROWWISE_H
#define EMLX_CPU_ROWWISE_H

#include <stdint.h>

typedef struct emlx_cpu_rowwise_table {
  /* sum of x[0..n) */
  double (*sum_f32)(const float *x, int64_t n);
  double (*sum_f64)(const double *x, int64_t n);
  /* sum of (x[i] - mean)^2, in f64 */
  double (*sqdev_f32)(const float *x, int64_t n, double mean);
  double (*sqdev_f64)(const double *x, int64_t n, double mean);
  /* *m = max of the non-NaN values (-inf if none); returns whether a NaN
   * was seen */
  int (*max_f32)(const float *x, int64_t n, float *m);
  int (*max_f64)(const double *x, int64_t n, double *m);
  /* e[i] = exp(x[i] - m) when e is not NULL (e may be x); returns the sum
   * of exp(x[i] - m) in f64 */
  double (*expsum_f32)(const float *x, int64_t n, float m, float *e);
  double (*expsum_f64)(const double *x, int64_t n, double m, double *e);
  /* y[i] = exp(x[i] - m) * s (y may be x) */
  void (*expscale_f32)(const float *x, int64_t n, float m, float s, float *y);
  void (*expscale_f64)(const double *x, int64_t n, double m, double s, double *y);
  /* y[i] = x[i] * s (y may be x) */
  void (*scale_f32)(const float *x, int64_t n, float s, float *y);
  void (*scale_f64)(const double *x, int64_t n, double s, double *y);
  /* y[i] = x[i] - c (y may be x) */
  void (*shift_f32)(const float *x, int64_t n, float c, float *y);
  void (*shift_f64)(const double *x, int64_t n, double c, double *y);
  /* columns: acc[c] += x[c]; acc[c] += (x[c] - mean[c])^2, c < w (f64) */
  void (*col_add_f32)(const float *x, int64_t w, double *acc);
  void (*col_add_f64)(const double *x, int64_t w, double *acc);
  void (*col_sqdev_f32)(const float *x, int64_t w, const double *mean, double *acc);
  void (*col_sqdev_f64)(const double *x, int64_t w, const double *mean, double *acc);
} emlx_cpu_rowwise_table;

extern const emlx_cpu_rowwise_table emlx_cpu_rowwise_scalar, emlx_cpu_rowwise_avx2,
    emlx_cpu_rowwise_avx512;

#endif
