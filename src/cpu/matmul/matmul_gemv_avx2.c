/* matmul_gemv_avx2.c — the f16/bf16 few-row products at AVX2 + FMA + F16C.
 *
 * x @ W^T (B's rows contiguous): matmul_gemv_body.h's dot products, with a
 * one-row block of its own (gv_dot_m1: 4 columns x 2 vectors of partial
 * sums, 8 independent FMA chains, where the body's 2-column block leaves a
 * decode step waiting on 2 chains' FMA latency).
 *
 * x @ W (B's columns contiguous): the walk below instead of the body's. A
 * column chunk's f32 accumulators (at most XW_ACC_FLOATS, all M rows, in
 * L1) are passed once per XW_KU rows of B, each pass reading 16 columns of
 * each of those rows (one 32-byte load a row) and folding them in with
 * XW_KU FMAs per accumulator vector, so B crosses memory once, in strips
 * of the whole chunk, and the accumulators' loads and stores are a
 * quarter of the body's one per row. bf16 rows are widened without a
 * shuffle: the 32-bit lanes of 16 bf16 values give the even columns
 * shifted left by 16 and the odd ones masked, so the accumulators hold
 * each 16 columns as 8 even then 8 odd, put back in order on the store.
 * The sum is the body's: C[m, j] = sum over k, in order, of one f32 FMA a
 * step, rounded once to the output dtype. */
#include <immintrin.h>
#include <math.h>

#include "convert.h"
#include "matmul.h"

#define GV_W 8
#define GV_JB 2 /* columns per dot block: 4 x 2 accumulators, 2 B vectors */
#define GV_VEC __m256
#define GV_ZERO() _mm256_setzero_ps()
#define GV_SET1(x) _mm256_set1_ps(x)
#define GV_LOAD(p) _mm256_loadu_ps(p)
#define GV_STORE(p, v) _mm256_storeu_ps((p), (v))
#define GV_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define GV_WIDEN_F16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define GV_WIDEN_BF16(p)                                                                           \
  _mm256_castsi256_ps(_mm256_slli_epi32(                                                           \
      _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p))), 16))

static inline float gv_hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
#define GV_HSUM(v) gv_hsum(v)

static void gv_dot_m1(const emlx_gemm *g, const float *af, int64_t j0, int64_t j1);
#define GV_DOT_M1 gv_dot_m1

#define GEMV_T_NAME emlx_mm_gemv_t_lowp_avx2
#include "matmul_gemv_body.h"

/* ---- x @ W^T, one row ------------------------------------------------------- */

/* Columns [j, j + 4) of C's one row: 2 vectors of partial sums a column. */
static void gv_dot4(const emlx_gemm *g, const float *af, int64_t j) {
  const uint16_t *b = g->b;
  emlx_dtype dt = g->dtype;
  int64_t K = g->K, kvec = K / 16 * 16;
  const uint16_t *w[4];
  __m256 acc[2][4];
  for (int q = 0; q < 4; q++) {
    w[q] = b + (j + q) * g->b_cs;
    acc[0][q] = acc[1][q] = _mm256_setzero_ps();
  }
  for (int64_t k = 0; k < kvec; k += 16) {
    __m256 x0 = _mm256_loadu_ps(af + k), x1 = _mm256_loadu_ps(af + k + 8);
    for (int q = 0; q < 4; q++) {
      acc[0][q] = _mm256_fmadd_ps(x0, gv_widen(w[q] + k, dt), acc[0][q]);
      acc[1][q] = _mm256_fmadd_ps(x1, gv_widen(w[q] + k + 8, dt), acc[1][q]);
    }
  }
  uint16_t *c = g->c;
  for (int q = 0; q < 4; q++) {
    float s = gv_hsum(_mm256_add_ps(acc[0][q], acc[1][q]));
    for (int64_t k = kvec; k < K; k++)
      s = fmaf(af[k], gv_widen1(w[q][k], dt), s);
    c[j + q] = gv_round1(s, dt);
  }
}

static void gv_dot_m1(const emlx_gemm *g, const float *af, int64_t j0, int64_t j1) {
  int64_t j = j0;
  for (; j + 4 <= j1; j += 4)
    gv_dot4(g, af, j);
  for (; j < j1; j++)
    gv_dot_one(g, af, j);
}

/* ---- x @ W ------------------------------------------------------------------ */

#define XW_ACC_FLOATS 2048 /* 8 KiB of accumulators per chunk, all rows */
#define XW_KU 4            /* rows of B per pass over the accumulators */
/* Rows of B ahead that each pass prefetches: the strips of a pass's rows
 * are b_rs apart, a page or more, where the hardware prefetchers stop. */
#define XW_PF_ROWS 8

/* 16 columns of a row of B at p: bf16 as even columns (lo) and odd (hi),
 * f16 in order. */
static inline __attribute__((always_inline)) void xw_widen16(const uint16_t *p, bool bf16,
                                                             __m256 *lo, __m256 *hi) {
  if (bf16) {
    __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)p);
    *lo = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
    *hi = _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32((int)0xffff0000u)));
  } else {
    *lo = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
    *hi = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p + 8)));
  }
}

/* Rows [k, k + KU) of B folded into the accumulators of columns
 * [c0, c0 + n) (acc: MROWS rows of ld floats). */
