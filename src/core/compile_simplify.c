/* compile_simplify.c — the compiler's walk of a traced graph into numbered
 * values (steps 2 and 3 of compile.c): constants evaluated at once, no-ops
 * that become their input, nodes equal to earlier ones (common
 * subexpressions, by a structural hash), and scalar constants of equal
 * dtype and bytes merged into one. See program.h. */
#include "program.h"

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
bool emlx__compile_depends_on_placeholder(emlx_node *n, const emlx_ptrmap *dep) {
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
int emlx__compile_value_of(compiler *c, const emlx_array *a) {
  int v = emlx__ptrmap_get(&c->arr_value, a);
  return v < 0 ? -1 : c->alias[v];
}

int emlx__compile_set_alias(compiler *c, int v, int to) {
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
int emlx__compile_constant_value(compiler *c, emlx_array *a) {
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
  v = emlx__compile_add_value(c->p, &c->capvals, a->dtype, a->ndim, a->shape, canon < 0 ? a : NULL);
  if (v < 0 || emlx__compile_set_alias(c, v, canon < 0 ? v : canon) != 0 ||
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
int emlx__compile_number_nodes(compiler *c) {
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
      in[k] = emlx__ready(x) ? emlx__compile_constant_value(c, x) : emlx__compile_value_of(c, x);
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
      int v = emlx__compile_add_value(c->p, &c->capvals, shape_src->dtype, shape_src->ndim,
                                      shape_src->shape, NULL);
      if (v >= 0)
        c->p->vals[v].absent = out == NULL;
      int to = same >= 0 ? same : eq >= 0 ? c->cn[eq].out[o] : v;
      if (v < 0 || emlx__compile_set_alias(c, v, to) != 0 ||
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
