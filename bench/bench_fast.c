/* bench_fast.c — the fused transformer kernels (emlx/fast.h) against the
 * machine's memory bandwidth, measured in the same run.
 *
 * Cases: rms_norm over [4096, 4096], rope on (1, 32, 512, 128) (split-half,
 * and interleaved: ggml's "normal" mode), swiglu on (4096, 14336), in f32
 * and bf16. Each line gives the median time with its spread (p10, p90 over
 * --reps runs), the bytes the kernel must move at least (inputs read once,
 * output written once) and bw_ratio = median / (bytes / bandwidth), where the
 * bandwidth is that of a plain multithreaded loop with the same streams
 * (STREAM's scale, c = k * a: one read, one write, for the norms and rope;
 * STREAM's add, c = a + b: two reads, one write, for swiglu), measured first
 * on 128 MiB arrays with emlx's thread count. bw_ratio 1.0 is that
 * streaming limit. The rope input (8 MiB f32) and its output fit this
 * machine's L3, so rope runs from cache across repetitions and can beat it;
 * swiglu's outputs (>= 64 MiB) are written with streaming stores, without
 * the read of each line that the reference loops' stores make, and can
 * beat it too. On a shared machine the reference drifts with the load: run
 * bench/compare_fast.py --rounds 3 and read the medians over rounds.
 *
 * Built as emlx_bench_bench_fast; bench/compare_fast.py runs it beside
 * MLX's mx.fast and ggml's test-backend-ops on the same shapes. */
#include <pthread.h>

#include "bench_harness.h"

#define STREAM_N (INT64_C(32) << 20) /* floats per array: 128 MiB */

#define RN INT64_C(4096)
#define SW_R INT64_C(4096)
#define SW_C INT64_C(14336)

static emlx_array *weight_f32, *weight_bf16;

static emlx_array *build_rms(emlx_array *const *in) {
  emlx_array *w = emlx_array_dtype(in[0]) == EMLX_FLOAT32 ? weight_f32 : weight_bf16;
  return emlx_fast_rms_norm(in[0], w, 1e-5f);
}
static emlx_array *build_rope(emlx_array *const *in) {
  return emlx_fast_rope(in[0], 128, false, 10000.0f, 1.0f, 0);
}
static emlx_array *build_rope_trad(emlx_array *const *in) {
  return emlx_fast_rope(in[0], 128, true, 10000.0f, 1.0f, 0);
}
static emlx_array *build_swiglu(emlx_array *const *in) { return emlx_fast_swiglu(in[0], in[1]); }

#define IN2(dt, a, b, s_)                                                                          \
  { .dtype = (dt), .ndim = 2, .shape = {(a), (b)}, .seed = (s_), .dist = BENCH_SYM }
#define IN4(dt, s_)                                                                                \
  { .dtype = (dt), .ndim = 4, .shape = {1, 32, 512, 128}, .seed = (s_), .dist = BENCH_SYM }

typedef struct fast_case {
  bench_case c;
  int streams; /* 2: copy-like, 3: triad-like */
} fast_case;

