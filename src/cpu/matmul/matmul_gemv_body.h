/* matmul_gemv_body.h — f16 and bf16 products with few rows (decode: M <= 4),
 * read straight from B: no packing, so B (the weights) crosses memory once.
 * Included by matmul_gemv_avx2.c and matmul_gemv_avx512.c, which define the
 * vector macros below (GV_W lanes of f32) and the entry points' names.
 *
 * - GEMV_NAME: B's columns contiguous (b_cs == 1, x @ W with W [K, N]).
 *   C[m, j] = sum over k, in order, of A[m, k] * B[k, j], each step one f32
 *   FMA (the order and rounding of the packed kernels' f32 path). Columns
 *   are cut into chunks of GEMV_CHUNK whose accumulators stay in L1; each
 *   row of B's chunk is widened once for all M rows.
 * - GEMV_T_NAME: B's rows contiguous (b_rs == 1, x @ W^T with W [N, K]):
 *   dot products of A's rows (widened to f32 by the driver, M x K
 *   contiguous) with GV_JB columns of B at a time, GV_W lanes of partial sums
 *   each, added across lanes at the end (a different order from the packed
 *   kernels, the same f32 accumulation).
 * Either rounds to the output dtype once on the store.
 *
 * An includer may leave GEMV_NAME undefined and define its own b_cs == 1
 * walk (matmul_gemv_avx2.c does), and may define GV_DOT_M1(g, af, j0, j1)
 * to take GEMV_T_NAME's one-row products (M == 1) instead of the blocks
 * below. */
#include <math.h>

#include "convert.h"
#include "matmul.h"

#define GEMV_CHUNK 512
/* Rows of B ahead that the b_cs == 1 walk prefetches: its rows are 1 KiB
 * strips GEMV_CHUNK apart in memory, too far apart for the hardware
 * prefetchers to follow (a page or more). */
#define GEMV_PF_ROWS 8

static inline float gv_widen1(uint16_t h, emlx_dtype dt) {
  return dt == EMLX_FLOAT16 ? emlx_cv_f16_to_f32(h) : emlx_cv_bf16_to_f32(h);
}

static inline uint16_t gv_round1(float v, emlx_dtype dt) {
  return dt == EMLX_FLOAT16 ? emlx_cv_f32_to_f16(v) : emlx_cv_f32_to_bf16(v);
}

/* GV_W values of B at p, widened. */
static inline GV_VEC gv_widen(const uint16_t *p, emlx_dtype dt) {
  return dt == EMLX_FLOAT16 ? GV_WIDEN_F16(p) : GV_WIDEN_BF16(p);
}

#ifdef GEMV_NAME
void GEMV_NAME(const emlx_gemm *g, int64_t j0, int64_t j1) {
  _Alignas(64) float acc[EMLX_MM_GEMV_MAX_M][GEMV_CHUNK];
  const uint16_t *a = g->a, *b = g->b;
  uint16_t *c = g->c;
  emlx_dtype dt = g->dtype;
  int64_t M = g->M;
  for (int64_t c0 = j0; c0 < j1; c0 += GEMV_CHUNK) {
    int64_t n = j1 - c0 < GEMV_CHUNK ? j1 - c0 : GEMV_CHUNK, nvec = n / GV_W * GV_W;
    for (int64_t m = 0; m < M; m++)
      for (int64_t j = 0; j < n; j++)
        acc[m][j] = 0.0f;
    for (int64_t k = 0; k < g->K; k++) {
      const uint16_t *brow = b + k * g->b_rs + c0;
      const char *pf = (const char *)(brow + GEMV_PF_ROWS * g->b_rs);
      bool prefetch = k + GEMV_PF_ROWS < g->K;
      float x[EMLX_MM_GEMV_MAX_M];
      GV_VEC xv[EMLX_MM_GEMV_MAX_M];
      for (int64_t m = 0; m < M; m++) {
        x[m] = gv_widen1(a[m * g->a_rs + k * g->a_cs], dt);
        xv[m] = GV_SET1(x[m]);
      }
      for (int64_t j = 0; j < nvec; j += GV_W) {
        if (prefetch && (j * 2) % 64 == 0)
          _mm_prefetch(pf + j * 2, _MM_HINT_T0);
        GV_VEC w = gv_widen(brow + j, dt);
        for (int64_t m = 0; m < M; m++)
          GV_STORE(acc[m] + j, GV_FMA(xv[m], w, GV_LOAD(acc[m] + j)));
      }
      for (int64_t j = nvec; j < n; j++) {
        float w = gv_widen1(brow[j], dt);
        for (int64_t m = 0; m < M; m++)
          acc[m][j] = fmaf(x[m], w, acc[m][j]);
      }
    }
    for (int64_t m = 0; m < M; m++)
      for (int64_t j = 0; j < n; j++)
        c[m * g->ldc + c0 + j] = gv_round1(acc[m][j], dt);
  }
}
#endif

