/* linalg_spectral.c — the SVD, PINV and EIGH kernels.
 *
 * SVD runs gesdd on the row-major copy of A, which LAPACK reads as B = A^T
 * (n x m). From B = U' S VT' follows A = VT'^T S U'^T, and a column-major
 * matrix is its transpose in row-major order, so LAPACK writes U' straight
 * into the row-major Vt output and VT' into the row-major U output: no
 * transposing copies at all (complex too: the transposes are plain ones).
 * PINV takes the same reduced SVD and forms Vt^H diag(1/s) U^H with one
 * GEMM. EIGH runs syevd / heevd on the row-major copy (A^T = conj(A) for a
 * Hermitian A, the other triangle selected); the eigenvectors of conj(A) are
 * the conjugates of A's, copied out transposed (columns are vectors). */
#include <string.h>

#include "linalg_cpu.h"

typedef struct spec_ctx {
  const emlx_array *a;
  emlx_array *const *out;
  emlx_dtype dt;
  int64_t m, n, k, ucols, vrows;
  const emlx_linalg_params *p;
  char jobz;
  la_work w;
  /* scratch offsets (bytes) */
  size_t s_off, u_off, vt_off, work_off, rwork_off, iwork_off, inv_off;
} spec_ctx;

/* Lays out the scratch after the matrix copy (m x n): singular values (k),
 * U (m x ucols), Vt (vrows x n), then LAPACK's work, rwork and iwork. */
static size_t layout_scratch(spec_ctx *c) {
  size_t es = la_esize(c->dt), rs = la_esize(la_real_dtype(c->dt));
  size_t at = la_align((size_t)(c->m * c->n) * es);
  c->s_off = at;
  at += la_align((size_t)c->k * rs);
  c->u_off = at;
  at += la_align((size_t)(c->m * c->ucols) * es);
  c->vt_off = at;
  at += la_align((size_t)(c->vrows * c->n) * es);
  c->work_off = at;
  at += la_align((size_t)c->w.work * es);
  c->rwork_off = at;
  at += la_align((size_t)c->w.rwork * rs);
  c->iwork_off = at;
  return at + (size_t)c->w.iwork * sizeof(int);
}

/* gesdd on the row-major copy of matrix b; s, u (m x ucols) and vt (vrows x
 * n) as given (u and vt unused for jobz 'N'). */
static int svd_compute(la_job *job, int64_t b, char *scratch, void *s, void *u, void *vt) {
  spec_ctx *c = job->ctx;
  int m = (int)c->m, n = (int)c->n;
  size_t es = la_esize(c->dt);
  int64_t rs, cs;
  const void *src = la_matrix(c->a, b, &rs, &cs);
  la_copy(es, src, m, n, rs, cs, scratch, n, 1);
  /* gesdd rejects NaN (as an invalid argument) or loops on it */
  if (!la_finite(c->dt, scratch, m, n, 0))
    return la_fail(job, b, "contains NaN or infinity (no SVD)");
  int ldvt = c->jobz == 'N' ? 1 : (int)c->ucols; /* VT' is the row-major U */
  int info =
      la_gesdd(c->dt, c->jobz, n, m, scratch, n, s, vt, n, u, ldvt, &c->w, scratch + c->work_off,
               scratch + c->rwork_off, (int *)(void *)(scratch + c->iwork_off));
  if (info > 0)
    return la_fail(job, b, "has an SVD that did not converge (gesdd info %d)", info);
  if (info < 0)
    return la_fail(job, b, "was rejected by LAPACK (argument %d)", -info);
  return 0;
}

/* Prepares c for gesdd (jobz) on m x n matrices and sets *scratch to the
 * scratch size. Returns 0, or -1 with an error set. */
static int svd_prepare(spec_ctx *c, const char *op, size_t *scratch) {
  c->w = (la_work){0, 0, 0};
  if (c->k > 0 && la_gesdd_query(c->dt, c->jobz, (int)c->n, (int)c->m, &c->w) != 0)
    return la_too_large(op, c->m, c->n);
  *scratch = layout_scratch(c);
  return 0;
}

/* ---- SVD ------------------------------------------------------------------------------------ */

