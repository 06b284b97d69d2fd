/* linalg/kernels.h — the linalg family's CPU kernels and its rows of the CPU
 * backend's table (src/cpu/backend.c expands EMLX_CPU_LINALG_KERNELS).
 *
 * The family (src/cpu/linalg/): factorisations and solves through LAPACKE.
 * The kernels live in linalg_{factor,solve,spectral}.c, over the batch
 * driver and matrix copies of linalg_util.c and the LAPACK / CBLAS dispatch
 * of linalg_lapack.c (shared: linalg_cpu.h). Constructors: src/ops/linalg/;
 * tests: tests/linalg/; benchmark: bench/bench_linalg.c. */
#ifndef EMLX_CPU_KERNELS_LINALG_H
#define EMLX_CPU_KERNELS_LINALG_H

#include "internal.h"

int emlx_cpu_cholesky(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_eigh(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_inv(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_lu(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_qr(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_solve(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_solve_triangular(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_svd(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_tri_inv(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_pinv(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);

/* Designated initialisers "[EMLX_PRIM_X] = kernel," for this family. */
#define EMLX_CPU_LINALG_KERNELS                                                                    \
  [EMLX_PRIM_CHOLESKY] = emlx_cpu_cholesky, [EMLX_PRIM_EIGH] = emlx_cpu_eigh,                      \
  [EMLX_PRIM_INV] = emlx_cpu_inv, [EMLX_PRIM_LU] = emlx_cpu_lu, [EMLX_PRIM_QR] = emlx_cpu_qr,      \
  [EMLX_PRIM_SOLVE] = emlx_cpu_solve, [EMLX_PRIM_SOLVE_TRIANGULAR] = emlx_cpu_solve_triangular,    \
  [EMLX_PRIM_SVD] = emlx_cpu_svd, [EMLX_PRIM_TRI_INV] = emlx_cpu_tri_inv,                          \
  [EMLX_PRIM_PINV] = emlx_cpu_pinv,

#endif
