/* isa.h — the per-ISA tables of inner loops behind the CPU kernels.
 *
 * The drivers (elementwise.c, reduce.c, create.c) walk shapes and strides,
 * split work over the thread pool and call 1-D inner loops through these
 * tables. Each table is compiled once per ISA from one body
 * (simd/<family>_body.h) in simd/<family>_{scalar,avx2,avx512}.c; isa.c picks
 * one set at first use from CPUID, capped by the EMLX_ISA environment
 * variable. Every ISA computes the same values: the summation order of
 * reductions is fixed (explicit lanes), f16 conversions are bit-exact.
 *
 * Contract of every loop: the output is contiguous; input strides are in
 * elements and may be 0 (broadcast) or negative; n may be 0. */
#ifndef EMLX_CPU_ISA_H
#define EMLX_CPU_ISA_H

#include <stdint.h>

#include "emlx.h"

/* out[i] = f(in[i * s]), i < n. */
typedef void (*emlx_cpu_unary_loop)(const void *in, int64_t s, void *out, int64_t n);
/* out[i] = a[i * sa] op b[i * sb], i < n. */
typedef void (*emlx_cpu_binary_loop)(const void *a, int64_t sa, const void *b, int64_t sb,
                                     void *out, int64_t n);
/* out[i] = f(in[0][i * s[0]], in[1][i * s[1]], ...), i < n, with a
 * constant context (e.g. a node's params). */
typedef void (*emlx_cpu_nary_loop)(const void *const *in, const int64_t *s, void *out, int64_t n,
                                   const void *ctx);
/* Folds x[i * s], i < n, into the accumulator *acc. */
typedef void (*emlx_cpu_fold_row)(const void *x, int64_t s, int64_t n, void *acc);
/* Folds x[j * s] into acc[j], j < m (one row into a row of accumulators). */
typedef void (*emlx_cpu_fold_col)(const void *x, int64_t s, int64_t m, void *acc);

enum { EMLX_CPU_ADD, EMLX_CPU_SUB, EMLX_CPU_MUL, EMLX_CPU_DIV, EMLX_CPU_BINARY_COUNT };
enum { EMLX_CPU_SUM, EMLX_CPU_MAX, EMLX_CPU_REDUCE_COUNT };

/* Accumulators of reductions (one element each, see reduce.c):
 *   sum: f16/bf16/f32/f64 -> double; c64 -> two doubles; ints, bool -> uint64
 *        (wrapping; the output keeps the low bits);
 *   max: floats -> double; signed -> int64; unsigned -> uint64; bool -> uint64
 *        (0/1); c64 -> emlx_c64. */

typedef struct emlx_cpu_ew_table {
  emlx_cpu_binary_loop binary[EMLX_CPU_BINARY_COUNT][EMLX_DTYPE_COUNT]; /* NULL: unsupported */
  emlx_cpu_unary_loop negate[EMLX_DTYPE_COUNT];
  emlx_cpu_unary_loop exp[EMLX_DTYPE_COUNT];
} emlx_cpu_ew_table;

typedef struct emlx_cpu_cast_table {
  emlx_cpu_unary_loop cast[EMLX_DTYPE_COUNT][EMLX_DTYPE_COUNT]; /* [from][to]; [d][d] copies */
} emlx_cpu_cast_table;

typedef struct emlx_cpu_reduce_table {
  emlx_cpu_fold_row row[EMLX_CPU_REDUCE_COUNT][EMLX_DTYPE_COUNT]; /* by input dtype */
  emlx_cpu_fold_col col[EMLX_CPU_REDUCE_COUNT][EMLX_DTYPE_COUNT];
} emlx_cpu_reduce_table;

typedef struct emlx_cpu_isa {
  const char *name; /* "scalar", "avx2", "avx512" */
  const emlx_cpu_ew_table *ew;
  const emlx_cpu_cast_table *cast;
  const emlx_cpu_reduce_table *reduce;
} emlx_cpu_isa;

/* The tables chosen for this process (selected once, thread-safe). */
const emlx_cpu_isa *emlx_cpu_isa_get(void);

extern const emlx_cpu_ew_table emlx_cpu_ew_scalar, emlx_cpu_ew_avx2, emlx_cpu_ew_avx512;
extern const emlx_cpu_cast_table emlx_cpu_cast_scalar, emlx_cpu_cast_avx2, emlx_cpu_cast_avx512;
extern const emlx_cpu_reduce_table emlx_cpu_reduce_scalar, emlx_cpu_reduce_avx2,
    emlx_cpu_reduce_avx512;

#endif
