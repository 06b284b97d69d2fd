/* internal.h — the engine's private contract between core, ops and backends.
 *
 * An emlx_array is either a leaf (data present) or the output of a node
 * (primitive + params + inputs). Evaluation runs the node's kernel, which
 * fills the output arrays' data (a buffer plus strides and an element
 * offset); the node then drops its inputs so the graph frees itself. */
#ifndef EMLX_INTERNAL_H
#define EMLX_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "emlx.h"
#include "prims.h"

#define EMLX_INLINE_DIMS 6

/* ---- errors --------------------------------------------------------------- */
/* Sets the thread-local message (printf-style) and returns NULL / -1 through
 * the helpers below. */
void emlx__set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define EMLX_FAIL_NULL(...) (emlx__set_error(__VA_ARGS__), (void *)0)
#define EMLX_FAIL(...) (emlx__set_error(__VA_ARGS__), -1)

/* ---- buffers (allocator) -------------------------------------------------- */
typedef struct emlx_buffer {
  void *ptr;       /* 64-byte aligned */
  size_t capacity; /* bytes usable (the size class) */
  _Atomic long refcount;
  emlx_device device;
  struct emlx_buffer *prev; /* links in the allocator's cache lists */
  struct emlx_buffer *next;
  struct emlx_buffer *lru_prev;
  struct emlx_buffer *lru_next;
  uint32_t bucket;
  uint8_t mapped;   /* came from mmap (huge-page candidate) */
  uint8_t external; /* memory not owned by the allocator */
} emlx_buffer;

/* NULL with an error when the memory limit would be exceeded. nbytes 0 gives
 * a valid buffer of capacity >= 64. */
emlx_buffer *emlx__buffer_alloc(size_t nbytes, emlx_device dev);
emlx_buffer *emlx__buffer_retain(emlx_buffer *b);
void emlx__buffer_release(emlx_buffer *b);

/* ---- arrays --------------------------------------------------------------- */
enum { EMLX_STATUS_LAZY = 0, EMLX_STATUS_READY = 1 };

enum {
  EMLX_FLAG_ROW_CONTIG = 1u << 0, /* strides are row-major dense */
  EMLX_FLAG_COL_CONTIG = 1u << 1, /* strides are column-major dense */
};

typedef struct emlx_node emlx_node;

struct emlx_array {
  _Atomic long refcount;
  _Atomic int status; /* EMLX_STATUS_*; READY is published with release order */
  emlx_dtype dtype;
  emlx_device device;
  int ndim;
  int64_t size;        /* prod(shape) */
  int64_t *shape;      /* points at inline_shape when ndim <= EMLX_INLINE_DIMS */
  int64_t *strides;    /* elements; valid once READY */
  int64_t offset;      /* elements from buffer start; valid once READY */
  uint32_t flags;      /* EMLX_FLAG_*; valid once READY */
  emlx_buffer *buffer; /* valid once READY (NULL only while lazy) */
  emlx_node *node;     /* producer; NULL for leaves; kept until the array dies */
  int output_index;    /* which output of node this array is */
  int64_t inline_shape[EMLX_INLINE_DIMS];
  int64_t inline_strides[EMLX_INLINE_DIMS];
};

/* A new array of refcount 1 with shape copied, no data and no node. */
emlx_array *emlx__array_alloc(emlx_dtype dtype, const int64_t *shape, int ndim, emlx_device dev);
/* The same in zeroed memory at a (0, or -1 with an error and nothing held);
 * emlx__array_fini frees what init took besides a itself. */
int emlx__array_init(emlx_array *a, emlx_dtype dtype, const int64_t *shape, int ndim,
                     emlx_device dev);
void emlx__array_fini(emlx_array *a);
/* Pointer to element 0 (buffer + offset) of a READY array. */
static inline void *emlx__data(const emlx_array *a) {
  return (char *)a->buffer->ptr + a->offset * (int64_t)emlx_dtype_size(a->dtype);
}
static inline bool emlx__ready(const emlx_array *a) {
  return atomic_load_explicit(&((emlx_array *)a)->status, memory_order_acquire) ==
         EMLX_STATUS_READY;
}
/* Recomputes flags from shape and strides. */
void emlx__array_update_flags(emlx_array *a);
/* Kernels: give output `out` a fresh row-major buffer (NULL/-1 on failure). */
int emlx__array_alloc_data(emlx_array *out);
/* Kernels: like alloc_data, but reuse the buffer of `in` when `in` is held
 * only by the node being evaluated, is row-contiguous, starts at offset 0 and
 * its buffer is large enough (donation); in may be NULL. Returns 0 or -1. */
int emlx__array_alloc_data_donate(emlx_array *out, emlx_array *in);
/* The same with `refs` references to `in` allowed (the caller's own: e.g. a
 * fused region whose ops read `in` several times). */
