/* test_control_flow.c — loops and branches as graph nodes (compile.h:
 * emlx_while, emlx_cond, emlx_program_call).
 *
 * References are independent of the engine: closed forms (the sum of i^2
 * for i < n is (n-1)n(2n-1)/6), plain C loops (a decode-shaped loop that
 * writes row i of a cache with slice_update, and the value it must end
 * with), and f64 arithmetic done here. Each case runs both in a plain lazy
 * eval and inside an emlx_compile'd program replayed on several inputs.
 *
 * That cond runs only the chosen branch is shown two ways: the untaken
 * branch holds a loop that never ends, which with a bound set by
 * emlx_set_while_max_iterations makes any run of it fail, and the fusion
 * counters (emlx_fusion_stats_get().regions) grow by exactly the fused
 * regions of the branch taken. That the loop state is updated in place is
 * shown by memory: beyond the node's input (which must stay intact), a loop
 * over a 16 MiB state adds one copy of it at its peak, the one it updates,
 * where a fresh buffer per iteration needs two.
 *
 * Also: nesting (a while inside a cond branch inside a while), zero-iteration
 * loops, program references held by the nodes after the caller released
 * its own, program templates, six threads replaying one loop program, and
 * the errors: mismatched templates, non-scalar predicates,
 * wrong counts, NULLs, the iteration bound. CTest runs it at every ISA level. */
#include <pthread.h>

#include "test_util.h"

/* ---- small helpers ----------------------------------------------------------------------- */

static emlx_array *s64(int64_t v) { return emlx_scalar_tensor_int(v, EMLX_INT64, EMLX_CPU); }
static emlx_array *f32s(double v) { return emlx_scalar_tensor(v, EMLX_FLOAT32, EMLX_CPU); }

static int64_t read_i64(emlx_array *a) {
  int64_t v = -999;
  if (emlx_eval(&a, 1) != 0 || emlx_to_blob(a, &v, sizeof v) != 0)
    return -999;
  return v;
}

static const int64_t no_dims[1] = {0};
static const emlx_template tpl_s64 = {EMLX_INT64, 0, no_dims};

/* ---- programs of the sum of squares: state (i, acc, n), all int64 scalars --------------- */

static int tr_less_i_n(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                       size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  out[0] = emlx_less(in[0], in[2]);
  return out[0] ? 0 : -1;
}

static int tr_squares_body(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                           size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  emlx_array *one = s64(1);
  emlx_array *sq = emlx_multiply(in[0], in[0]);
  out[0] = emlx_add(in[0], one);
  out[1] = emlx_add(in[1], sq);
  out[2] = emlx_retain(in[2]);
  emlx_release(one);
  emlx_release(sq);
  return out[0] && out[1] ? 0 : -1;
}

static emlx_program *squares_cond(void) {
  emlx_template t[3] = {tpl_s64, tpl_s64, tpl_s64};
  return emlx_compile(tr_less_i_n, NULL, t, 3, 1);
}
static emlx_program *squares_body(void) {
  emlx_template t[3] = {tpl_s64, tpl_s64, tpl_s64};
  return emlx_compile(tr_squares_body, NULL, t, 3, 3);
}

static int64_t squares_ref(int64_t n) { return n <= 0 ? 0 : (n - 1) * n * (2 * n - 1) / 6; }

/* A program of n -> sum of i^2 for i < n, with the loop inside. */
typedef struct loop_ctx {
  emlx_program *cond, *body;
} loop_ctx;

static int tr_squares_program(void *vctx, emlx_array *const *in, size_t nin, emlx_array **out,
                              size_t nout) {
  (void)nin, (void)nout;
  loop_ctx *c = vctx;
  emlx_array *zero = s64(0);
  emlx_array *state[3] = {zero, zero, in[0]}, *res[3] = {0};
  int rc = emlx_while(c->cond, c->body, state, 3, res);
  emlx_release(zero);
  if (rc != 0)
    return rc;
  out[0] = res[1];
  emlx_release(res[0]);
  emlx_release(res[2]);
  return 0;
}

