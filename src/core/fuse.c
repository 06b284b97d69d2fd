/* fuse.c — fusion at eval: the switch, the structural plan cache, and the
 * partition of an eval's nodes into fused regions.
 *
 * Partition. The walk's order lists the lazy arrays inputs-first. Scanning
 * it, an elementwise node joins the region of an input when that region has
 * its shape, room left (EMLX_FUSE_MAX_OPS ops, EMLX_FUSE_MAX_INPUTS input
 * slots read from outside) and is not sealed; a node joining several input
 * regions merges them. A region is sealed as soon as one of its values is
 * read by a node that does not join it: every later node that could join it
 * would then depend on it through an outside node, and running the region as
 * one step would make a cycle. Sealing is what keeps every region a convex
 * piece of the graph, so it can run at the position of its last member. A
 * reduction over axes that is a region's first outside reader is attached
 * to it: the region then runs at the reduction's position (nothing else has
 * read it before) and may feed the reduction directly.
 *
 * Running a region (emlx__fuse_run_region) claims every member node
 * (PENDING -> RUNNING) so no other thread computes one meanwhile, builds the
 * region's description from the now stable inputs, takes the plan from the
 * cache and runs it. The values leaving the region are the members that
 * someone besides the region and the walk holds a reference to; the others
 * are computed in scratch tiles only and their nodes go back to PENDING
 * (they die with the walk's reference, or stay lazy for whoever holds them
 * later). When a claim fails (another thread got there first) nothing is
 * changed and eval runs the members one by one. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h"
#include "ptrmap.h"

/* ---- the switch and the counters ------------------------------------------- */

static _Atomic int g_fusion = -1; /* -1: EMLX_FUSION not read yet */
static _Atomic uint64_t g_regions, g_fused_ops, g_hits, g_misses, g_evictions;

static int env_setting(void) {
  const char *v = getenv("EMLX_FUSION");
  if (!v)
    return 1;
  return !(strcmp(v, "0") == 0 || strcmp(v, "off") == 0 || strcmp(v, "false") == 0 ||
           strcmp(v, "no") == 0);
}

bool emlx__fusion_on(void) {
  int v = atomic_load_explicit(&g_fusion, memory_order_relaxed);
  if (v < 0) {
    int expected = -1;
    atomic_compare_exchange_strong(&g_fusion, &expected, env_setting());
    v = atomic_load(&g_fusion);
  }
  return v == 1;
}

bool emlx_fusion_enabled(void) { return emlx__fusion_on(); }

bool emlx_set_fusion_enabled(bool enabled) {
  bool old = emlx__fusion_on();
  atomic_store(&g_fusion, enabled ? 1 : 0);
  return old;
}

void emlx__fuse_count_region(int nops) {
  atomic_fetch_add_explicit(&g_regions, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&g_fused_ops, (uint64_t)nops, memory_order_relaxed);
}

/* ---- descriptions ------------------------------------------------------------- */

int emlx__fuse_desc_add_op(emlx_fuse_desc *d, emlx_prim prim, emlx_dtype dtype, int nargs,
                           const int32_t *args, const void *params, size_t params_size) {
  size_t off = (d->params_len + 15u) & ~(size_t)15u;
  if (d->nops >= EMLX_FUSE_MAX_OPS || nargs < 1 || nargs > 3 ||
      off + params_size > EMLX_FUSE_MAX_PARAMS)
    return -1;
  emlx_fuse_op *op = &d->ops[d->nops];
  memset(op, 0, sizeof *op);
  op->prim = (int32_t)prim;
  op->dtype = (int32_t)dtype;
  op->nargs = nargs;
  for (int k = 0; k < nargs; k++)
    op->args[k] = args[k];
  op->params_offset = params_size ? (uint32_t)off : 0;
  op->params_size = (uint32_t)params_size;
  if (params_size) {
    memset(d->params + d->params_len, 0, off - d->params_len);
    memcpy(d->params + off, params, params_size);
    d->params_len = (uint32_t)(off + params_size);
  }
  return d->ninputs + d->nops++;
}

