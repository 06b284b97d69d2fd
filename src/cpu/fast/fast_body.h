/* fast_body.h — inner loops of rms_norm, layer_norm, rope and swiglu over
 * contiguous float32 runs, and over contiguous bfloat16 rows converted in
 * registers, compiled per ISA by fast_{scalar,avx2,avx512}.c (table:
 * fast_isa.h), which define fb_sincos_f64 (SLEEF's, per ISA) first.
 * Plain loops the compiler vectorises for the unit's ISA, explicit 32-lane
 * sums (GCC vector extensions, four 8-lane vectors) folded in a fixed order,
 * and swiglu's exp written here on the unit's native vectors (the same
 * operations on every ISA; its multiply-adds are fused where the unit has
 * FMA, so avx2 and avx512 give the same values, the baseline differs from
 * them in last bits). */
#include <string.h>

#include "simd/body.h"

#include "fast_isa.h"

typedef float fb_v8f __attribute__((vector_size(32)));
typedef float fb_v8f_u __attribute__((vector_size(32), aligned(4), may_alias));

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

/* The unit's native vector: FB_VL float32 lanes (16 on avx512, 8 on avx2,
 * 4 on the baseline's SSE2). Wider GCC vectors than the hardware's are
 * lowered piecewise, and their comparisons one lane at a time, so the
 * elementwise loops below use this width; the values do not depend on it
 * (every operation is per lane). */
#if defined(__AVX512F__)
#define FB_VL 16
#elif defined(__AVX2__)
#define FB_VL 8
#else
#define FB_VL 4
#endif
typedef float fb_vf __attribute__((vector_size(4 * FB_VL)));
typedef float fb_vf_u __attribute__((vector_size(4 * FB_VL), aligned(4), may_alias));
typedef uint32_t fb_vu __attribute__((vector_size(4 * FB_VL)));
typedef uint32_t fb_vu_u __attribute__((vector_size(4 * FB_VL), aligned(2), may_alias));
typedef int32_t fb_vi __attribute__((vector_size(4 * FB_VL)));
typedef uint16_t fb_vh __attribute__((vector_size(2 * FB_VL)));
typedef uint16_t fb_vh_u __attribute__((vector_size(2 * FB_VL), aligned(2), may_alias));
typedef uint16_t fb_v8h_u __attribute__((vector_size(16), aligned(2), may_alias));
typedef uint32_t fb_v8u __attribute__((vector_size(32)));

#define FB_VLOAD(p) (*(const fb_vf_u *)(p))
#define FB_VSTORE(p, v) (*(fb_vf_u *)(p) = (v))

/* bfloat16 <-> float32 in registers: the bits of a bfloat16 are the high
 * half of its float32. fb_bf16_hi rounds float32 bits to nearest even and
 * leaves the bfloat16 in the high half (low half zero); NaN stays a quiet
 * NaN. A 32-bit word of a bfloat16 array holds element 2i in its low half
 * and 2i + 1 in its high half (little-endian): (w << 16) and (w & hi) are
 * the even and odd elements as float32, without any shuffle. */
#define FB_HI16 0xFFFF0000u
static inline fb_vu fb_bf16_hi(fb_vu v) {
  fb_vu r = v + 0x7FFFu + ((v >> 16) & 1u), q = v | 0x00400000u;
  fb_vu nan = (fb_vu)((fb_vi)(v & 0x7FFFFFFFu) > 0x7F800000);
  return ((r & ~nan) | (q & nan)) & FB_HI16;
}
/* The rounding without the NaN rule, for values computed from bfloat16
 * inputs and finite float32 constants only (swiglu, the norms): their NaNs
 * have a zero low half (x86 arithmetic returns an operand's NaN, quieted,
 * payload kept, or the default NaN 0xFFC00000), so adding at most 0x8000
 * cannot carry out of it, and the two roundings agree. rope's angles may
 * come from caller's frequencies (NaNs of any payload): it keeps the rule,
 * on a slow path taken only when a lane is NaN. */
