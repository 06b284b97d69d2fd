/* convert.h — scalar dtype conversions shared by every CPU kernel (and by
 * every ISA unit, so that all of them agree bit for bit).
 *
 * - f16 <-> f32 in software, bit-exact with the F16C / AVX-512 instructions
 *   (round to nearest even; NaN stays NaN, quieted, payload truncated).
 * - bf16 <-> f32 (round to nearest even; NaN quieted).
 * - f64 and wide integers to f16/bf16 are correctly rounded: f64 goes through
 *   f32 with round-to-odd, integers >= 2^24 are pre-rounded to the target's
 *   precision, so the final f32 -> half step rounds exactly once.
 * - float -> integer truncates toward zero, saturates, NaN -> 0.
 * - emlx_cv_<kind>_<dst>(x): convert a value of an intermediate kind
 *   (u32, i32, u64, i64, f32, f64, c64, c128) into a destination dtype's
 *   storage. complex128's real part converts like f64.
 *   Sources load into a kind first (u8 -> u32, s16 -> i32, f16 -> f32, ...). */
#ifndef EMLX_CPU_CONVERT_H
#define EMLX_CPU_CONVERT_H

#include <stdint.h>
#include <string.h>

typedef struct emlx_c64 {
  float re, im;
} emlx_c64;
typedef struct emlx_c128 {
  double re, im;
} emlx_c128;
/* 16 bytes moved as bits (complex128 elements in the copy kernels). */
typedef struct emlx_b16 {
  uint64_t w[2];
} emlx_b16;

static inline uint32_t emlx_cv_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static inline float emlx_cv_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* ---- half precision ------------------------------------------------------- */
static inline float emlx_cv_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0x1F) /* Inf, or NaN made quiet (as VCVTPH2PS does) */
    return emlx_cv_bits_f32(sign | 0x7F800000u | (m ? 0x400000u | (m << 13) : 0));
  if (e == 0) { /* zero or subnormal: m * 2^-24, exact in f32 */
    float f = (float)m * 0x1p-24f;
    return emlx_cv_bits_f32(sign | emlx_cv_f32_bits(f));
  }
  return emlx_cv_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

static inline uint16_t emlx_cv_f32_to_f16(float f) {
  uint32_t x = emlx_cv_f32_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) /* NaN: quiet, payload truncated (as VCVTPS2PH) */
    return (uint16_t)(sign | 0x7E00u | ((ax >> 13) & 0x3FFu));
  if (ax >= 0x477FF000u) /* >= 65520 rounds to Inf */
    return (uint16_t)(sign | 0x7C00u);
  if (ax >= 0x38800000u) { /* normal in f16 (>= 2^-14) */
    uint32_t r = ax + 0xFFFu + ((ax >> 13) & 1u);
    return (uint16_t)(sign | ((r - 0x38000000u) >> 13));
  }
  if (ax < 0x33000000u) /* < 2^-25: rounds to zero */
    return (uint16_t)sign;
  uint32_t e = ax >> 23, mant = (ax & 0x7FFFFFu) | 0x800000u;
  uint32_t shift = 126u - e; /* 14..24: units of 2^-24 */
  uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u)))
    q++;
  return (uint16_t)(sign | q);
}

static inline float emlx_cv_bf16_to_f32(uint16_t h) { return emlx_cv_bits_f32((uint32_t)h << 16); }

static inline uint16_t emlx_cv_f32_to_bf16(float f) {
  uint32_t x = emlx_cv_f32_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u)
    return (uint16_t)((x >> 16) | 0x40u);
  return (uint16_t)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

/* f64 -> f32 rounding to odd: a later rounding to <= 22 bits is then exact
 * to one rounding of the original value. */
static inline float emlx_cv_f64_to_f32_odd(double d) {
  float f = (float)d;
  if ((double)f != d && d == d) {
    uint32_t u = emlx_cv_f32_bits(f);
    double af = (double)f < 0 ? -(double)f : (double)f, ad = d < 0 ? -d : d;
    if (af > ad)
      u -= 1; /* truncate toward zero (Inf becomes FLT_MAX) */
    f = emlx_cv_bits_f32(u | 1u);
  }
  return f;
}

/* m rounded (nearest even) to p significant bits, as an f32 that then
 * converts exactly; values below 2^24 are returned exactly. */
static inline float emlx_cv_u64_prerounded(uint64_t m, int p) {
  if (m < (1u << 24))
    return (float)m;
  int msb = 63 - __builtin_clzll(m), shift = msb - (p - 1);
  uint64_t q = m >> shift, rem = m & ((UINT64_C(1) << shift) - 1),
           half = UINT64_C(1) << (shift - 1);
  if (rem > half || (rem == half && (q & 1u)))
    q++;
  return (float)q * (float)(UINT64_C(1) << shift);
}
static inline float emlx_cv_i64_prerounded(int64_t x, int p) {
  uint64_t m = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
  float f = emlx_cv_u64_prerounded(m, p);
  return x < 0 ? -f : f;
}

