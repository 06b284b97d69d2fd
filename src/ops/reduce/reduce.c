/* reduce.c — constructors of the six reductions over any axes: sum, max,
 * product, min, all, any (their kernel: src/cpu/reduce/reduce.c).
 *
 * The family (src/ops/reduce/): these, argmax / argmin (reduce_arg.c), the
 * scans (scan.c) and sort / argsort (sort.c). */
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

/* A node of prim over `in` (already of the kernel's input dtype). Sum and
 * max need no cast node: their kernels accumulate narrow inputs in the wide
 * output type as they load them, so a broadcast view is never
 * materialised. */
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
  if ((prim == EMLX_PRIM_MAX || prim == EMLX_PRIM_MIN) && empty_reduction)
    return EMLX_FAIL_NULL("%s: cannot reduce over an axis of size 0", op);
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

/* MLX's accumulation dtype of sum and product: narrow integers widen to 32
 * bits. */
static emlx_dtype widened_dtype(emlx_dtype d) {
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

emlx_array *emlx_sum(emlx_array *a, const int *axes, int naxes, bool keep_dims) {
  EMLX_CHECK_ARRAY(a, "sum");
  return reduce_node(EMLX_PRIM_SUM, a, axes, naxes, keep_dims, widened_dtype(a->dtype));
}

emlx_array *emlx_max(emlx_array *a, const int *axes, int naxes, bool keep_dims) {
  EMLX_CHECK_ARRAY(a, "max");
  return reduce_node(EMLX_PRIM_MAX, a, axes, naxes, keep_dims, a->dtype);
}

emlx_array *emlx_product(emlx_array *a, const int *axes, int naxes, bool keep_dims) {
  EMLX_CHECK_ARRAY(a, "product");
  emlx_dtype dt = widened_dtype(a->dtype);
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