static void test_while_sum_of_squares(void) {
  emlx_program *cond = squares_cond(), *body = squares_body();
  CHECK_NOT_NULL(cond);
  CHECK_NOT_NULL(body);
  if (!cond || !body)
    return;
  /* lazy */
  const int64_t ns[] = {0, 1, 2, 10, 1000, -3};
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
    emlx_array *i0 = s64(0), *acc0 = s64(0), *n = s64(ns[k]);
    emlx_array *state[3] = {i0, acc0, n}, *res[3] = {0};
    CHECK_OK(emlx_while(cond, body, state, 3, res));
    CHECK_EQ_I64(read_i64(res[1]), squares_ref(ns[k]));
    CHECK_EQ_I64(read_i64(res[0]), ns[k] > 0 ? ns[k] : 0);
    CHECK_EQ_I64(read_i64(res[2]), ns[k]);
    for (int q = 0; q < 3; q++)
      emlx_release(res[q]);
    emlx_release(i0);
    emlx_release(acc0);
    emlx_release(n);
  }
  /* compiled: the loop is one step of the program, replayed */
  loop_ctx lc = {cond, body};
  emlx_program *p = emlx_compile(tr_squares_program, &lc, &tpl_s64, 1, 1);
  CHECK_NOT_NULL(p);
  /* the node holds its programs: the caller's references may go */
  emlx_program_release(cond);
  emlx_program_release(body);
  if (!p)
    return;
  emlx_program_info info;
  CHECK_OK(emlx_program_get_info(p, &info));
  CHECK_EQ_I64(info.work, INT64_MAX); /* a loop: never "small" */
  for (int64_t n = 0; n <= 300; n += 37) {
    emlx_array *x = s64(n), *y = NULL;
    CHECK_OK(emlx_program_run(p, &x, 1, &y, 1));
    CHECK_EQ_I64(read_i64(y), squares_ref(n));
    emlx_release(x);
    emlx_release(y);
  }
  emlx_program_release(p);
}

/* ---- a decode-shaped loop: cache[i, :] = f(i), state (i, cache) ---------------------------- */

enum { ROWS = 48, COLS = 40 };

static int tr_i_below_rows(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                           size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  emlx_array *lim = s64(ROWS);
  out[0] = emlx_less(in[0], lim);
  emlx_release(lim);
  return out[0] ? 0 : -1;
}

