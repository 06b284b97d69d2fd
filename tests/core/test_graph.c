/* test_graph.c — the lazy graph: chains of a million dependent ops evaluate
 * and are released without overflowing the stack; a node shared by many
 * consumers is computed once (emlx_eval_stats_get().nodes_computed deltas);
 * an evaluated node drops its inputs (visible in active_memory); evaluating
 * what is already evaluated computes nothing; empty and bad eval lists; a
 * failed eval leaves every array intact and can be retried. */
#include <time.h>

#include "test_util.h"

static uint64_t computed(void) { return emlx_eval_stats_get().nodes_computed; }
static size_t active(void) { return emlx_memory_info().active_memory; }
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum { CHAIN = 1000000 };

/* cur = x; a million times cur = add(cur, one) (or alternately a sum over a
 * size-1 axis, which no elementwise fusion can absorb). */
static emlx_array *build_chain(emlx_array *x, emlx_array *one, bool mixed) {
  emlx_array *cur = emlx_retain(x);
  int ax = 0;
  for (int i = 0; i < CHAIN && cur; i++) {
    emlx_array *nxt = (mixed && (i & 1)) ? emlx_sum(cur, &ax, 1, true) : emlx_add(cur, one);
    emlx_release(cur);
    cur = nxt;
  }
  return cur;
}

static void test_long_chains(void) {
  size_t base = active();
  float zero = 0.0f, onev = 1.0f;
  int64_t n1 = 1;
  emlx_array *x = emlx_from_blob(&zero, EMLX_FLOAT32, &n1, 1, EMLX_CPU);
  emlx_array *one = emlx_from_blob(&onev, EMLX_FLOAT32, &n1, 1, EMLX_CPU);

  size_t with_leaves = active();
  double t0 = now_s();
  emlx_array *c = build_chain(x, one, false);
  CHECK_MSG(c != NULL, "built a chain of %d adds", CHAIN);
  emlx_release(c); /* released unevaluated: an iterative teardown */
  double t1 = now_s();
  CHECK_MSG(active() == with_leaves, "unevaluated chain released (active %zu, want %zu)", active(),
            with_leaves);

  c = build_chain(x, one, false);
  double got = -1;
  double t2 = now_s();
  CHECK_OK(emlx_eval(&c, 1));
  double t3 = now_s();
  CHECK(emlx_item_f64(c, &got) == 0 && got == (double)CHAIN);
  emlx_release(c);

  /* the same on a queue's worker thread (its own stack) */
  emlx_queue *q = emlx_queue_new(EMLX_CPU);
  c = build_chain(x, one, true);
  CHECK_OK(emlx_eval_on(q, &c, 1));
  CHECK(c && emlx_item_f64(c, &got) == 0 && got == (double)(CHAIN / 2));
  emlx_release(c);
  emlx_queue_free(q);

  c = build_chain(x, one, true); /* 500k adds interleaved with 500k sums */
  double t4 = now_s();
  CHECK_OK(emlx_eval(&c, 1));
  double t5 = now_s();
  CHECK(c && emlx_ndim(c) == 1 && emlx_item_f64(c, &got) == 0 && got == (double)(CHAIN / 2));
  emlx_release(c);
  emlx_release(x), emlx_release(one);
  CHECK_MSG(active() == base, "after the chains active is back to %zu (is %zu)", base, active());
  fprintf(stderr, "chain: build+release %.2fs, eval %.2fs, mixed eval %.2fs\n", t1 - t0, t3 - t2,
          t5 - t4);
}

