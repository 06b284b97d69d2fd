/* reduce_arg.c — constructors of argmax / argmin (one axis, or the
 * flattened array); their kernel: src/cpu/reduce/reduce_arg.c. */
#include "ops_util.h"
#include "params_reduce.h"

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
