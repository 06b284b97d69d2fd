/* matmul_gemv_avx512.c — the bf16 few-row product at AVX-512 (matmul_gemv_body.h). */
#define GEMV_NAME emlx_mm_gemv_bf16_avx512
#include "matmul_gemv_body.h"
