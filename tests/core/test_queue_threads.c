/* test_queue_threads.c — command queues and concurrency: queue_new/free/
 * synchronize, eval on a chosen queue, async eval with a completion callback
 * (on the worker thread, in FIFO order, with failures reported), the intra-op
 * pool size, and many threads building and evaluating private graphs over
 * shared lazy nodes at once (results checked against f64 references; a
 * shared node is computed once even when every thread asks for it). Run it
 * under ThreadSanitizer too (cmake -DEMLX_TSAN=ON). */
#include <pthread.h>
#include <stdatomic.h>

#include "test_util.h"

static uint64_t computed(void) { return emlx_eval_stats_get().nodes_computed; }

/* ---- first use from many threads at once ------------------------------------------ */

typedef struct first_use {
  pthread_barrier_t *go;
  emlx_queue *dq;
  int nthreads;
  double value;
} first_use;

static void *first_use_main(void *p) {
  first_use *f = p;
  pthread_barrier_wait(f->go);
  f->dq = emlx_default_queue(EMLX_CPU); /* created on first use: a race */
  f->nthreads = emlx_num_threads();
  int64_t n = 1 << 16;
  emlx_array *a = emlx_arange(0, (double)n, 1, EMLX_INT32, EMLX_CPU);
  emlx_array *s = emlx_sum(a, NULL, 0, false); /* big enough for the pool */
  f->value = -1;
  if (emlx_item_f64(s, &f->value) != 0)
    f->value = -2;
  emlx_release(a), emlx_release(s);
  return NULL;
}

/* Runs before anything else touches the library's lazily created state. */
static void test_first_use_race(void) {
  enum { T = 8 };
  pthread_barrier_t go;
  pthread_barrier_init(&go, NULL, T);
  first_use f[T];
  pthread_t th[T];
  for (int i = 0; i < T; i++) {
    f[i] = (first_use){.go = &go};
    pthread_create(&th[i], NULL, first_use_main, &f[i]);
  }
  for (int i = 0; i < T; i++)
    pthread_join(th[i], NULL);
  bool same = true, values = true;
  for (int i = 0; i < T; i++) {
    same &= f[i].dq != NULL && f[i].dq == f[0].dq && f[i].nthreads == f[0].nthreads;
    values &= f[i].value == 65535.0 * 65536.0 / 2;
  }
  CHECK_MSG(same, "every thread got the same default queue and pool size");
  CHECK_MSG(values, "first evals from %d threads at once are right", T);
  CHECK(emlx_default_queue(EMLX_CPU) == f[0].dq);
  pthread_barrier_destroy(&go);
}

/* ---- single queue behaviour ------------------------------------------------------ */

typedef struct cb_log {
  _Atomic int calls;
  _Atomic int failures;
  _Atomic int order_ok; /* 1 while callbacks arrive in submission order */
  _Atomic int next;     /* the sequence number expected next */
  _Atomic int on_main;  /* callbacks that ran on the submitting thread */
  pthread_t main_thread;
  char last_error[256];
} cb_log;

typedef struct cb_arg {
  cb_log *log;
  int seq;
} cb_arg;

static void on_done(int status, const char *error, void *user) {
  cb_arg *a = user;
  cb_log *l = a->log;
  if (pthread_equal(pthread_self(), l->main_thread))
    l->on_main++;
  if (status != 0) {
    l->failures++;
    snprintf(l->last_error, sizeof l->last_error, "%s", error ? error : "(null)");
  } else if (!error || error[0] != '\0') {
    l->failures += 1000; /* success must come with "" */
  }
  int want = l->next;
  if (a->seq != want)
    l->order_ok = 0;
  l->next = a->seq + 1;
  l->calls++;
}

static emlx_array *vec(int64_t n, double start, double step) {
  double *v = tu_iota(n, start, step);
  emlx_array *a = tu_make1(EMLX_FLOAT32, n, v);
  free(v);
  return a;
}

