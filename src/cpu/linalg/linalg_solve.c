/* linalg_solve.c — the INV, TRI_INV, SOLVE and SOLVE_TRIANGULAR kernels.
 *
 * All four work on the transpose trick of linalg_cpu.h: a row-major copy of
 * A is A^T to LAPACK, and inv(A^T) = inv(A)^T, so getrf + getri (or trtri)
 * on that copy leave inv(A) in row-major order with no transposition.
 * SOLVE factors A^T = P L U the same way; then A = U^T L^T P^T, and
 * x = P (L^T)^-1 (U^T)^-1 b is two row-major triangular solves (U^T is the
 * lower triangle of the row-major factor, L^T its unit upper triangle) and
 * the row interchanges undone in reverse order, all on b's row-major copy,
 * which is the output. */
#include <string.h>

#include "linalg_cpu.h"

typedef struct sq_ctx {
  const emlx_array *a, *b;
  emlx_array *out;
  emlx_dtype dt;
  int64_t n, rows, cols; /* SOLVE*: the right-hand side's extent */
  const emlx_linalg_params *p;
  la_work w;
} sq_ctx;

/* True when element (i, i) of the row-major n x n matrix at p is zero; the
 * index of the first such diagonal element, or -1. */
static int64_t zero_diagonal(emlx_dtype dt, const void *p, int64_t n, int64_t ld) {
  for (int64_t i = 0; i < n; i++) {
    int64_t at = i * ld + i;
    bool zero;
    if (dt == EMLX_FLOAT32)
      zero = ((const float *)p)[at] == 0.0f;
    else if (dt == EMLX_FLOAT64)
      zero = ((const double *)p)[at] == 0.0;
    else if (dt == EMLX_COMPLEX128)
      zero = ((const double *)p)[2 * at] == 0.0 && ((const double *)p)[2 * at + 1] == 0.0;
    else
      zero = ((const float *)p)[2 * at] == 0.0f && ((const float *)p)[2 * at + 1] == 0.0f;
    if (zero)
      return i;
  }
  return -1;
}

/* ---- INV ------------------------------------------------------------------------------ */

static int inv_one(la_job *job, int64_t b, void *scratch) {
  sq_ctx *c = job->ctx;
  int n = (int)c->n;
  int64_t rs, cs;
  const void *src = la_matrix(c->a, b, &rs, &cs);
  void *dst = la_out_matrix(c->out, b, c->n * c->n);
  la_copy(la_esize(c->dt), src, n, n, rs, cs, dst, n, 1);
  int *ipiv = scratch;
  void *work = (char *)scratch + la_align((size_t)n * sizeof(int));
  int info = la_getrf(c->dt, n, n, dst, n, ipiv);
  if (info == 0)
    info = la_getri(c->dt, n, dst, n, ipiv, work, (int)c->w.work);
  if (info > 0)
    return la_fail(job, b, "is singular (pivot %d of its LU factorisation is zero)", info - 1);
  if (info < 0)
    return la_fail(job, b, "was rejected by LAPACK (argument %d)", -info);
  return 0;
}

int emlx_cpu_inv(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  sq_ctx c = {.a = in[0], .out = out[0], .dt = in[0]->dtype, .n = in[0]->shape[in[0]->ndim - 1]};
  const char *op = emlx_prim_table[node->prim].name;
  if (!la_fits_int(c.n, c.n))
    return la_too_large(op, c.n, c.n);
  if (emlx__array_alloc_data(c.out) != 0)
    return -1;
  if (c.out->size == 0)
    return 0;
  if (la_getri_query(c.dt, (int)c.n, &c.w) != 0)
    return la_too_large(op, c.n, c.n);
  size_t scratch = la_align((size_t)c.n * sizeof(int)) + (size_t)c.w.work * la_esize(c.dt);
  la_job job;
  la_job_init(&job, op, la_batch_count(in[0]), c.n, scratch, inv_one, &c);
  return la_run(&job);
}

