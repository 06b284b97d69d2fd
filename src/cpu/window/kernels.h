/* kernels_conv.h — the conv family's CPU kernels and its rows of the CPU
 * backend's table (src/cpu/backend.c expands EMLX_CPU_CONV_KERNELS). */
#ifndef EMLX_CPU_KERNELS_CONV_H
#define EMLX_CPU_KERNELS_CONV_H

#include "internal.h"

/* window.c: WINDOW_REDUCE (sum / max / min / product over windows). */
int emlx_cpu_window_reduce(const emlx_node *node, emlx_array *const *inputs,
                           emlx_array *const *outputs);
/* window_scatter.c: WINDOW_SCATTER (window_scatter_max / min). */
int emlx_cpu_window_scatter(const emlx_node *node, emlx_array *const *inputs,
                            emlx_array *const *outputs);
/* conv.c: CONV (conv_general). */
int emlx_cpu_conv(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs);

/* Designated initialisers "[EMLX_PRIM_X] = kernel," for this family. */
#define EMLX_CPU_CONV_KERNELS                                                                      \
  [EMLX_PRIM_WINDOW_REDUCE] = emlx_cpu_window_reduce,                                              \
  [EMLX_PRIM_WINDOW_SCATTER] = emlx_cpu_window_scatter, [EMLX_PRIM_CONV] = emlx_cpu_conv,

#endif
