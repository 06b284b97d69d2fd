/* reduce.c — the kernel of the six reductions over axes: SUM, MAX, PRODUCT,
 * MIN, ALL and ANY.
 *
 * The work is reduce_driver.c's (kept and reduced dims, row and column
 * modes, fixed splits, an optional virtual input: a fused elementwise
 * region's output, emlx_cpu_reduce_source); the op brings its fold loops
 * (the ISA table of reduce_fold.h) and its accumulators (reduce_acc.c).
 * This file checks the node, fills the plan and runs the cases the driver
 * leaves out: an empty reduction (the identity; an error for max and min)
 * and nothing left to reduce (sum and max: an astype into the output dtype;
 * the others: one position folded). A reduction of a widening integer cast
 * (sum(astype(x_int32, int64)), say) folds the cast's source itself, each
 * element extended inside the fold loop (emlx_cpu_reduce_cast). */
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "kernels.h"
#include "reduce_driver.h"
#include "reduce_fold.h"

/* Input elements per parallel task of product, min, all and any: large
 * enough that each thread streams long contiguous runs (prefetchers), small
 * enough that a descheduled thread delays little on a busy machine. Sum and
 * max split at EMLX_CPU_GRAIN. */
#define RED_OWN_TASK_WORK 131072

static int red_op_of(emlx_prim prim) {
  switch (prim) {
  case EMLX_PRIM_SUM:
    return EMLX_RED_SUM;
  case EMLX_PRIM_MAX:
    return EMLX_RED_MAX;
  case EMLX_PRIM_PRODUCT:
    return EMLX_RED_PROD;
  case EMLX_PRIM_MIN:
    return EMLX_RED_MIN;
  case EMLX_PRIM_ALL:
    return EMLX_RED_ALL;
  case EMLX_PRIM_ANY:
    return EMLX_RED_ANY;
  default:
    return -1;
  }
}

/* The kernel on a real input, or (src set) on a virtual dense one of in's
 * shape and dtype; 1 when a virtual input would be read strided (nothing
 * done). as: the dtype the node's input has, in->dtype unless in is the
 * source of a widening integer cast (emlx_cpu_reduce_cast). */
