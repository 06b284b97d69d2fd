/* test_matmul.c — matmul and tensordot against naive f64 references.
 *
 * Values are multiples of 1/4 in [-4, 4] (integers for integer dtypes), so
 * every product and every partial sum is exact in f32: the only rounding is
 * the final one to the output dtype, and the results must match the
 * correctly rounded reference to within an ulp whatever the summation order
 * (BLAS, our packed kernels). A random-valued case checks by NMSE instead.
 * Integer cases overflow narrow dtypes on purpose: results wrap. Every f16 /
 * bf16 kernel this machine has is run (EMLX_MATMUL_KERNEL). */
#include <stdlib.h>

#include "test_util.h"

static tu_rng rng = {12345};

/* n values of dtype d's test distribution. */
static double *values(emlx_dtype d, int64_t n) {
  double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  for (int64_t i = 0; i < n; i++) {
    if (tu_is_int(d))
      v[i] = emlx_dtype_is_signed(d) ? (double)tu_randint(&rng, -50, 50)
                                     : (double)tu_randint(&rng, 0, 60);
    else
      v[i] = (double)tu_randint(&rng, -16, 16) * 0.25;
  }
  return v;
}

/* Element (batch index e, i, j) of a logically (batch..., R, C) operand
 * stored row-major with its own (broadcastable) batch shape. */
static double at(const double *v, const int64_t *shape, int nd, const int64_t *obatch, int onb,
                 int64_t e, int64_t i, int64_t j) {
  int64_t idx[EMLX_MAX_NDIM];
  tu_unravel(e, obatch, onb, idx);
  int64_t off = 0, stride = 1;
  off += j * stride;
  stride *= shape[nd - 1];
  off += i * stride;
  stride *= shape[nd - 2];
  for (int d = nd - 3, od = onb - 1; d >= 0; d--, od--) {
    int64_t k = shape[d] == 1 ? 0 : idx[od];
    off += k * stride;
    stride *= shape[d];
  }
  return v[off];
}

/* Reference (batch..., M, N) of a (.., M, K) . b (.., K, N), both >= 2-D. */
static double *ref_matmul(const double *va, const int64_t *sa, int na, const double *vb,
                          const int64_t *sb, int nb, int64_t *so, int *no) {
  int nbatch = (na > nb ? na : nb) - 2;
  for (int i = 0; i < nbatch; i++) {
    int ia = na - 2 - nbatch + i, ib = nb - 2 - nbatch + i;
    int64_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
    so[i] = da == 1 ? db : da;
  }
  int64_t M = sa[na - 2], K = sa[na - 1], N = sb[nb - 1];
  so[nbatch] = M;
  so[nbatch + 1] = N;
  *no = nbatch + 2;
  int64_t batch = tu_numel(so, nbatch);
  double *r = malloc((size_t)(batch * M * N + 1) * sizeof *r);
  for (int64_t e = 0; e < batch; e++)
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        double s = 0;
        for (int64_t k = 0; k < K; k++)
          s += at(va, sa, na, so, nbatch, e, i, k) * at(vb, sb, nb, so, nbatch, e, k, j);
        r[(e * M + i) * N + j] = s;
      }
  return r;
}

/* a (shape sa) @ b (shape sb) of dtype d; 1-D operands as numpy. */
static void check_matmul(emlx_dtype d, const int64_t *sa, int na, const int64_t *sb, int nb,
                         const char *what) {
  double *va = values(d, tu_numel(sa, na)), *vb = values(d, tu_numel(sb, nb));
  emlx_array *a = tu_make(d, sa, na, va), *b = tu_make(d, sb, nb, vb);
  emlx_array *c = emlx_matmul(a, b);
  int64_t ea[EMLX_MAX_NDIM], eb[EMLX_MAX_NDIM], so[EMLX_MAX_NDIM];
  int xa = na, xb = nb, no;
  if (na == 1) {
    ea[0] = 1;
    ea[1] = sa[0];
    xa = 2;
  } else {
    memcpy(ea, sa, (size_t)na * 8);
  }
  if (nb == 1) {
    eb[0] = sb[0];
    eb[1] = 1;
    xb = 2;
  } else {
    memcpy(eb, sb, (size_t)nb * 8);
  }
  double *ref = ref_matmul(va, ea, xa, vb, eb, xb, so, &no);
  int64_t fs[EMLX_MAX_NDIM];
  int nf = 0;
  for (int i = 0; i < no; i++) {
    if (na == 1 && i == no - 2)
      continue;
    if (nb == 1 && i == no - 1)
      continue;
    fs[nf++] = so[i];
  }
  char msg[160];
  snprintf(msg, sizeof msg, "%s %s", what, tu_dname(d));
  tu_check_array(c, d, fs, nf, ref, 1.0, msg);
  emlx_release(a);
  emlx_release(b);
  emlx_release(c);
  free(va);
  free(vb);
  free(ref);
}

