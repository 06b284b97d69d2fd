/* math_unary.c — constructors of the math family's unary ops
 * (include/emlx/elementwise.h): the dtype rules of MLX, the identities on
 * dtypes where an op changes nothing, and the casts that let kernels see
 * inputs in the compute dtype. */
#include "ops_util.h"
#include "params_math.h"

static bool is_floatish(emlx_dtype d) { return emlx_dtype_is_float(d) || emlx_dtype_is_complex(d); }

static emlx_array *make(emlx_prim prim, emlx_array *in, emlx_dtype out_dtype, const void *params,
                        size_t params_size) {
  return emlx__op(prim, &in, 1, params, params_size, out_dtype, in->shape, in->ndim);
}

/* Floating-point functions: ints and bool compute in float32. */
static emlx_array *float_fn(emlx_prim prim, emlx_array *a, bool complex_ok) {
  const char *op = emlx_prim_table[prim].name;
  EMLX_CHECK_ARRAY(a, op);
  if (emlx_dtype_is_complex(a->dtype) && !complex_ok)
    return EMLX_FAIL_NULL("%s: not supported for %s", op, emlx_dtype_name(a->dtype));
  emlx_dtype dt = is_floatish(a->dtype) ? a->dtype : EMLX_FLOAT32;
  emlx_array *in = emlx__cast(a, dt);
  if (!in)
    return NULL;
  emlx_array *out = make(prim, in, dt, NULL, 0);
  emlx_release(in);
  return out;
}

emlx_array *emlx_sqrt(emlx_array *a) { return float_fn(EMLX_PRIM_SQRT, a, true); }
emlx_array *emlx_rsqrt(emlx_array *a) { return float_fn(EMLX_PRIM_RSQRT, a, true); }
emlx_array *emlx_log(emlx_array *a) { return float_fn(EMLX_PRIM_LOG, a, true); }
emlx_array *emlx_log1p(emlx_array *a) { return float_fn(EMLX_PRIM_LOG1P, a, true); }
emlx_array *emlx_expm1(emlx_array *a) { return float_fn(EMLX_PRIM_EXPM1, a, false); }
emlx_array *emlx_sin(emlx_array *a) { return float_fn(EMLX_PRIM_SIN, a, true); }
emlx_array *emlx_cos(emlx_array *a) { return float_fn(EMLX_PRIM_COS, a, true); }
emlx_array *emlx_tan(emlx_array *a) { return float_fn(EMLX_PRIM_TAN, a, true); }
emlx_array *emlx_asin(emlx_array *a) { return float_fn(EMLX_PRIM_ASIN, a, true); }
emlx_array *emlx_acos(emlx_array *a) { return float_fn(EMLX_PRIM_ACOS, a, true); }
emlx_array *emlx_atan(emlx_array *a) { return float_fn(EMLX_PRIM_ATAN, a, true); }
emlx_array *emlx_sinh(emlx_array *a) { return float_fn(EMLX_PRIM_SINH, a, true); }
emlx_array *emlx_cosh(emlx_array *a) { return float_fn(EMLX_PRIM_COSH, a, true); }
emlx_array *emlx_tanh(emlx_array *a) { return float_fn(EMLX_PRIM_TANH, a, true); }
emlx_array *emlx_asinh(emlx_array *a) { return float_fn(EMLX_PRIM_ASINH, a, true); }
emlx_array *emlx_acosh(emlx_array *a) { return float_fn(EMLX_PRIM_ACOSH, a, true); }
emlx_array *emlx_atanh(emlx_array *a) { return float_fn(EMLX_PRIM_ATANH, a, true); }
emlx_array *emlx_erf(emlx_array *a) { return float_fn(EMLX_PRIM_ERF, a, false); }
emlx_array *emlx_erf_inv(emlx_array *a) { return float_fn(EMLX_PRIM_ERF_INV, a, false); }
emlx_array *emlx_erfc(emlx_array *a) { return float_fn(EMLX_PRIM_ERFC, a, false); }
emlx_array *emlx_sigmoid(emlx_array *a) { return float_fn(EMLX_PRIM_SIGMOID, a, false); }

emlx_array *emlx_abs(emlx_array *a) {
  EMLX_CHECK_ARRAY(a, "abs");
  if (a->dtype == EMLX_BOOL || (emlx_dtype_is_integer(a->dtype) && !emlx_dtype_is_signed(a->dtype)))
    return emlx_retain(a);
  return make(EMLX_PRIM_ABS, a, emlx_dtype_real_part(a->dtype), NULL, 0);
}

