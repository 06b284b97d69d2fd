/* queue.c — command queues: one worker thread each, draining a FIFO of eval
 * requests. emlx_eval_on waits for its request; emlx_eval_async returns at
 * once and reports through a callback on the worker (the NIF turns that into
 * a message, so no BEAM scheduler blocks on compute). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

typedef struct request {
  emlx_array **arrays; /* retained */
  size_t n;
  emlx_eval_callback cb;
  void *user;
  /* set for emlx_eval_on: the waiting caller's slot */
  bool *done;
  int *status;
  char *error;
  struct request *next;
} request;

struct emlx_queue {
  emlx_device dev;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t work;
  pthread_cond_t progress;
  request *head, *tail;
  uint64_t submitted, completed;
  bool stop;
  bool sleeping;           /* the worker waits on `work` (guarded by mu) */
  _Atomic uint64_t posted; /* bumped on every submit, for the spinning worker */
  bool is_default;
  bool failed; /* a request failed since the last synchronize */
  char error[512];
};

static void finish(emlx_queue *q, request *r, int status, const char *msg) {
  for (size_t i = 0; i < r->n; i++)
    emlx_release(r->arrays[i]);
  free(r->arrays);
  if (r->cb)
    r->cb(status, msg, r->user);
  pthread_mutex_lock(&q->mu);
  if (status != 0 && !q->failed) {
    q->failed = true;
    snprintf(q->error, sizeof q->error, "%s", msg);
  }
  if (r->done) {
    *r->status = status;
    snprintf(r->error, 512, "%s", msg);
    *r->done = true;
  }
  q->completed++;
  pthread_cond_broadcast(&q->progress);
  pthread_mutex_unlock(&q->mu);
  free(r);
}

/* How long an idle worker spins before sleeping: a caller that evaluates
 * in a loop (a decode step, the NIF's eval round trip) then finds it awake
 * instead of paying a thread wake-up per request. */
#define QUEUE_SPIN_NS 50000

/* Waits for a request or stop; the caller holds q->mu, as on return. */
static void wait_for_work(emlx_queue *q) {
  while (!q->head && !q->stop) {
    uint64_t seen = atomic_load_explicit(&q->posted, memory_order_acquire);
    pthread_mutex_unlock(&q->mu);
    int64_t until = emlx__now_ns() + QUEUE_SPIN_NS;
    while (atomic_load_explicit(&q->posted, memory_order_acquire) == seen && emlx__now_ns() < until)
      emlx__cpu_relax();
    pthread_mutex_lock(&q->mu);
    if (q->head || q->stop)
      break;
    q->sleeping = true;
    pthread_cond_wait(&q->work, &q->mu);
    q->sleeping = false;
  }
}

static void *queue_main(void *arg) {
  emlx_queue *q = arg;
  pthread_mutex_lock(&q->mu);
  for (;;) {
    wait_for_work(q);
    if (!q->head)
      break; /* stopping, and drained */
    request *r = q->head;
    q->head = r->next;
    if (!q->head)
      q->tail = NULL;
    pthread_mutex_unlock(&q->mu);
    int status = emlx__eval(r->arrays, r->n);
    finish(q, r, status, status == 0 ? "" : emlx_last_error());
    pthread_mutex_lock(&q->mu);
  }
  pthread_mutex_unlock(&q->mu);
  return NULL;
}

static emlx_queue *queue_create(emlx_device dev, bool is_default) {
  if (emlx__check_device(dev, "queue_new") != 0)
    return NULL;
  emlx_queue *q = calloc(1, sizeof *q);
  if (!q)
    return EMLX_FAIL_NULL("queue_new: out of memory");
  q->dev = dev;
  q->is_default = is_default;
  pthread_mutex_init(&q->mu, NULL);
  pthread_cond_init(&q->work, NULL);
  pthread_cond_init(&q->progress, NULL);
  if (pthread_create(&q->thread, NULL, queue_main, q) != 0) {
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->progress);
    free(q);
    return EMLX_FAIL_NULL("queue_new: could not start the worker thread");
  }
  return q;
}

emlx_queue *emlx_queue_new(emlx_device dev) { return queue_create(dev, false); }

