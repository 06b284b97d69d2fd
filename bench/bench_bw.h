/* bench_bw.h — the machine's streaming read bandwidth, measured as a decode
 * step's pool reads its weights: nt threads made once (the caller is thread
 * 0), each summing its contiguous part of a 40 MB slice with AVX2 loads
 * between two barriers, so a rep times the reads alone and no thread start;
 * the reps take the slices of a 160 MB buffer in turn (more than the 16 to
 * 105 MB L3s of the machines measured), so none is cached. bench_quant.c
 * and bench_gemv.c measure against it. */
#ifndef EMLX_BENCH_BW_H
#define EMLX_BENCH_BW_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define BENCH_BW_SLICES 4
#define BENCH_BW_SLICE_WORDS ((size_t)40 << 17) /* 40 MiB of uint64 */
#define BENCH_BW_MAX_THREADS 64

typedef struct bench_bw_team {
  pthread_barrier_t start, done;
  int nt;
  bool quit;
  const uint64_t *buf;
  size_t n;
  uint64_t sums[BENCH_BW_MAX_THREADS];
  pthread_t th[BENCH_BW_MAX_THREADS];
} bench_bw_team;

typedef struct bench_bw_arg {
  bench_bw_team *team;
  int t;
} bench_bw_arg;

#if defined(__x86_64__)
__attribute__((target("avx2"))) static inline uint64_t bench_bw_sum_avx2(const uint64_t *p,
                                                                         size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i + 16 <= n; i += 16) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256((const __m256i *)(const void *)(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256((const __m256i *)(const void *)(p + i + 4)));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256((const __m256i *)(const void *)(p + i + 8)));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256((const __m256i *)(const void *)(p + i + 12)));
  }
  uint64_t t[4];
  _mm256_storeu_si256((__m256i *)(void *)t,
                      _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)));
  return t[0] + t[1] + t[2] + t[3];
}
#endif

static inline uint64_t bench_bw_sum(const uint64_t *p, size_t n) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2"))
    return bench_bw_sum_avx2(p, n);
#endif
  uint64_t a[8] = {0};
  for (size_t i = 0; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; k++)
      a[k] += p[i + k];
  return a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
}

static inline void bench_bw_part(bench_bw_team *tm, int t) {
  size_t per = tm->n / (size_t)tm->nt;
  tm->sums[t] = bench_bw_sum(tm->buf + per * (size_t)t, per);
}

static inline void *bench_bw_worker(void *arg) {
  bench_bw_arg *a = arg;
  bench_bw_team *tm = a->team;
  for (;;) {
    pthread_barrier_wait(&tm->start);
    if (tm->quit)
      return NULL;
    bench_bw_part(tm, a->t);
    pthread_barrier_wait(&tm->done);
  }
}

static inline double bench_bw_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int bench_bw_cmp(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

/* Bytes one rep reads. */
#define BENCH_BW_REP_BYTES ((double)(BENCH_BW_SLICE_WORDS * 8))

/* A stream reader kept open, so that its reps can alternate with another
 * bench's (bench_quant's paired decode figures): the buffer, its pool of
 * nt threads (the caller is thread 0), the next slice. One may be open at
 * a time (its team is static). */
typedef struct bench_bw {
  bench_bw_team *team;
  uint64_t *buf;
  int next;
  uint64_t check;
  bench_bw_arg args[BENCH_BW_MAX_THREADS];
} bench_bw;

/* 0, or -1 when the buffer cannot be had. */
static inline int bench_bw_open(bench_bw *b, int nt) {
  static bench_bw_team team;
  size_t n = BENCH_BW_SLICE_WORDS * BENCH_BW_SLICES;
  b->buf = aligned_alloc(64, n * 8);
  if (!b->buf)
    return -1;
  for (size_t i = 0; i < n; i++)
    b->buf[i] = i;
  b->team = &team, b->next = 0, b->check = 0;
  team.nt = nt < 1 ? 1 : nt > BENCH_BW_MAX_THREADS ? BENCH_BW_MAX_THREADS : nt;
  team.quit = false;
  pthread_barrier_init(&team.start, NULL, (unsigned)team.nt);
  pthread_barrier_init(&team.done, NULL, (unsigned)team.nt);
  for (int i = 1; i < team.nt; i++) {
    b->args[i] = (bench_bw_arg){&team, i};
    pthread_create(&team.th[i], NULL, bench_bw_worker, &b->args[i]);
  }
  return 0;
}

/* Seconds of one rep: the next 40 MB slice read by the team. */
static inline double bench_bw_rep(bench_bw *b) {
  bench_bw_team *tm = b->team;
  tm->buf = b->buf + BENCH_BW_SLICE_WORDS * (size_t)b->next, tm->n = BENCH_BW_SLICE_WORDS;
  b->next = (b->next + 1) % BENCH_BW_SLICES;
  double t0 = bench_bw_now_s();
  pthread_barrier_wait(&tm->start);
  bench_bw_part(tm, 0);
  pthread_barrier_wait(&tm->done);
  double t = bench_bw_now_s() - t0;
  for (int i = 0; i < tm->nt; i++)
    b->check += tm->sums[i];
  return t;
}

static inline void bench_bw_close(bench_bw *b) {
  bench_bw_team *tm = b->team;
  tm->quit = true;
  pthread_barrier_wait(&tm->start);
  for (int i = 1; i < tm->nt; i++)
    pthread_join(tm->th[i], NULL);
  pthread_barrier_destroy(&tm->start);
  pthread_barrier_destroy(&tm->done);
  free(b->buf);
  b->buf = NULL;
}

/* Seconds of each of reps reads of the open reader b, sorted ascending
 * into t. */
static inline void bench_bw_reps(bench_bw *b, int reps, double *t) {
  for (int r = 0; r < reps; r++)
    t[r] = bench_bw_rep(b);
  qsort(t, (size_t)reps, sizeof *t, bench_bw_cmp);
  if (b->check == 42) /* keeps the sums live */
    t[0] += 1e-12;
}

/* Seconds of each of reps reads by nt threads, sorted ascending into t;
 * 0, or -1 when the buffer cannot be had. */
static inline int bench_bw_times(int nt, int reps, double *t) {
  bench_bw b;
  if (bench_bw_open(&b, nt) != 0)
    return -1;
  bench_bw_reps(&b, reps, t);
  bench_bw_close(&b);
  return 0;
}

/* GB/s of the best of reps reads by nt threads (*median_gbs: the median
 * rep's), or 0 when the buffer cannot be had. */
static inline double bench_bw_measure(int nt, int reps, double *median_gbs) {
  double *t = malloc((size_t)reps * sizeof *t);
  if (!t || bench_bw_times(nt, reps, t) != 0) {
    free(t);
    return 0.0;
  }
  if (median_gbs)
    *median_gbs = BENCH_BW_REP_BYTES / t[reps / 2] * 1e-9;
  double best = BENCH_BW_REP_BYTES / t[0] * 1e-9;
  free(t);
  return best;
}

#endif