/* Columns [j, j + GV_JB) of C for MROWS rows (a compile-time constant once
 * inlined, so the accumulators live in registers). */
static inline __attribute__((always_inline)) void gv_dot_block(const emlx_gemm *g, const float *af,
                                                               int64_t j, const int MROWS) {
  const uint16_t *b = g->b;
  emlx_dtype dt = g->dtype;
  int64_t K = g->K, kvec = K / GV_W * GV_W;
  const uint16_t *w[GV_JB];
  GV_VEC acc[EMLX_MM_GEMV_MAX_M][GV_JB];
  for (int q = 0; q < GV_JB; q++) {
    w[q] = b + (j + q) * g->b_cs;
    for (int m = 0; m < MROWS; m++)
      acc[m][q] = GV_ZERO();
  }
  for (int64_t k = 0; k < kvec; k += GV_W) {
    GV_VEC wv[GV_JB];
    for (int q = 0; q < GV_JB; q++)
      wv[q] = gv_widen(w[q] + k, dt);
    for (int m = 0; m < MROWS; m++) {
      GV_VEC x = GV_LOAD(af + m * K + k);
      for (int q = 0; q < GV_JB; q++)
        acc[m][q] = GV_FMA(x, wv[q], acc[m][q]);
    }
  }
  uint16_t *c = g->c;
  for (int m = 0; m < MROWS; m++)
    for (int q = 0; q < GV_JB; q++) {
      float s = GV_HSUM(acc[m][q]);
      for (int64_t k = kvec; k < K; k++)
        s = fmaf(af[m * K + k], gv_widen1(w[q][k], dt), s);
      c[m * g->ldc + j + q] = gv_round1(s, dt);
    }
}

/* One column of C (the last few of a range), all rows. */
static void gv_dot_one(const emlx_gemm *g, const float *af, int64_t j) {
  const uint16_t *w = (const uint16_t *)g->b + j * g->b_cs;
  emlx_dtype dt = g->dtype;
  uint16_t *c = g->c;
  for (int64_t m = 0; m < g->M; m++) {
    float s = 0.0f;
    for (int64_t k = 0; k < g->K; k++)
      s = fmaf(af[m * g->K + k], gv_widen1(w[k], dt), s);
    c[m * g->ldc + j] = gv_round1(s, dt);
  }
}

void GEMV_T_NAME(const emlx_gemm *g, const float *af, int64_t j0, int64_t j1) {
#ifdef GV_DOT_M1
  if (g->M == 1) {
    GV_DOT_M1(g, af, j0, j1);
    return;
  }
#endif
  int64_t j = j0;
  for (; j + GV_JB <= j1; j += GV_JB) {
    switch (g->M) {
    case 1:
      gv_dot_block(g, af, j, 1);
      break;
    case 2:
      gv_dot_block(g, af, j, 2);
      break;
    case 3:
      gv_dot_block(g, af, j, 3);
      break;
    default:
      gv_dot_block(g, af, j, 4);
      break;
    }
  }
  for (; j < j1; j++)
    gv_dot_one(g, af, j);
}
