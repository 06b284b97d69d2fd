/* ptrmap.c — a growable pointer -> int map (see ptrmap.h). */
#include "ptrmap.h"

#include <stdlib.h>

#include "internal.h"

int emlx__ptrmap_get(const emlx_ptrmap *m, const void *k) {
  if (!m->cap)
    return -1;
  for (size_t j = emlx__ptr_hash(k) & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
    if (!m->keys[j])
      return -1;
    if (m->keys[j] == k)
      return m->vals[j];
  }
}

/* Doubles the table (at most half full after an insertion). */
static int grow(emlx_ptrmap *m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  const void **keys = calloc(cap, sizeof *keys);
  int *vals = malloc(cap * sizeof *vals);
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return -1;
  }
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->keys[i])
      continue;
    size_t j = emlx__ptr_hash(m->keys[i]) & (cap - 1);
    while (keys[j])
      j = (j + 1) & (cap - 1);
    keys[j] = m->keys[i];
    vals[j] = m->vals[i];
  }
  free(m->keys);
  free(m->vals);
  m->keys = keys;
  m->vals = vals;
  m->cap = cap;
  return 0;
}

static int insert(emlx_ptrmap *m, const void *k, int v, int replace) {
  if ((m->n + 1) * 2 > m->cap && grow(m) != 0)
    return -1;
  size_t j = emlx__ptr_hash(k) & (m->cap - 1);
  while (m->keys[j] && m->keys[j] != k)
    j = (j + 1) & (m->cap - 1);
  if (m->keys[j]) {
    if (replace)
      m->vals[j] = v;
    return 0;
  }
  m->keys[j] = k;
  m->vals[j] = v;
  m->n++;
  return 1;
}

int emlx__ptrmap_put(emlx_ptrmap *m, const void *k, int v) { return insert(m, k, v, 1); }
int emlx__ptrmap_add(emlx_ptrmap *m, const void *k, int v) { return insert(m, k, v, 0); }

void emlx__ptrmap_free(emlx_ptrmap *m) {
  free(m->keys);
  free(m->vals);
  m->keys = NULL;
  m->vals = NULL;
  m->cap = m->n = 0;
}
