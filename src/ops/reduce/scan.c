/* scan.c — constructors of the scans: cumulative sum, product, max, min
 * along one axis, forward or reverse, inclusive or exclusive. */
#include "ops_util.h"
#include "params_reduce.h"

static emlx_array *scan(emlx_scan_op sop, const char *op, emlx_array *a, int axis, bool reverse,
                        bool inclusive) {
  EMLX_CHECK_ARRAY(a, op);
  int ax = axis < 0 ? axis + a->ndim : axis;
  if (ax < 0 || ax >= a->ndim)
    return EMLX_FAIL_NULL("%s: axis %d is out of range for rank %d", op, axis, a->ndim);
  /* MLX: only the sum of bools widens (to int32); everything else keeps its
   * dtype, bool products and extrema included (they stay 0/1). */
  emlx_dtype dt = sop == EMLX_SCAN_SUM && a->dtype == EMLX_BOOL ? EMLX_INT32 : a->dtype;
  emlx_scan_params p = {ax, (int32_t)sop, reverse, inclusive};
  emlx_array *in = emlx__cast(a, dt);
  emlx_array *out =
      in ? emlx__op(EMLX_PRIM_SCAN, &in, 1, &p, sizeof p, dt, a->shape, a->ndim) : NULL;
  emlx_release(in);
  return out;
}

emlx_array *emlx_cumulative_sum(emlx_array *a, int axis, bool reverse, bool inclusive) {
  return scan(EMLX_SCAN_SUM, "cumulative_sum", a, axis, reverse, inclusive);
}
emlx_array *emlx_cumulative_product(emlx_array *a, int axis, bool reverse, bool inclusive) {
  return scan(EMLX_SCAN_PROD, "cumulative_product", a, axis, reverse, inclusive);
}
emlx_array *emlx_cumulative_max(emlx_array *a, int axis, bool reverse, bool inclusive) {
  return scan(EMLX_SCAN_MAX, "cumulative_max", a, axis, reverse, inclusive);
}
emlx_array *emlx_cumulative_min(emlx_array *a, int axis, bool reverse, bool inclusive) {
  return scan(EMLX_SCAN_MIN, "cumulative_min", a, axis, reverse, inclusive);
}
