/* elementwise/kernels.h — the elementwise family's rows of the CPU backend's
 * table (src/cpu/backend.c expands EMLX_CPU_ELEMENTWISE_KERNELS): every math
 * op runs elementwise.c's kernel.
 *
 * The family (src/cpu/elementwise/): everything that writes one output
 * element from the elements at the same position. elementwise.c is the
 * kernel of every elementwise op (the core ones of cpu.h and the math
 * family's, whose loops math.c resolves); iter.c walks up to three strided
 * inputs; create.c fills full / arange / eye; fused.c is the tile
 * interpreter of fused regions (kernels_fused.h). Per-ISA units: ew_*
 * (core arithmetic, ew_body.h), cast_* (astype, cast_body.h), math_*
 * (math_body*.h, math_fn.h, math_vec_*.h; table: math_isa.h), bits_*
 * (count_leading_zeros, population_count; bits_body.h, table: bits.h).
 * Constructors: src/ops/elementwise/; tests: tests/elementwise/ (fusion:
 * tests/core/test_fusion.c); benchmarks: bench/bench_math.c,
 * bench/bench_core.c, bench/bench_fusion.c. */
#ifndef EMLX_CPU_ELEMENTWISE_KERNELS_H
#define EMLX_CPU_ELEMENTWISE_KERNELS_H

#include "cpu.h"

/* Designated initialisers "[EMLX_PRIM_X] = kernel," for this family. */
#define EMLX_CPU_ELEMENTWISE_KERNELS                                                               \
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
