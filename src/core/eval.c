/* eval.c — the scheduler: computes what an eval asks for, each node once.
 *
 * 1. An iterative depth-first walk from the requested arrays collects the
 *    lazy nodes in dependency order (inputs first), holding a reference to
 *    each so nothing it will visit can die under it.
 * 2. Each node is claimed (PENDING -> RUNNING) and its kernel run; a node
 *    another thread is running is waited for instead, so a shared node is
 *    computed once however many threads or queues ask for it.
 * 3. A finished node publishes its outputs (READY) and drops its inputs, and
 *    the walk's own reference goes right after: intermediate buffers die as
 *    soon as their last consumer has run.
 *
 * With fusion on, step 2 first groups the walked nodes into regions of
 * elementwise work (fuse_partition.c): a region runs as one step at its last member,
 * or at the reduction it feeds, and the walk keeps its references to the
 * members until then.
 *
 * A kernel failure (e.g. the memory limit) puts its node back to PENDING and
 * stops the eval; nothing already computed is lost, nothing is half-written. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h"
#include "objcache.h"
#include "ptrmap.h"

static _Atomic uint64_t g_nodes_computed;

/* Waiting for a node another thread runs: one condition for all, since
 * waiting is rare (two queues asking for the same node at the same time). */
static pthread_mutex_t g_wait_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wait_cv = PTHREAD_COND_INITIALIZER;
static _Atomic int g_waiters;

emlx_eval_stats emlx_eval_stats_get(void) {
  emlx_eval_stats s = {atomic_load(&g_nodes_computed)};
  return s;
}

/* ---- growable arrays ------------------------------------------------------------ */

typedef struct frame {
  emlx_array *array;
  bool expanded;
} frame;

typedef struct walk {
  frame *stack;
  size_t nstack, capstack;
  emlx_array **order;
  size_t norder, caporder;
  emlx_ptrmap seen; /* node -> its array's index in order (-1 while expanding) */
} walk;

/* A walk starts from its thread's spare blocks (objcache.h): an eval of a
 * small graph then allocates nothing. */
static void walk_begin(walk *w) {
  size_t cap, kcap, vcap;
  memset(w, 0, sizeof *w);
  w->stack = emlx__spare_take(EMLX__SPARE_WALK_STACK, &cap);
  w->capstack = cap / sizeof *w->stack;
  w->order = emlx__spare_take(EMLX__SPARE_WALK_ORDER, &cap);
  w->caporder = cap / sizeof *w->order;
  void *keys = emlx__spare_take(EMLX__SPARE_MAP_KEYS, &kcap);
  void *vals = emlx__spare_take(EMLX__SPARE_MAP_VALS, &vcap);
  size_t slots = kcap / sizeof(void *);
  if (keys && vals && slots > 0 && (slots & (slots - 1)) == 0 && vcap / sizeof(int) == slots) {
    memset(keys, 0, kcap);
    w->seen.keys = keys;
    w->seen.vals = vals;
    w->seen.cap = slots;
  } else {
    free(keys);
    free(vals);
  }
}

/* Gives the blocks back for the next walk (the order unless the caller
 * took it: then w->order is NULL). A map far larger than this walk needed
 * is dropped, so a thread's small evals do not each clear a big one. */
static void walk_end(walk *w) {
  for (size_t i = 0; i < w->nstack; i++) emlx_release(w->stack[i].array);
  emlx__spare_give(EMLX__SPARE_WALK_STACK, w->stack, w->capstack * sizeof *w->stack);
  emlx__spare_give(EMLX__SPARE_WALK_ORDER, w->order, w->caporder * sizeof *w->order);
  if (w->seen.cap > 1024 && w->seen.n * 16 < w->seen.cap) {
    emlx__ptrmap_free(&w->seen);
    return;
  }
  emlx__spare_give(EMLX__SPARE_MAP_KEYS, w->seen.keys, w->seen.cap * sizeof(void *));
  emlx__spare_give(EMLX__SPARE_MAP_VALS, w->seen.vals, w->seen.cap * sizeof(int));
  w->seen = (emlx_ptrmap){0};
}

