/* pool.c — the process-wide thread pool behind emlx__parallel_for.
 *
 * N threads in all (the cores, or EMLX_NUM_THREADS): N - 1 workers plus the
 * calling thread, which always takes part. A parallel_for posts a job whose
 * chunks everyone claims from an atomic counter; several jobs (from several
 * command queues) may be open at once. Workers spin briefly after a job so
 * back-to-back kernels do not pay a wake-up each, then sleep. Small work,
 * nested calls and a one-thread pool run inline. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define MAX_THREADS 256
#define SPIN_NS 50000

typedef struct job {
  emlx_range_fn fn;
  void *ctx;
  int64_t n, chunk, nchunks;
  _Atomic int64_t next;
  _Atomic int64_t done;
  int helpers;     /* workers inside run_chunks; guarded by the pool mutex */
  int max_helpers; /* threads beyond the caller allowed to join */
  struct job *link;
} job;

typedef struct pool {
  pthread_mutex_t mu;
  pthread_cond_t work;
  pthread_cond_t finished;
  pthread_once_t once;
  job *jobs;            /* open jobs, oldest first */
  _Atomic int posted;   /* bumped on every post, for spinning workers */
  _Atomic int nthreads; /* the thread count kernels split for */
  int nworkers;
  pthread_t workers[MAX_THREADS];
} pool;

static pool g_pool = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .work = PTHREAD_COND_INITIALIZER,
    .finished = PTHREAD_COND_INITIALIZER,
    .once = PTHREAD_ONCE_INIT,
};

static _Thread_local bool tls_in_parallel;

static void run_chunks(job *j) {
  for (;;) {
    int64_t c = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
    if (c >= j->nchunks)
      return;
    int64_t begin = c * j->chunk;
    int64_t end = begin + j->chunk < j->n ? begin + j->chunk : j->n;
    j->fn(j->ctx, begin, end);
    atomic_fetch_add_explicit(&j->done, 1, memory_order_acq_rel);
  }
}

/* An open job this worker may join; the caller holds the mutex. */
static job *open_job(void) {
  for (job *j = g_pool.jobs; j; j = j->link)
    if (atomic_load_explicit(&j->next, memory_order_relaxed) < j->nchunks &&
        j->helpers < j->max_helpers)
      return j;
  return NULL;
}

static void *worker_main(void *arg) {
  (void)arg;
  tls_in_parallel = true;
  pthread_mutex_lock(&g_pool.mu);
  for (;;) {
    job *j = open_job();
    if (!j) {
      /* Spin a little before sleeping: the next kernel usually follows. */
      int seen = atomic_load_explicit(&g_pool.posted, memory_order_acquire);
      pthread_mutex_unlock(&g_pool.mu);
      int64_t until = emlx__now_ns() + SPIN_NS;
      while (atomic_load_explicit(&g_pool.posted, memory_order_acquire) == seen &&
             emlx__now_ns() < until)
        emlx__cpu_relax();
      pthread_mutex_lock(&g_pool.mu);
      j = open_job();
      if (!j) {
        pthread_cond_wait(&g_pool.work, &g_pool.mu);
        continue;
      }
    }
    j->helpers++;
    pthread_mutex_unlock(&g_pool.mu);
    run_chunks(j);
    pthread_mutex_lock(&g_pool.mu);
    j->helpers--;
    if (j->helpers == 0)
      pthread_cond_broadcast(&g_pool.finished);
  }
  return NULL;
}

static int env_threads(void) {
  const char *s = getenv("EMLX_NUM_THREADS");
  if (s && *s) {
    long v = strtol(s, NULL, 10);
    if (v >= 1)
      return v > MAX_THREADS ? MAX_THREADS : (int)v;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : (n > MAX_THREADS ? MAX_THREADS : (int)n);
}

/* Starts workers until there are n - 1; the caller holds the mutex. */
static void grow_workers(int n) {
  while (g_pool.nworkers < n - 1) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&g_pool.workers[g_pool.nworkers], &attr, worker_main, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0)
      break; /* run with fewer threads */
    g_pool.nworkers++;
  }
}

