/* ptrmap.h — a growable map from pointers to ints (open addressing, linear
 * probing), for the walks of eval, fusion and the tracer. Zero-initialise
 * one to start; emlx__ptrmap_free releases it. */
#ifndef EMLX_PTRMAP_H
#define EMLX_PTRMAP_H

#include <stddef.h>

typedef struct emlx_ptrmap {
  const void **keys; /* NULL: empty slot */
  int *vals;
  size_t cap, n;
} emlx_ptrmap;

/* The value of key k, or -1 when absent. */
int emlx__ptrmap_get(const emlx_ptrmap *m, const void *k);
/* Sets k's value (adding k when absent): 1 added, 0 replaced, -1 out of
 * memory (nothing changed). */
int emlx__ptrmap_put(emlx_ptrmap *m, const void *k, int v);
/* Adds k with value v unless present: 1 added, 0 present (unchanged), -1
 * out of memory. */
int emlx__ptrmap_add(emlx_ptrmap *m, const void *k, int v);
void emlx__ptrmap_free(emlx_ptrmap *m);

#endif
