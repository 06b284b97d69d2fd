/* kernels_fused.h — the CPU backend's fusion entry points (fused.c), which
 * backend.c puts in its emlx_backend. */
#ifndef EMLX_CPU_KERNELS_FUSED_H
#define EMLX_CPU_KERNELS_FUSED_H

#include "fuse.h"

bool emlx_cpu_fuse_supports(emlx_prim prim, const void *params, size_t params_size,
                            const emlx_dtype *in, int nin, emlx_dtype out);
void *emlx_cpu_fuse_compile(const emlx_fuse_desc *desc);
int emlx_cpu_fuse_run(const void *plan, emlx_array *const *inputs, emlx_array *const *outputs,
                      const long *donor_refs);
void emlx_cpu_fuse_free(void *plan);
int emlx_cpu_fuse_reduce(const void *plan, emlx_array *const *inputs, const emlx_node *reduce,
                         const emlx_array *like, emlx_array *out);

#endif
