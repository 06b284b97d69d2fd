/* matmul_lowp_avx2.c — the AVX2 + FMA + F16C micro-kernel for f16 and bf16
 * products (driver: matmul_lowp.c).
 *
 * "avx2-fma": f16 or bf16 widened to f32 while packing (panels only, never
 * a whole operand), a 6 x 16 block of f32 FMAs (12 accumulators, two B
 * vectors and one broadcast: 15 of the 16 ymm registers), rounded once on
 * the store. f16 widens and rounds with F16C; bf16 widens by a shift and
 * rounds to nearest even in integer lanes (NaN stays a quiet NaN), the
 * values of emlx_cv_f32_to_bf16. Both operands may have any strides; B
 * with unit column stride (row-major) and B with unit row stride (x @ W^T)
 * are packed with vector loads, the rest element by element. */
#include <immintrin.h>
#include <string.h>

#include "convert.h"
#include "matmul.h"
#include "simd/transpose_avx2.h"

#define MR 6
#define NR 16
#define KC 256 /* values of k per micro_part call */

static inline uint16_t load_u16(const void *base, int64_t idx) {
  uint16_t h;
  memcpy(&h, (const char *)base + idx * 2, 2);
  return h;
}

static inline float widen1(uint16_t h, emlx_dtype dt) {
  return dt == EMLX_FLOAT16 ? emlx_cv_f16_to_f32(h) : emlx_cv_bf16_to_f32(h);
}

/* Eight 16-bit values to eight floats. */
static inline __m256 widen8(__m128i h, emlx_dtype dt) {
  if (dt == EMLX_FLOAT16)
    return _mm256_cvtph_ps(h);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

/* A as [k][MR] floats, so the micro-kernel broadcasts from one pointer. */
static void pack_a(const emlx_gemm *g, int64_t i0, int64_t kpad, void *dst) {
  float *d = dst;
  emlx_dtype dt = g->dtype;
  if (g->a_rs == 1 && g->a_cs != 1 && i0 + MR <= g->M) {
    /* A transposed: the MR rows at one k are adjacent. */
    const uint16_t *src = (const uint16_t *)g->a + i0;
    int64_t k = 0;
    for (; k < g->K; k++) {
      uint16_t h[8] = {0};
      memcpy(h, src + k * g->a_cs, MR * 2);
      float row[8];
      _mm256_storeu_ps(row, widen8(_mm_loadu_si128((const __m128i *)h), dt));
      memcpy(d + k * MR, row, MR * sizeof(float));
    }
    for (; k < kpad; k++)
      memset(d + k * MR, 0, MR * sizeof(float));
    return;
  }
  for (int r = 0; r < MR; r++) {
    int64_t i = i0 + r, k = 0;
    if (i < g->M) {
      const uint16_t *src = (const uint16_t *)g->a + i * g->a_rs;
      if (g->a_cs == 1) {
        float row[8];
        for (; k + 8 <= g->K; k += 8) {
          _mm256_storeu_ps(row, widen8(_mm_loadu_si128((const __m128i *)(src + k)), dt));
          for (int t = 0; t < 8; t++)
            d[(k + t) * MR + r] = row[t];
        }
      }
      for (; k < g->K; k++)
        d[k * MR + r] = widen1(load_u16(src, k * g->a_cs), dt);
    }
    for (; k < kpad; k++)
      d[k * MR + r] = 0.0f;
  }
}

/* B as [k][NR] floats over rows [k0, k1) of the padded K. */
static void pack_b(const emlx_gemm *g, int64_t j0, int64_t k0, int64_t k1, void *dst) {
  emlx_dtype dt = g->dtype;
  int64_t nv = g->N - j0 < NR ? g->N - j0 : NR;
  int64_t k = k0;
  if (g->b_rs == 1 && g->b_cs != 1) {
    /* B transposed (x @ W^T): each column runs along k. Eight k of eight
     * columns at a time, transposed in registers. */
    for (; k + 8 <= k1 && k + 8 <= g->K; k += 8) {
      float *d = (float *)dst + k * NR;
      for (int half = 0; half < 2; half++) {
        __m256 r[8];
        for (int c = 0; c < 8; c++) {
          int64_t j = half * 8 + c;
          r[c] = j < nv ? widen8(_mm_loadu_si128((const __m128i *)((const uint16_t *)g->b + k +
                                                                   (j0 + j) * g->b_cs)),
                                 dt)
                        : _mm256_setzero_ps();
        }
        vl_transpose8_ps(r);
        for (int t = 0; t < 8; t++)
          _mm256_storeu_ps(d + t * NR + half * 8, r[t]);
      }
    }
  }
  for (; k < k1; k++) {
    float *d = (float *)dst + k * NR;
    if (k >= g->K) {
      _mm256_storeu_ps(d, _mm256_setzero_ps());
      _mm256_storeu_ps(d + 8, _mm256_setzero_ps());
      continue;
    }
    const uint16_t *row = (const uint16_t *)g->b + k * g->b_rs;
    if (g->b_cs == 1) {
      __m256i x;
      if (nv == NR) {
        x = _mm256_loadu_si256((const __m256i *)(row + j0));
      } else {
        uint16_t t[NR] = {0};
        memcpy(t, row + j0, (size_t)nv * 2);
        x = _mm256_loadu_si256((const __m256i *)t);
      }
      _mm256_storeu_ps(d, widen8(_mm256_castsi256_si128(x), dt));
      _mm256_storeu_ps(d + 8, widen8(_mm256_extracti128_si256(x, 1), dt));
      continue;
    }
    for (int64_t c = 0; c < NR; c++)
      d[c] = c < nv ? widen1(load_u16(row, (j0 + c) * g->b_cs), dt) : 0.0f;
  }
}

/* f32 -> bf16, round to nearest even, NaN quieted (as emlx_cv_f32_to_bf16),
 * in the low 16 bits of each 32-bit lane. */
static inline __m256i to_bf16_lanes(__m256 v) {
  __m256i b = _mm256_castps_si256(v);
  __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
  __m256i r = _mm256_add_epi32(b, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), lsb));
  __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  __m256i q = _mm256_or_si256(b, _mm256_set1_epi32(0x00400000));
  return _mm256_srli_epi32(_mm256_blendv_epi8(r, q, nan), 16);
}

