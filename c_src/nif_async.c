/* nif_async.c — command queues and the rows that compute.
 *
 * A computing row never evaluates on the scheduler. It retains the array,
 * submits it to a command queue with emlx_eval_async and returns :ok at
 * once. When the queue's worker thread has evaluated it, the completion
 * callback (still on the worker) builds the result in a message env — the
 * value of an item, a binary, strides, ... — and sends {ref, {:ok, value}}
 * or {ref, {:error, message}} to the caller, which waits in `receive`.
 * No scheduler blocks on compute, so no dirty scheduler is needed. When the
 * array is already evaluated and the reply costs O(1) (eval, item, strides,
 * and to_blob / tensor_data_ptr of contiguous data), the reply is built and
 * returned by the NIF call itself, skipping the thread round trip.
 *
 * Small work is evaluated inline, on the calling scheduler: when the pending
 * graph is within the inline limits (emlx_eval_within: at most
 * inline_max_nodes lazy nodes and inline_max_work element-operations, by
 * default 64 and 32768, which keeps the call well under a millisecond: the
 * dearest such work, erf_inv of 16K f64 elements, takes ~0.3 ms on a busy
 * 2-core machine; bench/nif_overhead.exs, edge_* cases), the
 * NIF evaluates it and returns {:ok, value} at once. That may skip the queue
 * only where no ordering is at stake: on a device's default queue (shared by
 * every process, each of which waits for its own results), or on a queue
 * created by the user when it is idle (nothing submitted earlier is still
 * pending, so FIFO order with earlier work holds trivially). Anything larger,
 * or a graph another thread is computing, goes through the queue as before.
 * Errors of an inline evaluation (the memory limit included) come back as
 * {:error, message}, the same message the worker would have sent. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "emlx_nif.h"

/* ---- queues ------------------------------------------------------------------- */

/* Freeing a queue waits for its pending work and joins its thread, which a
 * scheduler (running the resource destructor) must not do: a detached thread
 * does it instead. */
static void *reap_queue(void *q) {
  emlx_queue_free(q);
  return NULL;
}

void nif_queue_dtor(ErlNifEnv *env, void *obj);
void nif_queue_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  nif_queue *q = obj;
  atomic_fetch_sub_explicit(&nif_count.queues, 1, memory_order_relaxed);
  if (!q->queue || q->is_default)
    return;
  pthread_attr_t attr;
  pthread_t th;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  if (pthread_create(&th, &attr, reap_queue, q->queue) != 0)
    emlx_queue_free(q->queue);
  pthread_attr_destroy(&attr);
}

static ERL_NIF_TERM make_queue(nif_call *c, emlx_queue *queue, emlx_device dev, bool is_default) {
  if (!queue)
    return nif_engine_error(c);
  nif_queue *q = enif_alloc_resource(nif_res.queue, sizeof *q);
  if (!q) {
    if (!is_default)
      emlx_queue_free(queue);
    return nif_error(c, "out of memory for the queue resource");
  }
  q->queue = queue;
  q->device = dev;
  q->is_default = is_default;
  atomic_fetch_add_explicit(&nif_count.queues, 1, memory_order_relaxed);
  ERL_NIF_TERM term = enif_make_resource(c->env, q);
  enif_release_resource(q);
  return nif_ok(c, term);
}

NIF_HANDLER(h_command_queue_new) {
  return make_queue(c, emlx_queue_new(a[0].device), a[0].device, false);
}

NIF_HANDLER(h_command_queue_default) {
  return make_queue(c, emlx_default_queue(a[0].device), a[0].device, true);
}

/* ---- inline limits ----------------------------------------------------------------- */

static _Atomic int64_t g_inline_max_nodes = NIF_INLINE_MAX_NODES;
static _Atomic int64_t g_inline_max_work = NIF_INLINE_MAX_WORK;

void nif_inline_limits(int64_t *max_nodes, int64_t *max_work) {
  *max_nodes = atomic_load_explicit(&g_inline_max_nodes, memory_order_relaxed);
  *max_work = atomic_load_explicit(&g_inline_max_work, memory_order_relaxed);
}

/* {:ok, {max_nodes, max_work}} */
NIF_HANDLER(h_inline_eval_limits) {
  (void)a;
  ERL_NIF_TERM nodes = enif_make_int64(c->env, atomic_load(&g_inline_max_nodes));
  ERL_NIF_TERM work = enif_make_int64(c->env, atomic_load(&g_inline_max_work));
  return nif_ok(c, enif_make_tuple2(c->env, nodes, work));
}

