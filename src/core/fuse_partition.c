/* fuse_partition.c — the partition of an eval's (or a program's) nodes into
 * fused regions.
 *
 * The walk's order lists the lazy arrays inputs-first. Scanning
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
 * read it before) and may feed the reduction directly. */
#include <stdlib.h>
#include <string.h>

#include "fuse.h"
#include "objcache.h"
#include "ptrmap.h"

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

/* One block holds the union-find's arrays: shape_of, then parent, nops,
 * next, reducer and count (n + 1 ints), then sealed (n bytes). */
static size_t group_bytes(size_t n) { return n * sizeof(void *) + (5 * n + 1) * sizeof(int) + n; }

int emlx__fuse_group(const emlx_fuse_vertex *v, size_t n, int *region_of,
                     emlx_fuse_region **regions_out, int *nregions_out) {
  *regions_out = NULL;
  *nregions_out = 0;
  for (size_t i = 0; i < n; i++)
    region_of[i] = -1;
  if (n < 2 || n > (size_t)INT32_MAX / 8)
    return 0;
  size_t cap;
  char *block = emlx__spare_get(EMLX__SPARE_GROUP, group_bytes(n), &cap);
  if (!block)
    return -1;
  part p;
  p.shape_of = (const emlx_fuse_vertex **)(void *)block;
  p.parent = (int *)(void *)(block + n * sizeof(void *));
  p.nops = p.parent + n;
  p.next = p.nops + n;
  p.reducer = p.next + n;
  int *count = p.reducer + n; /* n + 1 */
  p.sealed = (unsigned char *)(count + n + 1);
  p.nreg = 0;
  int rc = -1;
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
  for (int r = 0; r <= p.nreg; r++)
    count[r] = 0;
  for (size_t i = 0; i < n; i++)
    if (region_of[i] >= 0)
      count[find_root(&p, region_of[i])]++;
  int nregions = 0;
  size_t nmembers = 0;
  /* (A region has no reducer unless unsealed until one came; merged roots
   * were unsealed, hence reducer-less, when they merged.) */
  for (int r = 0; r < p.nreg; r++) {
    bool kept = count[r] >= 2 || (count[r] == 1 && p.reducer[r] >= 0);
    nmembers += kept ? (size_t)count[r] : 0;
    count[r] = kept ? -(++nregions) : 0;
  }
  /* One block: the regions, then their member lists. */
  emlx_fuse_region *regions =
      nregions ? calloc(1, (size_t)nregions * sizeof *regions + nmembers * sizeof(int)) : NULL;
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
  int *members = (int *)(void *)(regions + nregions);
  for (int r = 0; r < nregions; r++) {
    regions[r].members = members;
    members += regions[r].nmembers;
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
  emlx__spare_give(EMLX__SPARE_GROUP, block, cap);
  return rc;
}

/* Where array `in` is in the walk's order: index maps each walked node to
 * the position of the one output of it that order lists; -1 when in is not
 * listed. */
static int order_index(emlx_array *const *order, const emlx_ptrmap *index, emlx_array *in) {
  int j = in->node ? emlx__ptrmap_get(index, in->node) : -1;
  return j >= 0 && order[j] == in ? j : -1;
}

/* The device and dtype of an input, copied under its consumer's lock. */
typedef struct in_info {
  emlx_device device;
  emlx_dtype dtype;
} in_info;

/* The inputs of a PENDING node (read under its lock) into in[0..cap), as
 * indices into order (-1: not in it), and the device and dtype of the first
 * three into ins3 (values, not pointers: a ready input the walk did not
 * retain, such as a constant, is freed as soon as another thread computes
 * the node and detaches it, so it must not be read after the lock); -1
 * when the node is no longer pending or has more than cap inputs. */
static int read_inputs(emlx_node *node, emlx_array *const *order, const emlx_ptrmap *index, int *in,
                       int cap, in_info *ins3) {
  int n = -1;
  emlx__spin_lock(&node->lock);
  if (atomic_load_explicit(&node->state, memory_order_acquire) == EMLX_NODE_PENDING &&
      node->ninputs <= cap) {
    n = node->ninputs;
    for (int k = 0; k < n; k++) {
      in[k] = order_index(order, index, node->inputs[k]);
      if (k < 3)
        ins3[k] = (in_info){node->inputs[k]->device, node->inputs[k]->dtype};
    }
  }
  emlx__spin_unlock(&node->lock);
  return n;
}

static bool node_fusable(const emlx_array *a, const in_info *ins, int nin) {
  const emlx_node *node = a->node;
  emlx_prim_class k = emlx_prim_table[node->prim].klass;
  if (node->noutputs != 1 || nin < 1 || nin > 3 ||
      (k != EMLX_CLASS_UNARY && k != EMLX_CLASS_BINARY && k != EMLX_CLASS_TERNARY))
    return false;
  emlx_dtype dt[3];
  for (int i = 0; i < nin; i++) {
    if (ins[i].device != a->device)
      return false;
    dt[i] = ins[i].dtype;
  }
  return emlx__fuse_supports(emlx__backend(a->device), node->prim, node->params, node->params_size,
                             dt, nin, a->dtype);
}

int emlx__fuse_partition(emlx_array *const *order, size_t n, const emlx_ptrmap *index,
                         int *region_of, emlx_fuse_region **regions_out, int *nregions_out) {
  *regions_out = NULL;
  *nregions_out = 0;
  for (size_t i = 0; i < n; i++)
    region_of[i] = -1;
  if (n < 2 || n > (size_t)INT32_MAX / 8)
    return 0;
  /* Input counts, read under each node's lock (they only drop, to 0, once
   * another thread has finished the node): an upper bound for the pass
   * below, which reads them again. The vertices and the input lists live in
   * one block after the counts. */
  size_t head = (n * sizeof(int) + 15) & ~(size_t)15, cap;
  char *block = emlx__spare_get(EMLX__SPARE_PARTITION, head + n * sizeof(emlx_fuse_vertex), &cap);
  if (!block)
    return -1;
  int *cnt = (int *)(void *)block;
  size_t total_in = 0;
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
  size_t need = head + n * sizeof(emlx_fuse_vertex) + total_in * sizeof(int);
  if (need > cap) {
    char *grown = realloc(block, need); /* keeps the counts */
    if (!grown) {
      emlx__spare_give(EMLX__SPARE_PARTITION, block, cap);
      return -1;
    }
    block = grown;
    cap = need;
    cnt = (int *)(void *)block;
  }
  emlx_fuse_vertex *v = (emlx_fuse_vertex *)(void *)(block + head);
  int *in_store = (int *)(void *)(v + n);
  memset(v, 0, n * sizeof *v);
  size_t used = 0;
  for (size_t i = 0; i < n; i++) {
    emlx_array *a = order[i];
    if (emlx__ready(a) || !a->node)
      continue;
    in_info ins3[3];
    int nin = read_inputs(a->node, order, index, in_store + used, cnt[i], ins3);
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
                   ins3[0].device == a->device;
  }
  int rc = emlx__fuse_group(v, n, region_of, regions_out, nregions_out);
  emlx__spare_give(EMLX__SPARE_PARTITION, block, cap);
  return rc;
}

void emlx__fuse_regions_free(emlx_fuse_region *regions, int nregions) {
  (void)nregions; /* one block with the member lists */
  free(regions);
}