/* A node shared by many consumers is computed once. */
static void test_shared_node(void) {
  enum { N = 64, R = 32, C = 48 };
  int64_t shape[2] = {R, C};
  double *v = tu_iota(R * C, -1.0, 1.0 / 512);
  emlx_array *x = tu_make(EMLX_FLOAT32, shape, 2, v);

  /* (a) elementwise producer, reduction consumers */
  emlx_array *s = emlx_exp(x);
  emlx_array *cons[N];
  for (int i = 0; i < N; i++) {
    int ax = i % 2;
    cons[i] = emlx_sum(s, &ax, 1, false);
  }
  uint64_t c0 = computed();
  CHECK_OK(emlx_eval(cons, N));
  uint64_t d_all = computed() - c0;
  CHECK_MSG(d_all >= 1 && d_all <= N + 1,
            "exp shared by %d sums: %llu kernels (at most %d when computed once)", N,
            (unsigned long long)d_all, N + 1);
  double ref0[C], ref1[R];
  for (int j = 0; j < C; j++)
    ref0[j] = 0;
  for (int i = 0; i < R; i++)
    ref1[i] = 0;
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) {
      double e = exp((double)(float)v[i * C + j]);
      ref0[j] += e, ref1[i] += e;
    }
  int64_t s0 = C, s1 = R;
  double *g0 = tu_read(cons[0]), *g1 = tu_read(cons[1]);
  if (g0 && g1) {
    CHECK_MSG(tu_nmse(g0, ref0, C) < 1e-10 && tu_nmse(g1, ref1, R) < 1e-10, "shared exp sums");
    bool same = true;
    for (int i = 2; i < N; i++) {
      double *g = tu_read(cons[i]);
      same &= g && ((i % 2) ? tu_nmse(g, ref1, s1) : tu_nmse(g, ref0, s0)) < 1e-10;
      free(g);
    }
    CHECK_MSG(same, "every consumer sees the same shared values");
  }
  free(g0), free(g1);
  for (int i = 0; i < N; i++)
    emlx_release(cons[i]);

  /* (b) reduction producer, elementwise consumers with private operands */
  int ax1 = 1;
  emlx_array *r = emlx_sum(x, &ax1, 1, false);
  emlx_array *ks[N];
  for (int i = 0; i < N; i++) {
    double k = i;
    emlx_array *kl = tu_make(EMLX_FLOAT32, NULL, 0, &k);
    ks[i] = emlx_add(r, kl);
    emlx_release(kl);
  }
  c0 = computed();
  CHECK_OK(emlx_eval(ks, N));
  d_all = computed() - c0;
  CHECK_MSG(d_all >= 1 && d_all <= N + 1, "sum shared by %d adds: %llu kernels (at most %d)", N,
            (unsigned long long)d_all, N + 1);
  double want[R];
  for (int i = 0; i < R; i++) {
    want[i] = 0;
    for (int j = 0; j < C; j++)
      want[i] += (double)(float)v[i * C + j];
  }
  double *gk = tu_read(ks[N - 1]);
  if (gk) {
    for (int i = 0; i < R; i++)
      want[i] += N - 1;
    CHECK_MSG(tu_nmse(gk, want, R) < 1e-10, "shared sum + k");
  }
  free(gk);

  /* (c) consumers evaluated one at a time: the producer runs only the first time */
  emlx_array *p = emlx_sum(x, &ax1, 1, true);
  emlx_array *q[3];
  for (int i = 0; i < 3; i++)
    q[i] = emlx_multiply(p, x);
  c0 = computed();
  CHECK_OK(emlx_eval(&q[0], 1));
  uint64_t d_first = computed() - c0;
  c0 = computed();
  CHECK_OK(emlx_eval(&q[1], 1));
  uint64_t d_second = computed() - c0;
  CHECK_MSG(d_first >= 1 && d_second == 1 && d_first >= d_second,
            "second consumer runs only its own kernel (first %llu, second %llu)",
            (unsigned long long)d_first, (unsigned long long)d_second);
  CHECK(emlx_is_evaluated(p));
  c0 = computed();
  emlx_array *both[2] = {q[1], q[2]};
  CHECK_OK(emlx_eval(both, 2));
  CHECK_MSG(computed() - c0 == 1, "q[2] alone computed (%llu)",
            (unsigned long long)(computed() - c0));

  /* (d) a diamond: the shared exp feeds both sides of one add */
  emlx_array *e = emlx_exp(x);
  emlx_array *dia = emlx_add(e, e);
  emlx_release(e);
  c0 = computed();
  double *gd = tu_read(dia);
  CHECK_MSG(computed() - c0 <= 2, "diamond computed in at most 2 kernels (%llu)",
            (unsigned long long)(computed() - c0));
  if (gd) {
    double ref[R * C];
    for (int i = 0; i < R * C; i++)
      ref[i] = 2 * exp((double)(float)v[i]);
    tu_check_values(gd, ref, R * C, EMLX_FLOAT32, 2, "diamond exp + exp");
  }
  free(gd);
  for (int i = 0; i < N; i++)
    emlx_release(ks[i]);
  for (int i = 0; i < 3; i++)
    emlx_release(q[i]);
  emlx_release(dia), emlx_release(p), emlx_release(r), emlx_release(s), emlx_release(x);
  free(v);
}

/* An evaluated node drops its inputs: with x released by the caller, after
 * eval of y = f(x) only y's buffer is held. */
