/* test_eval_estimate.c — emlx_eval_within (the bounded work estimate the NIF
 * uses to evaluate small graphs on the calling scheduler) and
 * emlx_queue_idle. The expected counts are worked out by hand from the
 * documented rule: per lazy node, the elements it reads plus the elements it
 * writes, plus the documented extra of superlinear primitives; each node
 * once, however often it is shared. */
#include <sched.h>
#include <stdatomic.h>

#include "test_util.h"

static emlx_array *leaf(int64_t n, double v) {
  return emlx_full((int64_t[]){n}, 1, v, EMLX_FLOAT32, EMLX_CPU);
}

static void evaluated(emlx_array *a) { CHECK_OK(emlx_eval(&a, 1)); }

static void test_ready_and_single_node(void) {
  emlx_array *x = leaf(16, 1.0), *y = leaf(16, 2.0);
  evaluated(x), evaluated(y);
  emlx_work_estimate e = {-1, -1};
  CHECK_MSG(emlx_eval_within(&x, 1, 0, 0, &e), "an evaluated array is within any bounds");
  CHECK_EQ_I64(e.nodes, 0);
  CHECK_EQ_I64(e.work, 0);

  emlx_array *s = emlx_add(x, y); /* reads 16 + 16, writes 16 */
  CHECK(emlx_eval_within(&s, 1, 1, 48, &e));
  CHECK_EQ_I64(e.nodes, 1);
  CHECK_EQ_I64(e.work, 48);
  CHECK_MSG(!emlx_eval_within(&s, 1, 0, 1000, NULL), "one node is over max_nodes 0");
  CHECK_MSG(!emlx_eval_within(&s, 1, 10, 47, NULL), "48 element-ops are over max_work 47");
  evaluated(s);
  CHECK_MSG(emlx_eval_within(&s, 1, 0, 0, &e) && e.nodes == 0, "nothing left once evaluated");
  emlx_release(x), emlx_release(y), emlx_release(s);
}

static void test_shared_nodes_count_once(void) {
  emlx_array *x = leaf(16, 1.0);
  evaluated(x);
  emlx_array *y = emlx_add(x, x);      /* 48 */
  emlx_array *z = emlx_multiply(y, y); /* 48 */
  emlx_array *w = emlx_add(z, y);      /* 48; y is reached twice */
  emlx_work_estimate e;
  CHECK(emlx_eval_within(&w, 1, 64, 1 << 20, &e));
  CHECK_EQ_I64(e.nodes, 3);
  CHECK_EQ_I64(e.work, 144);
  emlx_array *both[2] = {w, z}; /* z is inside w's graph */
  CHECK(emlx_eval_within(both, 2, 64, 1 << 20, &e));
  CHECK_EQ_I64(e.nodes, 3);
  /* Doubling chains: without de-duplication the walk would be 2^200 long.
   * 200 nodes also pass the small set of seen nodes and spill to the map. */
  emlx_array *d = emlx_retain(x);
  for (int i = 0; i < 200; i++) {
    emlx_array *next = emlx_add(d, d);
    emlx_release(d);
    d = next;
  }
  CHECK(emlx_eval_within(&d, 1, 1000, 1 << 20, &e));
  CHECK_EQ_I64(e.nodes, 200);
  CHECK_EQ_I64(e.work, 200 * 48);
  emlx_release(x), emlx_release(y), emlx_release(z), emlx_release(w), emlx_release(d);
}

static void test_walk_stops_early(void) {
  emlx_array *x = leaf(4, 1.0);
  evaluated(x);
  emlx_array *c = emlx_retain(x);
  for (int i = 0; i < 100000; i++) {
    emlx_array *next = emlx_add(c, x);
    emlx_release(c);
    c = next;
  }
  emlx_work_estimate e;
  CHECK(!emlx_eval_within(&c, 1, 64, INT64_MAX, &e));
  CHECK_MSG(e.nodes == 65, "the walk stops at the first node over max_nodes (saw %lld)",
            (long long)e.nodes);
  CHECK(!emlx_eval_within(&c, 1, INT64_MAX, 120, &e));
  CHECK_MSG(e.nodes == 11 && e.work == 132, "and at the first node over max_work (%lld, %lld)",
            (long long)e.nodes, (long long)e.work);
  emlx_release(c), emlx_release(x);
}