/* Sets both; {:ok, {previous_max_nodes, previous_max_work}}. */
NIF_HANDLER(h_set_inline_eval_limits) {
  int64_t nodes = atomic_exchange(&g_inline_max_nodes, a[0].i);
  int64_t work = atomic_exchange(&g_inline_max_work, a[1].i);
  return nif_ok(
      c, enif_make_tuple2(c->env, enif_make_int64(c->env, nodes), enif_make_int64(c->env, work)));
}

/* ---- jobs ------------------------------------------------------------------------ */

typedef struct nif_job nif_job;
/* Builds the result of a finished job in j->env; false with j->err set on failure. */
typedef bool (*nif_finish_fn)(nif_job *j, ERL_NIF_TERM *out);

struct nif_job {
  ErlNifPid pid;
  ErlNifEnv *env; /* the message env, owned by the job */
  ERL_NIF_TERM ref;
  const char *name;
  nif_finish_fn finish;
  emlx_array *array;  /* retained; NULL for a barrier */
  nif_tensor *tensor; /* kept, when the result may replace the tensor's array */
  int64_t limit;      /* to_blob: elements, or -1 */
  unsigned perms;     /* tensor_to_shm */
  emlx_device target; /* to_device */
  char err[512];
};

static void job_fail(nif_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void job_fail(nif_job *j, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(j->err, sizeof j->err, fmt, ap);
  va_end(ap);
}

static void job_free(nif_job *j) {
  emlx_release(j->array);
  if (j->tensor)
    enif_release_resource(j->tensor);
  enif_free_env(j->env);
  enif_free(j);
  atomic_fetch_sub_explicit(&nif_count.jobs, 1, memory_order_relaxed);
}

/* "<name>: <msg>" unless msg already starts with "<name>:". */
static ERL_NIF_TERM named_error(ErlNifEnv *env, const char *name, const char *msg) {
  char buf[1024];
  size_t len = strlen(name);
  if (strncmp(msg, name, len) == 0 && msg[len] == ':')
    snprintf(buf, sizeof buf, "%s", msg);
  else
    snprintf(buf, sizeof buf, "%s: %s", name, msg);
  return enif_make_tuple2(env, nif_atom.error, nif_make_string(env, buf));
}

/* Builds the reply and sends it, on a queue's worker thread. Frees the job. */
static void job_done(int status, const char *error, void *user) {
  nif_job *j = user;
  ERL_NIF_TERM result, value;
  if (status != 0) {
    result = named_error(j->env, j->name, error && *error ? error : "evaluation failed");
  } else if (j->finish(j, &value)) {
    result = enif_make_tuple2(j->env, nif_atom.ok, value);
  } else {
    result = named_error(j->env, j->name, j->err);
  }
  enif_send(NULL, &j->pid, j->env, enif_make_tuple2(j->env, j->ref, result));
  job_free(j);
}

/* When the reply may be built on the calling scheduler, once the array is
 * evaluated (inline or earlier). */
typedef enum {
  REPLY_ON_WORKER,         /* always through the queue */
  REPLY_INLINE_READY,      /* building the reply is O(1) */
  REPLY_INLINE_CONTIGUOUS, /* O(1) if row-contiguous, else a copy of the elements */
} reply_mode;

/* May evaluating a (lazy) run on the calling scheduler instead of q? */
static bool may_eval_inline(const nif_queue *q, emlx_array *a) {
  int64_t max_nodes = atomic_load_explicit(&g_inline_max_nodes, memory_order_relaxed);
  int64_t max_work = atomic_load_explicit(&g_inline_max_work, memory_order_relaxed);
  if (max_nodes <= 0)
    return false;
  /* A user's queue keeps its FIFO order: skip it only when nothing is pending there. */
  if (!q->is_default && !emlx_queue_idle(q->queue))
    return false;
  emlx_array *const list[1] = {a};
  return emlx_eval_within(list, 1, max_nodes, max_work, NULL);
}

/* May the reply for the evaluated a be built on the calling scheduler? */
static bool may_reply_inline(emlx_array *a, reply_mode mode) {
  if (mode == REPLY_INLINE_READY || nif_is_row_contiguous(a))
    return true;
  /* a strided array: the reply copies its elements, which is small work only when few */
  return atomic_load_explicit(&g_inline_max_nodes, memory_order_relaxed) > 0 &&
         emlx_size(a) <= atomic_load_explicit(&g_inline_max_work, memory_order_relaxed);
}

/* The reply for the evaluated t, built in the caller's env and returned:
 * {:ok, value} or {:error, message}. */
static ERL_NIF_TERM reply_inline(nif_call *c, const nif_arg *t, nif_finish_fn finish,
                                 const nif_job *extra) {
  nif_job j;
  j.env = c->env;
  j.name = c->row->name;
  j.array = t->array; /* borrowed: the decoded argument holds it for the call */
  j.tensor = extra ? extra->tensor : NULL;
  j.limit = extra ? extra->limit : 0;
  j.perms = extra ? extra->perms : 0;
  j.target = extra ? extra->target : EMLX_CPU;
  j.err[0] = '\0';
  ERL_NIF_TERM value;
  if (!finish(&j, &value))
    return named_error(c->env, j.name, j.err);
  return enif_make_tuple2(c->env, nif_atom.ok, value);
}

/* Evaluates t (or a barrier when t is NULL) for the caller. Small or
 * finished work is done here and its result returned: {:ok, value}, or
 * {:error, ...}. Otherwise a job is submitted to q, the reply goes to the
 * caller tagged with ref, and the return is :ok (or {:error, ...} when it
 * could not be submitted). */
static ERL_NIF_TERM submit(nif_call *c, const nif_arg *t, nif_queue *q, ERL_NIF_TERM ref,
                           nif_finish_fn finish, const nif_job *extra, reply_mode mode) {
  if (t && t->device != q->device)
    return nif_error(c, "the tensor is on %s but the command queue is on %s",
                     emlx_device_name(t->device), emlx_device_name(q->device));
  if (t && mode != REPLY_ON_WORKER) {
    bool ready = emlx_is_evaluated(t->array);
    if (!ready && may_eval_inline(q, t->array)) {
      emlx_array *const list[1] = {t->array};
      if (emlx_eval(list, 1) != 0)
        return nif_engine_error(c);
      ready = true;
    }
    if (ready && may_reply_inline(t->array, mode))
      return reply_inline(c, t, finish, extra);
  }
  nif_job *j = enif_alloc(sizeof *j);
  if (!j)
    return nif_error(c, "out of memory for the job");
  if (extra)
    *j = *extra;
  else
    memset(j, 0, sizeof *j);
  j->env = enif_alloc_env();
  if (!j->env || !enif_self(c->env, &j->pid)) {
    if (j->env)
      enif_free_env(j->env);
    enif_free(j);
    return nif_error(c, "cannot reply: not called from a process");
  }
  j->ref = enif_make_copy(j->env, ref);
  j->name = c->row->name;
  j->finish = finish;
  j->array = t ? emlx_retain(t->array) : NULL;
  if (j->tensor)
    enif_keep_resource(j->tensor);
  atomic_fetch_add_explicit(&nif_count.jobs, 1, memory_order_relaxed);
  emlx_array *const arrays[1] = {j->array};
  if (emlx_eval_async(q->queue, arrays, j->array ? 1 : 0, job_done, j) != 0) {
    ERL_NIF_TERM e = nif_engine_error(c);
    job_free(j);
    return e;
  }
  return nif_atom.ok;
}

/* ---- finishers (on the worker thread, or inline on the caller's) --------------------- */

static bool finish_ok(nif_job *j, ERL_NIF_TERM *out) {
  (void)j;
  *out = nif_atom.ok;
  return true;
}

static bool finish_item(nif_job *j, ERL_NIF_TERM *out) {
  const void *p = emlx_data(j->array);
  ErlNifEnv *env = j->env;
  if (!p) {
    job_fail(j, "the tensor has no data after evaluation");
    return false;
  }
  switch (emlx_array_dtype(j->array)) {
  case EMLX_BOOL:
    *out = enif_make_int(env, *(const uint8_t *)p != 0);
    break;
  case EMLX_UINT8:
    *out = enif_make_uint(env, *(const uint8_t *)p);
    break;
  case EMLX_UINT16:
    *out = enif_make_uint(env, *(const uint16_t *)p);
    break;
  case EMLX_UINT32:
    *out = enif_make_uint(env, *(const uint32_t *)p);
    break;
  case EMLX_UINT64:
    *out = enif_make_uint64(env, *(const uint64_t *)p);
    break;
  case EMLX_INT8:
    *out = enif_make_int(env, *(const int8_t *)p);
    break;
  case EMLX_INT16:
    *out = enif_make_int(env, *(const int16_t *)p);
    break;
  case EMLX_INT32:
    *out = enif_make_int(env, *(const int32_t *)p);
    break;
  case EMLX_INT64:
    *out = enif_make_int64(env, *(const int64_t *)p);
    break;
  case EMLX_FLOAT16:
    *out = nif_make_number(env, (double)emlx_f16_to_f32(*(const uint16_t *)p));
    break;
  case EMLX_BFLOAT16:
    *out = nif_make_number(env, (double)emlx_bf16_to_f32(*(const uint16_t *)p));
    break;
  case EMLX_FLOAT32:
    *out = nif_make_number(env, (double)*(const float *)p);
    break;
  case EMLX_FLOAT64:
    *out = nif_make_number(env, *(const double *)p);
    break;
  case EMLX_COMPLEX64: {
    const float *z = p;
    *out = enif_make_tuple3(env, nif_atom.complex, nif_make_number(env, (double)z[0]),
                            nif_make_number(env, (double)z[1]));
    break;
  }
  case EMLX_COMPLEX128: {
    const double *z = p;
    *out = enif_make_tuple3(env, nif_atom.complex, nif_make_number(env, z[0]),
                            nif_make_number(env, z[1]));
    break;
  }
  default:
    job_fail(j, "unknown dtype");
    return false;
  }
  return true;
}

/* Binaries up to this size are copied; larger ones alias the array's buffer. */
#define NIF_COPY_BYTES 256

static bool finish_to_blob(nif_job *j, ERL_NIF_TERM *out) {
  emlx_array *a = j->array;
  size_t itemsize = emlx_dtype_size(emlx_array_dtype(a));
  size_t total = emlx_nbytes(a);
  size_t bytes = total;
  if (j->limit >= 0 && (uint64_t)j->limit < (uint64_t)emlx_size(a))
    bytes = (size_t)j->limit * itemsize;
  if (nif_is_row_contiguous(a)) {
    const void *data = emlx_data(a);
    if (bytes <= NIF_COPY_BYTES || !data) {
      unsigned char *dst = enif_make_new_binary(j->env, bytes, out);
      if (!dst) {
        job_fail(j, "out of memory for a %lu-byte binary", (unsigned long)bytes);
        return false;
      }
      if (bytes)
        memcpy(dst, data, bytes);
      return true;
    }
    /* Zero copy: the binary keeps the array (hence its buffer) alive. */
    emlx_array **holder = enif_alloc_resource(nif_res.blob, sizeof *holder);
    if (!holder) {
      job_fail(j, "out of memory for the binary holder");
      return false;
    }
    *holder = emlx_retain(a);
    atomic_fetch_add_explicit(&nif_count.blobs, 1, memory_order_relaxed);
    *out = enif_make_resource_binary(j->env, holder, data, bytes);
    enif_release_resource(holder);
    return true;
  }
  ErlNifBinary bin;
  if (!enif_alloc_binary(total, &bin)) {
    job_fail(j, "out of memory for a %lu-byte binary", (unsigned long)total);
    return false;
  }
  if (emlx_to_blob(a, bin.data, total) != 0) {
    enif_release_binary(&bin);
    job_fail(j, "%s", emlx_last_error());
    return false;
  }
  if (bytes < total && !enif_realloc_binary(&bin, bytes)) {
    enif_release_binary(&bin);
    job_fail(j, "out of memory");
    return false;
  }
  *out = enif_make_binary(j->env, &bin);
  return true;
}

static bool finish_strides(nif_job *j, ERL_NIF_TERM *out) {
  const int64_t *strides = emlx_strides(j->array);
  int nd = emlx_ndim(j->array);
  if (!strides) {
    job_fail(j, "%s", emlx_last_error());
    return false;
  }
  ERL_NIF_TERM items[EMLX_MAX_NDIM];
  for (int i = 0; i < nd; i++)
    items[i] = enif_make_int64(j->env, strides[i]);
  *out = enif_make_tuple_from_array(j->env, items, (unsigned)nd);
  return true;
}

/* A row-major array with the values of a (a itself when it already is one). */
static emlx_array *contiguous(emlx_array *a) {
  if (nif_is_row_contiguous(a))
    return emlx_retain(a);
  emlx_array *copy = emlx_copy(a);
  if (!copy)
    return NULL;
  emlx_array *const list[1] = {copy};
  if (emlx_eval(list, 1) != 0) {
    emlx_release(copy);
    return NULL;
  }
  return copy;
}

static bool finish_data_ptr(nif_job *j, ERL_NIF_TERM *out) {
  emlx_array *dense = contiguous(j->array);
  if (!dense) {
    job_fail(j, "%s", emlx_last_error());
    return false;
  }
  /* The tensor now holds the dense copy (same values), which the pointer
   * refers to; it stays valid while the tensor is alive. */
  if (dense != j->array)
    nif_tensor_swap(j->tensor, emlx_retain(dense));
  uintptr_t address = (uintptr_t)emlx_data(dense);
  size_t size = emlx_nbytes(dense);
  /* Recorded for Nx.from_pointer/5 (nif_pointers.c), which takes back only
   * addresses a live tensor gave out. */
  if (!nif_local_export(j->tensor, dense, address, size)) {
    emlx_release(dense);
    job_fail(j, "out of memory recording the pointer");
    return false;
  }
  *out = enif_make_tuple2(j->env, enif_make_uint64(j->env, (uint64_t)address),
                          enif_make_uint64(j->env, (uint64_t)size));
  emlx_release(dense);
  return true;
}

bool nif_shm_write(emlx_array *a, unsigned perms, char *name, size_t name_len, char *err,
                   size_t err_len); /* nif_host.c */

static bool finish_to_shm(nif_job *j, ERL_NIF_TERM *out) {
  char name[64];
  if (!nif_shm_write(j->array, j->perms, name, sizeof name, j->err, sizeof j->err))
    return false;
  *out = enif_make_tuple2(j->env, nif_make_string(j->env, name),
                          enif_make_uint64(j->env, (uint64_t)emlx_nbytes(j->array)));
  return true;
}

static bool finish_to_device(nif_job *j, ERL_NIF_TERM *out) {
  emlx_array *a = j->array, *moved;
  if (emlx_array_device(a) == j->target) {
    moved = emlx_retain(a);
  } else {
    size_t bytes = emlx_nbytes(a);
    void *tmp = enif_alloc(bytes ? bytes : 1);
    if (!tmp) {
      job_fail(j, "out of memory for a %lu-byte staging copy", (unsigned long)bytes);
      return false;
    }
    moved = emlx_to_blob(a, tmp, bytes) == 0
                ? emlx_from_blob(tmp, emlx_array_dtype(a), emlx_shape(a), emlx_ndim(a), j->target)
                : NULL;
    enif_free(tmp);
  }
  if (!moved) {
    job_fail(j, "%s", emlx_last_error());
    return false;
  }
  int ok;
  *out = nif_make_tensor(j->env, moved, &ok);
  if (!ok)
    job_fail(j, "out of memory for the tensor resource");
  return ok;
}

/* ---- the computing rows ----------------------------------------------------------------- */

NIF_HANDLER(h_eval) {
  return submit(c, &a[0], a[1].queue, a[2].term, finish_ok, NULL, REPLY_INLINE_READY);
}

NIF_HANDLER(h_item) {
  int64_t size = emlx_size(a[0].array);
  if (size != 1)
    return nif_error(c, "the tensor has %ld elements; item needs exactly one", (long)size);
  return submit(c, &a[0], a[1].queue, a[2].term, finish_item, NULL, REPLY_INLINE_READY);
}

NIF_HANDLER(h_to_blob) {
  nif_job extra = {0};
  extra.limit = c->argc == 4 ? a[1].i : -1;
  int q = c->argc == 4 ? 2 : 1;
  return submit(c, &a[0], a[q].queue, a[q + 1].term, finish_to_blob, &extra,
                REPLY_INLINE_CONTIGUOUS);
}

NIF_HANDLER(h_strides) {
  return submit(c, &a[0], a[1].queue, a[2].term, finish_strides, NULL, REPLY_INLINE_READY);
}

NIF_HANDLER(h_tensor_data_ptr) {
  nif_job extra = {0};
  extra.tensor = a[0].tensor;
  return submit(c, &a[0], a[1].queue, a[2].term, finish_data_ptr, &extra, REPLY_INLINE_CONTIGUOUS);
}

NIF_HANDLER(h_tensor_to_shm) {
  if (a[1].i > 07777)
    return nif_error(c, "permissions %ld are not a Unix mode", (long)a[1].i);
  nif_job extra = {0};
  extra.perms = (unsigned)a[1].i;
  return submit(c, &a[0], a[2].queue, a[3].term, finish_to_shm, &extra, REPLY_ON_WORKER);
}

NIF_HANDLER(h_to_device) {
  if (!emlx_device_available(a[1].device))
    return nif_error(c, "device %s is not available", emlx_device_name(a[1].device));
  nif_job extra = {0};
  extra.target = a[1].device;
  return submit(c, &a[0], a[2].queue, a[3].term, finish_to_device, &extra, REPLY_ON_WORKER);
}

/* A barrier: the reply comes once everything submitted before it has run. */
NIF_HANDLER(h_command_queue_synchronize) {
  return submit(c, NULL, a[0].queue, a[1].term, finish_ok, NULL, REPLY_ON_WORKER);
}

int nif_async_load(ErlNifEnv *env) {
  (void)env;
  return 0;
}