emlx_array *emlx_sign(emlx_array *a) {
  EMLX_CHECK_ARRAY(a, "sign");
  if (a->dtype == EMLX_BOOL)
    return emlx_retain(a);
  return make(EMLX_PRIM_SIGN, a, a->dtype, NULL, 0);
}

/* floor / ceil / round: identity on integers and bool. */
static emlx_array *rounding(emlx_prim prim, emlx_array *a, int mode, bool complex_ok) {
  const char *op = emlx_prim_table[prim].name;
  EMLX_CHECK_ARRAY(a, op);
  if (!is_floatish(a->dtype))
    return emlx_retain(a);
  if (emlx_dtype_is_complex(a->dtype) && !complex_ok)
    return EMLX_FAIL_NULL("%s: not supported for %s", op, emlx_dtype_name(a->dtype));
  emlx_math_mode_params p = {mode};
  return make(prim, a, a->dtype, prim == EMLX_PRIM_ROUND ? &p : NULL,
              prim == EMLX_PRIM_ROUND ? sizeof p : 0);
}
emlx_array *emlx_floor(emlx_array *a) { return rounding(EMLX_PRIM_FLOOR, a, 0, false); }
emlx_array *emlx_ceil(emlx_array *a) { return rounding(EMLX_PRIM_CEIL, a, 0, false); }
emlx_array *emlx_round(emlx_array *a) {
  return rounding(EMLX_PRIM_ROUND, a, EMLX_MATH_HALF_EVEN, true);
}
emlx_array *emlx_round_half_away(emlx_array *a) {
  return rounding(EMLX_PRIM_ROUND, a, EMLX_MATH_HALF_AWAY, true);
}

emlx_array *emlx_conjugate(emlx_array *a) {
  EMLX_CHECK_ARRAY(a, "conjugate");
  if (!emlx_dtype_is_complex(a->dtype))
    return emlx_retain(a);
  return make(EMLX_PRIM_CONJUGATE, a, a->dtype, NULL, 0);
}

emlx_array *emlx_real(emlx_array *a) {
  EMLX_CHECK_ARRAY(a, "real");
  if (!emlx_dtype_is_complex(a->dtype))
    return emlx_retain(a);
  return make(EMLX_PRIM_REAL, a, emlx_dtype_real_part(a->dtype), NULL, 0);
}

emlx_array *emlx_imag(emlx_array *a) {
  EMLX_CHECK_ARRAY(a, "imag");
  if (!emlx_dtype_is_complex(a->dtype))
    return emlx_zeros(a->shape, a->ndim, a->dtype, a->device);
  return make(EMLX_PRIM_IMAG, a, emlx_dtype_real_part(a->dtype), NULL, 0);
}

emlx_array *emlx_bitwise_not(emlx_array *a) {
  EMLX_CHECK_ARRAY(a, "bitwise_not");
  if (!emlx_dtype_is_integer(a->dtype) && a->dtype != EMLX_BOOL)
    return EMLX_FAIL_NULL("bitwise_not: expects an integer or bool array (got %s)",
                          emlx_dtype_name(a->dtype));
  return make(EMLX_PRIM_BITWISE_NOT, a, a->dtype, NULL, 0);
}

/* is_nan / is_infinity: false everywhere for integers and bool. */
static emlx_array *predicate(emlx_prim prim, emlx_array *a) {
  EMLX_CHECK_ARRAY(a, emlx_prim_table[prim].name);
  if (!is_floatish(a->dtype))
    return emlx_zeros(a->shape, a->ndim, EMLX_BOOL, a->device);
  return make(prim, a, EMLX_BOOL, NULL, 0);
}
emlx_array *emlx_is_nan(emlx_array *a) { return predicate(EMLX_PRIM_IS_NAN, a); }
emlx_array *emlx_is_infinity(emlx_array *a) { return predicate(EMLX_PRIM_IS_INF, a); }

emlx_array *emlx_logical_not(emlx_array *a) {
  EMLX_CHECK_ARRAY(a, "logical_not");
  emlx_array *in = emlx__cast(a, EMLX_BOOL);
  if (!in)
    return NULL;
  emlx_array *out = make(EMLX_PRIM_LOGICAL_NOT, in, EMLX_BOOL, NULL, 0);
  emlx_release(in);
  return out;
}
