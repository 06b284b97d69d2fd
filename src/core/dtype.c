/* dtype.c — dtype facts, MLX's promotion table and the bit-exact f16/bf16
 * conversions every kernel's scalar path relies on. */
#include <math.h>
#include <string.h>

#include "internal.h"

static const size_t dtype_sizes[EMLX_DTYPE_COUNT] = {
    [EMLX_BOOL] = 1,    [EMLX_UINT8] = 1,    [EMLX_UINT16] = 2,   [EMLX_UINT32] = 4,
    [EMLX_UINT64] = 8,  [EMLX_INT8] = 1,     [EMLX_INT16] = 2,    [EMLX_INT32] = 4,
    [EMLX_INT64] = 8,   [EMLX_FLOAT16] = 2,  [EMLX_FLOAT32] = 4,  [EMLX_FLOAT64] = 8,
    [EMLX_BFLOAT16] = 2, [EMLX_COMPLEX64] = 8, [EMLX_COMPLEX128] = 16,
};

static const char *const dtype_names[EMLX_DTYPE_COUNT] = {
    [EMLX_BOOL] = "bool",       [EMLX_UINT8] = "uint8",     [EMLX_UINT16] = "uint16",
    [EMLX_UINT32] = "uint32",   [EMLX_UINT64] = "uint64",   [EMLX_INT8] = "int8",
    [EMLX_INT16] = "int16",     [EMLX_INT32] = "int32",     [EMLX_INT64] = "int64",
    [EMLX_FLOAT16] = "float16", [EMLX_FLOAT32] = "float32", [EMLX_FLOAT64] = "float64",
    [EMLX_BFLOAT16] = "bfloat16", [EMLX_COMPLEX64] = "complex64",
    [EMLX_COMPLEX128] = "complex128",
};

bool emlx_dtype_is_valid(emlx_dtype d) { return (unsigned)d < EMLX_DTYPE_COUNT; }

size_t emlx_dtype_size(emlx_dtype d) { return emlx_dtype_is_valid(d) ? dtype_sizes[d] : 0; }

const char *emlx_dtype_name(emlx_dtype d) {
  return emlx_dtype_is_valid(d) ? dtype_names[d] : "invalid";
}

bool emlx_dtype_is_float(emlx_dtype d) {
  return d == EMLX_FLOAT16 || d == EMLX_BFLOAT16 || d == EMLX_FLOAT32 || d == EMLX_FLOAT64;
}

bool emlx_dtype_is_complex(emlx_dtype d) { return d == EMLX_COMPLEX64 || d == EMLX_COMPLEX128; }

emlx_dtype emlx_dtype_real_part(emlx_dtype d) {
  return d == EMLX_COMPLEX64 ? EMLX_FLOAT32 : d == EMLX_COMPLEX128 ? EMLX_FLOAT64 : d;
}

bool emlx_dtype_is_integer(emlx_dtype d) { return d >= EMLX_UINT8 && d <= EMLX_INT64; }

bool emlx_dtype_is_signed(emlx_dtype d) {
  return (d >= EMLX_INT8 && d <= EMLX_INT64) || emlx_dtype_is_float(d) || emlx_dtype_is_complex(d);
}

/* MLX's table (JAX's lattice), rows and columns in enum order; complex128
 * (not in MLX) sits above complex64 and float64, as in NumPy and JAX:
 * c64 with f64 gives c128, c128 with anything gives c128. */
