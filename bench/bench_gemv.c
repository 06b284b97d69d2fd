/* bench_gemv.c — decode-step products (one row: x [1, K] @ W) at the decode
 * demo's shapes (examples/decode.c: hidden 2048, MLP 5632, vocabulary 32000,
 * 512-wide K/V projections), for bf16, f16 and f32 weights in both layouts:
 * W [K, N] (x @ W, the demo's bf16 {in, out}; suffix _xw) and W [N, K]
 * (x @ W^T, a transposed view; suffix _xwt). Next to them, in the same run,
 * the machine's streaming read bandwidth measured the same way, so each case
 * reads as a share of it (bw_frac), and for f32 OpenBLAS's cblas_sgemv on
 * the same buffers (impl=sgemv; our f32 product calls it, so the pair shows
 * what the op adds).
 *
 * A decode step reads every weight once from memory, never from the caches:
 * each case rotates over enough copies of W (at least 96 MB in all, 6x a
 * 16 MB L3) that no rep finds its weights cached. Timed through the public
 * API: emlx_matmul, emlx_eval, emlx_release, as the demo calls them.
 *
 * Output: "case=NAME impl=emlx|sgemv|memory median_ms=.. min_ms=.. max_ms=..
 * gb_s=.. bw_frac=.." lines (gb_s: W's bytes over the median; bw_frac: that
 * over the yardstick's best rep). Usage:
 *   emlx_bench_bench_gemv [--reps K] [--threads N] [--case NAME]... [--list] */
#include <cblas.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_bw.h"
#include "bench_harness.h"

#define MIN_ROTATION ((size_t)96 << 20)

typedef struct gemv_case {
  const char *name;
  emlx_dtype dtype;
  bool wt; /* W stored [N, K], used transposed */
  int64_t K, N;
} gemv_case;

#define CASES_OF(dt, tag)                                                                          \
  {"gemv_" tag "_2048x2048_xw", dt, false, 2048, 2048},                                            \
      {"gemv_" tag "_2048x2048_xwt", dt, true, 2048, 2048},                                        \
      {"gemv_" tag "_2048x512_xw", dt, false, 2048, 512},                                          \
      {"gemv_" tag "_2048x512_xwt", dt, true, 2048, 512},                                          \
      {"gemv_" tag "_2048x5632_xw", dt, false, 2048, 5632},                                        \
      {"gemv_" tag "_2048x5632_xwt", dt, true, 2048, 5632},                                        \
      {"gemv_" tag "_5632x2048_xw", dt, false, 5632, 2048},                                        \
      {"gemv_" tag "_5632x2048_xwt", dt, true, 5632, 2048},                                        \
      {"gemv_" tag "_2048x32000_xw", dt, false, 2048, 32000}, {                                    \
    "gemv_" tag "_2048x32000_xwt", dt, true, 2048, 32000                                           \
  }

static const gemv_case cases[] = {CASES_OF(EMLX_BFLOAT16, "bf16"), CASES_OF(EMLX_FLOAT16, "f16"),
                                  CASES_OF(EMLX_FLOAT32, "f32")};
#define NCASES (int)(sizeof cases / sizeof cases[0])