static int reduce_impl(const emlx_node *node, const emlx_array *in, const emlx_cpu_source *src,
                       emlx_dtype as, emlx_array *out) {
  const char *name = emlx_prim_table[node->prim].name;
  int op = red_op_of(node->prim);
  if (op < 0)
    return EMLX_FAIL("cpu: %s is not a reduction over axes", name);
  /* sum and max accumulate wide and may change the dtype */
  bool wide = op == EMLX_RED_SUM || op == EMLX_RED_MAX;
  const emlx_reduce_params *rp = (const emlx_reduce_params *)emlx__params(node);
  if (node->params_size < sizeof *rp ||
      node->params_size < sizeof *rp + (size_t)(rp->naxes > 0 ? rp->naxes : 0) * sizeof(int32_t))
    return EMLX_FAIL("cpu: %s: malformed params", name);
  unsigned char reduced[EMLX_MAX_NDIM] = {0};
  for (int k = 0; k < rp->naxes; k++) {
    int ax = rp->axes[k];
    if (ax < 0 || ax >= in->ndim || reduced[ax])
      return EMLX_FAIL("cpu: %s: bad axis %d for rank %d", name, ax, in->ndim);
    reduced[ax] = 1;
  }
  bool logic = op == EMLX_RED_ALL || op == EMLX_RED_ANY;
  if (!wide && (logic ? out->dtype != EMLX_BOOL : out->dtype != as))
    return EMLX_FAIL("cpu: %s: unexpected dtypes %s -> %s", name, emlx_dtype_name(in->dtype),
                     emlx_dtype_name(out->dtype));
  const emlx_cpu_reduce_table *tab = emlx_cpu_reduce_get();
  const emlx_cpu_isa *isa = emlx_cpu_isa_get();
  emlx_red_plan *p = malloc(sizeof *p);
  if (!p)
    return EMLX_FAIL("cpu: %s: out of memory", name);
  bool cast = as != in->dtype;
  p->op = op;
  /* A widened product accumulates in the cast's dtype; the other folds of
   * a cast's source accumulate as for that source. */
  p->in_dt = cast && op == EMLX_RED_PROD ? as : in->dtype;
  p->out_dt = out->dtype;
  p->in_es = emlx_dtype_size(in->dtype);
  p->out_es = emlx_dtype_size(out->dtype);
  emlx_cpu_red_acc_setup(p);
  p->row = tab->row[op][in->dtype];
  p->col = tab->col[op][in->dtype];
  p->acc_to_out = NULL;
  if (cast && op == EMLX_RED_SUM && p->out_es == 8) {
    p->row = tab->row_sum64[in->dtype];
  } else if (cast && op == EMLX_RED_PROD) {
    p->row = tab->row_prodw[p->out_es == 8][in->dtype];
    p->col = tab->col_prodw[p->out_es == 8][in->dtype];
  } else if (cast && op == EMLX_RED_MIN) {
    p->acc_to_out = isa->cast->cast[in->dtype][as];
  }
  p->f64_to_out = isa->cast->cast[EMLX_FLOAT64][out->dtype];
  p->task_work = wide ? EMLX_CPU_GRAIN : RED_OWN_TASK_WORK;
  p->src = src;
  p->order_free = emlx_dtype_is_integer(in->dtype) || in->dtype == EMLX_BOOL;
  int rc = 0;
  int64_t nout = emlx_cpu_red_dims(p, in, reduced);
  if (!p->row || !p->col) {
    rc = EMLX_FAIL("cpu: %s: dtype %s is not supported", name, emlx_dtype_name(in->dtype));
    goto done;
  }
  if (nout != out->size) {
    rc = EMLX_FAIL("cpu: %s: output has %lld elements, expected %lld", name, (long long)out->size,
                   (long long)nout);
    goto done;
  }
  if (!wide && in->size > 0 && p->nr == 0) { /* nothing left to reduce: one position */
    p->red[0].size = 1;
    p->red[0].stride = 0;
    p->nr = 1;
    p->inner_reduced = 1;
  }
  if (src && in->size > 0 && !emlx_cpu_red_source_ok(p)) {
    rc = 1; /* the virtual input would be read strided: not this way */
    goto done;
  }
  p->in = src ? NULL : (const char *)emlx__data(in);
  if ((rc = emlx__array_alloc_data(out)) != 0)
    goto done;
  p->out = (char *)emlx__data(out);
  if (out->size == 0)
    goto done;

  if (wide && p->nr == 0) { /* nothing to reduce (or only size-1 axes): astype */
    int64_t shape[EMLX_MAX_NDIM], st[EMLX_MAX_NDIM];
    for (int k = 0; k < p->nk; k++) {
      shape[k] = p->kept[k].size;
      st[k] = p->kept[k].stride;
    }
    const int64_t *sts[1] = {st};
    emlx_cpu_iter it;
    emlx_cpu_iter_init(&it, p->nk, shape, 1, sts);
    it.in[0] = p->in;
    it.in_esize[0] = p->in_es;
    it.out = p->out;
    it.out_esize = p->out_es;
    emlx_cpu_iter_run_unary(&it, isa->cast->cast[in->dtype][out->dtype], EMLX_CPU_GRAIN);
  } else if (in->size == 0) { /* an empty reduction: the identity */
    if (op == EMLX_RED_MAX || op == EMLX_RED_MIN) {
      rc = EMLX_FAIL("cpu: %s of an empty reduction", name);
      goto done;
    }
    char *acc = malloc((size_t)out->size * p->acc_es);
    if (!acc) {
      rc = EMLX_FAIL("cpu: %s: out of memory", name);
      goto done;
    }
    p->init(p, acc, out->size);
    p->finish(p, acc, p->out, out->size);
    free(acc);
  } else {
    rc = emlx_cpu_red_run(p, nout);
  }
done:
  if (rc < 0 && out->buffer) {
    emlx__buffer_release(out->buffer);
    out->buffer = NULL;
  }
  free(p);
  return rc;
}

int emlx_cpu_reduce(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs) {
  if (!outputs[0])
    return 0;
  return reduce_impl(node, inputs[0], NULL, inputs[0]->dtype, outputs[0]);
}

int emlx_cpu_reduce_source(const emlx_node *node, const emlx_array *like,
                           const emlx_cpu_source *src, emlx_array *out) {
  emlx_array v;
  int64_t st[EMLX_MAX_NDIM];
  emlx_cpu_red_stand_in(&v, st, like);
  return reduce_impl(node, &v, src, like->dtype, out);
}

/* Whether the reduction op of astype(x, as) can fold x itself: x an integer
 * or bool, as a wider integer. Sums and products wrap modulo 2^bits(as), and
 * extending x to as keeps every value's residue, so they need as to be the
 * node's output dtype (32 or 64 bits: sum and product do not widen it
 * further). A max or min commutes with the cast only when the cast keeps
 * every value (not from bool, not from signed to unsigned). */
static bool folds_source(int op, emlx_dtype x, emlx_dtype as, emlx_dtype out) {
  if (!(emlx_dtype_is_integer(x) || x == EMLX_BOOL) || !emlx_dtype_is_integer(as) ||
      emlx_dtype_size(as) <= emlx_dtype_size(x))
    return false;
  switch (op) {
  case EMLX_RED_SUM:
  case EMLX_RED_PROD:
    return out == as && emlx_dtype_size(as) >= 4;
  case EMLX_RED_MAX:
  case EMLX_RED_MIN:
    return out == as && x != EMLX_BOOL && (!emlx_dtype_is_signed(x) || emlx_dtype_is_signed(as));
  default:
    return false;
  }
}

int emlx_cpu_reduce_cast(const emlx_node *node, const emlx_array *x, const emlx_array *like,
                         emlx_array *out) {
  int op = red_op_of(node->prim);
  if (op < 0 || !folds_source(op, x->dtype, like->dtype, out->dtype) || !emlx__same_shape(x, like))
    return 1;
  return reduce_impl(node, x, NULL, like->dtype, out);
}
