/* elementwise.c — constructors of elementwise ops: promotion, broadcasting
 * and the casts that let kernels see inputs of the output's dtype. */
#include "ops_util.h"

static emlx_array *binary(emlx_prim prim, emlx_array *a, emlx_array *b, bool float_result) {
  const char *op = emlx_prim_table[prim].name;
  EMLX_CHECK_ARRAY(a, op);
  EMLX_CHECK_ARRAY(b, op);
  if (a->device != b->device)
    return EMLX_FAIL_NULL("%s: mismatched devices (%s and %s)", op, emlx_device_name(a->device),
                          emlx_device_name(b->device));
  int64_t shape[EMLX_MAX_NDIM];
  int nd = emlx__broadcast_shapes(a->shape, a->ndim, b->shape, b->ndim, shape, op);
  if (nd < 0) return NULL;
  emlx_dtype dtype = emlx_promote_types(a->dtype, b->dtype);
  if (float_result && !emlx_dtype_is_float(dtype) && !emlx_dtype_is_complex(dtype))
    dtype = EMLX_FLOAT32;
  emlx_array *ca = emlx__cast(a, dtype);
  emlx_array *cb = ca ? emlx__cast(b, dtype) : NULL;
  emlx_array *out = NULL;
  if (ca && cb) {
    emlx_array *in[2] = {ca, cb};
    out = emlx__op(prim, in, 2, NULL, 0, dtype, shape, nd);
  }
  emlx_release(ca);
  emlx_release(cb);
  return out;
}

emlx_array *emlx_add(emlx_array *a, emlx_array *b) {
  return binary(EMLX_PRIM_ADD, a, b, false);
}
emlx_array *emlx_subtract(emlx_array *a, emlx_array *b) {
  return binary(EMLX_PRIM_SUBTRACT, a, b, false);
}
emlx_array *emlx_multiply(emlx_array *a, emlx_array *b) {
  return binary(EMLX_PRIM_MULTIPLY, a, b, false);
}
emlx_array *emlx_divide(emlx_array *a, emlx_array *b) {
  return binary(EMLX_PRIM_DIVIDE, a, b, true);
}

emlx_array *emlx_negate(emlx_array *a) {
  EMLX_CHECK_ARRAY(a, "negate");
  if (a->dtype == EMLX_BOOL)
    return EMLX_FAIL_NULL("negate: not supported for bool (use logical_not)");
  return emlx__op(EMLX_PRIM_NEGATE, &a, 1, NULL, 0, a->dtype, a->shape, a->ndim);
}

emlx_array *emlx_exp(emlx_array *a) {
  EMLX_CHECK_ARRAY(a, "exp");
  emlx_dtype dtype =
      emlx_dtype_is_float(a->dtype) || emlx_dtype_is_complex(a->dtype) ? a->dtype : EMLX_FLOAT32;
  emlx_array *in = emlx__cast(a, dtype);
  if (!in) return NULL;
  emlx_array *out = emlx__op(EMLX_PRIM_EXP, &in, 1, NULL, 0, dtype, a->shape, a->ndim);
  emlx_release(in);
  return out;
}

emlx_array *emlx_astype(emlx_array *a, emlx_dtype dtype) {
  EMLX_CHECK_ARRAY(a, "astype");
  if (!emlx_dtype_is_valid(dtype)) return EMLX_FAIL_NULL("astype: invalid dtype %d", (int)dtype);
  return emlx__cast(a, dtype);
}

emlx_array *emlx_copy(emlx_array *a) {
  EMLX_CHECK_ARRAY(a, "copy");
  return emlx__op(EMLX_PRIM_COPY, &a, 1, NULL, 0, a->dtype, a->shape, a->ndim);
}
