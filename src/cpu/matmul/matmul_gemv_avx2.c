/* matmul_gemv_avx2.c — the bf16 few-row product at AVX2 + FMA (matmul_gemv_body.h). */
#define GEMV_NAME emlx_mm_gemv_bf16_avx2
#include "matmul_gemv_body.h"
