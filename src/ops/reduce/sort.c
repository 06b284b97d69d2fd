/* sort.c — constructors of sort and argsort (stable, one axis, ascending or
 * descending). */
#include "ops_util.h"
#include "params_reduce.h"

static emlx_array *sort_op(emlx_prim prim, emlx_array *a, int axis, const emlx_sort_options *opts) {
  const char *op = emlx_prim_table[prim].name;
  EMLX_CHECK_ARRAY(a, op);
  int ax = axis < 0 ? axis + a->ndim : axis;
  if (ax < 0 || ax >= a->ndim)
    return EMLX_FAIL_NULL("%s: axis %d is out of range for rank %d", op, axis, a->ndim);
  int64_t n = a->shape[ax];
  if (n > (int64_t)UINT32_MAX)
    return EMLX_FAIL_NULL("%s: axes longer than 2^32 - 1 elements are not supported", op);
  emlx_dtype dt = a->dtype;
  if (prim == EMLX_PRIM_ARGSORT) {
    emlx_dtype want = opts ? opts->index_dtype : EMLX_BOOL;
    dt = want == EMLX_BOOL ? EMLX_UINT32 : want;
    if (!emlx_dtype_is_valid(dt) || !emlx_dtype_is_integer(dt))
      return EMLX_FAIL_NULL("%s: index dtype must be an integer dtype (got %d)", op, (int)want);
    int bits = (int)emlx_dtype_size(dt) * 8 - (emlx_dtype_is_signed(dt) ? 1 : 0);
    if (bits < 63 && n > 0 && (uint64_t)(n - 1) > (UINT64_C(1) << bits) - 1)
      return EMLX_FAIL_NULL("%s: an axis of %lld elements does not fit index dtype %s", op,
                            (long long)n, emlx_dtype_name(dt));
  }
  emlx_sort_params p = {ax, opts && opts->descending};
  return emlx__op(prim, &a, 1, &p, sizeof p, dt, a->shape, a->ndim);
}

emlx_array *emlx_sort(emlx_array *a, int axis, const emlx_sort_options *opts) {
  return sort_op(EMLX_PRIM_SORT, a, axis, opts);
}
emlx_array *emlx_argsort(emlx_array *a, int axis, const emlx_sort_options *opts) {
  return sort_op(EMLX_PRIM_ARGSORT, a, axis, opts);
}
