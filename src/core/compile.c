/* compile.c — programs: a traced graph, simplified, fused and replayed.
 *
 * emlx_compile
 * 1. makes one placeholder array per input template (a lazy array whose
 *    node, EMLX_PRIM_PLACEHOLDER, has no kernel) and calls the trace
 *    function, which builds its outputs with ordinary ops;
 * 2. walks the graph from the outputs (inputs first) and evaluates at once
 *    every node that does not depend on a placeholder: those become
 *    constants the program holds;
 * 3. numbers the values (inputs, constants, node outputs) and simplifies in
 *    dependency order: a no-op (astype to the same dtype, copy, reshape or
 *    broadcast to the same shape, identity transpose) becomes its input; a
 *    node equal to an earlier one (prim, params, input values, output dtypes
 *    and shapes) becomes that node; scalar constants of equal dtype and
 *    bytes become one;
 * 4. groups the remaining nodes into fused regions (fuse.c's rule) and
 *    takes their plans from the plan cache; every other node is a kernel
 *    step that keeps a copy of its node's prim and params;
 * 5. records, per step, the values that die after it (their last use).
 *
 * emlx_program_run holds the inputs and constants, runs the steps in order
 * on arrays that belong to no graph, frees each intermediate after its last
 * use and lets a step's kernel take over the buffer of an input that dies
 * with it (the kernels' own donation rule, which needs the value's only
 * reference). The program itself is never modified by a run. */
#include <stdlib.h>
#include <string.h>

#include "fuse.h"
#include "ptrmap.h"

enum {
  STEP_KERNEL,       /* one node's kernel */
  STEP_FUSED,        /* a fused region */
  STEP_FUSED_REDUCE, /* a reduction fed directly by a fused region's one output */
};

typedef struct step {
  int kind;
  emlx_node *proto;     /* KERNEL, FUSED_REDUCE: prim, params, counts; no inputs or outputs */
  emlx_fuse_plan *plan; /* FUSED, FUSED_REDUCE */
  emlx_array *like;     /* FUSED_REDUCE: the region's output (shape and dtype, no data) */
  int nin, nout, ndie;
  int *in;  /* value ids */
  int *out; /* value ids of the results */
  int *die; /* values freed after this step */
} step;

typedef struct value_info {
  emlx_dtype dtype;
  int ndim;
  int64_t *shape;
  emlx_array *fixed; /* inputs: NULL; constants: the array */
  bool absent;       /* an output of a multi-output node that the trace released:
                        its kernel gets NULL for it (and computes it in scratch) */
  int producer;      /* candidate node (during compile) or -1 */
} value_info;

struct emlx_program {
  _Atomic long refs;
  size_t ninputs, noutputs, nvalues, nsteps;
  value_info *vals;
  step *steps;
  int *out_ids;
  emlx_program_info info;
};

/* ---- small containers ------------------------------------------------------- */

#define GROW(arr, n, cap)                                                                          \
  ((n) < (cap) ? 0                                                                                 \
               : ((cap) = (cap) ? (cap)*2 : 64,                                                    \
                  (arr) = realloc_or_free((arr), (cap) * sizeof *(arr)), (arr) ? 0 : -1))

static void *realloc_or_free(void *p, size_t bytes) {
  void *q = realloc(p, bytes);
  if (!q)
    free(p);
  return q;
}

/* ---- the program ------------------------------------------------------------------ */

static void program_free(emlx_program *p) {
  if (!p)
    return;
  for (size_t i = 0; i < p->nsteps; i++) {
    step *s = &p->steps[i];
    free(s->proto);
    emlx__fuse_plan_release(s->plan);
    emlx_release(s->like);
    free(s->in);
    free(s->out);
    free(s->die);
  }
  for (size_t v = 0; v < p->nvalues; v++) {
    emlx_release(p->vals[v].fixed);
    free(p->vals[v].shape);
  }
  free(p->vals);
  free(p->steps);
  free(p->out_ids);
  free(p);
}

emlx_program *emlx_program_retain(emlx_program *p) {
  if (p)
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
  return p;
}

void emlx_program_release(emlx_program *p) {
  if (p && atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1)
    program_free(p);
}

int emlx_program_get_info(const emlx_program *p, emlx_program_info *info) {
  if (!p || !info)
    return EMLX_FAIL("program_get_info: %s is NULL", p ? "info" : "program");
  *info = p->info;
  return 0;
}

/* A new value of the program; -1 out of memory. */
static int add_value(emlx_program *p, size_t *cap, emlx_dtype dtype, int ndim, const int64_t *shape,
                     emlx_array *fixed) {
  if (GROW(p->vals, p->nvalues, *cap) != 0)
    return -1;
  value_info *v = &p->vals[p->nvalues];
  memset(v, 0, sizeof *v);
  v->dtype = dtype;
  v->ndim = ndim;
  v->producer = -1;
  v->shape = malloc((size_t)(ndim ? ndim : 1) * sizeof(int64_t));
  if (!v->shape)
    return -1;
  if (ndim)
    memcpy(v->shape, shape, (size_t)ndim * sizeof(int64_t));
  v->fixed = fixed ? emlx_retain(fixed) : NULL;
  return (int)p->nvalues++;
}

/* ---- tracing and walking ------------------------------------------------------ */

/* A multimap from 64-bit hashes to indices (open addressing); lookups walk
 * the slots of a hash and compare the entries themselves. */
