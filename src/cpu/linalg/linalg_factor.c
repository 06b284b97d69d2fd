/* linalg_factor.c — the CHOLESKY, LU and QR kernels.
 *
 * CHOLESKY uses the transpose trick of linalg_cpu.h (potrf of the row-major
 * copy with the other triangle): for Hermitian A, the column-major view of
 * a row-major copy is conj(A), and potrf's 'U' factor of it, read back
 * row-major, is exactly the lower L with L L^H = A (and 'L' gives the upper
 * U with U^H U = A). LU and QR need the factorisation of A itself, so A is
 * copied into column-major scratch and the factors are copied back out. */
#include <math.h>
#include <string.h>

#include "linalg_cpu.h"

typedef struct fac_ctx {
  const emlx_array *a;
  emlx_array *const *out;
  emlx_dtype dt;
  int64_t m, n, k, qcols, rrows;
  const emlx_linalg_params *p;
  size_t tau_off, work_off; /* QR: offsets in the scratch */
  la_work w;
} fac_ctx;

/* The first diagonal element (row-major n x n) that is not > 0 (NaN
 * included; complex: the real part), or -1. */
static int positive_diagonal(emlx_dtype dt, const void *p, int n) {
  for (int i = 0; i < n; i++) {
    int64_t at = (int64_t)i * n + i;
    double d = dt == EMLX_FLOAT64      ? ((const double *)p)[at]
               : dt == EMLX_FLOAT32    ? (double)((const float *)p)[at]
               : dt == EMLX_COMPLEX128 ? ((const double *)p)[2 * at]
                                       : (double)((const float *)p)[2 * at];
    if (!(d > 0))
      return i;
  }
  return -1;
}

/* ---- CHOLESKY --------------------------------------------------------------------------- */

static int cholesky_one(la_job *job, int64_t b, void *scratch) {
  (void)scratch;
  fac_ctx *c = job->ctx;
  int n = (int)c->n;
  int64_t rs, cs;
  const void *src = la_matrix(c->a, b, &rs, &cs);
  void *dst = la_out_matrix(c->out[0], b, c->n * c->n);
  la_copy(la_esize(c->dt), src, n, n, rs, cs, dst, n, 1);
  int info = la_potrf(c->dt, c->p->upper ? 'L' : 'U', n, dst, n);
  if (info > 0)
    return la_fail(job, b, "is not positive definite (its leading minor of order %d is not)", info);
  if (info < 0)
    return la_fail(job, b, "was rejected by LAPACK (argument %d)", -info);
  /* OpenBLAS's own potrf lets NaN through where LAPACK's stops; a factor
   * needs a positive diagonal either way. */
  int bad = positive_diagonal(c->dt, dst, n);
  if (bad >= 0)
    return la_fail(job, b, "is not positive definite (its leading minor of order %d is not)",
                   bad + 1);
  la_zero_triangle(la_esize(c->dt), dst, n, n, n, c->p->upper);
  return 0;
}

int emlx_cpu_cholesky(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  fac_ctx c = {.a = in[0],
               .out = out,
               .dt = in[0]->dtype,
               .n = in[0]->shape[in[0]->ndim - 1],
               .p = emlx__params(node)};
  const char *op = emlx_prim_table[node->prim].name;
  if (!la_fits_int(c.n, c.n))
    return la_too_large(op, c.n, c.n);
  if (emlx__array_alloc_data(out[0]) != 0)
    return -1;
  if (out[0]->size == 0)
    return 0;
  la_job job;
  la_job_init(&job, op, la_batch_count(in[0]), c.n, 0, cholesky_one, &c);
  return la_run(&job);
}

/* ---- LU ---------------------------------------------------------------------------------- */

/* Real LU as Nx's (Nx.LinAlg.LU, which Nx.BinaryBackend runs, so Nx's
 * results are its bits): right-looking elimination with partial pivoting
 * on the column-major m x n matrix f. Step c takes the first row i >= c of
 * largest |f[i][c]| as the pivot and swaps whole rows, divides the column
 * below the pivot by it (unless it is 0), then updates the trailing block
 * a[i][j] = a[i][j] - l[i] * u[j] with the product and the difference each
 * rounded (no fused multiply-add; -std=c11 keeps GCC from contracting, and
 * the product is its own statement). getrf multiplies by the reciprocal and
 * fuses, so its factors differ from Nx's in the last bit. Writes getrf's
 * layout: L below the diagonal (unit diagonal implied), U on and above, ipiv
 * 1-based.
 *
 * The same arithmetic is scheduled by panels of NX_LU_NB columns (left-
 * looking): a panel first takes the row swaps of the earlier steps, then
 * their updates in step order, then is factored with updates inside it.
 * Every element sees the same operations on the same operands in the same
 * order as in the one-step-at-a-time schedule (a swap moves a row's L
 * entries with its data, and rows above a step are never swapped again),
 * so the bits are the same; the panel stays in cache while the L columns
 * stream past it once. */
