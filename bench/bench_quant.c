/* bench_quant.c — the fast quantized matmul kernels (src/cpu/quantize/
 * qmm_fast.h, issue 15) on the shapes of a 7-8B LLM's MLP, and this
 * machine's streaming read bandwidth (bench_bw.h), so the decode
 * case can be read as a fraction of it.
 *
 *   x (M, 4096) . W (14336, 4096)^T, M = 1 and 8 (decode) and 512 (prefill),
 *   for affine 4-bit g64, affine 8-bit g64 (f32 scales and biases, as
 *   mx.quantize gives for f32 weights) and mxfp4; affine 8-bit and 4-bit
 *   g64 with f16 scales and biases too (as mlx-community checkpoints carry
 *   them; the bytes of ggml's q8_0 and q4_0: 8.5 and 4.5 bits a weight),
 *   M = 1; gather_qmm with 8 experts of (2048, 4096) affine 4-bit g64, 64
 *   tokens, 2 experts each, against the
 *   same products done as 8 separate quantized matmuls (one per expert, over
 *   the rows routed to it, x rows copied out first as a caller would).
 * The dense cases rotate over 4 copies of W, so the weights come from
 * memory as a model's do, not from the L3.
 *
 * Output: one line per case, "case=NAME median_ms=.. min_ms=.. max_ms=..
 * [gbps=..] [gflops=..] [bw_frac=..]", read by bench/quant_peers.py, which
 * runs MLX and ggml on the same shapes in the same run. A dense M = 1
 * case's bw_frac is its median GB/s over read_bw's best rep; its _paired
 * line then times it again with each product after one read rep, and gives
 * the median of the pairs' ratios (bw_frac) with their min and max: the
 * same load on both sides of each ratio.
 *
 * qmm_<fmt>_m1_hot: the same product over one copy of 2048 rows of W, run
 * over and over, so W sits in the L3 (5.2 MB at most): the in-cache compute
 * time, with full_ms its time scaled to the 14336 rows of the m1 case. Read
 * next to that case's (cold) time and read_bw: cold near max(full_ms,
 * bytes / read_bw) is compute or memory bound; cold far above both is
 * failed overlap of the two.
 *
 * Usage: emlx_bench_bench_quant [--reps K] [--threads N] [--copies C] [--no-int-dot]
 *                               [--hugepage] [--case NAME]...
 * dot_ceiling (AVX-512 VNNI): what one core's vpdpbusd zmm alone can do (16
 * independent sums, register operands, the best of 5 runs of 40 ms or so),
 * and the ceiling it sets, with the pool's threads (one a core), on the
 * integer decode path: 6 of them per 64 bytes of 4-bit W and x row (x's
 * 24-bit codes, as three bytes, times the low and the high nibbles), so M
 * rows of x read W at most at threads * dots_per_ns * 64 / (6 M) GB/s,
 * whatever the memory gives (m1_gbps, m8_gbps; m8_frac: over read_bw's
 * best).
 *
 * --copies C (1 to 4, default 4): the copies of W the dense cases take in
 * turn (1: one W reused, as ggml's perf mode does, partly found in the L3).
 * --no-int-dot: the integer decode path off (emlx_cpu_qmm_fast_int_dot), so
 * the f32 decode path's figures can be read next to it. --hugepage: W, its
 * scales and biases in 2 MiB-aligned mappings with MADV_HUGEPAGE, as the
 * engine's allocator (src/core/alloc.c) gives large buffers; by default
 * aligned_alloc's 4 KiB pages, like read_bw's buffer. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "../src/cpu/quantize/qmm_fast.h"
#include "bench_bw.h"
#include "../src/cpu/quantize/qmm_tile.h"
#include "emlx.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DOT_CEILING 1
/* vpdpbusd zmm per ns on this core: 16 independent sums, a dot each a step */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static double dots_per_ns(void) {
  const __m512i b = _mm512_set1_epi8(3), c = _mm512_set1_epi8(5);
  __m512i a0 = _mm512_set1_epi32(0), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0,
          a8 = a0, a9 = a0, a10 = a0, a11 = a0, a12 = a0, a13 = a0, a14 = a0, a15 = a0;
  const long steps = 20000000;
  double best = 1e9;
  for (int run = 0; run < 5; run++) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < steps; i++) {
#define DP(v) v = _mm512_dpbusd_epi32(v, b, c)
      DP(a0), DP(a1), DP(a2), DP(a3), DP(a4), DP(a5), DP(a6), DP(a7);
      DP(a8), DP(a9), DP(a10), DP(a11), DP(a12), DP(a13), DP(a14), DP(a15);
#undef DP
      /* the sums kept in registers and live: no step folded away */
      __asm__ volatile(""
                       : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5), "+v"(a6),
                         "+v"(a7));
      __asm__ volatile(""
                       : "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11), "+v"(a12), "+v"(a13), "+v"(a14),
                         "+v"(a15));
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double t = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    best = t < best ? t : best;
  }
  __m512i s = _mm512_add_epi32(_mm512_add_epi32(a0, a7), _mm512_add_epi32(a8, a15));
  if (_mm512_reduce_add_epi32(s) == 1) /* (never: keeps the sums) */
    best *= 2;
  return 16.0 * (double)steps / best * 1e-9;
}
#endif

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static uint64_t rng_state = 15;
static uint64_t rnd(void) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static float rndf(float lo, float hi) {
  return lo + (hi - lo) * (float)((double)(rnd() >> 40) * 0x1p-24);
}

