/* linalg.c — constructors of the linear algebra ops (include/emlx/linalg.h).
 *
 * Each validates its input (rank >= 2, square where needed, float32 /
 * float64 / complex64 / complex128), infers the output shapes (batch axes + matrix
 * axes) and makes one node; the multi-output ones (EIGH, LU, QR, SVD) make
 * one node with several outputs and hand out those the caller asked for.
 * SOLVE and SOLVE_TRIANGULAR promote their operands, turn a vector right-hand
 * side into a one-column (or one-row) matrix, broadcast both operands' batch
 * axes to the output's as views, and reshape the result back. The kernels
 * are in src/cpu/linalg_*.c. */
#include <string.h>

#include "ops_util.h"
#include "params_linalg.h"

static bool dtype_ok(emlx_dtype dt) {
  return dt == EMLX_FLOAT32 || dt == EMLX_FLOAT64 || emlx_dtype_is_complex(dt);
}

static int check_dtype(emlx_dtype dt, const char *op) {
  if (dtype_ok(dt))
    return 0;
  return EMLX_FAIL("%s: arrays must have dtype float32, float64, complex64 or complex128 (got %s); cast "
                   "them first",
                   op, emlx_dtype_name(dt));
}

/* a is a non-NULL float matrix stack (square when asked). */
static int check_matrix(const emlx_array *a, const char *op, bool square) {
  if (!a)
    return EMLX_FAIL("%s: input array is NULL", op);
  if (check_dtype(a->dtype, op) != 0)
    return -1;
  if (a->ndim < 2)
    return EMLX_FAIL("%s: arrays must have at least 2 dimensions (got %d)", op, a->ndim);
  int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1];
  if (square && m != n)
    return EMLX_FAIL("%s: only defined for square matrices (got %lld x %lld)", op, (long long)m,
                     (long long)n);
  return 0;
}

static emlx_linalg_params params_zero(void) {
  emlx_linalg_params p;
  memset(&p, 0, sizeof p);
  return p;
}

/* shape := a's batch axes followed by the given trailing extents. */
static int batch_shape(const emlx_array *a, int64_t *shape, int ntrail, int64_t t0, int64_t t1) {
  int nb = a->ndim - 2;
  memcpy(shape, a->shape, (size_t)nb * sizeof *shape);
  if (ntrail > 0)
    shape[nb] = t0;
  if (ntrail > 1)
    shape[nb + 1] = t1;
  return nb + ntrail;
}

static emlx_array *single(emlx_prim prim, emlx_array *a, const emlx_linalg_params *p,
                          const int64_t *shape, int ndim) {
  return emlx__op(prim, &a, 1, p, sizeof *p, a->dtype, shape, ndim);
}

/* Makes a node of `nout` outputs from one input and gives out[i] to
 * *want[i] (a NULL want[i] releases that output: the kernel computes it into
 * scratch, or skips it when it can). Returns 0 or -1. */
static int multi(emlx_prim prim, emlx_array *a, const emlx_linalg_params *p, int nout,
                 const emlx_dtype *dts, const int64_t *const *shapes, const int *ndims,
                 emlx_array **const *want) {
  emlx_array *res[4] = {NULL, NULL, NULL, NULL};
  if (!emlx__node_make(prim, &a, 1, p, sizeof *p, nout, dts, shapes, ndims, a->device, res))
    return -1;
  for (int i = 0; i < nout; i++) {
    if (want[i])
      *want[i] = res[i];
    else
      emlx_release(res[i]);
  }
  return 0;
}

/* Clears the output pointers a failed call leaves behind. */
static void clear_outs(emlx_array **const *outs, int n) {
  for (int i = 0; i < n; i++)
    if (outs[i])
      *outs[i] = NULL;
}

/* ---- single-output factorisations and inverses ------------------------------------------ */

emlx_array *emlx_linalg_cholesky(emlx_array *a, bool upper) {
  if (check_matrix(a, "linalg_cholesky", true) != 0)
    return NULL;
  emlx_linalg_params p = params_zero();
  p.upper = upper;
  return single(EMLX_PRIM_CHOLESKY, a, &p, a->shape, a->ndim);
}

emlx_array *emlx_linalg_inv(emlx_array *a) {
  if (check_matrix(a, "linalg_inv", true) != 0)
    return NULL;
  emlx_linalg_params p = params_zero();
  return single(EMLX_PRIM_INV, a, &p, a->shape, a->ndim);
}

