/* bench_attention.c — the attention kernels (emlx/fast_attention.h):
 *
 *   stream            the machine's streaming read bandwidth: every pool
 *                     thread sums its slice of a 512 MiB buffer (the
 *                     yardstick of the decode cases)
 *   sdpa_decode_f32   q {1, 32, 1, 128}, K/V {1, 8, 4096, 128}: gb_s is the
 *   sdpa_decode_bf16  K/V bytes read per second (q and output are noise)
 *   sdpa_prefill_f32  causal, q {1, 32, 512, 128}, K/V {1, 8, 512, 128}
 *   sdpa_prefill_bf16
 *   kv_decode_bf16    kv_cache_sdpa_update, one token into a {1, 8, 4096,
 *                     128} cache at offset 4095 (in place), then attention
 *   sdpa_decode_cold_f32, sdpa_decode_cold_bf16
 *                     the decode cases with the caches evicted before each
 *                     rep (the 512 MiB stream buffer read again, untimed):
 *                     K/V (16-32 MiB) fit in a large L3, so the hot cases
 *                     may beat DRAM; these read K/V from memory, the figure
 *                     to hold against stream. Each rep is paired with a
 *                     cold read of as many bytes (pct_cold_stream, see
 *                     run_decode_cold)
 *   sdpa_decode_rot_f32, sdpa_decode_rot_bf16
 *                     the decode cases over 6 copies of K/V taken in turn
 *                     with no pause, as a decode loop's layers are; each
 *                     rep paired with a read of as many bytes of a rotating
 *                     yardstick (pct_rot_stream, see run_decode_rot)
 *
 * Each decode line also prints pct_stream (gb_s over the stream figure of
 * the same run). bench/bench_attention_peers.py runs this program and the
 * peers (torch, MLX, ggml's FLASH_ATTN_EXT) side by side and prints ratios. */
#include <pthread.h>

#include "bench_harness.h"

#define Q_DEC                                                                                      \
  { EMLX_FLOAT32, 4, {1, 32, 1, 128}, 1, BENCH_SYM, 0, 0 }
#define KV_DEC(dt, s)                                                                              \
  { dt, 4, {1, 8, 4096, 128}, s, BENCH_SYM, 0, 0 }
#define Q_PRE(dt)                                                                                  \
  { dt, 4, {1, 32, 512, 128}, 1, BENCH_SYM, 0, 0 }
#define KV_PRE(dt, s)                                                                              \
  { dt, 4, {1, 8, 512, 128}, s, BENCH_SYM, 0, 0 }

static const float kScale = 0.08838834764831845f; /* 1 / sqrt(128) */

static emlx_array *b_sdpa(emlx_array *const *in) {
  return emlx_fast_sdpa(in[0], in[1], in[2], kScale, NULL);
}
static emlx_array *b_sdpa_bf16q(emlx_array *const *in) {
  emlx_array *q = emlx_astype(in[0], EMLX_BFLOAT16);
  emlx_array *r = emlx_fast_sdpa(q, in[1], in[2], kScale, NULL);
  emlx_release(q);
  return r;
}
static emlx_array *b_causal(emlx_array *const *in) {
  return emlx_fast_sdpa_causal(in[0], in[1], in[2], kScale, NULL);
}

/* The decode step of a loop: the caches are the case's inputs, which the
 * harness keeps, so this measures the copying path; kv_decode below runs
 * the in-place loop itself. */
