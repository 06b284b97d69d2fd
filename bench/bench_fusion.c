/* bench_fusion.c — benchmarks of fusion at eval and of compiled programs
 * (include/emlx/compile.h).
 *
 * Four expressions on 16M f32 elements — exp(x) * 2 + 1, GELU (erf form),
 * SiLU and a 20-op elementwise chain — each timed three ways: eager with
 * fusion on (`<expr>_f32_16M`: build the graph, eval, release), eager with
 * fusion off (`_nofuse`: every op its own kernel), and as a program compiled
 * once and replayed (`_prog`). Then a graph of 100 small ops on 1K f32
 * elements, rebuilt and evaluated eagerly each repetition (fusion on, and
 * off) against the same graph replayed as a program; their lines carry
 * us_per_op = median time / 100 ops, the per-op overhead.
 *
 * Built as emlx_bench_bench_fusion; run side by side with numpy and MLX's
 * mx.compile by bench/compare.py, whose CASES mirror this table (same names,
 * inputs, seeds). A program case compiles before its warm-up, untimed. One
 * line per case on stdout (see bench/README.md), then a `#` summary of the
 * per-op figures. */
#include <math.h>

#include "bench_harness.h"

#define M16 (INT64_C(16) << 20)
#define F32_BYTES 4.0
#define GRAPH_OPS 100
#define GRAPH_N 1024

#define F32_1D(n, seed_, dist_)                                                                    \
  { .dtype = EMLX_FLOAT32, .ndim = 1, .shape = {(n)}, .seed = (seed_), .dist = (dist_) }

/* ---- the expressions ------------------------------------------------------ */

typedef emlx_array *(*bin_op)(emlx_array *, emlx_array *);
typedef emlx_array *(*un_op)(emlx_array *);