typedef struct htab {
  uint64_t *key;
  int *idx; /* index + 1; 0 empty */
  size_t cap, n;
} htab;

static int htab_add(htab *t, uint64_t h, int idx) {
  if ((t->n + 1) * 2 > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    uint64_t *keys = calloc(cap, sizeof *keys);
    int *idxs = calloc(cap, sizeof *idxs);
    if (!keys || !idxs) {
      free(keys);
      free(idxs);
      return -1;
    }
    for (size_t i = 0; i < t->cap; i++) {
      if (!t->idx[i])
        continue;
      size_t j = t->key[i] & (cap - 1);
      while (idxs[j])
        j = (j + 1) & (cap - 1);
      keys[j] = t->key[i];
      idxs[j] = t->idx[i];
    }
    free(t->key);
    free(t->idx);
    t->key = keys;
    t->idx = idxs;
    t->cap = cap;
  }
  size_t j = h & (t->cap - 1);
  while (t->idx[j])
    j = (j + 1) & (t->cap - 1);
  t->key[j] = h;
  t->idx[j] = idx + 1;
  t->n++;
  return 0;
}

/* The first slot at or after h's home; walk with htab_next while
 * t->idx[slot] != 0. */
static size_t htab_first(const htab *t, uint64_t h) { return h & (t->cap - 1); }
static size_t htab_next(const htab *t, size_t slot) { return (slot + 1) & (t->cap - 1); }

static void htab_free(htab *t) {
  free(t->key);
  free(t->idx);
}

typedef struct cnode { /* a traced node kept as a candidate step */
  emlx_node *node;
  int nin;
  int *in;  /* value ids (canonical) */
  int *out; /* value ids, one per node output */
  bool fusable;
} cnode;

typedef struct compiler {
  emlx_program *p;
  size_t capvals;
  emlx_ptrmap arr_value; /* traced array -> value id */
  emlx_array **order;    /* emlx__walk_lazy's: the lazy arrays, inputs first */
  size_t norder;
  cnode *cn;
  size_t ncn, capcn;
  int *alias; /* value id -> canonical value id */
  size_t capalias;
  htab cse;     /* candidates by structural hash, for common subexpressions */
  htab scalars; /* canonical scalar constants by dtype, shape and bytes */
} compiler;

static uint64_t node_hash(const emlx_node *n, const int *in) {
  uint64_t h = 0xcbf29ce484222325ULL;
#define MIX(x)                                                                                     \
  do {                                                                                             \
    h ^= (uint64_t)(x);                                                                            \
    h *= 0x100000001b3ULL;                                                                         \
  } while (0)
  MIX(n->prim);
  MIX(n->noutputs);
  MIX(n->ninputs);
  for (int k = 0; k < n->ninputs; k++)
    MIX(in[k]);
  for (size_t b = 0; b < n->params_size; b++)
    MIX(n->params[b]);
#undef MIX
  return h | 1; /* never 0 */
}

/* Whether node n reads a placeholder or a node in dep. Read under its lock:
 * a node that does not depend on the inputs may be shared with other
 * threads, which may compute it (and drop its inputs) meanwhile; one that
 * is not pending any more depends on no placeholder. */
static bool depends_on_placeholder(emlx_node *n, const emlx_ptrmap *dep) {
  bool d = false;
  emlx__spin_lock(&n->lock);
  if (atomic_load_explicit(&n->state, memory_order_acquire) == EMLX_NODE_PENDING)
    for (int k = 0; k < n->ninputs && !d; k++) {
      const emlx_array *in = n->inputs[k];
      d = !emlx__ready(in) &&
          (in->node->prim == EMLX_PRIM_PLACEHOLDER || emlx__ptrmap_get(dep, in->node) == 1);
    }
  emlx__spin_unlock(&n->lock);
  return d;
}

/* The canonical value id of a traced array (after walk and numbering). */
static int value_of(compiler *c, const emlx_array *a) {
  int v = emlx__ptrmap_get(&c->arr_value, a);
  return v < 0 ? -1 : c->alias[v];
}

static int set_alias(compiler *c, int v, int to) {
  while ((size_t)v >= c->capalias) {
    size_t cap = c->capalias ? c->capalias * 2 : 64;
    int *a = realloc(c->alias, cap * sizeof *a);
    if (!a)
      return -1;
    c->alias = a;
    c->capalias = cap;
  }
  c->alias[v] = to;
  return 0;
}

static uint64_t scalar_hash(const emlx_array *a) {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)a->dtype ^ ((uint64_t)a->ndim << 8);
  unsigned char b[16] = {0};
  memcpy(b, emlx__data(a), emlx_dtype_size(a->dtype));
  for (int i = 0; i < 16; i += 8) {
    uint64_t w;
    memcpy(&w, b + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
  }
  return h;
}

/* A constant value for a READY array; scalars of equal dtype, shape and
 * bytes are one value. */