static const emlx_dtype numeric[] = {EMLX_FLOAT32,   EMLX_FLOAT64, EMLX_FLOAT16, EMLX_BFLOAT16,
                                     EMLX_COMPLEX64, EMLX_UINT8,   EMLX_UINT16,  EMLX_UINT32,
                                     EMLX_UINT64,    EMLX_INT8,    EMLX_INT16,   EMLX_INT32,
                                     EMLX_INT64};
#define NNUMERIC (int)(sizeof numeric / sizeof numeric[0])

static void test_shapes(void) {
  for (int t = 0; t < NNUMERIC; t++) {
    emlx_dtype d = numeric[t];
    check_matmul(d, (int64_t[]){3, 4}, 2, (int64_t[]){4, 5}, 2, "2d");
    check_matmul(d, (int64_t[]){4}, 1, (int64_t[]){4, 5}, 2, "vec@mat");
    check_matmul(d, (int64_t[]){3, 4}, 2, (int64_t[]){4}, 1, "mat@vec");
    check_matmul(d, (int64_t[]){7}, 1, (int64_t[]){7}, 1, "vec@vec");
    check_matmul(d, (int64_t[]){2, 3, 4}, 3, (int64_t[]){4, 5}, 2, "batch@mat (folded)");
    check_matmul(d, (int64_t[]){4}, 1, (int64_t[]){2, 4, 5}, 3, "vec@batch");
    check_matmul(d, (int64_t[]){2, 1, 3, 4}, 4, (int64_t[]){5, 4, 6}, 3, "broadcast batch");
    check_matmul(d, (int64_t[]){3, 0}, 2, (int64_t[]){0, 5}, 2, "k=0");
    check_matmul(d, (int64_t[]){0, 4}, 2, (int64_t[]){4, 5}, 2, "m=0");
    check_matmul(d, (int64_t[]){2, 0, 4}, 3, (int64_t[]){4, 5}, 2, "empty batch rows");
    check_matmul(d, (int64_t[]){37, 70}, 2, (int64_t[]){70, 45}, 2, "edges");
    check_matmul(d, (int64_t[]){1, 33}, 2, (int64_t[]){33, 40}, 2, "gemv row");
    check_matmul(d, (int64_t[]){40, 33}, 2, (int64_t[]){33, 1}, 2, "gemv col");
    /* decode-shaped: few rows, columns over several chunks of the bf16
     * straight-from-B path, split across the pool */
    check_matmul(d, (int64_t[]){3, 400}, 2, (int64_t[]){400, 1100}, 2, "few rows, wide");
    check_matmul(d, (int64_t[]){64, 3, 5}, 3, (int64_t[]){64, 5, 4}, 3, "many small");
    /* the batched small-product paths (f32: 16 x 16 x 16 kernel, others) */
    check_matmul(d, (int64_t[]){300, 16, 16}, 3, (int64_t[]){300, 16, 16}, 3, "batch of 16x16");
    check_matmul(d, (int64_t[]){3, 5, 16, 16}, 4, (int64_t[]){3, 5, 16, 16}, 4, "2 batch axes");
    check_matmul(d, (int64_t[]){3, 5, 16, 16}, 4, (int64_t[]){5, 16, 16}, 3, "16x16, b broadcast");
    check_matmul(d, (int64_t[]){3, 1, 16, 16}, 4, (int64_t[]){1, 5, 16, 16}, 4,
                 "16x16, both bcast");
    check_matmul(d, (int64_t[]){50, 9, 24}, 3, (int64_t[]){50, 24, 20}, 3, "batch of 9x24x20");
  }
}

/* Views: transposed (both operands, alone and batched), sliced with steps,
 * reversed, broadcast; the reference reads the same logical values. */