static inline fb_vu fb_bf16_hi_num(fb_vu v) { return (v + 0x7FFFu + ((v >> 16) & 1u)) & FB_HI16; }
/* FB_VL contiguous bfloat16 as float32 and back (FB_BF8: 8 lanes, for the
 * sums' 8-lane accumulators), with the unit's widening and narrowing
 * instructions where it has them; fb_bf16_narrow stores the high halves */
#if defined(__AVX512F__)
static inline int fb_any_nan(fb_vf a, fb_vf b) {
  return (_mm512_cmp_ps_mask((__m512)a, (__m512)a, _CMP_UNORD_Q) |
          _mm512_cmp_ps_mask((__m512)b, (__m512)b, _CMP_UNORD_Q)) != 0;
}
static inline fb_vf fb_bf16_load(const uint16_t *p) {
  return (fb_vf)_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)),
                                  16);
}
static inline void fb_bf16_narrow(uint16_t *p, fb_vu h) {
  _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16((__m512i)(h >> 16)));
}
#elif defined(__AVX2__)
static inline int fb_any_nan(fb_vf a, fb_vf b) {
  return _mm256_movemask_ps(_mm256_or_ps(_mm256_cmp_ps((__m256)a, (__m256)a, _CMP_UNORD_Q),
                                         _mm256_cmp_ps((__m256)b, (__m256)b, _CMP_UNORD_Q))) != 0;
}
static inline fb_vf fb_bf16_load(const uint16_t *p) {
  return (fb_vf)_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16);
}
static inline void fb_bf16_narrow(uint16_t *p, fb_vu h) {
  __m256i r = (__m256i)(h >> 16); /* < 2^16: packus is exact */
  _mm_storeu_si128((__m128i *)p,
                   _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1)));
}
#else
static inline int fb_any_nan(fb_vf a, fb_vf b) {
  fb_vi n = (a != a) | (b != b);
  int any = 0;
  for (int k = 0; k < FB_VL; k++)
    any |= n[k];
  return any;
}
static inline fb_vf fb_bf16_load(const uint16_t *p) {
  return (fb_vf)(__builtin_convertvector(*(const fb_vh_u *)p, fb_vu) << 16);
}
static inline void fb_bf16_narrow(uint16_t *p, fb_vu h) {
  *(fb_vh_u *)p = __builtin_convertvector(h >> 16, fb_vh);
}
#endif
/* rounded without the NaN rule (see fb_bf16_hi_num) / with it */
static inline void fb_bf16_store(uint16_t *p, fb_vf v) {
  fb_bf16_narrow(p, fb_bf16_hi_num((fb_vu)v));
}
static inline void fb_bf16_store_nan(uint16_t *p, fb_vf v) {
  fb_bf16_narrow(p, fb_any_nan(v, v) ? fb_bf16_hi((fb_vu)v) : fb_bf16_hi_num((fb_vu)v));
}
#if defined(__AVX2__)
#define FB_BF8(p)                                                                                  \
  ((fb_v8f)_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16))