/* ---- TRI_INV -------------------------------------------------------------------------- */

static int tri_inv_one(la_job *job, int64_t b, void *scratch) {
  (void)scratch;
  sq_ctx *c = job->ctx;
  int n = (int)c->n;
  int64_t rs, cs;
  const void *src = la_matrix(c->a, b, &rs, &cs);
  void *dst = la_out_matrix(c->out, b, c->n * c->n);
  la_copy(la_esize(c->dt), src, n, n, rs, cs, dst, n, 1);
  /* Row-major upper is column-major lower. */
  int info = la_trtri(c->dt, c->p->upper ? 'L' : 'U', n, dst, n);
  if (info > 0)
    return la_fail(job, b, "is singular (diagonal element %d is zero)", info - 1);
  if (info < 0)
    return la_fail(job, b, "was rejected by LAPACK (argument %d)", -info);
  la_zero_triangle(la_esize(c->dt), dst, n, n, n, c->p->upper);
  return 0;
}

int emlx_cpu_tri_inv(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  sq_ctx c = {.a = in[0],
              .out = out[0],
              .dt = in[0]->dtype,
              .n = in[0]->shape[in[0]->ndim - 1],
              .p = emlx__params(node)};
  const char *op = emlx_prim_table[node->prim].name;
  if (!la_fits_int(c.n, c.n))
    return la_too_large(op, c.n, c.n);
  if (emlx__array_alloc_data(c.out) != 0)
    return -1;
  if (c.out->size == 0)
    return 0;
  la_job job;
  la_job_init(&job, op, la_batch_count(in[0]), c.n, 0, tri_inv_one, &c);
  return la_run(&job);
}

/* ---- SOLVE ------------------------------------------------------------------------------ */

/* Undoes getrf's interchanges on the rows of x (n x r, row-major), last
 * first: x = P z with P = P_0 P_1 ... P_{n-1}. */
static void apply_pivots_reverse(size_t es, void *x, int64_t n, int64_t r, const int *ipiv) {
  char *base = x;
  size_t row = (size_t)r * es;
  for (int64_t i = n - 1; i >= 0; i--) {
    int64_t p = ipiv[i] - 1;
    if (p == i)
      continue;
    char *a = base + (size_t)i * row, *b = base + (size_t)p * row;
    for (size_t k = 0; k < row; k++) {
      char t = a[k];
      a[k] = b[k];
      b[k] = t;
    }
  }
}

static int solve_one(la_job *job, int64_t b, void *scratch) {
  sq_ctx *c = job->ctx;
  int n = (int)c->n, r = (int)c->cols;
  size_t es = la_esize(c->dt);
  int64_t rs, cs;
  char *f = scratch;
  int *ipiv = (int *)(void *)(f + la_align((size_t)(c->n * c->n) * es));
  const void *src = la_matrix(c->a, b, &rs, &cs);
  la_copy(es, src, n, n, rs, cs, f, n, 1);
  int info = la_getrf(c->dt, n, n, f, n, ipiv);
  if (info > 0)
    return la_fail(job, b, "is singular (pivot %d of its LU factorisation is zero)", info - 1);
  if (info < 0)
    return la_fail(job, b, "was rejected by LAPACK (argument %d)", -info);
  void *x = la_out_matrix(c->out, b, c->n * c->cols);
  src = la_matrix(c->b, b, &rs, &cs);
  la_copy(es, src, n, r, rs, cs, x, r, 1);
  if (r == 1) {
    la_trsv(c->dt, 'L', 'N', 'N', n, f, n, x, 1);
    la_trsv(c->dt, 'U', 'N', 'U', n, f, n, x, 1);
  } else {
    la_trsm(c->dt, 'L', 'L', 'N', 'N', n, r, f, n, x, r);
    la_trsm(c->dt, 'L', 'U', 'N', 'U', n, r, f, n, x, r);
  }
  apply_pivots_reverse(es, x, n, r, ipiv);
  return 0;
}