static void check_views(emlx_dtype d, int64_t M, int64_t K, int64_t N) {
  /* a^T stored as (K, M), b^T stored as (N, K). */
  int64_t sat[2] = {K, M}, sbt[2] = {N, K};
  double *vat = values(d, K * M), *vbt = values(d, N * K);
  emlx_array *at_ = tu_make(d, sat, 2, vat), *bt_ = tu_make(d, sbt, 2, vbt);
  emlx_array *a = emlx_transpose(at_, NULL, 0), *b = emlx_transpose(bt_, NULL, 0);
  double *va = malloc((size_t)(M * K) * 8), *vb = malloc((size_t)(K * N) * 8);
  for (int64_t i = 0; i < M; i++)
    for (int64_t k = 0; k < K; k++)
      va[i * K + k] = vat[k * M + i];
  for (int64_t k = 0; k < K; k++)
    for (int64_t j = 0; j < N; j++)
      vb[k * N + j] = vbt[j * K + k];
  emlx_array *an = tu_make(d, (int64_t[]){M, K}, 2, va);
  emlx_array *bn = tu_make(d, (int64_t[]){K, N}, 2, vb);
  int64_t so[4];
  int no;
  double *ref = ref_matmul(va, (int64_t[]){M, K}, 2, vb, (int64_t[]){K, N}, 2, so, &no);
  char msg[96];
  emlx_array *cases[3][2] = {{a, bn}, {an, b}, {a, b}};
  const char *names[3] = {"a^T view", "b^T view", "both ^T views"};
  for (int c = 0; c < 3; c++) {
    emlx_array *r = emlx_matmul(cases[c][0], cases[c][1]);
    snprintf(msg, sizeof msg, "%s %lldx%lldx%lld", names[c], (long long)M, (long long)K,
             (long long)N);
    tu_check_array(r, d, so, 2, ref, 1.0, msg);
    emlx_release(r);
  }
  /* Reversed rows of a (negative stride) and every other column of a wider b. */
  emlx_array *arev =
      emlx_slice(an, (int64_t[]){M - 1, 0}, (int64_t[]){-M - 1, K}, (int64_t[]){-1, 1}, 2);
  double *vw = values(d, K * 2 * N);
  emlx_array *bw = tu_make(d, (int64_t[]){K, 2 * N}, 2, vw);
  emlx_array *bstep =
      emlx_slice(bw, (int64_t[]){0, 0}, (int64_t[]){K, 2 * N}, (int64_t[]){1, 2}, 2);
  double *vr = malloc((size_t)(M * K) * 8), *vs = malloc((size_t)(K * N) * 8);
  for (int64_t i = 0; i < M; i++)
    for (int64_t k = 0; k < K; k++)
      vr[i * K + k] = va[(M - 1 - i) * K + k];
  for (int64_t k = 0; k < K; k++)
    for (int64_t j = 0; j < N; j++)
      vs[k * N + j] = vw[k * 2 * N + 2 * j];
  double *ref2 = ref_matmul(vr, (int64_t[]){M, K}, 2, vs, (int64_t[]){K, N}, 2, so, &no);
  emlx_array *r = emlx_matmul(arev, bstep);
  tu_check_array(r, d, so, 2, ref2, 1.0, "reversed rows @ stepped columns");
  emlx_release(r);
  /* Batched transposed views: (B, K, M)^T per batch @ broadcast b^T. */
  int64_t B = 3;
  double *vab = values(d, B * K * M);
  emlx_array *ab = tu_make(d, (int64_t[]){B, K, M}, 3, vab);
  emlx_array *abt = emlx_transpose(ab, (int[]){0, 2, 1}, 3);
  r = emlx_matmul(abt, b);
  double *vabn = malloc((size_t)(B * M * K) * 8);
  for (int64_t e = 0; e < B; e++)
    for (int64_t i = 0; i < M; i++)
      for (int64_t k = 0; k < K; k++)
        vabn[(e * M + i) * K + k] = vab[(e * K + k) * M + i];
  int64_t so3[4];
  double *ref3 = ref_matmul(vabn, (int64_t[]){B, M, K}, 3, vb, (int64_t[]){K, N}, 2, so3, &no);
  tu_check_array(r, d, so3, 3, ref3, 1.0, "batched a^T @ b^T");
  emlx_release(r);
  emlx_release(ab);
  emlx_release(abt);
  free(vab);
  free(vabn);
  free(ref3);
  emlx_release(arev);
  emlx_release(bw);
  emlx_release(bstep);
  free(vw);
  free(vr);
  free(vs);
  free(ref2);
  emlx_release(at_);
  emlx_release(bt_);
  emlx_release(a);
  emlx_release(b);
  emlx_release(an);
  emlx_release(bn);
  free(vat);
  free(vbt);
  free(va);
  free(vb);
  free(ref);
}

static void test_views(void) {
  for (int t = 0; t < NNUMERIC; t++) {
    check_views(numeric[t], 5, 6, 7);
    check_views(numeric[t], 33, 65, 40);
    check_views(numeric[t], 16, 16, 16);
  }
  /* f16/bf16 decode shapes (1 to 4 rows): x @ W^T reads W's rows straight
   * (dot products), x @ W its columns; K and N off the vector widths and
   * the column blocks, N over several tasks of the pool. */
  for (int64_t m = 1; m <= 4; m++) {
    check_views(EMLX_FLOAT16, m, 403, 1101);
    check_views(EMLX_BFLOAT16, m, 403, 1101);
  }
}

