/* nif_linalg.c — the handlers of the linear algebra rows (emlx/linalg.h).
 *
 * Single results come back as {:ok, tensor}; the factorisations come back
 * as {:ok, {t1, t2, ...}} in the engine's order: eigh {eigenvalues,
 * eigenvectors}, lu {p, l, u}, lu_factor {lu, pivots}, qr {q, r}, svd {u,
 * s, vt} (or just s without U and Vt). */
#include "emlx_nif.h"

/* {:ok, {arrays...}} taking ownership of all n arrays; the engine error when
 * status is not 0 (the arrays are then NULL). */
static ERL_NIF_TERM ok_tuple(nif_call *c, int status, emlx_array **arrays, int n) {
  if (status != 0)
    return nif_engine_error(c);
  ERL_NIF_TERM items[4];
  for (int i = 0; i < n; i++) {
    int ok;
    items[i] = nif_make_tensor(c->env, arrays[i], &ok);
    if (!ok) {
      for (int j = i + 1; j < n; j++)
        emlx_release(arrays[j]);
      return nif_error(c, "out of memory for the tensor resource");
    }
  }
  return nif_ok(c, enif_make_tuple_from_array(c->env, items, (unsigned)n));
}

/* linalg_cholesky(tensor, upper) */
NIF_HANDLER(h_linalg_cholesky) {
  return nif_ok_tensor(c, emlx_linalg_cholesky(a[0].array, a[1].b));
}

/* linalg_eigh(tensor, uplo): uplo "L" or "U" */
NIF_HANDLER(h_linalg_eigh) {
  emlx_array *out[2] = {NULL, NULL};
  int rc = emlx_linalg_eigh(a[0].array, a[1].str, &out[0], &out[1]);
  return ok_tuple(c, rc, out, 2);
}

/* linalg_inv(tensor) */
NIF_HANDLER(h_linalg_inv) { return nif_ok_tensor(c, emlx_linalg_inv(a[0].array)); }

/* tri_inv(tensor, upper) */
NIF_HANDLER(h_tri_inv) { return nif_ok_tensor(c, emlx_tri_inv(a[0].array, a[1].b)); }

/* linalg_lu(tensor) -> {p, l, u} */
NIF_HANDLER(h_linalg_lu) {
  emlx_array *out[3] = {NULL, NULL, NULL};
  int rc = emlx_linalg_lu(a[0].array, &out[0], &out[1], &out[2]);
  return ok_tuple(c, rc, out, 3);
}

/* linalg_lu_factor(tensor) -> {lu, pivots} */
NIF_HANDLER(h_linalg_lu_factor) {
  emlx_array *out[2] = {NULL, NULL};
  int rc = emlx_linalg_lu_factor(a[0].array, &out[0], &out[1]);
  return ok_tuple(c, rc, out, 2);
}

/* linalg_pinv(tensor) and linalg_pinv(tensor, rtol, atol) (<= 0: default) */
NIF_HANDLER(h_linalg_pinv) {
  emlx_pinv_options o = {0};
  if (c->argc == 3) {
    o.rtol = a[1].f;
    o.atol = a[2].f;
  }
  return nif_ok_tensor(c, emlx_linalg_pinv(a[0].array, &o));
}

/* linalg_qr(tensor, complete) -> {q, r} */
NIF_HANDLER(h_linalg_qr) {
  emlx_array *out[2] = {NULL, NULL};
  int rc = emlx_linalg_qr(a[0].array, a[1].b, &out[0], &out[1]);
  return ok_tuple(c, rc, out, 2);
}

/* linalg_solve(tensor_a, tensor_b) */
NIF_HANDLER(h_linalg_solve) { return nif_ok_tensor(c, emlx_linalg_solve(a[0].array, a[1].array)); }

/* linalg_solve_triangular(a, b, upper, right_side, transpose, unit_diagonal)
 * with transpose 0 (a), 1 (a^T) or 2 (a^H). */
NIF_HANDLER(h_linalg_solve_triangular) {
  if (a[4].i < 0 || a[4].i > 2)
    return nif_error(c, "argument 5: transpose must be 0, 1 or 2, got %ld", (long)a[4].i);
  emlx_solve_triangular_options o = {
      .right_side = a[3].b, .transpose = (emlx_linalg_transpose)a[4].i, .unit_diagonal = a[5].b};
  return nif_ok_tensor(c, emlx_linalg_solve_triangular(a[0].array, a[1].array, a[2].b, &o));
}

/* linalg_svd(tensor, compute_uv, full_matrices): {u, s, vt}, or s alone
 * without compute_uv. */
NIF_HANDLER(h_linalg_svd) {
  bool uv = a[1].b, full = a[2].b;
  emlx_array *out[3] = {NULL, NULL, NULL};
  if (!uv) {
    int rc = emlx_linalg_svd(a[0].array, false, false, NULL, &out[0], NULL);
    return rc != 0 ? nif_engine_error(c) : nif_ok_tensor(c, out[0]);
  }
  int rc = emlx_linalg_svd(a[0].array, true, full, &out[0], &out[1], &out[2]);
  return ok_tuple(c, rc, out, 3);
}
