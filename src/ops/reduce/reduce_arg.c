/* reduce2.c — constructors of product, min, all, any (over any axes) and of
 * argmax / argmin (one axis, or the flattened array). */
#include <stdlib.h>

#include "ops_util.h"
#include "params_reduce.h"

/* The shape of reducing `a` over the normalised axes ax[0..n), and whether
 * a reduced axis is empty while the result is not. Returns the rank. */
static int reduced_shape(const emlx_array *a, const int32_t *ax, int n, bool keep_dims,
                         int64_t *shape, bool *empty_reduction) {
  bool reduced[EMLX_MAX_NDIM] = {false};
  for (int i = 0; i < n; i++)
    reduced[ax[i]] = true;
  int nd = 0;
  bool empty_axis = false;
  int64_t out_size = 1;
  for (int i = 0; i < a->ndim; i++) {
    if (reduced[i]) {
      empty_axis = empty_axis || a->shape[i] == 0;
      if (keep_dims)
        shape[nd++] = 1;
    } else {
      shape[nd++] = a->shape[i];
      out_size *= a->shape[i];
    }
  }
  *empty_reduction = empty_axis && out_size > 0;
  return nd;
}

/* A node of prim over `in` (already of the kernel's input dtype). */
static emlx_array *reduce_node(emlx_prim prim, emlx_array *in, const int *axes, int naxes,
                               bool keep_dims, emlx_dtype out_dtype) {
  const char *op = emlx_prim_table[prim].name;
  int32_t ax[EMLX_MAX_NDIM];
  int n = emlx__normalize_axes(axes, naxes, in->ndim, ax, op);
  if (n < 0)
    return NULL;
  int64_t shape[EMLX_MAX_NDIM];
  bool empty_reduction;
  int nd = reduced_shape(in, ax, n, keep_dims, shape, &empty_reduction);
  if (prim == EMLX_PRIM_MIN && empty_reduction)
    return EMLX_FAIL_NULL("min: cannot reduce over an axis of size 0");
  size_t psize = sizeof(emlx_reduce_params) + (size_t)n * sizeof(int32_t);
  emlx_reduce_params *p = calloc(1, psize);
  if (!p)
    return EMLX_FAIL_NULL("%s: out of memory", op);
  p->naxes = n;
  p->keep_dims = keep_dims;
  for (int i = 0; i < n; i++)
    p->axes[i] = ax[i];
  emlx_array *out = emlx__op(prim, &in, 1, p, psize, out_dtype, shape, nd);
  free(p);
  return out;
}

/* MLX's accumulation dtype of product (as sum): narrow integers widen. */
static emlx_dtype product_dtype(emlx_dtype d) {
  switch (d) {
  case EMLX_BOOL:
  case EMLX_INT8:
  case EMLX_INT16:
  case EMLX_INT32:
    return EMLX_INT32;
  case EMLX_UINT8:
  case EMLX_UINT16:
  case EMLX_UINT32:
    return EMLX_UINT32;
  default:
    return d;
  }
}

emlx_array *emlx_product(emlx_array *a, const int *axes, int naxes, bool keep_dims) {
  EMLX_CHECK_ARRAY(a, "product");
  emlx_dtype dt = product_dtype(a->dtype);
  /* Validate the axes before making the cast node. */
  int32_t ax[EMLX_MAX_NDIM];
  if (emlx__normalize_axes(axes, naxes, a->ndim, ax, "product") < 0)
    return NULL;
  emlx_array *in = emlx__cast(a, dt);
  emlx_array *out = in ? reduce_node(EMLX_PRIM_PRODUCT, in, axes, naxes, keep_dims, dt) : NULL;
  emlx_release(in);
  return out;
}

emlx_array *emlx_min(emlx_array *a, const int *axes, int naxes, bool keep_dims) {
  EMLX_CHECK_ARRAY(a, "min");
  return reduce_node(EMLX_PRIM_MIN, a, axes, naxes, keep_dims, a->dtype);
}

emlx_array *emlx_all(emlx_array *a, const int *axes, int naxes, bool keep_dims) {
  EMLX_CHECK_ARRAY(a, "all");
  return reduce_node(EMLX_PRIM_ALL, a, axes, naxes, keep_dims, EMLX_BOOL);
}

emlx_array *emlx_any(emlx_array *a, const int *axes, int naxes, bool keep_dims) {
  EMLX_CHECK_ARRAY(a, "any");
  return reduce_node(EMLX_PRIM_ANY, a, axes, naxes, keep_dims, EMLX_BOOL);
}

