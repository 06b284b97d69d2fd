/* sort.h — private to the sort kernel (sort.c): the per-ISA tables of its
 * key loops (sort_body.h, compiled by sort_{scalar,avx2,avx512}.c).
 * Keys are those of sort_keys.h. */
#ifndef EMLX_CPU_SORT_H
#define EMLX_CPU_SORT_H

#include <stdint.h>

#include "emlx.h"

/* Keys of x[i * s], i in [i0, i1), into keys[i] (the key type of the dtype's
 * width, or with pack (key << 32 | i) uint64 pairs, for keys of 2 or 4
 * bytes), complemented when desc; returns non-zero when a value is -0.0 or
 * NaN, whose key cannot be turned back into its bits (only without pack). */
typedef int (*emlx_cpu_sort_gather)(const void *x, int64_t s, void *keys, int pack, int desc,
                                    int64_t i0, int64_t i1);
/* Sorted keys[i], i in [i0, i1), back to values y[i * s]. */
typedef void (*emlx_cpu_sort_emit)(const void *keys, void *y, int64_t s, int desc, int64_t i0,
                                   int64_t i1);

typedef struct emlx_cpu_sort_table {
  emlx_cpu_sort_gather gather[EMLX_DTYPE_COUNT];
  emlx_cpu_sort_emit emit[EMLX_DTYPE_COUNT];
} emlx_cpu_sort_table;

extern const emlx_cpu_sort_table emlx_cpu_sort_scalar, emlx_cpu_sort_avx2, emlx_cpu_sort_avx512;

#endif
