/* math_binary.c — constructors of the math family's binary ops
 * (include/emlx/elementwise.h): broadcasting, MLX's promotion, the dtype
 * each op accepts, and the casts that let kernels see two inputs of the
 * compute dtype. */
#include "ops_util.h"
#include "params_math.h"

typedef enum {
  K_ARITH,   /* quotient, remainder: reals */
  K_ANY,     /* pow, maximum, minimum: every dtype */
  K_FLOATFN, /* atan2: ints and bool compute in float32; no complex */
  K_CMP,     /* comparisons: every dtype, bool out */
  K_LOGICAL, /* inputs converted to bool */
  K_BITWISE, /* integers and bool */
  K_SHIFT,   /* integers (bool promotes to uint8) */
} kind;

static emlx_array *math_binary(emlx_prim prim, emlx_array *a, emlx_array *b, kind k,
                               const void *params, size_t params_size) {
  const char *op = emlx_prim_table[prim].name;
  EMLX_CHECK_ARRAY(a, op);
  EMLX_CHECK_ARRAY(b, op);
  if (a->device != b->device)
    return EMLX_FAIL_NULL("%s: mismatched devices (%s and %s)", op, emlx_device_name(a->device),
                          emlx_device_name(b->device));
  int64_t shape[EMLX_MAX_NDIM];
  int nd = emlx__broadcast_shapes(a->shape, a->ndim, b->shape, b->ndim, shape, op);
  if (nd < 0)
    return NULL;
  emlx_dtype dt = emlx_promote_types(a->dtype, b->dtype), out_dt = dt;
  bool is_int = emlx_dtype_is_integer(dt) || dt == EMLX_BOOL;
  switch (k) {
  case K_ARITH:
    if (emlx_dtype_is_complex(dt))
      return EMLX_FAIL_NULL("%s: not supported for %s", op, emlx_dtype_name(dt));
    break;
  case K_ANY:
    break;
  case K_FLOATFN:
    if (emlx_dtype_is_complex(dt))
      return EMLX_FAIL_NULL("%s: not supported for %s", op, emlx_dtype_name(dt));
    if (is_int)
      dt = out_dt = EMLX_FLOAT32;
    break;
  case K_CMP:
    out_dt = EMLX_BOOL;
    break;
  case K_LOGICAL:
    dt = out_dt = EMLX_BOOL;
    break;
  case K_BITWISE:
  case K_SHIFT:
    if (!is_int)
      return EMLX_FAIL_NULL("%s: expects integer or bool arrays (got %s and %s)", op,
                            emlx_dtype_name(a->dtype), emlx_dtype_name(b->dtype));
    if (k == K_SHIFT && dt == EMLX_BOOL)
      dt = out_dt = EMLX_UINT8;
    break;
  }
  emlx_array *ca = emlx__cast(a, dt);
  emlx_array *cb = ca ? emlx__cast(b, dt) : NULL;
  emlx_array *out = NULL;
  if (ca && cb) {
    emlx_array *in[2] = {ca, cb};
    out = emlx__op(prim, in, 2, params, params_size, out_dt, shape, nd);
  }
  emlx_release(ca);
  emlx_release(cb);
  return out;
}

static emlx_array *divmod(emlx_prim prim, emlx_array *a, emlx_array *b, int mode) {
  emlx_math_mode_params p = {mode};
  return math_binary(prim, a, b, K_ARITH, &p, sizeof p);
}
emlx_array *emlx_quotient(emlx_array *a, emlx_array *b) {
  return divmod(EMLX_PRIM_QUOTIENT, a, b, EMLX_MATH_TRUNC);
}
emlx_array *emlx_floor_divide(emlx_array *a, emlx_array *b) {
  return divmod(EMLX_PRIM_QUOTIENT, a, b, EMLX_MATH_FLOOR);
}
emlx_array *emlx_remainder(emlx_array *a, emlx_array *b) {
  return divmod(EMLX_PRIM_REMAINDER, a, b, EMLX_MATH_FLOOR);
}
emlx_array *emlx_remainder_trunc(emlx_array *a, emlx_array *b) {
  return divmod(EMLX_PRIM_REMAINDER, a, b, EMLX_MATH_TRUNC);
}

#define BIN(NAME, PRIM, KIND)                                                                      \
  emlx_array *emlx_##NAME(emlx_array *a, emlx_array *b) {                                          \
    return math_binary(PRIM, a, b, KIND, NULL, 0);                                                 \
  }
BIN(pow, EMLX_PRIM_POW, K_ANY)
BIN(atan2, EMLX_PRIM_ATAN2, K_FLOATFN)
BIN(maximum, EMLX_PRIM_MAXIMUM, K_ANY)
BIN(minimum, EMLX_PRIM_MINIMUM, K_ANY)
BIN(equal, EMLX_PRIM_EQUAL, K_CMP)
BIN(not_equal, EMLX_PRIM_NOT_EQUAL, K_CMP)
BIN(greater, EMLX_PRIM_GREATER, K_CMP)
BIN(greater_equal, EMLX_PRIM_GREATER_EQUAL, K_CMP)
BIN(less, EMLX_PRIM_LESS, K_CMP)
BIN(less_equal, EMLX_PRIM_LESS_EQUAL, K_CMP)
BIN(logical_and, EMLX_PRIM_LOGICAL_AND, K_LOGICAL)
BIN(logical_or, EMLX_PRIM_LOGICAL_OR, K_LOGICAL)
BIN(logical_xor, EMLX_PRIM_LOGICAL_XOR, K_LOGICAL)
BIN(bitwise_and, EMLX_PRIM_BITWISE_AND, K_BITWISE)
BIN(bitwise_or, EMLX_PRIM_BITWISE_OR, K_BITWISE)
BIN(bitwise_xor, EMLX_PRIM_BITWISE_XOR, K_BITWISE)
BIN(left_shift, EMLX_PRIM_LEFT_SHIFT, K_SHIFT)
BIN(right_shift, EMLX_PRIM_RIGHT_SHIFT, K_SHIFT)