static int constant_value(compiler *c, emlx_array *a) {
  int v = emlx__ptrmap_get(&c->arr_value, a);
  if (v >= 0)
    return c->alias[v];
  int canon = -1;
  uint64_t h = 0;
  size_t es = emlx_dtype_size(a->dtype);
  if (a->size == 1) {
    h = scalar_hash(a);
    const htab *t = &c->scalars;
    for (size_t slot = t->cap ? htab_first(t, h) : 0; t->cap && t->idx[slot] && canon < 0;
         slot = htab_next(t, slot)) {
      const emlx_array *f = c->p->vals[t->idx[slot] - 1].fixed;
      if (t->key[slot] == h && f->dtype == a->dtype && f->ndim == a->ndim &&
          memcmp(f->shape, a->shape, (size_t)a->ndim * sizeof(int64_t)) == 0 &&
          memcmp(emlx__data(f), emlx__data(a), es) == 0)
        canon = t->idx[slot] - 1;
    }
  }
  v = add_value(c->p, &c->capvals, a->dtype, a->ndim, a->shape, canon < 0 ? a : NULL);
  if (v < 0 || set_alias(c, v, canon < 0 ? v : canon) != 0 ||
      emlx__ptrmap_put(&c->arr_value, a, v) < 0)
    return -1;
  if (a->size == 1 && canon < 0 && htab_add(&c->scalars, h, v) != 0)
    return -1;
  if (canon < 0)
    c->p->info.constants++;
  return c->alias[v];
}

/* The input value of a no-op node, or -1. */
static int noop_input(compiler *c, const emlx_node *n, const int *in) {
  if (n->noutputs != 1 || n->ninputs != 1)
    return -1;
  const emlx_array *o = n->outputs[0];
  const value_info *src = &c->p->vals[in[0]];
  bool same =
      o && o->dtype == src->dtype && emlx__same_dims(o->ndim, o->shape, src->ndim, src->shape);
  switch (n->prim) {
  case EMLX_PRIM_ASTYPE:
  case EMLX_PRIM_COPY:
  case EMLX_PRIM_RESHAPE:
  case EMLX_PRIM_BROADCAST:
    return same ? in[0] : -1;
  case EMLX_PRIM_TRANSPOSE: {
    const emlx_transpose_params *tp = (const emlx_transpose_params *)n->params;
    if (!same || n->params_size < sizeof *tp)
      return -1;
    for (int i = 0; i < tp->ndim; i++)
      if (tp->perm[i] != i)
        return -1;
    return in[0];
  }
  default:
    return -1;
  }
}

/* An earlier candidate equal to node n with inputs in (hash h), or -1. */
static int find_equal(const compiler *c, const emlx_node *n, const int *in, uint64_t h) {
  const htab *t = &c->cse;
  if (!t->cap)
    return -1;
  for (size_t slot = htab_first(t, h); t->idx[slot]; slot = htab_next(t, slot)) {
    if (t->key[slot] != h)
      continue;
    int j = t->idx[slot] - 1;
    const cnode *o = &c->cn[j];
    const emlx_node *m = o->node;
    if (m->prim != n->prim || m->noutputs != n->noutputs || o->nin != n->ninputs ||
        m->params_size != n->params_size || memcmp(m->params, n->params, n->params_size) != 0 ||
        memcmp(o->in, in, (size_t)o->nin * sizeof(int)) != 0)
      continue;
    bool eq = true;
    for (int i = 0; i < n->noutputs && eq; i++) {
      const value_info *vi = &c->p->vals[o->out[i]];
      const emlx_array *a = n->outputs[i];
      eq = a && !vi->absent && a->dtype == vi->dtype &&
           emlx__same_dims(a->ndim, a->shape, vi->ndim, vi->shape);
    }
    if (eq)
      return j;
  }
  return -1;
}

/* Numbers the walked nodes in order, simplifying as it goes. */
static int number_nodes(compiler *c) {
  for (size_t i = 0; i < c->norder; i++) {
    emlx_array *a = c->order[i];
    emlx_node *n = a->node;
    if (n->prim == EMLX_PRIM_PLACEHOLDER || emlx__ready(a))
      continue;
    int *in = malloc((size_t)(n->ninputs ? n->ninputs : 1) * sizeof(int));
    if (!in)
      return -1;
    for (int k = 0; k < n->ninputs; k++) {
      emlx_array *x = n->inputs[k];
      in[k] = emlx__ready(x) ? constant_value(c, x) : value_of(c, x);
      if (in[k] < 0) {
        if (!emlx__ready(x) && x->node->prim == EMLX_PRIM_PLACEHOLDER)
          emlx__set_error("compile: the trace used an input of another trace");
        free(in);
        return -1;
      }
    }
    int v0 = (int)c->p->nvalues;
    int same = noop_input(c, n, in);
    uint64_t h = node_hash(n, in);
    int eq = same < 0 ? find_equal(c, n, in, h) : -1;
    for (int o = 0; o < n->noutputs; o++) {
      const emlx_array *out = n->outputs[o];
      /* A released sibling output keeps a slot (absent: never computed). */
      const emlx_array *shape_src = out ? out : a;
      int v =
          add_value(c->p, &c->capvals, shape_src->dtype, shape_src->ndim, shape_src->shape, NULL);
      if (v >= 0)
        c->p->vals[v].absent = out == NULL;
      int to = same >= 0 ? same : eq >= 0 ? c->cn[eq].out[o] : v;
      if (v < 0 || set_alias(c, v, to) != 0 ||
          (out && emlx__ptrmap_put(&c->arr_value, out, v) < 0)) {
        free(in);
        return -1;
      }
    }
    if (same >= 0 || eq >= 0) {
      if (same >= 0)
        c->p->info.noops_removed++;
      else
        c->p->info.cse_merged++;
      free(in);
      continue;
    }
    if (GROW(c->cn, c->ncn, c->capcn) != 0 || htab_add(&c->cse, h, (int)c->ncn) != 0) {
      free(in);
      return -1;
    }
    cnode *cn = &c->cn[c->ncn];
    cn->node = n;
    cn->nin = n->ninputs;
    cn->in = in;
    cn->out = malloc((size_t)n->noutputs * sizeof(int));
    if (!cn->out) {
      free(in);
      return -1;
    }
    for (int o = 0; o < n->noutputs; o++) {
      cn->out[o] = v0 + o;
      c->p->vals[v0 + o].producer = (int)c->ncn;
    }
    emlx_prim_class k = emlx_prim_table[n->prim].klass;
    cn->fusable = false;
    if (n->noutputs == 1 && n->ninputs >= 1 && n->ninputs <= 3 &&
        (k == EMLX_CLASS_UNARY || k == EMLX_CLASS_BINARY || k == EMLX_CLASS_TERNARY)) {
      emlx_dtype dt[3];
      for (int q = 0; q < n->ninputs; q++)
        dt[q] = c->p->vals[in[q]].dtype;
      cn->fusable = emlx__fuse_supports(emlx__backend(EMLX_CPU), n->prim, n->params, n->params_size,
                                        dt, n->ninputs, c->p->vals[v0].dtype);
    }
    c->ncn++;
  }
  return 0;
}