static void test_queues(void) {
  emlx_queue *dq = emlx_default_queue(EMLX_CPU);
  CHECK_NOT_NULL(dq);
  CHECK(emlx_default_queue(EMLX_CPU) == dq);
  CHECK(emlx_queue_device(dq) == EMLX_CPU);
  emlx_queue *q = emlx_queue_new(EMLX_CPU);
  if (!CHECK_NOT_NULL(q))
    return;
  CHECK(q != dq && emlx_queue_device(q) == EMLX_CPU);

  int64_t n = 1000;
  emlx_array *a = vec(n, -1, 0.002), *b = vec(n, 3, -0.001);
  emlx_array *s = emlx_add(a, b), *m = emlx_multiply(a, b);
  emlx_array *both[2] = {s, m};
  CHECK_OK(emlx_eval_on(q, both, 2));
  CHECK(emlx_is_evaluated(s) && emlx_is_evaluated(m));
  double rs[1000], rm[1000];
  for (int i = 0; i < 1000; i++) {
    double x = (double)(float)(-1 + 0.002 * i), y = (double)(float)(3 - 0.001 * i);
    rs[i] = x + y, rm[i] = x * y;
  }
  tu_check_array(s, EMLX_FLOAT32, &n, 1, rs, 0, "add on a new queue");
  tu_check_array(m, EMLX_FLOAT32, &n, 1, rm, 0, "multiply on a new queue");
  emlx_array *e = emlx_exp(a);
  CHECK_OK(emlx_eval_on(dq, &e, 1));
  CHECK(emlx_is_evaluated(e));
  emlx_release(s), emlx_release(m), emlx_release(e);

  /* errors */
  emlx_array *lz = emlx_add(a, a);
  CHECK_FAILS(emlx_eval_on(NULL, &lz, 1));
  emlx_array *withnull[2] = {lz, NULL};
  CHECK_FAILS(emlx_eval_on(q, withnull, 2));
  CHECK_FAILS(emlx_queue_synchronize(NULL));
  cb_log log = {.order_ok = 1, .main_thread = pthread_self()};
  cb_arg never = {&log, 0};
  CHECK_FAILS(emlx_eval_async(NULL, &lz, 1, on_done, &never));
  CHECK_FAILS(emlx_eval_async(q, withnull, 2, on_done, &never));
  CHECK_OK(emlx_queue_synchronize(q));
  CHECK_MSG(log.calls == 0, "a rejected submission never calls back (%d)", log.calls);
  emlx_release(lz);

  /* async: 100 submissions, arrays released right after submitting, one kept */
  enum { NA = 100 };
  cb_arg args[NA];
  emlx_array *keep = NULL;
  for (int i = 0; i < NA; i++) {
    args[i] = (cb_arg){&log, i};
    emlx_array *k = tu_make(EMLX_FLOAT32, NULL, 0, &(double){(double)i});
    emlx_array *t = emlx_multiply(a, k), *u = emlx_exp(t);
    CHECK_OK(emlx_eval_async(q, &u, 1, on_done, &args[i]));
    if (i == NA - 1)
      keep = emlx_retain(u);
    emlx_release(k), emlx_release(t), emlx_release(u);
  }
  CHECK_OK(emlx_queue_synchronize(q));
  CHECK_EQ_I64(log.calls, NA);
  CHECK_EQ_I64(log.failures, 0);
  CHECK_MSG(log.order_ok, "callbacks run in submission order");
  CHECK_MSG(log.on_main == 0, "callbacks run on the worker, not the caller (%d)", log.on_main);
  CHECK(keep && emlx_is_evaluated(keep));
  double *gk = tu_read(keep);
  if (gk) {
    double ref[1000];
    for (int i = 0; i < 1000; i++)
      ref[i] = exp((double)(float)((double)(float)(-1 + 0.002 * i) * 99.0));
    tu_check_values(gk, ref, n, EMLX_FLOAT32, 2, "async result");
  }
  free(gk);
  emlx_release(keep);
  CHECK_OK(emlx_eval_async(q, &a, 1, NULL, NULL)); /* NULL callback */
  CHECK_OK(emlx_queue_synchronize(q));

  /* an async failure is reported to the callback and to the next synchronize */
  size_t ml = emlx_get_memory_limit();
  emlx_clear_cache();
  emlx_array *bigin = vec(INT64_C(1) << 18, 0, 1e-6); /* held: its buffer cannot be donated */
  emlx_array *big = emlx_exp(bigin);
  emlx_set_memory_limit(emlx_memory_info().active_memory + 4096);
  log = (cb_log){.order_ok = 1, .main_thread = pthread_self()};
  cb_arg fa = {&log, 0};
  CHECK_OK(emlx_eval_async(q, &big, 1, on_done, &fa));
  emlx_clear_error();
  CHECK_FAILS(emlx_queue_synchronize(q));
  emlx_set_memory_limit(ml);
  CHECK_MSG(log.calls == 1 && log.failures == 1 && log.last_error[0] != '\0',
            "failing async eval calls back with -1 and a message (calls %d, failures %d)",
            log.calls, log.failures);
  CHECK_MSG(emlx_queue_synchronize(q) == 0, "the failure is reported once");
  CHECK_OK(emlx_eval_on(q, &big, 1));
  CHECK(emlx_is_evaluated(big));
  emlx_release(big), emlx_release(bigin);

  /* free waits for pending work */
  log = (cb_log){.order_ok = 1, .main_thread = pthread_self()};
  emlx_array *pend[8];
  cb_arg pargs[8];
  for (int i = 0; i < 8; i++) {
    emlx_array *x = vec(INT64_C(1) << 16, (double)i, 1e-5);
    pend[i] = emlx_exp(x);
    emlx_release(x);
    pargs[i] = (cb_arg){&log, i};
    CHECK_OK(emlx_eval_async(q, &pend[i], 1, on_done, &pargs[i]));
  }
  emlx_queue_free(q);
  CHECK_MSG(log.calls == 8, "queue_free waited for its 8 pending requests (%d done)", log.calls);
  for (int i = 0; i < 8; i++) {
    CHECK(emlx_is_evaluated(pend[i]));
    emlx_release(pend[i]);
  }
  emlx_queue_free(NULL);
  emlx_queue_free(dq); /* ignored */
  CHECK(emlx_default_queue(EMLX_CPU) == dq);
  emlx_array *after = emlx_add(a, b);
  CHECK_OK(emlx_eval_on(dq, &after, 1));
  tu_check_array(after, EMLX_FLOAT32, &n, 1, rs, 0, "default queue still works after free");
  emlx_release(after), emlx_release(a), emlx_release(b);
}

