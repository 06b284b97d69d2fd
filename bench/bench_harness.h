/* bench_harness.h — the shared harness of the EMLX benchmark programs.
 *
 * Every bench/<area>.c is its own program (CMake builds emlx_bench_<area>),
 * so what they share lives here, header-only: deterministic inputs, the
 * timing loop, the result checksum, the command line and the output lines.
 * An area's program is a table of bench_case rows plus
 *
 *     int main(int argc, char **argv) { return bench_main(argc, argv, cases, N); }
 *
 * Inputs and checksums are defined so that bench/compare.py can rebuild the
 * same inputs in numpy and cross-check results; keep the two in step:
 *
 *   - Value i (0-based) of an input with seed s is splitmix64's (i+1)-th
 *     output from state s: z = s + (i+1) * 0x9E3779B97F4A7C15, then the usual
 *     mix. With u = z >> 40 (24 random bits):
 *       BENCH_U01  u * 2^-24              uniform in [0, 1), exact in f32
 *       BENCH_SYM  (u - 2^23) * 2^-23     uniform in [-1, 1), exact in f32
 *       BENCH_INT  lo + z % (hi - lo)     integers in [lo, hi)
 *     then converted to the input's dtype (round to nearest even).
 *   - checksum of an array of n elements (flat, row-major): with
 *     K = min(n, 64), the sum in double of elements floor(k * n / K),
 *     k = 0..K-1. The same formula over the inputs gives in_checksum, which
 *     tells an input mismatch apart from a wrong result. */
#ifndef EMLX_BENCH_HARNESS_H
#define EMLX_BENCH_HARNESS_H

#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emlx.h"

#define BENCH_MAX_INPUTS 8
#define BENCH_MAX_SELECTED 64
#define BENCH_CHECKSUM_SAMPLES 64
#define BENCH_DEFAULT_REPS 21
#define BENCH_DEFAULT_WARMUP 3

typedef enum bench_dist { BENCH_SYM, BENCH_U01, BENCH_INT } bench_dist;

typedef struct bench_input {
  emlx_dtype dtype;
  int ndim;
  int64_t shape[4];
  uint64_t seed;
  bench_dist dist;
  int64_t lo, hi; /* BENCH_INT only: [lo, hi) */
} bench_input;

/* Builds the lazy result from the case's inputs (borrowed) and returns one
 * new reference, having released its own intermediates, or NULL with
 * emlx_last_error(). */
typedef emlx_array *(*bench_build_fn)(emlx_array *const *in);

typedef struct bench_case {
  const char *name;
  const char *what; /* one line: the expression, for --list */
  double bytes;     /* least memory traffic (inputs read + output written); 0: none */
  int ninputs;
  bench_input inputs[BENCH_MAX_INPUTS];
  bench_build_fn build;
} bench_case;

typedef struct bench_options {
  int reps, warmup, threads;
  bool list;
  int nselected;
  const char *selected[BENCH_MAX_SELECTED];
} bench_options;

/* ---- inputs ---------------------------------------------------------------- */