void emlx_queue_free(emlx_queue *q) {
  if (!q || q->is_default)
    return;
  pthread_mutex_lock(&q->mu);
  q->stop = true;
  atomic_fetch_add_explicit(&q->posted, 1, memory_order_release);
  pthread_cond_broadcast(&q->work);
  pthread_mutex_unlock(&q->mu);
  pthread_join(q->thread, NULL);
  pthread_mutex_destroy(&q->mu);
  pthread_cond_destroy(&q->work);
  pthread_cond_destroy(&q->progress);
  free(q);
}

static pthread_mutex_t g_default_mu = PTHREAD_MUTEX_INITIALIZER;
static emlx_queue *g_default[EMLX_DEVICE_COUNT];

emlx_queue *emlx_default_queue(emlx_device dev) {
  if (emlx__check_device(dev, "default_queue") != 0)
    return NULL;
  pthread_mutex_lock(&g_default_mu);
  if (!g_default[dev])
    g_default[dev] = queue_create(dev, true);
  emlx_queue *q = g_default[dev];
  pthread_mutex_unlock(&g_default_mu);
  return q;
}

emlx_device emlx_queue_device(const emlx_queue *q) {
  if (!q) {
    emlx__set_error("queue_device: the queue is NULL");
    return EMLX_DEVICE_COUNT;
  }
  return q->dev;
}

/* Validates and queues a request; 0 or -1. */
static int submit(emlx_queue *q, emlx_array *const *arrays, size_t n, emlx_eval_callback cb,
                  void *user, bool *done, int *status, char *error, const char *op) {
  if (!q)
    return EMLX_FAIL("%s: queue is NULL", op);
  if (n > 0 && !arrays)
    return EMLX_FAIL("%s: array list is NULL", op);
  for (size_t i = 0; i < n; i++) {
    if (!arrays[i])
      return EMLX_FAIL("%s: array %zu is NULL", op, i);
    if (arrays[i]->device != q->dev)
      return EMLX_FAIL("%s: array %zu is on %s but the queue is on %s", op, i,
                       emlx_device_name(arrays[i]->device), emlx_device_name(q->dev));
  }
  request *r = calloc(1, sizeof *r);
  emlx_array **copy = n ? malloc(n * sizeof *copy) : NULL;
  if (!r || (n && !copy)) {
    free(r);
    free(copy);
    return EMLX_FAIL("%s: out of memory", op);
  }
  for (size_t i = 0; i < n; i++)
    copy[i] = emlx_retain(arrays[i]);
  *r = (request){copy, n, cb, user, done, status, error, NULL};
  pthread_mutex_lock(&q->mu);
  if (q->tail)
    q->tail->next = r;
  else
    q->head = r;
  q->tail = r;
  q->submitted++;
  atomic_fetch_add_explicit(&q->posted, 1, memory_order_release);
  if (q->sleeping)
    pthread_cond_signal(&q->work);
  pthread_mutex_unlock(&q->mu);
  return 0;
}

int emlx_eval_async(emlx_queue *q, emlx_array *const *arrays, size_t n, emlx_eval_callback cb,
                    void *user_data) {
  return submit(q, arrays, n, cb, user_data, NULL, NULL, NULL, "eval_async");
}

int emlx_eval_on(emlx_queue *q, emlx_array *const *arrays, size_t n) {
  bool done = false;
  int status = 0;
  char error[512] = "";
  if (submit(q, arrays, n, NULL, NULL, &done, &status, error, "eval_on") != 0)
    return -1;
  pthread_mutex_lock(&q->mu);
  while (!done)
    pthread_cond_wait(&q->progress, &q->mu);
  pthread_mutex_unlock(&q->mu);
  if (status != 0)
    emlx__set_error("%s", error);
  return status;
}

bool emlx_queue_idle(emlx_queue *q) {
  if (!q)
    return false;
  pthread_mutex_lock(&q->mu);
  bool idle = q->completed == q->submitted;
  pthread_mutex_unlock(&q->mu);
  return idle;
}

int emlx_queue_synchronize(emlx_queue *q) {
  if (!q)
    return EMLX_FAIL("queue_synchronize: queue is NULL");
  pthread_mutex_lock(&q->mu);
  uint64_t target = q->submitted;
  while (q->completed < target)
    pthread_cond_wait(&q->progress, &q->mu);
  bool failed = q->failed;
  char error[512];
  memcpy(error, q->error, sizeof error);
  q->failed = false;
  pthread_mutex_unlock(&q->mu);
  if (failed) {
    emlx__set_error("%s", error);
    return -1;
  }
  return 0;
}