static bool hugepage_opt = false;

/* Buffers of W: aligned_alloc, or (--hugepage) a 2 MiB-aligned mapping
 * advised to huge pages, its start stored just below the pointer's 2 MiB. */
#define HP ((size_t)2 << 20)
static void *wbuf_alloc(size_t n) {
  if (!hugepage_opt)
    return aligned_alloc(64, (n + 63) / 64 * 64);
  size_t whole = (n + HP - 1) / HP * HP, len = whole + 2 * HP; /* at + whole stays inside */
  char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED)
    return NULL;
  char *at = (char *)(((uintptr_t)raw + HP + HP - 1) & ~(uintptr_t)(HP - 1));
#ifdef MADV_HUGEPAGE
  madvise(at, whole, MADV_HUGEPAGE);
#endif
  ((void **)(void *)at)[-1] = raw;
  ((size_t *)(void *)at)[-2] = len;
  return at;
}
static void wbuf_free(void *p) {
  if (!p)
    return;
  if (!hugepage_opt) {
    free(p);
    return;
  }
  munmap(((void **)p)[-1], ((size_t *)p)[-2]);
}

/* ---- cases --------------------------------------------------------------------- */

typedef struct qbuf {
  int mode, bits, gs;
  int64_t N, K;
  uint32_t *w;
  void *scales, *biases;
  emlx_dtype sdt;
  double bytes; /* packed weights + scales + biases */
} qbuf;

/* f32 to f16 bits, for the bench's scales and biases (normal or flushed to 0) */
static uint16_t f16_of(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000u;
  int e = (int)((u >> 23) & 0xff) - 112;
  return (uint16_t)(e <= 0 ? sign : sign | (uint32_t)e << 10 | ((u >> 13) & 0x3ffu));
}

