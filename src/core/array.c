/* array.c — array handles: creation, reference counting, metadata, and the
 * helpers kernels use to give outputs their data.
 *
 * Releasing is iterative: a dying array may free its producer node, whose
 * inputs may die in turn; they go onto a per-thread work list rather than the
 * C stack, so a chain of a million nodes is freed in constant stack. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "objcache.h"
#include "params_control.h"

/* ---- creation ---------------------------------------------------------------- */

bool emlx__shape_size(const int64_t *shape, int ndim, int64_t *size_out) {
  if (ndim < 0 || ndim > EMLX_MAX_NDIM) {
    emlx__set_error("rank %d is out of range [0, %d]", ndim, EMLX_MAX_NDIM);
    return false;
  }
  if (ndim > 0 && !shape) {
    emlx__set_error("shape is NULL for rank %d", ndim);
    return false;
  }
  bool zero = false;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) {
      emlx__set_error("dimension %d has negative size %lld", i, (long long)shape[i]);
      return false;
    }
    zero |= shape[i] == 0;
  }
  int64_t nonzero = 1; /* the product of the non-zero dimensions */
  for (int i = 0; i < ndim; i++) {
    if (shape[i] == 0)
      continue;
    if (nonzero > EMLX__MAX_ELEMENTS / shape[i]) {
      if (zero)
        emlx__set_error("shape: the non-zero dimensions multiply past 2^60 (an empty shape is "
                        "held to the rule of a full one)");
      else
        emlx__set_error("shape has more than 2^60 elements");
      return false;
    }
    nonzero *= shape[i];
  }
  *size_out = zero ? 0 : nonzero;
  return true;
}

int emlx__array_init(emlx_array *a, emlx_dtype dtype, const int64_t *shape, int ndim,
                     emlx_device dev) {
  int64_t size;
  if (!emlx_dtype_is_valid(dtype)) return EMLX_FAIL("invalid dtype %d", (int)dtype);
  if (!emlx__shape_size(shape, ndim, &size)) return -1;
  if (ndim > EMLX_INLINE_DIMS) {
    a->shape = malloc(2 * (size_t)ndim * sizeof(int64_t));
    if (!a->shape) return EMLX_FAIL("out of memory");
    a->strides = a->shape + ndim;
  } else {
    a->shape = a->inline_shape;
    a->strides = a->inline_strides;
  }
  if (ndim > 0) memcpy(a->shape, shape, (size_t)ndim * sizeof(int64_t));
  atomic_init(&a->refcount, 1);
  atomic_init(&a->status, EMLX_STATUS_LAZY);
  a->dtype = dtype;
  a->device = dev;
  a->ndim = ndim;
  a->size = size;
  return 0;
}

void emlx__array_fini(emlx_array *a) {
  if (a->shape != a->inline_shape) free(a->shape);
}

emlx_array *emlx__array_alloc(emlx_dtype dtype, const int64_t *shape, int ndim, emlx_device dev) {
  emlx_array *a = emlx__obj_alloc(sizeof *a);
  if (!a) return EMLX_FAIL_NULL("out of memory");
  if (emlx__array_init(a, dtype, shape, ndim, dev) != 0) {
    emlx__obj_free(a, sizeof *a);
    return NULL;
  }
  return a;
}

int64_t emlx__row_major_strides(const int64_t *shape, int ndim, int64_t *strides) {
  int64_t n = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    strides[i] = n;
    n *= shape[i];
  }
  return n;
}

void emlx__array_update_flags(emlx_array *a) {
  uint32_t flags = EMLX_FLAG_ROW_CONTIG | EMLX_FLAG_COL_CONTIG;
  if (a->size > 1) {
    int64_t expect = 1;
    for (int i = a->ndim - 1; i >= 0; i--) {
      if (a->shape[i] == 1) continue;
      if (a->strides[i] != expect) {
        flags &= ~(uint32_t)EMLX_FLAG_ROW_CONTIG;
        break;
      }
      expect *= a->shape[i];
    }
    expect = 1;
    for (int i = 0; i < a->ndim; i++) {
      if (a->shape[i] == 1) continue;
      if (a->strides[i] != expect) {
        flags &= ~(uint32_t)EMLX_FLAG_COL_CONTIG;
        break;
      }
      expect *= a->shape[i];
    }
  }
  a->flags = flags;
}

