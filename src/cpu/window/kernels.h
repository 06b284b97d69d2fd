/* window/kernels.h — the window family's CPU kernels and its rows of the CPU
 * backend's table (src/cpu/backend.c expands EMLX_CPU_WINDOW_KERNELS).
 *
 * The family (src/cpu/window/): everything that slides a window over the
 * input. window.c: the window reductions; window_scatter.c: the window
 * scatters (window_util.h: their geometry); conv.c: convolution as im2col +
 * GEMM, conv_direct.c: the direct depthwise kernel, conv_tile.c: the f32
 * implicit-GEMM micro-kernels, conv_wino.c: Winograd F(2x2, 3x3) over them
 * (conv_geom.h: their geometry). Constructors: src/ops/window/ (window.c,
 * conv.c); tests: tests/window/; benchmark: bench/bench_conv.c. */
#ifndef EMLX_CPU_WINDOW_KERNELS_H
#define EMLX_CPU_WINDOW_KERNELS_H

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
#define EMLX_CPU_WINDOW_KERNELS                                                                    \
  [EMLX_PRIM_WINDOW_REDUCE] = emlx_cpu_window_reduce,                                              \
  [EMLX_PRIM_WINDOW_SCATTER] = emlx_cpu_window_scatter, [EMLX_PRIM_CONV] = emlx_cpu_conv,

#endif