static const bench_case cases[] = {
    {"sdpa_decode_f32",
     "fast_sdpa(q f32 {1,32,1,128}, K/V f32 {1,8,4096,128})",
     2.0 * 8 * 4096 * 128 * 4,
     3,
     {Q_DEC, KV_DEC(EMLX_FLOAT32, 2), KV_DEC(EMLX_FLOAT32, 3)},
     b_sdpa},
    {"sdpa_decode_bf16",
     "fast_sdpa(q bf16 {1,32,1,128}, K/V bf16 {1,8,4096,128})",
     2.0 * 8 * 4096 * 128 * 2,
     3,
     {Q_DEC, KV_DEC(EMLX_BFLOAT16, 2), KV_DEC(EMLX_BFLOAT16, 3)},
     b_sdpa_bf16q},
    {"sdpa_prefill_f32",
     "fast_sdpa_causal(q f32 {1,32,512,128}, K/V f32 {1,8,512,128})",
     0,
     3,
     {Q_PRE(EMLX_FLOAT32), KV_PRE(EMLX_FLOAT32, 2), KV_PRE(EMLX_FLOAT32, 3)},
     b_causal},
    {"sdpa_prefill_bf16",
     "fast_sdpa_causal(q bf16 {1,32,512,128}, K/V bf16 {1,8,512,128})",
     0,
     3,
     {Q_PRE(EMLX_BFLOAT16), KV_PRE(EMLX_BFLOAT16, 2), KV_PRE(EMLX_BFLOAT16, 3)},
     b_causal},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* ---- stream ------------------------------------------------------------------ */

#define STREAM_BYTES ((size_t)512 << 20)

typedef struct stream_job {
  const uint64_t *buf;
  size_t n; /* words */
  int nthreads;
  uint64_t sums[256];
} stream_job;

static void *stream_thread(void *arg) {
  void **a = arg;
  stream_job *j = a[0];
  int t = (int)(intptr_t)a[1];
  size_t lo = j->n * (size_t)t / (size_t)j->nthreads,
         hi = j->n * (size_t)(t + 1) / (size_t)j->nthreads;
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
  for (size_t i = lo; i + 8 <= hi; i += 8) {
    s0 += j->buf[i], s1 += j->buf[i + 1], s2 += j->buf[i + 2], s3 += j->buf[i + 3];
    s4 += j->buf[i + 4], s5 += j->buf[i + 5], s6 += j->buf[i + 6], s7 += j->buf[i + 7];
  }
  j->sums[t] = s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7;
  return NULL;
}

static double g_stream_gbs;
static uint64_t *g_evict; /* the stream buffer, kept for evicting the caches */

static int run_stream(const bench_options *opt) {
  int nt = emlx_num_threads();
  if (nt > 256)
    nt = 256;
  uint64_t *buf = malloc(STREAM_BYTES);
  if (!buf)
    return -1;
  size_t n = STREAM_BYTES / 8;
  for (size_t i = 0; i < n; i++)
    buf[i] = i * 0x9E3779B97F4A7C15ULL;
  stream_job j = {buf, n, nt, {0}};
  double *times = malloc((size_t)opt->reps * sizeof *times);
  uint64_t check = 0;
  for (int r = -opt->warmup; r < opt->reps; r++) {
    pthread_t th[256];
    void *args[256][2];
    double t0 = bench_now_ms();
    for (int t = 0; t < nt; t++) {
      args[t][0] = &j;
      args[t][1] = (void *)(intptr_t)t;
      pthread_create(&th[t], NULL, stream_thread, args[t]);
    }
    for (int t = 0; t < nt; t++)
      pthread_join(th[t], NULL);
    double ms = bench_now_ms() - t0;
    for (int t = 0; t < nt; t++)
      check += j.sums[t];
    if (r >= 0)
      times[r] = ms;
  }
  qsort(times, (size_t)opt->reps, sizeof *times, bench_cmp_double);
  int mid = opt->reps / 2;
  double median = opt->reps % 2 ? times[mid] : 0.5 * (times[mid - 1] + times[mid]);
  g_stream_gbs = (double)STREAM_BYTES / (median * 1e-3) / 1e9;
  printf("case=stream impl=memory threads=%d reps=%d median_ms=%.4f min_ms=%.4f max_ms=%.4f "
         "gb_s=%.2f check=%llu\n",
         nt, opt->reps, median, times[0], times[opt->reps - 1], g_stream_gbs,
         (unsigned long long)(check & 0xff));
  free(times);
  g_evict = buf;
  return 0;
}

/* ---- the in-place decode loop ------------------------------------------------ */

static int run_kv_decode(const bench_options *opt) {
  const int64_t cs[4] = {1, 8, 4096, 128}, qs[4] = {1, 32, 1, 128}, ns[4] = {1, 8, 1, 128};
  bench_input kin = {EMLX_BFLOAT16, 4, {1, 8, 4096, 128}, 2, BENCH_SYM, 0, 0};
  bench_input vin = {EMLX_BFLOAT16, 4, {1, 8, 4096, 128}, 3, BENCH_SYM, 0, 0};
  emlx_array *kc = bench_make_input(&kin), *vc = bench_make_input(&vin);
  (void)cs;
  emlx_array *q = emlx_ones(qs, 4, EMLX_BFLOAT16, EMLX_CPU),
             *nk = emlx_ones(ns, 4, EMLX_BFLOAT16, EMLX_CPU);
  emlx_array *pre[4] = {kc, vc, q, nk};
  if (!kc || !vc || !q || !nk || emlx_eval(pre, 4) != 0)
    return -1;
  int total = opt->warmup + opt->reps;
  double *times = malloc((size_t)opt->reps * sizeof *times);
  for (int r = 0; r < total; r++) {
    double t0 = bench_now_ms();
    emlx_array *o, *kc2, *vc2;
    if (emlx_kv_cache_sdpa_update(q, nk, nk, kc, vc, 4095, kScale, &o, &kc2, &vc2) != 0) {
      fprintf(stderr, "kv_decode: %s\n", emlx_last_error());
      return -1;
    }
    emlx_release(kc), emlx_release(vc);
    kc = kc2, vc = vc2;
    emlx_array *all[3] = {o, kc, vc};
    if (emlx_eval(all, 3) != 0)
      return -1;
    emlx_release(o);
    double ms = bench_now_ms() - t0;
    if (r >= opt->warmup)
      times[r - opt->warmup] = ms;
  }
  qsort(times, (size_t)opt->reps, sizeof *times, bench_cmp_double);
  int mid = opt->reps / 2;
  double median = opt->reps % 2 ? times[mid] : 0.5 * (times[mid - 1] + times[mid]);
  double gbs = 2.0 * 8 * 4096 * 128 * 2 / (median * 1e-3) / 1e9;
  printf("case=kv_decode_bf16 impl=emlx threads=%d reps=%d median_ms=%.4f min_ms=%.4f "
         "max_ms=%.4f gb_s=%.2f pct_stream=%.1f\n",
         emlx_num_threads(), opt->reps, median, times[0], times[opt->reps - 1], gbs,
         g_stream_gbs > 0 ? 100 * gbs / g_stream_gbs : 0.0);
  free(times);
  emlx_release(kc), emlx_release(vc), emlx_release(q), emlx_release(nk);
  return 0;
}

/* ---- decode with the caches evicted ---------------------------------------------- */
/* Each rep: evict the caches (read the 512 MiB stream buffer, one word per
 * line: every line of a buffer 16x this machine's L3), time a cold
 * streaming read of a yardstick buffer holding as many bytes as K and V
 * (an emlx array too, so the same huge pages; every pool thread reads its
 * slice, started together behind a barrier), evict again, time the decode.
 * pct_cold_stream is the median over reps of the yardstick's time over the
 * decode's: both read the same bytes from memory a moment apart, so the
 * ratio holds on a loaded machine where either time alone drifts.
 * pct_cold_best is the fastest yardstick over the fastest decode (the reps
 * least disturbed by other load). pct_stream compares with the 512 MiB
 * stream figure instead. */

#define EVICT_BYTES STREAM_BYTES

static uint64_t evict_caches(void) {
  uint64_t s = 0;
  for (size_t i = 0; i < EVICT_BYTES / 8; i += 8)
    s += g_evict[i];
  return s;
}

typedef struct cold_job {
  const uint64_t *buf;
  size_t n; /* words */
  int nthreads;
  pthread_barrier_t go;
  uint64_t sums[256];
} cold_job;

static void *cold_thread(void *arg) {
  void **a = arg;
  cold_job *j = a[0];
  int t = (int)(intptr_t)a[1];
  size_t lo = j->n * (size_t)t / (size_t)j->nthreads,
         hi = j->n * (size_t)(t + 1) / (size_t)j->nthreads;
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
  pthread_barrier_wait(&j->go);
  for (size_t i = lo; i + 8 <= hi; i += 8) {
    s0 += j->buf[i], s1 += j->buf[i + 1], s2 += j->buf[i + 2], s3 += j->buf[i + 3];
    s4 += j->buf[i + 4], s5 += j->buf[i + 5], s6 += j->buf[i + 6], s7 += j->buf[i + 7];
  }
  j->sums[t] = s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7;
  return NULL;
}

/* ms of a cold read of n words by nt threads (the caller one of them) */
static double cold_stream_ms(const uint64_t *buf, size_t n, int nt, uint64_t *check) {
  cold_job j = {.buf = buf, .n = n, .nthreads = nt};
  pthread_t th[256];
  void *args[256][2];
  pthread_barrier_init(&j.go, NULL, (unsigned)nt);
  for (int t = 1; t < nt; t++) {
    args[t][0] = &j;
    args[t][1] = (void *)(intptr_t)t;
    pthread_create(&th[t], NULL, cold_thread, args[t]);
  }
  args[0][0] = &j;
  args[0][1] = (void *)(intptr_t)0;
  double t0 = bench_now_ms(); /* the others wait at the barrier for the caller */
  cold_thread(args[0]);
  for (int t = 1; t < nt; t++)
    pthread_join(th[t], NULL);
  double ms = bench_now_ms() - t0;
  pthread_barrier_destroy(&j.go);
  for (int t = 0; t < nt; t++)
    *check += j.sums[t];
  return ms;
}

/* ms of one decode call, or -1 on an error */
static double decode_ms(emlx_array *q, emlx_array *k, emlx_array *v) {
  double t0 = bench_now_ms();
  emlx_array *o = emlx_fast_sdpa(q, k, v, kScale, NULL);
  if (!o || emlx_eval(&o, 1) != 0) {
    emlx_release(o);
    return -1;
  }
  double ms = bench_now_ms() - t0;
  emlx_release(o);
  return ms;
}

/* The line of a decode case whose reps are paired with yardstick reads:
 * times (decode ms) and ratio (100 x yardstick ms / decode ms) sorted,
 * then pct_<tag>_stream (the median ratio) with its p10 / p90, the fastest
 * yardstick and pct_<tag>_best (fastest yardstick over fastest decode). */
static void print_paired(const char *name, const char *tag, const char *extra, emlx_dtype dt,
                         double *times, double *ratio, int reps, double smin, uint64_t sink) {
  qsort(times, (size_t)reps, sizeof *times, bench_cmp_double);
  qsort(ratio, (size_t)reps, sizeof *ratio, bench_cmp_double);
  double median = times[reps / 2];
  double gbs = 2.0 * 8 * 4096 * 128 * (double)emlx_dtype_size(dt) / (median * 1e-3) / 1e9;
  printf("case=%s impl=emlx threads=%d reps=%d %smedian_ms=%.4f min_ms=%.4f max_ms=%.4f "
         "gb_s=%.2f pct_stream=%.1f pct_%s_stream=%.1f pct_%s_p10=%.1f pct_%s_p90=%.1f "
         "%s_stream_min_ms=%.4f pct_%s_best=%.1f check=%llu\n",
         name, emlx_num_threads(), reps, extra, median, times[0], times[reps - 1], gbs,
         g_stream_gbs > 0 ? 100 * gbs / g_stream_gbs : 0.0, tag, ratio[reps / 2], tag,
         ratio[reps / 10], tag, ratio[reps - 1 - reps / 10], tag, smin, tag,
         100.0 * smin / times[0], (unsigned long long)(sink & 1));
}

static int run_decode_cold(emlx_dtype dt, const char *name) {
  bench_input qin = Q_DEC, kin = KV_DEC(dt, 2), vin = KV_DEC(dt, 3);
  qin.dtype = dt;
  emlx_array *q = bench_make_input(&qin), *k = bench_make_input(&kin), *v = bench_make_input(&vin);
  /* the yardstick: K and V's bytes, as one uint32 array of huge pages */
  const int64_t ys[1] = {2 * 8 * 4096 * 128 * (int64_t)emlx_dtype_size(dt) / 4};
  bench_input yin = {EMLX_UINT32, 1, {ys[0]}, 4, BENCH_INT, 0, 1000};
  emlx_array *yard = bench_make_input(&yin);
  emlx_array *pre[4] = {q, k, v, yard};
  if (!q || !k || !v || !yard || emlx_eval(pre, 4) != 0)
    return -1;
  if (!g_evict) {
    fprintf(stderr, "%s: run with the stream case (it provides the eviction buffer)\n", name);
    return -1;
  }
  int nt = emlx_num_threads() < 256 ? emlx_num_threads() : 256;
  const uint64_t *yb = emlx_data(yard);
  size_t ywords = (size_t)ys[0] / 2;
  enum { REPS = 31 };
  double times[REPS], ratio[REPS], smin = 1e300;
  uint64_t sink = 0;
  for (int r = -2; r < REPS; r++) {
    sink += evict_caches();
    double sms = cold_stream_ms(yb, ywords, nt, &sink);
    sink += evict_caches();
    double ms = decode_ms(q, k, v);
    if (ms < 0)
      return -1;
    if (r >= 0) {
      smin = sms < smin ? sms : smin;
      times[r] = ms;
      ratio[r] = 100.0 * sms / ms;
    }
  }
  print_paired(name, "cold", "", dt, times, ratio, REPS, smin, sink);
  emlx_release(q), emlx_release(k), emlx_release(v), emlx_release(yard);
  return 0;
}

/* ---- decode over rotating caches ---------------------------------------------------
 * A decode loop reads every layer's cache once per token, one after the
 * other with no pause: ROT_COPIES copies of K and V (3x a 32 MiB L3 and
 * more), taken in turn, each call reading its copy from memory right after
 * the previous call's traffic. Each rep times the decode over copy r %
 * ROT_COPIES, then a streaming read of yardstick copy r % ROT_COPIES (as
 * many bytes, every pool thread, like run_decode_cold's), so the yardstick
 * meets the same state of the memory system; pct_rot_stream is the median
 * over reps of yardstick time over decode time. The evicted case above
 * instead idles the memory system for the ~30 ms of its eviction pass
 * before each call, which on some hosts slows the first milliseconds that
 * follow; the two conditions are reported side by side. */

#define ROT_COPIES 6

static int run_decode_rot(emlx_dtype dt, const char *name) {
  bench_input qin = Q_DEC;
  qin.dtype = dt;
  emlx_array *q = bench_make_input(&qin);
  const int64_t ys[1] = {2 * 8 * 4096 * 128 * (int64_t)emlx_dtype_size(dt) / 4};
  emlx_array *k[ROT_COPIES], *v[ROT_COPIES], *yard[ROT_COPIES];
  bool ok = q != NULL && emlx_eval(&q, 1) == 0;
  for (int c = 0; c < ROT_COPIES; c++) {
    bench_input kin = KV_DEC(dt, 2 + 3 * c), vin = KV_DEC(dt, 3 + 3 * c);
    bench_input yin = {EMLX_UINT32, 1, {ys[0]}, 4 + 3 * c, BENCH_INT, 0, 1000};
    k[c] = bench_make_input(&kin), v[c] = bench_make_input(&vin), yard[c] = bench_make_input(&yin);
    emlx_array *pre[3] = {k[c], v[c], yard[c]};
    ok = ok && k[c] && v[c] && yard[c] && emlx_eval(pre, 3) == 0;
  }
  if (!ok)
    return -1;
  int nt = emlx_num_threads() < 256 ? emlx_num_threads() : 256;
  size_t ywords = (size_t)ys[0] / 2;
  enum { REPS = 60 };
  double times[REPS], ratio[REPS], smin = 1e300;
  uint64_t sink = 0;
  for (int r = -2 * ROT_COPIES; r < REPS; r++) {
    const int c = (r + 2 * ROT_COPIES) % ROT_COPIES;
    double ms = decode_ms(q, k[c], v[c]);
    if (ms < 0)
      return -1;
    double sms = cold_stream_ms(emlx_data(yard[c]), ywords, nt, &sink);
    if (r >= 0) {
      smin = sms < smin ? sms : smin;
      times[r] = ms;
      ratio[r] = 100.0 * sms / ms;
    }
  }
  char extra[32];
  snprintf(extra, sizeof extra, "copies=%d ", ROT_COPIES);
  print_paired(name, "rot", extra, dt, times, ratio, REPS, smin, sink);
  emlx_release(q);
  for (int c = 0; c < ROT_COPIES; c++)
    emlx_release(k[c]), emlx_release(v[c]), emlx_release(yard[c]);
  return 0;
}

/* ---- the suite ------------------------------------------------------------------ */

static const char *s_name(const void *ctx, size_t i) {
  (void)ctx;
  return i == 0            ? "stream"
         : i <= NCASES     ? cases[i - 1].name
         : i == NCASES + 1 ? "kv_decode_bf16"
         : i == NCASES + 2 ? "sdpa_decode_cold_f32"
         : i == NCASES + 3 ? "sdpa_decode_cold_bf16"
         : i == NCASES + 4 ? "sdpa_decode_rot_f32"
                           : "sdpa_decode_rot_bf16";
}
static const char *s_what(const void *ctx, size_t i) {
  (void)ctx;
  return i == 0        ? "streaming read bandwidth (512 MiB, every pool thread)"
         : i <= NCASES ? cases[i - 1].what
         : i == NCASES + 1
             ? "kv_cache_sdpa_update in place: 1 token into a bf16 {1,8,4096,128} cache"
         : i <= NCASES + 3 ? "sdpa decode with the caches evicted before each rep"
                           : "sdpa decode over 6 copies of the caches in turn, back to back";
}
static int s_run(const void *ctx, size_t i, const bench_options *opt) {
  (void)ctx;
  if (i == 0)
    return run_stream(opt);
  if (i == NCASES + 1)
    return run_kv_decode(opt);
  if (i == NCASES + 2)
    return run_decode_cold(EMLX_FLOAT32, "sdpa_decode_cold_f32");
  if (i == NCASES + 3)
    return run_decode_cold(EMLX_BFLOAT16, "sdpa_decode_cold_bf16");
  if (i == NCASES + 4)
    return run_decode_rot(EMLX_FLOAT32, "sdpa_decode_rot_f32");
  if (i == NCASES + 5)
    return run_decode_rot(EMLX_BFLOAT16, "sdpa_decode_rot_bf16");
  const bench_case *c = &cases[i - 1];
  double median = 0;
  bench_run_extra x = {.median = &median};
  if (bench_run_case_ex(c, opt, &x) != 0)
    return -1;
  if (c->bytes > 0 && g_stream_gbs > 0)
    printf("case=%s ratio pct_stream=%.1f\n", c->name,
           100 * (c->bytes / (median * 1e-3) / 1e9) / g_stream_gbs);
  return 0;
}

int main(int argc, char **argv) {
  bench_suite s = {NCASES + 6, NULL, s_name, s_what, s_run};
  return bench_main_suite(argc, argv, &s);
}
