/* nif_math.c — the handlers of the math family's rows (unary functions,
 * integer division, powers, comparisons, logical and bitwise ops, where,
 * clip, isclose, allclose; include/emlx/elementwise.h). Each makes one lazy
 * node and returns; the engine validates dtypes and shapes. */
#include "emlx_nif.h"

#define UNARY(handler, fn)                                                                         \
  NIF_HANDLER(handler) { return nif_ok_tensor(c, fn(a[0].array)); }
#define BINARY(handler, fn)                                                                        \
  NIF_HANDLER(handler) { return nif_ok_tensor(c, fn(a[0].array, a[1].array)); }

UNARY(h_abs, emlx_abs)
UNARY(h_acos, emlx_acos)
UNARY(h_acosh, emlx_acosh)
UNARY(h_asin, emlx_asin)
UNARY(h_asinh, emlx_asinh)
UNARY(h_atan, emlx_atan)
UNARY(h_atanh, emlx_atanh)
UNARY(h_bitwise_not, emlx_bitwise_not)
UNARY(h_ceil, emlx_ceil)
UNARY(h_conjugate, emlx_conjugate)
UNARY(h_cos, emlx_cos)
UNARY(h_cosh, emlx_cosh)
UNARY(h_erf, emlx_erf)
UNARY(h_erf_inv, emlx_erf_inv)
UNARY(h_erfc, emlx_erfc)
UNARY(h_expm1, emlx_expm1)
UNARY(h_floor, emlx_floor)
UNARY(h_imag, emlx_imag)
UNARY(h_is_infinity, emlx_is_infinity)
UNARY(h_is_nan, emlx_is_nan)
UNARY(h_log, emlx_log)
UNARY(h_log1p, emlx_log1p)
UNARY(h_logical_not, emlx_logical_not)
UNARY(h_real, emlx_real)
UNARY(h_round, emlx_round)
UNARY(h_round_half_away, emlx_round_half_away)
UNARY(h_rsqrt, emlx_rsqrt)
UNARY(h_sigmoid, emlx_sigmoid)
UNARY(h_sign, emlx_sign)
UNARY(h_sin, emlx_sin)
UNARY(h_sinh, emlx_sinh)
UNARY(h_sqrt, emlx_sqrt)
UNARY(h_tan, emlx_tan)
UNARY(h_tanh, emlx_tanh)

BINARY(h_quotient, emlx_quotient)
BINARY(h_floor_divide, emlx_floor_divide)
BINARY(h_remainder, emlx_remainder)
BINARY(h_remainder_trunc, emlx_remainder_trunc)
BINARY(h_pow, emlx_pow)
BINARY(h_atan2, emlx_atan2)
BINARY(h_maximum, emlx_maximum)
BINARY(h_minimum, emlx_minimum)
BINARY(h_equal, emlx_equal)
BINARY(h_not_equal, emlx_not_equal)
BINARY(h_greater, emlx_greater)
BINARY(h_greater_equal, emlx_greater_equal)
BINARY(h_less, emlx_less)
BINARY(h_less_equal, emlx_less_equal)
BINARY(h_logical_and, emlx_logical_and)
BINARY(h_logical_or, emlx_logical_or)
BINARY(h_logical_xor, emlx_logical_xor)
BINARY(h_bitwise_and, emlx_bitwise_and)
BINARY(h_bitwise_or, emlx_bitwise_or)
BINARY(h_bitwise_xor, emlx_bitwise_xor)
BINARY(h_left_shift, emlx_left_shift)
BINARY(h_right_shift, emlx_right_shift)

NIF_HANDLER(h_where) { return nif_ok_tensor(c, emlx_where(a[0].array, a[1].array, a[2].array)); }

/* clip(tensor, min | nil, max | nil). */
NIF_HANDLER(h_clip) {
  return nif_ok_tensor(
      c, emlx_clip(a[0].array, a[1].present ? a[1].array : NULL, a[2].present ? a[2].array : NULL));
}

/* isclose / allclose(a, b, rtol, atol, equal_nan). */
NIF_HANDLER(h_isclose) {
  return nif_ok_tensor(c, emlx_isclose(a[0].array, a[1].array, a[2].f, a[3].f, a[4].b));
}
NIF_HANDLER(h_allclose) {
  return nif_ok_tensor(c, emlx_allclose(a[0].array, a[1].array, a[2].f, a[3].f, a[4].b));
}
