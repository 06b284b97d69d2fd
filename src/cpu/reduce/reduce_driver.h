/* reduce_driver.h — the shape of the work of the six reductions over axes
 * (sum, max, product, min, all, any: reduce.c). The kernel fills an
 * emlx_red_plan with its op (fold loops, accumulator size and callbacks:
 * reduce_acc.c) and the data; the driver splits the dims and runs the
 * folds.
 *
 * The input's dims are split into kept and reduced ones; size-1 dims are
 * dropped and neighbours of the same kind that are contiguous are merged.
 * Then one of two shapes of work runs:
 *
 *  - row mode (the innermost dim is reduced and at least 16 long, or
 *    nothing is kept): each output folds runs along that dim (fold_row).
 *    Many outputs: parallel over outputs. Few outputs with long runs (the
 *    whole-array reduction is one): the runs are cut into fixed 64K-element
 *    pieces folded in parallel into partials that are combined in order;
 *  - column mode (otherwise): blocks of output columns along the innermost
 *    kept dim (32 KB of accumulators) accumulate one input row per reduced
 *    position (fold_col, any stride). Parallel over (outer output index,
 *    column block); when there are few blocks and many rows, the rows are
 *    cut into slices, each task folds one slice of whole rows (read in
 *    memory order) into partial blocks, and these are combined in order.
 *
 * Any strides work (the same loops with a stride). Every split depends on
 * the shape only, never on the thread count, so a result is the same
 * whatever the pool size.
 *
 * The input may also be virtual (p->src): a dense row-major array that a
 * fused elementwise region produces on demand. Each fold then first has
 * the region write exactly the elements it would have read into scratch,
 * so the folds, their order and the result are those of the materialised
 * input, without it ever reaching memory. */
#ifndef EMLX_CPU_REDUCE_DRIVER_H
#define EMLX_CPU_REDUCE_DRIVER_H

#include "cpu.h"

#define EMLX_RED_ACC_MAX 16 /* bytes of one accumulator, at most */

typedef struct emlx_red_dim {
  int64_t size, stride;
} emlx_red_dim;

typedef struct emlx_red_plan emlx_red_plan;
struct emlx_red_plan {
  /* the op (the kernel's) */
  size_t in_es, out_es, acc_es; /* acc_es <= EMLX_RED_ACC_MAX */
  emlx_cpu_fold_row row;
  emlx_cpu_fold_col col;
  void (*init)(const emlx_red_plan *p, void *acc, int64_t count);
  void (*combine)(const emlx_red_plan *p, void *dst, const void *src); /* one accumulator */
  void (*finish)(const emlx_red_plan *p, const void *acc, char *out, int64_t count);
  int64_t task_work; /* input elements per parallel task, roughly */
  /* the kernel's own, for its callbacks */
  int op, kind;
  emlx_dtype in_dt, out_dt;
  emlx_cpu_unary_loop f64_to_out;
  emlx_cpu_unary_loop acc_to_out; /* own accumulators -> output, when their dtypes differ */
  /* the data */
  const char *in;             /* element 0 of the input, or NULL when src is set */
  const emlx_cpu_source *src; /* a virtual input, or NULL */
  /* The fold's result does not depend on how a run is cut (integer and bool
   * inputs: wrapping sums and products, max, min, all, any): a virtual
   * input is then produced and folded in pieces that stay in L1. */
  bool order_free;
  char *out; /* row-major output */
  /* the dims (emlx_cpu_red_dims) */
  int nk, nr;
  int inner_reduced;
  emlx_red_dim kept[EMLX_MAX_NDIM], red[EMLX_MAX_NDIM];
};

/* Splits, drops and merges in's dims (reduced[i]: axis i is reduced) into
 * p->kept / p->red; returns the number of outputs the kept dims describe. */
int64_t emlx_cpu_red_dims(emlx_red_plan *p, const emlx_array *in, const unsigned char *reduced);
/* Whether a virtual input can be read in the mode the plan will run (it must
 * be read with stride 1, in runs that fit the driver's scratch). */
bool emlx_cpu_red_source_ok(const emlx_red_plan *p);
/* A stand-in for a virtual input: like's shape and dtype, dense row-major
 * strides (st: room for like->ndim), no data. */
void emlx_cpu_red_stand_in(emlx_array *v, int64_t *st, const emlx_array *like);
/* Sets p's accumulator (acc_es, kind, init, combine, finish) for p->op and
 * p->in_dt (reduce_acc.c). */
void emlx_cpu_red_acc_setup(emlx_red_plan *p);
/* Runs the folds into p->out (p->nr > 0, the input not empty). 0, or -1
 * with an error (out of memory for partials). */
int emlx_cpu_red_run(const emlx_red_plan *p, int64_t nout);

/* The identity of a fold in accumulator form (8 bytes; f16 and bf16
 * accumulate as f32): 1 for a product; for a min the dtype's largest value
 * (+inf for floats, true for bool), for a max its smallest. The reductions
 * (reduce_acc.c) and the scans (scan.c) both start from it. */
typedef enum emlx_fold_kind { EMLX_FOLD_PROD, EMLX_FOLD_MIN, EMLX_FOLD_MAX } emlx_fold_kind;
void emlx_cpu_fold_identity(emlx_fold_kind kind, emlx_dtype dt, unsigned char id[16]);

#endif