#define NX_LU_NB 32
#define NX_GETRF(NAME, T, ABS)                                                                     \
  static void NAME(int m, int n, T *f, int *ipiv) {                                                \
    int k = m < n ? m : n;                                                                         \
    for (int j0 = 0; j0 < n; j0 += NX_LU_NB) {                                                     \
      int j1 = j0 + NX_LU_NB < n ? j0 + NX_LU_NB : n, done = j0 < k ? j0 : k;                      \
      for (int c = 0; c < done; c++) {                                                             \
        int p = ipiv[c] - 1;                                                                       \
        if (p != c)                                                                                \
          for (int j = j0; j < j1; j++) {                                                          \
            T *cj = f + (size_t)j * (size_t)m, t = cj[c];                                          \
            cj[c] = cj[p];                                                                         \
            cj[p] = t;                                                                             \
          }                                                                                        \
      }                                                                                            \
      for (int c = 0; c < done; c++) {                                                             \
        const T *col = f + (size_t)c * (size_t)m;                                                  \
        for (int j = j0; j < j1; j++) {                                                            \
          T *cj = f + (size_t)j * (size_t)m, u = cj[c];                                            \
          for (int i = c + 1; i < m; i++) {                                                        \
            T prod = col[i] * u;                                                                   \
            cj[i] = cj[i] - prod;                                                                  \
          }                                                                                        \
        }                                                                                          \
      }                                                                                            \
      for (int c = j0; c < j1 && c < k; c++) {                                                     \
        T *col = f + (size_t)c * (size_t)m;                                                        \
        int piv = c;                                                                               \
        T best = ABS(col[c]);                                                                      \
        for (int i = c + 1; i < m; i++)                                                            \
          if (ABS(col[i]) > best) {                                                                \
            best = ABS(col[i]);                                                                    \
            piv = i;                                                                               \
          }                                                                                        \
        ipiv[c] = piv + 1;                                                                         \
        if (piv != c)                                                                              \
          for (int j = 0; j < j1; j++) {                                                           \
            T *cj = f + (size_t)j * (size_t)m, t = cj[c];                                          \
            cj[c] = cj[piv];                                                                       \
            cj[piv] = t;                                                                           \
          }                                                                                        \
        T d = col[c];                                                                              \
        if (d != 0)                                                                                \
          for (int i = c + 1; i < m; i++)                                                          \
            col[i] = col[i] / d;                                                                   \
        for (int j = c + 1; j < j1; j++) {                                                         \
          T *cj = f + (size_t)j * (size_t)m, u = cj[c];                                            \
          for (int i = c + 1; i < m; i++) {                                                        \
            T prod = col[i] * u;                                                                   \
            cj[i] = cj[i] - prod;                                                                  \
          }                                                                                        \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }
NX_GETRF(nx_getrf_f32, float, fabsf)
NX_GETRF(nx_getrf_f64, double, fabs)

/* Scratch: the column-major factor (m x n), then getrf's pivots (k). */
static int lu_one(la_job *job, int64_t b, void *scratch) {
  fac_ctx *c = job->ctx;
  int m = (int)c->m, n = (int)c->n, k = (int)c->k;
  size_t es = la_esize(c->dt);
  char *f = scratch;
  int *ipiv = (int *)(void *)(f + la_align((size_t)(c->m * c->n) * es));
  int64_t rs, cs;
  const void *src = la_matrix(c->a, b, &rs, &cs);
  la_copy(es, src, m, n, rs, cs, f, 1, m);
  if (k > 0 && c->dt == EMLX_FLOAT32) {
    nx_getrf_f32(m, n, (float *)(void *)f, ipiv);
  } else if (k > 0 && c->dt == EMLX_FLOAT64) {
    nx_getrf_f64(m, n, (double *)(void *)f, ipiv);
  } else if (k > 0) {
    int info = la_getrf(c->dt, m, n, f, m, ipiv);
    if (info < 0)
      return la_fail(job, b, "was rejected by LAPACK (argument %d)", -info);
    /* info > 0: U has a zero pivot; the factorisation is still complete. */
  }
  if (c->p->compact) {
    void *lu = la_out_matrix(c->out[0], b, c->m * c->n);
    uint32_t *piv = la_out_matrix(c->out[1], b, c->k);
    if (lu)
      la_copy(es, f, m, n, 1, m, lu, n, 1);
    if (piv)
      for (int i = 0; i < k; i++)
        piv[i] = (uint32_t)(ipiv[i] - 1);
    return 0;
  }
  uint32_t *p = la_out_matrix(c->out[0], b, c->m);
  void *l = la_out_matrix(c->out[1], b, c->m * c->k);
  void *u = la_out_matrix(c->out[2], b, c->k * c->n);
  if (p) {
    /* perm: row j of L U is row perm[j] of A; p is its inverse. */
    uint32_t *perm = (uint32_t *)(void *)((char *)ipiv + la_align((size_t)c->k * sizeof(int)));
    for (int i = 0; i < m; i++)
      perm[i] = (uint32_t)i;
    for (int i = 0; i < k; i++) {
      uint32_t t = perm[i];
      perm[i] = perm[ipiv[i] - 1];
      perm[ipiv[i] - 1] = t;
    }
    for (int j = 0; j < m; j++)
      p[perm[j]] = (uint32_t)j;
  }
  if (l) {
    la_copy(es, f, m, k, 1, m, l, k, 1);
    la_zero_triangle(es, l, m, k, k, false);
    for (int i = 0; i < k; i++)
      la_store_one(c->dt, (char *)l + (size_t)(i * k + i) * es);
  }
  if (u) {
    la_copy(es, f, k, n, 1, m, u, n, 1);
    la_zero_triangle(es, u, k, n, n, true);
  }
  return 0;
}

int emlx_cpu_lu(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_array *a = in[0];
  fac_ctx c = {.a = a,
               .out = out,
               .dt = a->dtype,
               .m = a->shape[a->ndim - 2],
               .n = a->shape[a->ndim - 1],
               .p = emlx__params(node)};
  c.k = c.m < c.n ? c.m : c.n;
  const char *op = emlx_prim_table[node->prim].name;
  if (!la_fits_int(c.m, c.n))
    return la_too_large(op, c.m, c.n);
  if (la_alloc_outputs(out, c.p->compact ? 2 : 3) != 0)
    return -1;
  size_t es = la_esize(c.dt);
  size_t scratch = la_align((size_t)(c.m * c.n) * es) + la_align((size_t)c.k * sizeof(int)) +
                   (size_t)c.m * sizeof(uint32_t);
  la_job job;
  la_job_init(&job, op, la_batch_count(a), c.m > c.n ? c.m : c.n, scratch, lu_one, &c);
  return la_run(&job);
}

/* ---- QR ------------------------------------------------------------------------------------ */

/* Scratch: the column-major factor (m x max(n, qcols), so that orgqr can
 * grow the complete Q in place), tau (k), LAPACK's work. */
static int qr_one(la_job *job, int64_t b, void *scratch) {
  fac_ctx *c = job->ctx;
  int m = (int)c->m, n = (int)c->n, k = (int)c->k, qcols = (int)c->qcols;
  size_t es = la_esize(c->dt);
  char *f = scratch, *tau = f + c->tau_off, *work = f + c->work_off;
  void *q = la_out_matrix(c->out[0], b, c->m * c->qcols);
  void *r = la_out_matrix(c->out[1], b, c->rrows * c->n);
  if (k == 0) { /* nothing to factor; a complete Q is the identity */
    if (q && qcols > 0)
      la_identity(c->dt, q, m);
    return 0;
  }
  int64_t rs, cs;
  const void *src = la_matrix(c->a, b, &rs, &cs);
  la_copy(es, src, m, n, rs, cs, f, 1, m);
  int info = la_geqrf(c->dt, m, n, f, m, tau, work, (int)c->w.work);
  if (info < 0)
    return la_fail(job, b, "was rejected by LAPACK (argument %d)", -info);
  if (r) {
    la_copy(es, f, k, n, 1, m, r, n, 1);
    la_zero_triangle(es, r, k, n, n, true);
    if (c->rrows > k)
      memset((char *)r + (size_t)(k * n) * es, 0, (size_t)((c->rrows - k) * n) * es);
  }
  if (q) {
    info = la_orgqr(c->dt, m, qcols, k, f, m, tau, work, (int)c->w.work);
    if (info < 0)
      return la_fail(job, b, "was rejected by LAPACK (argument %d)", -info);
    la_copy(es, f, m, qcols, 1, m, q, qcols, 1);
  }
  return 0;
}

int emlx_cpu_qr(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_array *a = in[0];
  fac_ctx c = {.a = a,
               .out = out,
               .dt = a->dtype,
               .m = a->shape[a->ndim - 2],
               .n = a->shape[a->ndim - 1],
               .p = emlx__params(node)};
  c.k = c.m < c.n ? c.m : c.n;
  c.qcols = c.p->full ? c.m : c.k;
  c.rrows = c.p->full ? c.m : c.k;
  const char *op = emlx_prim_table[node->prim].name;
  int64_t fcols = c.n > c.qcols ? c.n : c.qcols;
  if (!la_fits_int(c.m, fcols))
    return la_too_large(op, c.m, fcols);
  if (la_alloc_outputs(out, 2) != 0)
    return -1;
  c.w.work = 1;
  if (c.k > 0) {
    la_work wq, wo = {1, 0, 0};
    if (la_geqrf_query(c.dt, (int)c.m, (int)c.n, &wq) != 0 ||
        (out[0] && la_orgqr_query(c.dt, (int)c.m, (int)c.qcols, (int)c.k, &wo) != 0))
      return la_too_large(op, c.m, c.n);
    c.w.work = wq.work > wo.work ? wq.work : wo.work;
  }
  size_t es = la_esize(c.dt);
  c.tau_off = la_align((size_t)(c.m * fcols) * es);
  c.work_off = c.tau_off + la_align((size_t)c.k * es);
  la_job job;
  la_job_init(&job, op, la_batch_count(a), c.m > c.n ? c.m : c.n,
              c.work_off + (size_t)c.w.work * es, qr_one, &c);
  return la_run(&job);
}
