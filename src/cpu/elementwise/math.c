/* math.c — the math family's elementwise ops (unary functions, binary
 * arithmetic/comparison/logical/bitwise ops, where, clip and isclose): which
 * loop of the ISA table (math_isa.h) each runs for its dtypes and params.
 * The kernel that runs them is elementwise.c's, as for the core ops. */
#include <string.h>

#include "cpu.h"
#include "kernels.h"
#include "math_isa.h"
#include "params_math.h"

static int params_mode(const void *params, size_t params_size) {
  if (!params || params_size < sizeof(emlx_math_mode_params))
    return 0;
  return ((const emlx_math_mode_params *)params)->mode;
}

static int unary_op(emlx_prim prim, int mode) {
  switch (prim) {
  case EMLX_PRIM_ABS:
    return EMLX_MU_ABS;
  case EMLX_PRIM_SIGN:
    return EMLX_MU_SIGN;
  case EMLX_PRIM_FLOOR:
    return EMLX_MU_FLOOR;
  case EMLX_PRIM_CEIL:
    return EMLX_MU_CEIL;
  case EMLX_PRIM_ROUND:
    return mode == EMLX_MATH_HALF_AWAY ? EMLX_MU_ROUND_AWAY : EMLX_MU_ROUND;
  case EMLX_PRIM_CONJUGATE:
    return EMLX_MU_CONJ;
  case EMLX_PRIM_REAL:
    return EMLX_MU_REAL;
  case EMLX_PRIM_IMAG:
    return EMLX_MU_IMAG;
  case EMLX_PRIM_BITWISE_NOT:
    return EMLX_MU_BNOT;
  case EMLX_PRIM_SQRT:
    return EMLX_MU_SQRT;
  case EMLX_PRIM_RSQRT:
    return EMLX_MU_RSQRT;
  case EMLX_PRIM_LOG:
    return EMLX_MU_LOG;
  case EMLX_PRIM_LOG1P:
    return EMLX_MU_LOG1P;
  case EMLX_PRIM_EXPM1:
    return EMLX_MU_EXPM1;
  case EMLX_PRIM_SIN:
    return EMLX_MU_SIN;
  case EMLX_PRIM_COS:
    return EMLX_MU_COS;
  case EMLX_PRIM_TAN:
    return EMLX_MU_TAN;
  case EMLX_PRIM_ASIN:
    return EMLX_MU_ASIN;
  case EMLX_PRIM_ACOS:
    return EMLX_MU_ACOS;
  case EMLX_PRIM_ATAN:
    return EMLX_MU_ATAN;
  case EMLX_PRIM_SINH:
    return EMLX_MU_SINH;
  case EMLX_PRIM_COSH:
    return EMLX_MU_COSH;
  case EMLX_PRIM_TANH:
    return EMLX_MU_TANH;
  case EMLX_PRIM_ASINH:
    return EMLX_MU_ASINH;
  case EMLX_PRIM_ACOSH:
    return EMLX_MU_ACOSH;
  case EMLX_PRIM_ATANH:
    return EMLX_MU_ATANH;
  case EMLX_PRIM_ERF:
    return EMLX_MU_ERF;
  case EMLX_PRIM_ERF_INV:
    return EMLX_MU_ERF_INV;
  case EMLX_PRIM_ERFC:
    return EMLX_MU_ERFC;
  case EMLX_PRIM_SIGMOID:
    return EMLX_MU_SIGMOID;
  case EMLX_PRIM_IS_NAN:
    return EMLX_MU_ISNAN;
  case EMLX_PRIM_IS_INF:
    return EMLX_MU_ISINF;
  case EMLX_PRIM_LOGICAL_NOT:
    return EMLX_MU_LNOT;
  default:
    return -1;
  }
}

/* The dtype a unary entry writes for input dtype di (see math_isa.h). */
static emlx_dtype unary_out_dtype(int op, emlx_dtype di) {
  if (op == EMLX_MU_ISNAN || op == EMLX_MU_ISINF)
    return EMLX_BOOL;
  if (emlx_dtype_is_complex(di) &&
      (op == EMLX_MU_ABS || op == EMLX_MU_REAL || op == EMLX_MU_IMAG))
    return emlx_dtype_real_part(di);
  return di;
}

/* Cheap loops split in big chunks; transcendental and complex ones in
 * smaller ones, so both threads get work on mid-sized arrays. */
static int64_t unary_grain(int op, emlx_dtype dt) {
  if (emlx_dtype_is_complex(dt))
    return 1024;
  if (op >= EMLX_MU_SQRT && op <= EMLX_MU_SIGMOID)
    return op == EMLX_MU_ERF_INV ? 2048 : 8192;
  return EMLX_CPU_GRAIN;
}

/* The table entry of a binary prim; *swap when it runs with the inputs
 * exchanged (less = greater swapped). */