static void test_inputs_dropped(void) {
  emlx_clear_cache();
  size_t base = active();
  const int64_t n = INT64_C(1) << 20; /* 4 MiB of f32 */
  float *buf = malloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++)
    buf[i] = (float)(i % 1000) * 1e-3f;
  emlx_array *x = emlx_from_blob(buf, EMLX_FLOAT32, &n, 1, EMLX_CPU);
  CHECK(active() >= base + (size_t)n * 4);
  emlx_array *y = emlx_exp(x);
  emlx_release(x);
  CHECK_OK(emlx_eval(&y, 1));
  size_t held = active() - base;
  CHECK_MSG(held >= emlx_nbytes(y) && held < emlx_nbytes(y) + emlx_nbytes(y) / 4,
            "after y = exp(x), x released: active holds %zu bytes, y is %zu", held, emlx_nbytes(y));
  double got = 0;
  int64_t idx1[1] = {999}, idx2[1] = {1000};
  emlx_array *one = emlx_slice(y, idx1, idx2, NULL, 1);
  CHECK(emlx_item_f64(one, &got) == 0 && fabs(got - exp(0.999)) < 1e-6);
  emlx_release(one), emlx_release(y);
  CHECK_MSG(active() == base, "active back to base (%zu vs %zu)", active(), base);

  /* a widening chain: f32 input, f64 output; the input cannot be donated */
  x = emlx_from_blob(buf, EMLX_FLOAT32, &n, 1, EMLX_CPU);
  emlx_array *x64 = emlx_astype(x, EMLX_FLOAT64);
  y = emlx_exp(x64);
  emlx_release(x), emlx_release(x64);
  CHECK_OK(emlx_eval(&y, 1));
  held = active() - base;
  CHECK_MSG(held >= emlx_nbytes(y) && held < emlx_nbytes(y) + emlx_nbytes(y) / 4,
            "after y = exp(f64(x)): active holds %zu bytes, y is %zu", held, emlx_nbytes(y));
  emlx_release(y);

  /* intermediates of a longer graph go away; the caller's input stays */
  x = emlx_from_blob(buf, EMLX_FLOAT32, &n, 1, EMLX_CPU);
  int64_t sq[2] = {1024, 1024};
  emlx_array *e = emlx_exp(x), *e2 = emlx_reshape(e, sq, 2), *tt = emlx_transpose(e2, NULL, 0);
  emlx_array *m = emlx_multiply(tt, tt);
  int ax = 0;
  emlx_array *s = emlx_sum(m, &ax, 1, false);
  emlx_release(e), emlx_release(e2), emlx_release(tt), emlx_release(m);
  CHECK_OK(emlx_eval(&s, 1));
  held = active() - base;
  CHECK_MSG(held >= emlx_nbytes(x) && held < emlx_nbytes(x) + (size_t)(1 << 20),
            "only x and the 4 KiB sum remain (%zu bytes held)", held);
  emlx_release(s), emlx_release(x);
  CHECK(active() == base);
  free(buf);
}

/* Donation (an output reusing an input's buffer) never clobbers data that is
 * still reachable: another lazy consumer, a view sharing the buffer, or the
 * same input used twice. */
static void test_donation_safety(void) {
  const int64_t n = 4096;
  double *v = tu_iota(n, -2, 1.0 / 1024);
  double *r1 = malloc(n * sizeof(double)), *r2 = malloc(n * sizeof(double));
  for (int64_t i = 0; i < n; i++)
    r1[i] = exp(tu_quant(EMLX_FLOAT32, v[i])), r2[i] = -v[i];

  /* two consumers of a released input, evaluated one after the other */
  emlx_array *x = tu_make1(EMLX_FLOAT32, n, v);
  emlx_array *y1 = emlx_exp(x), *y2 = emlx_negate(x);
  emlx_release(x);
  tu_check_array(y1, EMLX_FLOAT32, &n, 1, r1, 2, "first consumer");
  tu_check_array(y2, EMLX_FLOAT32, &n, 1, r2, 0, "second consumer sees the original input");
  emlx_release(y1), emlx_release(y2);

  /* an evaluated view shares the input's buffer */
  x = tu_make1(EMLX_FLOAT32, n, v);
  int64_t s2[2] = {64, 64};
  emlx_array *view = emlx_reshape(x, s2, 2);
  CHECK_OK(emlx_eval(&view, 1));
  emlx_array *ng = emlx_negate(x);
  emlx_release(x);
  tu_check_array(ng, EMLX_FLOAT32, &n, 1, r2, 0, "negate of a released input");
  tu_check_array(view, EMLX_FLOAT32, s2, 2, v, 0, "a view of that input is untouched");
  emlx_release(ng), emlx_release(view);

  /* the same input on both sides, and a chain that could run in place */
  x = tu_make1(EMLX_FLOAT32, n, v);
  emlx_array *e = emlx_exp(x), *ee = emlx_add(e, e), *m = emlx_multiply(ee, x);
  emlx_release(e), emlx_release(ee);
  double *r3 = malloc(n * sizeof(double));
  for (int64_t i = 0; i < n; i++)
    r3[i] = 2 * r1[i] * v[i];
  tu_check_array(m, EMLX_FLOAT32, &n, 1, r3, 3, "exp(x) + exp(x), times x");
  tu_check_array(x, EMLX_FLOAT32, &n, 1, v, 0, "x unchanged");
  emlx_release(m), emlx_release(x);
  free(v), free(r1), free(r2), free(r3);
}

