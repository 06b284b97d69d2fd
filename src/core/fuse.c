/* fuse.c — fusion at eval: the switch and the counters, region
 * descriptions and their structural keys, and the plan cache (a chained
 * hash table with an LRU list, bounded).
 *
 * The partition of an eval's nodes into regions is fuse_partition.c's;
 * running a region at eval is fuse_run.c's (both described in fuse.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h"

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
