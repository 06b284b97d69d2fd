/* matmul_int_scalar.c — the integer GEMM (matmul_int_body.h) compiled for the
 * scalar level; matmul_int.c picks the level at run time. */
#define MM_ISA scalar
#include "matmul_int_body.h"
