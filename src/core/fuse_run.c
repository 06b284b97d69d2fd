/* fuse_run.c — running a fused region at eval.
 *
 * emlx__fuse_run_region claims every member node
 * (PENDING -> RUNNING) so no other thread computes one meanwhile, builds the
 * region's description from the now stable inputs, takes the plan from the
 * cache and runs it. The values leaving the region are the members that
 * someone besides the region and the walk holds a reference to; the others
 * are computed in scratch tiles only and their nodes go back to PENDING
 * (they die with the walk's reference, or stay lazy for whoever holds them
 * later). When a claim fails (another thread got there first) nothing is
 * changed and eval runs the members one by one. */
#include <stdlib.h>
#include <string.h>

#include "fuse.h"

/* Puts the first `upto` members (and the reducer, if `reducer`) back to
 * PENDING. */
static void unclaim(emlx_array *const *order, const emlx_fuse_region *r, int upto, bool reducer) {
  for (int m = 0; m < upto; m++)
    atomic_store_explicit(&order[r->members[m]]->node->state, EMLX_NODE_PENDING,
                          memory_order_seq_cst);
  if (reducer)
    atomic_store_explicit(&order[r->reducer]->node->state, EMLX_NODE_PENDING, memory_order_seq_cst);
  emlx__eval_notify();
}

static bool claim(emlx_node *n) {
  int expected = EMLX_NODE_PENDING;
  return atomic_compare_exchange_strong(&n->state, &expected, EMLX_NODE_RUNNING);
}

/* A small pointer table on the stack: each member of a region and each of
 * its external inputs, tagged with its position (members: -1 - m, inputs: j). */
#define PTAB_SIZE 512 /* a power of two, >= 2 * (EMLX_FUSE_MAX_OPS + EMLX_FUSE_MAX_INPUTS) */

typedef struct ptab {
  const void *key[PTAB_SIZE];
  int tag[PTAB_SIZE];
} ptab;

static size_t ptab_slot(const ptab *t, const void *k) {
  size_t j = (size_t)(((uint64_t)(uintptr_t)k * 0x9e3779b97f4a7c15ULL) >> 55) & (PTAB_SIZE - 1);
  while (t->key[j] && t->key[j] != k)
    j = (j + 1) & (PTAB_SIZE - 1);
  return j;
}