static int push_frame(walk *w, emlx_array *a) {
  if (w->nstack == w->capstack) {
    size_t cap = w->capstack ? w->capstack * 2 : 64;
    frame *s = realloc(w->stack, cap * sizeof *s);
    if (!s) return -1;
    w->stack = s;
    w->capstack = cap;
  }
  w->stack[w->nstack++] = (frame){a, false};
  return 0;
}

static int push_order(walk *w, emlx_array *a) {
  if (w->norder == w->caporder) {
    size_t cap = w->caporder ? w->caporder * 2 : 64;
    emlx_array **o = realloc(w->order, cap * sizeof *o);
    if (!o) return -1;
    w->order = o;
    w->caporder = cap;
  }
  w->order[w->norder++] = a;
  return 0;
}

/* Collects the lazy arrays reachable from roots, inputs before consumers,
 * each node once, each held by one reference. */
static int collect(walk *w, emlx_array *const *roots, size_t n) {
  for (size_t i = n; i-- > 0;) {
    if (emlx__ready(roots[i])) continue;
    if (push_frame(w, emlx_retain(roots[i])) != 0) return -1;
  }
  while (w->nstack > 0) {
    frame *f = &w->stack[w->nstack - 1];
    emlx_array *a = f->array;
    if (f->expanded) {
      w->nstack--;
      if (push_order(w, a) != 0) {
        emlx_release(a);
        return -1;
      }
      if (emlx__ptrmap_put(&w->seen, a->node, (int)(w->norder - 1)) < 0) return -1;
      continue;
    }
    emlx_node *node = a->node;
    int added = emlx__ready(a) ? 0 : emlx__ptrmap_add(&w->seen, node, -1);
    if (added <= 0) {
      w->nstack--;
      emlx_release(a);
      if (added < 0) return -1;
      continue;
    }
    f->expanded = true;
    /* Read the inputs under the node's lock: once DONE it drops them. */
    emlx__spin_lock(&node->lock);
    if (atomic_load_explicit(&node->state, memory_order_acquire) == EMLX_NODE_PENDING) {
      for (int i = node->ninputs - 1; i >= 0; i--) {
        emlx_array *in = node->inputs[i];
        if (emlx__ready(in)) continue;
        if (push_frame(w, emlx_retain(in)) != 0) {
          emlx_release(in);
          emlx__spin_unlock(&node->lock);
          return -1;
        }
      }
    }
    emlx__spin_unlock(&node->lock);
  }
  return 0;
}

void emlx__eval_count_computed(uint64_t n) {
  atomic_fetch_add_explicit(&g_nodes_computed, n, memory_order_relaxed);
}

void emlx__eval_notify(void) {
  if (atomic_load_explicit(&g_waiters, memory_order_seq_cst) == 0) return;
  pthread_mutex_lock(&g_wait_mu);
  pthread_cond_broadcast(&g_wait_cv);
  pthread_mutex_unlock(&g_wait_mu);
}

static void wait_while_running(emlx_node *node) {
  atomic_fetch_add_explicit(&g_waiters, 1, memory_order_seq_cst);
  pthread_mutex_lock(&g_wait_mu);
  while (atomic_load_explicit(&node->state, memory_order_seq_cst) == EMLX_NODE_RUNNING)
    pthread_cond_wait(&g_wait_cv, &g_wait_mu);
  pthread_mutex_unlock(&g_wait_mu);
  atomic_fetch_sub_explicit(&g_waiters, 1, memory_order_seq_cst);
}

