/* graph.c — making graph nodes: one allocation holds the node, its params,
 * its input list and its output back-pointers. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define ALIGN16(n) (((n) + 15) & ~(size_t)15)

emlx_array *emlx__node_make(emlx_prim prim, emlx_array *const *inputs, int ninputs,
                            const void *params, size_t params_size, int noutputs,
                            const emlx_dtype *dtypes, const int64_t *const *shapes,
                            const int *ndims, emlx_device dev, emlx_array **out_all) {
  const char *name = emlx_prim_table[prim].name;
  for (int i = 0; i < ninputs; i++) {
    if (!inputs[i]) return EMLX_FAIL_NULL("%s: input %d is NULL", name, i);
    if (inputs[i]->device != dev)
      return EMLX_FAIL_NULL("%s: mismatched devices (%s and %s)", name,
                            emlx_device_name(inputs[i]->device), emlx_device_name(dev));
  }
  if (emlx__check_device(dev, name) != 0) return NULL;
  size_t psize = ALIGN16(params_size);
  emlx_node *n = calloc(1, sizeof *n + psize + (size_t)(ninputs + noutputs) * sizeof(void *));
  if (!n) return EMLX_FAIL_NULL("%s: out of memory", name);
  atomic_init(&n->refcount, noutputs);
  atomic_init(&n->state, EMLX_NODE_PENDING);
  atomic_flag_clear(&n->lock);
  n->prim = prim;
  n->params_size = params_size;
  if (params_size) memcpy(n->params, params, params_size);
  n->inputs = (emlx_array **)(void *)(n->params + psize);
  n->outputs = n->inputs + ninputs;
  n->noutputs = noutputs;

  for (int i = 0; i < noutputs; i++) {
    emlx_array *o = emlx__array_alloc(dtypes[i], shapes[i], ndims[i], dev);
    if (!o) {
      for (int j = 0; j < i; j++) {
        if (n->outputs[j]->shape != n->outputs[j]->inline_shape) free(n->outputs[j]->shape);
        free(n->outputs[j]);
      }
      free(n);
      return NULL;
    }
    o->node = n;
    o->output_index = i;
    n->outputs[i] = o;
  }
  for (int i = 0; i < ninputs; i++) n->inputs[i] = emlx_retain(inputs[i]);
  n->ninputs = ninputs;
  if (out_all)
    for (int i = 0; i < noutputs; i++) out_all[i] = n->outputs[i];
  return n->outputs[0];
}

emlx_array *emlx__op(emlx_prim prim, emlx_array *const *inputs, int ninputs, const void *params,
                     size_t params_size, emlx_dtype dtype, const int64_t *shape, int ndim) {
  emlx_device dev = ninputs > 0 && inputs[0] ? inputs[0]->device : EMLX_CPU;
  const int64_t *shapes[1] = {shape};
  return emlx__node_make(prim, inputs, ninputs, params, params_size, 1, &dtype, shapes, &ndim,
                         dev, NULL);
}
