/* matmul_lowp_blas.c — large f16 and bf16 products on AVX2 machines through
 * OpenBLAS's sgemm on widened chunks of K.
 *
 * Below AVX-512 our own f32 micro-kernel (matmul_lowp_avx2.c) runs 10-20%
 * behind OpenBLAS's sgemm on the same machine. For products large enough,
 * then, K is walked in chunks of KC: the M x KC slice of A and the KC x N
 * slice of B are widened to f32 into scratch panels (exact: f16 and bf16
 * are subsets of f32), and sgemm accumulates them into an f32 copy of C
 * (beta 0 on the first chunk, 1 after), which is rounded once to the
 * output dtype at the end (to nearest even, NaN stays NaN). The
 * accumulation is f32 throughout, as on the packed path; only the order of
 * the additions is sgemm's. The extra work is O(MK + KN + MN) widening and
 * rounding against the O(MNK) product.
 *
 * Each slice is widened along the operand's unit-stride axis when it has
 * one (A or B transposed become sgemm's transposed operands), element by
 * element otherwise, so any strides (negative, zero) are read in place.
 * The widening and rounding run on our pool; sgemm runs on OpenBLAS's own
 * threads from the calling thread, between them, so the two pools never
 * nest. Only a call that may thread (matmul.c's large products) comes
 * here. EMLX_MATMUL_KERNEL=avx2-sgemm forces this route at any size (the
 * tests' reference mode); any other forced kernel turns it off. */
#include <cblas.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"
#include "matmul.h"

#define KC 512 /* values of k per sgemm call */
/* Where sgemm wins (measured on a 2-core EPYC, bench_lowp): the extra
 * pass over C costs about 1/K of the product, so K from 512; M and N from
 * 64 (fewer rows are the few-row path's or the packed kernel's), and
 * M * N * K from 2^28 (512^3 and below run as fast on the packed kernel). */
#define MIN_K 512
#define MIN_MN 64
#define MIN_WORK (INT64_C(1) << 28)
#define RUN_GRAIN_ELEMS (INT64_C(1) << 15) /* elements widened per pool chunk */

typedef struct widen_ctx {
  const emlx_gemm *g;
  int64_t k0, kc;
  bool a_t, b_t; /* slice stored transposed (column-major for sgemm) */
  int64_t a_runs, b_runs;
  float *ap, *bp;
} widen_ctx;

/* Run r of the A slice, then of the B slice: one row (or, transposed, one
 * column) of the slice, widened into its row of the panel. */
static void widen_runs(void *p, int64_t begin, int64_t end) {
  const widen_ctx *x = p;
  const emlx_gemm *g = x->g;
  for (int64_t r = begin; r < end; r++) {
    if (r < x->a_runs) {
      const uint16_t *a = g->a;
      if (x->a_t) /* column k0 + r of A, along i */
        emlx_mm_widen_avx2(a + (x->k0 + r) * g->a_cs, g->M, g->a_rs, x->ap + r * g->M, g->dtype);
      else /* row r of A, along k */
        emlx_mm_widen_avx2(a + r * g->a_rs + x->k0 * g->a_cs, x->kc, g->a_cs, x->ap + r * x->kc,
                           g->dtype);
      continue;
    }
    int64_t s = r - x->a_runs;
    const uint16_t *b = g->b;
    if (x->b_t) /* column s of B, along k */
      emlx_mm_widen_avx2(b + s * g->b_cs + x->k0 * g->b_rs, x->kc, g->b_rs, x->bp + s * x->kc,
                         g->dtype);
    else /* row k0 + s of B, along j */
      emlx_mm_widen_avx2(b + (x->k0 + s) * g->b_rs, g->N, g->b_cs, x->bp + s * g->N, g->dtype);
  }
}

typedef struct narrow_ctx {
  const emlx_gemm *g;
  const float *c32;
} narrow_ctx;

static void narrow_rows(void *p, int64_t begin, int64_t end) {
  const narrow_ctx *x = p;
  const emlx_gemm *g = x->g;
  for (int64_t i = begin; i < end; i++)
    emlx_mm_narrow_avx2(x->c32 + i * g->N, g->N, (uint16_t *)g->c + i * g->ldc, g->dtype);
}

/* Whether g goes this way: the AVX2 level exactly (AVX-512 machines have
 * their own kernels), a threaded call, sizes sgemm takes, and a product
 * large enough (or the route forced). */
static bool applies(const emlx_gemm *g, bool threaded) {
  if (!threaded || strcmp(emlx_cpu_isa_get()->name, "avx2") != 0)
    return false;
  if (g->M > INT_MAX || g->N > INT_MAX || g->K > INT_MAX)
    return false;
  const char *force = getenv("EMLX_MATMUL_KERNEL");
  if (force)
    return strcmp(force, "avx2-sgemm") == 0;
  return g->K >= MIN_K && g->M >= MIN_MN && g->N >= MIN_MN &&
         (double)g->M * (double)g->N * (double)g->K >= (double)MIN_WORK;
}

int emlx_cpu_gemm_lowp_blas(const emlx_gemm *g, bool threaded) {
  if (!applies(g, threaded))
    return 0;
  int64_t M = g->M, N = g->N, K = g->K, kcmax = K < KC ? K : KC;
  widen_ctx w = {.g = g};
  /* Along the unit-stride axis when there is one; A row by row otherwise. */
  w.a_t = g->a_rs == 1 && g->a_cs != 1 && M > 1;
  w.b_t = g->b_rs == 1 && g->b_cs != 1 && K > 1;
  emlx_buffer *holder;
  size_t a_elems = (size_t)(M * kcmax), b_elems = (size_t)(kcmax * N);
  float *ap = emlx_cpu_mm_scratch((a_elems + b_elems + (size_t)(M * N)) * sizeof(float), &holder);
  if (!ap)
    return EMLX_FAIL("matmul: out of memory for widened panels");
  float *bp = ap + a_elems, *c32 = bp + b_elems;
  w.ap = ap;
  w.bp = bp;
  for (int64_t k0 = 0; k0 < K; k0 += KC) {
    int64_t kc = K - k0 < KC ? K - k0 : KC;
    w.k0 = k0;
    w.kc = kc;
    w.a_runs = w.a_t ? kc : M;
    w.b_runs = w.b_t ? N : kc;
    int64_t run_len = (w.a_t ? M : kc) > (w.b_t ? kc : N) ? (w.a_t ? M : kc) : (w.b_t ? kc : N);
    emlx__parallel_for(w.a_runs + w.b_runs, RUN_GRAIN_ELEMS / run_len + 1, widen_runs, &w);
    cblas_sgemm(CblasRowMajor, w.a_t ? CblasTrans : CblasNoTrans, w.b_t ? CblasTrans : CblasNoTrans,
                (int)M, (int)N, (int)kc, 1.0f, ap, (int)(w.a_t ? M : kc), bp, (int)(w.b_t ? kc : N),
                k0 == 0 ? 0.0f : 1.0f, c32, (int)N);
  }
  narrow_ctx nx = {.g = g, .c32 = c32};
  emlx__parallel_for(M, RUN_GRAIN_ELEMS / N + 1, narrow_rows, &nx);
  emlx__buffer_release(holder);
  return 1;
}
