/* fast_body.h — inner loops of rms_norm, layer_norm, rope and swiglu over
 * contiguous float32 runs, compiled per ISA by fast_{scalar,avx2,avx512}.c
 * (table: fast_isa.h). Plain loops the compiler vectorises for the unit's
 * ISA, explicit 32-lane sums (GCC vector extensions, four 8-lane vectors)
 * folded in a fixed order, and the vector layer's exp (vl_exp_f32). */
#include "simd/body.h"

#include "fast_isa.h"

typedef float fb_v8f __attribute__((vector_size(32)));
typedef float fb_v8f_u __attribute__((vector_size(32), aligned(4), may_alias));

#define FB_LOAD8(p) (*(const fb_v8f_u *)(p))
#define FB_TILE 1024 /* elements staged for exp */

/* lanes j, j + 8, j + 16, j + 24 first, then the 8 lanes by halves */
static float fb_fold(const fb_v8f *a) {
  fb_v8f t = (a[0] + a[2]) + (a[1] + a[3]);
  return ((t[0] + t[4]) + (t[2] + t[6])) + ((t[1] + t[5]) + (t[3] + t[7]));
}

static float sumsq(const float *x, int64_t n) {
  fb_v8f a[4] = {{0}, {0}, {0}, {0}};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int q = 0; q < 4; q++) {
      fb_v8f v = FB_LOAD8(x + i + 8 * q);
      a[q] += v * v;
    }
  float s = fb_fold(a);
  for (; i < n; i++)
    s += x[i] * x[i];
  return s;
}

static float sum(const float *x, int64_t n) {
  fb_v8f a[4] = {{0}, {0}, {0}, {0}};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int q = 0; q < 4; q++)
      a[q] += FB_LOAD8(x + i + 8 * q);
  float s = fb_fold(a);
  for (; i < n; i++)
    s += x[i];
  return s;
}

static float sqdev(const float *x, int64_t n, float m) {
  fb_v8f a[4] = {{0}, {0}, {0}, {0}};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int q = 0; q < 4; q++) {
      fb_v8f v = FB_LOAD8(x + i + 8 * q) - m;
      a[q] += v * v;
    }
  float s = fb_fold(a);
  for (; i < n; i++) {
    float d = x[i] - m;
    s += d * d;
  }
  return s;
}

static void norm(const float *x, int64_t n, float m, float r, const float *w, const float *b,
                 float *y) {
  if (w && b) {
    for (int64_t i = 0; i < n; i++)
      y[i] = (x[i] - m) * r * w[i] + b[i];
  } else if (w) {
    for (int64_t i = 0; i < n; i++)
      y[i] = (x[i] - m) * r * w[i];
  } else if (b) {
    for (int64_t i = 0; i < n; i++)
      y[i] = (x[i] - m) * r + b[i];
  } else {
    for (int64_t i = 0; i < n; i++)
      y[i] = (x[i] - m) * r;
  }
}

static void rope_half(const float *x, int64_t half, const float *c, const float *s, float *y) {
  for (int64_t i = 0; i < half; i++) {
    float a = x[i], b = x[i + half];
    y[i] = a * c[i] - b * s[i];
    y[i + half] = a * s[i] + b * c[i];
  }
}

static void rope_inter(const float *x, int64_t half, const float *c, const float *s, float *y) {
  for (int64_t i = 0; i < half; i++) {
    float a = x[2 * i], b = x[2 * i + 1];
    y[2 * i] = a * c[i] - b * s[i];
    y[2 * i + 1] = a * s[i] + b * c[i];
  }
}

static void swiglu(const float *g, const float *u, int64_t n, float *y) {
  float t[FB_TILE];
  for (int64_t i0 = 0; i0 < n; i0 += FB_TILE) {
    int64_t m = bd_min64(FB_TILE, n - i0);
    for (int64_t i = 0; i < m; i++)
      t[i] = -g[i0 + i];
    vl_exp_f32(t, t, m);
    for (int64_t i = 0; i < m; i++)
      y[i0 + i] = g[i0 + i] * u[i0 + i] / (1.0f + t[i]);
  }
}

const emlx_cpu_fast_table EMLX_ISA_NAME(emlx_cpu_fast) = {
    .sumsq = sumsq,
    .sum = sum,
    .sqdev = sqdev,
    .norm = norm,
    .rope_half = rope_half,
    .rope_inter = rope_inter,
    .swiglu = swiglu,
};
