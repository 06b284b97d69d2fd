/* test_compile.c — programs (include/emlx/compile.h): emlx_compile traces a
 * function once, emlx_program_run replays it.
 *
 * A program's outputs must equal the eager evaluation of the same function
 * on the same inputs (within 1 ulp for floats, exact otherwise) and an f64
 * reference computed here, on several inputs: elementwise chains, GELU (erf
 * form), SiLU, a function mixing matmul / sum / reshape / transpose with
 * elementwise work, several outputs, an output that is an input, an output
 * that is a constant. Also: the CSE / constant / no-op counters of
 * emlx_program_get_info on a trace built to have them, and no merge of
 * nodes that differ only in a parameter (axis, keepdims, dtype, shape, scalar
 * value, slice bound, scan direction); template mismatches
 * (dtype, shape, count, NULL) fail with a clear message and leave the
 * outputs untouched; failing traces fail the compile; inputs are never
 * modified (also when the caller holds their only reference); eight threads
 * running one program at once; a run that hits the memory limit fails and
 * the next one succeeds; retain / release; strided, sliced and lazy inputs.
 * CTest runs the program at every ISA level (EMLX_ISA). */
#include <pthread.h>

#include "test_util.h"

enum { R = 16, C = 33, K = 24, N = 20 };

/* ---- comparisons --------------------------------------------------------------- */

static bool is_nan_bits(emlx_dtype d, uint64_t b) {
  switch (d) {
  case EMLX_FLOAT16:
    return (b & 0x7C00) == 0x7C00 && (b & 0x3FF);
  case EMLX_BFLOAT16:
    return (b & 0x7F80) == 0x7F80 && (b & 0x7F);
  case EMLX_FLOAT32:
    return (b & 0x7F800000u) == 0x7F800000u && (b & 0x7FFFFFu);
  default:
    return (b & 0x7FF0000000000000ull) == 0x7FF0000000000000ull && (b & 0xFFFFFFFFFFFFFull);
  }
}

static uint64_t ulp_dist(uint64_t a, uint64_t b, int w) {
  uint64_t sign = 1ull << (w - 1);
  int64_t ka = (a & sign) ? -(int64_t)(a & ~sign) : (int64_t)a;
  int64_t kb = (b & sign) ? -(int64_t)(b & ~sign) : (int64_t)b;
  return ka > kb ? (uint64_t)(ka - kb) : (uint64_t)(kb - ka);
}

static bool lane_ok(emlx_dtype d, const unsigned char *pa, const unsigned char *pb, size_t w) {
  uint64_t a = 0, b = 0;
  memcpy(&a, pa, w);
  memcpy(&b, pb, w);
  if (is_nan_bits(d, a) || is_nan_bits(d, b))
    return is_nan_bits(d, a) && is_nan_bits(d, b);
  return ulp_dist(a, b, (int)(8 * w)) <= 1;
}

/* want (eager) against got (program): dtype, shape, and values (1 ulp for
 * floats, exact otherwise). */
static bool same_values_at(emlx_array *want, emlx_array *got, const char *what, const char *file,
                           int line) {
  if (!tu_record(want && got, file, line, "%s: both arrays exist", what))
    return false;
  emlx_dtype d = emlx_array_dtype(want);
  bool meta = emlx_array_dtype(got) == d && emlx_ndim(got) == emlx_ndim(want);
  for (int i = 0; meta && i < emlx_ndim(want); i++)
    meta = emlx_shape(want)[i] == emlx_shape(got)[i];
  if (!tu_record(meta, file, line, "%s: dtype %s / shape match (got %s, ndim %d vs %d)", what,
                 tu_dname(d), tu_dname(emlx_array_dtype(got)), emlx_ndim(got), emlx_ndim(want)))
    return false;
  unsigned char *rw = tu_read_raw_at(want, file, line), *rg = tu_read_raw_at(got, file, line);
  int64_t n = emlx_size(want), bad = 0;
  size_t es = tu_dsize(d);
  for (int64_t i = 0; rw && rg && i < n; i++) {
    const unsigned char *pw = rw + (size_t)i * es, *pg = rg + (size_t)i * es;
    bool e = d == EMLX_COMPLEX64
                 ? lane_ok(EMLX_FLOAT32, pw, pg, 4) && lane_ok(EMLX_FLOAT32, pw + 4, pg + 4, 4)
             : tu_is_float(d) ? lane_ok(d, pw, pg, es)
                              : memcmp(pw, pg, es) == 0;
    if (!e && bad++ < 3)
      fprintf(stderr, "%s:%d: %s element %" PRId64 ": eager %.17g, program %.17g\n", file, line,
              what, i, tu_load(pw, d), tu_load(pg, d));
  }
  bool ok = rw && rg;
  free(rw), free(rg);
  return ok && tu_record(bad == 0, file, line, "%s: %" PRId64 " of %" PRId64 " elements differ",
                         what, bad, n);
}
#define same_values(w, g, what) same_values_at((w), (g), (what), __FILE__, __LINE__)

/* got (any float dtype) against an f64 reference: |g - r| <= tol * max(1, |r|). */
static bool close_to_at(emlx_array *got, const double *ref, double tol, const char *what,
                        const char *file, int line) {
  double *g = tu_read_at(got, file, line);
  if (!g)
    return false;
  int64_t n = emlx_size(got), bad = 0;
  for (int64_t i = 0; i < n; i++)
    if (!(fabs(g[i] - ref[i]) <= tol * fmax(1.0, fabs(ref[i]))) && bad++ < 3)
      fprintf(stderr, "%s:%d: %s element %" PRId64 ": got %.9g, want %.9g\n", file, line, what, i,
              g[i], ref[i]);
  free(g);
  return tu_record(bad == 0, file, line, "%s against f64: %" PRId64 " of %" PRId64 " off", what,
                   bad, n);
}
#define close_to(g, ref, tol, what) close_to_at((g), (ref), (tol), (what), __FILE__, __LINE__)

/* ---- inputs -------------------------------------------------------------------- */

static emlx_array *rand_f32(const int64_t *shape, int ndim, double lo, double hi, tu_rng *r) {
  int64_t n = tu_numel(shape, ndim);
  float *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  for (int64_t i = 0; i < n; i++)
    v[i] = (float)tu_uniform(r, lo, hi);
  emlx_array *a = emlx_from_blob(v, EMLX_FLOAT32, shape, ndim, EMLX_CPU);
  free(v);
  return a;
}

static emlx_array *scalar32(double v) { return emlx_scalar_tensor(v, EMLX_FLOAT32, EMLX_CPU); }