int emlx__fuse_input_class(const emlx_array *a, const int64_t *shape, int ndim) {
  if (a->size == 1)
    return EMLX_FUSE_IN_SCALAR;
  if (a->ndim == ndim && (a->flags & EMLX_FLAG_ROW_CONTIG)) {
    for (int i = 0; i < ndim; i++)
      if (a->shape[i] != shape[i])
        return EMLX_FUSE_IN_STRIDED;
    return EMLX_FUSE_IN_DENSE;
  }
  return EMLX_FUSE_IN_STRIDED;
}

/* The key: the header, then the used parts of each array. */
static size_t desc_key(const emlx_fuse_desc *d, unsigned char *buf) {
  size_t n = 0;
#define PUT(ptr, bytes)                                                                            \
  do {                                                                                             \
    memcpy(buf + n, (ptr), (bytes));                                                               \
    n += (bytes);                                                                                  \
  } while (0)
  PUT(&d->ndim, 4 * sizeof(int32_t) + sizeof(uint32_t));
  PUT(d->in_dtype, (size_t)d->ninputs * sizeof(int32_t));
  PUT(d->in_class, (size_t)d->ninputs * sizeof(int32_t));
  PUT(d->out_value, (size_t)d->noutputs * sizeof(int32_t));
  PUT(d->ops, (size_t)d->nops * sizeof(emlx_fuse_op));
  PUT(d->params, d->params_len);
#undef PUT
  return n;
}

#define KEY_MAX                                                                                    \
  (5 * 4 + EMLX_FUSE_MAX_INPUTS * 8 + EMLX_FUSE_MAX_OUTPUTS * 4 +                                  \
   EMLX_FUSE_MAX_OPS * sizeof(emlx_fuse_op) + EMLX_FUSE_MAX_PARAMS)

/* Eight bytes at a time: keys run to kilobytes and are hashed on every
 * fused eval. */
static uint64_t key_hash(const unsigned char *k, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, k + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
  }
  uint64_t w = 0;
  memcpy(&w, k + i, n - i);
  h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
  return h ^ (h >> 29);
}

/* ---- the plan cache: a chained hash table and an LRU list -------------------------- */

struct emlx_fuse_plan {
  _Atomic long refs; /* the cache's one while cached, plus one per user */
  const emlx_backend *be;
  void *impl;
  int nops;
  uint64_t hash;
  size_t keylen;
  unsigned char *key;
  struct emlx_fuse_plan *hnext, *lru_prev, *lru_next;
};

#define NBUCKETS 1024

static pthread_mutex_t g_cache_mu = PTHREAD_MUTEX_INITIALIZER;
static emlx_fuse_plan *g_buckets[NBUCKETS];
static emlx_fuse_plan *g_lru_head, *g_lru_tail; /* head: most recently used */
static size_t g_cached, g_capacity = 1024;

static void plan_free(emlx_fuse_plan *p) {
  p->be->fuse_free(p->impl);
  free(p->key);
  free(p);
}

void emlx__fuse_plan_release(emlx_fuse_plan *p) {
  if (p && atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1)
    plan_free(p);
}

static void lru_unlink(emlx_fuse_plan *p) {
  if (p->lru_prev)
    p->lru_prev->lru_next = p->lru_next;
  else
    g_lru_head = p->lru_next;
  if (p->lru_next)
    p->lru_next->lru_prev = p->lru_prev;
  else
    g_lru_tail = p->lru_prev;
  p->lru_prev = p->lru_next = NULL;
}

static void lru_push_front(emlx_fuse_plan *p) {
  p->lru_prev = NULL;
  p->lru_next = g_lru_head;
  if (g_lru_head)
    g_lru_head->lru_prev = p;
  g_lru_head = p;
  if (!g_lru_tail)
    g_lru_tail = p;
}

/* Under the lock: removes p from the table and the list; the caller drops
 * the cache's reference after unlocking. */
static void cache_remove(emlx_fuse_plan *p) {
  emlx_fuse_plan **pp = &g_buckets[p->hash % NBUCKETS];
  while (*pp != p)
    pp = &(*pp)->hnext;
  *pp = p->hnext;
  lru_unlink(p);
  g_cached--;
}

/* Under the lock: unlinks the least recently used plans until at most
 * `keep` remain; returns them chained through hnext. */