/* Random (not exactly representable) values: NMSE against f64. */
static void test_random_values(emlx_dtype d, double tol) {
  int64_t M = 70, K = 300, N = 90;
  double *va = malloc((size_t)(M * K) * 8), *vb = malloc((size_t)(K * N) * 8);
  for (int64_t i = 0; i < M * K; i++)
    va[i] = tu_quant(d, tu_uniform(&rng, -1, 1));
  for (int64_t i = 0; i < K * N; i++)
    vb[i] = tu_quant(d, tu_uniform(&rng, -1, 1));
  emlx_array *a = tu_make(d, (int64_t[]){M, K}, 2, va), *b = tu_make(d, (int64_t[]){K, N}, 2, vb);
  emlx_array *c = emlx_matmul(a, b);
  int64_t so[2];
  int no;
  double *ref = ref_matmul(va, (int64_t[]){M, K}, 2, vb, (int64_t[]){K, N}, 2, so, &no);
  double *got = tu_read(c);
  if (got) {
    double e = tu_nmse(got, ref, M * N);
    CHECK_MSG(e < tol, "random values %s: nmse %g < %g", tu_dname(d), e, tol);
  }
  free(got);
  free(ref);
  free(va);
  free(vb);
  emlx_release(a);
  emlx_release(b);
  emlx_release(c);
}

/* The one rounding to f16/bf16 on the store is to nearest, ties to even
 * (an ulp of tolerance elsewhere would let truncation through): row i of
 * C is sign * (1 + off * ulp(1)), the exact f32 sum of two products, for
 * offsets below, at and above half an ulp, in every row and column of a
 * micro-tile. */
static void check_store_rounding(emlx_dtype d, const char *kernel) {
  const int64_t M = 13, N = 37;
  const double offs[5] = {0.25, 0.5, 0.75, 1.5, 2.5}; /* round to 0, 0 (even), 1, 2, 2 ulps */
  const double want_ulps[5] = {0, 0, 1, 2, 2};
  double ulp = d == EMLX_FLOAT16 ? 0x1p-10 : 0x1p-7;
  double va[13 * 2], vb[2 * 37];
  for (int64_t i = 0; i < M; i++) {
    va[i * 2] = va[i * 2 + 1] = i % 2 ? -1.0 : 1.0;
  }
  for (int64_t j = 0; j < N; j++) {
    vb[j] = 1.0;
    vb[N + j] = offs[j % 5] * ulp;
  }
  emlx_array *a = tu_make(d, (int64_t[]){M, 2}, 2, va), *b = tu_make(d, (int64_t[]){2, N}, 2, vb);
  emlx_array *c = emlx_matmul(a, b);
  double *got = tu_read(c);
  int bad = 0;
  for (int64_t i = 0; got && i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double want = (i % 2 ? -1.0 : 1.0) * (1.0 + want_ulps[j % 5] * ulp);
      if (got[i * N + j] != want && bad++ < 3)
        fprintf(stderr, "  %s %s (%lld, %lld): got %.10g, want %.10g\n", kernel, tu_dname(d),
                (long long)i, (long long)j, got[i * N + j], want);
    }
  CHECK_MSG(got && bad == 0, "%s %s: rounding on the store (%d wrong)", kernel, tu_dname(d), bad);
  free(got);
  emlx_release(a);
  emlx_release(b);
  emlx_release(c);
}

/* Each f16/bf16 kernel (those this machine lacks fall back to the default). */
static void test_lowp_kernels(void) {
  const char *kernels[] = {"generic",     "avx2-fma", "avx512-fma",
                           "avx512-bf16", "amx-bf16", "avx2-sgemm"};
  for (int k = 0; k < 6; k++) {
    setenv("EMLX_MATMUL_KERNEL", kernels[k], 1);
    for (int t = 0; t < 2; t++) {
      emlx_dtype d = t ? EMLX_BFLOAT16 : EMLX_FLOAT16;
      check_matmul(d, (int64_t[]){37, 70}, 2, (int64_t[]){70, 45}, 2, kernels[k]);
      check_matmul(d, (int64_t[]){2, 65, 129}, 3, (int64_t[]){129, 33}, 2, kernels[k]);
      check_matmul(d, (int64_t[]){8, 3, 5}, 3, (int64_t[]){8, 5, 4}, 3, kernels[k]);
      /* K past the AMX kernel's K chunk (256), not a multiple of it, with
       * several row blocks and a partial last one. */
      check_matmul(d, (int64_t[]){150, 600}, 2, (int64_t[]){600, 70}, 2, kernels[k]);
      check_views(d, 33, 65, 40);
      test_random_values(d, d == EMLX_FLOAT16 ? 1e-5 : 1e-3);
      check_store_rounding(d, kernels[k]);
    }
  }
  unsetenv("EMLX_MATMUL_KERNEL");
}

/* NaN and infinities through the f16/bf16 products: a NaN in A spreads
 * along its row of C, inf times a 0 of B is NaN, inf against mixed signs
 * in B is NaN and against one sign +-inf, and a finite sum past f16's
 * range rounds to inf (bf16 keeps it). K = 600 crosses the sgemm route's
 * K chunk. */