static void pool_init(void) {
  int n = env_threads();
  pthread_mutex_lock(&g_pool.mu);
  grow_workers(n);
  atomic_store(&g_pool.nthreads, g_pool.nworkers + 1 < n ? g_pool.nworkers + 1 : n);
  pthread_mutex_unlock(&g_pool.mu);
}

int emlx_num_threads(void) {
  pthread_once(&g_pool.once, pool_init);
  return atomic_load(&g_pool.nthreads);
}

int emlx_set_num_threads(int n) {
  if (n < 1) {
    emlx__set_error("set_num_threads: thread count must be at least 1, got %d", n);
    return -1;
  }
  pthread_once(&g_pool.once, pool_init);
  if (n > MAX_THREADS)
    n = MAX_THREADS;
  pthread_mutex_lock(&g_pool.mu);
  grow_workers(n);
  int old = atomic_load(&g_pool.nthreads);
  atomic_store(&g_pool.nthreads, g_pool.nworkers + 1 < n ? g_pool.nworkers + 1 : n);
  pthread_mutex_unlock(&g_pool.mu);
  return old;
}

void emlx__parallel_for(int64_t n, int64_t grain, emlx_range_fn fn, void *ctx) {
  if (n <= 0)
    return;
  if (grain < 1)
    grain = 1;
  int nt = emlx_num_threads();
  if (nt == 1 || n <= grain || tls_in_parallel) {
    fn(ctx, 0, n);
    return;
  }
  /* A few chunks per thread balance uneven work without much overhead. */
  int64_t target = (int64_t)nt * 4;
  int64_t chunk = (n + target - 1) / target;
  if (chunk < grain)
    chunk = grain;
  job j = {.fn = fn, .ctx = ctx, .n = n, .chunk = chunk, .max_helpers = nt - 1};
  j.nchunks = (n + chunk - 1) / chunk;
  atomic_init(&j.next, 0);
  atomic_init(&j.done, 0);

  pthread_mutex_lock(&g_pool.mu);
  job **tail = &g_pool.jobs;
  while (*tail)
    tail = &(*tail)->link;
  *tail = &j;
  atomic_fetch_add_explicit(&g_pool.posted, 1, memory_order_release);
  pthread_cond_broadcast(&g_pool.work);
  pthread_mutex_unlock(&g_pool.mu);

  tls_in_parallel = true;
  run_chunks(&j);
  tls_in_parallel = false;

  int64_t until = emlx__now_ns() + SPIN_NS;
  while (atomic_load_explicit(&j.done, memory_order_acquire) < j.nchunks && emlx__now_ns() < until)
    emlx__cpu_relax();
  pthread_mutex_lock(&g_pool.mu);
  for (job **p = &g_pool.jobs; *p; p = &(*p)->link)
    if (*p == &j) {
      *p = j.link;
      break;
    }
  while (j.helpers > 0 || atomic_load_explicit(&j.done, memory_order_acquire) < j.nchunks)
    pthread_cond_wait(&g_pool.finished, &g_pool.mu);
  pthread_mutex_unlock(&g_pool.mu);
}

typedef struct run_ctx {
  emlx_thread_fn fn;
  void *ctx;
  int nthreads;
} run_ctx;

static void run_one(void *p, int64_t begin, int64_t end) {
  run_ctx *r = p;
  for (int64_t t = begin; t < end; t++)
    r->fn(r->ctx, (int)t, r->nthreads);
}

void emlx__parallel_run(int nthreads, emlx_thread_fn fn, void *ctx) {
  if (nthreads < 1)
    nthreads = 1;
  run_ctx r = {fn, ctx, nthreads};
  emlx__parallel_for(nthreads, 1, run_one, &r);
}
