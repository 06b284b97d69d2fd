/* math_body.h — the math family's inner loops for every dtype, written once
 * and compiled per ISA by math_{scalar,avx2,avx512}.c (each includes its
 * vec_<isa>.h and math_vec_<isa>.h first). The loops are in
 * math_body_un.h (unary), math_body_bin.h (binary) and math_body_nary.h
 * (where, clip, isclose); this file holds what they share and the table.
 *
 * Shapes of the loops:
 *  - floats go through contiguous tile functions (SLEEF, or math_fn.h's
 *    code that GCC vectorises): f32/f64 inputs are used in place when
 *    contiguous, gathered into a tile otherwise; f16/bf16 are staged
 *    through f32 tiles and rounded once on the way out;
 *  - integers use plain loops on the signed or unsigned C type (arithmetic
 *    that can overflow runs on the unsigned type: wrapping, no UB);
 *  - complex64 is computed in double with C99 <complex.h> and rounded
 *    once; complex128 in double _Complex (glibc's <complex.h>). */
#include <complex.h>
#include <math.h>
#include <string.h>

#include "simd/body.h"
#include "math_fn.h"
#include "math_isa.h"
#include "params_math.h"

/* ---- complex helpers ---------------------------------------------------------- */
static inline double _Complex mc_wide(emlx_c64 x) {
  double parts[2] = {(double)x.re, (double)x.im};
  double _Complex z;
  memcpy(&z, parts, sizeof z); /* C11 6.2.5: the layout of an array of two reals */
  return z;
}
static inline emlx_c64 mc_of(double _Complex z) {
  emlx_c64 r = {(float)creal(z), (float)cimag(z)};
  return r;
}
static inline int mc_isnan(emlx_c64 x) { return x.re != x.re || x.im != x.im; }
static inline double _Complex mz_z(emlx_c128 x) {
  double _Complex z;
  memcpy(&z, &x, sizeof z);
  return z;
}
static inline emlx_c128 mz_of(double _Complex z) {
  emlx_c128 r = {creal(z), cimag(z)};
  return r;
}
static inline int mz_isnan(emlx_c128 x) { return x.re != x.re || x.im != x.im; }
static inline int mz_gt(emlx_c128 x, emlx_c128 y) {
  return x.re > y.re || (x.re == y.re && x.im > y.im);
}
static inline int mz_ge(emlx_c128 x, emlx_c128 y) {
  return x.re > y.re || (x.re == y.re && x.im >= y.im);
}
/* Lexicographic order of complex64 (real part, then imaginary), as MLX. */
static inline int mc_gt(emlx_c64 x, emlx_c64 y) {
  return x.re > y.re || (x.re == y.re && x.im > y.im);
}
static inline int mc_ge(emlx_c64 x, emlx_c64 y) {
  return x.re > y.re || (x.re == y.re && x.im >= y.im);
}

/* ---- float max/min: NaN propagates, -0 < +0 ----------------------------------- */
static inline float mb_maxf(float x, float y) {
  float r = x > y ? x : y;
  r = x == y ? mf_float(mf_bits(x) & mf_bits(y)) : r; /* +0 wins */
  r = y != y ? y : r;
  return x != x ? x : r;
}
static inline float mb_minf(float x, float y) {
  float r = x < y ? x : y;
  r = x == y ? mf_float(mf_bits(x) | mf_bits(y)) : r; /* -0 wins */
  r = y != y ? y : r;
  return x != x ? x : r;
}
static inline double mb_max(double x, double y) {
  double r = x > y ? x : y;
  r = x == y ? mf_double(mf_bits64(x) & mf_bits64(y)) : r;
  r = y != y ? y : r;
  return x != x ? x : r;
}
static inline double mb_min(double x, double y) {
  double r = x < y ? x : y;
  r = x == y ? mf_double(mf_bits64(x) | mf_bits64(y)) : r;
  r = y != y ? y : r;
  return x != x ? x : r;
}
static inline emlx_c64 mb_maxc(emlx_c64 x, emlx_c64 y) {
  return mc_isnan(x) ? x : mc_isnan(y) ? y : mc_gt(y, x) ? y : x;
}
static inline emlx_c64 mb_minc(emlx_c64 x, emlx_c64 y) {
  return mc_isnan(x) ? x : mc_isnan(y) ? y : mc_gt(x, y) ? y : x;
}

static inline emlx_c128 mb_maxz(emlx_c128 x, emlx_c128 y) {
  return mz_isnan(x) ? x : mz_isnan(y) ? y : mz_gt(y, x) ? y : x;
}
static inline emlx_c128 mb_minz(emlx_c128 x, emlx_c128 y) {
  return mz_isnan(x) ? x : mz_isnan(y) ? y : mz_gt(x, y) ? y : x;
}

