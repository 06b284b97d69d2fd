/* fast_isa.h — private to the fused transformer kernels (fast.c): the
 * per-ISA table of their inner loops over contiguous float32 runs
 * (fast_body.h, compiled by fast_{scalar,avx2,avx512}.c).
 *
 * Sums accumulate in float32 in 32 explicit lanes folded by a fixed tree,
 * then the tail in order: every ISA adds in the same order and computes the
 * same values (swiglu's exp is computed by the same vector operations on
 * every ISA, with fused multiply-adds on avx2 and avx512 and separate ones
 * on the baseline, which may differ from them in the last bits; rope's
 * cosines and sines are SLEEF's in double, rounded to float32). */
#ifndef EMLX_CPU_FAST_ISA_H
#define EMLX_CPU_FAST_ISA_H

#include <stdint.h>

typedef struct emlx_cpu_fast_table {
  /* sum of x[i]^2; sum of x[i]; sum of (x[i] - m)^2 (i < n) */
  float (*sumsq)(const float *x, int64_t n);
  float (*sum)(const float *x, int64_t n);
  float (*sqdev)(const float *x, int64_t n, float m);
  /* y[i] = (x[i] - m) * r * w[i] + b[i]; w, b may be NULL (1 and 0); y may be x */
  void (*norm)(const float *x, int64_t n, float m, float r, const float *w, const float *b,
               float *y);
  /* split-half pairs (i, i + half) / interleaved pairs (2i, 2i + 1), i < half,
   * turned by the angle whose cosine and sine are c[i], s[i]; y may be x */
  void (*rope_half)(const float *x, int64_t half, const float *c, const float *s, float *y);
  void (*rope_inter)(const float *x, int64_t half, const float *c, const float *s, float *y);
  /* y[i] = g[i] * u[i] / (1 + exp(-g[i])); y may be g or u */
  void (*swiglu)(const float *g, const float *u, int64_t n, float *y);
  /* for results rounded to bfloat16: swiglu with exp's degree-4 polynomial
   * (fast_body.h); swiglu_bf16 computes it on contiguous bfloat16, rounded
   * once as store_bf16, and gives the same values as load_bf16, swiglu_lp
   * and store_bf16 */
  void (*swiglu_bf16)(const uint16_t *g, const uint16_t *u, int64_t n, uint16_t *y);
  void (*swiglu_lp)(const float *g, const float *u, int64_t n, float *y);
  /* swiglu and swiglu_bf16 with streaming stores, for outputs far larger
   * than the caches: y aligned to 64 bytes, not g or u; the same values */
  void (*swiglu_nt)(const float *g, const float *u, int64_t n, float *y);
  void (*swiglu_bf16_nt)(const uint16_t *g, const uint16_t *u, int64_t n, uint16_t *y);
  /* c[i], s[i] = cos, sin of the float32 angle pos * inv[i], i < half */
  void (*rope_angles)(float pos, const float *inv, int64_t half, float *c, float *s);
  /* bfloat16 <-> float32 of contiguous runs (the cast table's rounding) */
  void (*load_bf16)(const uint16_t *p, float *out, int64_t n);
  void (*store_bf16)(const float *in, uint16_t *out, int64_t n);
  /* the norms' and rope's loops on contiguous bfloat16 rows, in and out,
   * converted in registers: the same values as load_bf16, the float32 loop
   * and store_bf16 (y may be x) */
  float (*sumsq_bf16)(const uint16_t *x, int64_t n);
  float (*sum_bf16)(const uint16_t *x, int64_t n);
  float (*sqdev_bf16)(const uint16_t *x, int64_t n, float m);
  void (*norm_bf16)(const uint16_t *x, int64_t n, float m, float r, const float *w, const float *b,
                    uint16_t *y);
  void (*rope_half_bf16)(const uint16_t *x, int64_t half, const float *c, const float *s,
                         uint16_t *y);
  void (*rope_inter_bf16)(const uint16_t *x, int64_t half, const float *c, const float *s,
                          uint16_t *y);
} emlx_cpu_fast_table;

extern const emlx_cpu_fast_table emlx_cpu_fast_scalar, emlx_cpu_fast_avx2, emlx_cpu_fast_avx512;

#endif