static qbuf make_q(int mode, int bits, int gs, int64_t N, int64_t K, int64_t copies,
                   emlx_dtype sdt) {
  qbuf q = {mode, bits, gs, N, K, NULL, NULL, NULL, EMLX_FLOAT32, 0};
  int64_t words = N * K * bits / 32 * copies, ns = N * (K / gs) * copies;
  q.w = wbuf_alloc((size_t)words * 4);
  for (int64_t i = 0; i < words; i++)
    q.w[i] = (uint32_t)rnd();
  if (mode == EMLX_QMM_AFFINE) {
    float *s = wbuf_alloc((size_t)ns * 4), *b = wbuf_alloc((size_t)ns * 4);
    for (int64_t i = 0; i < ns; i++) {
      s[i] = rndf(0.001f, 0.01f);
      b[i] = rndf(-0.05f, 0.05f);
    }
    q.scales = s, q.biases = b;
    q.bytes = (double)words * 4 + (double)ns * 8;
    if (sdt == EMLX_FLOAT16) {
      uint16_t *s16 = wbuf_alloc((size_t)ns * 2 + 64), *b16 = wbuf_alloc((size_t)ns * 2 + 64);
      for (int64_t i = 0; i < ns; i++) {
        s16[i] = f16_of(s[i]);
        b16[i] = f16_of(b[i]);
      }
      wbuf_free(s), wbuf_free(b);
      q.scales = s16, q.biases = b16;
      q.sdt = EMLX_FLOAT16;
      q.bytes = (double)words * 4 + (double)ns * 4;
    }
  } else {
    uint8_t *s = wbuf_alloc((size_t)ns + 64);
    for (int64_t i = 0; i < ns; i++)
      s[i] = (uint8_t)(118 + rnd() % 4);
    q.scales = s;
    q.sdt = EMLX_UINT8;
    q.bytes = (double)words * 4 + (double)ns;
  }
  q.bytes /= (double)copies;
  return q;
}

static emlx_qmm_desc qdesc(const qbuf *q, const float *x, int64_t M, float *out) {
  emlx_qmm_desc d = {.x = x,
                     .ldx = q->K,
                     .M = M,
                     .N = q->N,
                     .K = q->K,
                     .w = q->w,
                     .scales = q->scales,
                     .biases = q->biases,
                     .scale_dtype = q->sdt,
                     .group_size = q->gs,
                     .bits = q->bits,
                     .mode = q->mode,
                     .transpose = true,
                     .out = out,
                     .ldo = q->N,
                     .threaded = true};
  return d;
}

static int reps_opt = 0;
static int nsel = 0;
static const char *sel[32];

static bool selected(const char *name) {
  if (!nsel)
    return true;
  for (int i = 0; i < nsel; i++)
    if (!strcmp(sel[i], name))
      return true;
  return false;
}

typedef bool (*run_fn)(void *ctx);

/* Times fn `reps` times after a warm-up; prints the line; returns the median. */
static double timeit(const char *name, run_fn fn, void *ctx, int reps, double bytes, double flops,
                     double bw) {
  double t[256];
  if (reps > 256)
    reps = 256;
  if (!fn(ctx)) {
    printf("case=%s error=not_handled\n", name);
    return -1;
  }
  for (int r = 0; r < reps; r++) {
    double t0 = now_s();
    fn(ctx);
    t[r] = now_s() - t0;
  }
  qsort(t, (size_t)reps, sizeof(double), cmp_d);
  double med = t[reps / 2];
  printf("case=%s median_ms=%.4f min_ms=%.4f max_ms=%.4f reps=%d", name, med * 1e3, t[0] * 1e3,
         t[reps - 1] * 1e3, reps);
  if (bytes > 0)
    printf(" gbps=%.2f", bytes / med * 1e-9);
  if (bytes > 0 && bw > 0)
    printf(" bw_frac=%.3f", bytes / med * 1e-9 / bw);
  if (flops > 0)
    printf(" gflops=%.2f", flops / med * 1e-9);
  printf("\n");
  fflush(stdout);
  return med;
}

/* The paired figure of a decode case: each of reps products follows one
 * rep of the stream reader, with a pause after each (the pool's workers
 * spin briefly after a job), so both see the load of the same moment, which
 * on a shared host moves within seconds; bw_frac is then the median over
 * the pairs of the product's GB/s over its read's. Prints
 * "case=NAME_paired median_ms=.. read_median_gbps=.. bw_frac=..". */