emlx_array *emlx_tri_inv(emlx_array *a, bool upper) {
  if (check_matrix(a, "tri_inv", true) != 0)
    return NULL;
  emlx_linalg_params p = params_zero();
  p.upper = upper;
  return single(EMLX_PRIM_TRI_INV, a, &p, a->shape, a->ndim);
}

emlx_array *emlx_linalg_pinv(emlx_array *a, const emlx_pinv_options *opts) {
  if (check_matrix(a, "linalg_pinv", false) != 0)
    return NULL;
  int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1];
  emlx_linalg_params p = params_zero();
  double eps = a->dtype == EMLX_FLOAT64 ? 0x1p-52 : 0x1p-23;
  p.rtol = opts && opts->rtol > 0 ? opts->rtol : 10.0 * (double)(m > n ? m : n) * eps;
  p.atol = opts && opts->atol > 0 ? opts->atol : 0.0;
  int64_t shape[EMLX_MAX_NDIM];
  int nd = batch_shape(a, shape, 2, n, m);
  return single(EMLX_PRIM_PINV, a, &p, shape, nd);
}

/* ---- eigh ---------------------------------------------------------------------------------- */

int emlx_linalg_eigh(emlx_array *a, const char *uplo, emlx_array **eigenvalues,
                     emlx_array **eigenvectors) {
  emlx_array **const outs[2] = {eigenvalues, eigenvectors};
  clear_outs(outs, 2);
  if (!eigenvalues && !eigenvectors)
    return EMLX_FAIL("linalg_eigh: both output pointers are NULL");
  if (check_matrix(a, "linalg_eigh", true) != 0)
    return -1;
  emlx_linalg_params p = params_zero();
  if (!uplo || strcmp(uplo, "L") == 0 || strcmp(uplo, "l") == 0)
    p.upper = 0;
  else if (strcmp(uplo, "U") == 0 || strcmp(uplo, "u") == 0)
    p.upper = 1;
  else
    return EMLX_FAIL("linalg_eigh: uplo must be \"L\" or \"U\" (got \"%s\")", uplo);
  p.vectors = eigenvectors != NULL;
  int64_t ws[EMLX_MAX_NDIM];
  int wnd = batch_shape(a, ws, 1, a->shape[a->ndim - 1], 0);
  emlx_dtype dts[2] = {emlx_dtype_real_part(a->dtype), a->dtype};
  const int64_t *shapes[2] = {ws, a->shape};
  int ndims[2] = {wnd, a->ndim};
  return multi(EMLX_PRIM_EIGH, a, &p, p.vectors ? 2 : 1, dts, shapes, ndims, outs);
}

emlx_array *emlx_linalg_eigvalsh(emlx_array *a, const char *uplo) {
  emlx_array *w = NULL;
  if (emlx_linalg_eigh(a, uplo, &w, NULL) != 0)
    return NULL;
  return w;
}

/* ---- lu ------------------------------------------------------------------------------------- */

static int lu_node(emlx_array *a, bool compact, emlx_array **const *outs, int nout,
                   const char *op) {
  clear_outs(outs, nout);
  bool any = false;
  for (int i = 0; i < nout; i++)
    any |= outs[i] != NULL;
  if (!any)
    return EMLX_FAIL("%s: every output pointer is NULL", op);
  if (check_matrix(a, op, false) != 0)
    return -1;
  int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1], k = m < n ? m : n;
  emlx_linalg_params p = params_zero();
  p.compact = compact;
  int64_t s0[EMLX_MAX_NDIM], s1[EMLX_MAX_NDIM], s2[EMLX_MAX_NDIM];
  if (compact) { /* lu (m, n), pivots (k) */
    int n1 = batch_shape(a, s1, 1, k, 0);
    emlx_dtype dts[2] = {a->dtype, EMLX_UINT32};
    const int64_t *shapes[2] = {a->shape, s1};
    int ndims[2] = {a->ndim, n1};
    return multi(EMLX_PRIM_LU, a, &p, 2, dts, shapes, ndims, outs);
  }
  int n0 = batch_shape(a, s0, 1, m, 0), n1 = batch_shape(a, s1, 2, m, k),
      n2 = batch_shape(a, s2, 2, k, n);
  emlx_dtype dts[3] = {EMLX_UINT32, a->dtype, a->dtype};
  const int64_t *shapes[3] = {s0, s1, s2};
  int ndims[3] = {n0, n1, n2};
  return multi(EMLX_PRIM_LU, a, &p, 3, dts, shapes, ndims, outs);
}

