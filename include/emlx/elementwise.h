/* emlx/elementwise.h — elementwise math beyond the basic ops: unary
 * functions, integer division, powers, comparisons, logical and bitwise ops,
 * where, clip, isclose, allclose.
 *
 * Conventions (see also ops.h): inputs are borrowed, a new lazy array is
 * returned (NULL + emlx_last_error() on failure). Binary ops broadcast
 * (NumPy rules) and promote both inputs with emlx_promote_types(); the
 * kernels see inputs already in that dtype. f16/bf16 are computed in f32 and
 * rounded once. Integer arithmetic wraps (two's complement). An op that
 * returns its input unchanged for some dtype (abs of unsigned, floor of an
 * integer, ...) returns a new reference to the input itself.
 *
 * Accuracy (f32, against the correctly rounded result): exp (emlx_exp in
 * ops.h), sin and cos are the C library's double result rounded once,
 * (float)exp((double)x) bit for bit (as Nx.BinaryBackend computes f32):
 * correctly rounded but for the rare inputs where libm's double lands on
 * the other side of an f32 rounding boundary (<= 1 ulp there), unfused or
 * fused; sqrt, rsqrt, floor, ceil, round, abs, sign exact or <= 1 ulp;
 * erf, erf_inv, expm1, logs, tan, inverse trig and hyperbolic functions
 * (SLEEF u10 or our own code) <= 2 ulp; tanh <= 2 ulp; sigmoid <= 3 ulp;
 * pow and atan2 <= 2 ulp.
 * f16/bf16 results are within 1 ulp of the correctly rounded value. f64
 * transcendentals are SLEEF's 1-ulp functions (erf_inv: <= 4 ulp).
 * complex64 functions are computed in double with C99 <complex.h>
 * semantics and rounded once. The bounds hold over the whole range: at the
 * overflow and underflow thresholds, on subnormals and on the largest
 * values (where SLEEF stops short, as sinh/cosh/exp just below overflow and
 * asinh/acosh/log1p of huge x, the result is computed one precision up);
 * tests/elementwise/test_math_edges.c checks them there. */
#ifndef EMLX_ELEMENTWISE_H
#define EMLX_ELEMENTWISE_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- unary: same dtype in and out ----------------------------------------
 * abs: |x|; signed integers wrap (abs(INT8_MIN) == INT8_MIN); unsigned and
 *   bool are returned as is; complex64 gives the float32 magnitude.
 * sign: -1, 0, 1 in the input's dtype; floats keep the sign of zero
 *   (sign(-0.0) == -0.0) and NaN stays NaN (MLX returns 0 for both; we follow
 *   NumPy/XLA); unsigned gives 0/1; bool is returned as is; complex64 gives
 *   z / |z| (0 for 0; an infinite part gives the unit on its axis, two
 *   give NaN, as NumPy: sign(1 + inf j) == 1j, sign(inf + 1j) == 1 + 0j).
 * floor, ceil: identity on integers and bool; error on complex64.
 * round: half to even (MLX/NumPy: round(0.5) == 0, round(-0.5) == -0.0,
 *   round(2.5) == 2); identity on integers and bool; complex64 rounds both
 *   parts. round_half_away: ties away from zero (Nx/Elixir: round(0.5) == 1,
 *   round(-0.5) == -1); same dtypes (complex64 rounds both parts so).
 * conjugate, real: identity on real dtypes; on complex64 conjugate negates
 *   the imaginary part and real gives the float32 real part.
 * imag: float32 imaginary part of complex64; zeros of the input's dtype for
 *   real dtypes (as MLX).
 * bitwise_not: integers and bool (bool: logical not); error on floats. */
EMLX_API emlx_array *emlx_abs(emlx_array *a);
EMLX_API emlx_array *emlx_sign(emlx_array *a);
EMLX_API emlx_array *emlx_floor(emlx_array *a);
EMLX_API emlx_array *emlx_ceil(emlx_array *a);
EMLX_API emlx_array *emlx_round(emlx_array *a);
EMLX_API emlx_array *emlx_round_half_away(emlx_array *a);
EMLX_API emlx_array *emlx_conjugate(emlx_array *a);
EMLX_API emlx_array *emlx_real(emlx_array *a);
EMLX_API emlx_array *emlx_imag(emlx_array *a);
EMLX_API emlx_array *emlx_bitwise_not(emlx_array *a);

