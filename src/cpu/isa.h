/* isa.h — the run-time ISA level and the per-ISA tables of inner loops of
 * the core elementwise ops and the casts.
 *
 * Drivers walk shapes and strides, split work over the thread pool and call
 * 1-D inner loops through per-ISA tables. Each table is compiled once per
 * ISA from one body (<family>/<name>_body.h) in
 * <family>/<name>_{scalar,avx2,avx512}.c, over the vector layer of simd/;
 * isa.c picks the level at first use from CPUID, capped by the EMLX_ISA
 * environment variable, and every family's table follows that level (this
 * header holds the elementwise and cast tables; the other families declare
 * theirs in their own folder: reduce/reduce_fold.h, elementwise/math_isa.h,
 * ...). Every ISA computes the same values: the summation order of
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

typedef struct emlx_cpu_ew_table {
  emlx_cpu_binary_loop binary[EMLX_CPU_BINARY_COUNT][EMLX_DTYPE_COUNT]; /* NULL: unsupported */
  emlx_cpu_unary_loop negate[EMLX_DTYPE_COUNT];
  emlx_cpu_unary_loop exp[EMLX_DTYPE_COUNT];
} emlx_cpu_ew_table;

typedef struct emlx_cpu_cast_table {
  emlx_cpu_unary_loop cast[EMLX_DTYPE_COUNT][EMLX_DTYPE_COUNT]; /* [from][to]; [d][d] copies */
} emlx_cpu_cast_table;

typedef struct emlx_cpu_isa {
  const char *name; /* "scalar", "avx2", "avx512" */
  const emlx_cpu_ew_table *ew;
  const emlx_cpu_cast_table *cast;
} emlx_cpu_isa;

/* The tables chosen for this process (selected once, thread-safe). */
const emlx_cpu_isa *emlx_cpu_isa_get(void);

extern const emlx_cpu_ew_table emlx_cpu_ew_scalar, emlx_cpu_ew_avx2, emlx_cpu_ew_avx512;
extern const emlx_cpu_cast_table emlx_cpu_cast_scalar, emlx_cpu_cast_avx2, emlx_cpu_cast_avx512;

#endif