static emlx_fuse_plan *cache_trim(size_t keep) {
  emlx_fuse_plan *evicted = NULL;
  while (g_cached > keep && g_lru_tail) {
    emlx_fuse_plan *p = g_lru_tail;
    cache_remove(p);
    p->hnext = evicted;
    evicted = p;
    atomic_fetch_add_explicit(&g_evictions, 1, memory_order_relaxed);
  }
  return evicted;
}

static void release_chain(emlx_fuse_plan *p) {
  while (p) {
    emlx_fuse_plan *next = p->hnext;
    emlx__fuse_plan_release(p);
    p = next;
  }
}

static emlx_fuse_plan *cache_find(uint64_t h, const unsigned char *key, size_t n) {
  for (emlx_fuse_plan *p = g_buckets[h % NBUCKETS]; p; p = p->hnext)
    if (p->hash == h && p->keylen == n && memcmp(p->key, key, n) == 0)
      return p;
  return NULL;
}

emlx_fuse_plan *emlx__fuse_plan_get(const emlx_backend *be, const emlx_fuse_desc *d) {
  if (!be || !be->fuse_compile)
    return EMLX_FAIL_NULL("fusion: the %s backend does not fuse", be ? be->name : "?");
  _Alignas(16) unsigned char key[KEY_MAX];
  size_t n = desc_key(d, key);
  uint64_t h = key_hash(key, n) ^ (uint64_t)(uintptr_t)be;

  pthread_mutex_lock(&g_cache_mu);
  emlx_fuse_plan *p = cache_find(h, key, n);
  if (p) {
    atomic_fetch_add(&p->refs, 1);
    lru_unlink(p);
    lru_push_front(p);
    atomic_fetch_add_explicit(&g_hits, 1, memory_order_relaxed);
  }
  pthread_mutex_unlock(&g_cache_mu);
  if (p)
    return p;

  atomic_fetch_add_explicit(&g_misses, 1, memory_order_relaxed);
  void *impl = be->fuse_compile(d);
  if (!impl)
    return NULL;
  p = calloc(1, sizeof *p);
  unsigned char *kept = p ? malloc(n ? n : 1) : NULL;
  if (!kept) {
    be->fuse_free(impl);
    free(p);
    return EMLX_FAIL_NULL("fusion: out of memory");
  }
  memcpy(kept, key, n);
  p->be = be;
  p->impl = impl;
  p->nops = d->nops;
  p->hash = h;
  p->keylen = n;
  p->key = kept;
  atomic_init(&p->refs, 2); /* the cache's and the caller's */

  pthread_mutex_lock(&g_cache_mu);
  emlx_fuse_plan *raced = cache_find(h, kept, n);
  emlx_fuse_plan *evicted = NULL;
  if (raced) { /* another thread compiled the same plan meanwhile: use that one */
    atomic_fetch_add(&raced->refs, 1);
  } else {
    p->hnext = g_buckets[h % NBUCKETS];
    g_buckets[h % NBUCKETS] = p;
    lru_push_front(p);
    g_cached++;
    evicted = cache_trim(g_capacity);
  }
  pthread_mutex_unlock(&g_cache_mu);
  release_chain(evicted);
  if (raced) {
    plan_free(p);
    return raced;
  }
  return p;
}

int emlx__fuse_plan_run(const emlx_fuse_plan *p, emlx_array *const *inputs,
                        emlx_array *const *outputs, const long *donor_refs) {
  int rc = p->be->fuse_run(p->impl, inputs, outputs, donor_refs);
  if (rc == 0)
    emlx__fuse_count_region(p->nops);
  return rc;
}

int emlx__fuse_plan_nops(const emlx_fuse_plan *p) { return p->nops; }

int emlx__fuse_plan_reduce(const emlx_fuse_plan *p, emlx_array *const *inputs,
                           const emlx_node *reduce, const emlx_array *like, emlx_array *out) {
  if (!p->be->fuse_reduce)
    return 1;
  int rc = p->be->fuse_reduce(p->impl, inputs, reduce, like, out);
  if (rc == 0)
    emlx__fuse_count_region(p->nops + 1);
  return rc;
}