/* ---- kind -> destination -------------------------------------------------- */
#define EMLX_CV_INT_DEST(d, DT, UT, HI, LO, MAXV, MINV)                                            \
  static inline DT emlx_cv_u32_##d(uint32_t x) { return (DT)(UT)x; }                               \
  static inline DT emlx_cv_i32_##d(int32_t x) { return (DT)(UT)x; }                                \
  static inline DT emlx_cv_u64_##d(uint64_t x) { return (DT)(UT)x; }                               \
  static inline DT emlx_cv_i64_##d(int64_t x) { return (DT)(UT)x; }                                \
  static inline DT emlx_cv_f32_##d(float x) {                                                      \
    return x != x ? (DT)0 : x >= (float)(HI) ? (DT)(MAXV) : x <= (float)(LO) ? (DT)(MINV) : (DT)x; \
  }                                                                                                \
  static inline DT emlx_cv_f64_##d(double x) {                                                     \
    return x != x ? (DT)0 : x >= (HI) ? (DT)(MAXV) : x <= (LO) ? (DT)(MINV) : (DT)x;               \
  }                                                                                                \
  static inline DT emlx_cv_c64_##d(emlx_c64 x) { return emlx_cv_f32_##d(x.re); }                 \
  static inline DT emlx_cv_c128_##d(emlx_c128 x) { return emlx_cv_f64_##d(x.re); }

EMLX_CV_INT_DEST(u8, uint8_t, uint8_t, 256.0, 0.0, UINT8_MAX, 0)
EMLX_CV_INT_DEST(u16, uint16_t, uint16_t, 65536.0, 0.0, UINT16_MAX, 0)
EMLX_CV_INT_DEST(u32, uint32_t, uint32_t, 4294967296.0, 0.0, UINT32_MAX, 0)
EMLX_CV_INT_DEST(u64, uint64_t, uint64_t, 18446744073709551616.0, 0.0, UINT64_MAX, 0)
EMLX_CV_INT_DEST(s8, int8_t, uint8_t, 128.0, -128.0, INT8_MAX, INT8_MIN)
EMLX_CV_INT_DEST(s16, int16_t, uint16_t, 32768.0, -32768.0, INT16_MAX, INT16_MIN)
EMLX_CV_INT_DEST(s32, int32_t, uint32_t, 2147483648.0, -2147483648.0, INT32_MAX, INT32_MIN)
EMLX_CV_INT_DEST(s64, int64_t, uint64_t, 9223372036854775808.0, -9223372036854775808.0, INT64_MAX,
                 INT64_MIN)

/* bool: != 0 (NaN is true; complex: either part). */
static inline uint8_t emlx_cv_u32_b(uint32_t x) { return (uint8_t)(x != 0); }
static inline uint8_t emlx_cv_i32_b(int32_t x) { return (uint8_t)(x != 0); }
static inline uint8_t emlx_cv_u64_b(uint64_t x) { return (uint8_t)(x != 0); }
static inline uint8_t emlx_cv_i64_b(int64_t x) { return (uint8_t)(x != 0); }
static inline uint8_t emlx_cv_f32_b(float x) { return (uint8_t)(x != 0); }
static inline uint8_t emlx_cv_f64_b(double x) { return (uint8_t)(x != 0); }
static inline uint8_t emlx_cv_c64_b(emlx_c64 x) { return (uint8_t)(x.re != 0 || x.im != 0); }
static inline uint8_t emlx_cv_c128_b(emlx_c128 x) { return (uint8_t)(x.re != 0 || x.im != 0); }

/* f32 and f64 (C conversions round to nearest even, correctly). */
static inline float emlx_cv_u32_f32(uint32_t x) { return (float)x; }
static inline float emlx_cv_i32_f32(int32_t x) { return (float)x; }
static inline float emlx_cv_u64_f32(uint64_t x) { return (float)x; }
static inline float emlx_cv_i64_f32(int64_t x) { return (float)x; }
static inline float emlx_cv_f32_f32(float x) { return x; }
static inline float emlx_cv_f64_f32(double x) { return (float)x; }
static inline float emlx_cv_c64_f32(emlx_c64 x) { return x.re; }
static inline float emlx_cv_c128_f32(emlx_c128 x) { return (float)x.re; }
static inline double emlx_cv_u32_f64(uint32_t x) { return (double)x; }
static inline double emlx_cv_i32_f64(int32_t x) { return (double)x; }
static inline double emlx_cv_u64_f64(uint64_t x) { return (double)x; }
static inline double emlx_cv_i64_f64(int64_t x) { return (double)x; }
static inline double emlx_cv_f32_f64(float x) { return (double)x; }
static inline double emlx_cv_f64_f64(double x) { return x; }
static inline double emlx_cv_c64_f64(emlx_c64 x) { return (double)x.re; }
static inline double emlx_cv_c128_f64(emlx_c128 x) { return x.re; }

