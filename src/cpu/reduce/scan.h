/* scan.h — private to the scan kernel (scan.c): the per-ISA tables of its
 * inner loops (scan_body.h, compiled by scan_{scalar,avx2,
 * avx512}.c).
 *
 * Accumulators, by op and dtype (the input has the output's dtype):
 *   sum, product: integers in their own unsigned type (wrapping), bool as
 *     uint8 (product only), f16/bf16 -> float, f32, f64, c64;
 *   max, min: the dtype itself, f16/bf16 -> float (exact); floats keep NaN
 *     once seen, c64 compares lexicographically.
 * Every element of the output is rounded from the accumulator once.
 * Strides are in elements and may be negative (reverse scans walk
 * backwards); x and y may be the same buffer (in-place scans): each element
 * is read before its slot is written. */
#ifndef EMLX_CPU_SCAN_H
#define EMLX_CPU_SCAN_H

#include <stdint.h>

#include "emlx.h"
#include "params_reduce.h"

/* y[i*sy] = acc after folding x[0..i] (inclusive) or x[0..i) (exclusive),
 * i < n, starting from *acc, which is left holding the fold of the line. */
typedef void (*emlx_cpu_scan_line)(const void *x, int64_t sx, void *y, int64_t sy, int64_t n,
                                   int inclusive, void *acc);
/* The same for m contiguous columns at once: rows i < n start at x + i*sx
 * and y + i*sy; acc holds m accumulators. */
typedef void (*emlx_cpu_scan_cols)(const void *x, int64_t sx, void *y, int64_t sy, int64_t n,
                                   int64_t m, int inclusive, void *acc);
/* acc[j] = fold of acc[j] and x[i*sx + j], i < n, j < m (no output). */
typedef void (*emlx_cpu_scan_fold)(const void *x, int64_t sx, int64_t n, int64_t m, void *acc);
/* acc[j] = op(acc[j], v[j]) over m accumulators. */
typedef void (*emlx_cpu_scan_combine)(void *acc, const void *v, int64_t m);

typedef struct emlx_cpu_scan_table {
  emlx_cpu_scan_line line[EMLX_SCAN_OP_COUNT][EMLX_DTYPE_COUNT]; /* NULL: unsupported */
  emlx_cpu_scan_cols cols[EMLX_SCAN_OP_COUNT][EMLX_DTYPE_COUNT];
  emlx_cpu_scan_fold fold[EMLX_SCAN_OP_COUNT][EMLX_DTYPE_COUNT];
  emlx_cpu_scan_combine combine[EMLX_SCAN_OP_COUNT][EMLX_DTYPE_COUNT];
} emlx_cpu_scan_table;

extern const emlx_cpu_scan_table emlx_cpu_scan_scalar, emlx_cpu_scan_avx2, emlx_cpu_scan_avx512;

#endif