/* ---- unary: floating-point functions -------------------------------------
 * Integer and bool inputs give float32; f16, bf16, f32, f64 keep their
 * dtype. complex64 is accepted (complex result, principal branches of C99)
 * by sqrt, rsqrt, log, log1p (log(1 + z)), sin, cos, tan, sinh, cosh, tanh,
 * asin, acos, atan, asinh, acosh, atanh; expm1, erf, erf_inv and sigmoid
 * reject it (as MLX). Out-of-domain inputs give NaN (sqrt(-1), log(-1),
 * acos(2), erf_inv(2)); poles give infinities (log(0) == -inf,
 * rsqrt(+-0) == +-inf, atanh(1) == inf, erf_inv(+-1) == +-inf).
 * sigmoid(x) = 1 / (1 + exp(-x)). */
EMLX_API emlx_array *emlx_sqrt(emlx_array *a);
EMLX_API emlx_array *emlx_rsqrt(emlx_array *a);
EMLX_API emlx_array *emlx_log(emlx_array *a);
EMLX_API emlx_array *emlx_log1p(emlx_array *a);
EMLX_API emlx_array *emlx_expm1(emlx_array *a);
EMLX_API emlx_array *emlx_sin(emlx_array *a);
EMLX_API emlx_array *emlx_cos(emlx_array *a);
EMLX_API emlx_array *emlx_tan(emlx_array *a);
EMLX_API emlx_array *emlx_asin(emlx_array *a);
EMLX_API emlx_array *emlx_acos(emlx_array *a);
EMLX_API emlx_array *emlx_atan(emlx_array *a);
EMLX_API emlx_array *emlx_sinh(emlx_array *a);
EMLX_API emlx_array *emlx_cosh(emlx_array *a);
EMLX_API emlx_array *emlx_tanh(emlx_array *a);
EMLX_API emlx_array *emlx_asinh(emlx_array *a);
EMLX_API emlx_array *emlx_acosh(emlx_array *a);
EMLX_API emlx_array *emlx_atanh(emlx_array *a);
EMLX_API emlx_array *emlx_erf(emlx_array *a);
EMLX_API emlx_array *emlx_erf_inv(emlx_array *a);
/* 1 - erf(a), without the cancellation for large a. */
EMLX_API emlx_array *emlx_erfc(emlx_array *a);
EMLX_API emlx_array *emlx_sigmoid(emlx_array *a);

/* ---- unary: predicates (bool output) -------------------------------------
 * is_nan / is_infinity: false for integer and bool inputs; complex64: either
 * part. logical_not: x == 0 (NaN is true, so logical_not(NaN) is false). */
EMLX_API emlx_array *emlx_is_nan(emlx_array *a);
EMLX_API emlx_array *emlx_is_infinity(emlx_array *a);
EMLX_API emlx_array *emlx_logical_not(emlx_array *a);

/* ---- binary arithmetic ---------------------------------------------------
 * quotient: division rounded toward zero (Nx's quotient, C's `/`); floats
 *   give trunc(a / b). floor_divide: rounded toward -inf (MLX's and Python's
 *   `//`); floats give floor(a / b). For integers both define x / 0 == 0 and
 *   wrap INT_MIN / -1 to INT_MIN (never a trap). bool: a & b. complex64 is an
 *   error.
 * remainder: MLX/Python `%`: the result has the sign of the divisor
 *   (remainder(-7, 2) == 1); a zero float result takes the divisor's sign.
 *   remainder_trunc: C fmod / Nx / Elixir rem: the sign of the dividend
 *   (remainder_trunc(-7, 2) == -1). Both: integer x % 0 == 0, INT_MIN % -1
 *   == 0; float x % 0 and inf % y are NaN; finite % inf is x for
 *   remainder_trunc, and for remainder x when x and the divisor have the same
 *   sign (else the divisor, as MLX). bool: 0. complex64 is an error.
 * pow: floats use pow() (pow(x, 0) == 1 even for NaN x); complex64 cpow.
 *   Integers by repeated squaring, wrapping on overflow; a negative
 *   exponent gives 1 for base 1, +-1 for base -1 (sign by parity) and 0
 *   otherwise (0 ** -1 == 0, as XLA). bool: a | !b.
 * atan2(a, b): angle of (b, a) in [-pi, pi]; ints and bool give float32;
 *   complex64 is an error.
 * maximum / minimum: NaN in either input propagates (NaN result);
 *   -0.0 < +0.0 (maximum(-0.0, 0.0) == 0.0, minimum == -0.0) whatever the
 *   order; complex64 compares lexicographically (real part, then
 *   imaginary); bool: or / and. */