/* f16 (11 significant bits) and bf16 (8). */
#define EMLX_CV_HALF_DEST(d, P, FROM_F32)                                                          \
  static inline uint16_t emlx_cv_u32_##d(uint32_t x) {                                             \
    return FROM_F32(emlx_cv_u64_prerounded(x, P));                                                 \
  }                                                                                                \
  static inline uint16_t emlx_cv_i32_##d(int32_t x) {                                              \
    return FROM_F32(emlx_cv_i64_prerounded(x, P));                                                 \
  }                                                                                                \
  static inline uint16_t emlx_cv_u64_##d(uint64_t x) {                                             \
    return FROM_F32(emlx_cv_u64_prerounded(x, P));                                                 \
  }                                                                                                \
  static inline uint16_t emlx_cv_i64_##d(int64_t x) {                                              \
    return FROM_F32(emlx_cv_i64_prerounded(x, P));                                                 \
  }                                                                                                \
  static inline uint16_t emlx_cv_f32_##d(float x) { return FROM_F32(x); }                          \
  static inline uint16_t emlx_cv_f64_##d(double x) { return FROM_F32(emlx_cv_f64_to_f32_odd(x)); } \
  static inline uint16_t emlx_cv_c64_##d(emlx_c64 x) { return FROM_F32(x.re); }                  \
  static inline uint16_t emlx_cv_c128_##d(emlx_c128 x) {                                           \
    return FROM_F32(emlx_cv_f64_to_f32_odd(x.re));                                                 \
  }

EMLX_CV_HALF_DEST(f16, 11, emlx_cv_f32_to_f16)
EMLX_CV_HALF_DEST(bf16, 8, emlx_cv_f32_to_bf16)

/* complex64: the real part converts like f32, imaginary part 0. */
#define EMLX_CV_C64_FROM(K, KT)                                                                    \
  static inline emlx_c64 emlx_cv_##K##_c64(KT x) {                                                 \
    emlx_c64 r = {emlx_cv_##K##_f32(x), 0.0f};                                                     \
    return r;                                                                                      \
  }
EMLX_CV_C64_FROM(u32, uint32_t)
EMLX_CV_C64_FROM(i32, int32_t)
EMLX_CV_C64_FROM(u64, uint64_t)
EMLX_CV_C64_FROM(i64, int64_t)
EMLX_CV_C64_FROM(f32, float)
EMLX_CV_C64_FROM(f64, double)
static inline emlx_c64 emlx_cv_c64_c64(emlx_c64 x) { return x; }
static inline emlx_c64 emlx_cv_c128_c64(emlx_c128 x) {
  emlx_c64 r = {(float)x.re, (float)x.im};
  return r;
}

/* complex128: the real part converts like f64 (exact from every kind but
 * u64/i64, which round once), imaginary part 0. */
#define EMLX_CV_C128_FROM(K, KT)                                                                   \
  static inline emlx_c128 emlx_cv_##K##_c128(KT x) {                                               \
    emlx_c128 r = {emlx_cv_##K##_f64(x), 0.0};                                                     \
    return r;                                                                                      \
  }
EMLX_CV_C128_FROM(u32, uint32_t)
EMLX_CV_C128_FROM(i32, int32_t)
EMLX_CV_C128_FROM(u64, uint64_t)
EMLX_CV_C128_FROM(i64, int64_t)
EMLX_CV_C128_FROM(f32, float)
EMLX_CV_C128_FROM(f64, double)
static inline emlx_c128 emlx_cv_c64_c128(emlx_c64 x) {
  emlx_c128 r = {(double)x.re, (double)x.im};
  return r;
}
static inline emlx_c128 emlx_cv_c128_c128(emlx_c128 x) { return x; }

/* ---- max helpers (NaN propagates: once the accumulator is NaN it stays) ---- */
static inline void emlx_cv_max_f64_into(double *acc, double v) {
  if (*acc == *acc && (v > *acc || v != v))
    *acc = v;
}
/* complex64 compares lexicographically (real part, then imaginary). */
static inline void emlx_cv_max_c64_into(emlx_c64 *acc, emlx_c64 v) {
  if (acc->re != acc->re || acc->im != acc->im)
    return;
  if (v.re != v.re || v.im != v.im || v.re > acc->re || (v.re == acc->re && v.im > acc->im))
    *acc = v;
}

/* complex128, the same order. */
static inline void emlx_cv_max_c128_into(emlx_c128 *acc, emlx_c128 v) {
  if (acc->re != acc->re || acc->im != acc->im)
    return;
  if (v.re != v.re || v.im != v.im || v.re > acc->re || (v.re == acc->re && v.im > acc->im))
    *acc = v;
}

#endif