static double median_of(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static void print_line(const char *name, const char *impl, double *t, int reps, double bytes,
                       double bw, double checksum) {
  double med = median_of(t, reps);
  printf("case=%s impl=%s threads=%d reps=%d median_ms=%.4f min_ms=%.4f max_ms=%.4f gb_s=%.2f "
         "bw_frac=%.3f checksum=%.17g\n",
         name, impl, emlx_num_threads(), reps, med, t[0], t[reps - 1], bytes / (med * 1e-3) / 1e9,
         bytes / (med * 1e-3) / 1e9 / bw, checksum);
  fflush(stdout);
}

/* Small integers in [-4, 4), exact in every dtype, so the three dtypes'
 * checksums agree before the output's rounding. */
static emlx_array *make_matrix(emlx_dtype dt, int64_t rows, int64_t cols, uint64_t seed) {
  bench_input in = {dt, 2, {rows, cols}, seed, BENCH_INT, -4, 4};
  return bench_make_input(&in);
}

static int run_case(const gemv_case *c, int reps, double bw) {
  size_t esz = emlx_dtype_size(c->dtype);
  double wbytes = (double)c->K * (double)c->N * (double)esz;
  int copies = (int)((double)MIN_ROTATION / wbytes) + 1;
  emlx_array *x = make_matrix(c->dtype, 1, c->K, 21);
  emlx_array **w = calloc((size_t)copies, sizeof *w);
  double *t = malloc((size_t)reps * sizeof *t);
  int rc = -1;
  if (!x || !w || !t)
    goto done;
  for (int i = 0; i < copies; i++) {
    w[i] = c->wt ? make_matrix(c->dtype, c->N, c->K, 22 + (uint64_t)i)
                 : make_matrix(c->dtype, c->K, c->N, 22 + (uint64_t)i);
    if (!w[i] || emlx_eval(&w[i], 1) != 0)
      goto done;
  }
  if (emlx_eval(&x, 1) != 0)
    goto done;
  double checksum = 0.0;
  for (int r = -3; r < reps; r++) {
    emlx_array *wi = w[(r + 3) % copies], *wv = NULL;
    double t0 = bench_now_ms();
    if (c->wt)
      wv = emlx_transpose(wi, (const int[]){1, 0}, 2);
    emlx_array *y = emlx_matmul(x, wv ? wv : wi);
    if (!y || emlx_eval(&y, 1) != 0) {
      fprintf(stderr, "bench_gemv: %s: %s\n", c->name, emlx_last_error());
      emlx_release(y);
      emlx_release(wv);
      goto done;
    }
    double ms = bench_now_ms() - t0;
    if (r == -3)
      checksum = bench_checksum(y);
    emlx_release(y);
    emlx_release(wv);
    if (r >= 0)
      t[r] = ms;
  }
  print_line(c->name, "emlx", t, reps, wbytes, bw, checksum);
  if (c->dtype == EMLX_FLOAT32) {
    int n = (int)c->N, k = (int)c->K;
    float *y = malloc((size_t)n * sizeof *y);
    if (!y)
      goto done;
    double s = 0.0;
    int64_t samples = n < BENCH_CHECKSUM_SAMPLES ? n : BENCH_CHECKSUM_SAMPLES;
    /* rep -4 (untimed, copy 0, as the emlx side's checksum) */
    for (int r = -4; r < reps; r++) {
      const float *wp = emlx_data(w[r < -3 ? 0 : (r + 3) % copies]);
      double t0 = bench_now_ms();
      if (c->wt) /* W [N, K]: y = W x */
        cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, wp, k, emlx_data(x), 1, 0.0f, y, 1);
      else /* W [K, N]: y = W^T x */
        cblas_sgemv(CblasRowMajor, CblasTrans, k, n, 1.0f, wp, n, emlx_data(x), 1, 0.0f, y, 1);
      double ms = bench_now_ms() - t0;
      if (r == -4)
        for (int64_t q = 0; q < samples; q++)
          s += (double)y[q * n / samples];
      if (r >= 0)
        t[r] = ms;
    }
    free(y);
    print_line(c->name, "sgemv", t, reps, wbytes, bw, s);
  }
  rc = 0;
done:
  for (int i = 0; w && i < copies; i++)
    emlx_release(w[i]);
  emlx_release(x);
  free(w);
  free(t);
  return rc;
}

int main(int argc, char **argv) {
  int reps = 21, nsel = 0;
  const char *sel[64];
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      emlx_set_num_threads(atoi(argv[++i]));
    } else if (!strcmp(argv[i], "--case") && i + 1 < argc && nsel < 64) {
      sel[nsel++] = argv[++i];
    } else if (!strcmp(argv[i], "--list")) {
      for (int c = 0; c < NCASES; c++)
        printf("%s\n", cases[c].name);
      return 0;
    } else {
      fprintf(stderr, "usage: %s [--reps K] [--threads N] [--case NAME]... [--list]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 1 || reps > 1000) {
    fprintf(stderr, "bench_gemv: --reps must be 1..1000\n");
    return 2;
  }
  for (int s = 0; s < nsel; s++) {
    bool known = false;
    for (int c = 0; c < NCASES; c++)
      known |= !strcmp(sel[s], cases[c].name);
    if (!known) {
      fprintf(stderr, "bench_gemv: unknown case %s (--list)\n", sel[s]);
      return 2;
    }
  }
  printf("# emlx version=%d.%d.%d simd=%s threads=%d reps=%d\n", EMLX_VERSION_MAJOR,
         EMLX_VERSION_MINOR, EMLX_VERSION_PATCH, emlx_simd_level(), emlx_num_threads(), reps);
  double bw_med = 0.0, bw = bench_bw_measure(emlx_num_threads(), reps < 21 ? 21 : reps, &bw_med);
  if (bw <= 0.0) {
    fprintf(stderr, "bench_gemv: out of memory for the stream buffer\n");
    return 1;
  }
  printf("case=read_bw impl=memory gb_s=%.2f median_gb_s=%.2f\n", bw, bw_med);
  int failed = 0;
  for (int c = 0; c < NCASES; c++) {
    bool run = nsel == 0;
    for (int s = 0; s < nsel; s++)
      run |= !strcmp(sel[s], cases[c].name);
    if (run && run_case(&cases[c], reps, bw) != 0)
      failed = 1;
  }
  return failed;
}
