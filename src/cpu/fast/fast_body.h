/* fast_body.h — inner loops of rms_norm, layer_norm, rope and swiglu over
 * contiguous float32 runs, compiled per ISA by fast_{scalar,avx2,avx512}.c
 * (table: fast_isa.h), which define fb_sincos_f64 (SLEEF's, per ISA) first.
 * Plain loops the compiler vectorises for the unit's ISA, explicit 32-lane
 * sums (GCC vector extensions, four 8-lane vectors) folded in a fixed order,
 * and swiglu's exp written here on 16-lane vectors (the same operations on
 * every ISA, so the same values). */
#include "simd/body.h"

#include "fast_isa.h"

typedef float fb_v8f __attribute__((vector_size(32)));
typedef float fb_v8f_u __attribute__((vector_size(32), aligned(4), may_alias));

typedef float fb_v16f __attribute__((vector_size(64)));
typedef float fb_v16f_u __attribute__((vector_size(64), aligned(4), may_alias));
typedef uint32_t fb_v16u __attribute__((vector_size(64)));
typedef uint32_t fb_u32_a __attribute__((may_alias));

#define FB_LOAD8(p) (*(const fb_v8f_u *)(p))
#define FB_TILE 256 /* angles staged for sincos */

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

/* 16 elements of swiglu, g * u / (1 + exp(-g)). exp(x) in float32:
 * Cody-Waite reduction by ln 2, Cephes' degree-6 polynomial, scaling by the
 * exponent bits; <= 2 ulp over [-87.3, 88.3], 0 below, +inf above
 * (exp(88.3..88.72) is finite but becomes +inf here: swiglu only divides by
 * it), NaN for NaN. No FMA contraction (ISO C), so every ISA computes the
 * same bits. Pointers, not vector arguments: the vector ABI differs by ISA. */
static inline void fb_swiglu16(const float *g, const float *u, float *y) {
  fb_v16f gv = *(const fb_v16f_u *)g, uv = *(const fb_v16f_u *)u, x = -gv;
  const fb_v16f shifter = (fb_v16f){0} + 12582912.0f; /* 1.5 * 2^23: rounds to integer */
  fb_v16f t = x * 1.44269504f + shifter;
  fb_v16f n = t - shifter;
  fb_v16f r = x - n * 0.693359375f - n * -2.12194440e-4f;
  fb_v16f p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  fb_v16u e = ((fb_v16u)t - 0x4B400000u + 127u) << 23;
  fb_v16u ex = (fb_v16u)(p * (fb_v16f)e);
  fb_v16u hi = (fb_v16u)(x > 88.3f), lo = (fb_v16u)(x < -87.3f);
  fb_v16u inf = (fb_v16u){0} + 0x7F800000u;
  ex = ((ex & ~hi) | (inf & hi)) & ~lo; /* exp(-g) */
  *(fb_v16f_u *)y = gv * uv / (1.0f + (fb_v16f)ex);
}

static void swiglu(const float *g, const float *u, int64_t n, float *y) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    fb_swiglu16(g + i, u + i, y + i);
  if (i < n) { /* the tail through the same vector code */
    float gt[16] = {0}, ut[16] = {0}, yt[16];
    for (int64_t k = 0; k < n - i; k++)
      gt[k] = g[i + k], ut[k] = u[i + k];
    fb_swiglu16(gt, ut, yt);
    for (int64_t k = 0; k < n - i; k++)
      y[i + k] = yt[k];
  }
}

/* c[i], s[i] = cos, sin of the float32 angle pos * inv[i], i < half: the
 * angle is rounded to float32 (as MLX forms it), its cosine and sine are
 * computed in double and rounded once. */
static void rope_angles(float pos, const float *inv, int64_t half, float *c, float *s) {
  double th[FB_TILE], sv[FB_TILE], cv[FB_TILE];
  for (int64_t i0 = 0; i0 < half; i0 += FB_TILE) {
    int64_t m = bd_min64(FB_TILE, half - i0);
    for (int64_t i = 0; i < m; i++)
      th[i] = (double)(pos * inv[i0 + i]);
    fb_sincos_f64(th, m, sv, cv);
    for (int64_t i = 0; i < m; i++) {
      c[i0 + i] = (float)cv[i];
      s[i0 + i] = (float)sv[i];
    }
  }
}

/* bfloat16 <-> float32 of contiguous runs (round to nearest even; NaN stays
 * a quiet NaN), as the cast table does, in loops the compiler vectorises. */
static void load_bf16(const uint16_t *p, float *out, int64_t n) {
  fb_u32_a *o = (fb_u32_a *)out;
  for (int64_t i = 0; i < n; i++)
    o[i] = (uint32_t)p[i] << 16;
}

static void store_bf16(const float *in, uint16_t *out, int64_t n) {
  const fb_u32_a *x = (const fb_u32_a *)in;
  for (int64_t i = 0; i < n; i++) {
    uint32_t v = x[i];
    uint32_t r = (v + 0x7FFFu + ((v >> 16) & 1u)) >> 16, q = (v >> 16) | 0x40u;
    out[i] = (uint16_t)((v & 0x7FFFFFFFu) > 0x7F800000u ? q : r);
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
    .rope_angles = rope_angles,
    .load_bf16 = load_bf16,
    .store_bf16 = store_bf16,
};
