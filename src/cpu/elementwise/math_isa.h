/* math_isa.h — private to the math family's CPU kernels: the per-ISA table
 * of inner loops (math_body.h, compiled by math_{scalar,avx2,
 * avx512}.c).
 *
 * Loops follow isa.h's contract: the output is contiguous; input strides
 * are in elements and may be 0 (broadcast) or negative; n may be 0. Input
 * dtypes are what the op constructors cast to (see src/ops/math_*.c); the
 * output dtype of each entry is fixed by the op:
 *   unary:  same as the input, except ISNAN/ISINF (bool) and ABS/REAL/IMAG
 *           of complex64 (float32);
 *   binary: same as the inputs, except the comparisons (bool);
 *   nary:   where (cond bool, x, y) -> x's dtype; clip (a, lo, hi) -> a's;
 *           isclose (a, b) -> bool, ctx = emlx_isclose_params. */
#ifndef EMLX_CPU_MATH_ISA_H
#define EMLX_CPU_MATH_ISA_H

#include <stdint.h>

#include "isa.h"

enum {
  EMLX_MU_ABS,
  EMLX_MU_SIGN,
  EMLX_MU_FLOOR,
  EMLX_MU_CEIL,
  EMLX_MU_ROUND,      /* half to even */
  EMLX_MU_ROUND_AWAY, /* half away from zero */
  EMLX_MU_CONJ,
  EMLX_MU_REAL,
  EMLX_MU_IMAG,
  EMLX_MU_BNOT,
  EMLX_MU_SQRT,
  EMLX_MU_RSQRT,
  EMLX_MU_LOG,
  EMLX_MU_LOG1P,
  EMLX_MU_EXPM1,
  EMLX_MU_SIN,
  EMLX_MU_COS,
  EMLX_MU_TAN,
  EMLX_MU_ASIN,
  EMLX_MU_ACOS,
  EMLX_MU_ATAN,
  EMLX_MU_SINH,
  EMLX_MU_COSH,
  EMLX_MU_TANH,
  EMLX_MU_ASINH,
  EMLX_MU_ACOSH,
  EMLX_MU_ATANH,
  EMLX_MU_ERF,
  EMLX_MU_ERF_INV,
  EMLX_MU_ERFC,
  EMLX_MU_SIGMOID,
  EMLX_MU_ISNAN,
  EMLX_MU_ISINF,
  EMLX_MU_LNOT,
  EMLX_MU_COUNT
};

/* less / less_equal run greater / greater_equal with the inputs swapped. */
enum {
  EMLX_MB_QUOT_FLOOR,
  EMLX_MB_QUOT_TRUNC,
  EMLX_MB_REM_FLOOR,
  EMLX_MB_REM_TRUNC,
  EMLX_MB_POW,
  EMLX_MB_ATAN2,
  EMLX_MB_MAX,
  EMLX_MB_MIN,
  EMLX_MB_EQ,
  EMLX_MB_NE,
  EMLX_MB_GT,
  EMLX_MB_GE,
  EMLX_MB_LAND,
  EMLX_MB_LOR,
  EMLX_MB_LXOR,
  EMLX_MB_BAND,
  EMLX_MB_BOR,
  EMLX_MB_BXOR,
  EMLX_MB_SHL,
  EMLX_MB_SHR,
  EMLX_MB_COUNT
};

/* out[i] = f(in[0][i * s[0]], in[1][i * s[1]], ...), i < n; ctx as above. */
typedef emlx_cpu_nary_loop emlx_math_nary_loop;

typedef struct emlx_cpu_math_table {
  emlx_cpu_unary_loop un[EMLX_MU_COUNT][EMLX_DTYPE_COUNT];   /* by input dtype; NULL: none */
  emlx_cpu_binary_loop bin[EMLX_MB_COUNT][EMLX_DTYPE_COUNT]; /* by input dtype */
  emlx_math_nary_loop where[EMLX_DTYPE_COUNT];               /* by x's dtype */
  emlx_math_nary_loop clip[EMLX_DTYPE_COUNT];
  emlx_math_nary_loop isclose[EMLX_DTYPE_COUNT];
} emlx_cpu_math_table;

extern const emlx_cpu_math_table emlx_cpu_math_scalar, emlx_cpu_math_avx2, emlx_cpu_math_avx512;

/* The table of the ISA level emlx_cpu_isa_get() chose (math_isa.c). */
const emlx_cpu_math_table *emlx_cpu_math_get(void);

#endif