static void test_superlinear_work(void) {
  emlx_array *a = emlx_full((int64_t[]){8, 32}, 2, 1.0, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *b = emlx_full((int64_t[]){32, 4}, 2, 1.0, EMLX_FLOAT32, EMLX_CPU);
  evaluated(a), evaluated(b);
  emlx_array *m = emlx_matmul(a, b);
  emlx_work_estimate e;
  CHECK(emlx_eval_within(&m, 1, 64, INT64_MAX, &e));
  /* reads 256 + 128, writes 32, and 32 outputs x 32 multiply-adds */
  CHECK_EQ_I64(e.work, 256 + 128 + 32 + 32 * 32);
  /* a 1-element result of a long dot product is not small */
  emlx_array *u = emlx_full((int64_t[]){1, 100000}, 2, 1.0, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *v = emlx_full((int64_t[]){100000, 1}, 2, 1.0, EMLX_FLOAT32, EMLX_CPU);
  evaluated(u), evaluated(v);
  emlx_array *dot = emlx_matmul(u, v);
  CHECK(!emlx_eval_within(&dot, 1, 64, 65536, &e));
  CHECK_EQ_I64(e.work, 200000 + 1 + 100000);
  emlx_release(a), emlx_release(b), emlx_release(m);
  emlx_release(u), emlx_release(v), emlx_release(dot);
}

static void test_bad_arguments(void) {
  emlx_array *none[1] = {NULL};
  CHECK_MSG(!emlx_eval_within(none, 1, 64, 65536, NULL), "a NULL array is never within");
  CHECK_MSG(!emlx_eval_within(NULL, 1, 64, 65536, NULL), "a NULL list is never within");
  CHECK_MSG(emlx_eval_within(NULL, 0, 0, 0, NULL), "no arrays: nothing to do");
}

/* ---- queue idleness ------------------------------------------------------------- */

typedef struct gate {
  _Atomic int entered;
  _Atomic int open;
} gate;

static void wait_at_gate(int status, const char *error, void *user) {
  (void)status, (void)error;
  gate *g = user;
  atomic_store(&g->entered, 1);
  while (!atomic_load(&g->open))
    sched_yield();
}

static void test_queue_idle(void) {
  CHECK(!emlx_queue_idle(NULL));
  emlx_queue *q = emlx_queue_new(EMLX_CPU);
  CHECK_NOT_NULL(q);
  CHECK_MSG(emlx_queue_idle(q), "a new queue is idle");
  emlx_array *x = leaf(16, 1.0);
  emlx_array *y = emlx_add(x, x);
  gate g = {0, 0};
  CHECK_OK(emlx_eval_async(q, &y, 1, wait_at_gate, &g));
  CHECK_MSG(!emlx_queue_idle(q), "not idle while a request is pending");
  while (!atomic_load(&g.entered))
    sched_yield();
  CHECK_MSG(!emlx_queue_idle(q), "not idle while its callback runs");
  atomic_store(&g.open, 1);
  CHECK_OK(emlx_queue_synchronize(q));
  CHECK_MSG(emlx_queue_idle(q), "idle again once everything finished");
  emlx_queue *dq = emlx_default_queue(EMLX_CPU);
  CHECK_OK(emlx_queue_synchronize(dq));
  CHECK(emlx_queue_idle(dq));
  emlx_release(x), emlx_release(y);
  emlx_queue_free(q);
}

int main(void) {
  test_ready_and_single_node();
  test_shared_nodes_count_once();
  test_walk_stops_early();
  test_superlinear_work();
  test_bad_arguments();
  test_queue_idle();
  return tu_finish();
}