/* Eager: calls fn on the real inputs and evaluates its outputs. */
static int eager(emlx_trace_fn fn, void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                 size_t nout) {
  for (size_t i = 0; i < nout; i++)
    out[i] = NULL;
  if (fn(ctx, in, nin, out, nout) != 0)
    return -1;
  return emlx_eval(out, nout);
}

static void release_all(emlx_array **a, size_t n) {
  for (size_t i = 0; i < n; i++) {
    emlx_release(a[i]);
    a[i] = NULL;
  }
}

/* ---- trace functions -------------------------------------------------------------- */

/* exp(x) * 2 + 1 */
static int tr_exp2p1(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out, size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  emlx_array *two = scalar32(2), *one = scalar32(1);
  emlx_array *e = emlx_exp(in[0]), *m = emlx_multiply(e, two);
  out[0] = emlx_add(m, one);
  emlx_release(two), emlx_release(one), emlx_release(e), emlx_release(m);
  return out[0] ? 0 : -1;
}

/* exp(x) * 2 + 1 - y * sin(x) / (1 + y * y) */
static int tr_chain(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out, size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  emlx_array *two = scalar32(2), *one = scalar32(1);
  emlx_array *e = emlx_exp(in[0]), *m = emlx_multiply(e, two), *a = emlx_add(m, one);
  emlx_array *s = emlx_sin(in[0]), *ys = emlx_multiply(in[1], s), *yy = emlx_multiply(in[1], in[1]);
  emlx_array *den = emlx_add(yy, one), *q = emlx_divide(ys, den);
  out[0] = emlx_subtract(a, q);
  emlx_release(two), emlx_release(one), emlx_release(e), emlx_release(m), emlx_release(a);
  emlx_release(s), emlx_release(ys), emlx_release(yy), emlx_release(den), emlx_release(q);
  return out[0] ? 0 : -1;
}
static double ref_chain(double x, double y) {
  return (double)(float)(exp(x) * 2 + 1) - y * sin(x) / (1 + y * y);
}

/* GELU, erf form: 0.5 * x * (1 + erf(x / sqrt(2))) */
static int tr_gelu(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out, size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  emlx_array *half = scalar32(0.5), *one = scalar32(1), *rs2 = scalar32(1.0 / sqrt(2.0));
  emlx_array *t = emlx_multiply(in[0], rs2), *e = emlx_erf(t), *p = emlx_add(e, one);
  emlx_array *hx = emlx_multiply(half, in[0]);
  out[0] = emlx_multiply(hx, p);
  emlx_release(half), emlx_release(one), emlx_release(rs2), emlx_release(t), emlx_release(e);
  emlx_release(p), emlx_release(hx);
  return out[0] ? 0 : -1;
}
static double ref_gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }

/* SiLU: x * sigmoid(x) */
static int tr_silu(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out, size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  emlx_array *s = emlx_sigmoid(in[0]);
  out[0] = emlx_multiply(in[0], s);
  emlx_release(s);
  return out[0] ? 0 : -1;
}
static double ref_silu(double x) { return x / (1 + exp(-x)); }

/* a [R, K], b [K, N], c [N]:
 *   m = tanh(a @ b + c)                       [R, N]
 *   out0 = reshape(transpose(m * sum(m, 1, keep)), [N * R])
 *   out1 = sum(a * a)                          0-d */
static int tr_mixed(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out, size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  int ax = 1;
  int64_t flat = (int64_t)N * R;
  emlx_array *mm = emlx_matmul(in[0], in[1]), *pc = emlx_add(mm, in[2]), *m = emlx_tanh(pc);
  emlx_array *s = emlx_sum(m, &ax, 1, true), *ms = emlx_multiply(m, s);
  emlx_array *tt = emlx_transpose(ms, NULL, 0);
  out[0] = emlx_reshape(tt, &flat, 1);
  emlx_array *aa = emlx_multiply(in[0], in[0]);
  out[1] = emlx_sum(aa, NULL, 0, false);
  emlx_release(mm), emlx_release(pc), emlx_release(m), emlx_release(s), emlx_release(ms);
  emlx_release(tt), emlx_release(aa);
  return out[0] && out[1] ? 0 : -1;
}

/* several outputs: x + y, x * y, exp(x), the input y itself, a constant
 * full([R, C], 3), and a 0-d constant 2 + 5 */