static void check_nonfinite(emlx_dtype d, const char *what) {
  const int64_t M = 9, K = 600, N = 21;
  double *va = values(d, M * K), *vb = values(d, K * N);
  va[1 * K + 5] = NAN;
  va[2 * K + 7] = INFINITY;
  va[4 * K + 599] = -INFINITY;
  for (int64_t k = 0; k < K; k++)
    va[6 * K + k] = 16.0;
  for (int64_t j = 0; j < N; j++) {
    vb[7 * N + j] = j % 3 == 0 ? 0.0 : j % 3 == 1 ? 2.0 : -2.0; /* NaN, +inf, -inf in row 2 */
    vb[599 * N + j] = j % 2 ? 0.25 : 0.0;
    vb[(j % K) * N + j] = 16.0; /* row 6: sums past 65504 in some columns */
  }
  for (int64_t k = 0; k < K; k++)
    vb[k * N + 20] = 16.0;
  emlx_array *a = tu_make(d, (int64_t[]){M, K}, 2, va), *b = tu_make(d, (int64_t[]){K, N}, 2, vb);
  emlx_array *c = emlx_matmul(a, b);
  int64_t so[2];
  int no;
  double *ref = ref_matmul(va, (int64_t[]){M, K}, 2, vb, (int64_t[]){K, N}, 2, so, &no);
  char msg[96];
  snprintf(msg, sizeof msg, "%s: NaN and inf", what);
  tu_check_array(c, d, so, 2, ref, 1.0, msg);
  emlx_release(a);
  emlx_release(b);
  emlx_release(c);
  free(va);
  free(vb);
  free(ref);
}

/* A product above the sgemm route's thresholds (matmul_lowp_blas.c: K >=
 * 512, M * N * K >= 2^28), run without forcing a kernel, as x @ W and as
 * x @ W^T (W stored [N, K]); a dense f64 reference (ref_matmul's indexing
 * is too slow at this size). */
static void check_large_lowp(emlx_dtype d) {
  const int64_t M = 512, K = 520, N = 1040;
  double *va = values(d, M * K), *vb = values(d, K * N);
  double *ref = calloc((size_t)(M * N), sizeof *ref);
  for (int64_t i = 0; i < M; i++)
    for (int64_t k = 0; k < K; k++) {
      double x = va[i * K + k];
      for (int64_t j = 0; j < N; j++)
        ref[i * N + j] += x * vb[k * N + j];
    }
  double *vbt = malloc((size_t)(K * N) * sizeof *vbt);
  for (int64_t k = 0; k < K; k++)
    for (int64_t j = 0; j < N; j++)
      vbt[j * K + k] = vb[k * N + j];
  emlx_array *a = tu_make(d, (int64_t[]){M, K}, 2, va), *b = tu_make(d, (int64_t[]){K, N}, 2, vb);
  emlx_array *w = tu_make(d, (int64_t[]){N, K}, 2, vbt);
  emlx_array *wt = emlx_transpose(w, NULL, 0);
  emlx_array *c = emlx_matmul(a, b), *c2 = emlx_matmul(a, wt);
  int64_t so[2] = {M, N};
  tu_check_array(c, d, so, 2, ref, 1.0, "large x @ W");
  tu_check_array(c2, d, so, 2, ref, 1.0, "large x @ W^T");
  emlx_release(a);
  emlx_release(b);
  emlx_release(w);
  emlx_release(wt);
  emlx_release(c);
  emlx_release(c2);
  free(va);
  free(vb);
  free(vbt);
  free(ref);
}

/* The sgemm route for large f16/bf16 products on AVX2 machines, forced at
 * small sizes (EMLX_MATMUL_KERNEL=avx2-sgemm; elsewhere the default kernel
 * runs the same checks): K on both sides of its chunk of 512 and over
 * several chunks, a batch of products each large enough to thread, a
 * folded batch (A's rows strided), views (transposed, reversed, stepped,
 * batched), NaN and infinities; then one product at its default
 * thresholds. */
static void test_lowp_sgemm(void) {
  setenv("EMLX_MATMUL_KERNEL", "avx2-sgemm", 1);
  for (int t = 0; t < 2; t++) {
    emlx_dtype d = t ? EMLX_BFLOAT16 : EMLX_FLOAT16;
    const int64_t ks[5] = {1, 511, 512, 513, 1100};
    for (int i = 0; i < 5; i++) {
      check_matmul(d, (int64_t[]){37, ks[i]}, 2, (int64_t[]){ks[i], 45}, 2, "sgemm route");
      check_matmul(d, (int64_t[]){1, ks[i]}, 2, (int64_t[]){ks[i], 70}, 2, "sgemm route, M = 1");
    }
    check_matmul(d, (int64_t[]){2, 70, 600}, 3, (int64_t[]){2, 600, 45}, 3, "sgemm route batch");
    check_matmul(d, (int64_t[]){3, 20, 600}, 3, (int64_t[]){600, 45}, 2, "sgemm route folded");
    check_views(d, 33, 530, 40);
    check_views(d, 7, 1030, 5);
    check_nonfinite(d, "sgemm route");
  }
  unsetenv("EMLX_MATMUL_KERNEL");
  for (int t = 0; t < 2; t++) {
    emlx_dtype d = t ? EMLX_BFLOAT16 : EMLX_FLOAT16;
    check_nonfinite(d, "default kernel");
    check_large_lowp(d);
  }
}