/* ---- staging ------------------------------------------------------------------- */
/* n <= MF_TILE elements at stride s into a contiguous tile. A broadcast
 * (s == 0) is a fill, which vectorises; the strided loop does not. */
static inline void mb_gather_f32(const float *p, int64_t s, int64_t n, float *t) {
  if (s == 0) {
    float v = p[0];
    for (int64_t i = 0; i < n; i++)
      t[i] = v;
    return;
  }
  for (int64_t i = 0; i < n; i++)
    t[i] = p[i * s];
}
static inline void mb_gather_f64(const double *p, int64_t s, int64_t n, double *t) {
  if (s == 0) {
    double v = p[0];
    for (int64_t i = 0; i < n; i++)
      t[i] = v;
    return;
  }
  for (int64_t i = 0; i < n; i++)
    t[i] = p[i * s];
}
/* A tile of a broadcast (s == 0) or strided input, as f32, for every float
 * dtype. */
static inline void mb_load_f32(const void *p, emlx_dtype dt, int64_t s, int64_t n, float *t) {
  if (dt == EMLX_FLOAT16)
    bd_load_f16((const uint16_t *)p, s, n, t);
  else if (dt == EMLX_BFLOAT16)
    bd_load_bf16((const uint16_t *)p, s, n, t);
  else
    mb_gather_f32((const float *)p, s, n, t);
}
static inline void mb_store_half(const float *t, emlx_dtype dt, uint16_t *o, int64_t n) {
  if (dt == EMLX_FLOAT16)
    bd_store_f16(t, o, n);
  else
    bd_store_bf16(t, o, n);
}

typedef void (*mb_tile_f32)(const float *in, float *out, int64_t n);
typedef void (*mb_tile_f64)(const double *in, double *out, int64_t n);
typedef void (*mb_tile2_f32)(const float *a, const float *b, float *out, int64_t n);
typedef void (*mb_tile2_f64)(const double *a, const double *b, double *out, int64_t n);

/* out = f(in) over f32 with any input stride. */
static inline void mb_run_f32(mb_tile_f32 f, const float *a, int64_t s, float *o, int64_t n) {
  if (s == 1) {
    f(a, o, n);
    return;
  }
  float t[MF_TILE];
  for (int64_t i0 = 0; i0 < n; i0 += MF_TILE) {
    int64_t len = bd_min64(MF_TILE, n - i0);
    mb_gather_f32(a + i0 * s, s, len, t);
    f(t, o + i0, len);
  }
}
static inline void mb_run_f64(mb_tile_f64 f, const double *a, int64_t s, double *o, int64_t n) {
  if (s == 1) {
    f(a, o, n);
    return;
  }
  double t[MF_TILE];
  for (int64_t i0 = 0; i0 < n; i0 += MF_TILE) {
    int64_t len = bd_min64(MF_TILE, n - i0);
    mb_gather_f64(a + i0 * s, s, len, t);
    f(t, o + i0, len);
  }
}
static inline void mb_run_half(mb_tile_f32 f, emlx_dtype dt, const uint16_t *a, int64_t s,
                               uint16_t *o, int64_t n) {
  float t[MF_TILE];
  for (int64_t i0 = 0; i0 < n; i0 += MF_TILE) {
    int64_t len = bd_min64(MF_TILE, n - i0);
    mb_load_f32(a + i0 * s, dt, s, len, t);
    f(t, t, len);
    mb_store_half(t, dt, o + i0, len);
  }
}

/* The four float loops of a unary function from its two tile functions. */
#define MB_UN_FLOAT(NAME, T32, T64)                                                                \
  static void NAME##_f32(const void *pi, int64_t s, void *po, int64_t n) {                         \
    mb_run_f32(T32, (const float *)pi, s, (float *)po, n);                                         \
  }                                                                                                \
  static void NAME##_f64(const void *pi, int64_t s, void *po, int64_t n) {                         \
    mb_run_f64(T64, (const double *)pi, s, (double *)po, n);                                       \
  }                                                                                                \
  static void NAME##_f16(const void *pi, int64_t s, void *po, int64_t n) {                         \
    mb_run_half(T32, EMLX_FLOAT16, (const uint16_t *)pi, s, (uint16_t *)po, n);                    \
  }                                                                                                \
  static void NAME##_bf16(const void *pi, int64_t s, void *po, int64_t n) {                        \
    mb_run_half(T32, EMLX_BFLOAT16, (const uint16_t *)pi, s, (uint16_t *)po, n);                   \
  }