/* t = op(t, scalar), consuming t. */
static emlx_array *with_scalar(bin_op op, emlx_array *t, double v) {
  emlx_array *s = emlx_scalar_tensor(v, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *r = t && s ? op(t, s) : NULL;
  emlx_release(s);
  emlx_release(t);
  return r;
}
/* t = op(t, u), consuming t. */
static emlx_array *with_array(bin_op op, emlx_array *t, emlx_array *u) {
  emlx_array *r = t ? op(t, u) : NULL;
  emlx_release(t);
  return r;
}
/* t = op(t), consuming t. */
static emlx_array *unary(un_op op, emlx_array *t) {
  emlx_array *r = t ? op(t) : NULL;
  emlx_release(t);
  return r;
}
static emlx_array *square(emlx_array *t) { return t ? with_array(emlx_multiply, t, t) : NULL; }

/* exp(x) * 2 + 1 */
static emlx_array *ex_exp2p1(emlx_array *const *in) {
  emlx_array *t = emlx_exp(in[0]);
  t = with_scalar(emlx_multiply, t, 2.0);
  return with_scalar(emlx_add, t, 1.0);
}

/* 0.5 * x * (1 + erf(x * (1 / sqrt(2)))) */
static emlx_array *ex_gelu(emlx_array *const *in) {
  emlx_array *e = unary(emlx_erf, with_scalar(emlx_multiply, emlx_retain(in[0]), M_SQRT1_2));
  e = with_scalar(emlx_add, e, 1.0);
  emlx_array *h = with_scalar(emlx_multiply, emlx_retain(in[0]), 0.5);
  emlx_array *r = h && e ? emlx_multiply(h, e) : NULL;
  emlx_release(h);
  emlx_release(e);
  return r;
}

/* x * sigmoid(x) */
static emlx_array *ex_silu(emlx_array *const *in) {
  emlx_array *s = emlx_sigmoid(in[0]);
  emlx_array *r = s ? emlx_multiply(in[0], s) : NULL;
  emlx_release(s);
  return r;
}

/* Twenty ops, cheap and transcendental, every value finite for x in [-1, 1). */
static emlx_array *ex_chain20(emlx_array *const *in) {
  emlx_array *x = in[0], *t = emlx_retain(x);
  t = with_scalar(emlx_multiply, t, 1.5); /*  1 */
  t = with_scalar(emlx_add, t, 0.25);     /*  2 */
  t = unary(emlx_sin, t);                 /*  3 */
  t = square(t);                          /*  4 */
  t = with_scalar(emlx_add, t, 1.0);      /*  5: [1, 2] */
  t = unary(emlx_sqrt, t);                /*  6 */
  t = unary(emlx_log, t);                 /*  7: [0, 0.35] */
  t = with_scalar(emlx_subtract, t, 0.1); /*  8 */
  t = unary(emlx_exp, t);                 /*  9 */
  t = with_scalar(emlx_multiply, t, 0.5); /* 10 */
  t = unary(emlx_tanh, t);                /* 11 */
  t = with_scalar(emlx_maximum, t, 0.3);  /* 12 */
  t = with_array(emlx_add, t, x);         /* 13 */
  t = unary(emlx_abs, t);                 /* 14 */
  t = with_scalar(emlx_add, t, 1.0);      /* 15 */
  t = unary(emlx_rsqrt, t);               /* 16 */
  t = with_scalar(emlx_multiply, t, 3.0); /* 17 */
  t = unary(emlx_sigmoid, t);             /* 18 */
  t = with_scalar(emlx_subtract, t, 0.5); /* 19 */
  return square(t);                       /* 20 */
}

/* A hundred small ops on a [1024] and b [1024]: in turn t * 0.75, t + b,
 * maximum(t, -1.5), t - 0.125, tanh(t). */
static emlx_array *ex_graph100(emlx_array *const *in) {
  emlx_array *t = emlx_retain(in[0]);
  for (int i = 0; i < GRAPH_OPS && t; i++) {
    switch (i % 5) {
    case 0:
      t = with_scalar(emlx_multiply, t, 0.75);
      break;
    case 1:
      t = with_array(emlx_add, t, in[1]);
      break;
    case 2:
      t = with_scalar(emlx_maximum, t, -1.5);
      break;
    case 3:
      t = with_scalar(emlx_subtract, t, 0.125);
      break;
    default:
      t = unary(emlx_tanh, t);
      break;
    }
  }
  return t;
}

/* ---- three ways to run each ----------------------------------------------- */

/* Compiles expr for the inputs' templates. */
static emlx_program *compile_expr(emlx_trace_fn trace, emlx_array *const *in, int nin) {
  emlx_template t[BENCH_MAX_INPUTS];
  for (int i = 0; i < nin; i++)
    t[i] = (emlx_template){emlx_array_dtype(in[i]), emlx_ndim(in[i]), emlx_shape(in[i])};
  emlx_program *p = emlx_compile(trace, NULL, t, (size_t)nin, 1);
  if (!p)
    fprintf(stderr, "bench: emlx_compile: %s\n", emlx_last_error());
  return p;
}

static emlx_array *run_program(const emlx_program *p, emlx_array *const *in, int nin) {
  emlx_array *out = NULL;
  if (!p || emlx_program_run(p, in, (size_t)nin, &out, 1) != 0)
    return NULL;
  return out;
}

/* For expression NAME of NIN inputs: NAME_fused, NAME_nofuse (eager builds,
 * the switch set before the eval that follows), NAME_trace, NAME_prepare
 * (compiles the program) and NAME_prog (runs it). */
#define EXPR_MODES(NAME, NIN)                                                                      \
  static emlx_array *NAME##_fused(emlx_array *const *in) {                                         \
    emlx_set_fusion_enabled(true);                                                                 \
    return ex_##NAME(in);                                                                          \
  }                                                                                                \
  static emlx_array *NAME##_nofuse(emlx_array *const *in) {                                        \
    emlx_set_fusion_enabled(false);                                                                \
    return ex_##NAME(in);                                                                          \
  }                                                                                                \
  static int NAME##_trace(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,          \
                          size_t nout) {                                                           \
    (void)ctx, (void)nin, (void)nout;                                                              \
    out[0] = ex_##NAME(in);                                                                        \
    return out[0] ? 0 : -1;                                                                        \
  }                                                                                                \
  static emlx_program *NAME##_program;                                                             \
  static int NAME##_prepare(emlx_array *const *in) {                                               \
    emlx_set_fusion_enabled(true);                                                                 \
    if (!NAME##_program)                                                                           \
      NAME##_program = compile_expr(NAME##_trace, in, (NIN));                                      \
    return NAME##_program ? 0 : -1;                                                                \
  }                                                                                                \
  static emlx_array *NAME##_prog(emlx_array *const *in) {                                          \
    return run_program(NAME##_program, in, (NIN));                                                 \
  }

