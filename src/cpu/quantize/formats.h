/* quantize/formats.h — the scalar pieces of MLX's quantization formats, shared
 * by the quantize / dequantize kernels (quantize.c) and the reference
 * quantized matmul (qmm.c).
 *
 * MLX computes mx.quantize and mx.dequantize partly in the input's own dtype
 * (for the microscaled modes, as a graph of ops, each rounding its result to
 * float16 / bfloat16), so bit-exactness means rounding at the same steps:
 * qz_round() is MLX's float -> dtype -> float conversion (round to nearest
 * even; NaN becomes sign | 0x7D00 for float16 and 0x7FC0 for bfloat16, as
 * MLX's software half types do). Float -> integer conversions follow x86's
 * cvttss2si, which is what MLX's static_casts compile to: NaN and values out
 * of range give INT32_MIN, and a cast to uint8 keeps the low byte. */
#ifndef EMLX_CPU_QUANTIZE_FORMATS_H
#define EMLX_CPU_QUANTIZE_FORMATS_H

#include <math.h>
#include <stdint.h>

#include "convert.h"
#include "emlx.h"

/* MLX's FP4_LUT: e2m1 code -> value. */
static const float emlx_qz_fp4_lut[16] = {+0.0f, +0.5f, +1.0f, +1.5f, +2.0f, +3.0f, +4.0f, +6.0f,
                                          -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

static inline uint16_t emlx_qz_to_f16_bits(float x) {
  if (isnan(x))
    return (uint16_t)(((emlx_cv_f32_bits(x) >> 16) & 0x8000u) | 0x7D00u);
  return emlx_cv_f32_to_f16(x);
}

static inline uint16_t emlx_qz_to_bf16_bits(float x) {
  if (isnan(x))
    return 0x7FC0u;
  uint32_t u = emlx_cv_f32_bits(x);
  return (uint16_t)((u + ((u >> 16) & 1u) + 0x7FFFu) >> 16);
}

/* x rounded to dtype (float32, float16 or bfloat16) and back. */
static inline float emlx_qz_round(float x, emlx_dtype dt) {
  if (dt == EMLX_FLOAT16)
    return emlx_cv_f16_to_f32(emlx_qz_to_f16_bits(x));
  if (dt == EMLX_BFLOAT16)
    return emlx_cv_bf16_to_f32(emlx_qz_to_bf16_bits(x));
  return x;
}

static inline float emlx_qz_load(const void *p, int64_t i, emlx_dtype dt) {
  if (dt == EMLX_FLOAT16)
    return emlx_cv_f16_to_f32(((const uint16_t *)p)[i]);
  if (dt == EMLX_BFLOAT16)
    return emlx_cv_bf16_to_f32(((const uint16_t *)p)[i]);
  return ((const float *)p)[i];
}

static inline void emlx_qz_store(void *p, int64_t i, emlx_dtype dt, float x) {
  if (dt == EMLX_FLOAT16)
    ((uint16_t *)p)[i] = emlx_qz_to_f16_bits(x);
  else if (dt == EMLX_BFLOAT16)
    ((uint16_t *)p)[i] = emlx_qz_to_bf16_bits(x);
  else
    ((float *)p)[i] = x;
}

/* float -> int32 as cvttss2si: truncation; NaN and out of range: INT32_MIN. */
static inline int32_t emlx_qz_f2i(float x) {
  if (!(x > -2147483904.0f && x < 2147483648.0f))
    return INT32_MIN;
  return (int32_t)x;
}

/* MLX's ToFP8 (float -> e4m3, round to nearest even, saturating to 448;
 * NaN and Inf saturate too). */
static inline uint8_t emlx_qz_to_fp8(float f) {
  uint32_t fp8_max = 543u << 21, denorm_mask = 141u << 23;
  uint32_t bits = emlx_cv_f32_bits(f);
  uint32_t sign = bits & 0x80000000u;
  bits ^= sign;
  uint8_t result;
  if (bits >= fp8_max) {
    result = 0x7E;
  } else if (bits < (121u << 23)) {
    float low = emlx_cv_bits_f32(bits) + emlx_cv_bits_f32(denorm_mask);
    result = (uint8_t)(emlx_cv_f32_bits(low) - denorm_mask);
  } else {
    uint32_t mant_odd = (bits >> 20) & 1u;
    uint32_t high = bits + (((uint32_t)(7 - 127) << 23) + 0x7FFFFu) + mant_odd;
    result = (uint8_t)(high >> 20);
  }
  return (uint8_t)(result | (sign >> 24));
}

/* MLX's FromFP8 (e4m3 -> float; 0x7F / 0xFF read as +-480, not NaN). */
static inline float emlx_qz_from_fp8(uint8_t x) {
  float v = emlx_cv_f16_to_f32((uint16_t)((x & 127u) << 7)) * 256.0f;
  return (x & 128u) ? -v : v;
}

/* An e8m0 scale as MLX's kernels read it: 2^(s - 127) (s == 0: 2^-127;
 * s == 255: Inf). */
static inline float emlx_qz_e8m0(uint8_t s) {
  return emlx_cv_bf16_to_f32(s == 0 ? (uint16_t)0x40u : (uint16_t)((uint16_t)s << 7));
}

/* Code i (bits wide) of a little-endian bit stream. */
static inline uint32_t emlx_qz_code(const uint8_t *row, int64_t i, int bits) {
  int64_t o = i * bits;
  const uint8_t *p = row + (o >> 3);
  int sh = (int)(o & 7);
  uint32_t v = p[0];
  if (sh + bits > 8)
    v |= (uint32_t)p[1] << 8;
  return (v >> sh) & ((1u << bits) - 1u);
}

#endif
