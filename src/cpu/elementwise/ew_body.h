/* ew_body.h — elementwise inner loops (add, subtract, multiply, divide,
 * negate, exp) for every dtype, written once and compiled per ISA by
 * ew_{scalar,avx2,avx512}.c. Plain loops with stride specialisation
 * (contiguous, broadcast scalar, strided) that GCC vectorises at -O3;
 * f16/bf16 are staged through f32 tiles; f32 exp (and f16/bf16 through it)
 * is math_cr_body.h's, libm's double result rounded once, f64 exp SLEEF's
 * through the vl_* layer; complex64 multiply/divide/exp are computed in double (C99 Annex G
 * semantics) and rounded once; complex128 is computed in double _Complex
 * (glibc's Annex G multiply, divide and cexp).
 *
 * Integer arithmetic runs on unsigned types (wrapping, no UB); signed dtypes
 * share the unsigned loops of their width. */
#include <complex.h>
#include <string.h>

#include "simd/body.h"

/* ---- loop shapes ---------------------------------------------------------- */
#define EW_BIN(NAME, T, EXPR)                                                                      \
  static void NAME(const void *pa, int64_t sa, const void *pb, int64_t sb, void *po, int64_t n) {  \
    const T *a = (const T *)pa, *b = (const T *)pb;                                                \
    T *o = (T *)po;                                                                                \
    if (sa == 1 && sb == 1) {                                                                      \
      for (int64_t i = 0; i < n; i++) {                                                            \
        T x = a[i], y = b[i];                                                                      \
        o[i] = (EXPR);                                                                             \
      }                                                                                            \
    } else if (sa == 1 && sb == 0) {                                                               \
      const T y = b[0];                                                                            \
      for (int64_t i = 0; i < n; i++) {                                                            \
        T x = a[i];                                                                                \
        o[i] = (EXPR);                                                                             \
      }                                                                                            \
    } else if (sa == 0 && sb == 1) {                                                               \
      const T x = a[0];                                                                            \
      for (int64_t i = 0; i < n; i++) {                                                            \
        T y = b[i];                                                                                \
        o[i] = (EXPR);                                                                             \
      }                                                                                            \
    } else {                                                                                       \
      for (int64_t i = 0; i < n; i++) {                                                            \
        T x = a[i * sa], y = b[i * sb];                                                            \
        o[i] = (EXPR);                                                                             \
      }                                                                                            \
    }                                                                                              \
  }

#define EW_UN(NAME, T, EXPR)                                                                       \
  static void NAME(const void *pi, int64_t s, void *po, int64_t n) {                               \
    const T *a = (const T *)pi;                                                                    \
    T *o = (T *)po;                                                                                \
    if (s == 1) {                                                                                  \
      for (int64_t i = 0; i < n; i++) {                                                            \
        T x = a[i];                                                                                \
        o[i] = (EXPR);                                                                             \
      }                                                                                            \
    } else {                                                                                       \
      for (int64_t i = 0; i < n; i++) {                                                            \
        T x = a[i * s];                                                                            \
        o[i] = (EXPR);                                                                             \
      }                                                                                            \
    }                                                                                              \
  }