#else
#define FB_BF8(p) ((fb_v8f)(__builtin_convertvector(*(const fb_v8h_u *)(p), fb_v8u) << 16))
#endif
static inline float fb_bf2f(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static inline uint16_t fb_f2bf(float f) {
  uint32_t v;
  memcpy(&v, &f, sizeof v);
  uint32_t r = (v + 0x7FFFu + ((v >> 16) & 1u)) >> 16, q = (v >> 16) | 0x40u;
  return (uint16_t)((v & 0x7FFFFFFFu) > 0x7F800000u ? q : r);
}

/* Fused multiply-add (a * b + c, c - a * b, one rounding) where the unit
 * has it (avx2, avx512: the same bits on both), two roundings on the
 * baseline; and x clamped to [lo, hi] with a NaN kept (x86's max/min return
 * their second operand when either is NaN). Written out, not left to
 * contraction: the build is ISO C, which contracts nothing, so every other
 * expression in this file rounds each operation (the norms and rope rely
 * on it: their bfloat16 loops equal the staged float32 ones bit for bit). */
#if defined(__AVX512F__)
#define FB_FMA(a, b, c) ((fb_vf)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#define FB_FNMA(a, b, c) ((fb_vf)_mm512_fnmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
static inline fb_vf fb_clamp(fb_vf x, float lo, float hi) {
  return (fb_vf)_mm512_min_ps(_mm512_set1_ps(hi), _mm512_max_ps(_mm512_set1_ps(lo), (__m512)x));
}
#elif defined(__AVX2__)
#define FB_FMA(a, b, c) ((fb_vf)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#define FB_FNMA(a, b, c) ((fb_vf)_mm256_fnmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
static inline fb_vf fb_clamp(fb_vf x, float lo, float hi) {
  return (fb_vf)_mm256_min_ps(_mm256_set1_ps(hi), _mm256_max_ps(_mm256_set1_ps(lo), (__m256)x));
}
#else
#define FB_FMA(a, b, c) ((a) * (b) + (c))
#define FB_FNMA(a, b, c) ((c) - (a) * (b))
static inline fb_vf fb_clamp(fb_vf x, float lo, float hi) {
  fb_vu l = (fb_vu)(x < lo), h = (fb_vu)(x > hi); /* false for NaN */
  fb_vu v = ((fb_vu)x & ~l) | ((fb_vu)((fb_vf){0} + lo) & l);
  return (fb_vf)((v & ~h) | ((fb_vu)((fb_vf){0} + hi) & h));
}
#endif

/* swiglu, g * u / (1 + exp(-g)). exp(x) in float32:
 * x clamped to [-87.3, 89], Cody-Waite reduction by ln 2, Cephes'
 * degree-6 polynomial, scaling by the exponent bits: <= 2 ulp over
 * [-87.3, 88.3]; below, exp(-87.3) ~ 1e-38, so 1 + exp is 1 as for the
 * true value; from 88.38 up the exponent is 128, the scale 2^128 is +inf
 * and so is exp (g = -inf: -inf * u / inf is NaN, as g * sigmoid(g) * u);
 * NaN stays NaN through the clamp. The multiply-adds are fused on avx2 and
 * avx512 (the same bits on both; the baseline rounds twice, a last-bit
 * difference): with the clamp, 0.48 against 0.80 ns an element on one
 * Zen 2 core, in cache, for the same worst error (2.4 ulp, 0.88 eps of
 * 1 + |y| over g in [-90, 90]). Pointers, not vector arguments: the vector
 * ABI differs by ISA.
 * LP (results to be rounded to bfloat16): a degree-4 polynomial instead
 * (relative error <= 5.4e-6 over the reduced range, against bfloat16's half
 * ulp of 2e-3), a third fewer multiplies and adds: the rounded result is the
 * correctly rounded one but for values within ~1e-5 of a tie. */
__attribute__((always_inline)) static inline fb_vf fb_swiglu_core(fb_vf gv, fb_vf uv,
                                                                  const int LP) {
  fb_vf x = fb_clamp(-gv, -87.3f, 89.0f);
  const fb_vf sh = (fb_vf){0} + 12582912.0f; /* 1.5 * 2^23: rounds to integer */
  const fb_vf z = {0};
  fb_vf t = FB_FMA(x, z + 1.44269504f, sh);
  fb_vf n = t - sh;
  fb_vf r = FB_FNMA(n, z + 0.693359375f, x);
  r = FB_FNMA(n, z + -2.12194440e-4f, r);
  fb_vf p;
  if (LP) {
    p = FB_FMA(r, z + 4.127775e-2f, z + 1.6753515e-1f);
    p = FB_FMA(p, r, z + 5.0005116e-1f);
  } else {
    p = FB_FMA(r, z + 1.9875691500e-4f, z + 1.3981999507e-3f);
    p = FB_FMA(p, r, z + 8.3334519073e-3f);
    p = FB_FMA(p, r, z + 4.1665795894e-2f);
    p = FB_FMA(p, r, z + 1.6666665459e-1f);
    p = FB_FMA(p, r, z + 5.0000001201e-1f);
  }
  p = FB_FMA(p, r * r, r) + 1.0f;
  fb_vu e = ((fb_vu)t - 0x4B400000u + 127u) << 23;
  return gv * uv / (1.0f + p * (fb_vf)e);
}
static inline fb_vf fb_swiglu_v(fb_vf gv, fb_vf uv) { return fb_swiglu_core(gv, uv, 0); }
static inline fb_vf fb_swiglu_lp(fb_vf gv, fb_vf uv) { return fb_swiglu_core(gv, uv, 1); }

/* Streaming (non-temporal) vector stores for outputs far larger than the
 * caches: the line is written without being read first. p must be aligned
 * to the vector (the callers check); fb_stream_fence orders them. */
#if defined(__AVX512F__)
#define FB_STREAM(p, v) _mm512_stream_si512((void *)(p), (__m512i)(v))
#define FB_FENCE() _mm_sfence()
#elif defined(__AVX2__)
#define FB_STREAM(p, v) _mm256_stream_si256((__m256i *)(p), (__m256i)(v))
#define FB_FENCE() _mm_sfence()
#else
#define FB_STREAM(p, v) (*(fb_vu_u *)(p) = (fb_vu)(v))
#define FB_FENCE() ((void)0)
#endif

/* 2 * FB_VL bfloat16 of swiglu: even and odd elements as two vectors. */
__attribute__((always_inline)) static inline void
fb_swiglu_bf16_step(const uint16_t *g, const uint16_t *u, uint16_t *y, const int NT) {
  fb_vu gw = *(const fb_vu_u *)g, uw = *(const fb_vu_u *)u;
  fb_vf ye = fb_swiglu_lp((fb_vf)(gw << 16), (fb_vf)(uw << 16));
  fb_vf yo = fb_swiglu_lp((fb_vf)(gw & FB_HI16), (fb_vf)(uw & FB_HI16));
  fb_vu w = (fb_bf16_hi_num((fb_vu)ye) >> 16) | fb_bf16_hi_num((fb_vu)yo);
  if (NT)
    FB_STREAM(y, w);
  else
    *(fb_vu_u *)y = w;
}

/* bfloat16 swiglu spends twice the arithmetic per byte of float32's, about
 * as long as the memory takes: the inputs are prefetched 4 KiB ahead
 * (non-temporal hint: read once) so their reads overlap the arithmetic
 * rather than waiting on the hardware prefetcher. Prefetches never fault,
 * past the end of an input either. */
#define FB_PF_AHEAD 2048
/* NT: y is aligned to the vector and the body streams its stores */
#define FB_SWIGLU_BF16(name, NT)                                                                   \
  static void name(const uint16_t *g, const uint16_t *u, int64_t n, uint16_t *y) {                 \
    int64_t i = 0;                                                                                 \
    for (; i + 2 * FB_VL <= n; i += 2 * FB_VL) {                                                   \
      if ((i & 31) == 0) { /* a line of each input, FB_PF_AHEAD elements on */                     \
        __builtin_prefetch(g + i + FB_PF_AHEAD, 0, 0);                                             \
        __builtin_prefetch(u + i + FB_PF_AHEAD, 0, 0);                                             \
      }                                                                                            \
      fb_swiglu_bf16_step(g + i, u + i, y + i, NT);                                                \
    }                                                                                              \
    if (NT)                                                                                        \
      FB_FENCE();                                                                                  \
    if (i < n) { /* the tail through the same vector code */                                       \
      uint16_t gt[2 * FB_VL] = {0}, ut[2 * FB_VL] = {0}, yt[2 * FB_VL];                            \
      for (int64_t k = 0; k < n - i; k++)                                                          \
        gt[k] = g[i + k], ut[k] = u[i + k];                                                        \
      fb_swiglu_bf16_step(gt, ut, yt, 0);                                                          \
      for (int64_t k = 0; k < n - i; k++)                                                          \
        y[i + k] = yt[k];                                                                          \
    }                                                                                              \
  }
FB_SWIGLU_BF16(swiglu_bf16, 0)
FB_SWIGLU_BF16(swiglu_bf16_nt, 1)

#define FB_SWIGLU_F32(name, fn, NT)                                                                \
  static void name(const float *g, const float *u, int64_t n, float *y) {                          \
    int64_t i = 0;                                                                                 \
    for (; i + FB_VL <= n; i += FB_VL) {                                                           \
      fb_vf v = fn(FB_VLOAD(g + i), FB_VLOAD(u + i));                                              \
      if (NT)                                                                                      \
        FB_STREAM(y + i, v);                                                                       \
      else                                                                                         \
        FB_VSTORE(y + i, v);                                                                       \
    }                                                                                              \
    if (NT)                                                                                        \
      FB_FENCE();                                                                                  \
    if (i < n) { /* the tail through the same vector code */                                       \
      float gt[FB_VL] = {0}, ut[FB_VL] = {0}, yt[FB_VL];                                           \
      for (int64_t k = 0; k < n - i; k++)                                                          \
        gt[k] = g[i + k], ut[k] = u[i + k];                                                        \
      FB_VSTORE(yt, fn(FB_VLOAD(gt), FB_VLOAD(ut)));                                               \
      for (int64_t k = 0; k < n - i; k++)                                                          \
        y[i + k] = yt[k];                                                                          \
    }                                                                                              \
  }
FB_SWIGLU_F32(swiglu, fb_swiglu_v, 0)
FB_SWIGLU_F32(swiglu_nt, fb_swiglu_v, 1)
FB_SWIGLU_F32(swiglu_lp, fb_swiglu_lp, 0)

/* ---- bfloat16 rows in and out, converted in registers ---------------------------- */
/* The same values as converting the row to float32 (load_bf16), running the
 * float32 loop above and rounding once (store_bf16): the same lanes, the
 * same order of additions, the same operations per element. */
static float sumsq_bf16(const uint16_t *x, int64_t n) {
  fb_v8f a[4] = {{0}, {0}, {0}, {0}};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int q = 0; q < 4; q++) {
      fb_v8f v = FB_BF8(x + i + 8 * q);
      a[q] += v * v;
    }
  float s = fb_fold(a);
  for (; i < n; i++)
    s += fb_bf2f(x[i]) * fb_bf2f(x[i]);
  return s;
}