bool emlx__fuse_is_reduction(emlx_prim prim) {
  switch (prim) {
  case EMLX_PRIM_SUM:
  case EMLX_PRIM_MAX:
  case EMLX_PRIM_PRODUCT:
  case EMLX_PRIM_MIN:
  case EMLX_PRIM_ALL:
  case EMLX_PRIM_ANY:
    return true;
  default:
    return false;
  }
}

bool emlx__fuse_supports(const emlx_backend *be, emlx_prim prim, const void *params,
                         size_t params_size, const emlx_dtype *in, int nin, emlx_dtype out) {
  return be && be->fuse_supports && be->fuse_compile &&
         be->fuse_supports(prim, params, params_size, in, nin, out);
}

emlx_fusion_stats emlx_fusion_stats_get(void) {
  emlx_fusion_stats s;
  s.regions = atomic_load(&g_regions);
  s.fused_ops = atomic_load(&g_fused_ops);
  s.hits = atomic_load(&g_hits);
  s.misses = atomic_load(&g_misses);
  s.evictions = atomic_load(&g_evictions);
  pthread_mutex_lock(&g_cache_mu);
  s.cached = g_cached;
  s.capacity = g_capacity;
  pthread_mutex_unlock(&g_cache_mu);
  return s;
}

size_t emlx_set_fusion_cache_capacity(size_t plans) {
  if (plans < 1)
    plans = 1;
  pthread_mutex_lock(&g_cache_mu);
  size_t old = g_capacity;
  g_capacity = plans;
  emlx_fuse_plan *evicted = cache_trim(plans);
  pthread_mutex_unlock(&g_cache_mu);
  release_chain(evicted);
  return old;
}

void emlx_fusion_cache_clear(void) {
  pthread_mutex_lock(&g_cache_mu);
  emlx_fuse_plan *evicted = cache_trim(0);
  pthread_mutex_unlock(&g_cache_mu);
  release_chain(evicted);
}

/* ---- partition ------------------------------------------------------------------ */

typedef struct part {
  int *parent;  /* union-find over region ids */
  int *nops;    /* by root */
  int *next;    /* by root: input slots read from outside (an upper bound of the inputs) */
  int *reducer; /* by root: an attached reduction, or -1 */
  unsigned char *sealed;
  const emlx_fuse_vertex **shape_of; /* by root: a member, for its shape */
  int nreg;
} part;

static int find_root(part *p, int r) {
  while (p->parent[r] != r) {
    p->parent[r] = p->parent[p->parent[r]];
    r = p->parent[r];
  }
  return r;
}

