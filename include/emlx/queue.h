/* emlx/queue.h — command queues: a worker thread with a FIFO of eval
 * requests, and the process-wide thread pool for intra-op parallelism.
 *
 * Building graphs is cheap and happens on the caller's thread; evaluation can
 * be routed to a queue. A node is computed once even when several threads or
 * queues ask for it. */
#ifndef EMLX_QUEUE_H
#define EMLX_QUEUE_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct emlx_queue emlx_queue;

/* Called on the queue's worker thread when an asynchronous eval finishes.
 * status is 0 or -1; error is the message ("" on success), valid only during
 * the call. */
typedef void (*emlx_eval_callback)(int status, const char *error, void *user_data);

EMLX_API emlx_queue *emlx_queue_new(emlx_device dev);
/* Waits for the queue's pending requests, then stops its worker. Default
 * queues cannot be freed (the call is ignored). NULL-safe. */
EMLX_API void emlx_queue_free(emlx_queue *q);
/* Waits until every request submitted so far has finished. Returns 0, or -1
 * if one of them failed since the last synchronize (its message is set). */
EMLX_API int emlx_queue_synchronize(emlx_queue *q);
/* The device's default queue (created on first use); NULL if unavailable. */
EMLX_API emlx_queue *emlx_default_queue(emlx_device dev);
/* The queue's device; for NULL, EMLX_DEVICE_COUNT (no device) with the
 * message "queue_device: the queue is NULL" in emlx_last_error(). */
EMLX_API emlx_device emlx_queue_device(const emlx_queue *q);

/* Evaluates on q's worker and waits. Returns 0 or -1. */
EMLX_API int emlx_eval_on(emlx_queue *q, emlx_array *const *arrays, size_t n);
/* Submits and returns at once; the arrays are retained until done and cb (may
 * be NULL) runs on the worker. Returns 0 if submitted, -1 otherwise (then cb
 * is never called). */
EMLX_API int emlx_eval_async(emlx_queue *q, emlx_array *const *arrays, size_t n,
                             emlx_eval_callback cb, void *user_data);

/* True when every request submitted to q so far has finished: nothing is
 * queued or running on its worker. False for NULL. A snapshot: another
 * thread may submit right after. */
EMLX_API bool emlx_queue_idle(emlx_queue *q);

/* ---- sizing an evaluation before choosing where to run it --------------- */

/* What emlx_eval_within counted. */
typedef struct emlx_work_estimate {
  int64_t nodes; /* lazy nodes reached, each once */
  int64_t work;  /* their element-operations (see emlx_eval_within) */
} emlx_work_estimate;

/* True when evaluating arrays would run at most max_nodes lazy nodes and at
 * most max_work element-operations, so a caller may run it on a thread that
 * must not block long (the NIF evaluates such graphs on the calling BEAM
 * scheduler instead of a queue's worker).
 *
 * A node's work is the elements it reads and writes (inputs + outputs),
 * plus, for primitives whose cost grows faster than that, a bound on the
 * extra: matmul outputs x the inner dimension, conv outputs x the kernel's
 * elements, window ops outputs x inputs, linear algebra 8 x inputs x n (the
 * largest trailing dimension), fft and sort x log2 of their elements.
 * The walk is iterative, visits each node once and stops as soon as a bound
 * is passed, so its cost is O(max_nodes) however big the graph. A node
 * another thread is computing counts as over the bounds (waiting for it
 * could take any time). est (may be NULL) receives the counts: exact when
 * the result is true, lower bounds otherwise. NULL arrays: false. */
EMLX_API bool emlx_eval_within(emlx_array *const *arrays, size_t n, int64_t max_nodes,
                               int64_t max_work, emlx_work_estimate *est);

/* Threads of the intra-op pool (cores, or EMLX_NUM_THREADS). Setting takes
 * effect for later kernels; returns the previous count, or -1 if n < 1. */
EMLX_API int emlx_num_threads(void);
EMLX_API int emlx_set_num_threads(int n);

/* The SIMD level chosen at start-up: "scalar", "avx2" or "avx512". The
 * environment variable EMLX_ISA (scalar|avx2|avx512) caps it. */
EMLX_API const char *emlx_simd_level(void);

/* Counters of the scheduler, for tests and diagnostics. */
typedef struct emlx_eval_stats {
  uint64_t nodes_computed; /* kernels run since start */
} emlx_eval_stats;
EMLX_API emlx_eval_stats emlx_eval_stats_get(void);

#ifdef __cplusplus
}
#endif
#endif
