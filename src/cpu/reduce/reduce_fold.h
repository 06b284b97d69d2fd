/* reduce_fold.h — private to the reduce family's CPU kernels: the per-ISA
 * table of the fold loops of the six reductions over axes (sum, max,
 * product, min, all, any: reduce_body.h, compiled by
 * reduce_{scalar,avx2,avx512}.c), the accumulators they fold into, and the
 * scalar folds the loops, the accumulators (reduce_acc.c) and the scans
 * share.
 *
 * Accumulators (one per output element), by op and input dtype. Sum and
 * max fold into a wide type:
 *   sum:     f16/bf16/f32/f64 -> double; c64 -> two doubles; ints, bool ->
 *            uint64 (wrapping; the output keeps the low bits);
 *   max:     floats -> double; signed -> int64; unsigned -> uint64; bool ->
 *            uint64 (0/1); c64 -> emlx_c64; c128 -> emlx_c128 (sums too).
 * Product, min, all and any fold into the input's own type:
 *   product: s32/u32 -> uint32, s64/u64 -> uint64 (wrapping), f16/bf16/f32
 *            -> float, f64 -> double, c64 -> emlx_c64, c128 -> emlx_c128 (other dtypes never
 *            reach the kernel: the constructor casts them; that cast's source
 *            folds through row_prodw / col_prodw into the cast's type);
 *   min:     the input's own type, except f16/bf16 -> float (exact);
 *            floats keep NaN once seen; c64 compares lexicographically;
 *   all/any: uint8_t 0/1 for every input dtype ("!= 0" on the value bits:
 *            -0.0 is false, NaN true).
 * Loops follow isa.h's contract (strides in elements, may be 0 or negative;
 * n may be 0). Float sums and products of contiguous runs use explicit
 * lanes combined in a fixed order, so every ISA returns the same bits. */
#ifndef EMLX_CPU_REDUCE_FOLD_H
#define EMLX_CPU_REDUCE_FOLD_H

#include "convert.h"
#include "isa.h"

enum {
  EMLX_RED_SUM,
  EMLX_RED_MAX,
  EMLX_RED_PROD,
  EMLX_RED_MIN,
  EMLX_RED_ALL,
  EMLX_RED_ANY,
  EMLX_RED_OP_COUNT
};

typedef struct emlx_cpu_reduce_table {
  emlx_cpu_fold_row row[EMLX_RED_OP_COUNT]
                       [EMLX_DTYPE_COUNT]; /* by input dtype; NULL: unsupported */
  emlx_cpu_fold_col col[EMLX_RED_OP_COUNT][EMLX_DTYPE_COUNT];
  /* The folds of a widening integer cast's source (reduce.c's
   * emlx_cpu_reduce_cast): x of an integer or bool dtype read as it is, each
   * element sign- or zero-extended as its own dtype says. row_sum64: a sum
   * into a uint64 (the column sums of `col` already extend into uint64);
   * [0] a product into a uint32, [1] into a uint64 (all wrapping). By x's
   * dtype; NULL where the cast would not widen. */
  emlx_cpu_fold_row row_sum64[EMLX_DTYPE_COUNT];
  emlx_cpu_fold_row row_prodw[2][EMLX_DTYPE_COUNT];
  emlx_cpu_fold_col col_prodw[2][EMLX_DTYPE_COUNT];
} emlx_cpu_reduce_table;

extern const emlx_cpu_reduce_table emlx_cpu_reduce_scalar, emlx_cpu_reduce_avx2,
    emlx_cpu_reduce_avx512;

/* ---- scalar folds shared by the loops, the accumulators and the scans ---- */
/* min that keeps NaN: once the accumulator is NaN it stays; a NaN value
 * replaces a number. */
static inline void emlx_red_min_f32_into(float *acc, float v) {
  if (*acc == *acc && (v < *acc || v != v))
    *acc = v;
}
static inline void emlx_red_min_f64_into(double *acc, double v) {
  if (*acc == *acc && (v < *acc || v != v))
    *acc = v;
}
/* complex64: lexicographic (real, then imaginary); NaN in a part propagates. */
static inline void emlx_red_min_c64_into(emlx_c64 *acc, emlx_c64 v) {
  if (acc->re != acc->re || acc->im != acc->im)
    return;
  if (v.re != v.re || v.im != v.im || v.re < acc->re || (v.re == acc->re && v.im < acc->im))
    *acc = v;
}
static inline emlx_c64 emlx_red_cmul(emlx_c64 a, emlx_c64 b) {
  emlx_c64 r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  return r;
}

/* complex128: the same folds in double. */
static inline void emlx_red_min_c128_into(emlx_c128 *acc, emlx_c128 v) {
  if (acc->re != acc->re || acc->im != acc->im)
    return;
  if (v.re != v.re || v.im != v.im || v.re < acc->re || (v.re == acc->re && v.im < acc->im))
    *acc = v;
}
static inline emlx_c128 emlx_red_zmul(emlx_c128 a, emlx_c128 b) {
  emlx_c128 r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  return r;
}

/* The table of the ISA level emlx_cpu_isa_get() chose. */
const emlx_cpu_reduce_table *emlx_cpu_reduce_get(void);

#endif
