/* matmul_int_avx2.c — the integer GEMM (matmul_int_body.h) compiled for the
 * avx2 level; matmul_int.c picks the level at run time. */
#define MM_ISA avx2
#include "matmul_int_body.h"