EMLX_API emlx_array *emlx_quotient(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_floor_divide(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_remainder(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_remainder_trunc(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_pow(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_atan2(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_maximum(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_minimum(emlx_array *a, emlx_array *b);

/* ---- comparisons (bool output, inputs promoted first) ---------------------
 * NaN compares false except with not_equal (true). -0.0 == 0.0. complex64:
 * equal / not_equal on both parts; the orderings compare lexicographically
 * (real part, then imaginary), as MLX. */
EMLX_API emlx_array *emlx_equal(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_not_equal(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_greater(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_greater_equal(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_less(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_less_equal(emlx_array *a, emlx_array *b);

/* ---- logical (bool output): each input is converted to bool first ("!= 0";
 * NaN is true, complex: either part) ---------------------------------------- */
EMLX_API emlx_array *emlx_logical_and(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_logical_or(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_logical_xor(emlx_array *a, emlx_array *b);

/* ---- bitwise: integers and bool (promoted; floats and complex64 are an
 * error) ----------------------------------------------------------------------
 * Shifts: bool operands promote to uint8 (as MLX). The count is read as an
 * unsigned number, so a negative count acts like one >= the width. left_shift
 * by >= the width gives 0; right_shift is arithmetic for signed dtypes
 * (the sign fills: -8 >> 1 == -4) and logical for unsigned, and by >= the
 * width gives 0 (or -1 for a negative signed value). */
EMLX_API emlx_array *emlx_bitwise_and(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_bitwise_or(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_bitwise_xor(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_left_shift(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_right_shift(emlx_array *a, emlx_array *b);

/* ---- selection -------------------------------------------------------------
 * where: cond converted to bool; x and y promoted to a common dtype; the
 *   three shapes broadcast together.
 * clip: minimum(maximum(a, a_min), a_max) with maximum/minimum's rules
 *   (NaN propagates; with a_min > a_max the result is a_max). Either bound
 *   may be NULL (no bound on that side), not both. The result dtype
 *   promotes a with the bounds given (clip(int8, float32 bound) is float32,
 *   as MLX); shapes broadcast. */
EMLX_API emlx_array *emlx_where(emlx_array *cond, emlx_array *x, emlx_array *y);
EMLX_API emlx_array *emlx_clip(emlx_array *a, emlx_array *a_min, emlx_array *a_max);

/* ---- closeness ---------------------------------------------------------------
 * isclose: |a - b| <= atol + rtol * |b| elementwise (bool; NumPy/MLX
 *   defaults are rtol 1e-5, atol 1e-8), computed in double after promotion
 *   (complex64: magnitudes of a - b and b). Infinities are close only to
 *   the same infinity; NaN is close to nothing, or to NaN when equal_nan.
 *   rtol and atol must be finite and >= 0.
 * allclose: all(isclose(...)) as a 0-d bool array (true for empty inputs). */
EMLX_API emlx_array *emlx_isclose(emlx_array *a, emlx_array *b, double rtol, double atol,
                                  bool equal_nan);
EMLX_API emlx_array *emlx_allclose(emlx_array *a, emlx_array *b, double rtol, double atol,
                                   bool equal_nan);

/* ---- MLX's everyday compositions (one fused pass at eval) -----------------
 * logaddexp: log(exp(a) + exp(b)) without overflow (max + log1p(exp(min -
 *   max))); promotes like the binary ops, integers and bool give float32;
 *   logaddexp(-inf, -inf) == -inf, (+inf, x) == +inf, NaN propagates.
 * log2, log10: log(x) / log(2 or 10), computed in f64 and rounded once
 *   (f16/bf16/f32 are correctly rounded but in rare ties; f64 <= 2 ulp);
 *   integers and bool give float32; complex64 is an error.
 * isfinite: not NaN and not infinite (true for integers and bool);
 *   isposinf / isneginf: +inf / -inf (false for integers and bool).
 * nan_to_num: NaN -> nan, +inf -> *posinf, -inf -> *neginf (NULL: the
 *   dtype's largest / lowest finite value, as numpy and MLX); the values are
 *   cast to a's dtype; integers and bool are returned as they are.
 * square: a * a (a's dtype); reciprocal: 1 / a (divide's dtypes: integers
 *   give float32). */
EMLX_API emlx_array *emlx_logaddexp(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_log2(emlx_array *a);
EMLX_API emlx_array *emlx_log10(emlx_array *a);
EMLX_API emlx_array *emlx_isfinite(emlx_array *a);
EMLX_API emlx_array *emlx_isposinf(emlx_array *a);
EMLX_API emlx_array *emlx_isneginf(emlx_array *a);
EMLX_API emlx_array *emlx_nan_to_num(emlx_array *a, double nan, const double *posinf,
                                     const double *neginf);
EMLX_API emlx_array *emlx_square(emlx_array *a);
EMLX_API emlx_array *emlx_reciprocal(emlx_array *a);

#ifdef __cplusplus
}
#endif
#endif