static void timeit_paired(const char *name, run_fn fn, void *ctx, int reps, double bytes,
                          bench_bw *bw) {
  double tq[256], frac[256], tb[256];
  const struct timespec pause = {0, 100000};
  if (reps > 256)
    reps = 256;
  if (!fn(ctx))
    return;
  for (int r = 0; r < reps; r++) {
    tb[r] = bench_bw_rep(bw);
    nanosleep(&pause, NULL);
    double t0 = now_s();
    fn(ctx);
    tq[r] = now_s() - t0;
    nanosleep(&pause, NULL);
    frac[r] = (bytes / tq[r]) / (BENCH_BW_REP_BYTES / tb[r]);
  }
  qsort(tq, (size_t)reps, sizeof(double), cmp_d);
  qsort(tb, (size_t)reps, sizeof(double), cmp_d);
  qsort(frac, (size_t)reps, sizeof(double), cmp_d);
  printf("case=%s_paired median_ms=%.4f min_ms=%.4f max_ms=%.4f reps=%d gbps=%.2f "
         "read_median_gbps=%.2f bw_frac=%.3f bw_frac_min=%.3f bw_frac_max=%.3f\n",
         name, tq[reps / 2] * 1e3, tq[0] * 1e3, tq[reps - 1] * 1e3, reps,
         bytes / tq[reps / 2] * 1e-9, BENCH_BW_REP_BYTES / tb[reps / 2] * 1e-9, frac[reps / 2],
         frac[0], frac[reps - 1]);
  fflush(stdout);
}

/* A product over copies_opt (at most COPIES, 4 by default) copies of W
 * taken in turn, so each call streams its weights from memory (a model's
 * layers are far larger than the caches) instead of finding part of one
 * 37 MB copy in a 32 MB L3; --copies 1 reuses one copy, as ggml's perf mode
 * does. */
#define COPIES 4
static int copies_opt = COPIES;
typedef struct rot {
  emlx_qmm_desc d[COPIES];
  int next;
  const uint16_t *xb; /* bf16 x for the tile kernel, or NULL */
  float *xw;          /* bf16 x widened, where the tile kernel declines (as qmm.c does) */
  bool widened;       /* a call took the widening path */
} rot;

/* bf16 x: the tile kernel, or where it declines (no AVX-512 BF16), what
 * the op then does (src/cpu/quantize/qmm.c): x widened to f32 in every
 * call, then the f32 kernels. */
static bool run_qmm(void *ctx) {
  rot *r = ctx;
  emlx_qmm_desc *d = &r->d[r->next];
  bool ok;
  if (!r->xb) {
    ok = emlx_cpu_qmm_fast(d);
  } else if (emlx_cpu_qmm_tile(d, r->xb)) {
    ok = true;
  } else {
    for (int64_t i = 0; i < d->M * d->K; i++) {
      uint32_t u = (uint32_t)r->xb[i] << 16;
      memcpy(&r->xw[i], &u, 4);
    }
    emlx_qmm_desc dw = *d;
    dw.x = r->xw;
    ok = emlx_cpu_qmm_fast(&dw);
    r->widened = true;
  }
  r->next = (r->next + 1) % copies_opt;
  return ok;
}

static rot make_rot(const qbuf *q, const float *x, int64_t M, float *out) {
  rot r = {.next = 0, .xb = NULL, .xw = NULL, .widened = false};
  int64_t wpc = q->N * q->K * q->bits / 32, spc = q->N * (q->K / q->gs);
  size_t es = q->sdt == EMLX_UINT8 ? 1 : q->sdt == EMLX_FLOAT16 ? 2 : 4;
  for (int c = 0; c < copies_opt; c++) {
    qbuf qc = *q;
    qc.w = q->w + c * wpc;
    qc.scales = (char *)q->scales + (size_t)(c * spc) * es;
    qc.biases = q->biases ? (char *)q->biases + (size_t)(c * spc) * es : NULL;
    r.d[c] = qdesc(&qc, x, M, out);
  }
  return r;
}

