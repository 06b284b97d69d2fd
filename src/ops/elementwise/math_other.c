/* math_other.c — constructors of where, clip, isclose and allclose
 * (include/emlx/elementwise.h): three-way broadcasting and promotion. */
#include <math.h>
#include <string.h>

#include "ops_util.h"
#include "params_math.h"

static int same_device(emlx_array *const *arrs, int n, const char *op) {
  for (int i = 1; i < n; i++)
    if (arrs[i]->device != arrs[0]->device)
      return EMLX_FAIL("%s: mismatched devices (%s and %s)", op, emlx_device_name(arrs[0]->device),
                       emlx_device_name(arrs[i]->device));
  return 0;
}

/* Broadcast shape of n arrays into shape; returns its rank or -1. */
static int broadcast_all(emlx_array *const *arrs, int n, int64_t *shape, const char *op) {
  int64_t tmp[EMLX_MAX_NDIM];
  int nd = arrs[0]->ndim;
  for (int d = 0; d < nd; d++)
    shape[d] = arrs[0]->shape[d];
  for (int i = 1; i < n; i++) {
    nd = emlx__broadcast_shapes(shape, nd, arrs[i]->shape, arrs[i]->ndim, tmp, op);
    if (nd < 0)
      return -1;
    for (int d = 0; d < nd; d++)
      shape[d] = tmp[d];
  }
  return nd;
}

/* Casts arrs[i] to dts[i] and makes the node; releases the casts. */
static emlx_array *cast_and_make(emlx_prim prim, emlx_array *const *arrs, const emlx_dtype *dts,
                                 int n, const void *params, size_t params_size, emlx_dtype out_dt,
                                 const int64_t *shape, int nd) {
  emlx_array *in[3] = {NULL, NULL, NULL};
  emlx_array *out = NULL;
  int ok = 1;
  for (int i = 0; i < n && ok; i++)
    ok = (in[i] = emlx__cast(arrs[i], dts[i])) != NULL;
  if (ok)
    out = emlx__op(prim, in, n, params, params_size, out_dt, shape, nd);
  for (int i = 0; i < n; i++)
    emlx_release(in[i]);
  return out;
}

emlx_array *emlx_where(emlx_array *cond, emlx_array *x, emlx_array *y) {
  EMLX_CHECK_ARRAY(cond, "where");
  EMLX_CHECK_ARRAY(x, "where");
  EMLX_CHECK_ARRAY(y, "where");
  emlx_array *arrs[3] = {cond, x, y};
  int64_t shape[EMLX_MAX_NDIM];
  if (same_device(arrs, 3, "where") != 0)
    return NULL;
  int nd = broadcast_all(arrs, 3, shape, "where");
  if (nd < 0)
    return NULL;
  emlx_dtype dt = emlx_promote_types(x->dtype, y->dtype);
  emlx_dtype dts[3] = {EMLX_BOOL, dt, dt};
  return cast_and_make(EMLX_PRIM_WHERE, arrs, dts, 3, NULL, 0, dt, shape, nd);
}

emlx_array *emlx_clip(emlx_array *a, emlx_array *a_min, emlx_array *a_max) {
  EMLX_CHECK_ARRAY(a, "clip");
  if (!a_min && !a_max)
    return EMLX_FAIL_NULL("clip: at most one of a_min and a_max may be NULL");
  if (!a_min)
    return emlx_minimum(a, a_max);
  if (!a_max)
    return emlx_maximum(a, a_min);
  emlx_array *arrs[3] = {a, a_min, a_max};
  int64_t shape[EMLX_MAX_NDIM];
  if (same_device(arrs, 3, "clip") != 0)
    return NULL;
  int nd = broadcast_all(arrs, 3, shape, "clip");
  if (nd < 0)
    return NULL;
  emlx_dtype dt = emlx_promote_types(emlx_promote_types(a->dtype, a_min->dtype), a_max->dtype);
  emlx_dtype dts[3] = {dt, dt, dt};
  return cast_and_make(EMLX_PRIM_CLIP, arrs, dts, 3, NULL, 0, dt, shape, nd);
}

emlx_array *emlx_isclose(emlx_array *a, emlx_array *b, double rtol, double atol, bool equal_nan) {
  EMLX_CHECK_ARRAY(a, "isclose");
  EMLX_CHECK_ARRAY(b, "isclose");
  if (!(isfinite(rtol) && rtol >= 0) || !(isfinite(atol) && atol >= 0))
    return EMLX_FAIL_NULL("isclose: rtol and atol must be finite and >= 0 (got %g, %g)", rtol,
                          atol);
  emlx_array *arrs[2] = {a, b};
  int64_t shape[EMLX_MAX_NDIM];
  if (same_device(arrs, 2, "isclose") != 0)
    return NULL;
  int nd = broadcast_all(arrs, 2, shape, "isclose");
  if (nd < 0)
    return NULL;
  emlx_dtype dt = emlx_promote_types(a->dtype, b->dtype);
  emlx_dtype dts[2] = {dt, dt};
  emlx_isclose_params p;
  memset(&p, 0, sizeof p);
  p.rtol = rtol;
  p.atol = atol;
  p.equal_nan = equal_nan;
  return cast_and_make(EMLX_PRIM_ISCLOSE, arrs, dts, 2, &p, sizeof p, EMLX_BOOL, shape, nd);
}

emlx_array *emlx_allclose(emlx_array *a, emlx_array *b, double rtol, double atol, bool equal_nan) {
  emlx_array *c = emlx_isclose(a, b, rtol, atol, equal_nan);
  if (!c)
    return NULL;
  emlx_array *out = emlx_all(c, NULL, 0, false);
  emlx_release(c);
  return out;
}