#define B EMLX_BOOL
#define U1 EMLX_UINT8
#define U2 EMLX_UINT16
#define U4 EMLX_UINT32
#define U8 EMLX_UINT64
#define S1 EMLX_INT8
#define S2 EMLX_INT16
#define S4 EMLX_INT32
#define S8 EMLX_INT64
#define H EMLX_FLOAT16
#define F EMLX_FLOAT32
#define D EMLX_FLOAT64
#define BF EMLX_BFLOAT16
#define C EMLX_COMPLEX64
#define Z EMLX_COMPLEX128
static const unsigned char promotion[EMLX_DTYPE_COUNT][EMLX_DTYPE_COUNT] = {
    /*        B   U1  U2  U4  U8  S1  S2  S4  S8  H   F   D   BF  C   Z */
    /* B  */ {B, U1, U2, U4, U8, S1, S2, S4, S8, H, F, D, BF, C, Z},
    /* U1 */ {U1, U1, U2, U4, U8, S2, S2, S4, S8, H, F, D, BF, C, Z},
    /* U2 */ {U2, U2, U2, U4, U8, S4, S4, S4, S8, H, F, D, BF, C, Z},
    /* U4 */ {U4, U4, U4, U4, U8, S8, S8, S8, S8, H, F, D, BF, C, Z},
    /* U8 */ {U8, U8, U8, U8, U8, F, F, F, F, H, F, D, BF, C, Z},
    /* S1 */ {S1, S2, S4, S8, F, S1, S2, S4, S8, H, F, D, BF, C, Z},
    /* S2 */ {S2, S2, S4, S8, F, S2, S2, S4, S8, H, F, D, BF, C, Z},
    /* S4 */ {S4, S4, S4, S8, F, S4, S4, S4, S8, H, F, D, BF, C, Z},
    /* S8 */ {S8, S8, S8, S8, F, S8, S8, S8, S8, H, F, D, BF, C, Z},
    /* H  */ {H, H, H, H, H, H, H, H, H, H, F, D, F, C, Z},
    /* F  */ {F, F, F, F, F, F, F, F, F, F, F, D, F, C, Z},
    /* D  */ {D, D, D, D, D, D, D, D, D, D, D, D, D, Z, Z},
    /* BF */ {BF, BF, BF, BF, BF, BF, BF, BF, BF, F, F, D, BF, C, Z},
    /* C  */ {C, C, C, C, C, C, C, C, C, C, C, Z, C, C, Z},
    /* Z  */ {Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z},
};
#undef B
#undef U1
#undef U2
#undef U4
#undef U8
#undef S1
#undef S2
#undef S4
#undef S8
#undef H
#undef F
#undef D
#undef BF
#undef C
#undef Z

emlx_dtype emlx_promote_types(emlx_dtype a, emlx_dtype b) {
  if (!emlx_dtype_is_valid(a) || !emlx_dtype_is_valid(b)) return EMLX_DTYPE_COUNT;
  return (emlx_dtype)promotion[a][b];
}

/* ---- f16 / bf16 ------------------------------------------------------------ */

static uint32_t f32_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static float bits_f32(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

uint16_t emlx_f32_to_bf16(float x) {
  uint32_t u = f32_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

float emlx_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t emlx_f32_to_f16(float x) {
  uint32_t u = f32_bits(x);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); /* NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: Inf */
  if (a < 0x38800000u) {
    /* Result is subnormal (or zero): value / 2^-24 rounded to nearest even. */
    if (a < 0x33000000u) return (uint16_t)sign; /* below half the smallest subnormal */
    uint32_t e = a >> 23;
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e; /* 14..24 */
    uint32_t q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);
  }
  /* Normal: rebias exponent, round mantissa from 23 to 10 bits (carry may
   * ripple into the exponent, which is the right result). */
  uint32_t r = a - 0x38000000u; /* exponent bias 127 -> 15 */
  r += 0xfffu + ((r >> 13) & 1u);
  return (uint16_t)(sign | (r >> 13));
}

float emlx_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu;
  uint32_t m = h & 0x3ffu;
  if (e == 0x1fu) return bits_f32(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    if (m == 0) return bits_f32(sign);
    /* subnormal: normalise */
    int shift = 0;
    while (!(m & 0x400u)) {
      m <<= 1;
      shift++;
    }
    m &= 0x3ffu;
    return bits_f32(sign | ((uint32_t)(113 - shift) << 23) | (m << 13));
  }
  return bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

/* ---- scalar loads and stores --------------------------------------------------- */

static double sat_bound(double v, double lo, double hi) {
  if (v != v) return 0.0;
  if (v <= lo) return lo;
  if (v >= hi) return hi;
  return v;
}

double emlx__load_f64(const void *p, emlx_dtype dtype) {
  switch (dtype) {
  case EMLX_BOOL: return *(const uint8_t *)p ? 1.0 : 0.0;
  case EMLX_UINT8: return *(const uint8_t *)p;
  case EMLX_UINT16: return *(const uint16_t *)p;
  case EMLX_UINT32: return *(const uint32_t *)p;
  case EMLX_UINT64: return (double)*(const uint64_t *)p;
  case EMLX_INT8: return *(const int8_t *)p;
  case EMLX_INT16: return *(const int16_t *)p;
  case EMLX_INT32: return *(const int32_t *)p;
  case EMLX_INT64: return (double)*(const int64_t *)p;
  case EMLX_FLOAT16: return (double)emlx_f16_to_f32(*(const uint16_t *)p);
  case EMLX_BFLOAT16: return (double)emlx_bf16_to_f32(*(const uint16_t *)p);
  case EMLX_FLOAT32: return (double)*(const float *)p;
  case EMLX_FLOAT64: return *(const double *)p;
  case EMLX_COMPLEX64: return (double)((const float *)p)[0];
  case EMLX_COMPLEX128: return ((const double *)p)[0];
  default: return 0.0;
  }
}