static const fast_case cases[] = {
    {{.name = "rms_norm_f32_4096x4096",
      .what = "fast_rms_norm(x, w, 1e-5), x f32 [4096, 4096]",
      .bytes = 2.0 * 4 * 4096 * 4096,
      .ninputs = 1,
      .inputs = {IN2(EMLX_FLOAT32, RN, RN, 901)},
      .build = build_rms},
     2},
    {{.name = "rms_norm_bf16_4096x4096",
      .what = "fast_rms_norm(x, w, 1e-5), x bf16 [4096, 4096]",
      .bytes = 2.0 * 2 * 4096 * 4096,
      .ninputs = 1,
      .inputs = {IN2(EMLX_BFLOAT16, RN, RN, 902)},
      .build = build_rms},
     2},
    {{.name = "rope_f32_1x32x512x128",
      .what = "fast_rope(x, 128, split-half, base 1e4, offset 0), x f32 (1, 32, 512, 128)",
      .bytes = 2.0 * 4 * 32 * 512 * 128,
      .ninputs = 1,
      .inputs = {IN4(EMLX_FLOAT32, 903)},
      .build = build_rope},
     2},
    {{.name = "rope_trad_f32_1x32x512x128",
      .what = "fast_rope(x, 128, interleaved, base 1e4, offset 0), x f32 (1, 32, 512, 128)",
      .bytes = 2.0 * 4 * 32 * 512 * 128,
      .ninputs = 1,
      .inputs = {IN4(EMLX_FLOAT32, 904)},
      .build = build_rope_trad},
     2},
    {{.name = "rope_bf16_1x32x512x128",
      .what = "fast_rope(x, 128, split-half, base 1e4, offset 0), x bf16 (1, 32, 512, 128)",
      .bytes = 2.0 * 2 * 32 * 512 * 128,
      .ninputs = 1,
      .inputs = {IN4(EMLX_BFLOAT16, 905)},
      .build = build_rope},
     2},
    {{.name = "swiglu_f32_4096x14336",
      .what = "fast_swiglu(g, u), f32 (4096, 14336)",
      .bytes = 3.0 * 4 * 4096 * 14336,
      .ninputs = 2,
      .inputs = {IN2(EMLX_FLOAT32, SW_R, SW_C, 906), IN2(EMLX_FLOAT32, SW_R, SW_C, 907)},
      .build = build_swiglu},
     3},
    {{.name = "swiglu_bf16_4096x14336",
      .what = "fast_swiglu(g, u), bf16 (4096, 14336)",
      .bytes = 3.0 * 2 * 4096 * 14336,
      .ninputs = 2,
      .inputs = {IN2(EMLX_BFLOAT16, SW_R, SW_C, 908), IN2(EMLX_BFLOAT16, SW_R, SW_C, 909)},
      .build = build_swiglu},
     3},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* ---- the bandwidth reference --------------------------------------------------- */
typedef struct stream_job {
  float *a, *b, *c;
  int64_t n;
  int streams, tid, nthreads;
} stream_job;

static void *stream_part(void *arg) {
  stream_job *j = arg;
  int64_t lo = j->n * j->tid / j->nthreads, hi = j->n * (j->tid + 1) / j->nthreads;
  if (j->streams == 2)
    for (int64_t i = lo; i < hi; i++)
      j->c[i] = 1.0001f * j->a[i];
  else
    for (int64_t i = lo; i < hi; i++)
      j->c[i] = j->a[i] + j->b[i];
  return NULL;
}

/* GB/s of the copy (2) or triad (3) loop: the median of 11 runs. */
static double stream_gbs(int streams, float *a, float *b, float *c) {
  int nt = emlx_num_threads();
  pthread_t th[256];
  stream_job jobs[256];
  if (nt > 256)
    nt = 256;
  double t[11];
  for (int r = 0; r < 11 + 2; r++) {
    double t0 = bench_now_ms();
    for (int i = 0; i < nt; i++) {
      jobs[i] = (stream_job){a, b, c, STREAM_N, streams, i, nt};
      pthread_create(&th[i], NULL, stream_part, &jobs[i]);
    }
    for (int i = 0; i < nt; i++)
      pthread_join(th[i], NULL);
    if (r >= 2)
      t[r - 2] = bench_now_ms() - t0;
  }
  qsort(t, 11, sizeof t[0], bench_cmp_double);
  double bytes = (double)streams * 4.0 * (double)STREAM_N;
  printf("case=stream_%s impl=c threads=%d median_ms=%.4f p10_ms=%.4f p90_ms=%.4f gb_s=%.2f\n",
         streams == 2 ? "scale" : "add", nt, t[5], t[1], t[9], bytes / (t[5] * 1e-3) / 1e9);
  fflush(stdout);
  return bytes / (t[5] * 1e-3) / 1e9;
}

static double bw_copy, bw_triad;

static int measure_bandwidth(void) {
  float *a = malloc((size_t)STREAM_N * sizeof(float)),
        *b = malloc((size_t)STREAM_N * sizeof(float));
  float *c = malloc((size_t)STREAM_N * sizeof(float));
  if (!a || !b || !c) {
    free(a), free(b), free(c);
    return -1;
  }
  for (int64_t i = 0; i < STREAM_N; i++)
    a[i] = (float)i, b[i] = 1.0f, c[i] = 0.0f;
  bw_copy = stream_gbs(2, a, b, c);
  bw_triad = stream_gbs(3, a, b, c);
  free(a), free(b), free(c);
  return 0;
}

/* ---- the runner: median and spread ----------------------------------------------- */
static int run_fast_case(const fast_case *fc, int reps) {
  const bench_case *c = &fc->c;
  emlx_array *in[BENCH_MAX_INPUTS] = {0};
  double *t = malloc((size_t)reps * sizeof(double)), checksum = 0.0;
  int rc = -1;
  for (int i = 0; i < c->ninputs; i++)
    if (!(in[i] = bench_make_input(&c->inputs[i])) || emlx_eval(&in[i], 1) != 0)
      goto done;
  for (int w = 0; w < 3; w++) /* warm-up: the allocator's cache, the pool */
    if (bench_rep(c, in, w == 0 ? &checksum : NULL) < 0.0)
      goto done;
  for (int r = 0; r < reps; r++)
    if ((t[r] = bench_rep(c, in, NULL)) < 0.0)
      goto done;
  qsort(t, (size_t)reps, sizeof t[0], bench_cmp_double);
  double med = t[reps / 2], bw = fc->streams == 2 ? bw_copy : bw_triad;
  double bw_ms = c->bytes / (bw * 1e9) * 1e3;
  printf("case=%s impl=emlx threads=%d reps=%d median_ms=%.4f p10_ms=%.4f p90_ms=%.4f "
         "checksum=%.17g gb_s=%.2f bw_ms=%.4f bw_ratio=%.2f\n",
         c->name, emlx_num_threads(), reps, med, t[reps / 10], t[reps - 1 - reps / 10], checksum,
         c->bytes / (med * 1e-3) / 1e9, bw_ms, med / bw_ms);
  fflush(stdout);
  rc = 0;
done:
  if (rc != 0)
    fprintf(stderr, "bench_fast: %s: %s\n", c->name, emlx_last_error());
  for (int i = 0; i < c->ninputs; i++)
    emlx_release(in[i]);
  free(t);
  return rc;
}

static const char *case_name(const void *ctx, size_t i) {
  (void)ctx;
  return cases[i].c.name;
}
static const char *case_what(const void *ctx, size_t i) {
  (void)ctx;
  return cases[i].c.what;
}
static bool measured;
static int case_run(const void *ctx, size_t i, const bench_options *opt) {
  (void)ctx;
  if (!measured) {
    measured = true;
    if (measure_bandwidth() != 0)
      return -1;
  }
  return run_fast_case(&cases[i], opt->reps);
}

int main(int argc, char **argv) {
  bench_input wspec = {
      .dtype = EMLX_FLOAT32, .ndim = 1, .shape = {RN}, .seed = 910, .dist = BENCH_U01};
  weight_f32 = bench_make_input(&wspec);
  weight_bf16 = weight_f32 ? emlx_astype(weight_f32, EMLX_BFLOAT16) : NULL;
  if (!weight_bf16 || emlx_eval(&weight_bf16, 1) != 0)
    return 2;
  bench_suite suite = {NCASES, cases, case_name, case_what, case_run};
  int rc = bench_main_suite(argc, argv, &suite);
  emlx_release(weight_f32);
  emlx_release(weight_bf16);
  return rc;
}
