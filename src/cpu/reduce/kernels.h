/* kernels_reduce.h — the reduce family's CPU kernels and its rows of the CPU
 * backend's table (src/cpu/backend.c expands EMLX_CPU_REDUCE_KERNELS). */
#ifndef EMLX_CPU_KERNELS_REDUCE_H
#define EMLX_CPU_KERNELS_REDUCE_H

#include "internal.h"

/* PRODUCT, MIN, ALL, ANY (reduce2.c). */
int emlx_cpu_reduce2(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs);
/* ARGMAX, ARGMIN (reduce2_arg.c). */
int emlx_cpu_arg_reduce(const emlx_node *node, emlx_array *const *inputs,
                        emlx_array *const *outputs);
/* SCAN (scan.c). */
int emlx_cpu_scan(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs);
/* SORT, ARGSORT (sort.c). */
int emlx_cpu_sort(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs);

/* ROW_REDUCE, ROW_SOFTMAX (rowwise.c). */
int emlx_cpu_rowwise(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs);

/* Designated initialisers "[EMLX_PRIM_X] = kernel," for this family. */
#define EMLX_CPU_REDUCE_KERNELS                                                                    \
  [EMLX_PRIM_PRODUCT] = emlx_cpu_reduce2, [EMLX_PRIM_MIN] = emlx_cpu_reduce2,                      \
  [EMLX_PRIM_ALL] = emlx_cpu_reduce2, [EMLX_PRIM_ANY] = emlx_cpu_reduce2,                          \
  [EMLX_PRIM_ARGMAX] = emlx_cpu_arg_reduce, [EMLX_PRIM_ARGMIN] = emlx_cpu_arg_reduce,              \
  [EMLX_PRIM_SCAN] = emlx_cpu_scan, [EMLX_PRIM_SORT] = emlx_cpu_sort,                              \
  [EMLX_PRIM_ARGSORT] = emlx_cpu_sort, [EMLX_PRIM_ROW_REDUCE] = emlx_cpu_rowwise,                  \
  [EMLX_PRIM_ROW_SOFTMAX] = emlx_cpu_rowwise,

#endif