int emlx_cpu_solve(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_array *a = in[0], *b = in[1];
  sq_ctx c = {.a = a,
              .b = b,
              .out = out[0],
              .dt = a->dtype,
              .n = a->shape[a->ndim - 1],
              .cols = b->shape[b->ndim - 1]};
  const char *op = emlx_prim_table[node->prim].name;
  if (!la_fits_int(c.n, c.n))
    return la_too_large(op, c.n, c.n);
  if (!la_fits_int(c.n, c.cols))
    return la_too_large(op, c.n, c.cols);
  if (emlx__array_alloc_data(c.out) != 0)
    return -1;
  if (c.out->size == 0)
    return 0;
  size_t es = la_esize(c.dt);
  size_t scratch = la_align((size_t)(c.n * c.n) * es) + (size_t)c.n * sizeof(int);
  la_job job;
  la_job_init(&job, op, la_batch_count(out[0]), c.n, scratch, solve_one, &c);
  return la_run(&job);
}

/* ---- SOLVE_TRIANGULAR ------------------------------------------------------------------- */

static int solve_tri_one(la_job *job, int64_t b, void *scratch) {
  sq_ctx *c = job->ctx;
  const emlx_linalg_params *p = c->p;
  int n = (int)c->n, rows = (int)c->rows, cols = (int)c->cols;
  size_t es = la_esize(c->dt);
  int64_t rs, cs;
  const void *a = la_matrix(c->a, b, &rs, &cs);
  int lda = n;
  if (cs == 1 && rs >= n && rs <= INT32_MAX && n > 0) {
    lda = (int)rs; /* BLAS reads this layout in place */
  } else {
    la_copy(es, a, n, n, rs, cs, scratch, n, 1);
    a = scratch;
  }
  if (!p->unit_diagonal) {
    int64_t z = zero_diagonal(c->dt, a, n, lda);
    if (z >= 0)
      return la_fail(job, b, "is singular (diagonal element %lld is zero)", (long long)z);
  }
  void *x = la_out_matrix(c->out, b, c->rows * c->cols);
  const void *src = la_matrix(c->b, b, &rs, &cs);
  la_copy(es, src, rows, cols, rs, cs, x, cols, 1);
  char uplo = p->upper ? 'U' : 'L', diag = p->unit_diagonal ? 'U' : 'N';
  char trans = p->transpose == EMLX_LINALG_NO_TRANSPOSE                         ? 'N'
               : p->transpose == EMLX_LINALG_TRANSPOSE || !la_is_complex(c->dt) ? 'T'
                                                                                : 'C';
  if (!p->right_side && cols == 1)
    la_trsv(c->dt, uplo, trans, diag, n, a, lda, x, 1);
  else
    la_trsm(c->dt, p->right_side ? 'R' : 'L', uplo, trans, diag, rows, cols, a, lda, x, cols);
  return 0;
}

int emlx_cpu_solve_triangular(const emlx_node *node, emlx_array *const *in,
                              emlx_array *const *out) {
  const emlx_array *a = in[0], *b = in[1];
  sq_ctx c = {.a = a,
              .b = b,
              .out = out[0],
              .dt = a->dtype,
              .n = a->shape[a->ndim - 1],
              .rows = b->shape[b->ndim - 2],
              .cols = b->shape[b->ndim - 1],
              .p = emlx__params(node)};
  const char *op = emlx_prim_table[node->prim].name;
  if (!la_fits_int(c.n, c.n))
    return la_too_large(op, c.n, c.n);
  if (!la_fits_int(c.rows, c.cols))
    return la_too_large(op, c.rows, c.cols);
  if (emlx__array_alloc_data(c.out) != 0)
    return -1;
  if (c.out->size == 0)
    return 0;
  size_t scratch = (size_t)(c.n * c.n) * la_esize(c.dt);
  la_job job;
  la_job_init(&job, op, la_batch_count(out[0]), c.n, scratch, solve_tri_one, &c);
  return la_run(&job);
}