int emlx__array_alloc_data(emlx_array *out) {
  size_t nbytes = (size_t)out->size * emlx_dtype_size(out->dtype);
  emlx_buffer *b = emlx__buffer_alloc(nbytes, out->device);
  if (!b) return -1;
  emlx_buffer *old = out->buffer;
  out->buffer = b;
  emlx__buffer_release(old);
  out->offset = 0;
  emlx__row_major_strides(out->shape, out->ndim, out->strides);
  out->flags = EMLX_FLAG_ROW_CONTIG | (out->ndim <= 1 ? EMLX_FLAG_COL_CONTIG : 0);
  emlx__array_update_flags(out);
  return 0;
}

int emlx__array_alloc_data_donate(emlx_array *out, emlx_array *in) {
  return emlx__array_alloc_data_donate_refs(out, in, 1);
}

int emlx__array_alloc_data_donate_refs(emlx_array *out, emlx_array *in, long refs) {
  size_t nbytes = (size_t)out->size * emlx_dtype_size(out->dtype);
  if (in && in != out && emlx__ready(in) && in->buffer && !in->buffer->external &&
      in->size == out->size && emlx_dtype_size(in->dtype) == emlx_dtype_size(out->dtype) &&
      in->offset == 0 && (in->flags & EMLX_FLAG_ROW_CONTIG) && in->buffer->capacity >= nbytes &&
      refs > 0 && atomic_load_explicit(&in->refcount, memory_order_acquire) == refs &&
      atomic_load_explicit(&in->buffer->refcount, memory_order_acquire) == 1) {
    emlx__array_set_view(out, in, 0, NULL);
    return 0;
  }
  return emlx__array_alloc_data(out);
}

void emlx__array_set_view(emlx_array *out, const emlx_array *in, int64_t offset,
                          const int64_t *strides) {
  emlx_buffer *old = out->buffer;
  out->buffer = emlx__buffer_retain(in->buffer);
  emlx__buffer_release(old);
  out->offset = offset;
  if (strides) memcpy(out->strides, strides, (size_t)out->ndim * sizeof(int64_t));
  else emlx__row_major_strides(out->shape, out->ndim, out->strides);
  emlx__array_update_flags(out);
}

/* ---- reference counting ------------------------------------------------------ */

emlx_array *emlx_retain(emlx_array *a) {
  if (a) atomic_fetch_add_explicit(&a->refcount, 1, memory_order_relaxed);
  return a;
}

/* Arrays waiting to be destroyed. Short lists live in the inline slots; a
 * long chain spills to the heap, which is freed once the list drains (so a
 * thread that exits leaks nothing). */
#define DEAD_INLINE 64
typedef struct dead_list {
  emlx_array **items;
  size_t n, cap;
  bool draining;
  emlx_array *inline_items[DEAD_INLINE];
} dead_list;

static _Thread_local dead_list tls_dead;

static void destroy_one(emlx_array *a);

static void push_dead(emlx_array *a) {
  if (!tls_dead.items) {
    tls_dead.items = tls_dead.inline_items;
    tls_dead.cap = DEAD_INLINE;
  }
  if (tls_dead.n == tls_dead.cap) {
    size_t cap = tls_dead.cap * 2;
    bool heap = tls_dead.items != tls_dead.inline_items;
    emlx_array **items = realloc(heap ? tls_dead.items : NULL, cap * sizeof *items);
    if (!items) {
      destroy_one(a); /* out of memory: fall back to recursion */
      return;
    }
    if (!heap) memcpy(items, tls_dead.inline_items, sizeof tls_dead.inline_items);
    tls_dead.items = items;
    tls_dead.cap = cap;
  }
  tls_dead.items[tls_dead.n++] = a;
}

/* Holding a's only reference means no thread can take another: a
 * reference is only ever copied from a held one, except the weak
 * back-pointers of a multi-output node's outputs (eval's run_node), so for
 * every other array the final release need not be an atomic decrement. */
static inline bool sole_owner(emlx_array *a) {
  return atomic_load_explicit(&a->refcount, memory_order_acquire) == 1 &&
         (!a->node || a->node->noutputs == 1);
}

static inline bool drop_ref(emlx_array *a) {
  return sole_owner(a) || atomic_fetch_sub_explicit(&a->refcount, 1, memory_order_acq_rel) == 1;
}

