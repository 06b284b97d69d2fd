/* matmul_pack_avx512.h — packing of f16/bf16 operands for the AVX-512 and
 * AMX micro-kernels (included by matmul_lowp_avx512.c and
 * matmul_amx_avx512.c only).
 *
 * For AMX, A is packed row-major: MR rows of ld = kpad + pad elements, zero
 * beyond K and beyond M, tile-loaded with that row stride; the pad keeps the
 * 16 rows of a tile off one L1 set when kpad is a multiple of 2K. (The
 * broadcast kernels of matmul_lowp_avx512.c pack A k-major instead.)
 * B is packed in "pairs": for each pair of k (2p, 2p+1) and each column j of
 * a 32-column panel, the two values side by side (the VNNI layout that
 * vdpbf16ps and AMX read), zero beyond K and beyond N. */
#ifndef EMLX_MATMUL_PACK_AVX512_H
#define EMLX_MATMUL_PACK_AVX512_H

#include <immintrin.h>
#include <string.h>

#include "convert.h"
#include "matmul.h"

static inline uint16_t mp_load_u16(const void *base, int64_t idx) {
  uint16_t h;
  memcpy(&h, (const char *)base + idx * 2, 2);
  return h;
}

/* Rows [i0, i0 + mr) of A as raw 16-bit values into dst (mr x ld). */
static inline void mp_pack_a_u16(const emlx_gemm *g, int64_t i0, int mr, int64_t kpad, int64_t ld,
                                 uint16_t *dst) {
  for (int r = 0; r < mr; r++) {
    uint16_t *d = dst + r * ld;
    int64_t i = i0 + r;
    if (i >= g->M) {
      memset(d, 0, (size_t)ld * 2);
      continue;
    }
    const uint16_t *src = (const uint16_t *)g->a + i * g->a_rs;
    if (g->a_cs == 1) {
      memcpy(d, src, (size_t)g->K * 2);
    } else {
      for (int64_t k = 0; k < g->K; k++)
        d[k] = mp_load_u16(src, k * g->a_cs);
    }
    memset(d + g->K, 0, (size_t)(ld - g->K) * 2);
  }
  (void)kpad;
}

/* 16-bit lanes interleaved: out0 = (x0, y0, x1, y1, ... x15, y15), out1 the
 * same for lanes 16..31. */
static inline void mp_interleave16(__m512i x, __m512i y, __m512i *out0, __m512i *out1) {
  const __m512i lo = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8,
                                      39, 7, 38, 6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
  const __m512i hi =
      _mm512_set_epi16(63, 31, 62, 30, 61, 29, 60, 28, 59, 27, 58, 26, 57, 25, 56, 24, 55, 23, 54,
                       22, 53, 21, 52, 20, 51, 19, 50, 18, 49, 17, 48, 16);
  *out0 = _mm512_permutex2var_epi16(x, lo, y);
  *out1 = _mm512_permutex2var_epi16(x, hi, y);
}

/* For B with unit column stride: the pairs (2p, 2p+1) of columns
 * [j0, j0 + 16) in o0 and [j0 + 16, j0 + 32) in o1 (zero past K and N). */
static inline void mp_pair_vectors(const emlx_gemm *g, int64_t p, int64_t j0, __m512i *o0,
                                   __m512i *o1) {
  int64_t k0 = 2 * p, nv = g->N - j0 < 32 ? g->N - j0 : 32;
  __mmask32 m = nv >= 32 ? 0xFFFFFFFFu : (__mmask32)((1u << nv) - 1u);
  const uint16_t *r0 = (const uint16_t *)g->b + k0 * g->b_rs + j0;
  __m512i x = k0 < g->K ? _mm512_maskz_loadu_epi16(m, r0) : _mm512_setzero_si512();
  __m512i y = k0 + 1 < g->K ? _mm512_maskz_loadu_epi16(m, r0 + g->b_rs) : _mm512_setzero_si512();
  mp_interleave16(x, y, o0, o1);
}

/* The pairs (2p, 2p+1) of columns [j0, j0 + 32) of B: 64 values, column
 * major within the pair, into out (32 x u32). */
static inline void mp_pair_row(const emlx_gemm *g, int64_t p, int64_t j0, uint32_t *out) {
  int64_t k0 = 2 * p, nv = g->N - j0 < 32 ? g->N - j0 : 32;
  if (g->b_cs == 1) {
    __m512i o0, o1;
    mp_pair_vectors(g, p, j0, &o0, &o1);
    _mm512_storeu_si512(out, o0);
    _mm512_storeu_si512(out + 16, o1);
    return;
  }
  for (int64_t c = 0; c < 32; c++) {
    uint32_t lo = 0, hi = 0;
    if (c < nv) {
      const char *col = (const char *)g->b + (j0 + c) * g->b_cs * 2;
      if (k0 < g->K)
        lo = mp_load_u16(col, k0 * g->b_rs);
      if (k0 + 1 < g->K)
        hi = mp_load_u16(col, (k0 + 1) * g->b_rs);
    }
    out[c] = lo | hi << 16;
  }
}

/* f32 -> bf16 with round to nearest even in AVX-512F only (for CPUs without
 * AVX-512 BF16); NaN stays a quiet NaN. */
static inline __m256i mp_f32_to_bf16_f(__m512 v) {
  __m512i b = _mm512_castps_si512(v);
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_add_epi32(b, _mm512_add_epi32(_mm512_set1_epi32(0x7FFF), lsb));
  __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(b, _mm512_set1_epi32(0x00400000)));
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16));
}

#endif