/* Runs one claimed node. */
static int run_node(emlx_node *node, emlx_array *via) {
  emlx_array *outs_local[4];
  emlx_array **outs = node->noutputs <= 4 ? outs_local : malloc(node->noutputs * sizeof *outs);
  if (!outs) return EMLX_FAIL("eval: out of memory");
  if (node->noutputs == 1) {
    outs[0] = via; /* held by the caller (the walk) */
  } else {
    /* Siblings released meanwhile are NULL: the kernel computes into scratch. */
    emlx__spin_lock(&node->lock);
    for (int i = 0; i < node->noutputs; i++) {
      emlx_array *o = node->outputs[i];
      long rc = o ? atomic_load(&o->refcount) : 0;
      while (rc > 0 && !atomic_compare_exchange_weak(&o->refcount, &rc, rc + 1)) {
      }
      outs[i] = rc > 0 ? o : NULL;
    }
    emlx__spin_unlock(&node->lock);
  }
  const emlx_backend *be = emlx__backend(via->device);
  emlx_kernel_fn kernel = be ? be->kernels[node->prim] : NULL;
  int rc;
  if (node->prim == EMLX_PRIM_PLACEHOLDER) {
    /* Marks the trace as broken: emlx_compile fails (compile.c). */
    if (node->params_size == sizeof(int32_t))
      __atomic_store_n((int32_t *)(void *)node->params, 1, __ATOMIC_RELAXED);
    rc = EMLX_FAIL("eval: an input of a program being traced has no value (emlx_compile's trace "
                   "must leave values derived from its inputs lazy)");
  } else if (!kernel)
    rc = EMLX_FAIL("%s: no kernel on device %s", emlx_prim_table[node->prim].name,
                   emlx_device_name(via->device));
  else
    rc = kernel(node, node->inputs, outs);
  if (rc == 0) {
    for (int i = 0; i < node->noutputs; i++)
      if (outs[i]) atomic_store_explicit(&outs[i]->status, EMLX_STATUS_READY, memory_order_release);
    atomic_fetch_add_explicit(&g_nodes_computed, 1, memory_order_relaxed);
  } else {
    /* Leave no partial data behind: the outputs are lazy again. */
    for (int i = 0; i < node->noutputs; i++) {
      if (!outs[i]) continue;
      emlx__buffer_release(outs[i]->buffer);
      outs[i]->buffer = NULL;
    }
  }
  if (node->noutputs > 1)
    for (int i = 0; i < node->noutputs; i++) emlx_release(outs[i]);
  if (outs != outs_local) free(outs);
  return rc;
}

/* After claiming node: 0 when every input is ready; else the node is put
 * back to PENDING and its lazy inputs are evaluated first (1, or -1 when
 * that fails). A walk does not expand a node another thread is running,
 * and that thread may leave it pending again (a failed kernel, a fused
 * region that computed it only in scratch): its inputs may then still be
 * lazy when this thread claims it. */
static int ready_inputs(emlx_node *node) {
  emlx_array *local[8], **lazy = local;
  int n = 0;
  for (int k = 0; k < node->ninputs; k++)
    n += !emlx__ready(node->inputs[k]);
  if (n == 0) return 0;
  if (n > 8 && !(lazy = malloc((size_t)n * sizeof *lazy))) {
    atomic_store_explicit(&node->state, EMLX_NODE_PENDING, memory_order_seq_cst);
    emlx__eval_notify();
    return EMLX_FAIL("eval: out of memory");
  }
  n = 0;
  for (int k = 0; k < node->ninputs; k++) /* held: pending, the node may lose them */
    if (!emlx__ready(node->inputs[k])) lazy[n++] = emlx_retain(node->inputs[k]);
  atomic_store_explicit(&node->state, EMLX_NODE_PENDING, memory_order_seq_cst);
  emlx__eval_notify();
  int rc = emlx__eval(lazy, (size_t)n);
  for (int k = 0; k < n; k++) emlx_release(lazy[k]);
  if (lazy != local) free(lazy);
  return rc == 0 ? 1 : -1;
}

/* Computes a (claiming its node, or waiting for the thread that has). */
static int eval_one(emlx_array *a) {
  emlx_node *node = a->node;
  while (!emlx__ready(a)) {
    int expected = EMLX_NODE_PENDING;
    if (atomic_compare_exchange_strong(&node->state, &expected, EMLX_NODE_RUNNING)) {
      int ready = ready_inputs(node);
      if (ready < 0) return -1;
      if (ready > 0) continue; /* inputs computed meanwhile: claim again */
      int rc = run_node(node, a);
      atomic_store_explicit(&node->state, rc == 0 ? EMLX_NODE_DONE : EMLX_NODE_PENDING,
                            memory_order_seq_cst);
      emlx__eval_notify();
      if (rc == 0)
        emlx__node_drop_inputs(node);
      return rc;
    }
    if (expected == EMLX_NODE_RUNNING)
      wait_while_running(node);
    else if (expected == EMLX_NODE_DONE)
      break; /* a sibling output finished it */
  }
  return 0;
}