int emlx__array_alloc_data_donate_refs(emlx_array *out, emlx_array *in, long refs);
/* Kernels: make `out` a view of `in`'s buffer with the given element offset
 * and strides (strides has out->ndim entries). */
void emlx__array_set_view(emlx_array *out, const emlx_array *in, int64_t offset,
                          const int64_t *strides);
/* The one shape rule of every constructor: a rank in [0, EMLX_MAX_NDIM],
 * no negative dimension, and the product of the non-zero dimensions at most
 * EMLX__MAX_ELEMENTS (2^60), empty shapes included, so that strides, sizes
 * and offsets computed from any shape stay far from int64 overflow. Sets
 * *size (0 for an empty shape) or returns false with an error. */
#define EMLX__MAX_ELEMENTS ((int64_t)1 << 60)
bool emlx__shape_size(const int64_t *shape, int ndim, int64_t *size);
/* Row-major strides for a shape; returns the element count. */
int64_t emlx__row_major_strides(const int64_t *shape, int ndim, int64_t *strides);

/* Copies a READY array of any strides into dst, row-major. */
void emlx__copy_to_host(const emlx_array *a, void *dst);
/* 0, or -1 with an error naming op when dev is invalid or unavailable. */
int emlx__check_device(emlx_device dev, const char *op);

/* ---- scalar conversions (reference semantics of astype) ---------------------- */
double emlx__load_f64(const void *p, emlx_dtype dtype);  /* complex: real part */
int64_t emlx__load_i64(const void *p, emlx_dtype dtype); /* floats truncate, saturate */
/* Stores v converted to dtype with astype's rules (complex: imaginary 0). */
void emlx__store_f64(void *p, emlx_dtype dtype, double v);
void emlx__store_i64(void *p, emlx_dtype dtype, int64_t v);
/* f64 to f16/bf16 with a single correct rounding (nearest even). */
uint16_t emlx__f64_to_f16(double v);
uint16_t emlx__f64_to_bf16(double v);

/* ---- nodes ---------------------------------------------------------------- */
enum { EMLX_NODE_PENDING = 0, EMLX_NODE_RUNNING = 1, EMLX_NODE_DONE = 2 };

struct emlx_node {
  _Atomic long refcount; /* one per live output array */
  _Atomic int state;     /* EMLX_NODE_* */
  atomic_flag lock;      /* guards inputs and outputs while the node is shared */
  emlx_prim prim;
  int ninputs;
  int noutputs;
  emlx_array **inputs;  /* strong references; dropped once DONE */
  emlx_array **outputs; /* weak back-pointers; NULL once that output died */
  size_t params_size;
  size_t block_bytes; /* the node's block (emlx__obj_alloc), its output's too when joint */
  _Alignas(16) unsigned char params[]; /* plain data (see prims.h), compared bytewise */
};

/* A single-output node shares one block with its output array: the array
 * first, the node at this offset. Both die together (the node's only
 * reference is that array's). */
#define EMLX__JOINT_NODE_OFFSET ((sizeof(emlx_array) + 15) & ~(size_t)15)
static inline bool emlx__node_is_joint(const emlx_array *a, const emlx_node *n) {
  return (const char *)n == (const char *)a + EMLX__JOINT_NODE_OFFSET;
}

/* Makes a node and its outputs. Each output i gets dtypes[i] and shapes[i]
 * (ndims[i] dims). Inputs are retained. params (params_size bytes of plain
 * data, padding zeroed by the caller) are copied. Returns the first output
 * (the caller owns all outputs: out_all receives them when noutputs > 1). */
emlx_array *emlx__node_make(emlx_prim prim, emlx_array *const *inputs, int ninputs,
                            const void *params, size_t params_size, int noutputs,
                            const emlx_dtype *dtypes, const int64_t *const *shapes,
                            const int *ndims, emlx_device dev, emlx_array **out_all);
/* Single-output shorthand. */
emlx_array *emlx__op(emlx_prim prim, emlx_array *const *inputs, int ninputs, const void *params,
                     size_t params_size, emlx_dtype dtype, const int64_t *shape, int ndim);
/* Releases the node's inputs (once it is DONE). */
void emlx__node_drop_inputs(emlx_node *n);
static inline const void *emlx__params(const emlx_node *n) { return n->params; }

/* ---- kernels and backends ------------------------------------------------- */
/* A kernel reads READY inputs and fills every non-NULL output (a multi-output
 * node may see NULL for outputs that were released before evaluation). It
 * returns 0, or -1 after emlx__set_error(). */
typedef int (*emlx_kernel_fn)(const emlx_node *node, emlx_array *const *inputs,
                              emlx_array *const *outputs);

struct emlx_fuse_desc;