/* row = (i + 1) * 0.5 + arange(COLS) * 0.25, written at [i, 0] */
static int tr_write_row(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                        size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  int64_t shape[2] = {1, COLS};
  emlx_array *one = s64(1);
  emlx_array *ip1 = emlx_add(in[0], one);
  emlx_array *ipf = emlx_astype(ip1, EMLX_FLOAT32);
  emlx_array *half = f32s(0.5), *quarter = f32s(0.25);
  emlx_array *base = emlx_multiply(ipf, half);
  emlx_array *ar = emlx_arange(0, COLS, 1, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *arq = emlx_multiply(ar, quarter);
  emlx_array *row = emlx_add(arq, base);
  emlx_array *row2 = emlx_reshape(row, shape, 2);
  int axes[1] = {0};
  out[1] = emlx_slice_update_dynamic(in[1], row2, in[0], axes, 1);
  out[0] = emlx_retain(ip1);
  emlx_array *tmp[] = {one, ip1, ipf, half, quarter, base, ar, arq, row, row2};
  for (size_t k = 0; k < sizeof tmp / sizeof tmp[0]; k++)
    emlx_release(tmp[k]);
  return out[1] ? 0 : -1;
}

static void test_while_decode_cache(void) {
  int64_t cshape[2] = {ROWS, COLS};
  emlx_template t[2] = {tpl_s64, {EMLX_FLOAT32, 2, cshape}};
  emlx_program *cond = emlx_compile(tr_i_below_rows, NULL, t, 2, 1);
  emlx_program *body = emlx_compile(tr_write_row, NULL, t, 2, 2);
  CHECK_NOT_NULL(cond);
  CHECK_NOT_NULL(body);
  if (!cond || !body)
    return;
  double *init = malloc(ROWS * COLS * sizeof *init), *ref = malloc(ROWS * COLS * sizeof *ref);
  for (int r = 0; r < ROWS; r++)
    for (int k = 0; k < COLS; k++) {
      init[r * COLS + k] = -1.0 - r;
      ref[r * COLS + k] = (r + 1) * 0.5 + k * 0.25;
    }
  /* starting at row 5: rows 0..4 keep their initial values */
  for (int r = 0; r < 5; r++)
    for (int k = 0; k < COLS; k++)
      ref[r * COLS + k] = init[r * COLS + k];
  emlx_array *cache = tu_make(EMLX_FLOAT32, cshape, 2, init), *i0 = s64(5);
  emlx_array *state[2] = {i0, cache}, *res[2] = {0};
  CHECK_OK(emlx_while(cond, body, state, 2, res));
  tu_check_array(res[1], EMLX_FLOAT32, cshape, 2, ref, 0, "decode cache");
  CHECK_EQ_I64(read_i64(res[0]), ROWS);
  /* the node's input is intact (the loop wrote into buffers of its own) */
  tu_check_array(cache, EMLX_FLOAT32, cshape, 2, init, 0, "initial cache untouched");
  emlx_release(res[0]);
  emlx_release(res[1]);
  emlx_release(cache);
  emlx_release(i0);
  emlx_program_release(cond);
  emlx_program_release(body);
  free(init);
  free(ref);
}

/* ---- in place: state x (4M f32) -> x + 1, ten times ----------------------------------------- */

enum { BIG = 4 << 20, STEPS = 10 };

static int tr_count_below(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                          size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  emlx_array *lim = s64(STEPS);
  out[0] = emlx_less(in[0], lim);
  emlx_release(lim);
  return out[0] ? 0 : -1;
}

static int tr_bump(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out, size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  emlx_array *one = s64(1), *onef = f32s(1.0);
  out[0] = emlx_add(in[0], one);
  out[1] = emlx_add(in[1], onef);
  emlx_release(one);
  emlx_release(onef);
  return out[0] && out[1] ? 0 : -1;
}

static void test_while_in_place(void) {
  int64_t shape[1] = {BIG};
  emlx_template t[2] = {tpl_s64, {EMLX_FLOAT32, 1, shape}};
  emlx_program *cond = emlx_compile(tr_count_below, NULL, t, 2, 1);
  emlx_program *body = emlx_compile(tr_bump, NULL, t, 2, 2);
  CHECK_NOT_NULL(cond);
  CHECK_NOT_NULL(body);
  if (!cond || !body)
    return;
  emlx_array *x = emlx_full(shape, 1, 2.0, EMLX_FLOAT32, EMLX_CPU), *i0 = s64(0);
  CHECK_OK(emlx_eval(&x, 1));
  size_t copy = (size_t)BIG * 4;
  emlx_clear_cache();
  emlx_reset_peak_memory();
  size_t before = emlx_memory_info().active_memory;
  emlx_array *state[2] = {i0, x}, *res[2] = {0};
  CHECK_OK(emlx_while(cond, body, state, 2, res));
  CHECK_OK(emlx_eval(res, 2));
  size_t peak = emlx_memory_info().peak_memory - before;
  /* beyond x (held by the node, already counted in `before`), the loop holds
   * one copy: the state it updates; a new buffer per iteration would hold
   * two at once from the second iteration on */
  CHECK_MSG(peak < copy * 3 / 2, "loop state updated in place: peak %.1f copies of the state",
            (double)peak / (double)copy);
  emlx_array *sl = emlx_sum(res[1], NULL, 0, false);
  double *s = tu_read(sl);
  CHECK_NEAR(s ? s[0] : -1.0, (2.0 + STEPS) * BIG, 1e-6 * (2.0 + STEPS) * BIG);
  free(s);
  emlx_release(sl);
  emlx_release(res[0]);
  emlx_release(res[1]);
  emlx_release(x);
  emlx_release(i0);
  emlx_program_release(cond);
  emlx_program_release(body);
}

/* ---- cond ---------------------------------------------------------------------------------- */

/* branch A: exp(x) * 2 + 1 (one fused region); branch B: x - 3 (one op) */
static int tr_branch_a(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                       size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  emlx_array *two = f32s(2.0), *one = f32s(1.0);
  emlx_array *e = emlx_exp(in[0]), *m = emlx_multiply(e, two);
  out[0] = emlx_add(m, one);
  emlx_release(two), emlx_release(one), emlx_release(e), emlx_release(m);
  return out[0] ? 0 : -1;
}

static int tr_branch_b(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                       size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  emlx_array *three = f32s(3.0);
  out[0] = emlx_subtract(in[0], three);
  emlx_release(three);
  return out[0] ? 0 : -1;
}

/* A branch that never finishes: while (true) k = k + 1, then x + k. */
static int tr_true(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out, size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  out[0] = emlx_greater_equal(in[0], in[0]);
  return out[0] ? 0 : -1;
}
static int tr_inc(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out, size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  emlx_array *one = s64(1);
  out[0] = emlx_add(in[0], one);
  emlx_release(one);
  return out[0] ? 0 : -1;
}
static int tr_branch_forever(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                             size_t nout) {
  (void)nin, (void)nout;
  emlx_program *const *loop = ctx;
  emlx_array *k0 = s64(0), *k = NULL;
  emlx_array *kx = emlx_astype(in[0], EMLX_INT64); /* depends on the input: not a constant */
  emlx_array *z = emlx_multiply(kx, k0);
  emlx_array *zs = emlx_sum(z, NULL, 0, false);
  int rc = emlx_while(loop[0], loop[1], &zs, 1, &k);
  if (rc == 0) {
    emlx_array *kf = emlx_astype(k, EMLX_FLOAT32);
    out[0] = emlx_add(in[0], kf);
    emlx_release(kf);
  }
  emlx_release(k0), emlx_release(kx), emlx_release(z), emlx_release(zs), emlx_release(k);
  return rc == 0 && out[0] ? 0 : -1;
}

static void test_cond_runs_one_branch(void) {
  int64_t shape[1] = {300};
  emlx_template tx = {EMLX_FLOAT32, 1, shape};
  emlx_program *a = emlx_compile(tr_branch_a, NULL, &tx, 1, 1);
  emlx_program *b = emlx_compile(tr_branch_b, NULL, &tx, 1, 1);
  emlx_program *loop[2] = {emlx_compile(tr_true, NULL, &tpl_s64, 1, 1),
                           emlx_compile(tr_inc, NULL, &tpl_s64, 1, 1)};
  emlx_program *forever =
      loop[0] && loop[1] ? emlx_compile(tr_branch_forever, loop, &tx, 1, 1) : NULL;
  CHECK_NOT_NULL(a);
  CHECK_NOT_NULL(b);
  CHECK_NOT_NULL(forever);
  if (!a || !b || !forever)
    return;
  emlx_program_info ia, ib;
  CHECK_OK(emlx_program_get_info(a, &ia));
  CHECK_OK(emlx_program_get_info(b, &ib));
  double *xv = tu_iota(300, -2.0, 0.01), *ra = malloc(300 * sizeof *ra), *rb = malloc(300 * 8);
  for (int k = 0; k < 300; k++) {
    ra[k] = exp((double)(float)xv[k]) * 2 + 1;
    rb[k] = (double)(float)xv[k] - 3;
  }
  emlx_array *x = tu_make1(EMLX_FLOAT32, 300, xv);
  uint64_t old_bound = emlx_set_while_max_iterations(1000);
  /* the forever branch really fails when it runs */
  {
    emlx_array *y = NULL;
    CHECK_FAILS(emlx_program_run(forever, &x, 1, &y, 1));
    CHECK(y == NULL);
  }
  /* three clauses: p0 -> a, p1 -> forever, p2 -> forever, else b */
  const emlx_program *br[4] = {a, forever, forever, b};
  struct {
    bool p[3];
    int want; /* 0: a, 1: b */
  } cases[] = {{{true, true, true}, 0}, {{true, false, false}, 0}, {{false, false, false}, 1}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    emlx_array *p[3];
    for (int k = 0; k < 3; k++)
      p[k] = emlx_scalar_tensor_int(cases[c].p[k], k == 1 ? EMLX_BOOL : EMLX_INT32, EMLX_CPU);
    emlx_array *y = NULL;
    CHECK_OK(emlx_eval(p, 3));
    uint64_t before = emlx_fusion_stats_get().regions;
    CHECK_OK(emlx_cond(p, 3, br, &x, 1, &y, 1));
    CHECK_OK(emlx_eval(&y, 1));
    uint64_t ran = emlx_fusion_stats_get().regions - before;
    CHECK_EQ_U64(ran, cases[c].want == 0 ? ia.fused_regions : ib.fused_regions);
    tu_check_array(y, EMLX_FLOAT32, shape, 1, cases[c].want == 0 ? ra : rb, 1, "cond result");
    emlx_release(y);
    for (int k = 0; k < 3; k++)
      emlx_release(p[k]);
  }
  CHECK(ia.fused_regions >= 1); /* so the counter tells the branches apart */
  emlx_set_while_max_iterations(old_bound);
  emlx_release(x);
  free(xv), free(ra), free(rb);
  emlx_program_release(a), emlx_program_release(b), emlx_program_release(forever);
  emlx_program_release(loop[0]), emlx_program_release(loop[1]);
}

/* cond inside a compiled program: y = x > 0 ? a(x) : b(x) on a scalar-reduced predicate */
typedef struct cond_ctx {
  const emlx_program *br[2];
} cond_ctx;

static int tr_cond_program(void *vctx, emlx_array *const *in, size_t nin, emlx_array **out,
                           size_t nout) {
  (void)nin, (void)nout;
  cond_ctx *c = vctx;
  emlx_array *s = emlx_sum(in[0], NULL, 0, false), *zero = f32s(0.0);
  emlx_array *pred = emlx_greater(s, zero);
  int rc = emlx_cond(&pred, 1, c->br, in, 1, out, 1);
  emlx_release(s), emlx_release(zero), emlx_release(pred);
  return rc;
}

static void test_cond_compiled(void) {
  int64_t shape[1] = {300};
  emlx_template tx = {EMLX_FLOAT32, 1, shape};
  emlx_program *a = emlx_compile(tr_branch_a, NULL, &tx, 1, 1);
  emlx_program *b = emlx_compile(tr_branch_b, NULL, &tx, 1, 1);
  if (!CHECK_NOT_NULL(a) || !CHECK_NOT_NULL(b))
    return;
  cond_ctx cc = {{a, b}};
  emlx_program *p = emlx_compile(tr_cond_program, &cc, &tx, 1, 1);
  emlx_program_release(a);
  emlx_program_release(b);
  if (!CHECK_NOT_NULL(p))
    return;
  for (int sign = -1; sign <= 1; sign += 2) {
    double *xv = tu_iota(300, sign * 0.5, sign * 0.001), *ref = malloc(300 * sizeof *ref);
    for (int k = 0; k < 300; k++) {
      double v = (double)(float)xv[k];
      ref[k] = sign > 0 ? exp(v) * 2 + 1 : v - 3;
    }
    emlx_array *x = tu_make1(EMLX_FLOAT32, 300, xv), *y = NULL;
    CHECK_OK(emlx_program_run(p, &x, 1, &y, 1));
    tu_check_array(y, EMLX_FLOAT32, shape, 1, ref, 1, "compiled cond");
    emlx_release(x);
    emlx_release(y);
    free(xv);
    free(ref);
  }
  emlx_program_release(p);
}

/* ---- nesting: while (i < n) { i += 1; acc += (i odd ? sum_{j<i} j : -i) } ----------------
 * The odd branch is itself a while. Reference: a C loop. */

static int tr_inner_cond(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                         size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  out[0] = emlx_less(in[0], in[2]); /* (j, s, lim) */
  return out[0] ? 0 : -1;
}
static int tr_inner_body(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                         size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  emlx_array *one = s64(1);
  out[0] = emlx_add(in[0], one);
  out[1] = emlx_add(in[1], in[0]);
  out[2] = emlx_retain(in[2]);
  emlx_release(one);
  return out[0] && out[1] ? 0 : -1;
}

typedef struct nest_ctx {
  emlx_program *inner_cond, *inner_body; /* for the odd branch */
  emlx_program *odd, *even;              /* branches: (i) -> (value) */
} nest_ctx;

static int tr_odd_branch(void *vctx, emlx_array *const *in, size_t nin, emlx_array **out,
                         size_t nout) {
  (void)nin, (void)nout;
  nest_ctx *c = vctx;
  emlx_array *zero = s64(0);
  emlx_array *st[3] = {zero, zero, in[0]}, *r[3] = {0};
  int rc = emlx_while(c->inner_cond, c->inner_body, st, 3, r);
  emlx_release(zero);
  if (rc != 0)
    return rc;
  out[0] = r[1];
  emlx_release(r[0]);
  emlx_release(r[2]);
  return 0;
}
static int tr_even_branch(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                          size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  out[0] = emlx_negate(in[0]);
  return out[0] ? 0 : -1;
}
/* outer body: (i, acc, n) -> (i+1, acc + cond(odd(i+1)), n) */
static int tr_outer_body(void *vctx, emlx_array *const *in, size_t nin, emlx_array **out,
                         size_t nout) {
  (void)nin, (void)nout;
  nest_ctx *c = vctx;
  emlx_array *one = s64(1), *two = s64(2);
  emlx_array *i1 = emlx_add(in[0], one);
  emlx_array *rem = emlx_remainder(i1, two);
  emlx_array *odd = emlx_equal(rem, one);
  const emlx_program *br[2] = {c->odd, c->even};
  emlx_array *v = NULL;
  int rc = emlx_cond(&odd, 1, br, &i1, 1, &v, 1);
  if (rc == 0) {
    out[0] = emlx_retain(i1);
    out[1] = emlx_add(in[1], v);
    out[2] = emlx_retain(in[2]);
  }
  emlx_release(one), emlx_release(two), emlx_release(i1), emlx_release(rem), emlx_release(odd);
  emlx_release(v);
  return rc;
}

static int64_t nest_ref(int64_t n) {
  int64_t acc = 0;
  for (int64_t i = 0; i < n;) {
    i++;
    if (i % 2 == 1)
      for (int64_t j = 0; j < i; j++)
        acc += j;
    else
      acc -= i;
  }
  return acc;
}

static void test_nested(void) {
  emlx_template t3[3] = {tpl_s64, tpl_s64, tpl_s64};
  nest_ctx c = {0};
  c.inner_cond = emlx_compile(tr_inner_cond, NULL, t3, 3, 1);
  c.inner_body = emlx_compile(tr_inner_body, NULL, t3, 3, 3);
  c.odd = c.inner_cond && c.inner_body ? emlx_compile(tr_odd_branch, &c, &tpl_s64, 1, 1) : NULL;
  c.even = emlx_compile(tr_even_branch, NULL, &tpl_s64, 1, 1);
  emlx_program *outer_cond = squares_cond(); /* i < n */
  emlx_program *outer_body = c.odd && c.even ? emlx_compile(tr_outer_body, &c, t3, 3, 3) : NULL;
  if (!CHECK_NOT_NULL(outer_body) || !CHECK_NOT_NULL(outer_cond))
    return;
  loop_ctx lc = {outer_cond, outer_body};
  /* the whole nest compiled: a while whose body holds a cond whose branch holds a while */
  emlx_program *p = emlx_compile(tr_squares_program, &lc, &tpl_s64, 1, 1);
  emlx_program_release(c.inner_cond), emlx_program_release(c.inner_body);
  emlx_program_release(c.odd), emlx_program_release(c.even);
  if (!CHECK_NOT_NULL(p))
    return;
  for (int64_t n = 0; n <= 25; n += 5) {
    emlx_array *x = s64(n), *y = NULL;
    CHECK_OK(emlx_program_run(p, &x, 1, &y, 1));
    CHECK_EQ_I64(read_i64(y), nest_ref(n));
    emlx_release(x);
    emlx_release(y);
    /* and lazily, without the outer compile */
    emlx_array *zero = s64(0), *nn = s64(n), *st[3] = {zero, zero, nn}, *r[3] = {0};
    CHECK_OK(emlx_while(outer_cond, outer_body, st, 3, r));
    CHECK_EQ_I64(read_i64(r[1]), nest_ref(n));
    for (int k = 0; k < 3; k++)
      emlx_release(r[k]);
    emlx_release(zero), emlx_release(nn);
  }
  emlx_program_release(outer_cond), emlx_program_release(outer_body);
  emlx_program_release(p);
}

/* ---- program_call ---------------------------------------------------------------------------- */

static void test_program_call(void) {
  int64_t shape[1] = {300};
  emlx_template tx = {EMLX_FLOAT32, 1, shape};
  emlx_program *a = emlx_compile(tr_branch_a, NULL, &tx, 1, 1);
  if (!CHECK_NOT_NULL(a))
    return;
  double *xv = tu_iota(300, -1.0, 0.005), *ref = malloc(300 * sizeof *ref);
  for (int k = 0; k < 300; k++)
    ref[k] = exp((double)(float)xv[k]) * 2 + 1;
  emlx_array *x = tu_make1(EMLX_FLOAT32, 300, xv), *y = NULL;
  CHECK_OK(emlx_program_call(a, &x, 1, &y, 1));
  emlx_program_release(a); /* held by the node */
  CHECK(y && !emlx_is_evaluated(y));
  tu_check_array(y, EMLX_FLOAT32, shape, 1, ref, 1, "program_call");
  emlx_release(y);
  /* errors */
  emlx_program *b = emlx_compile(tr_branch_b, NULL, &tx, 1, 1);
  emlx_array *wrong = s64(3), *outs[2] = {0};
  CHECK_FAILS(emlx_program_call(b, &wrong, 1, outs, 1));
  CHECK(emlx_program_call(b, &wrong, 1, outs, 1) != 0 &&
        strncmp(emlx_last_error(), "program_call:", 13) == 0);
  CHECK_FAILS(emlx_program_call(b, &x, 1, outs, 2));
  CHECK_FAILS(emlx_program_call(NULL, &x, 1, outs, 1));
  CHECK(outs[0] == NULL && outs[1] == NULL);
  emlx_release(wrong);
  emlx_release(x);
  emlx_program_release(b);
  free(xv), free(ref);
}

/* ---- errors -----------------------------------------------------------------------------------
 */

static int tr_vec_pred(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                       size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  emlx_array *zero = f32s(0.0);
  out[0] = emlx_greater(in[1], zero); /* a vector: not a predicate */
  emlx_release(zero);
  return out[0] ? 0 : -1;
}

static int tr_bad_body(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                       size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  out[0] = emlx_retain(in[0]);
  out[1] = emlx_astype(in[1], EMLX_FLOAT64); /* changes the state's dtype */
  return out[1] ? 0 : -1;
}

static int tr_identity2(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                        size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  out[0] = emlx_retain(in[0]);
  out[1] = emlx_retain(in[1]);
  return 0;
}

static void test_errors(void) {
  int64_t shape[1] = {300}, other[1] = {7};
  emlx_template t2[2] = {tpl_s64, {EMLX_FLOAT32, 1, shape}};
  emlx_program *cond = emlx_compile(tr_count_below, NULL, t2, 2, 1);
  emlx_program *vec = emlx_compile(tr_vec_pred, NULL, t2, 2, 1);
  emlx_program *bad = emlx_compile(tr_bad_body, NULL, t2, 2, 2);
  emlx_program *ok = emlx_compile(tr_identity2, NULL, t2, 2, 2);
  emlx_program *one_out = emlx_compile(tr_branch_b, NULL, &t2[1], 1, 1);
  if (!CHECK_NOT_NULL(cond) || !CHECK_NOT_NULL(vec) || !CHECK_NOT_NULL(bad) ||
      !CHECK_NOT_NULL(ok) || !CHECK_NOT_NULL(one_out))
    return;
  emlx_array *i0 = s64(0), *x = emlx_full(shape, 1, 1.0, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *y = emlx_full(other, 1, 1.0, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *st[2] = {i0, x}, *st_bad[2] = {i0, y}, *out[2] = {0};
  /* body outputs differ from the state */
  CHECK_FAILS(emlx_while(cond, bad, st, 2, out));
  emlx_clear_error();
  emlx_while(cond, bad, st, 2, out);
  CHECK_MSG(strstr(emlx_last_error(), "body output 1") != NULL, "names the output: %s",
            emlx_last_error());
  /* non-scalar predicate */
  emlx_clear_error();
  CHECK(emlx_while(vec, ok, st, 2, out) != 0 && strstr(emlx_last_error(), "predicate"));
  /* state that does not fit the programs */
  CHECK_FAILS(emlx_while(cond, ok, st_bad, 2, out));
  CHECK_FAILS(emlx_while(cond, ok, st, 1, out));
  CHECK_FAILS(emlx_while(cond, ok, st, 0, out));
  CHECK_FAILS(emlx_while(NULL, ok, st, 2, out));
  CHECK_FAILS(emlx_while(cond, NULL, st, 2, out));
  CHECK_FAILS(emlx_while(cond, ok, NULL, 2, out));
  CHECK_FAILS(emlx_while(ok, ok, st, 2, out)); /* cond with two outputs */
  CHECK(out[0] == NULL && out[1] == NULL);
  /* cond: non-scalar predicate, mismatched branches, counts */
  emlx_array *vp = emlx_full(other, 1, 1.0, EMLX_BOOL, EMLX_CPU);
  emlx_array *cp = emlx_scalar_tensor_complex(1, 0, EMLX_CPU), *tp = s64(1);
  const emlx_program *br[2] = {one_out, one_out};
  CHECK_FAILS(emlx_cond(&vp, 1, br, &x, 1, out, 1));
  CHECK_FAILS(emlx_cond(&cp, 1, br, &x, 1, out, 1));
  CHECK_FAILS(emlx_cond(&tp, 1, br, &y, 1, out, 1)); /* operand of another shape */
  CHECK_FAILS(emlx_cond(&tp, 1, br, &x, 1, out, 2)); /* branches return one value */
  const emlx_program *mixed[2] = {one_out, ok};
  CHECK_FAILS(emlx_cond(&tp, 1, mixed, &x, 1, out, 1));
  const emlx_program *nulls[2] = {one_out, NULL};
  CHECK_FAILS(emlx_cond(&tp, 1, nulls, &x, 1, out, 1));
  CHECK_FAILS(emlx_cond(NULL, 1, br, &x, 1, out, 1));
  CHECK(out[0] == NULL);
  /* the iteration bound: a loop that never ends fails, and the next run works */
  emlx_program *forever_cond = emlx_compile(tr_true, NULL, &tpl_s64, 1, 1);
  emlx_program *inc = emlx_compile(tr_inc, NULL, &tpl_s64, 1, 1);
  uint64_t old = emlx_set_while_max_iterations(50);
  emlx_array *k = NULL;
  CHECK_OK(emlx_while(forever_cond, inc, &i0, 1, &k));
  CHECK_FAILS(emlx_eval(&k, 1));
  emlx_eval(&k, 1);
  CHECK_MSG(strstr(emlx_last_error(), "50 iterations") != NULL, "bound named: %s",
            emlx_last_error());
  CHECK(emlx_set_while_max_iterations(old) == 50);
  emlx_release(k);
  emlx_program *c3 = squares_cond(), *b3 = squares_body();
  emlx_array *n = s64(20), *s3[3] = {i0, i0, n}, *r3[3] = {0};
  old = emlx_set_while_max_iterations(20); /* exactly enough */
  CHECK_OK(emlx_while(c3, b3, s3, 3, r3));
  CHECK_EQ_I64(read_i64(r3[1]), squares_ref(20));
  emlx_set_while_max_iterations(old);
  for (int q = 0; q < 3; q++)
    emlx_release(r3[q]);
  emlx_release(n);
  emlx_program_release(c3), emlx_program_release(b3);
  emlx_program_release(forever_cond), emlx_program_release(inc);
  emlx_release(vp), emlx_release(cp), emlx_release(tp);
  emlx_release(i0), emlx_release(x), emlx_release(y);
  emlx_program_release(cond), emlx_program_release(vec), emlx_program_release(bad);
  emlx_program_release(ok), emlx_program_release(one_out);
}

/* ---- templates, and one program with a loop run from several threads ------------------- */

static void test_templates(void) {
  int64_t shape[2] = {3, 5};
  emlx_template t[2] = {tpl_s64, {EMLX_FLOAT32, 2, shape}};
  emlx_program *p = emlx_compile(tr_bump, NULL, t, 2, 2);
  if (!CHECK_NOT_NULL(p))
    return;
  emlx_template got;
  CHECK_OK(emlx_program_input_template(p, 1, &got));
  CHECK(got.dtype == EMLX_FLOAT32 && got.ndim == 2 && got.shape[0] == 3 && got.shape[1] == 5);
  CHECK_OK(emlx_program_output_template(p, 0, &got));
  CHECK(got.dtype == EMLX_INT64 && got.ndim == 0);
  CHECK_FAILS(emlx_program_input_template(p, 2, &got));
  CHECK_FAILS(emlx_program_output_template(p, 2, &got));
  CHECK_FAILS(emlx_program_output_template(NULL, 0, &got));
  CHECK_FAILS(emlx_program_input_template(p, 0, NULL));
  emlx_program_release(p);
}

typedef struct thread_arg {
  const emlx_program *p;
  int64_t first;
  int bad;
} thread_arg;

static void *run_squares(void *v) {
  thread_arg *a = v;
  for (int64_t n = a->first; n < a->first + 40; n++) {
    emlx_array *x = s64(n), *y = NULL;
    if (emlx_program_run(a->p, &x, 1, &y, 1) != 0 || read_i64(y) != squares_ref(n))
      a->bad++;
    emlx_release(x);
    emlx_release(y);
  }
  return NULL;
}

static void test_threads(void) {
  loop_ctx lc = {squares_cond(), squares_body()};
  emlx_program *p =
      lc.cond && lc.body ? emlx_compile(tr_squares_program, &lc, &tpl_s64, 1, 1) : NULL;
  emlx_program_release(lc.cond);
  emlx_program_release(lc.body);
  if (!CHECK_NOT_NULL(p))
    return;
  enum { NT = 6 };
  pthread_t th[NT];
  thread_arg args[NT];
  for (int k = 0; k < NT; k++) {
    args[k] = (thread_arg){p, 17 * k, 0};
    CHECK(pthread_create(&th[k], NULL, run_squares, &args[k]) == 0);
  }
  for (int k = 0; k < NT; k++) {
    pthread_join(th[k], NULL);
    CHECK_MSG(args[k].bad == 0, "thread %d: %d wrong or failed runs", k, args[k].bad);
  }
  emlx_program_release(p);
}

int main(void) {
  test_while_sum_of_squares();
  test_while_decode_cache();
  test_while_in_place();
  test_cond_runs_one_branch();
  test_cond_compiled();
  test_nested();
  test_program_call();
  test_errors();
  test_templates();
  test_threads();
  return tu_finish();
}
