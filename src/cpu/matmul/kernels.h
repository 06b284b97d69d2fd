/* matmul/kernels.h — the matmul family's CPU kernels and its rows of the CPU
 * backend's table (src/cpu/backend.c expands EMLX_CPU_MATMUL_KERNELS).
 *
 * The family (src/cpu/matmul/): matrix products. matmul.c is the kernel
 * (batch walk, choice of GEMM; matmul.h the GEMM interface); matmul_blas.c
 * f32/f64/c64 through CBLAS; matmul_lowp.c f16/bf16, matmul_int.c integers.
 * Per-ISA units: matmul_int_* (matmul_int_body.h), matmul_small_* (small f32
 * products without BLAS), matmul_lowp_avx512.c and matmul_amx_avx512.c
 * (packing: matmul_pack_avx512.h), matmul_gemv_* (f16/bf16 products of at
 * most 4 rows, matmul_gemv_body.h). Constructors: src/ops/matmul/ (matmul,
 * tensordot, einsum); tests: tests/matmul/; benchmarks: bench/bench_matmul.c,
 * bench/bench_lowp.c. */
#ifndef EMLX_CPU_KERNELS_MATMUL_H
#define EMLX_CPU_KERNELS_MATMUL_H

#include "internal.h"

/* MATMUL: a (..., M, K) and b (..., K, N) of the output's dtype and batch
 * shape, any strides (matmul.c). */
int emlx_cpu_matmul(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
/* DIAG_VIEW: a view, no data moves (matmul.c). */
int emlx_cpu_diag_view(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);

/* Designated initialisers "[EMLX_PRIM_X] = kernel," for this family. */
#define EMLX_CPU_MATMUL_KERNELS                                                                    \
  [EMLX_PRIM_MATMUL] = emlx_cpu_matmul, [EMLX_PRIM_DIAG_VIEW] = emlx_cpu_diag_view,

#endif