static void test_promotion(void) {
  double v[6] = {1, 2, 3, 4, 5, 6};
  emlx_array *a = tu_make(EMLX_INT32, (int64_t[]){2, 3}, 2, v);
  emlx_array *b = tu_make(EMLX_FLOAT16, (int64_t[]){3, 2}, 2, v);
  emlx_array *c = emlx_matmul(a, b);
  double ref[4] = {1 * 1 + 2 * 3 + 3 * 5, 1 * 2 + 2 * 4 + 3 * 6, 4 * 1 + 5 * 3 + 6 * 5,
                   4 * 2 + 5 * 4 + 6 * 6};
  int64_t s22[2] = {2, 2};
  tu_check_array(c, EMLX_FLOAT16, s22, 2, ref, 0.0, "int32 @ f16 promotes to f16");
  emlx_release(c);
  emlx_array *u = tu_make(EMLX_UINT8, (int64_t[]){3, 2}, 2, v);
  c = emlx_matmul(a, u);
  tu_check_array(c, EMLX_INT32, s22, 2, ref, 0.0, "int32 @ uint8 -> int32");
  emlx_release(c);
  emlx_release(a);
  emlx_release(b);
  emlx_release(u);
}

static void test_errors(void) {
  double v[64] = {0};
  emlx_array *a = tu_make(EMLX_FLOAT32, (int64_t[]){3, 4}, 2, v);
  emlx_array *b = tu_make(EMLX_FLOAT32, (int64_t[]){3, 4}, 2, v);
  emlx_array *s = tu_make(EMLX_FLOAT32, NULL, 0, v);
  emlx_array *bb = tu_make(EMLX_FLOAT32, (int64_t[]){2, 4, 3}, 3, v);
  emlx_array *bc = tu_make(EMLX_FLOAT32, (int64_t[]){3, 3, 4}, 3, v);
  emlx_array *bo = tu_make(EMLX_BOOL, (int64_t[]){3, 3}, 2, v);
  CHECK_NULL_ERR(emlx_matmul(NULL, a));
  CHECK_NULL_ERR(emlx_matmul(a, NULL));
  CHECK_NULL_ERR(emlx_matmul(a, b)); /* K 4 vs 3 */
  CHECK_NULL_ERR(emlx_matmul(s, a)); /* 0-d */
  CHECK_NULL_ERR(emlx_matmul(a, s));
  CHECK_NULL_ERR(emlx_matmul(bc, bb)); /* batch 3 vs 2 */
  CHECK_NULL_ERR(emlx_matmul(bo, bo)); /* bool (f32 @ bool promotes to f32) */
  CHECK_NULL_ERR(emlx_tensordot(a, b, (int[]){0}, (int[]){1}, 1, NULL, NULL, 0)); /* 3 vs 4 */
  CHECK_NULL_ERR(emlx_tensordot(a, b, (int[]){2}, (int[]){1}, 1, NULL, NULL, 0));
  CHECK_NULL_ERR(emlx_tensordot(a, b, (int[]){1, 1}, (int[]){1, 0}, 2, NULL, NULL, 0));
  CHECK_NULL_ERR(emlx_tensordot(a, b, (int[]){1}, (int[]){1}, 1, (int[]){1}, (int[]){0}, 1));
  CHECK_NULL_ERR(emlx_tensordot(a, b, NULL, NULL, 1, NULL, NULL, 0));
  CHECK_NULL_ERR(emlx_tensordot(a, b, NULL, NULL, -1, NULL, NULL, 0));
  CHECK_NULL_ERR(emlx_tensordot(a, bb, (int[]){1}, (int[]){1}, 1, (int[]){0}, (int[]){0}, 1));
  CHECK_NULL_ERR(emlx_tensordot_n(a, b, 3));
  int64_t ones[40];
  for (int i = 0; i < 40; i++)
    ones[i] = 1;
  emlx_array *r40 = tu_make(EMLX_FLOAT32, ones, 40, v);
  CHECK_NULL_ERR(emlx_tensordot(r40, r40, NULL, NULL, 0, NULL, NULL, 0)); /* rank 80 */
  emlx_release(r40);
  emlx_release(a);
  emlx_release(b);
  emlx_release(s);
  emlx_release(bb);
  emlx_release(bc);
  emlx_release(bo);
}

