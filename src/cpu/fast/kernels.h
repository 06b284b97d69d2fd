/* fast/kernels.h — the fused transformer kernels and their rows of the CPU
 * backend's table (src/cpu/backend.c expands EMLX_CPU_FAST_KERNELS).
 *
 * The family (src/cpu/fast/): rms_norm and layer_norm (FAST_NORM), rotary
 * position embeddings (FAST_ROPE) and SwiGLU (FAST_SWIGLU), in fast.c, with
 * their per-ISA inner loops (fast_body.h in fast_{scalar,avx2,avx512}.c;
 * table: fast_isa.h). Constructors: src/ops/fast/; tests: tests/fast/;
 * benchmark: bench/bench_fast.c. The attention kernels are their own family
 * (src/cpu/attention/). */
#ifndef EMLX_CPU_KERNELS_FAST_H
#define EMLX_CPU_KERNELS_FAST_H

#include "internal.h"

int emlx_cpu_fast_norm(const emlx_node *node, emlx_array *const *inputs,
                       emlx_array *const *outputs);
int emlx_cpu_fast_rope(const emlx_node *node, emlx_array *const *inputs,
                       emlx_array *const *outputs);
int emlx_cpu_fast_swiglu(const emlx_node *node, emlx_array *const *inputs,
                         emlx_array *const *outputs);

/* Designated initialisers "[EMLX_PRIM_X] = kernel," for this family. */
#define EMLX_CPU_FAST_KERNELS                                                                      \
  [EMLX_PRIM_FAST_NORM] = emlx_cpu_fast_norm, [EMLX_PRIM_FAST_ROPE] = emlx_cpu_fast_rope,          \
  [EMLX_PRIM_FAST_SWIGLU] = emlx_cpu_fast_swiglu,

#endif