int emlx_linalg_lu(emlx_array *a, emlx_array **p, emlx_array **l, emlx_array **u) {
  emlx_array **const outs[3] = {p, l, u};
  return lu_node(a, false, outs, 3, "linalg_lu");
}

int emlx_linalg_lu_factor(emlx_array *a, emlx_array **lu, emlx_array **pivots) {
  emlx_array **const outs[2] = {lu, pivots};
  return lu_node(a, true, outs, 2, "linalg_lu_factor");
}

/* ---- qr ------------------------------------------------------------------------------------- */

int emlx_linalg_qr(emlx_array *a, bool complete, emlx_array **q, emlx_array **r) {
  emlx_array **const outs[2] = {q, r};
  clear_outs(outs, 2);
  if (!q && !r)
    return EMLX_FAIL("linalg_qr: both output pointers are NULL");
  if (check_matrix(a, "linalg_qr", false) != 0)
    return -1;
  int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1], k = m < n ? m : n;
  emlx_linalg_params p = params_zero();
  p.full = complete;
  int64_t qs[EMLX_MAX_NDIM], rs[EMLX_MAX_NDIM];
  int qn = batch_shape(a, qs, 2, m, complete ? m : k);
  int rn = batch_shape(a, rs, 2, complete ? m : k, n);
  emlx_dtype dts[2] = {a->dtype, a->dtype};
  const int64_t *shapes[2] = {qs, rs};
  int ndims[2] = {qn, rn};
  return multi(EMLX_PRIM_QR, a, &p, 2, dts, shapes, ndims, outs);
}

/* ---- svd ------------------------------------------------------------------------------------ */

int emlx_linalg_svd(emlx_array *a, bool compute_uv, bool full_matrices, emlx_array **u,
                    emlx_array **s, emlx_array **vt) {
  emlx_array **const outs[3] = {u, s, vt};
  clear_outs(outs, 3);
  if (!compute_uv && !s)
    return EMLX_FAIL("linalg_svd: the singular values output pointer is NULL");
  if (compute_uv && !u && !s && !vt)
    return EMLX_FAIL("linalg_svd: every output pointer is NULL");
  if (check_matrix(a, "linalg_svd", false) != 0)
    return -1;
  int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1], k = m < n ? m : n;
  emlx_linalg_params p = params_zero();
  p.vectors = compute_uv;
  p.full = compute_uv && full_matrices;
  int64_t us[EMLX_MAX_NDIM], ss[EMLX_MAX_NDIM], vs[EMLX_MAX_NDIM];
  int un = batch_shape(a, us, 2, m, p.full ? m : k);
  int sn = batch_shape(a, ss, 1, k, 0);
  int vn = batch_shape(a, vs, 2, p.full ? n : k, n);
  emlx_dtype rdt = emlx_dtype_real_part(a->dtype);
  if (!compute_uv) {
    emlx_array **const only[1] = {s};
    const int64_t *shapes[1] = {ss};
    return multi(EMLX_PRIM_SVD, a, &p, 1, &rdt, shapes, &sn, only);
  }
  emlx_dtype dts[3] = {a->dtype, rdt, a->dtype};
  const int64_t *shapes[3] = {us, ss, vs};
  int ndims[3] = {un, sn, vn};
  return multi(EMLX_PRIM_SVD, a, &p, 3, dts, shapes, ndims, outs);
}

/* ---- solve and solve_triangular ------------------------------------------------------------- */

/* The shared front of the two solves: promotes, checks, makes b a matrix
 * (a vector becomes (n, 1), or (1, n) on the right side), broadcasts the
 * batch axes, makes the node and reshapes a vector result back. */