static inline uint64_t bench_splitmix64(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * UINT64_C(0x9E3779B97F4A7C15);
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static inline int64_t bench_input_size(const bench_input *spec) {
  int64_t n = 1;
  for (int d = 0; d < spec->ndim; d++)
    n *= spec->shape[d];
  return n;
}

/* Stores v (exact in double) as element i of a buffer of dtype; -1 if the
 * dtype is not one the generator supports. */
static inline int bench_store(void *buf, emlx_dtype dtype, int64_t i, double v) {
  union {
    float f32;
    double f64;
    uint16_t u16;
    int32_t i32;
    int64_t i64;
    uint32_t u32;
    uint8_t u8;
  } x;
  switch (dtype) {
  case EMLX_FLOAT32:
    x.f32 = (float)v;
    break;
  case EMLX_FLOAT64:
    x.f64 = v;
    break;
  case EMLX_FLOAT16:
    x.u16 = emlx_f32_to_f16((float)v);
    break;
  case EMLX_BFLOAT16:
    x.u16 = emlx_f32_to_bf16((float)v);
    break;
  case EMLX_INT32:
    x.i32 = (int32_t)v;
    break;
  case EMLX_INT64:
    x.i64 = (int64_t)v;
    break;
  case EMLX_UINT32:
    x.u32 = (uint32_t)v;
    break;
  case EMLX_UINT8:
    x.u8 = (uint8_t)v;
    break;
  case EMLX_BOOL:
    x.u8 = v != 0.0;
    break;
  default:
    return -1;
  }
  size_t esize = emlx_dtype_size(dtype);
  memcpy((char *)buf + (size_t)i * esize, &x, esize);
  return 0;
}

static inline double bench_value(const bench_input *spec, uint64_t z) {
  uint64_t u = z >> 40;
  switch (spec->dist) {
  case BENCH_U01:
    return (double)u * 0x1p-24;
  case BENCH_SYM:
    return ((double)u - 0x1p23) * 0x1p-23;
  case BENCH_INT:
    return (double)(spec->lo + (int64_t)(z % (uint64_t)(spec->hi - spec->lo)));
  }
  return 0.0;
}

/* The input as an emlx array (a leaf); NULL on failure, with a message. */
static inline emlx_array *bench_make_input(const bench_input *spec) {
  int64_t n = bench_input_size(spec);
  size_t esize = emlx_dtype_size(spec->dtype);
  if (esize == 0 || (spec->dist == BENCH_INT && spec->hi <= spec->lo)) {
    fprintf(stderr, "bench: bad input spec\n");
    return NULL;
  }
  void *buf = malloc(n > 0 ? (size_t)n * esize : 1);
  if (!buf) {
    fprintf(stderr, "bench: out of memory for an input of %lld elements\n", (long long)n);
    return NULL;
  }
  for (int64_t i = 0; i < n; i++) {
    double v = bench_value(spec, bench_splitmix64(spec->seed, (uint64_t)i));
    if (bench_store(buf, spec->dtype, i, v) != 0) {
      fprintf(stderr, "bench: input dtype %s not supported\n", emlx_dtype_name(spec->dtype));
      free(buf);
      return NULL;
    }
  }
  emlx_array *a = emlx_from_blob(buf, spec->dtype, spec->shape, spec->ndim, EMLX_CPU);
  free(buf);
  if (!a)
    fprintf(stderr, "bench: emlx_from_blob: %s\n", emlx_last_error());
  return a;
}

/* ---- checksum -------------------------------------------------------------- */

/* Element flat (row-major order) of an evaluated array, as double. */
static inline double bench_element(const emlx_array *a, int64_t flat) {
  int nd = emlx_ndim(a);
  const int64_t *shape = emlx_shape(a);
  const int64_t *strides = emlx_strides(a);
  int64_t off = 0;
  for (int d = nd - 1; d >= 0; d--) {
    off += (flat % shape[d]) * strides[d];
    flat /= shape[d];
  }
  emlx_dtype dt = emlx_array_dtype(a);
  const char *p = (const char *)emlx_data(a) + off * (int64_t)emlx_dtype_size(dt);
  union {
    float f32;
    double f64;
    uint16_t u16;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint32_t u32;
    uint64_t u64;
  } x;
  memcpy(&x, p, emlx_dtype_size(dt));
  switch (dt) {
  case EMLX_BOOL:
  case EMLX_UINT8:
    return (double)x.u8;
  case EMLX_UINT16:
    return (double)x.u16;
  case EMLX_UINT32:
    return (double)x.u32;
  case EMLX_UINT64:
    return (double)x.u64;
  case EMLX_INT8:
    return (double)x.i8;
  case EMLX_INT16:
    return (double)x.i16;
  case EMLX_INT32:
    return (double)x.i32;
  case EMLX_INT64:
    return (double)x.i64;
  case EMLX_FLOAT16:
    return (double)emlx_f16_to_f32(x.u16);
  case EMLX_BFLOAT16:
    return (double)emlx_bf16_to_f32(x.u16);
  case EMLX_FLOAT32:
  case EMLX_COMPLEX64:
    return (double)x.f32; /* real part */
  case EMLX_FLOAT64:
    return x.f64;
  default:
    return 0.0;
  }
}

/* Sum of up to 64 evenly spread elements; a must be evaluated. */
static inline double bench_checksum(const emlx_array *a) {
  int64_t n = emlx_size(a);
  int64_t k_count = n < BENCH_CHECKSUM_SAMPLES ? n : BENCH_CHECKSUM_SAMPLES;
  double s = 0.0;
  for (int64_t k = 0; k < k_count; k++)
    s += bench_element(a, k * n / k_count);
  return s;
}

/* ---- timing ---------------------------------------------------------------- */

static inline double bench_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static inline int bench_cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

/* One repetition: build the graph, evaluate it, release it. Returns the
 * milliseconds it took, or a negative value on failure. When checksum is
 * non-NULL the result's checksum is stored there, its reading not timed. */
static inline double bench_rep(const bench_case *c, emlx_array *const *in, double *checksum) {
  double t0 = bench_now_ms();
  emlx_array *r = c->build(in);
  if (!r || emlx_eval(&r, 1) != 0) {
    fprintf(stderr, "bench: case %s: %s\n", c->name, emlx_last_error());
    emlx_release(r);
    return -1.0;
  }
  double skipped = 0.0;
  if (checksum) {
    double c0 = bench_now_ms();
    *checksum = bench_checksum(r);
    skipped = bench_now_ms() - c0;
  }
  emlx_release(r);
  return bench_now_ms() - t0 - skipped;
}

/* What a custom runner adds to a case (all optional): prepare runs once on
 * the inputs before the warm-up (untimed; non-zero fails the case); ops > 0
 * adds us_per_op (the median over ops) to the line; *median receives the
 * median in ms. */
typedef struct bench_run_extra {
  int (*prepare)(emlx_array *const *in);
  double ops;
  double *median;
} bench_run_extra;

/* Runs one case and prints its line. Returns 0 or -1. */
static inline int bench_run_case_ex(const bench_case *c, const bench_options *opt,
                                    const bench_run_extra *x) {
  emlx_array *in[BENCH_MAX_INPUTS] = {0};
  double *times = malloc((size_t)opt->reps * sizeof *times);
  double in_checksum = 0.0, checksum = 0.0;
  int rc = -1;
  if (!times)
    goto done;
  for (int i = 0; i < c->ninputs; i++) {
    in[i] = bench_make_input(&c->inputs[i]);
    if (!in[i] || emlx_eval(&in[i], 1) != 0)
      goto done;
    in_checksum += bench_checksum(in[i]);
  }
  if (x && x->prepare && x->prepare(in) != 0)
    goto done;
  /* The first run, warm-up or timed, also yields the checksum. */
  for (int w = 0; w < opt->warmup; w++)
    if (bench_rep(c, in, w == 0 ? &checksum : NULL) < 0.0)
      goto done;
  for (int r = 0; r < opt->reps; r++) {
    times[r] = bench_rep(c, in, opt->warmup == 0 && r == 0 ? &checksum : NULL);
    if (times[r] < 0.0)
      goto done;
  }
  qsort(times, (size_t)opt->reps, sizeof *times, bench_cmp_double);
  int mid = opt->reps / 2;
  double median = opt->reps % 2 ? times[mid] : 0.5 * (times[mid - 1] + times[mid]);
  if (x && x->median)
    *x->median = median;
  printf("case=%s impl=emlx threads=%d reps=%d median_ms=%.4f min_ms=%.4f checksum=%.17g "
         "in_checksum=%.17g",
         c->name, emlx_num_threads(), opt->reps, median, times[0], checksum, in_checksum);
  if (c->bytes > 0.0)
    printf(" gb_s=%.2f", c->bytes / (median * 1e-3) / 1e9);
  if (x && x->ops > 0)
    printf(" us_per_op=%.3f", median * 1e3 / x->ops);
  printf("\n");
  fflush(stdout);
  rc = 0;
done:
  for (int i = 0; i < c->ninputs; i++)
    emlx_release(in[i]);
  free(times);
  return rc;
}

static inline int bench_run_case(const bench_case *c, const bench_options *opt) {
  return bench_run_case_ex(c, opt, NULL);
}

/* ---- command line ---------------------------------------------------------- */

static inline void bench_usage(FILE *f, const char *prog) {
  fprintf(f,
          "usage: %s [--case NAME]... [--reps K] [--warmup W] [--threads N] [--list]\n"
          "  --case NAME  run only this case (repeatable); default: all\n"
          "  --reps K     timed repetitions per case (default %d); median and min reported\n"
          "  --warmup W   untimed repetitions first (default %d)\n"
          "  --threads N  emlx_set_num_threads(N) (default: cores, or EMLX_NUM_THREADS)\n"
          "  --list       print the case names, one per line, with their expression\n",
          prog, BENCH_DEFAULT_REPS, BENCH_DEFAULT_WARMUP);
}

static inline int bench_parse_int(const char *s, int min, int *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < min || v > 1000000)
    return -1;
  *out = (int)v;
  return 0;
}

