/* reduce/kernels.h — the reduce family's CPU kernels and its rows of the CPU
 * backend's table (src/cpu/backend.c expands EMLX_CPU_REDUCE_KERNELS).
 *
 * The family (src/cpu/reduce/): everything that folds many elements into
 * fewer. The six reductions over axes share one kernel (reduce.c), one
 * driver (reduce_driver.c: dims, row and column modes, fixed splits), their
 * accumulators (reduce_acc.c) and one set of per-ISA fold loops
 * (reduce_body.h in reduce_{scalar,avx2,avx512}.c; table: reduce_fold.h).
 * Beside them: argmax / argmin (reduce_arg.c), the scans (scan.c, scan_*),
 * sort and argsort (sort.c, sort_radix.c, sort_keys.h, sort_*), and the
 * dynamic chunk scheduler they use (dyn_for.c). Constructors:
 * src/ops/reduce/; tests: tests/reduce/; benchmark: bench/bench_reduce.c. */
#ifndef EMLX_CPU_KERNELS_REDUCE_H
#define EMLX_CPU_KERNELS_REDUCE_H

#include "internal.h"

/* SUM, MAX, PRODUCT, MIN, ALL, ANY (reduce.c); emlx_cpu_reduce_source
 * (cpu.h) runs them on a virtual input. */
int emlx_cpu_reduce(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs);
/* ARGMAX, ARGMIN (reduce_arg.c). */
int emlx_cpu_arg_reduce(const emlx_node *node, emlx_array *const *inputs,
                        emlx_array *const *outputs);
/* SCAN (scan.c). */
int emlx_cpu_scan(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs);
/* SORT, ARGSORT (sort.c). */
int emlx_cpu_sort(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs);

/* Designated initialisers "[EMLX_PRIM_X] = kernel," for this family. */
#define EMLX_CPU_REDUCE_KERNELS                                                                    \
  [EMLX_PRIM_SUM] = emlx_cpu_reduce, [EMLX_PRIM_MAX] = emlx_cpu_reduce,                            \
  [EMLX_PRIM_PRODUCT] = emlx_cpu_reduce, [EMLX_PRIM_MIN] = emlx_cpu_reduce,                        \
  [EMLX_PRIM_ALL] = emlx_cpu_reduce, [EMLX_PRIM_ANY] = emlx_cpu_reduce,                            \
  [EMLX_PRIM_ARGMAX] = emlx_cpu_arg_reduce, [EMLX_PRIM_ARGMIN] = emlx_cpu_arg_reduce,              \
  [EMLX_PRIM_SCAN] = emlx_cpu_scan, [EMLX_PRIM_SORT] = emlx_cpu_sort,                              \
  [EMLX_PRIM_ARGSORT] = emlx_cpu_sort,

#endif