/* ---- steps ------------------------------------------------------------------------ */

static emlx_node *proto_of(const emlx_node *n) {
  emlx_node *p = calloc(1, sizeof *p + ((n->params_size + 15u) & ~(size_t)15u));
  if (!p)
    return NULL;
  atomic_init(&p->refcount, 0);
  atomic_init(&p->state, EMLX_NODE_DONE);
  atomic_flag_clear(&p->lock);
  p->prim = n->prim;
  p->ninputs = n->ninputs;
  p->noutputs = n->noutputs;
  p->params_size = n->params_size;
  memcpy(p->params, n->params, n->params_size);
  return p;
}

static int *dup_ints(const int *src, int n) {
  int *d = malloc((size_t)(n ? n : 1) * sizeof(int));
  if (d && n)
    memcpy(d, src, (size_t)n * sizeof(int));
  return d;
}

/* A fused step for region r, or 0 when it must run as separate kernels. */
static int fused_step(compiler *c, const emlx_fuse_region *g, const int *region_of, int r,
                      const unsigned char *leaves, const cnode *reducer, step *s) {
  emlx_fuse_desc d;
  const cnode *anchor = &c->cn[g->members[g->nmembers - 1]];
  const value_info *shape = &c->p->vals[anchor->out[0]];
  d.ndim = shape->ndim;
  d.ninputs = d.nops = d.noutputs = 0;
  d.params_len = 0;
  int in_ids[EMLX_FUSE_MAX_INPUTS], out_ids[EMLX_FUSE_MAX_OUTPUTS];
  /* external inputs first (their ids number before the ops) */
  for (int m = 0; m < g->nmembers; m++) {
    const cnode *cn = &c->cn[g->members[m]];
    for (int k = 0; k < cn->nin; k++) {
      int v = cn->in[k];
      int prod = c->p->vals[v].producer;
      if (prod >= 0 && region_of[prod] == r)
        continue;
      int j = 0;
      while (j < d.ninputs && in_ids[j] != v)
        j++;
      if (j < d.ninputs)
        continue;
      if (j == EMLX_FUSE_MAX_INPUTS)
        return 0;
      const value_info *vi = &c->p->vals[v];
      int64_t size = 1;
      for (int q = 0; q < vi->ndim; q++)
        size *= vi->shape[q];
      in_ids[j] = v;
      d.in_dtype[j] = (int32_t)vi->dtype;
      d.in_class[j] = size == 1 ? EMLX_FUSE_IN_SCALAR : EMLX_FUSE_IN_STRIDED;
      d.ninputs++;
    }
  }
  for (int m = 0; m < g->nmembers; m++) {
    const cnode *cn = &c->cn[g->members[m]];
    int32_t args[3];
    for (int k = 0; k < cn->nin; k++) {
      int v = cn->in[k];
      int prod = c->p->vals[v].producer;
      if (prod >= 0 && region_of[prod] == r) {
        int mi = 0;
        while (g->members[mi] != prod)
          mi++;
        args[k] = d.ninputs + mi;
      } else {
        int j = 0;
        while (in_ids[j] != v)
          j++;
        args[k] = j;
      }
    }
    if (emlx__fuse_desc_add_op(&d, cn->node->prim, c->p->vals[cn->out[0]].dtype, cn->nin, args,
                               cn->node->params, cn->node->params_size) < 0)
      return 0;
    if (leaves[cn->out[0]]) {
      if (d.noutputs == EMLX_FUSE_MAX_OUTPUTS)
        return 0;
      d.out_value[d.noutputs] = d.ninputs + m;
      out_ids[d.noutputs++] = cn->out[0];
    }
  }
  s->plan = emlx__fuse_plan_get(emlx__backend(EMLX_CPU), &d);
  if (!s->plan) {
    emlx_clear_error();
    return 0;
  }
  s->kind = STEP_FUSED;
  s->nin = d.ninputs;
  s->nout = d.noutputs;
  s->in = dup_ints(in_ids, d.ninputs);
  if (reducer) { /* the step yields the reduction's value instead */
    const value_info *x = &c->p->vals[out_ids[0]];
    s->kind = STEP_FUSED_REDUCE;
    s->nout = 1;
    s->proto = proto_of(reducer->node);
    s->like = emlx__array_alloc(x->dtype, x->shape, x->ndim, EMLX_CPU);
    s->out = dup_ints(reducer->out, 1);
    return s->in && s->out && s->proto && s->like ? 1 : -1;
  }
  s->out = dup_ints(out_ids, d.noutputs);
  return s->in && s->out ? 1 : -1;
}