static int svd_one(la_job *job, int64_t b, void *scratch) {
  spec_ctx *c = job->ctx;
  char *sc = scratch;
  bool uv = c->p->vectors;
  void *u = uv ? la_out_matrix(c->out[0], b, c->m * c->ucols) : NULL;
  void *s = la_out_matrix(c->out[uv ? 1 : 0], b, c->k);
  void *vt = uv ? la_out_matrix(c->out[2], b, c->vrows * c->n) : NULL;
  if (c->k == 0) { /* full U and Vt of an empty matrix are identities */
    if (u && c->ucols > 0)
      la_identity(c->dt, u, c->m);
    if (vt && c->vrows > 0)
      la_identity(c->dt, vt, c->n);
    return 0;
  }
  return svd_compute(job, b, sc, s ? s : sc + c->s_off, u ? u : sc + c->u_off,
                     vt ? vt : sc + c->vt_off);
}

int emlx_cpu_svd(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_array *a = in[0];
  spec_ctx c = {.a = a,
                .out = out,
                .dt = a->dtype,
                .m = a->shape[a->ndim - 2],
                .n = a->shape[a->ndim - 1],
                .p = emlx__params(node)};
  const char *op = emlx_prim_table[node->prim].name;
  c.k = c.m < c.n ? c.m : c.n;
  bool uv = c.p->vectors;
  c.ucols = !uv ? 0 : c.p->full ? c.m : c.k;
  c.vrows = !uv ? 0 : c.p->full ? c.n : c.k;
  c.jobz = !uv ? 'N' : c.p->full ? 'A' : 'S';
  int64_t big = c.m > c.n ? c.m : c.n;
  if (!la_fits_int(c.m, c.n) || (uv && c.p->full && !la_fits_int(big, big)))
    return la_too_large(op, c.m, c.n);
  if (la_alloc_outputs(out, uv ? 3 : 1) != 0)
    return -1;
  size_t scratch = 0;
  if (svd_prepare(&c, op, &scratch) != 0)
    return -1;
  la_job job;
  la_job_init(&job, op, la_batch_count(a), big, scratch, svd_one, &c);
  return la_run(&job);
}

/* ---- PINV ----------------------------------------------------------------------------------- */

/* Scales row i of the row-major k x n matrix v by f[i] (real). */
static void scale_rows(emlx_dtype dt, void *v, int64_t k, int64_t n, const double *f) {
  for (int64_t i = 0; i < k; i++) {
    if (dt == EMLX_FLOAT64 || dt == EMLX_COMPLEX128) {
      int64_t len = dt == EMLX_COMPLEX128 ? 2 * n : n;
      double *row = (double *)v + i * len;
      for (int64_t j = 0; j < len; j++)
        row[j] *= f[i];
    } else {
      int64_t len = dt == EMLX_COMPLEX64 ? 2 * n : n;
      float *row = (float *)v + i * len, g = (float)f[i];
      for (int64_t j = 0; j < len; j++)
        row[j] *= g;
    }
  }
}

static int pinv_one(la_job *job, int64_t b, void *scratch) {
  spec_ctx *c = job->ctx;
  char *sc = scratch;
  int64_t m = c->m, n = c->n, k = c->k;
  void *out = la_out_matrix(c->out[0], b, n * m);
  if (k == 0)
    return 0; /* the output is empty */
  void *s = sc + c->s_off, *u = sc + c->u_off, *vt = sc + c->vt_off;
  if (svd_compute(job, b, sc, s, u, vt) != 0)
    return -1;
  /* 1/s over the values kept; the rest of the factors contribute nothing. */
  double *inv = (double *)(void *)(sc + c->inv_off), smax;
  bool wide = la_real_dtype(c->dt) == EMLX_FLOAT64;
  smax = wide ? ((double *)s)[0] : (double)((float *)s)[0];
  double cut = c->p->rtol * smax;
  if (c->p->atol > cut)
    cut = c->p->atol;
  for (int64_t i = 0; i < k; i++) {
    double si = wide ? ((double *)s)[i] : (double)((float *)s)[i];
    inv[i] = si > cut ? 1.0 / si : 0.0;
  }
  scale_rows(c->dt, vt, k, n, inv);
  /* out (n x m) = (diag(inv) Vt)^H U^H */
  la_gemm(c->dt, 'C', 'C', (int)n, (int)m, (int)k, vt, (int)n, u, (int)k, out, (int)m);
  return 0;
}