/* Drops the node's inputs, queueing those that die, and its params' own
 * references. */
static void node_drop_all(emlx_node *n) {
  for (int i = 0; i < n->ninputs; i++) {
    emlx_array *in = n->inputs[i];
    if (drop_ref(in)) push_dead(in);
  }
  emlx__params_release(n->prim, n->params); /* control flow's programs */
}

static void destroy_one(emlx_array *a) {
  emlx_node *n = a->node;
  size_t bytes = sizeof *a;
  if (n && emlx__node_is_joint(a, n)) {
    /* The node's one reference is a's: both go now, in one block. */
    bytes = n->block_bytes;
    node_drop_all(n);
  } else if (n) {
    if (n->noutputs > 1) {
      emlx__spin_lock(&n->lock);
      n->outputs[a->output_index] = NULL;
      emlx__spin_unlock(&n->lock);
    }
    if (atomic_fetch_sub_explicit(&n->refcount, 1, memory_order_acq_rel) == 1) {
      node_drop_all(n);
      emlx__obj_free(n, n->block_bytes);
    }
  }
  emlx__buffer_release(a->buffer);
  emlx__array_fini(a);
  emlx__obj_free(a, bytes);
}

void emlx_release(emlx_array *a) {
  if (!a || !drop_ref(a)) return;
  push_dead(a);
  if (tls_dead.draining) return;
  tls_dead.draining = true;
  while (tls_dead.n > 0) destroy_one(tls_dead.items[--tls_dead.n]);
  tls_dead.draining = false;
  if (tls_dead.items != tls_dead.inline_items) {
    free(tls_dead.items);
    tls_dead.items = tls_dead.inline_items;
    tls_dead.cap = DEAD_INLINE;
  }
}

void emlx__node_drop_inputs(emlx_node *n) {
  emlx__spin_lock(&n->lock);
  int count = n->ninputs;
  n->ninputs = 0;
  emlx__spin_unlock(&n->lock);
  for (int i = 0; i < count; i++) emlx_release(n->inputs[i]);
}

/* ---- metadata ------------------------------------------------------------------ */

int emlx_ndim(const emlx_array *a) { return a ? a->ndim : -1; }
const int64_t *emlx_shape(const emlx_array *a) { return a ? a->shape : NULL; }
int64_t emlx_size(const emlx_array *a) { return a ? a->size : -1; }
emlx_dtype emlx_array_dtype(const emlx_array *a) { return a ? a->dtype : EMLX_DTYPE_COUNT; }
emlx_device emlx_array_device(const emlx_array *a) { return a ? a->device : EMLX_DEVICE_COUNT; }
bool emlx_is_evaluated(const emlx_array *a) { return a && emlx__ready(a); }

size_t emlx_nbytes(const emlx_array *a) {
  return a ? (size_t)a->size * emlx_dtype_size(a->dtype) : 0;
}

int64_t emlx_dim(const emlx_array *a, int axis) {
  if (!a) {
    emlx__set_error("dim: array is NULL");
    return -1;
  }
  int ax = axis < 0 ? axis + a->ndim : axis;
  if (ax < 0 || ax >= a->ndim) {
    emlx__set_error("dim: axis %d is out of range for rank %d", axis, a->ndim);
    return -1;
  }
  return a->shape[ax];
}

const int64_t *emlx_strides(const emlx_array *a) {
  if (!a || !emlx__ready(a)) return EMLX_FAIL_NULL("strides: array is NULL or not evaluated");
  return a->strides;
}

int64_t emlx_offset(const emlx_array *a) {
  if (!a || !emlx__ready(a)) return EMLX_FAIL("offset: array is NULL or not evaluated");
  return a->offset;
}

const void *emlx_data(const emlx_array *a) {
  if (!a || !emlx__ready(a)) return EMLX_FAIL_NULL("data: array is NULL or not evaluated");
  return emlx__data(a);
}

bool emlx_shares_buffer(const emlx_array *a, const emlx_array *b) {
  return a && b && emlx__ready(a) && emlx__ready(b) && a->buffer == b->buffer;
}

/* ---- devices ------------------------------------------------------------------- */

const emlx_backend *emlx__backend(emlx_device dev) {
  return dev == EMLX_CPU ? &emlx_cpu_backend : NULL;
}