static int kernel_step(const cnode *cn, step *s) {
  s->kind = STEP_KERNEL;
  s->proto = proto_of(cn->node);
  s->nin = cn->nin;
  s->nout = cn->node->noutputs;
  s->in = dup_ints(cn->in, cn->nin);
  s->out = dup_ints(cn->out, s->nout);
  return s->proto && s->in && s->out ? 0 : -1;
}

static int build_steps(compiler *c, const unsigned char *is_output) {
  emlx_program *p = c->p;
  int *region_of = malloc((c->ncn ? c->ncn : 1) * sizeof(int));
  emlx_fuse_vertex *v = calloc(c->ncn ? c->ncn : 1, sizeof *v);
  int *in_store = NULL;
  size_t total = 0;
  for (size_t j = 0; j < c->ncn; j++)
    total += (size_t)c->cn[j].nin;
  in_store = malloc((total ? total : 1) * sizeof(int));
  emlx_fuse_region *regions = NULL;
  int nregions = 0, rc = -1;
  unsigned char *done = calloc(c->ncn ? c->ncn : 1, 1), *leaves = NULL;
  int *readers = NULL;
  p->steps = calloc(c->ncn ? c->ncn : 1, sizeof *p->steps);
  if (!region_of || !v || !in_store || !done || !p->steps)
    goto out;
  size_t used = 0;
  for (size_t j = 0; j < c->ncn; j++) {
    const cnode *cn = &c->cn[j];
    const value_info *o = &p->vals[cn->out[0]];
    v[j].fusable = cn->fusable;
    v[j].reducer = !cn->fusable && cn->nin == 1 && cn->node->noutputs == 1 &&
                   emlx__fuse_is_reduction(cn->node->prim);
    v[j].ndim = o->ndim;
    v[j].shape = o->shape;
    v[j].nin = cn->nin;
    v[j].in = in_store + used;
    for (int k = 0; k < cn->nin; k++)
      in_store[used++] = p->vals[cn->in[k]].producer;
  }
  if (emlx__fusion_on() && emlx__fuse_group(v, c->ncn, region_of, &regions, &nregions) != 0)
    goto out;
  if (!emlx__fusion_on())
    for (size_t j = 0; j < c->ncn; j++)
      region_of[j] = -1;
  /* The values that leave their region: program outputs, and values read by
   * a node of another region (or of none). */
  leaves = malloc(p->nvalues ? p->nvalues : 1);
  readers = calloc(p->nvalues ? p->nvalues : 1, sizeof(int));
  if (!leaves || !readers)
    goto out;
  memcpy(leaves, is_output, p->nvalues);
  for (size_t j = 0; j < c->ncn; j++)
    for (int k = 0; k < c->cn[j].nin; k++) {
      int x = c->cn[j].in[k], prod = p->vals[x].producer;
      readers[x]++;
      bool reduces = regions && region_of[j] >= 0 && regions[region_of[j]].reducer == (int)j;
      if (prod >= 0 && (region_of[j] < 0 || reduces || region_of[j] != region_of[prod]))
        leaves[x] = 1;
    }
  for (size_t j = 0; j < c->ncn; j++) {
    if (done[j])
      continue;
    int r = region_of[j];
    step *s = &p->steps[p->nsteps];
    if (r >= 0) {
      const emlx_fuse_region *g = &regions[r];
      /* A reduction feeds on the region when the region's only value
       * leaving it is the reduction's input, read by nothing else. */
      bool pro = g->reducer >= 0;
      if (pro) {
        int x = c->cn[g->reducer].in[0];
        pro = !is_output[x] && readers[x] == 1;
        for (int m = 0; m < g->nmembers && pro; m++)
          pro = c->cn[g->members[m]].out[0] == x || !leaves[c->cn[g->members[m]].out[0]];
      }
      if ((int)j == g->reducer && !pro) {
        if (kernel_step(&c->cn[j], s) != 0) {
          p->nsteps++;
          goto out;
        }
        p->nsteps++;
        continue;
      }
      if ((int)j != (pro ? g->reducer : g->members[g->nmembers - 1]))
        continue; /* a region is one step, at its last member or its reduction */
      int f = fused_step(c, g, region_of, r, leaves, pro ? &c->cn[g->reducer] : NULL, s);
      if (f < 0)
        goto out;
      if (f > 0) {
        p->nsteps++;
        p->info.fused_regions++;
        p->info.fused_ops += (size_t)g->nmembers + (pro ? 1 : 0);
        continue;
      }
      /* Not fusable after all: its members (and reduction) run as kernels. */
      for (int m = 0; m <= g->nmembers; m++) {
        int q = m < g->nmembers ? g->members[m] : pro ? g->reducer : -1;
        if (q < 0)
          break;
        if (kernel_step(&c->cn[q], &p->steps[p->nsteps]) != 0) {
          p->nsteps++;
          goto out;
        }
        p->nsteps++;
        done[q] = 1;
      }
      continue;
    }
    if (kernel_step(&c->cn[j], s) != 0) {
      p->nsteps++;
      goto out;
    }
    p->nsteps++;
  }
  rc = 0;
out:
  emlx__fuse_regions_free(regions, nregions);
  free(region_of);
  free(v);
  free(in_store);
  free(done);
  free(leaves);
  free(readers);
  return rc;
}