typedef struct emlx_backend {
  const char *name;
  emlx_kernel_fn kernels[EMLX_PRIM_COUNT];
  /* Fusion (src/core/fuse.h); all NULL when the device does not fuse.
   * fuse_supports: prim with these dtypes can run inside a region;
   * fuse_compile: a plan for the description (NULL with an error);
   * fuse_run: runs a plan (see emlx__fuse_plan_run); fuse_free frees one;
   * fuse_reduce: runs the reduction node `reduce` (a single-input node) on
   * the plan's single output, produced on demand and never stored (`like`:
   * that output's array, for its shape and dtype; `out`: the reduction's
   * output): 0 done, 1 not possible here (nothing changed), -1 error. */
  bool (*fuse_supports)(emlx_prim prim, const void *params, size_t params_size,
                        const emlx_dtype *in, int nin, emlx_dtype out);
  void *(*fuse_compile)(const struct emlx_fuse_desc *desc);
  int (*fuse_run)(const void *plan, emlx_array *const *inputs, emlx_array *const *outputs,
                  const long *donor_refs);
  void (*fuse_free)(void *plan);
  int (*fuse_reduce)(const void *plan, emlx_array *const *inputs, const emlx_node *reduce,
                     const emlx_array *like, emlx_array *out);
} emlx_backend;

const emlx_backend *emlx__backend(emlx_device dev); /* NULL if unavailable */
extern const emlx_backend emlx_cpu_backend;

/* ---- thread pool ---------------------------------------------------------- */
/* Scratch of the calling thread for a kernel: a 64-byte aligned block of at
 * least `bytes`, held until emlx__scratch_put (blocks nest LIFO, up to 8 per
 * thread, and are kept for reuse until the thread exits). Kernels take their
 * tiles here rather than on the stack, which may be small (a BEAM scheduler,
 * a 128 KiB pthread). NULL with an error when out of memory. */
void *emlx__scratch_get(size_t bytes);
void emlx__scratch_put(void *block); /* NULL-safe; the block last got */

/* fn(ctx, begin, end) over [0, n) in chunks of at least `grain`; runs inline
 * when the work is small, the pool has one thread, or the caller is a pool
 * worker. Returns after every chunk has run. */
typedef void (*emlx_range_fn)(void *ctx, int64_t begin, int64_t end);
void emlx__parallel_for(int64_t n, int64_t grain, emlx_range_fn fn, void *ctx);
/* Same, but calls fn(ctx, thread_index, thread_count) once per thread. */
typedef void (*emlx_thread_fn)(void *ctx, int tid, int nthreads);
void emlx__parallel_run(int nthreads, emlx_thread_fn fn, void *ctx);

static inline void emlx__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Monotonic clock in nanoseconds, for the bounded spins of the pool and the
 * queues. */
static inline int64_t emlx__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void emlx__spin_lock(atomic_flag *f) {
  while (atomic_flag_test_and_set_explicit(f, memory_order_acquire))
    emlx__cpu_relax();
}
static inline void emlx__spin_unlock(atomic_flag *f) {
  atomic_flag_clear_explicit(f, memory_order_release);
}

/* ---- small shared helpers -------------------------------------------------- */
/* A well-mixed hash of a pointer, for open-addressing tables keyed by it. */
static inline size_t emlx__ptr_hash(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}
/* Equal ranks and dims. */
static inline bool emlx__same_dims(int nda, const int64_t *a, int ndb, const int64_t *b) {
  if (nda != ndb) return false;
  for (int i = 0; i < nda; i++)
    if (a[i] != b[i]) return false;
  return true;
}
static inline bool emlx__same_shape(const emlx_array *a, const emlx_array *b) {
  return emlx__same_dims(a->ndim, a->shape, b->ndim, b->shape);
}

/* ---- eval ----------------------------------------------------------------- */
int emlx__eval(emlx_array *const *arrays, size_t n);
/* The lazy arrays reachable from roots, inputs before consumers, each node
 * once, each held by one reference for the caller, in *order (a malloc'd
 * array of *norder; NULL when empty). A node another thread is computing is
 * not expanded. 0, or -1 out of memory (nothing held). */
int emlx__walk_lazy(emlx_array *const *roots, size_t n, emlx_array ***order, size_t *norder);
/* The estimated element-operations of one kernel of prim (eval_estimate.c;
 * emlx_eval_within's and a program's measure): reading `in` input elements
 * and writing `out` output elements, plus its arithmetic beyond that, from
 * the widest input's last dimension, input 0's last dimension and input 1's
 * size (matmul: out * in0_last inner products; conv: out * in1_size; ...). */
int64_t emlx__kernel_work(emlx_prim prim, const void *params, int64_t in, int64_t widest,
                          int64_t in0_last, int64_t in1_size, int64_t out);

#endif
