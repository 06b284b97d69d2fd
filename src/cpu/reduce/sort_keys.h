/* sort_keys.h — order-preserving unsigned keys of every dtype, shared by
 * sort/argsort (radix sorting on the keys) and argmax/argmin (comparing
 * keys).
 *
 * The key of a value is an unsigned integer of the dtype's width whose
 * unsigned order is the value order of emlx/reduce.h: signed integers flip
 * the sign bit; floats map negative values to their complement and set the
 * sign bit of the others; -0.0 takes +0.0's key (they are equal) and every
 * NaN takes the all-ones key, the largest, which no number reaches (+inf is
 * 0xFF80... for f32). complex64 is the pair (key(re), key(im)) in a 64-bit
 * key, real part high. For numbers the transform is invertible (sort turns
 * keys back into values when a row holds neither -0.0 nor NaN). */
#ifndef EMLX_CPU_SORT_KEYS_H
#define EMLX_CPU_SORT_KEYS_H

#include <stdint.h>
#include <string.h>

static inline uint8_t emlx_key_s8(uint8_t bits) { return (uint8_t)(bits ^ 0x80u); }
static inline uint16_t emlx_key_s16(uint16_t bits) { return (uint16_t)(bits ^ 0x8000u); }
static inline uint32_t emlx_key_s32(uint32_t bits) { return bits ^ 0x80000000u; }
static inline uint64_t emlx_key_s64(uint64_t bits) { return bits ^ (UINT64_C(1) << 63); }

static inline uint16_t emlx_key_h16(uint16_t h, uint16_t inf_bits) {
  if ((h & 0x7FFFu) > inf_bits)
    return 0xFFFFu; /* NaN */
  if (h == 0x8000u)
    h = 0; /* -0.0 */
  return (h & 0x8000u) ? (uint16_t)~h : (uint16_t)(h | 0x8000u);
}
static inline uint16_t emlx_key_f16(uint16_t h) { return emlx_key_h16(h, 0x7C00u); }
static inline uint16_t emlx_key_bf16(uint16_t h) { return emlx_key_h16(h, 0x7F80u); }
/* Written as selects (no branches) so that gather loops vectorise. */
static inline uint32_t emlx_key_f32(uint32_t u) {
  uint32_t k = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  k = u == 0x80000000u ? 0x80000000u : k;
  return (u & 0x7FFFFFFFu) > 0x7F800000u ? 0xFFFFFFFFu : k;
}
static inline uint64_t emlx_key_f64(uint64_t u) {
  const uint64_t sign = UINT64_C(1) << 63;
  uint64_t k = (u & sign) ? ~u : (u | sign);
  k = u == sign ? sign : k;
  return (u & ~sign) > UINT64_C(0x7FF0000000000000) ? UINT64_MAX : k;
}
static inline uint64_t emlx_key_c64(uint64_t bits) { /* little-endian: re low, im high */
  return ((uint64_t)emlx_key_f32((uint32_t)bits) << 32) | emlx_key_f32((uint32_t)(bits >> 32));
}

/* Inverses for numbers (not NaN; -0.0 comes back as +0.0). */
static inline uint16_t emlx_unkey_h16(uint16_t k) {
  return (k & 0x8000u) ? (uint16_t)(k ^ 0x8000u) : (uint16_t)~k;
}
static inline uint32_t emlx_unkey_f32(uint32_t k) {
  return (k & 0x80000000u) ? k ^ 0x80000000u : ~k;
}
static inline uint64_t emlx_unkey_f64(uint64_t k) {
  const uint64_t sign = UINT64_C(1) << 63;
  return (k & sign) ? k ^ sign : ~k;
}
static inline uint64_t emlx_unkey_c64(uint64_t k) {
  return (uint64_t)emlx_unkey_f32((uint32_t)(k >> 32)) |
         ((uint64_t)emlx_unkey_f32((uint32_t)k) << 32);
}

#endif