static void test_pool(void) {
  int nt = emlx_num_threads();
  CHECK(nt >= 1);
  CHECK(emlx_set_num_threads(0) == -1);
  CHECK(emlx_set_num_threads(-3) == -1);
  CHECK(emlx_num_threads() == nt);
  const char *isa = emlx_simd_level();
  CHECK(isa && (!strcmp(isa, "scalar") || !strcmp(isa, "avx2") || !strcmp(isa, "avx512")));
  /* same values with 1 and with 4 threads */
  int64_t shape[2] = {512, 1024};
  double *v = tu_iota(512 * 1024, -2, 1.0 / 131072);
  emlx_array *x = tu_make(EMLX_FLOAT32, shape, 2, v);
  double *res[2] = {NULL, NULL};
  int counts[2] = {1, 4};
  for (int k = 0; k < 2; k++) {
    CHECK(emlx_set_num_threads(counts[k]) >= 1);
    CHECK(emlx_num_threads() == counts[k]);
    emlx_array *e = emlx_exp(x);
    int ax = 1;
    emlx_array *s = emlx_sum(e, &ax, 1, false);
    res[k] = tu_read(s);
    emlx_release(e), emlx_release(s);
  }
  CHECK_EQ_I64(emlx_set_num_threads(nt), 4);
  if (res[0] && res[1]) {
    double ref[512];
    for (int i = 0; i < 512; i++) {
      ref[i] = 0;
      for (int j = 0; j < 1024; j++)
        ref[i] += exp((double)(float)v[i * 1024 + j]);
    }
    CHECK_MSG(tu_nmse(res[0], ref, 512) < 1e-9, "1 thread: row sums of exp");
    CHECK_MSG(tu_nmse(res[1], ref, 512) < 1e-9, "4 threads: row sums of exp");
  }
  free(res[0]), free(res[1]), free(v);
  emlx_release(x);
}

/* ---- many threads ------------------------------------------------------------------ */

enum { NTHREADS = 8, ITERS = 200, K = 16, ROWS = 16, COLS = 16, NEL = ROWS * COLS };

typedef struct shared_state {
  emlx_array *xs;    /* leaf */
  emlx_array *sh[K]; /* lazy nodes every thread consumes: exp(xs * c_k) */
  double xsv[NEL];
  pthread_barrier_t start;
} shared_state;

typedef struct worker {
  shared_state *st;
  int tid;
  long ok, bad;
  _Atomic int async_done;
  int errors_ok;
} worker;

static void worker_cb(int status, const char *error, void *user) {
  (void)error;
  worker *w = user;
  if (status == 0)
    w->async_done++;
}