int emlx__fuse_group(const emlx_fuse_vertex *v, size_t n, int *region_of,
                     emlx_fuse_region **regions_out, int *nregions_out) {
  *regions_out = NULL;
  *nregions_out = 0;
  for (size_t i = 0; i < n; i++)
    region_of[i] = -1;
  if (n < 2 || n > (size_t)INT32_MAX / 4)
    return 0;
  part p = {malloc(n * sizeof(int)),
            malloc(n * sizeof(int)),
            malloc(n * sizeof(int)),
            malloc(n * sizeof(int)),
            calloc(n, 1),
            malloc(n * sizeof(void *)),
            0};
  int *count = NULL;
  int rc = -1;
  if (!p.parent || !p.nops || !p.next || !p.reducer || !p.sealed || !p.shape_of)
    goto out;
  for (size_t i = 0; i < n; i++) {
    const emlx_fuse_vertex *a = &v[i];
    if (!a->fusable) {
      /* A reduction that is the first outside reader of a region may take
       * it as its prologue. */
      if (a->reducer && a->nin == 1 && a->in[0] >= 0 && region_of[a->in[0]] >= 0) {
        int r = find_root(&p, region_of[a->in[0]]);
        if (!p.sealed[r] && p.reducer[r] < 0)
          p.reducer[r] = (int)i;
      }
      /* Seal every region this vertex reads. */
      for (int k = 0; k < a->nin; k++)
        if (a->in[k] >= 0 && region_of[a->in[k]] >= 0)
          p.sealed[find_root(&p, region_of[a->in[k]])] = 1;
      continue;
    }
    int want = 1, joined = -1, outside = 0;
    int roots[3], nroots = 0;
    for (int k = 0; k < a->nin && k < 3; k++) {
      if (a->in[k] < 0 || region_of[a->in[k]] < 0) {
        outside++;
        continue;
      }
      int r = find_root(&p, region_of[a->in[k]]);
      int dup = 0;
      for (int t = 0; t < nroots; t++)
        dup |= roots[t] == r;
      if (!dup)
        roots[nroots++] = r;
    }
    /* Input slots the region would read from outside: its own, this
     * vertex's outside inputs, one per region it reads but does not join. */
    bool join[3];
    int ext = outside;
    for (int t = 0; t < nroots; t++) {
      int r = roots[t];
      const emlx_fuse_vertex *s0 = p.shape_of[r];
      join[t] = !p.sealed[r] && emlx__same_dims(s0->ndim, s0->shape, a->ndim, a->shape) &&
                want + p.nops[r] <= EMLX_FUSE_MAX_OPS;
      if (join[t]) {
        want += p.nops[r];
        ext += p.next[r];
      } else {
        ext++;
      }
    }
    if (ext > EMLX_FUSE_MAX_INPUTS) { /* too many inputs: start afresh */
      ext = outside + nroots;
      for (int t = 0; t < nroots; t++)
        join[t] = false;
    }
    for (int t = 0; t < nroots; t++) {
      int r = roots[t];
      if (!join[t]) {
        p.sealed[r] = 1;
      } else if (joined < 0) {
        joined = r;
      } else {
        p.parent[r] = joined;
        p.nops[joined] += p.nops[r];
      }
    }
    if (joined < 0) {
      joined = p.nreg++;
      p.parent[joined] = joined;
      p.nops[joined] = 0;
      p.reducer[joined] = -1;
      p.sealed[joined] = 0;
      p.shape_of[joined] = a;
    }
    p.next[joined] = ext;
    p.nops[joined]++;
    region_of[i] = joined;
  }

  /* Regions of two or more members; the rest run alone. */
  count = calloc((size_t)p.nreg + 1, sizeof(int));
  if (!count)
    goto out;
  for (size_t i = 0; i < n; i++)
    if (region_of[i] >= 0)
      count[find_root(&p, region_of[i])]++;
  int nregions = 0;
  /* (A region has no reducer unless unsealed until one came; merged roots
   * were unsealed, hence reducer-less, when they merged.) */
  for (int r = 0; r < p.nreg; r++)
    count[r] = count[r] >= 2 || (count[r] == 1 && p.reducer[r] >= 0) ? -(++nregions) : 0;
  emlx_fuse_region *regions = nregions ? calloc((size_t)nregions, sizeof *regions) : NULL;
  if (nregions && !regions)
    goto out;
  for (size_t i = 0; i < n; i++) {
    if (region_of[i] < 0)
      continue;
    int c = count[find_root(&p, region_of[i])];
    region_of[i] = c < 0 ? -c - 1 : -1;
    if (region_of[i] >= 0)
      regions[region_of[i]].nmembers++;
  }
  for (int r = 0; r < nregions; r++) {
    regions[r].members = malloc((size_t)regions[r].nmembers * sizeof(int));
    if (!regions[r].members) {
      emlx__fuse_regions_free(regions, nregions);
      goto out;
    }
    regions[r].nmembers = 0;
  }
  for (size_t i = 0; i < n; i++)
    if (region_of[i] >= 0) {
      emlx_fuse_region *g = &regions[region_of[i]];
      g->members[g->nmembers++] = (int)i;
    }
  for (int r = 0; r < nregions; r++)
    regions[r].reducer = -1;
  for (int r = 0; r < p.nreg; r++)
    if (p.parent[r] == r && count[r] < 0 && p.reducer[r] >= 0) {
      regions[-count[r] - 1].reducer = p.reducer[r];
      region_of[p.reducer[r]] = -count[r] - 1;
    }
  *regions_out = regions;
  *nregions_out = nregions;
  rc = 0;
out:
  if (rc != 0)
    for (size_t i = 0; i < n; i++)
      region_of[i] = -1;
  free(count);
  free(p.parent);
  free(p.nops);
  free(p.next);
  free(p.reducer);
  free(p.sealed);
  free(p.shape_of);
  return rc;
}

/* The inputs of a PENDING node (read under its lock) into in[0..cap), as
 * indices into order (-1: not in it); -1 when the node is no longer pending
 * or has more than cap inputs. */