static float sum_bf16(const uint16_t *x, int64_t n) {
  fb_v8f a[4] = {{0}, {0}, {0}, {0}};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int q = 0; q < 4; q++)
      a[q] += FB_BF8(x + i + 8 * q);
  float s = fb_fold(a);
  for (; i < n; i++)
    s += fb_bf2f(x[i]);
  return s;
}

static float sqdev_bf16(const uint16_t *x, int64_t n, float m) {
  fb_v8f a[4] = {{0}, {0}, {0}, {0}};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int q = 0; q < 4; q++) {
      fb_v8f v = FB_BF8(x + i + 8 * q) - m;
      a[q] += v * v;
    }
  float s = fb_fold(a);
  for (; i < n; i++) {
    float d = fb_bf2f(x[i]) - m;
    s += d * d;
  }
  return s;
}

/* Rows are contiguous: while this row (read by the sum, now in cache) is
 * scaled and written, the next one, x + n, is prefetched a line per 32
 * elements, so the next sum does not start from memory. */
#define FB_NORM_BF16_LOOP(expr, sexpr)                                                             \
  do {                                                                                             \
    int64_t i = 0;                                                                                 \
    for (; i + FB_VL <= n; i += FB_VL) {                                                           \
      if ((i & 31) == 0)                                                                           \
        __builtin_prefetch(x + n + i, 0, 3);                                                       \
      fb_vf v = (fb_bf16_load(x + i) - m) * r;                                                     \
      fb_bf16_store(y + i, expr);                                                                  \
    }                                                                                              \
    for (; i < n; i++) {                                                                           \
      float v = (fb_bf2f(x[i]) - m) * r;                                                           \
      y[i] = fb_f2bf(sexpr);                                                                       \
    }                                                                                              \
  } while (0)