static void *worker_main(void *p) {
  worker *w = p;
  shared_state *st = w->st;
  emlx_queue *own = emlx_queue_new(EMLX_CPU);
  emlx_queue *dq = emlx_default_queue(EMLX_CPU);
  /* thread-local errors: this thread's failure does not touch others */
  emlx_clear_error();
  bool bb = true;
  int64_t one = 1;
  emlx_array *bl = emlx_from_blob(&bb, EMLX_BOOL, &one, 1, EMLX_CPU);
  emlx_array *bad = emlx_negate(bl);
  w->errors_ok = bad == NULL && emlx_last_error()[0] != '\0';
  emlx_release(bad), emlx_release(bl);
  pthread_barrier_wait(&st->start);
  int async_sent = 0;
  for (int it = 0; it < ITERS; it++) {
    int k = (it * 7 + w->tid) % K;
    double a = 0.5 + 0.25 * (double)((it + w->tid) % 5);
    double xv[NEL];
    for (int i = 0; i < NEL; i++)
      xv[i] = (double)((i * 37 + it * 11 + w->tid * 5) % 101) / 64.0 - 0.75;
    int64_t shape[2] = {ROWS, COLS};
    emlx_array *x = tu_make(EMLX_FLOAT32, shape, 2, xv);
    emlx_array *av = tu_make(EMLX_FLOAT32, NULL, 0, &a);
    emlx_array *shk = emlx_retain(st->sh[k]);
    emlx_array *t = emlx_multiply(x, av);
    emlx_array *u = emlx_add(t, shk);
    int ax = (it & 1) ? 1 : 0;
    emlx_array *y = emlx_sum(u, &ax, 1, false);
    emlx_release(x), emlx_release(av), emlx_release(shk), emlx_release(t), emlx_release(u);
    int rc = 0;
    switch (it % 4) {
    case 0:
      rc = emlx_eval(&y, 1);
      break;
    case 1:
      rc = emlx_eval_on(dq, &y, 1);
      break;
    case 2:
      rc = emlx_eval_on(own, &y, 1);
      break;
    default:
      rc = emlx_eval_async(own, &y, 1, worker_cb, w);
      async_sent++;
      if (rc == 0 && (it % 8) == 7)
        rc = emlx_queue_synchronize(own);
      break;
    }
    if (rc == 0 && it % 4 == 3 && it % 8 != 7)
      rc = emlx_queue_synchronize(own);
    /* reference: y = sum over ax of (x * a + exp(xs * c_k)) */
    double c = 0.1 * (double)(k + 1);
    double ref[16];
    for (int i = 0; i < 16; i++)
      ref[i] = 0;
    for (int r = 0; r < ROWS; r++)
      for (int cc = 0; cc < COLS; cc++) {
        int i = r * COLS + cc;
        double term = (double)((float)tu_quant(EMLX_FLOAT32, xv[i]) * (float)a) +
                      exp((double)(float)(tu_quant(EMLX_FLOAT32, st->xsv[i]) * (double)(float)c));
        ref[ax == 0 ? cc : r] += term;
      }
    double *got = rc == 0 ? tu_read(y) : NULL;
    if (got && tu_nmse(got, ref, 16) < 1e-10)
      w->ok++;
    else
      w->bad++;
    free(got);
    emlx_release(y);
  }
  if (emlx_queue_synchronize(own) != 0)
    w->bad++;
  if (w->async_done != async_sent)
    w->bad++;
  emlx_queue_free(own);
  return NULL;
}

