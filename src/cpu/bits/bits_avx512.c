/* bits_avx512.c — bit counting with AVX-512 VPOPCNTDQ (32/64-bit popcount),
 * BITALG (8/16-bit popcount) and CD (32/64-bit lzcnt; 8/16-bit lanes are
 * widened to 32). These extensions are not part of the avx512 level that
 * isa.c checks, so the functions carry their own target attribute and
 * bits.c uses this table only where the CPU reports all three. Contiguous
 * inputs run 512-bit blocks and one masked tail; strided ones run the
 * portable loops (bits_body.h). */
#include <immintrin.h>

#define BITS_NO_TABLE
#include "bits_body.h"

#define VTARGET                                                                                    \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx512bitalg,avx512cd")))

static inline uint64_t tail_mask(int64_t k) { return k >= 64 ? ~0ull : (1ull << k) - 1; }

VTARGET static void vpop_8(const void *in, int64_t s, void *out, int64_t n) {
  if (s != 1) {
    pop_8(in, s, out, n);
    return;
  }
  const uint8_t *x = (const uint8_t *)in;
  uint8_t *y = (uint8_t *)out;
  int64_t i = 0;
  for (; i + 64 <= n; i += 64)
    _mm512_storeu_si512(y + i, _mm512_popcnt_epi8(_mm512_loadu_si512(x + i)));
  if (i < n) {
    __mmask64 m = tail_mask(n - i);
    _mm512_mask_storeu_epi8(y + i, m, _mm512_popcnt_epi8(_mm512_maskz_loadu_epi8(m, x + i)));
  }
}

VTARGET static void vpop_16(const void *in, int64_t s, void *out, int64_t n) {
  if (s != 1) {
    pop_16(in, s, out, n);
    return;
  }
  const uint16_t *x = (const uint16_t *)in;
  uint16_t *y = (uint16_t *)out;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    _mm512_storeu_si512(y + i, _mm512_popcnt_epi16(_mm512_loadu_si512(x + i)));
  if (i < n) {
    __mmask32 m = (__mmask32)tail_mask(n - i);
    _mm512_mask_storeu_epi16(y + i, m, _mm512_popcnt_epi16(_mm512_maskz_loadu_epi16(m, x + i)));
  }
}

VTARGET static void vpop_32(const void *in, int64_t s, void *out, int64_t n) {
  if (s != 1) {
    pop_32(in, s, out, n);
    return;
  }
  const uint32_t *x = (const uint32_t *)in;
  uint32_t *y = (uint32_t *)out;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_si512(y + i, _mm512_popcnt_epi32(_mm512_loadu_si512(x + i)));
  if (i < n) {
    __mmask16 m = (__mmask16)tail_mask(n - i);
    _mm512_mask_storeu_epi32(y + i, m, _mm512_popcnt_epi32(_mm512_maskz_loadu_epi32(m, x + i)));
  }
}

VTARGET static void vpop_64(const void *in, int64_t s, void *out, int64_t n) {
  if (s != 1) {
    pop_64(in, s, out, n);
    return;
  }
  const uint64_t *x = (const uint64_t *)in;
  uint64_t *y = (uint64_t *)out;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm512_storeu_si512(y + i, _mm512_popcnt_epi64(_mm512_loadu_si512(x + i)));
  if (i < n) {
    __mmask8 m = (__mmask8)tail_mask(n - i);
    _mm512_mask_storeu_epi64(y + i, m, _mm512_popcnt_epi64(_mm512_maskz_loadu_epi64(m, x + i)));
  }
}

/* 8- and 16-bit lanes: zero-extend 16 of them to 32 bits, count there and
 * subtract the 24 or 16 extra leading zeros. */
VTARGET static void vclz_8(const void *in, int64_t s, void *out, int64_t n) {
  if (s != 1) {
    clz_8(in, s, out, n);
    return;
  }
  const uint8_t *x = (const uint8_t *)in;
  uint8_t *y = (uint8_t *)out;
  const __m512i extra = _mm512_set1_epi32(24);
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 m = (__mmask16)tail_mask(n - i);
    __m512i v = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, x + i));
    __m512i c = _mm512_sub_epi32(_mm512_lzcnt_epi32(v), extra);
    _mm_mask_storeu_epi8(y + i, m, _mm512_cvtepi32_epi8(c));
  }
}

VTARGET static void vclz_16(const void *in, int64_t s, void *out, int64_t n) {
  if (s != 1) {
    clz_16(in, s, out, n);
    return;
  }
  const uint16_t *x = (const uint16_t *)in;
  uint16_t *y = (uint16_t *)out;
  const __m512i extra = _mm512_set1_epi32(16);
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 m = (__mmask16)tail_mask(n - i);
    __m512i v = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, x + i));
    __m512i c = _mm512_sub_epi32(_mm512_lzcnt_epi32(v), extra);
    _mm256_mask_storeu_epi16(y + i, m, _mm512_cvtepi32_epi16(c));
  }
}

VTARGET static void vclz_32(const void *in, int64_t s, void *out, int64_t n) {
  if (s != 1) {
    clz_32(in, s, out, n);
    return;
  }
  const uint32_t *x = (const uint32_t *)in;
  uint32_t *y = (uint32_t *)out;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_si512(y + i, _mm512_lzcnt_epi32(_mm512_loadu_si512(x + i)));
  if (i < n) {
    __mmask16 m = (__mmask16)tail_mask(n - i);
    _mm512_mask_storeu_epi32(y + i, m, _mm512_lzcnt_epi32(_mm512_maskz_loadu_epi32(m, x + i)));
  }
}

VTARGET static void vclz_64(const void *in, int64_t s, void *out, int64_t n) {
  if (s != 1) {
    clz_64(in, s, out, n);
    return;
  }
  const uint64_t *x = (const uint64_t *)in;
  uint64_t *y = (uint64_t *)out;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm512_storeu_si512(y + i, _mm512_lzcnt_epi64(_mm512_loadu_si512(x + i)));
  if (i < n) {
    __mmask8 m = (__mmask8)tail_mask(n - i);
    _mm512_mask_storeu_epi64(y + i, m, _mm512_lzcnt_epi64(_mm512_maskz_loadu_epi64(m, x + i)));
  }
}

const emlx_cpu_bits_table emlx_cpu_bits_avx512 = {
    .loop = {[EMLX_BITS_CLZ] = {vclz_8, vclz_16, vclz_32, vclz_64},
             [EMLX_BITS_POPCOUNT] = {vpop_8, vpop_16, vpop_32, vpop_64}}};