/* Runs fused region g (and its reduction, if it has one), or its members
 * one by one when it cannot be fused now; then drops the walk's references
 * to them. */
static int eval_region(const emlx_fuse_region *r, emlx_array **order) {
  int rc = emlx__fuse_run_region(r, order);
  if (rc > 0)
    rc = 0;
  else if (rc == 0)
    for (int m = 0; m < r->nmembers && rc == 0; m++)
      rc = eval_one(order[r->members[m]]);
  if (rc == 0 && r->reducer >= 0)
    rc = eval_one(order[r->reducer]); /* nothing left to do if it was fed directly */
  for (int m = 0; m < r->nmembers; m++) {
    emlx_release(order[r->members[m]]);
    order[r->members[m]] = NULL;
  }
  if (r->reducer >= 0) {
    emlx_release(order[r->reducer]);
    order[r->reducer] = NULL;
  }
  return rc;
}

/* Releases the walk's references to what is left of its order. */
static void release_order(emlx_array **order, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (order[i]) emlx_release(order[i]);
}

int emlx__walk_lazy(emlx_array *const *roots, size_t n, emlx_array ***order, size_t *norder) {
  walk w;
  walk_begin(&w);
  int rc = collect(&w, roots, n);
  if (rc != 0) {
    release_order(w.order, w.norder);
    w.norder = 0;
  }
  *order = rc == 0 ? w.order : NULL;
  *norder = w.norder;
  if (rc == 0) w.order = NULL; /* now the caller's */
  walk_end(&w);
  return rc;
}

int emlx__eval(emlx_array *const *arrays, size_t n) {
  walk w;
  walk_begin(&w);
  if (collect(&w, arrays, n) != 0) {
    release_order(w.order, w.norder);
    walk_end(&w);
    return EMLX_FAIL("eval: out of memory while walking the graph");
  }
  emlx_array **order = w.order;
  size_t norder = w.norder;
  /* Fused regions (none when fusion is off or memory is short). */
  int *region_of = NULL;
  size_t region_cap = 0;
  emlx_fuse_region *regions = NULL;
  int nregions = 0;
  if (norder >= 2 && emlx__fusion_on()) {
    region_of = emlx__spare_get(EMLX__SPARE_REGION_OF, norder * sizeof *region_of, &region_cap);
    if (region_of &&
        (emlx__fuse_partition(order, norder, &w.seen, region_of, &regions, &nregions) != 0 ||
         nregions == 0)) {
      emlx__spare_give(EMLX__SPARE_REGION_OF, region_of, region_cap);
      region_of = NULL;
    }
  }
  int rc = 0;
  for (size_t i = 0; i < norder && rc == 0; i++) {
    int g = region_of ? region_of[i] : -1;
    if (g >= 0) {
      /* A region runs at its last member, or at its reduction; the others
       * wait, still held. */
      const emlx_fuse_region *r = &regions[g];
      int at = r->reducer >= 0 ? r->reducer : r->members[r->nmembers - 1];
      if (at == (int)i)
        rc = eval_region(r, order);
      continue;
    }
    rc = eval_one(order[i]);
    emlx_release(order[i]);
    order[i] = NULL;
  }
  release_order(order, norder);
  emlx__fuse_regions_free(regions, nregions);
  emlx__spare_give(EMLX__SPARE_REGION_OF, region_of, region_cap);
  walk_end(&w);
  return rc;
}

int emlx_eval(emlx_array *const *arrays, size_t n) {
  if (n > 0 && !arrays) return EMLX_FAIL("eval: array list is NULL");
  for (size_t i = 0; i < n; i++)
    if (!arrays[i]) return EMLX_FAIL("eval: array %zu is NULL", i);
  return emlx__eval(arrays, n);
}