/* tensordot against explicit loops over (output index, contracted index). */
static void check_tensordot(emlx_dtype d, const int64_t *sa, int na, const int64_t *sb, int nb,
                            const int *ca, const int *cb, int nc, const int *ba, const int *bbx,
                            int nbt, const char *what) {
  double *va = values(d, tu_numel(sa, na)), *vb = values(d, tu_numel(sb, nb));
  emlx_array *a = tu_make(d, sa, na, va), *b = tu_make(d, sb, nb, vb);
  emlx_array *r = emlx_tensordot(a, b, ca, cb, nc, ba, bbx, nbt);
  int role_a[8] = {0}, role_b[8] = {0}, fa[8], fb[8], nfa = 0, nfb = 0, nca[8], ncb[8];
  for (int i = 0; i < nc; i++) { /* the reference's own copy, negative axes resolved */
    nca[i] = ca[i] < 0 ? ca[i] + na : ca[i];
    ncb[i] = cb[i] < 0 ? cb[i] + nb : cb[i];
  }
  ca = nca;
  cb = ncb;
  for (int i = 0; i < nc; i++)
    role_a[ca[i]] = role_b[cb[i]] = 1;
  for (int i = 0; i < nbt; i++)
    role_a[ba[i]] = role_b[bbx[i]] = 2;
  for (int i = 0; i < na; i++)
    if (!role_a[i])
      fa[nfa++] = i;
  for (int i = 0; i < nb; i++)
    if (!role_b[i])
      fb[nfb++] = i;
  int64_t so[16], sc[16];
  int no = 0;
  for (int i = 0; i < nbt; i++)
    so[no++] = sa[ba[i]];
  for (int i = 0; i < nfa; i++)
    so[no++] = sa[fa[i]];
  for (int i = 0; i < nfb; i++)
    so[no++] = sb[fb[i]];
  for (int i = 0; i < nc; i++)
    sc[i] = sa[ca[i]];
  int64_t nout = tu_numel(so, no), ncon = tu_numel(sc, nc);
  double *ref = malloc((size_t)(nout + 1) * 8);
  for (int64_t o = 0; o < nout; o++) {
    int64_t oi[16], ci[16], ia[8], ib[8];
    tu_unravel(o, so, no, oi);
    for (int i = 0; i < nbt; i++)
      ia[ba[i]] = ib[bbx[i]] = oi[i];
    for (int i = 0; i < nfa; i++)
      ia[fa[i]] = oi[nbt + i];
    for (int i = 0; i < nfb; i++)
      ib[fb[i]] = oi[nbt + nfa + i];
    double s = 0;
    for (int64_t q = 0; q < ncon; q++) {
      tu_unravel(q, sc, nc, ci);
      for (int i = 0; i < nc; i++)
        ia[ca[i]] = ib[cb[i]] = ci[i];
      s += va[tu_ravel(ia, sa, na)] * vb[tu_ravel(ib, sb, nb)];
    }
    ref[o] = s;
  }
  char msg[128];
  snprintf(msg, sizeof msg, "tensordot %s %s", what, tu_dname(d));
  tu_check_array(r, d, so, no, ref, 1.0, msg);
  emlx_release(r);
  emlx_release(a);
  emlx_release(b);
  free(va);
  free(vb);
  free(ref);
}

