/* params_math.h — parameters of the math family's primitives
 * (include/emlx/elementwise.h). Plain data, zero-initialised padding: nodes
 * compare them bytewise. */
#ifndef EMLX_PARAMS_MATH_H
#define EMLX_PARAMS_MATH_H

#include <stdint.h>

/* QUOTIENT, REMAINDER: how the quotient rounds. ROUND: how ties go. A node
 * without params means mode 0. */
enum {
  EMLX_MATH_FLOOR = 0,     /* QUOTIENT/REMAINDER: toward -inf (MLX, Python) */
  EMLX_MATH_TRUNC = 1,     /* QUOTIENT/REMAINDER: toward zero (C, Nx) */
  EMLX_MATH_HALF_EVEN = 0, /* ROUND: ties to even (MLX, NumPy) */
  EMLX_MATH_HALF_AWAY = 1, /* ROUND: ties away from zero (Nx) */
};

typedef struct emlx_math_mode_params {
  int32_t mode;
} emlx_math_mode_params;

/* ISCLOSE: |a - b| <= atol + rtol * |b|. */
typedef struct emlx_isclose_params {
  double rtol;
  double atol;
  int32_t equal_nan;
  int32_t pad; /* zero */
} emlx_isclose_params;

#endif