/* Per step, the intermediate values read or written there for the last
 * time (program outputs, inputs and constants are never freed by a step). */
static int plan_lifetimes(emlx_program *p, const unsigned char *is_output) {
  int *last = malloc((p->nvalues ? p->nvalues : 1) * sizeof(int));
  int *count = calloc(p->nsteps ? p->nsteps : 1, sizeof(int));
  if (!last || !count) {
    free(last);
    free(count);
    return -1;
  }
  for (size_t v = 0; v < p->nvalues; v++)
    last[v] = -1;
  for (size_t i = 0; i < p->nsteps; i++) {
    const step *s = &p->steps[i];
    for (int k = 0; k < s->nout; k++)
      last[s->out[k]] = (int)i;
    for (int k = 0; k < s->nin; k++)
      last[s->in[k]] = (int)i;
  }
  for (size_t v = p->ninputs; v < p->nvalues; v++)
    if (last[v] >= 0 && !is_output[v] && !p->vals[v].fixed)
      count[last[v]]++;
  int rc = 0;
  for (size_t i = 0; i < p->nsteps && rc == 0; i++) {
    p->steps[i].die = malloc((size_t)(count[i] ? count[i] : 1) * sizeof(int));
    if (!p->steps[i].die)
      rc = -1;
  }
  for (size_t v = p->ninputs; v < p->nvalues && rc == 0; v++)
    if (last[v] >= 0 && !is_output[v] && !p->vals[v].fixed) {
      step *s = &p->steps[last[v]];
      s->die[s->ndie++] = (int)v;
    }
  free(last);
  free(count);
  return rc;
}

static int check_template(const emlx_template *t, size_t i) {
  if (!emlx_dtype_is_valid(t->dtype))
    return EMLX_FAIL("compile: input %zu has an invalid dtype", i);
  if (t->ndim < 0 || t->ndim > EMLX_MAX_NDIM)
    return EMLX_FAIL("compile: input %zu has rank %d (0..%d)", i, t->ndim, EMLX_MAX_NDIM);
  if (t->ndim > 0 && !t->shape)
    return EMLX_FAIL("compile: input %zu has rank %d and a NULL shape", i, t->ndim);
  for (int d = 0; d < t->ndim; d++)
    if (t->shape[d] < 0)
      return EMLX_FAIL("compile: input %zu has a negative dim", i);
  return 0;
}