static int tr_multi(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out, size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  int64_t sh[2] = {R, C};
  out[0] = emlx_add(in[0], in[1]);
  out[1] = emlx_multiply(in[0], in[1]);
  out[2] = emlx_exp(in[0]);
  out[3] = emlx_retain(in[1]);
  out[4] = emlx_full(sh, 2, 3.0, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *a = scalar32(2), *b = scalar32(5);
  out[5] = emlx_add(a, b);
  emlx_release(a), emlx_release(b);
  for (int i = 0; i < 6; i++)
    if (!out[i])
      return -1;
  return 0;
}

/* ---- programs equal eager evaluation ----------------------------------------------- */

static emlx_program *compile_f32(emlx_trace_fn fn, void *ctx, const int64_t *const *shapes,
                                 const int *ndims, size_t nin, size_t nout) {
  emlx_template t[4];
  for (size_t i = 0; i < nin; i++)
    t[i] = (emlx_template){EMLX_FLOAT32, ndims[i], shapes[i]};
  return emlx_compile(fn, ctx, t, nin, nout);
}

/* Runs p and fn eagerly on in, compares every output; returns the program's
 * outputs in got (caller releases) when got is non-NULL. */
static void check_run_at(const emlx_program *p, emlx_trace_fn fn, emlx_array *const *in, size_t nin,
                         size_t nout, emlx_array **got_out, const char *what, const char *file,
                         int line) {
  emlx_array *got[8] = {0}, *want[8] = {0};
  int rc = emlx_program_run(p, in, nin, got, nout);
  tu_record(rc == 0, file, line, "%s: program runs (%d)", what, rc);
  tu_record(eager(fn, NULL, in, nin, want, nout) == 0, file, line, "%s: eager runs", what);
  char w[160];
  for (size_t i = 0; rc == 0 && i < nout; i++) {
    snprintf(w, sizeof w, "%s output %zu", what, i);
    tu_record(got[i] && emlx_is_evaluated(got[i]), file, line, "%s is ready", w);
    same_values_at(want[i], got[i], w, file, line);
  }
  release_all(want, nout);
  if (got_out)
    memcpy(got_out, got, nout * sizeof *got);
  else
    release_all(got, nout);
}
#define check_run(p, fn, in, nin, nout, got, what)                                                 \
  check_run_at((p), (fn), (in), (nin), (nout), (got), (what), __FILE__, __LINE__)

static void test_elementwise_programs(void) {
  tu_rng r = {11};
  int64_t sh[2] = {R, C};
  const int64_t *shapes[2] = {sh, sh};
  int nd[2] = {2, 2};
  char what[96];

  emlx_program *p = compile_f32(tr_exp2p1, NULL, shapes, nd, 1, 1);
  CHECK_NOT_NULL(p);
  emlx_program_info info;
  if (p && CHECK(emlx_program_get_info(p, &info) == 0)) {
    CHECK_MSG(info.ninputs == 1 && info.noutputs == 1, "exp2p1 info: 1 in, 1 out");
    CHECK_MSG(info.steps == 1 && info.fused_regions == 1 && info.fused_ops == 3,
              "exp(x)*2+1 is one fused step of 3 ops (steps %zu, regions %zu, ops %zu)", info.steps,
              info.fused_regions, info.fused_ops);
  }
  for (int k = 0; p && k < 3; k++) {
    emlx_array *x = rand_f32(sh, 2, -4, 4, &r), *got = NULL;
    snprintf(what, sizeof what, "exp(x)*2+1 input %d", k);
    check_run(p, tr_exp2p1, &x, 1, 1, &got, what);
    double *xv = tu_read(x), ref[R * C];
    for (int i = 0; xv && i < R * C; i++)
      ref[i] = exp(xv[i]) * 2 + 1;
    if (xv && got)
      close_to(got, ref, 4e-7, what);
    free(xv);
    emlx_release(got), emlx_release(x);
  }
  emlx_program_release(p);

  p = compile_f32(tr_chain, NULL, shapes, nd, 2, 1);
  CHECK_NOT_NULL(p);
  for (int k = 0; p && k < 3; k++) {
    emlx_array *in[2] = {rand_f32(sh, 2, -3, 3, &r), rand_f32(sh, 2, -3, 3, &r)}, *got = NULL;
    snprintf(what, sizeof what, "chain input %d", k);
    check_run(p, tr_chain, in, 2, 1, &got, what);
    double *xv = tu_read(in[0]), *yv = tu_read(in[1]), ref[R * C];
    for (int i = 0; xv && yv && i < R * C; i++)
      ref[i] = ref_chain(xv[i], yv[i]);
    if (xv && yv && got)
      close_to(got, ref, 2e-6, what);
    free(xv), free(yv);
    emlx_release(got), emlx_release(in[0]), emlx_release(in[1]);
  }
  emlx_program_release(p);

  struct {
    const char *name;
    emlx_trace_fn fn;
    double (*ref)(double);
  } acts[2] = {{"gelu", tr_gelu, ref_gelu}, {"silu", tr_silu, ref_silu}};
  for (int a = 0; a < 2; a++) {
    int64_t big[1] = {5000};
    const int64_t *bs[1] = {big};
    int nd1[1] = {1};
    p = compile_f32(acts[a].fn, NULL, bs, nd1, 1, 1);
    CHECK_NOT_NULL(p);
    if (p && CHECK(emlx_program_get_info(p, &info) == 0))
      CHECK_MSG(info.steps == 1 && info.fused_regions == 1, "%s is one fused step (steps %zu)",
                acts[a].name, info.steps);
    for (int k = 0; p && k < 3; k++) {
      emlx_array *x = rand_f32(big, 1, -6, 6, &r), *got = NULL;
      snprintf(what, sizeof what, "%s input %d", acts[a].name, k);
      check_run(p, acts[a].fn, &x, 1, 1, &got, what);
      double *xv = tu_read(x), *ref = malloc(sizeof(double) * 5000);
      for (int i = 0; xv && i < 5000; i++)
        ref[i] = acts[a].ref(xv[i]);
      if (xv && got)
        close_to(got, ref, 2e-6, what);
      free(xv), free(ref);
      emlx_release(got), emlx_release(x);
    }
    emlx_program_release(p);
  }
}

static void test_mixed_program(void) {
  tu_rng r = {12};
  int64_t sa[2] = {R, K}, sb[2] = {K, N}, sc[1] = {N};
  const int64_t *shapes[3] = {sa, sb, sc};
  int nd[3] = {2, 2, 1};
  emlx_program *p = compile_f32(tr_mixed, NULL, shapes, nd, 3, 2);
  CHECK_NOT_NULL(p);
  for (int k = 0; p && k < 3; k++) {
    emlx_array *in[3] = {rand_f32(sa, 2, -1, 1, &r), rand_f32(sb, 2, -1, 1, &r),
                         rand_f32(sc, 1, -1, 1, &r)};
    emlx_array *got[2] = {0};
    char what[64];
    snprintf(what, sizeof what, "matmul/sum/reshape/transpose input %d", k);
    check_run(p, tr_mixed, in, 3, 2, got, what);
    double *a = tu_read(in[0]), *b = tu_read(in[1]), *c = tu_read(in[2]);
    if (a && b && c && got[0] && got[1]) {
      double m[R * N], s[R], ref0[N * R], ref1 = 0;
      for (int i = 0; i < R; i++) {
        s[i] = 0;
        for (int j = 0; j < N; j++) {
          double acc = 0;
          for (int q = 0; q < K; q++)
            acc += a[i * K + q] * b[q * N + j];
          m[i * N + j] = tanh(acc + c[j]);
          s[i] += m[i * N + j];
        }
      }
      for (int j = 0; j < N; j++) /* transpose: [N, R] */
        for (int i = 0; i < R; i++)
          ref0[j * R + i] = m[i * N + j] * s[i];
      for (int i = 0; i < R * K; i++)
        ref1 += a[i] * a[i];
      CHECK(emlx_ndim(got[0]) == 1 && emlx_dim(got[0], 0) == N * R && emlx_ndim(got[1]) == 0);
      close_to(got[0], ref0, 1e-4, what);
      close_to(got[1], &ref1, 1e-5, what);
    }
    free(a), free(b), free(c);
    release_all(got, 2);
    release_all(in, 3);
  }
  emlx_program_release(p);
}

/* out = exp(s) where u, s, vt = svd(x) and the trace released u and vt
 * (their node's other outputs): the program must compute the singular
 * values alone, as eager evaluation does. */
static int tr_svd_values(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                         size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  emlx_array *u = NULL, *sv = NULL, *vt = NULL;
  if (emlx_linalg_svd(in[0], true, false, &u, &sv, &vt) != 0)
    return -1;
  emlx_release(u), emlx_release(vt);
  out[0] = emlx_exp(sv);
  emlx_release(sv);
  return out[0] ? 0 : -1;
}

static void test_released_sibling_outputs(void) {
  int64_t sh[2] = {7, 5};
  const int64_t *shapes[1] = {sh};
  int nd[1] = {2};
  emlx_program *p = compile_f32(tr_svd_values, NULL, shapes, nd, 1, 1);
  if (!CHECK_NOT_NULL(p))
    return;
  tu_rng r = {31};
  for (int k = 0; k < 2; k++) {
    emlx_array *in[1] = {rand_f32(sh, 2, -1, 1, &r)};
    check_run(p, tr_svd_values, in, 1, 1, NULL, "svd with U and Vt released in the trace");
    release_all(in, 1);
  }
  emlx_program_release(p);
}

static void test_multi_output_program(void) {
  tu_rng r = {13};
  int64_t sh[2] = {R, C};
  const int64_t *shapes[2] = {sh, sh};
  int nd[2] = {2, 2};
  emlx_program *p = compile_f32(tr_multi, NULL, shapes, nd, 2, 6);
  CHECK_NOT_NULL(p);
  emlx_program_info info;
  if (p && CHECK(emlx_program_get_info(p, &info) == 0))
    CHECK_MSG(info.ninputs == 2 && info.noutputs == 6, "multi info: 2 in, 6 out (%zu, %zu)",
              info.ninputs, info.noutputs);
  for (int k = 0; p && k < 3; k++) {
    emlx_array *in[2] = {rand_f32(sh, 2, -2, 2, &r), rand_f32(sh, 2, -2, 2, &r)};
    emlx_array *got[6] = {0};
    check_run(p, tr_multi, in, 2, 6, got, "multiple outputs");
    double *x = tu_read(in[0]), *y = tu_read(in[1]);
    if (x && y && got[5]) {
      double r0[R * C], r1[R * C], r2[R * C], r4[R * C], r5 = 7;
      for (int i = 0; i < R * C; i++)
        r0[i] = x[i] + y[i], r1[i] = x[i] * y[i], r2[i] = exp(x[i]), r4[i] = 3;
      close_to(got[0], r0, 1e-7, "x + y");
      close_to(got[1], r1, 1e-7, "x * y");
      close_to(got[2], r2, 4e-7, "exp(x)");
      tu_check_array(got[3], EMLX_FLOAT32, sh, 2, y, 0, "an output that is an input");
      tu_check_array(got[4], EMLX_FLOAT32, sh, 2, r4, 0, "a constant output");
      tu_check_array(got[5], EMLX_FLOAT32, NULL, 0, &r5, 0, "a 0-d constant output 2 + 5");
    }
    free(x), free(y);
    release_all(got, 6);
    release_all(in, 2);
  }
  emlx_program_release(p);
}

/* ---- what the compiler made of the trace ------------------------------------------ */

typedef struct simp_ctx {
  int noop_nodes; /* no-op calls that returned a new handle */
} simp_ctx;

/* out = sin(exp(x)) + sin(exp(x)) (two merges) times (2 + 3) (a constant
 * subgraph), through reshape / transpose / astype / broadcast_to / copy
 * calls that change nothing. */
static int tr_simplify(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                       size_t nout) {
  (void)nin, (void)nout;
  simp_ctx *sc = ctx;
  emlx_array *e1 = emlx_exp(in[0]), *e2 = emlx_exp(in[0]);
  emlx_array *s1 = emlx_sin(e1), *s2 = emlx_sin(e2), *a = emlx_add(s1, s2);
  emlx_array *two = scalar32(2), *three = scalar32(3), *five = emlx_add(two, three);
  emlx_array *m = emlx_multiply(a, five);
  int64_t sh[2] = {R, C};
  int perm[2] = {0, 1};
  emlx_array *chain[5];
  chain[0] = emlx_reshape(m, sh, 2);
  chain[1] = emlx_transpose(chain[0], perm, 2);
  chain[2] = emlx_astype(chain[1], EMLX_FLOAT32);
  chain[3] = emlx_broadcast_to(chain[2], sh, 2);
  chain[4] = emlx_copy(chain[3]);
  sc->noop_nodes = (chain[0] != m) + (chain[1] != chain[0]) + (chain[2] != chain[1]) +
                   (chain[3] != chain[2]) + (chain[4] != chain[3]);
  emlx_array *one = scalar32(1);
  out[0] = emlx_add(chain[4], one);
  emlx_release(e1), emlx_release(e2), emlx_release(s1), emlx_release(s2), emlx_release(a);
  emlx_release(two), emlx_release(three), emlx_release(five), emlx_release(m), emlx_release(one);
  for (int i = 0; i < 5; i++)
    emlx_release(chain[i]);
  return out[0] ? 0 : -1;
}

static void test_program_info(void) {
  int64_t sh[2] = {R, C};
  emlx_template t = {EMLX_FLOAT32, 2, sh};
  simp_ctx sc = {0};
  emlx_program *p = emlx_compile(tr_simplify, &sc, &t, 1, 1);
  CHECK_NOT_NULL(p);
  emlx_program_info info;
  memset(&info, 0xFF, sizeof info);
  if (!p || !CHECK(emlx_program_get_info(p, &info) == 0)) {
    emlx_program_release(p);
    return;
  }
  fprintf(stderr,
          "simplify info: traced %zu steps %zu regions %zu fused_ops %zu constants %zu cse %zu "
          "noops %zu (no-op calls that made a node: %d)\n",
          info.traced_ops, info.steps, info.fused_regions, info.fused_ops, info.constants,
          info.cse_merged, info.noops_removed, sc.noop_nodes);
  CHECK_MSG(info.cse_merged >= 2 && info.cse_merged <= 3,
            "CSE merged the duplicate exp and sin (got %zu)", info.cse_merged);
  CHECK_MSG(info.constants >= 1, "the constant 2 + 3 was evaluated at compile time (got %zu)",
            info.constants);
  CHECK_MSG(info.noops_removed == (size_t)sc.noop_nodes,
            "no-op reshape/transpose/astype/broadcast/copy removed: %zu (want %d)",
            info.noops_removed, sc.noop_nodes);
  CHECK_MSG(info.traced_ops >= 7 && info.steps >= 1 && info.steps < info.traced_ops,
            "traced %zu ops into %zu steps", info.traced_ops, info.steps);
  CHECK_MSG(info.fused_regions >= 1 && info.fused_regions <= info.steps,
            "fused regions %zu of %zu steps", info.fused_regions, info.steps);
  /* and the simplified program still computes the function */
  tu_rng r = {14};
  emlx_array *x = rand_f32(sh, 2, -1, 1, &r), *got = NULL;
  CHECK_OK(emlx_program_run(p, &x, 1, &got, 1));
  double *xv = tu_read(x), ref[R * C];
  for (int i = 0; xv && i < R * C; i++)
    ref[i] = 2 * sin(exp(xv[i])) * 5 + 1;
  if (xv && got)
    close_to(got, ref, 1e-6, "simplified program");
  free(xv);
  emlx_release(got), emlx_release(x);
  emlx_program_release(p);
  CHECK_FAILS(emlx_program_get_info(NULL, &info));
}

/* A program's work is emlx_eval_within's measure of the same graph: a
 * matmul counts its output elements times the contracted length (a {4, 64} x
 * {64, 64} product is small work, not 64 times its weight matrix), a sort
 * its elements times their log. */
static int tr_mm_sort(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                      size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  out[0] = emlx_matmul(in[0], in[1]);
  out[1] = emlx_sort(in[0], 1, NULL);
  return out[0] && out[1] ? 0 : -1;
}

static void test_work_matches_eval_estimate(void) {
  enum { WM = 4, WK = 64, WN = 64 };
  int64_t sa[2] = {WM, WK}, sb[2] = {WK, WN};
  emlx_template t[2] = {{EMLX_FLOAT32, 2, sa}, {EMLX_FLOAT32, 2, sb}};
  emlx_program *p = emlx_compile(tr_mm_sort, NULL, t, 2, 2);
  emlx_program_info info;
  if (!CHECK_NOT_NULL(p) || !CHECK(emlx_program_get_info(p, &info) == 0)) {
    emlx_program_release(p);
    return;
  }
  tu_rng r = {21};
  emlx_array *in[2] = {rand_f32(sa, 2, -1, 1, &r), rand_f32(sb, 2, -1, 1, &r)}, *lazy[2] = {0};
  CHECK_OK(emlx_eval(in, 2));
  CHECK_OK(tr_mm_sort(NULL, in, 2, lazy, 2));
  emlx_work_estimate est = {0, 0};
  emlx_eval_within(lazy, 2, 1000, INT64_MAX, &est);
  /* matmul: reads M*K + K*N, writes M*N, M*N*K products; sort: (M*K + M*K) * log2 */
  int64_t sort_log = 1;
  while (((int64_t)1 << sort_log) < WM * WK + 1)
    sort_log++;
  int64_t want = (WM * WK + WK * WN + WM * WN + (int64_t)WM * WN * WK) + 2 * WM * WK * sort_log;
  CHECK_MSG(info.steps == 2, "matmul and sort are two steps (got %zu)", info.steps);
  CHECK_MSG(est.work == want, "eval estimate %lld, want %lld", (long long)est.work,
            (long long)want);
  CHECK_MSG(info.work == want, "program work %lld, want %lld (the eval estimate)",
            (long long)info.work, (long long)want);
  emlx_release(lazy[0]), emlx_release(lazy[1]);
  emlx_release(in[0]), emlx_release(in[1]);
  emlx_program_release(p);
}

/* out = x * a + x * b with a and b separate scalar constants of equal value
 * (and c of another value, read once): a and b become one constant, so the
 * two products are one common subexpression. */
static int tr_equal_scalars(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                            size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  emlx_array *a = emlx_scalar_tensor(3.0, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *b = emlx_scalar_tensor(3.0, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *c = emlx_scalar_tensor(-3.0, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *xa = emlx_multiply(in[0], a), *xb = emlx_multiply(in[0], b);
  emlx_array *s = emlx_add(xa, xb);
  out[0] = emlx_add(s, c);
  emlx_release(a), emlx_release(b), emlx_release(c);
  emlx_release(xa), emlx_release(xb), emlx_release(s);
  return out[0] ? 0 : -1;
}

static void test_scalar_merge(void) {
  int64_t sh[2] = {R, C};
  emlx_template t = {EMLX_FLOAT32, 2, sh};
  emlx_program *p = emlx_compile(tr_equal_scalars, NULL, &t, 1, 1);
  emlx_program_info info;
  if (!CHECK_NOT_NULL(p) || !CHECK(emlx_program_get_info(p, &info) == 0)) {
    emlx_program_release(p);
    return;
  }
  CHECK_MSG(info.constants == 2, "equal scalar constants are one (constants %zu, want 2)",
            info.constants);
  CHECK_MSG(info.cse_merged == 1, "x * a and x * b merged once a == b (cse %zu, want 1)",
            info.cse_merged);
  tu_rng r = {15};
  emlx_array *x = rand_f32(sh, 2, -1, 1, &r);
  check_run(p, tr_equal_scalars, &x, 1, 1, NULL, "equal scalars merged");
  emlx_release(x);
  emlx_program_release(p);
}

/* ---- nodes that differ only in a parameter stay apart ------------------------------ */

enum { PN = 8 }; /* a square input: both outputs share dtype and shape where they can */
enum { P_AXIS, P_KEEPDIMS, P_DTYPE, P_SHAPE, P_SCALAR, P_SLICE, P_SCAN, P_COUNT };
static const char *const param_case[P_COUNT] = {
    "axis", "keepdims", "dtype", "shape", "scalar value", "slice bound", "scan direction"};

/* Two outputs of one kind of node on the same input, differing only in the
 * parameter *ctx names: sum over axis 0 / axis 1, sum without / with
 * keepdims, f32 through f16 / through bf16, reshape to 4x16 / 16x4, x + 2 /
 * x + 3, rows 0..6 / rows 1..7, cumulative sum forwards / backwards. */
static int tr_param_pair(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                         size_t nout) {
  (void)nin, (void)nout;
  emlx_array *x = in[0];
  int ax0 = 0, ax1 = 1;
  switch (*(const int *)ctx) {
  case P_AXIS:
    out[0] = emlx_sum(x, &ax0, 1, false), out[1] = emlx_sum(x, &ax1, 1, false);
    break;
  case P_KEEPDIMS:
    out[0] = emlx_sum(x, &ax0, 1, false), out[1] = emlx_sum(x, &ax0, 1, true);
    break;
  case P_DTYPE: {
    emlx_array *h = emlx_astype(x, EMLX_FLOAT16), *b = emlx_astype(x, EMLX_BFLOAT16);
    out[0] = emlx_astype(h, EMLX_FLOAT32), out[1] = emlx_astype(b, EMLX_FLOAT32);
    emlx_release(h), emlx_release(b);
    break;
  }
  case P_SHAPE: {
    int64_t s0[2] = {PN / 2, PN * 2}, s1[2] = {PN * 2, PN / 2};
    out[0] = emlx_reshape(x, s0, 2), out[1] = emlx_reshape(x, s1, 2);
    break;
  }
  case P_SCALAR: {
    emlx_array *two = scalar32(2), *three = scalar32(3);
    out[0] = emlx_add(x, two), out[1] = emlx_add(x, three);
    emlx_release(two), emlx_release(three);
    break;
  }
  case P_SLICE: {
    int64_t a0[2] = {0, 0}, b0[2] = {PN - 1, PN}, a1[2] = {1, 0}, b1[2] = {PN, PN};
    out[0] = emlx_slice(x, a0, b0, NULL, 2), out[1] = emlx_slice(x, a1, b1, NULL, 2);
    break;
  }
  default:
    out[0] = emlx_cumulative_sum(x, 0, false, true), out[1] = emlx_cumulative_sum(x, 0, true, true);
    break;
  }
  return out[0] && out[1] ? 0 : -1;
}

/* True when a and b differ in dtype, shape or some byte. */
static bool arrays_differ(emlx_array *a, emlx_array *b) {
  if (emlx_array_dtype(a) != emlx_array_dtype(b) || emlx_ndim(a) != emlx_ndim(b))
    return true;
  for (int i = 0; i < emlx_ndim(a); i++)
    if (emlx_shape(a)[i] != emlx_shape(b)[i])
      return true;
  unsigned char *ra = tu_read_raw(a), *rb = tu_read_raw(b);
  bool differ = ra && rb && memcmp(ra, rb, emlx_nbytes(a)) != 0;
  free(ra), free(rb);
  return differ;
}

/* CSE must not merge nodes whose parameters differ: each program has no
 * merge, and both of its outputs equal the eager ones (which differ from
 * each other, so a merge could not pass unseen). */
static void test_param_differences_not_merged(void) {
  int64_t sh[2] = {PN, PN};
  emlx_template t = {EMLX_FLOAT32, 2, sh};
  tu_rng r = {16};
  for (int k = 0; k < P_COUNT; k++) {
    const char *what = param_case[k];
    emlx_program *p = emlx_compile(tr_param_pair, &k, &t, 1, 2);
    emlx_program_info info;
    if (!CHECK_MSG(p != NULL, "%s pair compiles", what) ||
        !CHECK_MSG(emlx_program_get_info(p, &info) == 0, "%s pair: get_info", what)) {
      emlx_program_release(p);
      continue;
    }
    CHECK_MSG(info.cse_merged == 0, "%s pair: nodes differing in the %s are not merged (cse %zu)",
              what, what, info.cse_merged);
    emlx_array *x = rand_f32(sh, 2, -2, 2, &r), *got[2] = {NULL, NULL}, *want[2] = {NULL, NULL};
    CHECK_OK(emlx_program_run(p, &x, 1, got, 2));
    CHECK_MSG(eager(tr_param_pair, &k, &x, 1, want, 2) == 0, "%s pair: eager runs", what);
    if (want[0] && want[1])
      CHECK_MSG(arrays_differ(want[0], want[1]), "%s pair: the two outputs differ", what);
    char w[64];
    for (int o = 0; o < 2; o++) {
      snprintf(w, sizeof w, "%s pair output %d", what, o);
      same_values(want[o], got[o], w);
    }
    if (k == P_AXIS && got[0] && got[1]) { /* column sums and row sums, in f64 */
      double *xv = tu_read(x), cols[PN] = {0}, rows[PN] = {0};
      for (int i = 0; xv && i < PN * PN; i++)
        cols[i % PN] += xv[i], rows[i / PN] += xv[i];
      if (xv)
        close_to(got[0], cols, 1e-6, "sum over axis 0"),
            close_to(got[1], rows, 1e-6, "sum over axis 1");
      free(xv);
    }
    release_all(got, 2), release_all(want, 2);
    emlx_release(x);
    emlx_program_release(p);
  }
}

/* ---- errors --------------------------------------------------------------------------- */

static int tr_fail_msg(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                       size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  out[0] = emlx_exp(in[0]); /* a partial output the compiler must release */
  return -1;
}
static int tr_fail_null(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                        size_t nout) {
  (void)ctx, (void)in, (void)nin, (void)nout;
  out[0] = NULL;
  return 0;
}
static int tr_fail_second_null(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out,
                               size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  out[0] = emlx_exp(in[0]);
  out[1] = NULL;
  return 0;
}
/* evaluates a value derived from the placeholders inside the trace */
static int tr_evals(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out, size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  out[0] = emlx_exp(in[0]);
  (void)emlx_eval(out, 1);
  return 0;
}
/* an op error inside the trace (shapes that do not broadcast) */
static int tr_bad_op(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out, size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  int64_t sh[1] = {7};
  emlx_array *z = emlx_zeros(sh, 1, EMLX_FLOAT32, EMLX_CPU);
  out[0] = emlx_add(in[0], z);
  emlx_release(z);
  return out[0] ? 0 : -1;
}

static bool has_word(const char *msg, const char *a, const char *b) {
  char low[512];
  size_t i = 0;
  for (; msg && msg[i] && i < sizeof low - 1; i++)
    low[i] = (char)((msg[i] >= 'A' && msg[i] <= 'Z') ? msg[i] + 32 : msg[i]);
  low[i] = 0;
  return strstr(low, a) || (b && strstr(low, b));
}

static void test_errors(void) {
  int64_t sh[2] = {R, C}, bad_dim[2] = {R, -1};
  emlx_template t = {EMLX_FLOAT32, 2, sh};
  /* compile failures */
  emlx_clear_error();
  emlx_program *p = emlx_compile(tr_fail_msg, NULL, &t, 1, 1);
  CHECK_MSG(p == NULL && emlx_last_error()[0], "a failing trace fails the compile (\"%s\")",
            emlx_last_error());
  emlx_program_release(p);
  emlx_clear_error();
  p = emlx_compile(tr_fail_null, NULL, &t, 1, 1);
  CHECK_MSG(p == NULL && emlx_last_error()[0], "a NULL output fails the compile (\"%s\")",
            emlx_last_error());
  emlx_program_release(p);
  emlx_clear_error();
  p = emlx_compile(tr_fail_second_null, NULL, &t, 1, 2);
  CHECK_MSG(p == NULL && emlx_last_error()[0], "a second NULL output fails the compile (\"%s\")",
            emlx_last_error());
  emlx_program_release(p);
  emlx_clear_error();
  p = emlx_compile(tr_evals, NULL, &t, 1, 1);
  CHECK_MSG(p == NULL && emlx_last_error()[0],
            "evaluating a placeholder value in the trace fails the compile (\"%s\")",
            emlx_last_error());
  emlx_program_release(p);
  emlx_clear_error();
  p = emlx_compile(tr_bad_op, NULL, &t, 1, 1);
  CHECK_MSG(p == NULL && emlx_last_error()[0], "an op error in the trace fails it (\"%s\")",
            emlx_last_error());
  emlx_program_release(p);
  emlx_clear_error();
  p = emlx_compile(NULL, NULL, &t, 1, 1);
  CHECK_MSG(p == NULL && emlx_last_error()[0], "a NULL trace function fails (\"%s\")",
            emlx_last_error());
  emlx_program_release(p);
  emlx_template bads[4] = {{EMLX_FLOAT32, 2, bad_dim},
                           {EMLX_FLOAT32, -1, sh},
                           {(emlx_dtype)99, 2, sh},
                           {EMLX_FLOAT32, 2, NULL}};
  for (int i = 0; i < 4; i++) {
    emlx_clear_error();
    p = emlx_compile(tr_exp2p1, NULL, &bads[i], 1, 1);
    CHECK_MSG(p == NULL && emlx_last_error()[0], "invalid template %d fails (\"%s\")", i,
              emlx_last_error());
    emlx_program_release(p);
  }
  emlx_clear_error();

  /* run-time template mismatches */
  int64_t shc[2] = {R, C + 1};
  const int64_t *shapes[1] = {sh};
  int nd[1] = {2};
  p = compile_f32(tr_exp2p1, NULL, shapes, nd, 1, 1);
  if (!CHECK_NOT_NULL(p))
    return;
  tu_rng r = {15};
  emlx_array *good = rand_f32(sh, 2, -1, 1, &r);
  emlx_array *wrong_shape = rand_f32(shc, 2, -1, 1, &r);
  emlx_array *wrong_rank = rand_f32(sh, 1, -1, 1, &r);
  emlx_array *wrong_dtype = emlx_astype(good, EMLX_FLOAT64);
  emlx_array *sentinel = good; /* outputs must keep this value */
  struct {
    const char *what;
    emlx_array *in[2];
    size_t nin, nout;
    const char *word1, *word2;
  } cases[] = {
      {"wrong dtype (f64 for f32)", {wrong_dtype}, 1, 1, "dtype", "type"},
      {"wrong shape", {wrong_shape}, 1, 1, "shape", NULL},
      {"wrong rank", {wrong_rank}, 1, 1, "shape", "ndim"},
      {"too many inputs", {good, good}, 2, 1, "input", NULL},
      {"no inputs", {NULL}, 0, 1, "input", NULL},
      {"wrong output count", {good}, 1, 2, "output", NULL},
      {"NULL input", {NULL}, 1, 1, "null", "input"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    emlx_array *out[2] = {sentinel, sentinel};
    emlx_clear_error();
    int rc = emlx_program_run(p, cases[i].in, cases[i].nin, out, cases[i].nout);
    const char *msg = emlx_last_error();
    CHECK_MSG(rc != 0 && msg[0], "%s: the run fails with a message (\"%s\")", cases[i].what, msg);
    CHECK_MSG(rc == 0 || has_word(msg, cases[i].word1, cases[i].word2),
              "%s: the message says what is wrong (\"%s\")", cases[i].what, msg);
    CHECK_MSG(out[0] == sentinel && out[1] == sentinel, "%s: outputs untouched", cases[i].what);
  }
  emlx_array *out1 = sentinel;
  emlx_clear_error();
  CHECK_MSG(emlx_program_run(NULL, &good, 1, &out1, 1) != 0 && emlx_last_error()[0] &&
                out1 == sentinel,
            "a NULL program fails, outputs untouched");
  emlx_clear_error();
  CHECK_MSG(emlx_program_run(p, &good, 1, NULL, 1) != 0 && emlx_last_error()[0],
            "a NULL outputs array fails");
  /* after all that, a good run works */
  emlx_array *got = NULL;
  CHECK_OK(emlx_program_run(p, &good, 1, &got, 1));
  CHECK(got && emlx_is_evaluated(got));
  emlx_release(got);
  emlx_release(good), emlx_release(wrong_shape), emlx_release(wrong_rank),
      emlx_release(wrong_dtype);
  emlx_program_release(p);
  emlx_clear_error();
}

/* ---- inputs are never modified --------------------------------------------------------- */

/* x + 1 then exp: a kernel could write its output into x if it dies here. */
static int tr_donate(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out, size_t nout) {
  (void)ctx, (void)nin, (void)nout;
  emlx_array *one = scalar32(1), *a = emlx_add(in[0], one), *s = emlx_sum(in[1], NULL, 0, true);
  emlx_array *e = emlx_exp(a);
  out[0] = emlx_multiply(e, s);
  emlx_release(one), emlx_release(a), emlx_release(e), emlx_release(s);
  return out[0] ? 0 : -1;
}

static void test_inputs_untouched(void) {
  int64_t sh[2] = {R, C}, st[2] = {C, R};
  const int64_t *shapes[2] = {sh, sh};
  int nd[2] = {2, 2};
  emlx_program *p = compile_f32(tr_donate, NULL, shapes, nd, 2, 1);
  if (!CHECK_NOT_NULL(p))
    return;
  tu_rng r = {16};
  for (int mode = 0; mode < 3; mode++) {
    /* 0: the caller holds the only reference to each input; 1: transposed
     * views whose bases the caller released; 2: inputs also held elsewhere */
    emlx_array *in[2], *extra[2] = {0};
    for (int i = 0; i < 2; i++) {
      if (mode == 1) {
        emlx_array *base = rand_f32(st, 2, -1, 1, &r);
        in[i] = emlx_transpose(base, NULL, 0);
        emlx_release(base);
        CHECK_OK(emlx_eval(&in[i], 1));
      } else {
        in[i] = rand_f32(sh, 2, -1, 1, &r);
      }
      if (mode == 2)
        extra[i] = emlx_retain(in[i]);
    }
    unsigned char *before[2];
    for (int i = 0; i < 2; i++)
      before[i] = tu_read_raw(in[i]);
    emlx_array *got = NULL;
    for (int rep = 0; rep < 2; rep++) {
      CHECK_OK(emlx_program_run(p, in, 2, &got, 1));
      emlx_release(got);
      got = NULL;
    }
    emlx_array *want = NULL;
    CHECK_OK(eager(tr_donate, NULL, in, 2, &want, 1));
    CHECK_OK(emlx_program_run(p, in, 2, &got, 1));
    same_values(want, got, "donation candidate");
    for (int i = 0; i < 2; i++) {
      unsigned char *after = tu_read_raw(in[i]);
      CHECK_MSG(before[i] && after && memcmp(before[i], after, emlx_nbytes(in[i])) == 0,
                "mode %d: input %d unchanged by the runs", mode, i);
      free(after), free(before[i]);
    }
    emlx_release(got), emlx_release(want);
    for (int i = 0; i < 2; i++)
      emlx_release(in[i]), emlx_release(extra[i]);
  }
  emlx_program_release(p);
}

/* ---- strided, sliced and lazy inputs ------------------------------------------------------ */

static void test_strided_inputs(void) {
  int64_t sh[2] = {R, C};
  const int64_t *shapes[2] = {sh, sh};
  int nd[2] = {2, 2};
  emlx_program *p = compile_f32(tr_chain, NULL, shapes, nd, 2, 1);
  if (!CHECK_NOT_NULL(p))
    return;
  tu_rng r = {17};
  int64_t st[2] = {C, R}, sw[2] = {R, 2 * C + 1}, start[2] = {0, 1}, stop[2] = {R, 2 * C + 1},
          step[2] = {1, 2}, row[2] = {1, C};
  emlx_array *bt = rand_f32(st, 2, -2, 2, &r), *bw = rand_f32(sw, 2, -2, 2, &r);
  emlx_array *brow = rand_f32(row, 2, -2, 2, &r), *bl = rand_f32(sh, 2, -2, 2, &r);
  emlx_array *tr = emlx_transpose(bt, NULL, 0);
  emlx_array *sl = emlx_slice(bw, start, stop, step, 2);
  emlx_array *bc = emlx_broadcast_to(brow, sh, 2);
  emlx_array *lazy = emlx_sin(bl); /* not evaluated before the run */
  emlx_array *pairs[4][2] = {{tr, sl}, {sl, tr}, {bc, tr}, {lazy, bc}};
  static const char *names[4] = {"transposed, sliced", "sliced, transposed",
                                 "broadcast, transposed", "lazy, broadcast"};
  for (int i = 0; i < 4; i++)
    check_run(p, tr_chain, pairs[i], 2, 1, NULL, names[i]);
  /* the fusion switch off: programs still right */
  bool was = emlx_set_fusion_enabled(false);
  check_run(p, tr_chain, pairs[0], 2, 1, NULL, "fusion off");
  emlx_set_fusion_enabled(was);
  emlx_release(tr), emlx_release(sl), emlx_release(bc), emlx_release(lazy);
  emlx_release(bt), emlx_release(bw), emlx_release(brow), emlx_release(bl);
  emlx_program_release(p);
}

/* ---- retain / release --------------------------------------------------------------------- */

static void test_retain_release(void) {
  int64_t sh[1] = {100};
  const int64_t *shapes[1] = {sh};
  int nd[1] = {1};
  emlx_program *p = compile_f32(tr_silu, NULL, shapes, nd, 1, 1);
  if (!CHECK_NOT_NULL(p))
    return;
  emlx_program *q = emlx_program_retain(p);
  CHECK(q == p);
  CHECK(emlx_program_retain(NULL) == NULL);
  emlx_program_release(p); /* q still holds it */
  tu_rng r = {18};
  emlx_array *x = rand_f32(sh, 1, -3, 3, &r), *got = NULL;
  check_run(q, tr_silu, &x, 1, 1, NULL, "after one release");
  emlx_program_release(q);
  emlx_program_release(NULL);
  emlx_release(got), emlx_release(x);
}

/* ---- eight threads, one program ------------------------------------------------------------- */

typedef struct thr_arg {
  const emlx_program *p;
  emlx_array *in[2];
  unsigned char *want;
  size_t nbytes;
  int ok;
} thr_arg;

static void *thr_main(void *v) {
  thr_arg *a = v;
  a->ok = 1;
  for (int it = 0; it < 25; it++) {
    emlx_array *got = NULL;
    if (emlx_program_run(a->p, a->in, 2, &got, 1) != 0 || !got || emlx_nbytes(got) != a->nbytes) {
      a->ok = 0;
    } else {
      unsigned char *g = malloc(a->nbytes);
      if (emlx_to_blob(got, g, a->nbytes) != 0 || memcmp(g, a->want, a->nbytes) != 0)
        a->ok = 0;
      free(g);
    }
    emlx_release(got);
  }
  return NULL;
}

static void test_threads(void) {
  enum { T = 8 };
  int64_t sh[2] = {R, C};
  const int64_t *shapes[2] = {sh, sh};
  int nd[2] = {2, 2};
  emlx_program *p = compile_f32(tr_chain, NULL, shapes, nd, 2, 1);
  if (!CHECK_NOT_NULL(p))
    return;
  tu_rng r = {19};
  thr_arg args[T];
  pthread_t th[T];
  for (int i = 0; i < T; i++) {
    args[i].p = p;
    args[i].in[0] = rand_f32(sh, 2, -2, 2, &r);
    args[i].in[1] = rand_f32(sh, 2, -2, 2, &r);
    emlx_array *want = NULL;
    CHECK_OK(emlx_program_run(p, args[i].in, 2, &want, 1));
    args[i].nbytes = emlx_nbytes(want);
    args[i].want = tu_read_raw(want);
    emlx_release(want);
  }
  for (int i = 0; i < T; i++)
    pthread_create(&th[i], NULL, thr_main, &args[i]);
  for (int i = 0; i < T; i++)
    pthread_join(th[i], NULL);
  for (int i = 0; i < T; i++) {
    CHECK_MSG(args[i].ok, "thread %d: 25 concurrent runs gave the single-threaded result", i);
    free(args[i].want);
    emlx_release(args[i].in[0]), emlx_release(args[i].in[1]);
  }
  emlx_program_release(p);
}

/* ---- the memory limit ----------------------------------------------------------------------- */

static void test_memory_limit(void) {
  int64_t sh[2] = {1024, 1024};
  const int64_t *shapes[2] = {sh, sh};
  int nd[2] = {2, 2};
  emlx_program *p = compile_f32(tr_chain, NULL, shapes, nd, 2, 1);
  if (!CHECK_NOT_NULL(p))
    return;
  tu_rng r = {20};
  emlx_array *in[2] = {rand_f32(sh, 2, -1, 1, &r), rand_f32(sh, 2, -1, 1, &r)};
  emlx_clear_cache();
  size_t active = emlx_memory_info().active_memory;
  size_t prev = emlx_set_memory_limit(active + (1u << 20)); /* no room for a 4 MiB output */
  emlx_array *sentinel = in[0], *out = sentinel;
  emlx_clear_error();
  int rc = emlx_program_run(p, in, 2, &out, 1);
  CHECK_MSG(rc != 0 && emlx_last_error()[0], "a run over the memory limit fails (\"%s\")",
            emlx_last_error());
  CHECK_MSG(out == sentinel, "the failed run left the output untouched");
  emlx_set_memory_limit(prev);
  emlx_clear_error();
  out = NULL;
  check_run(p, tr_chain, in, 2, 1, NULL, "the run after a memory-limit failure");
  emlx_release(in[0]), emlx_release(in[1]);
  emlx_program_release(p);
}

int main(void) {
  test_elementwise_programs();
  test_mixed_program();
  test_multi_output_program();
  test_released_sibling_outputs();
  test_program_info();
  test_work_matches_eval_estimate();
  test_scalar_merge();
  test_param_differences_not_merged();
  test_errors();
  test_inputs_untouched();
  test_strided_inputs();
  test_retain_release();
  test_threads();
  test_memory_limit();
  return tu_finish();
}