int emlx_cpu_pinv(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_array *a = in[0];
  spec_ctx c = {.a = a,
                .out = out,
                .dt = a->dtype,
                .m = a->shape[a->ndim - 2],
                .n = a->shape[a->ndim - 1],
                .p = emlx__params(node),
                .jobz = 'S'};
  const char *op = emlx_prim_table[node->prim].name;
  c.k = c.m < c.n ? c.m : c.n;
  c.ucols = c.k;
  c.vrows = c.k;
  if (!la_fits_int(c.m, c.n))
    return la_too_large(op, c.m, c.n);
  if (emlx__array_alloc_data(out[0]) != 0)
    return -1;
  if (out[0]->size == 0)
    return 0;
  size_t scratch = 0;
  if (svd_prepare(&c, op, &scratch) != 0)
    return -1;
  c.inv_off = la_align(scratch); /* then the reciprocals of s, k doubles */
  scratch = c.inv_off + (size_t)c.k * sizeof(double);
  la_job job;
  la_job_init(&job, op, la_batch_count(a), c.m > c.n ? c.m : c.n, scratch, pinv_one, &c);
  return la_run(&job);
}

/* ---- EIGH ------------------------------------------------------------------------------------ */

static int eigh_one(la_job *job, int64_t b, void *scratch) {
  spec_ctx *c = job->ctx;
  char *sc = scratch;
  int n = (int)c->n;
  size_t es = la_esize(c->dt);
  bool vec = c->p->vectors;
  void *w = la_out_matrix(c->out[0], b, c->n);
  void *v = vec ? la_out_matrix(c->out[1], b, c->n * c->n) : NULL;
  int64_t rs, cs;
  const void *src = la_matrix(c->a, b, &rs, &cs);
  la_copy(es, src, n, n, rs, cs, sc, n, 1);
  if (!la_finite(c->dt, sc, n, n, c->p->upper ? 1 : -1))
    return la_fail(job, b, "contains NaN or infinity in the triangle read (no eigenvalues)");
  /* Row-major lower is column-major upper. */
  int info =
      la_syevd(c->dt, c->jobz, c->p->upper ? 'L' : 'U', n, sc, n, w ? w : sc + c->s_off, &c->w,
               sc + c->work_off, sc + c->rwork_off, (int *)(void *)(sc + c->iwork_off));
  if (info > 0)
    return la_fail(job, b, "has an eigensolver that did not converge (info %d)", info);
  if (info < 0)
    return la_fail(job, b, "was rejected by LAPACK (argument %d)", -info);
  if (v) {
    la_copy(es, sc, n, n, 1, n, v, n, 1); /* column j of v is LAPACK's column j */
    if (la_is_complex(c->dt))
      la_conj(c->dt, v, c->n * c->n);
  }
  return 0;
}

int emlx_cpu_eigh(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_array *a = in[0];
  spec_ctx c = {.a = a,
                .out = out,
                .dt = a->dtype,
                .m = a->shape[a->ndim - 1],
                .n = a->shape[a->ndim - 1],
                .p = emlx__params(node)};
  const char *op = emlx_prim_table[node->prim].name;
  c.k = c.n;
  c.jobz = c.p->vectors ? 'V' : 'N';
  if (!la_fits_int(c.n, c.n))
    return la_too_large(op, c.n, c.n);
  if (la_alloc_outputs(out, c.p->vectors ? 2 : 1) != 0)
    return -1;
  if (c.n == 0)
    return 0;
  if (la_syevd_query(c.dt, c.jobz, (int)c.n, &c.w) != 0)
    return la_too_large(op, c.n, c.n);
  size_t scratch = layout_scratch(&c); /* u and vt regions are empty */
  la_job job;
  la_job_init(&job, op, la_batch_count(a), c.n, scratch, eigh_one, &c);
  return la_run(&job);
}