EXPR_MODES(exp2p1, 1)
EXPR_MODES(gelu, 1)
EXPR_MODES(silu, 1)
EXPR_MODES(chain20, 1)
EXPR_MODES(graph100, 2)

/* ---- the table ------------------------------------------------------------------ */

typedef struct fz_case {
  bench_case c;
  int (*prepare)(emlx_array *const *in); /* untimed, before the warm-up; may be NULL */
  int ops;                               /* > 0: report us_per_op = median / ops */
} fz_case;

#define BIG(name_, what_, seed_, build_, prep_)                                                    \
  {                                                                                                \
    .c = {.name = (name_),                                                                         \
          .what = (what_),                                                                         \
          .bytes = 2.0 * F32_BYTES * (double)M16,                                                  \
          .ninputs = 1,                                                                            \
          .inputs = {F32_1D(M16, (seed_), BENCH_SYM)},                                             \
          .build = (build_)},                                                                      \
    .prepare = (prep_)                                                                             \
  }
#define SMALL(name_, what_, build_, prep_)                                                         \
  {                                                                                                \
    .c = {.name = (name_),                                                                         \
          .what = (what_),                                                                         \
          .ninputs = 2,                                                                            \
          .inputs = {F32_1D(GRAPH_N, 611, BENCH_SYM), F32_1D(GRAPH_N, 612, BENCH_SYM)},            \
          .build = (build_)},                                                                      \
    .prepare = (prep_), .ops = GRAPH_OPS                                                           \
  }

#define W_EXP "exp(x) * 2 + 1, x f32 [16M] in [-1, 1)"
#define W_GELU "0.5 * x * (1 + erf(x / sqrt(2))), x f32 [16M] in [-1, 1)"
#define W_SILU "x * sigmoid(x), x f32 [16M] in [-1, 1)"
#define W_CHAIN "20 elementwise ops (sin sqrt log exp tanh rsqrt sigmoid ...), x f32 [16M]"
#define W_GRAPH "100 ops (* 0.75, + b, maximum -1.5, - 0.125, tanh) on a, b f32 [1024]"

