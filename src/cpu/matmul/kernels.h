/* kernels_matmul.h — the matmul family's CPU kernels and its rows of the CPU
 * backend's table (src/cpu/backend.c expands EMLX_CPU_MATMUL_KERNELS). */
#ifndef EMLX_CPU_KERNELS_MATMUL_H
#define EMLX_CPU_KERNELS_MATMUL_H

#include "internal.h"

/* MATMUL: a (..., M, K) and b (..., K, N) of the output's dtype and batch
 * shape, any strides (src/cpu/matmul.c). */
int emlx_cpu_matmul(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
/* DIAG_VIEW: a view, no data moves (src/cpu/matmul.c). */
int emlx_cpu_diag_view(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);

/* Designated initialisers "[EMLX_PRIM_X] = kernel," for this family. */
#define EMLX_CPU_MATMUL_KERNELS                                                                    \
  [EMLX_PRIM_MATMUL] = emlx_cpu_matmul, [EMLX_PRIM_DIAG_VIEW] = emlx_cpu_diag_view,

#endif