/* Returns 0, 1 (help printed: exit 0) or -1 (bad usage). */
static inline int bench_parse(int argc, char **argv, bench_options *opt) {
  *opt = (bench_options){.reps = BENCH_DEFAULT_REPS, .warmup = BENCH_DEFAULT_WARMUP};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--list")) {
      opt->list = true;
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      bench_usage(stdout, argv[0]);
      return 1;
    } else if (v && !strcmp(a, "--case") && opt->nselected < BENCH_MAX_SELECTED) {
      opt->selected[opt->nselected++] = v;
      i++;
    } else if (v && !strcmp(a, "--reps") && bench_parse_int(v, 1, &opt->reps) == 0) {
      i++;
    } else if (v && !strcmp(a, "--warmup") && bench_parse_int(v, 0, &opt->warmup) == 0) {
      i++;
    } else if (v && !strcmp(a, "--threads") && bench_parse_int(v, 1, &opt->threads) == 0) {
      i++;
    } else {
      fprintf(stderr, "%s: bad argument '%s'%s\n", argv[0], a,
              v || a[0] != '-' ? "" : " (missing value)");
      bench_usage(stderr, argv[0]);
      return -1;
    }
  }
  return 0;
}

/* A program's cases as bench_main_suite sees them: names, descriptions,
 * and how to run case i (0, or non-zero when it failed). */