/* Rounds and stores one row of 16 accumulators (nv valid). */
static inline void store_row(uint16_t *c, __m256 lo, __m256 hi, int nv, emlx_dtype dt) {
  __m256i h;
  if (dt == EMLX_FLOAT16) {
    __m128i l = _mm256_cvtps_ph(lo, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m128i u = _mm256_cvtps_ph(hi, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    h = _mm256_set_m128i(u, l);
  } else {
    /* packus interleaves 128-bit halves: lo0-3 hi0-3 lo4-7 hi4-7. */
    h = _mm256_permute4x64_epi64(_mm256_packus_epi32(to_bf16_lanes(lo), to_bf16_lanes(hi)), 0xD8);
  }
  if (nv == NR) {
    _mm256_storeu_si256((__m256i *)c, h);
  } else {
    uint16_t t[NR];
    _mm256_storeu_si256((__m256i *)t, h);
    memcpy(c, t, (size_t)nv * 2);
  }
}

/* acc += the steps [k0, k1) of the packed panels; one line of pf is
 * prefetched into L2 every few steps, spread over the range. The
 * accumulators are named locals inside the loop (GCC keeps an array of
 * them in memory, storing all twelve every step). */
static inline void steps(int64_t k0, int64_t k1, const float *a, const float *b, __m256 acc[MR][2],
                         const char *pf, int64_t pf_bytes) {
  int64_t lines = pf ? pf_bytes / 64 : 0, n = k1 - k0;
  int64_t pf_step = lines > 0 ? (n + lines - 1) / lines : n + 1;
  if (pf_step < 1)
    pf_step = 1;
  __m256 c00 = acc[0][0], c01 = acc[0][1], c10 = acc[1][0], c11 = acc[1][1];
  __m256 c20 = acc[2][0], c21 = acc[2][1], c30 = acc[3][0], c31 = acc[3][1];
  __m256 c40 = acc[4][0], c41 = acc[4][1], c50 = acc[5][0], c51 = acc[5][1];
  int64_t k = k0, line = 0;
  while (k < k1) {
    int64_t kend = k + pf_step < k1 ? k + pf_step : k1;
    if (line < lines)
      _mm_prefetch(pf + 64 * line++, _MM_HINT_T1);
    for (; k < kend; k++) {
      const float *ak = a + k * MR;
      __m256 b0 = _mm256_loadu_ps(b + k * NR), b1 = _mm256_loadu_ps(b + k * NR + 8), x;
#define STEP(R, C0, C1)                                                                            \
  x = _mm256_broadcast_ss(ak + (R));                                                               \
  C0 = _mm256_fmadd_ps(x, b0, C0);                                                                 \
  C1 = _mm256_fmadd_ps(x, b1, C1);
      STEP(0, c00, c01)
      STEP(1, c10, c11)
      STEP(2, c20, c21)
      STEP(3, c30, c31)
      STEP(4, c40, c41)
      STEP(5, c50, c51)
#undef STEP
    }
  }
  acc[0][0] = c00, acc[0][1] = c01, acc[1][0] = c10, acc[1][1] = c11;
  acc[2][0] = c20, acc[2][1] = c21, acc[3][0] = c30, acc[3][1] = c31;
  acc[4][0] = c40, acc[4][1] = c41, acc[5][0] = c50, acc[5][1] = c51;
}

static void micro(int64_t kpad, const void *ap, const void *bp, void *c, int64_t ldc, int mv,
                  int nv, emlx_dtype dt, const void *pf, int64_t pf_bytes) {
  __m256 acc[MR][2];
  for (int r = 0; r < MR; r++)
    acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  steps(0, kpad, ap, bp, acc, pf, pf_bytes);
  uint16_t *out = c;
  for (int r = 0; r < mv; r++)
    store_row(out + r * ldc, acc[r][0], acc[r][1], nv, dt);
}

/* Past KC values of k the driver walks K in chunks: a 16 KiB chunk of the B
 * panel then stays in L1 while every A micro-panel of the row block passes
 * it (the whole-K panel is 128 KiB at K = 2048, read from L2 each time). */
static void micro_part(int64_t k0, int64_t k1, const void *ap, const void *bp, float *accbuf,
                       bool first, bool last, void *c, int64_t ldc, int mv, int nv, emlx_dtype dt,
                       const void *pf, int64_t pf_bytes) {
  __m256 acc[MR][2];
  for (int r = 0; r < MR; r++) {
    acc[r][0] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(accbuf + r * NR);
    acc[r][1] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(accbuf + r * NR + 8);
  }
  steps(k0, k1, ap, bp, acc, pf, pf_bytes);
  if (last) {
    uint16_t *out = c;
    for (int r = 0; r < mv; r++)
      store_row(out + r * ldc, acc[r][0], acc[r][1], nv, dt);
    return;
  }
  for (int r = 0; r < MR; r++) {
    _mm256_storeu_ps(accbuf + r * NR, acc[r][0]);
    _mm256_storeu_ps(accbuf + r * NR + 8, acc[r][1]);
  }
}

static const emlx_mm_lowp_kernel kernel = {.name = "avx2-fma",
                                           .mr = MR,
                                           .nr = NR,
                                           .ku = 1,
                                           .a_pad = 0,
                                           .a_panel_elt = 4,
                                           .b_panel_elt = 4,
                                           .pack_a = pack_a,
                                           .pack_b = pack_b,
                                           .micro = micro,
                                           .micro_part = micro_part,
                                           .kc = KC};

/* ---- widening and rounding for the sgemm route (matmul_lowp_blas.c) ---- */

void emlx_mm_widen_avx2(const void *src, int64_t n, int64_t stride, float *dst, emlx_dtype dt) {
  const uint16_t *s = src;
  int64_t i = 0;
  if (stride == 1)
    for (; i + 16 <= n; i += 16) {
      __m256i x = _mm256_loadu_si256((const __m256i *)(s + i));
      _mm256_storeu_ps(dst + i, widen8(_mm256_castsi256_si128(x), dt));
      _mm256_storeu_ps(dst + i + 8, widen8(_mm256_extracti128_si256(x, 1), dt));
    }
  for (; i < n; i++)
    dst[i] = widen1(load_u16(s, i * stride), dt);
}

void emlx_mm_narrow_avx2(const float *src, int64_t n, void *dst, emlx_dtype dt) {
  uint16_t *d = dst;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    store_row(d + i, _mm256_loadu_ps(src + i), _mm256_loadu_ps(src + i + 8), NR, dt);
  if (i < n) {
    float t[NR] = {0};
    memcpy(t, src + i, (size_t)(n - i) * sizeof(float));
    store_row(d + i, _mm256_loadu_ps(t), _mm256_loadu_ps(t + 8), (int)(n - i), dt);
  }
}

const emlx_mm_lowp_kernel *emlx_mm_lowp_avx2(emlx_dtype dtype) {
  (void)dtype;
  return &kernel;
}