/* Float to int64 with astype's rules: truncate, NaN to 0, saturate. */
static int64_t f64_to_i64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

int64_t emlx__load_i64(const void *p, emlx_dtype dtype) {
  switch (dtype) {
  case EMLX_BOOL: return *(const uint8_t *)p ? 1 : 0;
  case EMLX_UINT8: return *(const uint8_t *)p;
  case EMLX_UINT16: return *(const uint16_t *)p;
  case EMLX_UINT32: return *(const uint32_t *)p;
  case EMLX_UINT64: return (int64_t)*(const uint64_t *)p;
  case EMLX_INT8: return *(const int8_t *)p;
  case EMLX_INT16: return *(const int16_t *)p;
  case EMLX_INT32: return *(const int32_t *)p;
  case EMLX_INT64: return *(const int64_t *)p;
  default: return f64_to_i64(emlx__load_f64(p, dtype));
  }
}

void emlx__store_f64(void *p, emlx_dtype dtype, double v) {
  switch (dtype) {
  case EMLX_BOOL: *(uint8_t *)p = v != 0.0; break;
  case EMLX_UINT8: *(uint8_t *)p = (uint8_t)sat_bound(v, 0.0, 255.0); break;
  case EMLX_UINT16: *(uint16_t *)p = (uint16_t)sat_bound(v, 0.0, 65535.0); break;
  case EMLX_UINT32: *(uint32_t *)p = (uint32_t)sat_bound(v, 0.0, 4294967295.0); break;
  case EMLX_UINT64:
    if (v != v || v <= 0.0) *(uint64_t *)p = 0;
    else if (v >= 18446744073709551615.0) *(uint64_t *)p = UINT64_MAX;
    else *(uint64_t *)p = (uint64_t)v;
    break;
  case EMLX_INT8: *(int8_t *)p = (int8_t)sat_bound(v, -128.0, 127.0); break;
  case EMLX_INT16: *(int16_t *)p = (int16_t)sat_bound(v, -32768.0, 32767.0); break;
  case EMLX_INT32: *(int32_t *)p = (int32_t)sat_bound(v, -2147483648.0, 2147483647.0); break;
  case EMLX_INT64: *(int64_t *)p = f64_to_i64(v); break;
  case EMLX_FLOAT16: *(uint16_t *)p = emlx__f64_to_f16(v); break;
  case EMLX_BFLOAT16: *(uint16_t *)p = emlx__f64_to_bf16(v); break;
  case EMLX_FLOAT32: *(float *)p = (float)v; break;
  case EMLX_FLOAT64: *(double *)p = v; break;
  case EMLX_COMPLEX64:
    ((float *)p)[0] = (float)v;
    ((float *)p)[1] = 0.0f;
    break;
  case EMLX_COMPLEX128:
    ((double *)p)[0] = v;
    ((double *)p)[1] = 0.0;
    break;
  default: break;
  }
}

void emlx__store_i64(void *p, emlx_dtype dtype, int64_t v) {
  switch (dtype) {
  case EMLX_BOOL: *(uint8_t *)p = v != 0; break;
  case EMLX_UINT8:
  case EMLX_INT8: *(uint8_t *)p = (uint8_t)(uint64_t)v; break;
  case EMLX_UINT16:
  case EMLX_INT16: *(uint16_t *)p = (uint16_t)(uint64_t)v; break;
  case EMLX_UINT32:
  case EMLX_INT32: *(uint32_t *)p = (uint32_t)(uint64_t)v; break;
  case EMLX_UINT64:
  case EMLX_INT64: *(uint64_t *)p = (uint64_t)v; break;
  default: emlx__store_f64(p, dtype, (double)v); break;
  }
}

/* f64 to f16/bf16 rounded once, correctly: round to f32 with the sticky
 * information kept in the last bit (round-to-odd), then to the short format.
 * Round-to-odd into a format with at least two more bits makes the second
 * rounding exact (Boldo & Melquiond). */
static float f64_to_f32_odd(double v) {
  float f = (float)v; /* round to nearest */
  if (f != f || (double)f == v || f - f != 0.0f) return f; /* NaN, exact, or Inf */
  uint32_t u = f32_bits(f);
  /* If nearest rounding went away from zero, step back toward zero. */
  if (fabs((double)f) > fabs(v)) u -= 1;
  return bits_f32(u | 1u);
}

uint16_t emlx__f64_to_f16(double v) { return emlx_f32_to_f16(f64_to_f32_odd(v)); }
uint16_t emlx__f64_to_bf16(double v) { return emlx_f32_to_bf16(f64_to_f32_odd(v)); }
