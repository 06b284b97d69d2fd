/* matmul_int_avx512.c — the integer GEMM (matmul_int_body.h) compiled for the
 * avx512 level; matmul_int.c picks the level at run time. */
#define MM_ISA avx512
#include "matmul_int_body.h"