/* ---- argmax / argmin ------------------------------------------------------- */

/* The index dtype asked for (EMLX_BOOL: uint32), or -1 with an error when it
 * is not an integer dtype or cannot hold index n - 1. */
static int index_dtype(emlx_dtype want, int64_t n, const char *op, emlx_dtype *out) {
  emlx_dtype d = want == EMLX_BOOL ? EMLX_UINT32 : want;
  if (!emlx_dtype_is_valid(d) || !emlx_dtype_is_integer(d))
    return EMLX_FAIL("%s: index dtype must be an integer dtype (got %d)", op, (int)want);
  int bits = (int)emlx_dtype_size(d) * 8 - (emlx_dtype_is_signed(d) ? 1 : 0);
  if (bits < 63 && n > 0 && (uint64_t)(n - 1) > (UINT64_C(1) << bits) - 1)
    return EMLX_FAIL("%s: an axis of %lld elements does not fit index dtype %s", op, (long long)n,
                     emlx_dtype_name(d));
  *out = d;
  return 0;
}

static emlx_array *arg_reduce(emlx_prim prim, emlx_array *a, int axis, bool keep_dims,
                              const emlx_arg_reduce_options *opts) {
  const char *op = emlx_prim_table[prim].name;
  EMLX_CHECK_ARRAY(a, op);
  int ax = axis < 0 ? axis + a->ndim : axis;
  if (ax < 0 || ax >= a->ndim)
    return EMLX_FAIL_NULL("%s: axis %d is out of range for rank %d", op, axis, a->ndim);
  emlx_dtype dt;
  if (index_dtype(opts ? opts->index_dtype : EMLX_BOOL, a->shape[ax], op, &dt) != 0)
    return NULL;
  int64_t shape[EMLX_MAX_NDIM];
  int nd = 0;
  int64_t out_size = 1;
  for (int i = 0; i < a->ndim; i++) {
    if (i == ax) {
      if (keep_dims)
        shape[nd++] = 1;
    } else {
      shape[nd++] = a->shape[i];
      out_size *= a->shape[i];
    }
  }
  if (a->shape[ax] == 0 && out_size > 0)
    return EMLX_FAIL_NULL("%s: cannot reduce over an axis of size 0", op);
  emlx_argreduce_params p = {ax, keep_dims, opts && opts->last_index, 0};
  return emlx__op(prim, &a, 1, &p, sizeof p, dt, shape, nd);
}

static emlx_array *arg_reduce_all(emlx_prim prim, emlx_array *a, bool keep_dims,
                                  const emlx_arg_reduce_options *opts) {
  const char *op = emlx_prim_table[prim].name;
  EMLX_CHECK_ARRAY(a, op);
  if (a->size == 0)
    return EMLX_FAIL_NULL("%s: cannot reduce an empty array", op);
  int64_t n = a->size;
  emlx_array *flat = emlx_reshape(a, &n, 1);
  if (!flat)
    return NULL;
  emlx_array *r = arg_reduce(prim, flat, 0, false, opts);
  emlx_release(flat);
  if (!r || !keep_dims || a->ndim == 0)
    return r;
  int64_t ones[EMLX_MAX_NDIM];
  for (int i = 0; i < a->ndim; i++)
    ones[i] = 1;
  emlx_array *k = emlx_reshape(r, ones, a->ndim);
  emlx_release(r);
  return k;
}

emlx_array *emlx_argmax(emlx_array *a, int axis, bool keep_dims,
                        const emlx_arg_reduce_options *opts) {
  return arg_reduce(EMLX_PRIM_ARGMAX, a, axis, keep_dims, opts);
}
emlx_array *emlx_argmin(emlx_array *a, int axis, bool keep_dims,
                        const emlx_arg_reduce_options *opts) {
  return arg_reduce(EMLX_PRIM_ARGMIN, a, axis, keep_dims, opts);
}
emlx_array *emlx_argmax_all(emlx_array *a, bool keep_dims, const emlx_arg_reduce_options *opts) {
  return arg_reduce_all(EMLX_PRIM_ARGMAX, a, keep_dims, opts);
}
emlx_array *emlx_argmin_all(emlx_array *a, bool keep_dims, const emlx_arg_reduce_options *opts) {
  return arg_reduce_all(EMLX_PRIM_ARGMIN, a, keep_dims, opts);
}
