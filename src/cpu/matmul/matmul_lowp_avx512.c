/* matmul_lowp_avx512.c — AVX-512 micro-kernels for f16 and bf16 products
 * (driver: matmul_lowp.c).
 *
 * - "avx512-fma": f16 or bf16 widened to f32 while packing (panels only),
 *   a 12 x 32 block of f32 FMAs (24 accumulators), rounded once on the store.
 * - "avx512-bf16": bf16 pairs fed to vdpbf16ps, which multiplies two bf16
 *   pairs and adds both products to an f32 lane: the same 12 x 32 block, half
 *   the instructions per multiply-add and no widening. Used only when CPUID
 *   reports AVX512_BF16. */
#include "matmul_pack_avx512.h"

#define MR 12
#define NR 32

/* ---- f32 FMA kernel (f16 and bf16) --------------------------------------- */

static inline __m512 widen16(__m256i h, emlx_dtype dt) {
  if (dt == EMLX_FLOAT16)
    return _mm512_cvtph_ps(h);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* A as [k][MR] floats: one pointer walks every row's value at k, so the
 * micro-kernel's broadcasts need no per-row address registers. */
static void fma_pack_a(const emlx_gemm *g, int64_t i0, int64_t kpad, void *dst) {
  float *d = dst;
  float row[16];
  for (int r = 0; r < MR; r++) {
    int64_t i = i0 + r, k = 0;
    if (i < g->M) {
      const uint16_t *src = (const uint16_t *)g->a + i * g->a_rs;
      if (g->a_cs == 1) {
        for (; k + 16 <= g->K; k += 16) {
          _mm512_storeu_ps(row, widen16(_mm256_loadu_si256((const __m256i *)(src + k)), g->dtype));
          for (int t = 0; t < 16; t++)
            d[(k + t) * MR + r] = row[t];
        }
      }
      for (; k < g->K; k++) {
        uint16_t h = mp_load_u16(src, k * g->a_cs);
        d[k * MR + r] = g->dtype == EMLX_FLOAT16 ? emlx_cv_f16_to_f32(h) : emlx_cv_bf16_to_f32(h);
      }
    }
    for (; k < kpad; k++)
      d[k * MR + r] = 0.0f;
  }
}

static void fma_pack_b(const emlx_gemm *g, int64_t j0, int64_t k0, int64_t k1, void *dst) {
  float *d = (float *)dst + k0 * NR;
  int64_t nv = g->N - j0 < NR ? g->N - j0 : NR;
  for (int64_t k = k0; k < k1; k++, d += NR) {
    if (k >= g->K) {
      _mm512_storeu_ps(d, _mm512_setzero_ps());
      _mm512_storeu_ps(d + 16, _mm512_setzero_ps());
      continue;
    }
    const uint16_t *row = (const uint16_t *)g->b + k * g->b_rs;
    if (g->b_cs == 1) {
      __mmask32 m = nv >= 32 ? 0xFFFFFFFFu : (__mmask32)((1u << nv) - 1u);
      __m512i x = _mm512_maskz_loadu_epi16(m, row + j0);
      _mm512_storeu_ps(d, widen16(_mm512_castsi512_si256(x), g->dtype));
      _mm512_storeu_ps(d + 16, widen16(_mm512_extracti64x4_epi64(x, 1), g->dtype));
      continue;
    }
    for (int64_t c = 0; c < NR; c++) {
      float v = 0.0f;
      if (c < nv) {
        uint16_t h = mp_load_u16(row, (j0 + c) * g->b_cs);
        v = g->dtype == EMLX_FLOAT16 ? emlx_cv_f16_to_f32(h) : emlx_cv_bf16_to_f32(h);
      }
      d[c] = v;
    }
  }
}

/* Rounds and stores one row of 32 accumulators (nv valid). */
static inline void store_row(uint16_t *c, __m512 lo, __m512 hi, int nv, emlx_dtype dt,
                             bool native_bf16) {
  __m256i l, h;
  if (dt == EMLX_FLOAT16) {
    l = _mm512_cvtps_ph(lo, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    h = _mm512_cvtps_ph(hi, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  } else if (native_bf16) {
    l = (__m256i)_mm512_cvtneps_pbh(lo);
    h = (__m256i)_mm512_cvtneps_pbh(hi);
  } else {
    l = mp_f32_to_bf16_f(lo);
    h = mp_f32_to_bf16_f(hi);
  }
  __mmask16 m0 = nv >= 16 ? 0xFFFF : (__mmask16)((1u << nv) - 1u);
  __mmask16 m1 = nv <= 16 ? 0 : nv >= 32 ? 0xFFFF : (__mmask16)((1u << (nv - 16)) - 1u);
  _mm256_mask_storeu_epi16(c, m0, l);
  if (m1)
    _mm256_mask_storeu_epi16(c + 16, m1, h);
}

static void fma_micro(int64_t kpad, const void *ap, const void *bp, void *c, int64_t ldc, int mv,
                      int nv, emlx_dtype dt, const void *pf, int64_t pf_bytes) {
  (void)pf;
  (void)pf_bytes;
  const float *a = ap, *b = bp;
  __m512 acc[MR][2];
  for (int r = 0; r < MR; r++)
    acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kpad; k++) {
    __m512 b0 = _mm512_loadu_ps(b + k * NR), b1 = _mm512_loadu_ps(b + k * NR + 16);
#pragma GCC unroll 12
    for (int r = 0; r < MR; r++) {
      __m512 x = _mm512_set1_ps(a[k * MR + r]);
      acc[r][0] = _mm512_fmadd_ps(x, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(x, b1, acc[r][1]);
    }
  }
  uint16_t *out = c;
  for (int r = 0; r < mv; r++)
    store_row(out + r * ldc, acc[r][0], acc[r][1], nv, dt, false);
}

static const emlx_mm_lowp_kernel fma_kernel = {
    .name = "avx512-fma",
    .mr = MR,
    .nr = NR,
    .ku = 1,
    .a_pad = 0,
    .a_panel_elt = 4,
    .b_panel_elt = 4,
    .pack_a = fma_pack_a,
    .pack_b = fma_pack_b,
    .micro = fma_micro};

const emlx_mm_lowp_kernel *emlx_mm_lowp_avx512(emlx_dtype dtype) {
  (void)dtype;
  return &fma_kernel;
}

/* ---- vdpbf16ps kernel (bf16) --------------------------------------------- */

/* A as [pair][MR] 32-bit pairs (k = 2p, 2p + 1 of each row side by side). */
static void bf16_pack_a(const emlx_gemm *g, int64_t i0, int64_t kpad, void *dst) {
  uint32_t *d = dst;
  for (int r = 0; r < MR; r++) {
    int64_t i = i0 + r, p = 0;
    if (i < g->M) {
      const uint16_t *src = (const uint16_t *)g->a + i * g->a_rs;
      if (g->a_cs == 1)
        for (; 2 * p + 1 < g->K; p++)
          memcpy(&d[p * MR + r], src + 2 * p, 4);
      for (; 2 * p < g->K; p++) {
        uint32_t lo = mp_load_u16(src, 2 * p * g->a_cs);
        uint32_t hi = 2 * p + 1 < g->K ? mp_load_u16(src, (2 * p + 1) * g->a_cs) : 0;
        d[p * MR + r] = lo | hi << 16;
      }
    }
    for (; p < kpad / 2; p++)
      d[p * MR + r] = 0;
  }
}

static void bf16_pack_b(const emlx_gemm *g, int64_t j0, int64_t k0, int64_t k1, void *dst) {
  uint32_t *d = dst;
  for (int64_t p = k0 / 2; p < k1 / 2; p++)
    mp_pair_row(g, p, j0, d + p * NR);
}

static void bf16_micro(int64_t kpad, const void *ap, const void *bp, void *c, int64_t ldc, int mv,
                       int nv, emlx_dtype dt, const void *pf, int64_t pf_bytes) {
  (void)pf;
  (void)pf_bytes;
  const uint32_t *a = ap, *b = bp;
  __m512 acc[MR][2];
  for (int r = 0; r < MR; r++)
    acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kpad / 2; p++) {
    __m512bh b0 = (__m512bh)_mm512_loadu_si512(b + p * NR);
    __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + p * NR + 16);
#pragma GCC unroll 12
    for (int r = 0; r < MR; r++) {
      __m512bh x = (__m512bh)_mm512_set1_epi32((int)a[p * MR + r]);
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], x, b0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], x, b1);
    }
  }
  uint16_t *out = c;
  for (int r = 0; r < mv; r++)
    store_row(out + r * ldc, acc[r][0], acc[r][1], nv, dt, true);
}

static const emlx_mm_lowp_kernel bf16_kernel = {
    .name = "avx512-bf16",
    .mr = MR,
    .nr = NR,
    .ku = 2,
    .a_pad = 0,
    .a_panel_elt = 2,
    .b_panel_elt = 2,
    .pack_a = bf16_pack_a,
    .pack_b = bf16_pack_b,
    .micro = bf16_micro};

const emlx_mm_lowp_kernel *emlx_mm_lowp_avx512bf16(void) {
  return emlx_mm_cpu_has_avx512bf16() ? &bf16_kernel : NULL;
}