static void norm_bf16(const uint16_t *x, int64_t n, float m, float r, const float *w,
                      const float *b, uint16_t *y) {
  if (w && b)
    FB_NORM_BF16_LOOP(v * FB_VLOAD(w + i) + FB_VLOAD(b + i), v * w[i] + b[i]);
  else if (w)
    FB_NORM_BF16_LOOP(v * FB_VLOAD(w + i), v * w[i]);
  else if (b)
    FB_NORM_BF16_LOOP(v + FB_VLOAD(b + i), v + b[i]);
  else
    FB_NORM_BF16_LOOP(v, v);
}

static void rope_half_bf16(const uint16_t *x, int64_t half, const float *c, const float *s,
                           uint16_t *y) {
  int64_t i = 0;
  for (; i + FB_VL <= half; i += FB_VL) {
    fb_vf a = fb_bf16_load(x + i), b = fb_bf16_load(x + i + half);
    fb_vf cv = FB_VLOAD(c + i), sv = FB_VLOAD(s + i);
    fb_bf16_store_nan(y + i, a * cv - b * sv);
    fb_bf16_store_nan(y + i + half, a * sv + b * cv);
  }
  for (; i < half; i++) {
    float a = fb_bf2f(x[i]), b = fb_bf2f(x[i + half]);
    y[i] = fb_f2bf(a * c[i] - b * s[i]);
    y[i + half] = fb_f2bf(a * s[i] + b * c[i]);
  }
}