typedef struct bench_suite {
  size_t ncases;
  const void *ctx;
  const char *(*name)(const void *ctx, size_t i);
  const char *(*what)(const void *ctx, size_t i);
  int (*run)(const void *ctx, size_t i, const bench_options *opt);
} bench_suite;

/* Parses the options, lists or runs the selected cases, prints the header
 * line; the exit status of the program. */
static inline int bench_main_suite(int argc, char **argv, const bench_suite *suite) {
  bench_options opt;
  int p = bench_parse(argc, argv, &opt);
  if (p != 0)
    return p > 0 ? 0 : 2;
  for (int s = 0; s < opt.nselected; s++) {
    size_t i = 0;
    while (i < suite->ncases && strcmp(suite->name(suite->ctx, i), opt.selected[s]) != 0)
      i++;
    if (i == suite->ncases) {
      fprintf(stderr, "%s: unknown case '%s' (see --list)\n", argv[0], opt.selected[s]);
      return 2;
    }
  }
  if (opt.list) {
    for (size_t i = 0; i < suite->ncases; i++)
      printf("%s\t%s\n", suite->name(suite->ctx, i), suite->what(suite->ctx, i));
    return 0;
  }
  if (opt.threads > 0 && emlx_set_num_threads(opt.threads) < 0) {
    fprintf(stderr, "%s: emlx_set_num_threads: %s\n", argv[0], emlx_last_error());
    return 2;
  }
  printf("# emlx version=%d.%d.%d simd=%s threads=%d cores=%ld reps=%d warmup=%d\n",
         EMLX_VERSION_MAJOR, EMLX_VERSION_MINOR, EMLX_VERSION_PATCH, emlx_simd_level(),
         emlx_num_threads(), sysconf(_SC_NPROCESSORS_ONLN), opt.reps, opt.warmup);
  fflush(stdout);
  int failed = 0;
  for (size_t i = 0; i < suite->ncases; i++) {
    bool run = opt.nselected == 0;
    for (int s = 0; s < opt.nselected && !run; s++)
      run = !strcmp(suite->name(suite->ctx, i), opt.selected[s]);
    if (run && suite->run(suite->ctx, i, &opt) != 0)
      failed++;
  }
  return failed ? 1 : 0;
}

static inline const char *bench_case_name(const void *ctx, size_t i) {
  return ((const bench_case *)ctx)[i].name;
}
static inline const char *bench_case_what(const void *ctx, size_t i) {
  return ((const bench_case *)ctx)[i].what;
}
static inline int bench_case_run(const void *ctx, size_t i, const bench_options *opt) {
  return bench_run_case(&((const bench_case *)ctx)[i], opt);
}

/* The main of a program whose cases are a bench_case table. */
static inline int bench_main(int argc, char **argv, const bench_case *cases, size_t ncases) {
  bench_suite suite = {ncases, cases, bench_case_name, bench_case_what, bench_case_run};
  return bench_main_suite(argc, argv, &suite);
}

#endif
