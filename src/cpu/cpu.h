/* cpu.h — private declarations of the CPU backend: the kernels that
 * backend.c puts in the table, and the strided iterator the elementwise and
 * reduction drivers share. */
#ifndef EMLX_CPU_H
#define EMLX_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "isa.h"

/* ---- kernels (emlx_kernel_fn) --------------------------------------------- */
int emlx_cpu_full(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs);
int emlx_cpu_arange(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs);
int emlx_cpu_eye(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs);
/* Every elementwise prim: the core ones (NEGATE, EXP, ASTYPE, COPY, ADD,
 * SUBTRACT, MULTIPLY, DIVIDE) and the math family's; inputs broadcast to
 * the output's shape (trailing-aligned) and have the dtypes the op's
 * constructor cast them to (emlx_cpu_ew_resolve says which). */
int emlx_cpu_elementwise(const emlx_node *node, emlx_array *const *inputs,
                         emlx_array *const *outputs);
/* A virtual input: produce(ctx, pos, n, dst) writes the elements at flat
 * row-major positions [pos, pos + n) contiguously to dst. */
typedef struct emlx_cpu_source {
  void (*produce)(const void *ctx, int64_t pos, int64_t n, void *dst);
  const void *ctx;
} emlx_cpu_source;

/* A SUM / MAX / PRODUCT / MIN / ALL / ANY node (reduce/reduce.c) of a
 * virtual dense input shaped like `like` (its shape and dtype; its data is
 * never read). 0 done, 1 not done (this reduction would read the input
 * strided; nothing changed), -1 error. */
int emlx_cpu_reduce_source(const emlx_node *node, const emlx_array *like,
                           const emlx_cpu_source *src, emlx_array *out);
/* The same node reading astype(x, like->dtype), `like` the cast's result, by
 * folding x itself (reduce/reduce.c): for an integer or bool x cast to a
 * wider integer, under sum and product (wrapping) and max and min (casts
 * that keep every value). 0 done, 1 not this way (nothing changed), -1
 * error. */
int emlx_cpu_reduce_cast(const emlx_node *node, const emlx_array *x, const emlx_array *like,
                         emlx_array *out);

/* ---- elementwise loops, as the kernels and the fused interpreter run them -- */
/* The inner loop an elementwise node runs: exactly one of un / bin / nary is
 * set (nargs 1, 2, 3; nary may also have nargs 2, e.g. isclose). A binary
 * loop with swap set takes (in[1], in[0]). ctx is the nary loop's context
 * and points into the params given to the resolver. grain: elements per
 * parallel chunk that suit the loop's cost. */
typedef struct emlx_cpu_ew_loop {
  int nargs;
  int swap;
  emlx_cpu_unary_loop un;
  emlx_cpu_binary_loop bin;
  emlx_cpu_nary_loop nary;
  const void *ctx;
  int64_t grain;
} emlx_cpu_ew_loop;

/* Fills *loop for prim on inputs of dtypes in[0..nin) producing dtype out,
 * with params as the node carries them. 0, or -1 with an error when prim is
 * not elementwise or has no loop for these dtypes. */
int emlx_cpu_ew_resolve(emlx_prim prim, const void *params, size_t params_size,
                        const emlx_dtype *in, int nin, emlx_dtype out, emlx_cpu_ew_loop *loop);
/* The same for the core prims (negate, exp, astype, copy, add, subtract,
 * multiply, divide: elementwise.c) and the math family (math.c). */
int emlx_cpu_core_ew_resolve(emlx_prim prim, const emlx_dtype *in, int nin, emlx_dtype out,
                             emlx_cpu_ew_loop *loop);
int emlx_cpu_math_ew_resolve(emlx_prim prim, const void *params, size_t params_size,
                             const emlx_dtype *in, int nin, emlx_dtype out, emlx_cpu_ew_loop *loop);
/* The libm loop of a transcendental unary prim on float64 (math_libm.c), or
 * NULL for the others. */
emlx_cpu_unary_loop emlx_cpu_libm_f64_loop(emlx_prim prim);

/* ---- strided iteration ---------------------------------------------------- */
/* Up to three inputs of any strides over a row-major output. init drops
 * size-1 dims and merges dims that are contiguous in every operand, so the
 * inner loop is as long as possible. */
typedef struct emlx_cpu_iter {
  int ndim; /* >= 1 */
  int nin;  /* 1 to 3 */
  int64_t size;
  int64_t shape[EMLX_MAX_NDIM];
  int64_t stride[3][EMLX_MAX_NDIM]; /* elements */
  const char *in[3];                /* element 0 of each input */
  size_t in_esize[3];
  char *out;
  size_t out_esize;
} emlx_cpu_iter;

/* Drops the size-1 dims of shape and merges neighbouring dims that are
 * contiguous in each of the nin stride vectors, writing the merged shape to
 * mshape and strides to mstrides[k]; returns the merged rank (>= 1; a single
 * element is one dim of size 1 with stride 0) and the element count. */
int emlx_cpu_merge_dims(int ndim, const int64_t *shape, int nin, const int64_t *const *strides,
                        int64_t *mshape, int64_t *const *mstrides, int64_t *size);
/* Walking a merged shape row by row (rows: runs of the innermost dim) for
 * nin operands with strides[k][d]: walk_start positions the walk at flat
 * element `begin` (digits of the outer dims in idx, each operand's offset of
 * the row in base[k]) and returns the position within the row; walk_next
 * moves to the next row. */
int64_t emlx_cpu_walk_start(int ndim, const int64_t *shape, int nin,
                            const int64_t (*strides)[EMLX_MAX_NDIM], int64_t begin, int64_t *idx,
                            int64_t *base);
void emlx_cpu_walk_next(int ndim, const int64_t *shape, int nin,
                        const int64_t (*strides)[EMLX_MAX_NDIM], int64_t *idx, int64_t *base);
void emlx_cpu_iter_init(emlx_cpu_iter *it, int ndim, const int64_t *shape, int nin,
                        const int64_t *const *strides);
/* Runs the loop over the whole output on the pool, in chunks of at least
 * grain elements. */
void emlx_cpu_iter_run_unary(const emlx_cpu_iter *it, emlx_cpu_unary_loop fn, int64_t grain);
void emlx_cpu_iter_run_binary(const emlx_cpu_iter *it, emlx_cpu_binary_loop fn, int64_t grain);
void emlx_cpu_iter_run_nary(const emlx_cpu_iter *it, emlx_cpu_nary_loop fn, const void *ctx,
                            int64_t grain);

/* Strides (elements) of `a` seen through `out`'s shape, NumPy broadcasting
 * on trailing axes (0 for stretched axes). 0, or -1 with an error. */
int emlx_cpu_broadcast_strides(const emlx_array *a, const emlx_array *out, int64_t *st);
/* `in` when the output may take its buffer (same shape and dtype; the
 * allocator's donate helper checks the rest), else NULL. */
emlx_array *emlx_cpu_donor(emlx_array *in, const emlx_array *out);

/* Elements per parallel chunk for cheap, memory-bound loops. */
#define EMLX_CPU_GRAIN 32768

#endif