/* gather_qmm and its 8-qmm equivalent */
typedef struct moe {
  qbuf q;
  int64_t E, T, topk;
  float *x, *out, *xs, *os;
  uint32_t *lhs, *rhs;
  emlx_gqmm_desc g;
} moe;

static bool run_gather(void *ctx) { return emlx_cpu_gather_qmm_fast(&((moe *)ctx)->g); }

static bool run_separate(void *ctx) {
  moe *m = ctx;
  int64_t K = m->q.K, N = m->q.N, wpe = N * K * m->q.bits / 32, spe = N * (K / m->q.gs);
  bool ok = true;
  for (int64_t e = 0; e < m->E; e++) {
    int64_t r = 0;
    for (int64_t i = 0; i < m->T * m->topk; i++)
      if (m->rhs[i] == e)
        memcpy(m->xs + r++ * K, m->x + m->lhs[i] * K, (size_t)K * 4);
    if (!r)
      continue;
    qbuf qe = m->q;
    qe.w = m->q.w + e * wpe;
    qe.scales = (float *)m->q.scales + e * spe;
    qe.biases = (float *)m->q.biases + e * spe;
    emlx_qmm_desc d = qdesc(&qe, m->xs, r, m->os);
    ok &= emlx_cpu_qmm_fast(&d);
    r = 0; /* scatter back into the [T * topk, N] output */
    for (int64_t i = 0; i < m->T * m->topk; i++)
      if (m->rhs[i] == e)
        memcpy(m->out + i * N, m->os + r++ * N, (size_t)N * 4);
  }
  return ok;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps_opt = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      emlx_set_num_threads(atoi(argv[++i]));
    else if (!strcmp(argv[i], "--hugepage"))
      hugepage_opt = true;
    else if (!strcmp(argv[i], "--no-int-dot"))
      emlx_cpu_qmm_fast_int_dot(false);
    else if (!strcmp(argv[i], "--copies") && i + 1 < argc && atoi(argv[i + 1]) >= 1 &&
             atoi(argv[i + 1]) <= COPIES)
      copies_opt = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--case") && i + 1 < argc && nsel < 32)
      sel[nsel++] = argv[++i];
    else {
      fprintf(stderr,
              "usage: %s [--reps K] [--threads N] [--copies 1-4] [--no-int-dot] [--hugepage] "
              "[--case NAME]...\n",
              argv[0]);
      return 2;
    }
  }
  int nt = emlx_num_threads();
  printf("threads=%d simd=%s hugepage=%d copies=%d\n", nt, emlx_simd_level(), (int)hugepage_opt,
         copies_opt);

  /* streaming read, timed like the decode cases (bench_bw.h); the best rep
   * is the bandwidth the decode cases' bw_frac is measured against, the
   * median is printed too; the reader stays open for the paired figures */
  double bw = 0;
  bench_bw bwr;
  const bool bw_open = bench_bw_open(&bwr, nt) == 0;
  if (bw_open) {
    int reps = reps_opt ? reps_opt : 41;
    double t[256];
    if (reps > 256)
      reps = 256;
    bench_bw_reps(&bwr, reps, t);
    bw = BENCH_BW_REP_BYTES / t[0] * 1e-9;
    printf("case=read_bw median_ms=%.4f min_ms=%.4f max_ms=%.4f reps=%d gbps=%.2f "
           "median_gbps=%.2f\n",
           t[reps / 2] * 1e3, t[0] * 1e3, t[reps - 1] * 1e3, reps, bw,
           BENCH_BW_REP_BYTES / t[reps / 2] * 1e-9);
  }

  if (selected("dot_ceiling")) {
#ifdef DOT_CEILING
    if (__builtin_cpu_supports("avx512vnni")) {
      const double r = dots_per_ns(), m1 = nt * r * 64.0 / 6.0;
      printf("case=dot_ceiling dots_per_ns=%.3f threads=%d m1_gbps=%.1f m8_gbps=%.1f", r, nt, m1,
             m1 / 8.0);
      if (bw > 0)
        printf(" m8_frac=%.3f", m1 / 8.0 / bw);
      printf("\n");
    } else {
      printf("# dot_ceiling skipped: this CPU has no AVX-512 VNNI\n");
    }
#else
    printf("# dot_ceiling skipped: not an x86-64 GCC/Clang build\n");
#endif
  }

  const int64_t N = 14336, K = 4096;
  struct {
    const char *tag;
    int mode, bits, gs;
    emlx_dtype sdt;
  } fmts[] = {{"affine4_g64", EMLX_QMM_AFFINE, 4, 64, EMLX_FLOAT32},
              {"affine8_g64", EMLX_QMM_AFFINE, 8, 64, EMLX_FLOAT32},
              {"mxfp4", EMLX_QMM_MXFP4, 4, 32, EMLX_FLOAT32},
              {"affine8_g64_f16s", EMLX_QMM_AFFINE, 8, 64, EMLX_FLOAT16},
              {"affine4_g64_f16s", EMLX_QMM_AFFINE, 4, 64, EMLX_FLOAT16}};
  float *x = aligned_alloc(64, (size_t)(512 * K) * 4);
  float *out = aligned_alloc(64, (size_t)(512 * N) * 4);
  uint16_t *xb = aligned_alloc(64, (size_t)(512 * K) * 2);
  for (int64_t i = 0; i < 512 * K; i++) {
    x[i] = rndf(-1, 1);
    uint32_t u;
    memcpy(&u, &x[i], 4);
    xb[i] = (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16); /* round to nearest even */
  }
  for (int f = 0; f < 5; f++) {
    const bool extra = fmts[f].sdt == EMLX_FLOAT16; /* M = 1 only */
    char n1[64], n8[64], n512[64], nbf[64], nh[64];
    snprintf(n1, sizeof n1, "qmm_%s_m1", fmts[f].tag);
    snprintf(nh, sizeof nh, "qmm_%s_m1_hot", fmts[f].tag);
    snprintf(n8, sizeof n8, "qmm_%s_m8", fmts[f].tag);
    snprintf(n512, sizeof n512, "qmm_%s_m512", fmts[f].tag);
    snprintf(nbf, sizeof nbf, "qmm_%s_m512_bf16", fmts[f].tag);
    if (selected(nh)) { /* in cache: one copy of NH rows, over and over */
      const int64_t NH = 2048;
      qbuf h = make_q(fmts[f].mode, fmts[f].bits, fmts[f].gs, NH, K, 1, fmts[f].sdt);
      rot r = make_rot(&h, x, 1, out);
      for (int c = 1; c < copies_opt; c++)
        r.d[c] = r.d[0];
      double med = timeit(nh, run_qmm, &r, reps_opt ? reps_opt * 4 : 161, h.bytes, 2.0 * NH * K, 0);
      if (med > 0)
        printf("# %s full_ms=%.4f (x %lld / %lld rows)\n", nh, med * 1e3 * (double)N / (double)NH,
               (long long)N, (long long)NH);
      wbuf_free(h.w), wbuf_free(h.scales), wbuf_free(h.biases);
    }
    if (!selected(n1) && (extra || (!selected(n8) && !selected(n512) && !selected(nbf))))
      continue;
    qbuf q = make_q(fmts[f].mode, fmts[f].bits, fmts[f].gs, N, K, copies_opt, fmts[f].sdt);
    if (selected(n1)) {
      rot r = make_rot(&q, x, 1, out);
      timeit(n1, run_qmm, &r, reps_opt ? reps_opt : 41, q.bytes, 2.0 * N * K, bw);
      if (bw_open)
        timeit_paired(n1, run_qmm, &r, reps_opt ? reps_opt : 41, q.bytes, &bwr);
    }
    if (!extra && selected(n8)) { /* bw_frac: W read once for all 8 rows */
      rot r = make_rot(&q, x, 8, out);
      timeit(n8, run_qmm, &r, reps_opt ? reps_opt : 21, q.bytes, 2.0 * 8 * N * K, bw);
    }
    if (!extra && selected(n512)) {
      rot r = make_rot(&q, x, 512, out);
      timeit(n512, run_qmm, &r, reps_opt ? reps_opt : 5, 0, 2.0 * 512 * N * K, 0);
    }
    if (!extra && selected(nbf)) {
      rot r = make_rot(&q, x, 512, out);
      r.xb = xb;
      r.xw = aligned_alloc(64, (size_t)(512 * K) * 4);
      timeit(nbf, run_qmm, &r, reps_opt ? reps_opt : 5, 0, 2.0 * 512 * N * K, 0);
      printf("# %s: %s\n", nbf,
             r.widened ? "x widened to f32, then the f32 kernels (no AVX-512 BF16 here)"
                       : "the bf16 tile kernel");
      free(r.xw);
    }
    wbuf_free(q.w), wbuf_free(q.scales), wbuf_free(q.biases);
  }

  if (selected("gather_8x2048_top2_t64") || selected("separate_8x2048_top2_t64")) {
    moe m = {.E = 8, .T = 64, .topk = 2};
    m.q = make_q(EMLX_QMM_AFFINE, 4, 64, 2048, K, m.E, EMLX_FLOAT32);
    int64_t rows = m.T * m.topk;
    m.x = aligned_alloc(64, (size_t)(m.T * K) * 4);
    m.xs = aligned_alloc(64, (size_t)(rows * K) * 4);
    m.out = aligned_alloc(64, (size_t)(rows * 2048) * 4);
    m.os = aligned_alloc(64, (size_t)(rows * 2048) * 4);
    m.lhs = malloc((size_t)rows * 4), m.rhs = malloc((size_t)rows * 4);
    for (int64_t i = 0; i < m.T * K; i++)
      m.x[i] = rndf(-1, 1);
    for (int64_t t = 0; t < m.T; t++) { /* two distinct experts per token */
      uint32_t a = (uint32_t)(rnd() % 8), b = (uint32_t)((a + 1 + rnd() % 7) % 8);
      m.lhs[2 * t] = m.lhs[2 * t + 1] = (uint32_t)t;
      m.rhs[2 * t] = a, m.rhs[2 * t + 1] = b;
    }
    int64_t wpe = 2048 * K * 4 / 32, spe = 2048 * (K / 64);
    m.g = (emlx_gqmm_desc){.q = qdesc(&m.q, m.x, 1, m.out),
                           .count = rows,
                           .lhs = m.lhs,
                           .rhs = m.rhs,
                           .x_stride = K,
                           .w_stride = wpe,
                           .s_stride = spe,
                           .o_stride = 2048,
                           .n_x = m.T,
                           .n_experts = m.E,
                           .sorted = false};
    double bytes = m.q.bytes * (double)m.E;
    int reps = reps_opt ? reps_opt : 21;
    double tg = timeit("gather_8x2048_top2_t64", run_gather, &m, reps, bytes,
                       2.0 * (double)rows * 2048 * K, bw);
    double ts = timeit("separate_8x2048_top2_t64", run_separate, &m, reps, bytes,
                       2.0 * (double)rows * 2048 * K, bw);
    if (tg > 0 && ts > 0)
      printf("ratio gather_vs_separate=%.3f\n", ts / tg);
  }
  if (bw_open)
    bench_bw_close(&bwr);
  free(x);
  free(xb);
  free(out);
  return 0;
}