static emlx_array *solve_common(emlx_prim prim, emlx_array *a, emlx_array *b,
                                const emlx_linalg_params *p, const char *op) {
  if (!a || !b)
    return EMLX_FAIL_NULL("%s: input array is NULL", op);
  emlx_dtype dt = emlx_promote_types(a->dtype, b->dtype);
  if (!dtype_ok(dt))
    return EMLX_FAIL_NULL("%s: the operands (%s and %s) must promote to float32, float64 or "
                          "complex64; cast them first",
                          op, emlx_dtype_name(a->dtype), emlx_dtype_name(b->dtype));
  if (a->ndim < 2)
    return EMLX_FAIL_NULL("%s: a must have at least 2 dimensions (got %d)", op, a->ndim);
  int64_t n = a->shape[a->ndim - 1];
  if (a->shape[a->ndim - 2] != n)
    return EMLX_FAIL_NULL("%s: a must be square (got %lld x %lld)", op,
                          (long long)a->shape[a->ndim - 2], (long long)n);
  if (b->ndim < 1)
    return EMLX_FAIL_NULL("%s: b must have at least 1 dimension (got 0)", op);
  bool vec = b->ndim == 1;
  int bax = p->right_side ? b->ndim - 1 : (vec ? 0 : b->ndim - 2); /* b's axis that meets a */
  if (b->shape[bax] != n)
    return EMLX_FAIL_NULL("%s: b's %s (%lld) must match a's order (%lld)", op,
                          p->right_side ? "last dimension"
                          : vec         ? "length"
                                        : "rows",
                          (long long)b->shape[bax], (long long)n);
  int64_t bm[2] = {p->right_side ? 1 : n, p->right_side ? n : 1}; /* a vector as a matrix */
  int bnb = vec ? 0 : b->ndim - 2;
  const int64_t *bmat = vec ? bm : b->shape + bnb;
  int64_t batch[EMLX_MAX_NDIM];
  int nb = emlx__broadcast_shapes(a->shape, a->ndim - 2, b->shape, bnb, batch, op);
  if (nb < 0)
    return NULL;
  if (nb + 2 > EMLX_MAX_NDIM)
    return EMLX_FAIL_NULL("%s: result rank is too large", op);
  int64_t sa[EMLX_MAX_NDIM], sb[EMLX_MAX_NDIM];
  memcpy(sa, batch, (size_t)nb * sizeof *sa);
  memcpy(sb, batch, (size_t)nb * sizeof *sb);
  sa[nb] = sa[nb + 1] = n;
  sb[nb] = bmat[0];
  sb[nb + 1] = bmat[1];

  emlx_array *ca = emlx__cast(a, dt), *cb = ca ? emlx__cast(b, dt) : NULL;
  emlx_array *b2 = NULL, *ab = NULL, *bb = NULL, *x = NULL, *out = NULL;
  if (!cb)
    goto done;
  b2 = vec ? emlx_reshape(cb, bm, 2) : emlx_retain(cb);
  ab = b2 ? emlx_broadcast_to(ca, sa, nb + 2) : NULL;
  bb = ab ? emlx_broadcast_to(b2, sb, nb + 2) : NULL;
  if (!bb)
    goto done;
  emlx_array *in[2] = {ab, bb};
  x = emlx__op(prim, in, 2, p, sizeof *p, dt, sb, nb + 2);
  if (!x)
    goto done;
  if (vec) {
    sb[nb] = n; /* (..., n, 1) or (..., 1, n) back to (..., n) */
    out = emlx_reshape(x, sb, nb + 1);
  } else {
    out = emlx_retain(x);
  }
done:
  emlx_release(ca);
  emlx_release(cb);
  emlx_release(b2);
  emlx_release(ab);
  emlx_release(bb);
  emlx_release(x);
  return out;
}

emlx_array *emlx_linalg_solve(emlx_array *a, emlx_array *b) {
  emlx_linalg_params p = params_zero();
  return solve_common(EMLX_PRIM_SOLVE, a, b, &p, "linalg_solve");
}

emlx_array *emlx_linalg_solve_triangular(emlx_array *a, emlx_array *b, bool upper,
                                         const emlx_solve_triangular_options *opts) {
  emlx_linalg_params p = params_zero();
  p.upper = upper;
  if (opts) {
    if ((int)opts->transpose < EMLX_LINALG_NO_TRANSPOSE ||
        (int)opts->transpose > EMLX_LINALG_ADJOINT)
      return EMLX_FAIL_NULL("linalg_solve_triangular: transpose must be 0, 1 or 2 (got %d)",
                            (int)opts->transpose);
    p.right_side = opts->right_side;
    p.transpose = (int32_t)opts->transpose;
    p.unit_diagonal = opts->unit_diagonal;
  }
  return solve_common(EMLX_PRIM_SOLVE_TRIANGULAR, a, b, &p, "linalg_solve_triangular");
}