/* f16/bf16: both operands through f32 tiles, one rounding per result. */
#define EW_BIN_HALF(NAME, LOAD, STORE, OP)                                                         \
  static void NAME(const void *pa, int64_t sa, const void *pb, int64_t sb, void *po, int64_t n) {  \
    const uint16_t *a = (const uint16_t *)pa, *b = (const uint16_t *)pb;                           \
    uint16_t *o = (uint16_t *)po;                                                                  \
    float ta[EMLX_TILE], tb[EMLX_TILE], tr[EMLX_TILE];                                             \
    if (sa == 0) {                                                                                 \
      LOAD(a, 1, 1, ta);                                                                           \
      for (int64_t j = 1; j < bd_min64(n, EMLX_TILE); j++)                                         \
        ta[j] = ta[0];                                                                             \
    }                                                                                              \
    if (sb == 0) {                                                                                 \
      LOAD(b, 1, 1, tb);                                                                           \
      for (int64_t j = 1; j < bd_min64(n, EMLX_TILE); j++)                                         \
        tb[j] = tb[0];                                                                             \
    }                                                                                              \
    for (int64_t i0 = 0; i0 < n; i0 += EMLX_TILE) {                                                \
      int64_t len = bd_min64(EMLX_TILE, n - i0);                                                   \
      if (sa != 0)                                                                                 \
        LOAD(a + i0 * sa, sa, len, ta);                                                            \
      if (sb != 0)                                                                                 \
        LOAD(b + i0 * sb, sb, len, tb);                                                            \
      for (int64_t j = 0; j < len; j++)                                                            \
        tr[j] = ta[j] OP tb[j];                                                                    \
      STORE(tr, o + i0, len);                                                                      \
    }                                                                                              \
  }

/* ---- binary --------------------------------------------------------------- */
EW_BIN(add_b, uint8_t, (uint8_t)((x | y) != 0))
EW_BIN(sub_b, uint8_t, (uint8_t)((x != 0) != (y != 0)))
EW_BIN(mul_b, uint8_t, (uint8_t)((x != 0) & (y != 0)))

EW_BIN(add_u8, uint8_t, (uint8_t)(x + y))
EW_BIN(sub_u8, uint8_t, (uint8_t)(x - y))
EW_BIN(mul_u8, uint8_t, (uint8_t)((uint32_t)x *y))
EW_BIN(add_u16, uint16_t, (uint16_t)(x + y))
EW_BIN(sub_u16, uint16_t, (uint16_t)(x - y))
EW_BIN(mul_u16, uint16_t, (uint16_t)((uint32_t)x *y))
EW_BIN(add_u32, uint32_t, x + y)
EW_BIN(sub_u32, uint32_t, x - y)
EW_BIN(mul_u32, uint32_t, x *y)
EW_BIN(add_u64, uint64_t, x + y)
EW_BIN(sub_u64, uint64_t, x - y)
EW_BIN(mul_u64, uint64_t, x *y)

EW_BIN(add_f32, float, x + y)
EW_BIN(sub_f32, float, x - y)
EW_BIN(mul_f32, float, x *y)
EW_BIN(div_f32, float, x / y)
EW_BIN(add_f64, double, x + y)
EW_BIN(sub_f64, double, x - y)
EW_BIN(mul_f64, double, x *y)
EW_BIN(div_f64, double, x / y)

EW_BIN_HALF(add_f16, bd_load_f16, bd_store_f16, +)
EW_BIN_HALF(sub_f16, bd_load_f16, bd_store_f16, -)
EW_BIN_HALF(mul_f16, bd_load_f16, bd_store_f16, *)
EW_BIN_HALF(div_f16, bd_load_f16, bd_store_f16, /)
EW_BIN_HALF(add_bf16, bd_load_bf16, bd_store_bf16, +)
EW_BIN_HALF(sub_bf16, bd_load_bf16, bd_store_bf16, -)
EW_BIN_HALF(mul_bf16, bd_load_bf16, bd_store_bf16, *)
EW_BIN_HALF(div_bf16, bd_load_bf16, bd_store_bf16, /)

static inline emlx_c64 c64_of(double _Complex z) {
  emlx_c64 r = {(float)creal(z), (float)cimag(z)};
  return r;
}
static inline double _Complex c64_wide(emlx_c64 x) {
  /* C11 6.2.5: a complex has the representation of an array of two reals. */
  double parts[2] = {(double)x.re, (double)x.im};
  double _Complex z;
  memcpy(&z, parts, sizeof z);
  return z;
}
static inline emlx_c64 c64_add(emlx_c64 x, emlx_c64 y) {
  emlx_c64 r = {x.re + y.re, x.im + y.im};
  return r;
}
static inline emlx_c64 c64_sub(emlx_c64 x, emlx_c64 y) {
  emlx_c64 r = {x.re - y.re, x.im - y.im};
  return r;
}
static inline emlx_c64 c64_mul(emlx_c64 x, emlx_c64 y) { return c64_of(c64_wide(x) * c64_wide(y)); }
static inline emlx_c64 c64_div(emlx_c64 x, emlx_c64 y) { return c64_of(c64_wide(x) / c64_wide(y)); }
static inline emlx_c64 c64_neg(emlx_c64 x) {
  emlx_c64 r = {-x.re, -x.im};
  return r;
}
static inline emlx_c64 c64_exp(emlx_c64 x) { return c64_of(cexp(c64_wide(x))); }