static void test_tensordot(void) {
  emlx_dtype ds[] = {EMLX_FLOAT32, EMLX_FLOAT64, EMLX_BFLOAT16, EMLX_INT32, EMLX_INT8};
  for (int t = 0; t < 5; t++) {
    emlx_dtype d = ds[t];
    check_tensordot(d, (int64_t[]){2, 3, 4}, 3, (int64_t[]){4, 3, 5}, 3, (int[]){1, 2},
                    (int[]){1, 0}, 2, NULL, NULL, 0, "two contracted");
    check_tensordot(d, (int64_t[]){2, 3, 4}, 3, (int64_t[]){2, 4, 5}, 3, (int[]){2}, (int[]){1}, 1,
                    (int[]){0}, (int[]){0}, 1, "leading batch");
    check_tensordot(d, (int64_t[]){3, 2, 4}, 3, (int64_t[]){4, 5, 2}, 3, (int[]){2}, (int[]){0}, 1,
                    (int[]){1}, (int[]){2}, 1, "batch anywhere");
    check_tensordot(d, (int64_t[]){2, 3}, 2, (int64_t[]){4}, 1, NULL, NULL, 0, NULL, NULL, 0,
                    "outer");
    check_tensordot(d, (int64_t[]){4, 3}, 2, (int64_t[]){4, 5}, 2, (int[]){0}, (int[]){0}, 1, NULL,
                    NULL, 0, "leading contracted (transposed a)");
    check_tensordot(d, (int64_t[]){2, 3, 4, 5}, 4, (int64_t[]){5, 3, 2, 6}, 4, (int[]){3, 1},
                    (int[]){0, 1}, 2, (int[]){0}, (int[]){2}, 1, "mixed");
    check_tensordot(d, (int64_t[]){2, 3}, 2, (int64_t[]){3, 2}, 2, (int[]){0, 1}, (int[]){1, 0}, 2,
                    NULL, NULL, 0, "full contraction");
    check_tensordot(d, (int64_t[]){2, 0}, 2, (int64_t[]){0, 3}, 2, (int[]){1}, (int[]){0}, 1, NULL,
                    NULL, 0, "empty contraction");
    check_tensordot(d, (int64_t[]){2, 3}, 2, (int64_t[]){3, 4}, 2, (int[]){-1}, (int[]){-2}, 1,
                    NULL, NULL, 0, "negative axes");
  }
  /* tensordot_n */
  double *va = values(EMLX_FLOAT32, 24), *vb = values(EMLX_FLOAT32, 60);
  emlx_array *a = tu_make(EMLX_FLOAT32, (int64_t[]){2, 3, 4}, 3, va);
  emlx_array *b = tu_make(EMLX_FLOAT32, (int64_t[]){3, 4, 5}, 3, vb);
  emlx_array *r = emlx_tensordot_n(a, b, 2);
  double ref[10] = {0};
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 5; j++)
      for (int k = 0; k < 12; k++)
        ref[i * 5 + j] += va[i * 12 + k] * vb[k * 5 + j];
  int64_t s25[2] = {2, 5};
  tu_check_array(r, EMLX_FLOAT32, s25, 2, ref, 1.0, "tensordot_n 2");
  emlx_release(r);
  emlx_release(a);
  emlx_release(b);
  free(va);
  free(vb);
}

/* complex64 with non-zero imaginary parts (through BLAS, GEMM and GEMV). */
static void test_complex(void) {
  int64_t M = 5, K = 7, N = 4;
  float a[5 * 7 * 2], b[7 * 4 * 2], x[7 * 2];
  for (int i = 0; i < M * K * 2; i++)
    a[i] = (float)tu_randint(&rng, -8, 8) * 0.25f;
  for (int i = 0; i < K * N * 2; i++)
    b[i] = (float)tu_randint(&rng, -8, 8) * 0.25f;
  for (int i = 0; i < K * 2; i++)
    x[i] = (float)tu_randint(&rng, -8, 8) * 0.25f;
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sx[1] = {K};
  emlx_array *ea = emlx_from_blob(a, EMLX_COMPLEX64, sa, 2, EMLX_CPU);
  emlx_array *eb = emlx_from_blob(b, EMLX_COMPLEX64, sb, 2, EMLX_CPU);
  emlx_array *ex = emlx_from_blob(x, EMLX_COMPLEX64, sx, 1, EMLX_CPU);
  emlx_array *c = emlx_matmul(ea, eb), *y = emlx_matmul(ea, ex);
  float got[5 * 4 * 2], goty[5 * 2];
  CHECK_OK(emlx_to_blob(c, got, sizeof got));
  CHECK_OK(emlx_to_blob(y, goty, sizeof goty));
  int bad = 0;
  for (int64_t i = 0; i < M; i++) {
    double yr = 0, yi = 0;
    for (int64_t j = 0; j < N; j++) {
      double re = 0, im = 0;
      for (int64_t k = 0; k < K; k++) {
        double ar = a[(i * K + k) * 2], ai = a[(i * K + k) * 2 + 1];
        double br = b[(k * N + j) * 2], bi = b[(k * N + j) * 2 + 1];
        re += ar * br - ai * bi;
        im += ar * bi + ai * br;
      }
      bad += got[(i * N + j) * 2] != (float)re || got[(i * N + j) * 2 + 1] != (float)im;
    }
    for (int64_t k = 0; k < K; k++) {
      double ar = a[(i * K + k) * 2], ai = a[(i * K + k) * 2 + 1];
      double xr = x[2 * k], xi = x[2 * k + 1];
      yr += ar * xr - ai * xi;
      yi += ar * xi + ai * xr;
    }
    bad += goty[2 * i] != (float)yr || goty[2 * i + 1] != (float)yi;
  }
  CHECK_MSG(bad == 0, "complex64 matmul and matvec with imaginary parts: %d wrong", bad);
  emlx_release(ea);
  emlx_release(eb);
  emlx_release(ex);
  emlx_release(c);
  emlx_release(y);
}

int main(void) {
  test_complex();
  test_shapes();
  test_views();
  test_lowp_kernels();
  test_lowp_sgemm();
  test_random_values(EMLX_FLOAT32, 1e-12);
  test_random_values(EMLX_COMPLEX64, 1e-12);
  test_promotion();
  test_tensordot();
  test_errors();
  return tu_finish();
}