int emlx__fuse_run_region(const emlx_fuse_region *r, emlx_array *const *order) {
  int nm = r->nmembers;
  if (nm < 1 || nm > EMLX_FUSE_MAX_OPS || (nm < 2 && r->reducer < 0))
    return 0;
  for (int m = 0; m < nm; m++) {
    if (!claim(order[r->members[m]]->node)) {
      unclaim(order, r, m, false);
      return 0;
    }
  }
  emlx_array *red = r->reducer >= 0 ? order[r->reducer] : NULL;
  if (red && !claim(red->node)) {
    unclaim(order, r, nm, false);
    return 0;
  }
  /* Every member is ours now: its inputs stay put. */
  const emlx_array *anchor = order[r->members[nm - 1]];
  ptab tab;
  memset(tab.key, 0, sizeof tab.key);
  for (int m = 0; m < nm; m++) {
    size_t j = ptab_slot(&tab, order[r->members[m]]);
    tab.key[j] = order[r->members[m]];
    tab.tag[j] = -1 - m;
  }
  emlx_fuse_desc d;
  d.ndim = anchor->ndim;
  d.ninputs = d.nops = d.noutputs = 0;
  d.params_len = 0;
  emlx_array *inputs[EMLX_FUSE_MAX_INPUTS];
  emlx_array *outputs[EMLX_FUSE_MAX_OUTPUTS];
  long refs[EMLX_FUSE_MAX_INPUTS];
  int internal[EMLX_FUSE_MAX_OPS] = {0};
  int32_t arg_id[EMLX_FUSE_MAX_OPS][3];
  bool ok = true;
  for (int m = 0; m < nm && ok; m++) {
    emlx_array *a = order[r->members[m]];
    emlx_node *node = a->node;
    ok = emlx__same_shape(a, anchor) && node->ninputs <= 3;
    for (int k = 0; ok && k < node->ninputs; k++) {
      emlx_array *in = node->inputs[k];
      size_t slot = ptab_slot(&tab, in);
      if (tab.key[slot] && tab.tag[slot] < 0) { /* a member */
        internal[-1 - tab.tag[slot]]++;
        arg_id[m][k] = tab.tag[slot]; /* patched below, once ninputs is known */
        continue;
      }
      int j = tab.key[slot] ? tab.tag[slot] : d.ninputs;
      if (j == d.ninputs) {
        if (j == EMLX_FUSE_MAX_INPUTS || !emlx__ready(in)) {
          ok = false;
          break;
        }
        tab.key[slot] = in;
        tab.tag[slot] = j;
        inputs[j] = in;
        refs[j] = 0;
        d.in_dtype[j] = (int32_t)in->dtype;
        d.in_class[j] = emlx__fuse_input_class(in, anchor->shape, anchor->ndim);
        d.ninputs++;
      }
      refs[j]++;
      arg_id[m][k] = j;
    }
  }
  for (int m = 0; m < nm && ok; m++) {
    emlx_array *a = order[r->members[m]];
    emlx_node *node = a->node;
    for (int k = 0; k < node->ninputs; k++)
      if (arg_id[m][k] < 0)
        arg_id[m][k] = d.ninputs + (-1 - arg_id[m][k]);
    ok = emlx__fuse_desc_add_op(&d, node->prim, a->dtype, node->ninputs, arg_id[m], node->params,
                                node->params_size) >= 0;
    /* A value leaves the region when anyone but its region consumers and
     * the walk holds it. */
    if (ok && atomic_load(&a->refcount) > 1 + internal[m]) {
      if (d.noutputs == EMLX_FUSE_MAX_OUTPUTS)
        ok = false;
      else {
        d.out_value[d.noutputs] = d.ninputs + m;
        outputs[d.noutputs++] = a;
      }
    }
  }
  emlx_fuse_plan *plan =
      ok && d.noutputs > 0 ? emlx__fuse_plan_get(emlx__backend(anchor->device), &d) : NULL;
  if (!plan) {
    emlx_clear_error();
    unclaim(order, r, nm, red != NULL);
    return 0;
  }
  /* The reduction reads the region's only output, which nobody else holds:
   * feed it directly, the output never stored. */
  if (red && d.noutputs == 1 && outputs[0] == red->node->inputs[0] &&
      atomic_load(&outputs[0]->refcount) ==
          2 + internal[d.out_value[0] - d.ninputs]) { /* the walk's and the reduction's */
    int rc = emlx__fuse_plan_reduce(plan, inputs, red->node, outputs[0], red);
    if (rc <= 0) {
      emlx__fuse_plan_release(plan);
      if (rc < 0) {
        unclaim(order, r, nm, true);
        return -1;
      }
      atomic_store_explicit(&red->status, EMLX_STATUS_READY, memory_order_release);
      unclaim(order, r, nm, false);
      atomic_store_explicit(&red->node->state, EMLX_NODE_DONE, memory_order_seq_cst);
      emlx__eval_notify();
      emlx__node_drop_inputs(red->node);
      emlx__eval_count_computed((uint64_t)nm + 1);
      return 1;
    }
  }
  if (red) /* it runs on its own, right after the region (eval.c) */
    unclaim(order, r, 0, true);
  int rc = emlx__fuse_plan_run(plan, inputs, outputs, refs);
  emlx__fuse_plan_release(plan);
  if (rc != 0) {
    unclaim(order, r, nm, false);
    return -1;
  }
  for (int j = 0; j < d.noutputs; j++)
    atomic_store_explicit(&outputs[j]->status, EMLX_STATUS_READY, memory_order_release);
  for (int m = 0; m < nm; m++) {
    emlx_array *a = order[r->members[m]];
    atomic_store_explicit(&a->node->state, emlx__ready(a) ? EMLX_NODE_DONE : EMLX_NODE_PENDING,
                          memory_order_seq_cst);
  }
  emlx__eval_notify();
  for (int j = 0; j < d.noutputs; j++)
    emlx__node_drop_inputs(outputs[j]->node);
  emlx__eval_count_computed((uint64_t)nm);
  return 1;
}