static int binary_op(emlx_prim prim, int mode, int *swap) {
  *swap = 0;
  int trunc = mode == EMLX_MATH_TRUNC;
  switch (prim) {
  case EMLX_PRIM_QUOTIENT:
    return trunc ? EMLX_MB_QUOT_TRUNC : EMLX_MB_QUOT_FLOOR;
  case EMLX_PRIM_REMAINDER:
    return trunc ? EMLX_MB_REM_TRUNC : EMLX_MB_REM_FLOOR;
  case EMLX_PRIM_POW:
    return EMLX_MB_POW;
  case EMLX_PRIM_ATAN2:
    return EMLX_MB_ATAN2;
  case EMLX_PRIM_MAXIMUM:
    return EMLX_MB_MAX;
  case EMLX_PRIM_MINIMUM:
    return EMLX_MB_MIN;
  case EMLX_PRIM_EQUAL:
    return EMLX_MB_EQ;
  case EMLX_PRIM_NOT_EQUAL:
    return EMLX_MB_NE;
  case EMLX_PRIM_GREATER:
    return EMLX_MB_GT;
  case EMLX_PRIM_GREATER_EQUAL:
    return EMLX_MB_GE;
  case EMLX_PRIM_LESS:
    *swap = 1;
    return EMLX_MB_GT;
  case EMLX_PRIM_LESS_EQUAL:
    *swap = 1;
    return EMLX_MB_GE;
  case EMLX_PRIM_LOGICAL_AND:
    return EMLX_MB_LAND;
  case EMLX_PRIM_LOGICAL_OR:
    return EMLX_MB_LOR;
  case EMLX_PRIM_LOGICAL_XOR:
    return EMLX_MB_LXOR;
  case EMLX_PRIM_BITWISE_AND:
    return EMLX_MB_BAND;
  case EMLX_PRIM_BITWISE_OR:
    return EMLX_MB_BOR;
  case EMLX_PRIM_BITWISE_XOR:
    return EMLX_MB_BXOR;
  case EMLX_PRIM_LEFT_SHIFT:
    return EMLX_MB_SHL;
  case EMLX_PRIM_RIGHT_SHIFT:
    return EMLX_MB_SHR;
  default:
    return -1;
  }
}

static int is_comparison(int op) { return op >= EMLX_MB_EQ && op <= EMLX_MB_LXOR; }

int emlx_cpu_math_ew_resolve(emlx_prim prim, const void *params, size_t params_size,
                             const emlx_dtype *in, int nin, emlx_dtype out,
                             emlx_cpu_ew_loop *loop) {
  const emlx_cpu_math_table *t = emlx_cpu_math_get();
  const char *name = (unsigned)prim < EMLX_PRIM_COUNT ? emlx_prim_table[prim].name : "?";
  *loop = (emlx_cpu_ew_loop){.nargs = nin, .grain = EMLX_CPU_GRAIN};
  for (int k = 0; k < nin; k++)
    if (!emlx_dtype_is_valid(in[k]))
      return EMLX_FAIL("cpu: %s: invalid dtype", name);
  if (nin < 1 || !emlx_dtype_is_valid(out))
    return EMLX_FAIL("cpu: %s: invalid dtype", name);
  int mode = params_mode(params, params_size);
  int op = nin == 1 ? unary_op(prim, mode) : -1;
  if (op >= 0) {
    emlx_dtype di = in[0];
    loop->un = t->un[op][di];
    if (!loop->un || unary_out_dtype(op, di) != out)
      return EMLX_FAIL("cpu: %s is not supported from %s to %s", name, emlx_dtype_name(di),
                       emlx_dtype_name(out));
    loop->grain = unary_grain(op, di);
    return 0;
  }
  int swap;
  op = nin == 2 ? binary_op(prim, mode, &swap) : -1;
  if (op >= 0) {
    emlx_dtype dt = in[swap];
    if (in[1 - swap] != dt)
      return EMLX_FAIL("cpu: %s expects two inputs of one dtype (got %s, %s)", name,
                       emlx_dtype_name(in[0]), emlx_dtype_name(in[1]));
    loop->bin = t->bin[op][dt];
    loop->swap = swap;
    if (!loop->bin || out != (is_comparison(op) ? EMLX_BOOL : dt))
      return EMLX_FAIL("cpu: %s is not supported for %s", name, emlx_dtype_name(dt));
    if (emlx_dtype_is_complex(dt) || op == EMLX_MB_POW || op == EMLX_MB_ATAN2)
      loop->grain = emlx_dtype_is_complex(dt) ? 1024 : 8192;
    return 0;
  }
  emlx_dtype dt = in[nin - 1]; /* the dtype of the values */
  switch (prim) {
  case EMLX_PRIM_WHERE:
    if (nin == 3 && in[0] == EMLX_BOOL && in[1] == dt && out == dt)
      loop->nary = t->where[dt];
    break;
  case EMLX_PRIM_CLIP:
    if (nin == 3 && in[0] == dt && in[1] == dt && out == dt)
      loop->nary = t->clip[dt];
    break;
  case EMLX_PRIM_ISCLOSE:
    if (nin == 2 && in[0] == dt && out == EMLX_BOOL && params &&
        params_size == sizeof(emlx_isclose_params)) {
      loop->nary = t->isclose[dt];
      loop->ctx = params;
      loop->grain = 8192;
    }
    break;
  default:
    return EMLX_FAIL("cpu: %s is not a math elementwise op", name);
  }
  if (!loop->nary)
    return EMLX_FAIL("cpu: %s is not supported for these dtypes", name);
  return 0;
}