emlx_program *emlx_compile(emlx_trace_fn fn, void *ctx, const emlx_template *inputs, size_t ninputs,
                           size_t noutputs) {
  if (!fn)
    return EMLX_FAIL_NULL("compile: the trace function is NULL");
  if (ninputs > 0 && !inputs)
    return EMLX_FAIL_NULL("compile: the template list is NULL");
  if (noutputs == 0 || noutputs > (1u << 20) || ninputs > (1u << 20))
    return EMLX_FAIL_NULL("compile: expects 1 to 2^20 outputs and at most 2^20 inputs");
  for (size_t i = 0; i < ninputs; i++)
    if (check_template(&inputs[i], i) != 0)
      return NULL;

  emlx_program *p = calloc(1, sizeof *p);
  emlx_array **ph = calloc(ninputs ? ninputs : 1, sizeof *ph);
  emlx_array **outs = calloc(noutputs, sizeof *outs);
  unsigned char *is_output = NULL;
  compiler c = {0};
  c.p = p;
  bool ok = p && ph && outs;
  if (!ok)
    emlx__set_error("compile: out of memory");
  if (p) {
    atomic_init(&p->refs, 1);
    p->ninputs = ninputs;
    p->noutputs = noutputs;
    p->info.ninputs = ninputs;
    p->info.noutputs = noutputs;
  }
  /* 1. placeholders and the trace */
  for (size_t i = 0; ok && i < ninputs; i++) {
    const int64_t *shape = inputs[i].shape;
    int ndim = inputs[i].ndim;
    int32_t evaluated = 0; /* set by eval if the trace tries to evaluate it */
    ph[i] = emlx__node_make(EMLX_PRIM_PLACEHOLDER, NULL, 0, &evaluated, sizeof evaluated, 1,
                            &inputs[i].dtype, &shape, &ndim, EMLX_CPU, NULL);
    ok = ph[i] && add_value(p, &c.capvals, inputs[i].dtype, ndim, shape, NULL) == (int)i &&
         set_alias(&c, (int)i, (int)i) == 0 && emlx__ptrmap_put(&c.arr_value, ph[i], (int)i) >= 0;
  }
  if (ok) {
    emlx_clear_error();
    int frc = fn(ctx, ph, ninputs, outs, noutputs);
    if (frc != 0) {
      const char *msg = emlx_last_error();
      if (!msg[0])
        emlx__set_error("compile: the trace function failed (status %d)", frc);
      ok = false;
    }
    for (size_t i = 0; ok && i < ninputs; i++)
      if (__atomic_load_n((int32_t *)(void *)ph[i]->node->params, __ATOMIC_RELAXED)) {
        emlx__set_error("compile: the trace tried to evaluate a value derived from input %zu "
                        "(values of a trace must stay lazy)",
                        i);
        ok = false;
      }
    for (size_t i = 0; ok && i < noutputs; i++) {
      if (!outs[i]) {
        emlx__set_error("compile: the trace function returned NULL for output %zu", i);
        ok = false;
      } else if (outs[i]->device != EMLX_CPU) {
        emlx__set_error("compile: output %zu is not on the cpu", i);
        ok = false;
      }
    }
  }
  /* 2. the graph, and its constant part evaluated now */
  /* held: evaluating the constants frees what only they read */
  ok = ok && emlx__walk_lazy(outs, noutputs, &c.order, &c.norder) == 0;
  emlx_ptrmap dep = {0};
  if (ok) {
    emlx_array **consts = NULL;
    size_t nconsts = 0, capconsts = 0;
    for (size_t i = 0; ok && i < c.norder; i++) {
      emlx_node *n = c.order[i]->node;
      if (n->prim == EMLX_PRIM_PLACEHOLDER)
        continue;
      p->info.traced_ops++;
      if (depends_on_placeholder(n, &dep)) {
        ok = emlx__ptrmap_put(&dep, n, 1) >= 0;
      } else if (GROW(consts, nconsts, capconsts) != 0) {
        ok = false;
      } else {
        consts[nconsts++] = c.order[i];
      }
    }
    if (!ok)
      emlx__set_error("compile: out of memory");
    else if (nconsts && emlx_eval(consts, nconsts) != 0)
      ok = false;
    free(consts);
  }
  /* 3. values, simplified */
  if (ok) {
    for (size_t i = 0; ok && i < noutputs; i++) /* outputs that are constants */
      if (emlx__ready(outs[i]))
        ok = constant_value(&c, outs[i]) >= 0;
    ok = ok && number_nodes(&c) == 0;
    if (!ok && !emlx_last_error()[0])
      emlx__set_error("compile: out of memory");
  }
  if (ok) {
    p->out_ids = malloc(noutputs * sizeof(int));
    is_output = calloc(p->nvalues ? p->nvalues : 1, 1);
    ok = p->out_ids && is_output;
    for (size_t i = 0; ok && i < noutputs; i++) {
      int v = emlx__ready(outs[i]) ? constant_value(&c, outs[i]) : value_of(&c, outs[i]);
      ok = v >= 0;
      if (ok) {
        p->out_ids[i] = v;
        is_output[v] = 1;
      }
    }
    /* 4. steps, 5. lifetimes */
    ok = ok && build_steps(&c, is_output) == 0 && plan_lifetimes(p, is_output) == 0;
    if (!ok)
      emlx__set_error("compile: out of memory");
    else
      p->info.steps = p->nsteps;
  }

  emlx__ptrmap_free(&dep);
  for (size_t j = 0; j < c.ncn; j++) {
    free(c.cn[j].in);
    free(c.cn[j].out);
  }
  free(c.cn);
  for (size_t i = 0; i < c.norder; i++)
    emlx_release(c.order[i]);
  free(c.order);
  free(c.alias);
  htab_free(&c.cse);
  htab_free(&c.scalars);
  emlx__ptrmap_free(&c.arr_value);
  free(is_output);
  if (outs)
    for (size_t i = 0; i < noutputs; i++)
      emlx_release(outs[i]);
  if (ph)
    for (size_t i = 0; i < ninputs; i++)
      emlx_release(ph[i]);
  free(outs);
  free(ph);
  if (!ok) {
    program_free(p);
    return NULL;
  }
  return p;
}

/* ---- running ------------------------------------------------------------------------ */

static void drop_values(emlx_array **vals, size_t n) {
  for (size_t v = 0; v < n; v++)
    emlx_release(vals[v]);
}

/* A FUSED_REDUCE step the slow way: the region's output stored, then
 * reduced. */
static int reduce_through(const step *s, emlx_array *const *ins, const long *refs,
                          emlx_array *out) {
  emlx_array *x = emlx__array_alloc(s->like->dtype, s->like->shape, s->like->ndim, EMLX_CPU);
  if (!x)
    return -1;
  int rc = emlx__fuse_plan_run(s->plan, ins, &x, refs);
  if (rc == 0) {
    atomic_store_explicit(&x->status, EMLX_STATUS_READY, memory_order_release);
    rc = emlx__backend(EMLX_CPU)->kernels[s->proto->prim](s->proto, &x, &out);
  }
  emlx_release(x);
  return rc;
}

