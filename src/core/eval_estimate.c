/* eval_estimate.c — a bounded estimate of the work an eval would do, for
 * callers that choose where to run it: the NIF evaluates small graphs on the
 * calling BEAM scheduler, which must return within well under a
 * millisecond, and sends the rest to a command queue's worker.
 *
 * The walk mirrors eval.c's collect (iterative, each node once, inputs read
 * under the node's lock and retained while on the stack) but keeps nothing:
 * it only counts, and stops at the first bound passed. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "params_control.h"
#include "ptrmap.h"

static int64_t sat_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

static int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t log2_ceil(int64_t n) {
  int64_t k = 1;
  while (k < 62 && ((int64_t)1 << k) < n)
    k++;
  return k;
}

static int64_t last_dim(const emlx_array *a) { return a->ndim > 0 ? a->shape[a->ndim - 1] : 1; }

int64_t emlx__kernel_work(emlx_prim prim, const void *params, int64_t in, int64_t widest,
                          int64_t in0_last, int64_t in1_size, int64_t out) {
  int64_t base = sat_add(in, out);
  switch (prim) {
  case EMLX_PRIM_MATMUL:
    return sat_add(base, sat_mul(out, in0_last));
  case EMLX_PRIM_CONV:
    return sat_add(base, sat_mul(out, in1_size));
  case EMLX_PRIM_WINDOW_REDUCE:
  case EMLX_PRIM_WINDOW_SCATTER:
    return sat_add(base, sat_mul(out, in));
  case EMLX_PRIM_FFT:
  case EMLX_PRIM_SORT:
  case EMLX_PRIM_ARGSORT:
    return sat_mul(base, log2_ceil(sat_add(in, 1)));
  case EMLX_PRIM_WHILE:
  case EMLX_PRIM_COND:
    return sat_add(base, emlx__control_work(params, prim));
  default:
    break;
  }
  if (prim >= EMLX_PRIM_CHOLESKY && prim <= EMLX_PRIM_PINV)
    return sat_add(base, sat_mul(sat_mul(in, widest), 8));
  return base;
}

/* The element-operations of running node, reached through its output via;
 * the caller holds the node's lock (the inputs are stable). */
static int64_t node_work(const emlx_node *node, const emlx_array *via) {
  int64_t in = 0, widest = 1;
  for (int i = 0; i < node->ninputs; i++) {
    in = sat_add(in, node->inputs[i]->size);
    if (last_dim(node->inputs[i]) > widest)
      widest = last_dim(node->inputs[i]);
  }
  int64_t in0_last = node->ninputs > 0 ? last_dim(node->inputs[0]) : 1;
  int64_t in1_size = node->ninputs > 1 ? node->inputs[1]->size : 1;
  return emlx__kernel_work(node->prim, node->params, in, widest, in0_last, in1_size,
                           sat_mul(via->size, node->noutputs));
}

/* The nodes seen so far: a small array, then a map once it is full. */
#define SEEN_LOCAL 64

typedef struct seen_set {
  const emlx_node *local[SEEN_LOCAL];
  int nlocal;
  emlx_ptrmap map;
} seen_set;

/* 1 added, 0 already there, -1 out of memory. */
static int seen_add(seen_set *s, const emlx_node *node) {
  if (s->map.n > 0) /* spilled: the map holds every node */
    return emlx__ptrmap_add(&s->map, node, 1);
  for (int i = 0; i < s->nlocal; i++)
    if (s->local[i] == node)
      return 0;
  if (s->nlocal < SEEN_LOCAL) {
    s->local[s->nlocal++] = node;
    return 1;
  }
  for (int i = 0; i < s->nlocal; i++)
    if (emlx__ptrmap_add(&s->map, s->local[i], 1) < 0)
      return -1;
  return emlx__ptrmap_add(&s->map, node, 1);
}

#define STACK_LOCAL 64

typedef struct est_stack {
  emlx_array *local[STACK_LOCAL];
  emlx_array **items;
  size_t n, cap;
} est_stack;

/* Pushes a (retained by the caller); on failure releases it and returns -1. */
static int stack_push(est_stack *s, emlx_array *a) {
  if (s->n == s->cap) {
    size_t cap = s->cap * 2;
    emlx_array **items =
        s->items == s->local ? malloc(cap * sizeof *items) : realloc(s->items, cap * sizeof *items);
    if (!items) {
      emlx_release(a);
      return -1;
    }
    if (s->items == s->local)
      memcpy(items, s->local, sizeof s->local);
    s->items = items;
    s->cap = cap;
  }
  s->items[s->n++] = a;
  return 0;
}

bool emlx_eval_within(emlx_array *const *arrays, size_t n, int64_t max_nodes, int64_t max_work,
                      emlx_work_estimate *est) {
  emlx_work_estimate e = {0, 0};
  bool within = n == 0 || arrays != NULL;
  est_stack st;
  st.items = st.local;
  st.n = 0;
  st.cap = STACK_LOCAL;
  seen_set seen;
  seen.nlocal = 0;
  seen.map = (emlx_ptrmap){0};
  for (size_t i = 0; within && i < n; i++) {
    if (!arrays[i])
      within = false;
    else if (!emlx__ready(arrays[i]) && stack_push(&st, emlx_retain(arrays[i])) != 0)
      within = false;
  }
  while (st.n > 0) {
    emlx_array *a = st.items[--st.n];
    emlx_node *node = a->node;
    if (!within || emlx__ready(a)) {
      emlx_release(a);
      continue;
    }
    int added = node ? seen_add(&seen, node) : -1; /* a lazy leaf: let eval report it */
    if (added <= 0) {
      within = within && added == 0;
      emlx_release(a);
      continue;
    }
    if (++e.nodes > max_nodes)
      within = false;
    emlx__spin_lock(&node->lock);
    int state = atomic_load_explicit(&node->state, memory_order_acquire);
    if (within && state == EMLX_NODE_RUNNING) {
      within = false;
    } else if (within && state == EMLX_NODE_PENDING) {
      e.work = sat_add(e.work, node_work(node, a));
      if (e.work > max_work)
        within = false;
      for (int k = node->ninputs - 1; within && k >= 0; k--) {
        emlx_array *in = node->inputs[k];
        if (!emlx__ready(in) && stack_push(&st, emlx_retain(in)) != 0)
          within = false;
      }
    }
    emlx__spin_unlock(&node->lock);
    emlx_release(a);
  }
  if (st.items != st.local)
    free(st.items);
  emlx__ptrmap_free(&seen.map);
  if (est)
    *est = e;
  return within;
}