/* A tile function from an elementwise expression of x. */
#define MB_TILE_EXPR(NAME, T, EXPR)                                                                \
  static void NAME(const T *in, T *out, int64_t n) {                                               \
    for (int64_t i = 0; i < n; i++) {                                                              \
      T x = in[i];                                                                                 \
      out[i] = (EXPR);                                                                             \
    }                                                                                              \
  }

/* A plain strided unary loop (integers, complex, bool outputs). */
#define MB_UN(NAME, TI, TO, EXPR)                                                                  \
  static void NAME(const void *pi, int64_t s, void *po, int64_t n) {                               \
    const TI *a = (const TI *)pi;                                                                  \
    TO *o = (TO *)po;                                                                              \
    if (s == 1) {                                                                                  \
      for (int64_t i = 0; i < n; i++) {                                                            \
        TI x = a[i];                                                                               \
        o[i] = (EXPR);                                                                             \
      }                                                                                            \
    } else {                                                                                       \
      for (int64_t i = 0; i < n; i++) {                                                            \
        TI x = a[i * s];                                                                           \
        o[i] = (EXPR);                                                                             \
      }                                                                                            \
    }                                                                                              \
  }

/* A plain strided binary loop with stride specialisation. */
#define MB_BIN(NAME, TI, TO, EXPR)                                                                 \
  static void NAME(const void *pa, int64_t sa, const void *pb, int64_t sb, void *po, int64_t n) {  \
    const TI *a = (const TI *)pa, *b = (const TI *)pb;                                             \
    TO *o = (TO *)po;                                                                              \
    if (sa == 1 && sb == 1) {                                                                      \
      for (int64_t i = 0; i < n; i++) {                                                            \
        TI x = a[i], y = b[i];                                                                     \
        o[i] = (EXPR);                                                                             \
      }                                                                                            \
    } else if (sa == 1 && sb == 0) {                                                               \
      const TI y = b[0];                                                                           \
      for (int64_t i = 0; i < n; i++) {                                                            \
        TI x = a[i];                                                                               \
        o[i] = (EXPR);                                                                             \
      }                                                                                            \
    } else if (sa == 0 && sb == 1) {                                                               \
      const TI x = a[0];                                                                           \
      for (int64_t i = 0; i < n; i++) {                                                            \
        TI y = b[i];                                                                               \
        o[i] = (EXPR);                                                                             \
      }                                                                                            \
    } else {                                                                                       \
      for (int64_t i = 0; i < n; i++) {                                                            \
        TI x = a[i * sa], y = b[i * sb];                                                           \
        o[i] = (EXPR);                                                                             \
      }                                                                                            \
    }                                                                                              \
  }

/* The integer C types: GEN(suffix, T, UT, bits), T the dtype's type and UT
 * the unsigned type of its width. */
#define MB_FOR_UINTS(GEN)                                                                          \
  GEN(u8, uint8_t, uint8_t, 8)                                                                     \
  GEN(u16, uint16_t, uint16_t, 16)                                                                 \
  GEN(u32, uint32_t, uint32_t, 32)                                                                 \
  GEN(u64, uint64_t, uint64_t, 64)
#define MB_FOR_SINTS(GEN)                                                                          \
  GEN(s8, int8_t, uint8_t, 8)                                                                      \
  GEN(s16, int16_t, uint16_t, 16)                                                                  \
  GEN(s32, int32_t, uint32_t, 32)                                                                  \
  GEN(s64, int64_t, uint64_t, 64)

/* Table rows. */
#define MB_INTS(OP)                                                                                \
  [EMLX_UINT8] = OP##_u8, [EMLX_UINT16] = OP##_u16, [EMLX_UINT32] = OP##_u32,                      \
  [EMLX_UINT64] = OP##_u64, [EMLX_INT8] = OP##_s8, [EMLX_INT16] = OP##_s16,                        \
  [EMLX_INT32] = OP##_s32, [EMLX_INT64] = OP##_s64
#define MB_SINTS(OP)                                                                               \
  [EMLX_INT8] = OP##_s8, [EMLX_INT16] = OP##_s16, [EMLX_INT32] = OP##_s32, [EMLX_INT64] = OP##_s64
#define MB_FLOATS(OP)                                                                              \
  [EMLX_FLOAT16] = OP##_f16, [EMLX_BFLOAT16] = OP##_bf16, [EMLX_FLOAT32] = OP##_f32,               \
  [EMLX_FLOAT64] = OP##_f64

#include "math_body_un.h"
#include "math_body_bin.h"
#include "math_body_nary.h"

const emlx_cpu_math_table EMLX_ISA_NAME(emlx_cpu_math) = {
    .un = MU_TABLE_ROWS,
    .bin = MB_TABLE_ROWS,
    .where = MN_WHERE_ROW,
    .clip = MN_CLIP_ROW,
    .isclose = MN_ISCLOSE_ROW,
};