static int run_step(const emlx_program *p, const step *s, emlx_array **vals) {
  emlx_array *in_local[8], *out_local[8];
  emlx_array **ins = s->nin <= 8 ? in_local : malloc((size_t)s->nin * sizeof *ins);
  emlx_array **outs = s->nout <= 8 ? out_local : malloc((size_t)s->nout * sizeof *outs);
  long refs_local[EMLX_FUSE_MAX_INPUTS];
  bool protect_local[8];
  bool *protect = s->nin <= 8 ? protect_local : malloc((size_t)s->nin * sizeof *protect);
  int rc = 0;
  if (!ins || !outs || !protect) {
    rc = EMLX_FAIL("program_run: out of memory");
    goto out;
  }
  /* An input may lend its buffer only when it dies here and is read once. */
  for (int k = 0; k < s->nin; k++) {
    ins[k] = vals[s->in[k]];
    bool dies = false;
    for (int q = 0; q < s->ndie && !dies; q++)
      dies = s->die[q] == s->in[k];
    for (int q = 0; q < s->nin && dies; q++)
      dies = q == k || s->in[q] != s->in[k];
    protect[k] = !dies;
    if (s->kind != STEP_KERNEL)
      refs_local[k] = dies ? 1 : 0;
    else if (protect[k])
      emlx_retain(ins[k]);
  }
  int made = 0;
  for (; made < s->nout; made++) {
    const value_info *vi = &p->vals[s->out[made]];
    outs[made] = vi->absent ? NULL : emlx__array_alloc(vi->dtype, vi->shape, vi->ndim, EMLX_CPU);
    if (!outs[made] && !vi->absent) {
      rc = -1;
      break;
    }
  }
  if (rc == 0) {
    if (s->kind == STEP_FUSED) {
      rc = emlx__fuse_plan_run(s->plan, ins, outs, refs_local);
    } else if (s->kind == STEP_FUSED_REDUCE) {
      rc = emlx__fuse_plan_reduce(s->plan, ins, s->proto, s->like, outs[0]);
      if (rc == 1) /* this reduction cannot take it directly: materialise it */
        rc = reduce_through(s, ins, refs_local, outs[0]);
    } else {
      emlx_kernel_fn k = emlx__backend(EMLX_CPU)->kernels[s->proto->prim];
      rc = k ? k(s->proto, ins, outs)
             : EMLX_FAIL("%s: no kernel on device cpu", emlx_prim_table[s->proto->prim].name);
    }
  }
  if (s->kind == STEP_KERNEL)
    for (int k = 0; k < s->nin; k++)
      if (protect[k])
        emlx_release(ins[k]);
  for (int o = 0; o < made; o++) {
    if (!outs[o])
      continue;
    if (rc == 0) {
      atomic_store_explicit(&outs[o]->status, EMLX_STATUS_READY, memory_order_release);
      vals[s->out[o]] = outs[o];
    } else {
      emlx_release(outs[o]);
    }
  }
  if (rc == 0)
    for (int q = 0; q < s->ndie; q++) {
      emlx_release(vals[s->die[q]]);
      vals[s->die[q]] = NULL;
    }
out:
  if (ins != in_local)
    free(ins);
  if (outs != out_local)
    free(outs);
  if (protect != protect_local)
    free(protect);
  return rc;
}

int emlx_program_run(const emlx_program *p, emlx_array *const *inputs, size_t ninputs,
                     emlx_array **outputs, size_t noutputs) {
  if (!p)
    return EMLX_FAIL("program_run: program is NULL");
  if (ninputs != p->ninputs)
    return EMLX_FAIL("program_run: expects %zu inputs (got %zu)", p->ninputs, ninputs);
  if (noutputs != p->noutputs)
    return EMLX_FAIL("program_run: produces %zu outputs (got room for %zu)", p->noutputs, noutputs);
  if ((ninputs && !inputs) || !outputs)
    return EMLX_FAIL("program_run: %s list is NULL", outputs ? "input" : "output");
  for (size_t i = 0; i < ninputs; i++) {
    const emlx_array *a = inputs[i];
    const value_info *t = &p->vals[i];
    if (!a)
      return EMLX_FAIL("program_run: input %zu is NULL", i);
    if (a->device != EMLX_CPU)
      return EMLX_FAIL("program_run: input %zu is on %s, the program on cpu", i,
                       emlx_device_name(a->device));
    if (a->dtype != t->dtype)
      return EMLX_FAIL("program_run: input %zu has dtype %s, the template %s", i,
                       emlx_dtype_name(a->dtype), emlx_dtype_name(t->dtype));
    if (!emlx__same_dims(a->ndim, a->shape, t->ndim, t->shape))
      return EMLX_FAIL("program_run: input %zu has another shape than its template (rank %d, "
                       "template rank %d)",
                       i, a->ndim, t->ndim);
  }
  if (ninputs && emlx_eval(inputs, ninputs) != 0)
    return -1;
  emlx_array **vals = calloc(p->nvalues ? p->nvalues : 1, sizeof *vals);
  if (!vals)
    return EMLX_FAIL("program_run: out of memory");
  for (size_t i = 0; i < ninputs; i++)
    vals[i] = emlx_retain(inputs[i]);
  for (size_t v = ninputs; v < p->nvalues; v++)
    if (p->vals[v].fixed)
      vals[v] = emlx_retain(p->vals[v].fixed);
  for (size_t i = 0; i < p->nsteps; i++) {
    if (run_step(p, &p->steps[i], vals) != 0) {
      drop_values(vals, p->nvalues);
      free(vals);
      return -1;
    }
  }
  for (size_t i = 0; i < noutputs; i++)
    outputs[i] = emlx_retain(vals[p->out_ids[i]]);
  drop_values(vals, p->nvalues);
  free(vals);
  return 0;
}