EW_BIN(add_c64, emlx_c64, c64_add(x, y))
EW_BIN(sub_c64, emlx_c64, c64_sub(x, y))
EW_BIN(mul_c64, emlx_c64, c64_mul(x, y))
EW_BIN(div_c64, emlx_c64, c64_div(x, y))

/* complex128 through double _Complex (the same bytes as emlx_c128). */
static inline emlx_c128 c128_of(double _Complex z) {
  emlx_c128 r = {creal(z), cimag(z)};
  return r;
}
static inline double _Complex c128_z(emlx_c128 x) {
  double _Complex z;
  memcpy(&z, &x, sizeof z);
  return z;
}
static inline emlx_c128 c128_add(emlx_c128 x, emlx_c128 y) {
  emlx_c128 r = {x.re + y.re, x.im + y.im};
  return r;
}
static inline emlx_c128 c128_sub(emlx_c128 x, emlx_c128 y) {
  emlx_c128 r = {x.re - y.re, x.im - y.im};
  return r;
}
static inline emlx_c128 c128_neg(emlx_c128 x) {
  emlx_c128 r = {-x.re, -x.im};
  return r;
}
EW_BIN(add_c128, emlx_c128, c128_add(x, y))
EW_BIN(sub_c128, emlx_c128, c128_sub(x, y))
EW_BIN(mul_c128, emlx_c128, c128_of(c128_z(x) * c128_z(y)))
EW_BIN(div_c128, emlx_c128, c128_of(c128_z(x) / c128_z(y)))

/* ---- negate --------------------------------------------------------------- */
EW_UN(neg_u8, uint8_t, (uint8_t)(0u - x))
EW_UN(neg_u16, uint16_t, (uint16_t)(0u - x))
EW_UN(neg_u32, uint32_t, 0u - x)
EW_UN(neg_u64, uint64_t, (uint64_t)0 - x)
EW_UN(neg_f32, float, -x)
EW_UN(neg_f64, double, -x)
EW_UN(neg_half, uint16_t, (uint16_t)(x ^ 0x8000u)) /* f16 and bf16: flip the sign bit */
EW_UN(neg_c64, emlx_c64, c64_neg(x))
EW_UN(neg_c128, emlx_c128, c128_neg(x))

/* ---- exp ------------------------------------------------------------------ */
static void exp_f32(const void *pi, int64_t s, void *po, int64_t n) {
  const float *a = (const float *)pi;
  float *o = (float *)po;
  if (s == 1) {
    mcr_exp_f32(a, o, n);
    return;
  }
  float t[EMLX_TILE];
  for (int64_t i0 = 0; i0 < n; i0 += EMLX_TILE) {
    int64_t len = bd_min64(EMLX_TILE, n - i0);
    for (int64_t j = 0; j < len; j++)
      t[j] = a[(i0 + j) * s];
    mcr_exp_f32(t, o + i0, len);
  }
}
/* SLEEF's exp gives inf from 709.7827111 on, a few ulps before the true
 * overflow at 709.7827129: lanes past 709 are redone in long double. Runs
 * keep their inputs, which an in-place call overwrites. */
