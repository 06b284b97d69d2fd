/* graph.c — making graph nodes: one block holds the node, its params, its
 * input list and its output back-pointers, and, for a node of one output
 * (nearly all), that output array too (EMLX__JOINT_NODE_OFFSET). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "objcache.h"

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
  size_t node_bytes = sizeof(emlx_node) + psize + (size_t)(ninputs + noutputs) * sizeof(void *);
  bool joint = noutputs == 1; /* one block for the node and its output */
  size_t block = joint ? EMLX__JOINT_NODE_OFFSET + node_bytes : node_bytes;
  char *mem = emlx__obj_alloc(block);
  if (!mem) return EMLX_FAIL_NULL("%s: out of memory", name);
  emlx_node *n = (emlx_node *)(void *)(joint ? mem + EMLX__JOINT_NODE_OFFSET : mem);
  atomic_init(&n->refcount, noutputs);
  atomic_init(&n->state, EMLX_NODE_PENDING);
  atomic_flag_clear(&n->lock);
  n->prim = prim;
  n->params_size = params_size;
  n->block_bytes = block;
  if (params_size) memcpy(n->params, params, params_size);
  n->inputs = (emlx_array **)(void *)(n->params + psize);
  n->outputs = n->inputs + ninputs;
  n->noutputs = noutputs;

  for (int i = 0; i < noutputs; i++) {
    emlx_array *o = joint ? (emlx_array *)(void *)mem : NULL;
    if (joint ? emlx__array_init(o, dtypes[i], shapes[i], ndims[i], dev) != 0
              : !(o = emlx__array_alloc(dtypes[i], shapes[i], ndims[i], dev))) {
      for (int j = 0; j < i; j++) {
        emlx__array_fini(n->outputs[j]);
        emlx__obj_free(n->outputs[j], sizeof(emlx_array));
      }
      emlx__obj_free(mem, block);
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