static int read_inputs(emlx_node *node, const emlx_ptrmap *map, int *in, int cap,
                       emlx_array **ins3) {
  int n = -1;
  emlx__spin_lock(&node->lock);
  if (atomic_load_explicit(&node->state, memory_order_acquire) == EMLX_NODE_PENDING &&
      node->ninputs <= cap) {
    n = node->ninputs;
    for (int k = 0; k < n; k++) {
      in[k] = emlx__ptrmap_get(map, node->inputs[k]);
      if (k < 3)
        ins3[k] = node->inputs[k];
    }
  }
  emlx__spin_unlock(&node->lock);
  return n;
}

static bool node_fusable(const emlx_array *a, emlx_array *const *ins, int nin) {
  const emlx_node *node = a->node;
  emlx_prim_class k = emlx_prim_table[node->prim].klass;
  if (node->noutputs != 1 || nin < 1 || nin > 3 ||
      (k != EMLX_CLASS_UNARY && k != EMLX_CLASS_BINARY && k != EMLX_CLASS_TERNARY))
    return false;
  emlx_dtype dt[3];
  for (int i = 0; i < nin; i++) {
    if (ins[i]->device != a->device)
      return false;
    dt[i] = ins[i]->dtype;
  }
  return emlx__fuse_supports(emlx__backend(a->device), node->prim, node->params, node->params_size,
                             dt, nin, a->dtype);
}

int emlx__fuse_partition(emlx_array *const *order, size_t n, int *region_of,
                         emlx_fuse_region **regions_out, int *nregions_out) {
  *regions_out = NULL;
  *nregions_out = 0;
  for (size_t i = 0; i < n; i++)
    region_of[i] = -1;
  if (n < 2 || n > (size_t)INT32_MAX / 4)
    return 0;
  size_t total_in = 0;
  /* Input counts, read under each node's lock (they only drop, to 0, once
   * another thread has finished the node): an upper bound for the pass
   * below. */
  int *cnt = malloc(n * sizeof *cnt);
  if (!cnt)
    return -1;
  for (size_t i = 0; i < n; i++) {
    emlx_node *node = order[i]->node;
    cnt[i] = 0;
    if (!node)
      continue;
    emlx__spin_lock(&node->lock);
    cnt[i] = node->ninputs;
    emlx__spin_unlock(&node->lock);
    total_in += (size_t)cnt[i];
  }
  emlx_ptrmap map = {0}; /* array -> its index in order */
  emlx_fuse_vertex *v = calloc(n, sizeof *v);
  int *in_store = malloc((total_in ? total_in : 1) * sizeof(int));
  int rc = -1;
  if (!v || !in_store)
    goto out;
  for (size_t i = 0; i < n; i++)
    if (emlx__ptrmap_put(&map, order[i], (int)i) < 0)
      goto out;
  size_t used = 0;
  for (size_t i = 0; i < n; i++) {
    emlx_array *a = order[i];
    if (emlx__ready(a) || !a->node)
      continue;
    emlx_array *ins3[3];
    int nin = read_inputs(a->node, &map, in_store + used, cnt[i], ins3);
    if (nin < 0)
      continue;
    v[i].in = in_store + used;
    v[i].nin = nin;
    used += (size_t)nin;
    v[i].ndim = a->ndim;
    v[i].shape = a->shape;
    v[i].fusable = node_fusable(a, ins3, nin);
    const emlx_backend *be = emlx__backend(a->device);
    v[i].reducer = !v[i].fusable && nin == 1 && a->node->noutputs == 1 &&
                   emlx__fuse_is_reduction(a->node->prim) && be && be->fuse_reduce &&
                   ins3[0]->device == a->device;
  }
  rc = emlx__fuse_group(v, n, region_of, regions_out, nregions_out);
out:
  free(cnt);
  emlx__ptrmap_free(&map);
  free(v);
  free(in_store);
  return rc;
}

void emlx__fuse_regions_free(emlx_fuse_region *regions, int nregions) {
  for (int r = 0; r < nregions; r++)
    free(regions[r].members);
  free(regions);
}

/* ---- running a region at eval ------------------------------------------------------ */

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
