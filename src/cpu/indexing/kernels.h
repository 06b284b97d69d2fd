/* indexing/kernels.h — the indexing family's CPU kernels and its rows of the
 * CPU backend's table (src/cpu/backend.c expands EMLX_CPU_INDEXING_KERNELS).
 *
 * The family (src/cpu/indexing/): everything that moves elements without
 * computing on them.
 * indexing_layout.c: slice_update, pad, concatenate, as_strided, view;
 * indexing_gather.c: take, take_along_axis, gather;
 * indexing_scatter.c: scatter, scatter_add;
 * indexing_copy.c, indexing_index.c, indexing_util.h: block copies over the
 * pool and the reading of index arrays;
 * views.c: the view primitives (broadcast, reshape, transpose, slice).
 * Constructors: src/ops/indexing/; tests: tests/indexing/; benchmark:
 * bench/bench_indexing.c. */
#ifndef EMLX_CPU_KERNELS_INDEXING_H
#define EMLX_CPU_KERNELS_INDEXING_H

#include "internal.h"

int emlx_cpu_slice_update(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_pad(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_concatenate(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_as_strided(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_view_dtype(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_gather(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
/* SCATTER and SCATTER_ADD (chosen by node->prim). */
int emlx_cpu_scatter(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_take(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_take_along_axis(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);

/* Designated initialisers "[EMLX_PRIM_X] = kernel," for this family. */
#define EMLX_CPU_INDEXING_KERNELS                                                                  \
  [EMLX_PRIM_SLICE_UPDATE] = emlx_cpu_slice_update, [EMLX_PRIM_PAD] = emlx_cpu_pad,                \
  [EMLX_PRIM_CONCATENATE] = emlx_cpu_concatenate, [EMLX_PRIM_AS_STRIDED] = emlx_cpu_as_strided,    \
  [EMLX_PRIM_VIEW_DTYPE] = emlx_cpu_view_dtype, [EMLX_PRIM_GATHER] = emlx_cpu_gather,              \
  [EMLX_PRIM_SCATTER] = emlx_cpu_scatter, [EMLX_PRIM_SCATTER_ADD] = emlx_cpu_scatter,              \
  [EMLX_PRIM_TAKE] = emlx_cpu_take, [EMLX_PRIM_TAKE_ALONG_AXIS] = emlx_cpu_take_along_axis,

#endif
