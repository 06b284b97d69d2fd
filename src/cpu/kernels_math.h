/* kernels_math.h — the math family's rows of the CPU backend's table
 * (src/cpu/backend.c expands EMLX_CPU_MATH_KERNELS): every op runs
 * elementwise.c's kernel. */
#ifndef EMLX_CPU_KERNELS_MATH_H
#define EMLX_CPU_KERNELS_MATH_H

#include "cpu.h"

/* Designated initialisers "[EMLX_PRIM_X] = kernel," for this family. */
#define EMLX_CPU_MATH_KERNELS                                                                      \
  [EMLX_PRIM_ABS] = emlx_cpu_elementwise, [EMLX_PRIM_ACOS] = emlx_cpu_elementwise,                 \
  [EMLX_PRIM_ACOSH] = emlx_cpu_elementwise, [EMLX_PRIM_ASIN] = emlx_cpu_elementwise,               \
  [EMLX_PRIM_ASINH] = emlx_cpu_elementwise, [EMLX_PRIM_ATAN] = emlx_cpu_elementwise,               \
  [EMLX_PRIM_ATANH] = emlx_cpu_elementwise, [EMLX_PRIM_BITWISE_NOT] = emlx_cpu_elementwise,        \
  [EMLX_PRIM_CEIL] = emlx_cpu_elementwise, [EMLX_PRIM_CONJUGATE] = emlx_cpu_elementwise,           \
  [EMLX_PRIM_COS] = emlx_cpu_elementwise, [EMLX_PRIM_COSH] = emlx_cpu_elementwise,                 \
  [EMLX_PRIM_ERF] = emlx_cpu_elementwise, [EMLX_PRIM_ERF_INV] = emlx_cpu_elementwise,              \
  [EMLX_PRIM_ERFC] = emlx_cpu_elementwise,                                                         \
  [EMLX_PRIM_EXPM1] = emlx_cpu_elementwise, [EMLX_PRIM_FLOOR] = emlx_cpu_elementwise,              \
  [EMLX_PRIM_IMAG] = emlx_cpu_elementwise, [EMLX_PRIM_IS_INF] = emlx_cpu_elementwise,              \
  [EMLX_PRIM_IS_NAN] = emlx_cpu_elementwise, [EMLX_PRIM_LOG] = emlx_cpu_elementwise,               \
  [EMLX_PRIM_LOG1P] = emlx_cpu_elementwise, [EMLX_PRIM_LOGICAL_NOT] = emlx_cpu_elementwise,        \
  [EMLX_PRIM_REAL] = emlx_cpu_elementwise, [EMLX_PRIM_ROUND] = emlx_cpu_elementwise,               \
  [EMLX_PRIM_RSQRT] = emlx_cpu_elementwise, [EMLX_PRIM_SIGMOID] = emlx_cpu_elementwise,            \
  [EMLX_PRIM_SIGN] = emlx_cpu_elementwise, [EMLX_PRIM_SIN] = emlx_cpu_elementwise,                 \
  [EMLX_PRIM_SINH] = emlx_cpu_elementwise, [EMLX_PRIM_SQRT] = emlx_cpu_elementwise,                \
  [EMLX_PRIM_TAN] = emlx_cpu_elementwise, [EMLX_PRIM_TANH] = emlx_cpu_elementwise,                 \
  [EMLX_PRIM_QUOTIENT] = emlx_cpu_elementwise, [EMLX_PRIM_REMAINDER] = emlx_cpu_elementwise,       \
  [EMLX_PRIM_POW] = emlx_cpu_elementwise, [EMLX_PRIM_ATAN2] = emlx_cpu_elementwise,                \
  [EMLX_PRIM_MAXIMUM] = emlx_cpu_elementwise, [EMLX_PRIM_MINIMUM] = emlx_cpu_elementwise,          \
  [EMLX_PRIM_EQUAL] = emlx_cpu_elementwise, [EMLX_PRIM_NOT_EQUAL] = emlx_cpu_elementwise,          \
  [EMLX_PRIM_GREATER] = emlx_cpu_elementwise, [EMLX_PRIM_GREATER_EQUAL] = emlx_cpu_elementwise,    \
  [EMLX_PRIM_LESS] = emlx_cpu_elementwise, [EMLX_PRIM_LESS_EQUAL] = emlx_cpu_elementwise,          \
  [EMLX_PRIM_LOGICAL_AND] = emlx_cpu_elementwise, [EMLX_PRIM_LOGICAL_OR] = emlx_cpu_elementwise,   \
  [EMLX_PRIM_LOGICAL_XOR] = emlx_cpu_elementwise, [EMLX_PRIM_BITWISE_AND] = emlx_cpu_elementwise,  \
  [EMLX_PRIM_BITWISE_OR] = emlx_cpu_elementwise, [EMLX_PRIM_BITWISE_XOR] = emlx_cpu_elementwise,   \
  [EMLX_PRIM_LEFT_SHIFT] = emlx_cpu_elementwise, [EMLX_PRIM_RIGHT_SHIFT] = emlx_cpu_elementwise,   \
  [EMLX_PRIM_WHERE] = emlx_cpu_elementwise, [EMLX_PRIM_CLIP] = emlx_cpu_elementwise,               \
  [EMLX_PRIM_ISCLOSE] = emlx_cpu_elementwise,

#endif