static const fz_case cases[] = {
    BIG("exp2p1_fused_f32_16M", W_EXP "; eager, fusion on", 601, exp2p1_fused, NULL),
    BIG("exp2p1_prog_f32_16M", W_EXP "; compiled program", 601, exp2p1_prog, exp2p1_prepare),
    BIG("exp2p1_nofuse_f32_16M", W_EXP "; eager, fusion off", 601, exp2p1_nofuse, NULL),
    BIG("gelu_fused_f32_16M", W_GELU "; eager, fusion on", 602, gelu_fused, NULL),
    BIG("gelu_prog_f32_16M", W_GELU "; compiled program", 602, gelu_prog, gelu_prepare),
    BIG("gelu_nofuse_f32_16M", W_GELU "; eager, fusion off", 602, gelu_nofuse, NULL),
    BIG("silu_fused_f32_16M", W_SILU "; eager, fusion on", 603, silu_fused, NULL),
    BIG("silu_prog_f32_16M", W_SILU "; compiled program", 603, silu_prog, silu_prepare),
    BIG("silu_nofuse_f32_16M", W_SILU "; eager, fusion off", 603, silu_nofuse, NULL),
    BIG("chain20_fused_f32_16M", W_CHAIN "; eager, fusion on", 604, chain20_fused, NULL),
    BIG("chain20_prog_f32_16M", W_CHAIN "; compiled program", 604, chain20_prog, chain20_prepare),
    BIG("chain20_nofuse_f32_16M", W_CHAIN "; eager, fusion off", 604, chain20_nofuse, NULL),
    SMALL("graph100_fused_f32_1K", W_GRAPH "; rebuilt and evaluated, fusion on", graph100_fused,
          NULL),
    SMALL("graph100_prog_f32_1K", W_GRAPH "; compiled program", graph100_prog, graph100_prepare),
    SMALL("graph100_nofuse_f32_1K", W_GRAPH "; rebuilt and evaluated, fusion off", graph100_nofuse,
          NULL),
};
#define NCASES (sizeof cases / sizeof cases[0])

/* ---- running: bench_run_case_ex with prepare and us_per_op ------------------------- */

static double medians[NCASES];

static int fz_run_case(size_t k, const bench_options *opt) {
  bench_run_extra x = {cases[k].prepare, cases[k].ops, &medians[k]};
  int rc = bench_run_case_ex(&cases[k].c, opt, &x);
  emlx_set_fusion_enabled(true);
  return rc;
}

static size_t find_case(const char *name) {
  size_t i = 0;
  while (i < NCASES && strcmp(cases[i].c.name, name) != 0)
    i++;
  return i;
}

/* "# <expr>: fused X ms, program Y ms, unfused Z ms; fusion speedup Z/X" for
 * each expression whose three cases ran. */
static void print_summary(void) {
  static const char *exprs[5] = {"exp2p1", "gelu", "silu", "chain20", "graph100"};
  for (int e = 0; e < 5; e++) {
    char n[64];
    double m[3];
    static const char *mode[3] = {"fused", "prog", "nofuse"};
    bool all = true;
    for (int k = 0; k < 3; k++) {
      snprintf(n, sizeof n, "%s_%s_f32_%s", exprs[e], mode[k], e == 4 ? "1K" : "16M");
      size_t i = find_case(n);
      m[k] = i < NCASES ? medians[i] : 0.0;
      all &= m[k] > 0.0;
    }
    if (!all)
      continue;
    if (e == 4)
      printf("# graph100 per-op overhead: eager fused %.3f us, program %.3f us, eager unfused "
             "%.3f us (eager/program %.2fx)\n",
             m[0] * 1e3 / GRAPH_OPS, m[1] * 1e3 / GRAPH_OPS, m[2] * 1e3 / GRAPH_OPS, m[0] / m[1]);
    else
      printf("# %s: eager fused %.3f ms, program %.3f ms, eager unfused %.3f ms (fusion speedup "
             "%.2fx, program %.2fx)\n",
             exprs[e], m[0], m[1], m[2], m[2] / m[0], m[2] / m[1]);
  }
}

static const char *fz_name(const void *ctx, size_t i) {
  (void)ctx;
  return cases[i].c.name;
}
static const char *fz_what(const void *ctx, size_t i) {
  (void)ctx;
  return cases[i].c.what;
}
static int fz_run(const void *ctx, size_t i, const bench_options *opt) {
  (void)ctx;
  return fz_run_case(i, opt);
}

int main(int argc, char **argv) {
  bench_suite suite = {NCASES, NULL, fz_name, fz_what, fz_run};
  int rc = bench_main_suite(argc, argv, &suite);
  print_summary();
  emlx_program_release(exp2p1_program);
  emlx_program_release(gelu_program);
  emlx_program_release(silu_program);
  emlx_program_release(chain20_program);
  emlx_program_release(graph100_program);
  return rc;
}