static void test_many_threads(void) {
  shared_state st;
  for (int i = 0; i < NEL; i++)
    st.xsv[i] = (double)(i % 23) / 16.0 - 0.5;
  int64_t shape[2] = {ROWS, COLS};
  st.xs = tu_make(EMLX_FLOAT32, shape, 2, st.xsv);
  for (int k = 0; k < K; k++) {
    double c = 0.1 * (double)(k + 1);
    emlx_array *cv = tu_make(EMLX_FLOAT32, NULL, 0, &c);
    emlx_array *p = emlx_multiply(st.xs, cv);
    st.sh[k] = emlx_exp(p);
    emlx_release(cv), emlx_release(p);
  }
  pthread_barrier_init(&st.start, NULL, NTHREADS);
  /* the main thread's own error message survives the workers' failures */
  CHECK_NULL_ERR(emlx_transpose(NULL, NULL, 0));
  char mine[256];
  snprintf(mine, sizeof mine, "%s", emlx_last_error());
  worker w[NTHREADS];
  pthread_t th[NTHREADS];
  for (int i = 0; i < NTHREADS; i++) {
    w[i] = (worker){.st = &st, .tid = i};
    CHECK(pthread_create(&th[i], NULL, worker_main, &w[i]) == 0);
  }
  for (int i = 0; i < NTHREADS; i++)
    pthread_join(th[i], NULL);
  long ok = 0, bad = 0;
  int err_ok = 0;
  for (int i = 0; i < NTHREADS; i++)
    ok += w[i].ok, bad += w[i].bad, err_ok += w[i].errors_ok;
  CHECK_MSG(bad == 0 && ok == NTHREADS * ITERS, "%d threads x %d graphs: %ld right, %ld wrong",
            NTHREADS, ITERS, ok, bad);
  CHECK_MSG(err_ok == NTHREADS, "errors are per thread (%d of %d)", err_ok, NTHREADS);
  CHECK_EQ_STR(emlx_last_error(), mine);
  pthread_barrier_destroy(&st.start);
  for (int k = 0; k < K; k++)
    emlx_release(st.sh[k]);
  emlx_release(st.xs);
}

/* Every thread evaluates the same lazy nodes at the same moment: each node
 * runs once. The expected kernel count comes from a structurally identical
 * graph evaluated by one thread. */
typedef struct race {
  emlx_array **nodes;
  int n;
  pthread_barrier_t *go;
  int tid;
  int rc;
} race;

static void *race_main(void *p) {
  race *r = p;
  emlx_array *order[8];
  for (int i = 0; i < r->n; i++)
    order[i] = r->nodes[(i + r->tid) % r->n];
  pthread_barrier_wait(r->go);
  r->rc = (r->tid % 2) ? emlx_eval(order, (size_t)r->n)
                       : emlx_eval_on(emlx_default_queue(EMLX_CPU), order, (size_t)r->n);
  return NULL;
}

static void build_reductions(emlx_array *x, emlx_array **out, int n) {
  for (int i = 0; i < n; i++) {
    double c = 1.0 + i;
    emlx_array *cv = tu_make(EMLX_FLOAT32, NULL, 0, &c);
    emlx_array *m = emlx_multiply(x, cv), *e = emlx_exp(m);
    int ax = i % 2;
    out[i] = emlx_sum(e, &ax, 1, false);
    emlx_release(cv), emlx_release(m), emlx_release(e);
  }
}

static void test_computed_once_concurrently(void) {
  enum { NN = 8, T = 8 };
  int64_t shape[2] = {128, 256};
  double *v = tu_iota(128 * 256, -1, 1.0 / 16384);
  emlx_array *x = tu_make(EMLX_FLOAT32, shape, 2, v);
  emlx_array *ref_nodes[NN], *nodes[NN];
  build_reductions(x, ref_nodes, NN);
  uint64_t c0 = computed();
  CHECK_OK(emlx_eval(ref_nodes, NN));
  uint64_t single = computed() - c0;
  build_reductions(x, nodes, NN);
  pthread_barrier_t go;
  pthread_barrier_init(&go, NULL, T);
  race r[T];
  pthread_t th[T];
  c0 = computed();
  for (int i = 0; i < T; i++) {
    r[i] = (race){nodes, NN, &go, i, -1};
    pthread_create(&th[i], NULL, race_main, &r[i]);
  }
  int fails = 0;
  for (int i = 0; i < T; i++) {
    pthread_join(th[i], NULL);
    fails += r[i].rc != 0;
  }
  uint64_t many = computed() - c0;
  CHECK_EQ_I64(fails, 0);
  CHECK_MSG(many == single,
            "%d threads evaluating the same %d nodes ran %llu kernels (one "
            "thread: %llu)",
            T, NN, (unsigned long long)many, (unsigned long long)single);
  for (int i = 0; i < NN; i++) {
    double *a = tu_read(nodes[i]), *b = tu_read(ref_nodes[i]);
    int64_t n = emlx_size(nodes[i]);
    CHECK_MSG(a && b && tu_nmse(a, b, n) < 1e-12, "node %d value", i);
    free(a), free(b);
    emlx_release(nodes[i]), emlx_release(ref_nodes[i]);
  }
  pthread_barrier_destroy(&go);
  emlx_release(x);
  free(v);
}

int main(void) {
  test_first_use_race();
  test_queues();
  test_pool();
  test_many_threads();
  test_computed_once_concurrently();
  return tu_finish();
}
