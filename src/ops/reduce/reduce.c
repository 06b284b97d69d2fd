/* reduce.c — constructors of the reductions (sum, max over any axes). */
#include <stdlib.h>

#include "ops_util.h"

static emlx_array *reduce(emlx_prim prim, emlx_array *a, const int *axes, int naxes,
                          bool keep_dims, emlx_dtype dtype) {
  const char *op = emlx_prim_table[prim].name;
  int32_t ax[EMLX_MAX_NDIM];
  int n = emlx__normalize_axes(axes, naxes, a->ndim, ax, op);
  if (n < 0) return NULL;
  bool reduced[EMLX_MAX_NDIM] = {false};
  for (int i = 0; i < n; i++) reduced[ax[i]] = true;
  int64_t shape[EMLX_MAX_NDIM];
  int nd = 0;
  bool empty_axis = false;
  int64_t out_size = 1;
  for (int i = 0; i < a->ndim; i++) {
    if (reduced[i]) {
      empty_axis = empty_axis || a->shape[i] == 0;
      if (keep_dims) shape[nd++] = 1;
    } else {
      shape[nd++] = a->shape[i];
      out_size *= a->shape[i];
    }
  }
  if (prim == EMLX_PRIM_MAX && empty_axis && out_size > 0)
    return EMLX_FAIL_NULL("max: cannot reduce over an axis of size 0");
  size_t psize = sizeof(emlx_reduce_params) + (size_t)n * sizeof(int32_t);
  emlx_reduce_params *p = calloc(1, psize);
  if (!p) return EMLX_FAIL_NULL("%s: out of memory", op);
  p->naxes = n;
  p->keep_dims = keep_dims;
  for (int i = 0; i < n; i++) p->axes[i] = ax[i];
  /* No cast node: the kernels accumulate narrow inputs in the wide output
   * type as they load them, so a broadcast view is never materialised. */
  emlx_array *out = emlx__op(prim, &a, 1, p, psize, dtype, shape, nd);
  free(p);
  return out;
}

/* MLX's accumulation type of sum: narrow integers widen to 32 bits. */
static emlx_dtype sum_dtype(emlx_dtype d) {
  switch (d) {
  case EMLX_BOOL:
  case EMLX_INT8:
  case EMLX_INT16:
  case EMLX_INT32: return EMLX_INT32;
  case EMLX_UINT8:
  case EMLX_UINT16:
  case EMLX_UINT32: return EMLX_UINT32;
  default: return d;
  }
}

emlx_array *emlx_sum(emlx_array *a, const int *axes, int naxes, bool keep_dims) {
  EMLX_CHECK_ARRAY(a, "sum");
  return reduce(EMLX_PRIM_SUM, a, axes, naxes, keep_dims, sum_dtype(a->dtype));
}

emlx_array *emlx_max(emlx_array *a, const int *axes, int naxes, bool keep_dims) {
  EMLX_CHECK_ARRAY(a, "max");
  return reduce(EMLX_PRIM_MAX, a, axes, naxes, keep_dims, a->dtype);
}