bool emlx_device_available(emlx_device dev) { return emlx__backend(dev) != NULL; }

emlx_device emlx_default_device(void) {
  return emlx_device_available(EMLX_GPU) ? EMLX_GPU : EMLX_CPU;
}

const char *emlx_device_name(emlx_device dev) {
  switch (dev) {
  case EMLX_CPU: return "cpu";
  case EMLX_GPU: return "gpu";
  default: return "invalid";
  }
}

int emlx__check_device(emlx_device dev, const char *op) {
  if ((unsigned)dev >= EMLX_DEVICE_COUNT) return EMLX_FAIL("%s: invalid device %d", op, (int)dev);
  if (!emlx_device_available(dev))
    return EMLX_FAIL("%s: device %s is not available (this build has no GPU backend or no GPU "
                     "is present)",
                     op, emlx_device_name(dev));
  return 0;
}

/* ---- host memory in and out ---------------------------------------------------- */

emlx_array *emlx_from_blob(const void *data, emlx_dtype dtype, const int64_t *shape, int ndim,
                           emlx_device dev) {
  if (emlx__check_device(dev, "from_blob") != 0) return NULL;
  emlx_array *a = emlx__array_alloc(dtype, shape, ndim, dev);
  if (!a) return NULL;
  if (a->size > 0 && !data) {
    emlx_release(a);
    return EMLX_FAIL_NULL("from_blob: data is NULL for a non-empty array");
  }
  if (emlx__array_alloc_data(a) != 0) {
    emlx_release(a);
    return NULL;
  }
  if (a->size > 0) memcpy(a->buffer->ptr, data, emlx_nbytes(a));
  atomic_store_explicit(&a->status, EMLX_STATUS_READY, memory_order_release);
  return a;
}

/* Copies a READY array of any strides into dst row-major. */
void emlx__copy_to_host(const emlx_array *a, void *dst) {
  size_t item = emlx_dtype_size(a->dtype);
  if (a->size == 0) return;
  if (a->flags & EMLX_FLAG_ROW_CONTIG) {
    memcpy(dst, emlx__data(a), (size_t)a->size * item);
    return;
  }
  int64_t idx[EMLX_MAX_NDIM] = {0};
  const char *base = emlx__data(a);
  char *out = dst;
  int nd = a->ndim;
  int64_t inner = a->shape[nd - 1], inner_stride = a->strides[nd - 1] * (int64_t)item;
  for (int64_t done = 0; done < a->size; done += inner) {
    int64_t off = 0;
    for (int d = 0; d < nd - 1; d++) off += idx[d] * a->strides[d];
    const char *src = base + off * (int64_t)item;
    for (int64_t i = 0; i < inner; i++, out += item) memcpy(out, src + i * inner_stride, item);
    for (int d = nd - 2; d >= 0; d--) {
      if (++idx[d] < a->shape[d]) break;
      idx[d] = 0;
    }
  }
}

int emlx_to_blob(emlx_array *a, void *out, size_t nbytes) {
  if (!a) return EMLX_FAIL("to_blob: array is NULL");
  if (nbytes != emlx_nbytes(a))
    return EMLX_FAIL("to_blob: buffer holds %zu bytes but the array needs %zu", nbytes,
                     emlx_nbytes(a));
  if (nbytes > 0 && !out) return EMLX_FAIL("to_blob: output pointer is NULL");
  if (emlx_eval(&a, 1) != 0) return -1;
  emlx__copy_to_host(a, out);
  return 0;
}

static int item_prepare(emlx_array *a, const char *op) {
  if (!a) return EMLX_FAIL("%s: array is NULL", op);
  if (a->size != 1)
    return EMLX_FAIL("%s: array has %lld elements, expected 1", op, (long long)a->size);
  return emlx_eval(&a, 1);
}

int emlx_item_f64(emlx_array *a, double *out) {
  if (item_prepare(a, "item") != 0) return -1;
  if (!out) return EMLX_FAIL("item: output pointer is NULL");
  *out = emlx__load_f64(emlx__data(a), a->dtype);
  return 0;
}

int emlx_item_i64(emlx_array *a, int64_t *out) {
  if (item_prepare(a, "item") != 0) return -1;
  if (!out) return EMLX_FAIL("item: output pointer is NULL");
  *out = emlx__load_i64(emlx__data(a), a->dtype);
  return 0;
}