/* interleaved pairs: one 32-bit word is a pair (even, odd) */
static void rope_inter_bf16(const uint16_t *x, int64_t half, const float *c, const float *s,
                            uint16_t *y) {
  int64_t i = 0;
  for (; i + FB_VL <= half; i += FB_VL) {
    fb_vu w = *(const fb_vu_u *)(x + 2 * i);
    fb_vf a = (fb_vf)(w << 16), b = (fb_vf)(w & FB_HI16);
    fb_vf cv = FB_VLOAD(c + i), sv = FB_VLOAD(s + i);
    fb_vf ya = a * cv - b * sv, yb = a * sv + b * cv;
    if (__builtin_expect(fb_any_nan(ya, yb), 0))
      *(fb_vu_u *)(y + 2 * i) = (fb_bf16_hi((fb_vu)ya) >> 16) | fb_bf16_hi((fb_vu)yb);
    else
      *(fb_vu_u *)(y + 2 * i) = (fb_bf16_hi_num((fb_vu)ya) >> 16) | fb_bf16_hi_num((fb_vu)yb);
  }
  for (; i < half; i++) {
    float a = fb_bf2f(x[2 * i]), b = fb_bf2f(x[2 * i + 1]);
    y[2 * i] = fb_f2bf(a * c[i] - b * s[i]);
    y[2 * i + 1] = fb_f2bf(a * s[i] + b * c[i]);
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
    .swiglu_bf16 = swiglu_bf16,
    .swiglu_lp = swiglu_lp,
    .swiglu_nt = swiglu_nt,
    .swiglu_bf16_nt = swiglu_bf16_nt,
    .rope_angles = rope_angles,
    .load_bf16 = load_bf16,
    .store_bf16 = store_bf16,
    .sumsq_bf16 = sumsq_bf16,
    .sum_bf16 = sum_bf16,
    .sqdev_bf16 = sqdev_bf16,
    .norm_bf16 = norm_bf16,
    .rope_half_bf16 = rope_half_bf16,
    .rope_inter_bf16 = rope_inter_bf16,
};