static void test_eval_edges(void) {
  CHECK_OK(emlx_eval(NULL, 0));
  emlx_array *dummy = NULL;
  CHECK_OK(emlx_eval(&dummy, 0));
  double v[6] = {1, 2, 3, 4, 5, 6};
  int64_t n = 6;
  emlx_array *a = tu_make1(EMLX_FLOAT64, n, v);
  uint64_t c0 = computed();
  CHECK_OK(emlx_eval(&a, 1)); /* a leaf: nothing to compute */
  CHECK(computed() == c0);
  emlx_array *b = emlx_multiply(a, a);
  CHECK(!emlx_is_evaluated(b));
  emlx_array *twice[3] = {b, b, a};
  c0 = computed();
  CHECK_OK(emlx_eval(twice, 3));
  CHECK_MSG(computed() - c0 == 1, "b listed twice is computed once (%llu)",
            (unsigned long long)(computed() - c0));
  CHECK(emlx_is_evaluated(b));
  c0 = computed();
  CHECK_OK(emlx_eval(&b, 1));
  CHECK_OK(emlx_eval(twice, 3));
  CHECK_MSG(computed() == c0, "re-evaluating evaluated arrays computes nothing");
  double want[6] = {1, 4, 9, 16, 25, 36};
  tu_check_array(b, EMLX_FLOAT64, &n, 1, want, 0, "b = a * a");
  emlx_array *withnull[2] = {b, NULL};
  CHECK_FAILS(emlx_eval(withnull, 2));
  /* a binary tree of 1024 leaves */
  emlx_array *lv[1024];
  for (int i = 0; i < 1024; i++) {
    double k = i;
    lv[i] = tu_make(EMLX_INT64, NULL, 0, &k);
  }
  for (int w = 1024; w > 1; w /= 2)
    for (int i = 0; i < w / 2; i++) {
      emlx_array *t = emlx_add(lv[2 * i], lv[2 * i + 1]);
      emlx_release(lv[2 * i]), emlx_release(lv[2 * i + 1]);
      lv[i] = t;
    }
  int64_t tot = 0;
  CHECK(emlx_item_i64(lv[0], &tot) == 0 && tot == 1024 * 1023 / 2);
  emlx_release(lv[0]), emlx_release(a), emlx_release(b);
}

/* A failing eval (memory limit) leaves every array intact; after the limit is
 * lifted the same arrays evaluate. */
static void test_failure_intact(void) {
  emlx_clear_cache();
  size_t base = active();
  const int64_t n = INT64_C(1) << 18;
  double *v = tu_iota(n, -3.0, 1e-5);
  emlx_array *a = tu_make1(EMLX_FLOAT32, n, v);
  float *snap = malloc((size_t)n * 4);
  memcpy(snap, emlx_data(a), (size_t)n * 4);
  double sv[2] = {1.5, 2.5};
  emlx_array *small1 = tu_make1(EMLX_FLOAT32, 2, sv);
  emlx_array *small = emlx_add(small1, small1);
  emlx_array *big = emlx_exp(a);
  emlx_array *big2 = emlx_negate(big);
  emlx_clear_cache();
  size_t old = emlx_set_memory_limit(active() + 4096);
  emlx_array *list[2] = {small, big2};
  emlx_clear_error();
  int rc = emlx_eval(list, 2);
  const char *msg = emlx_last_error();
  CHECK_MSG(rc != 0 && msg[0] != '\0', "eval over the memory limit fails with a message");
  emlx_set_memory_limit(old);
  CHECK_MSG(!emlx_is_evaluated(big2), "the failed array stays lazy");
  CHECK(emlx_is_evaluated(a) && memcmp(emlx_data(a), snap, (size_t)n * 4) == 0);
  CHECK(emlx_size(big2) == n && emlx_array_dtype(big2) == EMLX_FLOAT32);
  CHECK_OK(emlx_eval(list, 2));
  double want_small[2] = {3, 5};
  tu_check_array(small, EMLX_FLOAT32, &(int64_t){2}, 1, want_small, 0, "small after retry");
  double *ref = malloc((size_t)n * sizeof(double));
  for (int64_t i = 0; i < n; i++)
    ref[i] = -exp((double)snap[i]);
  tu_check_array(big2, EMLX_FLOAT32, &n, 1, ref, 2, "big after retry");
  free(ref), free(snap), free(v);
  emlx_release(a), emlx_release(small1), emlx_release(small), emlx_release(big);
  emlx_release(big2);
  CHECK(active() == base);
}

int main(void) {
  test_eval_edges();
  test_shared_node();
  test_donation_safety();
  test_inputs_dropped();
  test_failure_intact();
  test_long_chains();
  return tu_finish();
}