static void exp_f64_run(const double *a, double *o, int64_t n) {
  for (int64_t i0 = 0; i0 < n; i0 += 64) {
    int64_t len = bd_min64(64, n - i0);
    double keep[64];
    memcpy(keep, a + i0, (size_t)len * sizeof *keep);
    vl_exp_f64(a + i0, o + i0, len);
    for (int64_t i = 0; i < len; i++)
      if (keep[i] > 709.0)
        o[i0 + i] = (double)expl((long double)keep[i]);
  }
}
static void exp_f64(const void *pi, int64_t s, void *po, int64_t n) {
  const double *a = (const double *)pi;
  double *o = (double *)po;
  if (s == 1) {
    exp_f64_run(a, o, n);
    return;
  }
  double t[EMLX_TILE];
  for (int64_t i0 = 0; i0 < n; i0 += EMLX_TILE) {
    int64_t len = bd_min64(EMLX_TILE, n - i0);
    for (int64_t j = 0; j < len; j++)
      t[j] = a[(i0 + j) * s];
    exp_f64_run(t, o + i0, len);
  }
}
#define EW_EXP_HALF(NAME, LOAD, STORE)                                                             \
  static void NAME(const void *pi, int64_t s, void *po, int64_t n) {                               \
    const uint16_t *a = (const uint16_t *)pi;                                                      \
    uint16_t *o = (uint16_t *)po;                                                                  \
    float t[EMLX_TILE];                                                                            \
    for (int64_t i0 = 0; i0 < n; i0 += EMLX_TILE) {                                                \
      int64_t len = bd_min64(EMLX_TILE, n - i0);                                                   \
      LOAD(a + i0 * s, s, len, t);                                                                 \
      mcr_exp_f32(t, t, len);                                                                      \
      STORE(t, o + i0, len);                                                                       \
    }                                                                                              \
  }
EW_EXP_HALF(exp_f16, bd_load_f16, bd_store_f16)
EW_EXP_HALF(exp_bf16, bd_load_bf16, bd_store_bf16)
EW_UN(exp_c64, emlx_c64, c64_exp(x))
EW_UN(exp_c128, emlx_c128, c128_of(cexp(c128_z(x))))

/* ---- the table ------------------------------------------------------------ */
#define EW_INTS(OP)                                                                                \
  [EMLX_UINT8] = OP##_u8, [EMLX_INT8] = OP##_u8, [EMLX_UINT16] = OP##_u16,                         \
  [EMLX_INT16] = OP##_u16, [EMLX_UINT32] = OP##_u32, [EMLX_INT32] = OP##_u32,                      \
  [EMLX_UINT64] = OP##_u64, [EMLX_INT64] = OP##_u64
#define EW_FLOATS(OP)                                                                              \
  [EMLX_FLOAT16] = OP##_f16, [EMLX_BFLOAT16] = OP##_bf16, [EMLX_FLOAT32] = OP##_f32,               \
  [EMLX_FLOAT64] = OP##_f64, [EMLX_COMPLEX64] = OP##_c64, [EMLX_COMPLEX128] = OP##_c128

const emlx_cpu_ew_table EMLX_ISA_NAME(emlx_cpu_ew) = {
    .binary =
        {
            [EMLX_CPU_ADD] = {[EMLX_BOOL] = add_b, EW_INTS(add), EW_FLOATS(add)},
            [EMLX_CPU_SUB] = {[EMLX_BOOL] = sub_b, EW_INTS(sub), EW_FLOATS(sub)},
            [EMLX_CPU_MUL] = {[EMLX_BOOL] = mul_b, EW_INTS(mul), EW_FLOATS(mul)},
            [EMLX_CPU_DIV] = {EW_FLOATS(div)},
        },
    .negate = {EW_INTS(neg), [EMLX_FLOAT16] = neg_half, [EMLX_BFLOAT16] = neg_half,
               [EMLX_FLOAT32] = neg_f32, [EMLX_FLOAT64] = neg_f64, [EMLX_COMPLEX64] = neg_c64,
               [EMLX_COMPLEX128] = neg_c128},
    .exp = {EW_FLOATS(exp)},
};