static inline __attribute__((always_inline)) void xw_rows(const emlx_gemm *g, int64_t k, int64_t c0,
                                                          int64_t n, float *acc, int64_t ld,
                                                          const int MROWS, const int KU,
                                                          const bool BF16) {
  const uint16_t *a = g->a, *w[XW_KU];
  emlx_dtype dt = g->dtype;
  float xs[EMLX_MM_GEMV_MAX_M][XW_KU];
  __m256 xv[EMLX_MM_GEMV_MAX_M][XW_KU];
  for (int r = 0; r < KU; r++) {
    w[r] = (const uint16_t *)g->b + (k + r) * g->b_rs + c0;
    for (int m = 0; m < MROWS; m++) {
      xs[m][r] = gv_widen1(a[m * g->a_rs + (k + r) * g->a_cs], dt);
      xv[m][r] = _mm256_set1_ps(xs[m][r]);
    }
  }
  bool prefetch = k + XW_PF_ROWS + KU <= g->K;
  int64_t pf = XW_PF_ROWS * g->b_rs, nv = n / 16 * 16;
  for (int64_t j = 0; j < nv; j += 16) {
    if (prefetch && j % 32 == 0)
      for (int r = 0; r < KU; r++)
        _mm_prefetch((const char *)(w[r] + pf + j), _MM_HINT_T0);
    __m256 lo[XW_KU], hi[XW_KU];
    for (int r = 0; r < KU; r++)
      xw_widen16(w[r] + j, BF16, &lo[r], &hi[r]);
    for (int m = 0; m < MROWS; m++) {
      float *p = acc + m * ld + j;
      __m256 s0 = _mm256_load_ps(p), s1 = _mm256_load_ps(p + 8);
      for (int r = 0; r < KU; r++) {
        s0 = _mm256_fmadd_ps(xv[m][r], lo[r], s0);
        s1 = _mm256_fmadd_ps(xv[m][r], hi[r], s1);
      }
      _mm256_store_ps(p, s0);
      _mm256_store_ps(p + 8, s1);
    }
  }
  for (int64_t j = nv; j < n; j++)
    for (int r = 0; r < KU; r++) {
      float wv = gv_widen1(w[r][j], dt);
      for (int m = 0; m < MROWS; m++)
        acc[m * ld + j] = fmaf(xs[m][r], wv, acc[m * ld + j]);
    }
}

/* Columns [c0, c0 + n) of C, n <= XW_ACC_FLOATS / MROWS (acc: room for
 * XW_ACC_FLOATS, 64-byte aligned). */
static inline __attribute__((always_inline)) void
xw_chunk(const emlx_gemm *g, int64_t c0, int64_t n, float *acc, const int MROWS, const bool BF16) {
  int64_t ld = (n + 15) / 16 * 16, nv = n / 16 * 16, k = 0;
  for (int64_t i = 0; i < MROWS * ld; i++)
    acc[i] = 0.0f;
  for (; k + XW_KU <= g->K; k += XW_KU)
    xw_rows(g, k, c0, n, acc, ld, MROWS, XW_KU, BF16);
  for (; k < g->K; k++)
    xw_rows(g, k, c0, n, acc, ld, MROWS, 1, BF16);
  uint16_t *c = g->c;
  for (int m = 0; m < MROWS; m++) {
    const float *s = acc + m * ld;
    uint16_t *cm = c + m * g->ldc + c0;
    for (int64_t j = 0; j < nv; j += 16)
      for (int i = 0; i < 8; i++) {
        /* bf16: s[j + i] is column j + 2i, s[j + 8 + i] column j + 2i + 1 */
        cm[j + (BF16 ? 2 * i : i)] = gv_round1(s[j + i], g->dtype);
        cm[j + (BF16 ? 2 * i + 1 : 8 + i)] = gv_round1(s[j + 8 + i], g->dtype);
      }
    for (int64_t j = nv; j < n; j++)
      cm[j] = gv_round1(s[j], g->dtype);
  }
}

/* Columns [j0, j1) in chunks as even as the accumulators allow. */
static inline __attribute__((always_inline)) void
xw_range(const emlx_gemm *g, int64_t j0, int64_t j1, float *acc, const int MROWS, const bool BF16) {
  int64_t cap = XW_ACC_FLOATS / MROWS / 16 * 16, span = j1 - j0;
  int64_t nchunks = (span + cap - 1) / cap;
  int64_t width = ((span + nchunks - 1) / nchunks + 15) / 16 * 16;
  for (int64_t c0 = j0; c0 < j1; c0 += width)
    xw_chunk(g, c0, j1 - c0 < width ? j1 - c0 : width, acc, MROWS, BF16);
}

/* One function a row count and dtype, each with its own accumulators (the
 * always-inline walk instantiated once per frame). */
#define XW_FN(name, MROWS, BF16)                                                                   \
  static void name(const emlx_gemm *g, int64_t j0, int64_t j1) {                                   \
    _Alignas(64) float acc[XW_ACC_FLOATS];                                                         \
    xw_range(g, j0, j1, acc, MROWS, BF16);                                                         \
  }
XW_FN(xw_f16_m1, 1, false)
XW_FN(xw_f16_m2, 2, false)
XW_FN(xw_f16_m3, 3, false)
XW_FN(xw_f16_m4, 4, false)
XW_FN(xw_bf16_m1, 1, true)
XW_FN(xw_bf16_m2, 2, true)
XW_FN(xw_bf16_m3, 3, true)
XW_FN(xw_bf16_m4, 4, true)

void emlx_mm_gemv_lowp_avx2(const emlx_gemm *g, int64_t j0, int64_t j1) {
  static void (*const fns[2][EMLX_MM_GEMV_MAX_M])(const emlx_gemm *, int64_t, int64_t) = {
      {xw_f16_m1, xw_f16_m2, xw_f16_m3, xw_f16_m4},
      {xw_bf16_m1, xw_bf16_m2, xw_bf16_m3, xw_bf16_m4}};
  fns[g->dtype == EMLX_BFLOAT16][g->M - 1](g, j0, j1);
}
