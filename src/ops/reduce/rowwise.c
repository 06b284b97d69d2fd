/* rowwise.c — constructors of mean, var, std, logsumexp (ROW_REDUCE) and
 * softmax, log_softmax (ROW_SOFTMAX): validate, move the reduced axes last
 * (a transpose view, none when they already are), and make one node whose
 * kernel (src/cpu/reduce/rowwise.c) computes each row in one or two passes.
 * keep_dims and softmax's original axis order are views over the result. */
#include <stdlib.h>

#include "ops_util.h"
#include "params_rowwise.h"

static const char *const rw_names[] = {
    [EMLX_ROW_MEAN] = "mean",       [EMLX_ROW_VAR] = "var",
    [EMLX_ROW_STD] = "std",         [EMLX_ROW_LOGSUMEXP] = "logsumexp",
    [EMLX_ROW_SOFTMAX] = "softmax", [EMLX_ROW_LOG_SOFTMAX] = "log_softmax",
};

/* MLX's result dtype: floats keep theirs, bool and integers give float32. */
static emlx_dtype rw_dtype(emlx_dtype d) { return emlx_dtype_is_float(d) ? d : EMLX_FLOAT32; }

/* The permutation that puts the axes ax[0..n) (sorted) last; returns
 * whether it is the identity. */
static bool rw_perm(int ndim, const int32_t *ax, int n, int *perm) {
  bool reduced[EMLX_MAX_NDIM] = {false};
  for (int i = 0; i < n; i++)
    reduced[ax[i]] = true;
  int k = 0;
  for (int i = 0; i < ndim; i++)
    if (!reduced[i])
      perm[k++] = i;
  for (int i = 0; i < n; i++)
    perm[k++] = ax[i];
  bool identity = true;
  for (int i = 0; i < ndim; i++)
    identity = identity && perm[i] == i;
  return identity;
}

static emlx_array *rw_node(emlx_array *a, const int *axes, int naxes, bool keep_dims, int64_t ddof,
                           emlx_rowwise_op op) {
  const char *name = rw_names[op];
  EMLX_CHECK_ARRAY(a, name);
  if (emlx_dtype_is_complex(a->dtype))
    return EMLX_FAIL_NULL("%s: %s is not supported", name, emlx_dtype_name(a->dtype));
  int32_t ax[EMLX_MAX_NDIM];
  int n = emlx__normalize_axes(axes, naxes, a->ndim, ax, name);
  if (n < 0)
    return NULL;
  int perm[EMLX_MAX_NDIM];
  bool identity = rw_perm(a->ndim, ax, n, perm);
  emlx_array *t = identity ? emlx_retain(a) : emlx_transpose(a, perm, a->ndim);
  if (!t)
    return NULL;
  emlx_rowwise_params p = {.op = op, .nred = n, .ddof = ddof};
  bool softmax = op == EMLX_ROW_SOFTMAX || op == EMLX_ROW_LOG_SOFTMAX;
  emlx_dtype dt = rw_dtype(a->dtype);
  emlx_array *r;
  if (softmax) {
    r = emlx__op(EMLX_PRIM_ROW_SOFTMAX, &t, 1, &p, sizeof p, dt, t->shape, t->ndim);
  } else {
    r = emlx__op(EMLX_PRIM_ROW_REDUCE, &t, 1, &p, sizeof p, dt, t->shape, t->ndim - n);
  }
  emlx_release(t);
  if (!r)
    return NULL;
  emlx_array *res = r;
  if (softmax && !identity) {
    int inv[EMLX_MAX_NDIM];
    for (int i = 0; i < a->ndim; i++)
      inv[perm[i]] = i;
    res = emlx_transpose(r, inv, a->ndim);
    emlx_release(r);
  } else if (!softmax && keep_dims && n > 0) {
    int64_t shape[EMLX_MAX_NDIM];
    for (int i = 0; i < a->ndim; i++)
      shape[i] = a->shape[i];
    for (int i = 0; i < n; i++)
      shape[ax[i]] = 1;
    res = emlx_reshape(r, shape, a->ndim);
    emlx_release(r);
  }
  return res;
}

emlx_array *emlx_mean(emlx_array *a, const int *axes, int naxes, bool keep_dims) {
  EMLX_CHECK_ARRAY(a, "mean");
  if (!emlx_dtype_is_complex(a->dtype))
    return rw_node(a, axes, naxes, keep_dims, 0, EMLX_ROW_MEAN);
  /* complex: sum * (1 / n) in the input's complex dtype */
  int32_t ax[EMLX_MAX_NDIM];
  int n = emlx__normalize_axes(axes, naxes, a->ndim, ax, "mean");
  if (n < 0)
    return NULL;
  double count = 1.0;
  for (int i = 0; i < n; i++)
    count *= (double)a->shape[ax[i]];
  emlx_array *s = emlx_sum(a, axes, naxes, keep_dims);
  emlx_array *k = s ? emlx_scalar_tensor(1.0 / count, a->dtype, a->device) : NULL;
  emlx_array *r = k ? emlx_multiply(s, k) : NULL;
  emlx_release(k);
  emlx_release(s);
  return r;
}

emlx_array *emlx_var(emlx_array *a, const int *axes, int naxes, bool keep_dims, int ddof) {
  return rw_node(a, axes, naxes, keep_dims, ddof, EMLX_ROW_VAR);
}

emlx_array *emlx_std(emlx_array *a, const int *axes, int naxes, bool keep_dims, int ddof) {
  return rw_node(a, axes, naxes, keep_dims, ddof, EMLX_ROW_STD);
}

emlx_array *emlx_logsumexp(emlx_array *a, const int *axes, int naxes, bool keep_dims) {
  return rw_node(a, axes, naxes, keep_dims, 0, EMLX_ROW_LOGSUMEXP);
}

emlx_array *emlx_softmax(emlx_array *a, const int *axes, int naxes, bool precise) {
  (void)precise; /* always precise: see reduce.h */
  return rw_node(a, axes, naxes, false, 0, EMLX_ROW_SOFTMAX);
}

emlx_array *emlx_log_softmax(emlx_array *a, const int *axes, int naxes, bool precise) {
  (void)precise;
  return rw_node(a, axes, naxes, false, 0, EMLX_ROW_LOG_SOFTMAX);
}
