/* test_qmm_fast.c — the fast quantized matmul kernels (src/cpu/quantize/
 * qmm_fast.h) against the dequantize-then-dot reference in f64 of
 * qmm_ref.h (written from the format description), over every mode, bit
 * width and group size, both layouts, decode and prefill row counts with tails, strided x and out,
 * the thread pool on and off, and gather_qmm; then the cases MLX itself
 * computed (tests/quantize/qmm_fast_mlx.bin, made by gen_qmm_fast_mlx.py).
 * Run once per ISA level (EMLX_ISA), so each unit and the portable path
 * are all checked. */
#include "qmm_ref.h"
#include "quantize/qmm_fast.h"
#include "test_util.h"
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

/* Whether the kernel may run the integer decode path for q with M rows (the
 * path is on, transpose, M <= 32, any format but mxfp8): it codes x per
 * group of gs elements in 24 bits, off by at most max|x over the group| /
 * 16711422 an element (about f32's own rounding). */
static bool g_int_dot = true;
static bool may_code_x(const qmat *q, int64_t M) {
  bool fmt = q->mode != EMLX_QMM_MXFP8;
  return g_int_dot && q->transpose && M <= 32 && fmt;
}

/* out[m][n] against sum_k x[m][k] W(n, k) in f64, within 1e-5 of sum |x||W|
 * (f32 rounding of the sums; a wrong code, scale or bias is off by far more)
 * plus, where x may be coded (xq), sum_k |W(n, k)| max|x group of k| /
 * 16711422 (the most the 24-bit codes of x can move the sum). */
static bool check_out_q(const qmat *q, const float *x, int64_t ldx, const float *out, int64_t ldo,
                        int64_t M, int64_t N, int64_t K, bool xq, const char *what) {
  double *wd = malloc((size_t)(N * K) * sizeof(double));
  double *xmax = malloc((size_t)K * sizeof(double));
  for (int64_t n = 0; n < N; n++)
    for (int64_t k = 0; k < K; k++)
      wd[n * K + k] = ref_w(q, n, k);
  int bad = 0;
  for (int64_t m = 0; m < M && bad < 3; m++) {
    for (int64_t k0 = 0; k0 < K; k0 += q->gs) { /* x's group maxima along K */
      double mx = 0;
      for (int64_t k = k0; k < k0 + q->gs && k < K; k++)
        mx = fmax(mx, fabs((double)x[m * ldx + k]));
      for (int64_t k = k0; k < k0 + q->gs && k < K; k++)
        xmax[k] = xq ? mx : 0.0;
    }
    for (int64_t n = 0; n < N && bad < 3; n++) {
      double s = 0, a = 0, c = 0;
      for (int64_t k = 0; k < K; k++) {
        double t = (double)x[m * ldx + k] * wd[n * K + k];
        s += t;
        a += fabs(t);
        c += fabs(wd[n * K + k]) * xmax[k];
      }
      double got = out[m * ldo + n];
      if (!(fabs(got - s) <= 1e-5 * a + c / 16711422.0 + 1e-300)) {
        bad++;
        CHECK_MSG(false, "%s: out[%" PRId64 "][%" PRId64 "] = %.9g, reference %.9g (scale %.3g)",
                  what, m, n, got, s, a);
      }
    }
  }
  free(wd);
  free(xmax);
  if (!bad)
    CHECK_MSG(true, "%s", what);
  return bad == 0;
}

static bool check_out(const qmat *q, const float *x, int64_t ldx, const float *out, int64_t ldo,
                      int64_t M, int64_t N, int64_t K, const char *what) {
  return check_out_q(q, x, ldx, out, ldo, M, N, K, may_code_x(q, M), what);
}

static const char *mode_name(int mode) {
  static const char *names[] = {"affine", "mxfp4", "mxfp8", "nvfp4"};
  return names[mode];
}

/* One case: x [M][K] (row stride ldx), out [M][N] (stride ldo, padding
 * guarded). */
static void run_case(tu_rng *rng, int mode, int bits, int gs, bool transpose, emlx_dtype sdt,
                     int64_t M, int64_t N, int64_t K, bool threaded, bool strided) {
  qmat q = make_qmat(rng, mode, bits, gs, transpose, sdt, N, K);
  int64_t ldx = strided ? K + 5 : K, ldo = strided ? N + 3 : N;
  float *x = malloc((size_t)(M * ldx) * sizeof(float));
  float *out = guarded_out(M, ldo);
  for (int64_t i = 0; i < M * ldx; i++)
    x[i] = (float)tu_uniform(rng, -1.0, 1.0);
  emlx_qmm_desc d = desc_of(&q, x, ldx, M, out, ldo, threaded);
  char what[160];
  snprintf(what, sizeof what, "%s b%d g%d %s s%d M%" PRId64 " N%" PRId64 " K%" PRId64 "%s%s",
           mode_name(mode), bits, gs, transpose ? "T" : "N", (int)sdt, M, N, K,
           threaded ? " threads" : "", strided ? " strided" : "");
  bool ok = emlx_cpu_qmm_fast(&d);
  CHECK_MSG(ok, "%s: handled", what);
  if (ok) {
    check_out(&q, x, ldx, out, ldo, M, N, K, what);
    check_out_padding(out, M, N, ldo, what);
  }
  free(x);
  free(out);
  free_qmat(&q);
}

static void test_formats(void) {
  tu_rng rng = {15};
  static const int64_t Ms[] = {1, 3, 8, 9, 17, 37}; /* decode up to 8 rows */
  static const int abits[] = {2, 3, 4, 5, 6, 8};
  static const int gss[] = {32, 64, 128};
  for (int t = 0; t < 2; t++) {
    bool tr = t == 0;
    for (int bi = 0; bi < 6; bi++)
      for (int gi = 0; gi < 3; gi++) {
        int gs = gss[gi];
        /* the quantized axis in whole groups (3 of them), the other odd */
        int64_t N = tr ? 37 : 3 * gs, K = tr ? 3 * gs : 37;
        for (int mi = 0; mi < 6; mi++)
          run_case(&rng, EMLX_QMM_AFFINE, abits[bi], gs, tr, EMLX_FLOAT32, Ms[mi], N, K, false,
                   false);
        run_case(&rng, EMLX_QMM_AFFINE, abits[bi], gs, tr, EMLX_FLOAT16, 2, N, K, false, true);
        run_case(&rng, EMLX_QMM_AFFINE, abits[bi], gs, tr, EMLX_BFLOAT16, 33, N, K, false, true);
      }
    struct {
      int mode, bits, gs;
    } fp[] = {{EMLX_QMM_MXFP4, 4, 32}, {EMLX_QMM_MXFP8, 8, 32}, {EMLX_QMM_NVFP4, 4, 16}};
    for (int f = 0; f < 3; f++) {
      int gs = fp[f].gs;
      int64_t N = tr ? 29 : 5 * gs, K = tr ? 5 * gs : 29;
      for (int mi = 0; mi < 6; mi++)
        run_case(&rng, fp[f].mode, fp[f].bits, gs, tr, EMLX_UINT8, Ms[mi], N, K, false,
                 mi % 2 == 1);
    }
  }
}

/* Big enough that the pool splits the work (decode and prefill). */
static void test_threads(void) {
  tu_rng rng = {151};
  emlx_set_num_threads(4);
  for (int t = 0; t < 2; t++) {
    run_case(&rng, EMLX_QMM_AFFINE, 4, 64, t == 0, EMLX_BFLOAT16, 1, 1024, 512, true, false);
    run_case(&rng, EMLX_QMM_AFFINE, 8, 32, t == 0, EMLX_FLOAT32, 5, 768, 256, true, true);
    run_case(&rng, EMLX_QMM_MXFP4, 4, 32, t == 0, EMLX_UINT8, 2, 2048, 256, true, false);
    run_case(&rng, EMLX_QMM_AFFINE, 4, 128, t == 0, EMLX_FLOAT16, 40, t == 0 ? 300 : 384, 384, true,
             false);
    run_case(&rng, EMLX_QMM_AFFINE, 3, 64, t == 0, EMLX_FLOAT32, 2, 640, 256, true, false);
  }
}

/* The f32 decode path (transpose) in blocks of W rows: more rows than one
 * block (AVX2: 128 KB of packed rows), a partial last block, x rows in
 * blocks of 4 and a tail, on one thread (so one range holds every block). */
static void test_decode_blocks(void) {
  tu_rng rng = {1288};
  run_case(&rng, EMLX_QMM_AFFINE, 8, 64, true, EMLX_FLOAT16, 6, 601, 512, false, false);
  run_case(&rng, EMLX_QMM_MXFP8, 8, 32, true, EMLX_UINT8, 7, 300, 1024, false, true);
  run_case(&rng, EMLX_QMM_AFFINE, 4, 64, true, EMLX_FLOAT32, 5, 2100, 256, false, false);
}

static void test_rejects(void) {
  tu_rng rng = {7};
  qmat q = make_qmat(&rng, EMLX_QMM_AFFINE, 4, 64, true, EMLX_FLOAT32, 8, 128);
  float x[2 * 128] = {0}, out[2 * 8];
  emlx_qmm_desc ok = desc_of(&q, x, 128, 2, out, 8, false);
  CHECK(emlx_cpu_qmm_fast(&ok));
  emlx_qmm_desc d;
  d = ok, d.bits = 7;
  CHECK(!emlx_cpu_qmm_fast(&d));
  d = ok, d.group_size = 48;
  CHECK(!emlx_cpu_qmm_fast(&d));
  d = ok, d.K = 96; /* not whole groups */
  d.ldx = 96;
  CHECK(!emlx_cpu_qmm_fast(&d));
  d = ok, d.biases = NULL; /* affine needs biases */
  CHECK(!emlx_cpu_qmm_fast(&d));
  d = ok, d.mode = EMLX_QMM_MXFP4; /* mxfp4 takes uint8 scales, group 32 */
  CHECK(!emlx_cpu_qmm_fast(&d));
  d = ok, d.mode = EMLX_QMM_NVFP4, d.scale_dtype = EMLX_UINT8; /* group 16 only */
  CHECK(!emlx_cpu_qmm_fast(&d));
  d = ok, d.mode = 9;
  CHECK(!emlx_cpu_qmm_fast(&d));
  d = ok, d.ldx = 100;
  CHECK(!emlx_cpu_qmm_fast(&d));
  d = ok, d.M = 0;
  CHECK(!emlx_cpu_qmm_fast(&d));
  CHECK(!emlx_cpu_qmm_fast(NULL));
  free_qmat(&q);
}

/* ---- the integer decode path ----------------------------------------------------
 * transpose, M <= 8, 4-bit codes and affine 8-bit (AVX2: as 16-bit words): x
 * coded in 24 bits per group. Rows of every length (whole int vectors of the unit or a partial
 * last one), more groups than one scale chunk (128), rows enough for the
 * prefetch to look ahead; then x that the path must not code. */

static void test_int_dot(void) {
  tu_rng rng = {1615};
  struct {
    int mode, bits, gs;
    emlx_dtype sdt;
  } f[] = {{EMLX_QMM_AFFINE, 4, 32, EMLX_FLOAT32},  {EMLX_QMM_AFFINE, 4, 64, EMLX_BFLOAT16},
           {EMLX_QMM_AFFINE, 4, 128, EMLX_FLOAT16}, {EMLX_QMM_AFFINE, 8, 32, EMLX_FLOAT32},
           {EMLX_QMM_AFFINE, 8, 64, EMLX_FLOAT16},  {EMLX_QMM_AFFINE, 8, 128, EMLX_BFLOAT16},
           {EMLX_QMM_MXFP4, 4, 32, EMLX_UINT8},     {EMLX_QMM_NVFP4, 4, 16, EMLX_UINT8}};
  static const int64_t Ks[] = {4, 8, 9, 16, 150}; /* in groups */
  static const int64_t Ms[] = {1, 2, 3, 5, 8};
  for (int fi = 0; fi < 8; fi++)
    for (int ki = 0; ki < 5; ki++) {
      int64_t K = Ks[ki] * f[fi].gs, N = ki == 4 ? 9 : 23 + ki;
      run_case(&rng, f[fi].mode, f[fi].bits, f[fi].gs, true, f[fi].sdt, Ms[ki], N, K, ki == 2,
               ki % 2 == 1);
    }
  /* a tall W: the prefetch runs ahead of the rows, then stops at the end */
  emlx_set_num_threads(2);
  run_case(&rng, EMLX_QMM_AFFINE, 4, 64, true, EMLX_FLOAT32, 1, 700, 256, true, false);
  run_case(&rng, EMLX_QMM_MXFP4, 4, 32, true, EMLX_UINT8, 2, 333, 512, false, false);
  emlx_set_num_threads(1);
}

/* x with a huge element in group 0, where W is (all but) zero: each group is
 * coded on its own scale (one scale for the row would move the other groups
 * far past their bound, which the huge elements do not raise). */
static void test_int_dot_outliers(void) {
  tu_rng rng = {77};
  for (int f = 0; f < 3; f++) {
    int mode = f == 2 ? EMLX_QMM_MXFP4 : EMLX_QMM_AFFINE, bits = f == 1 ? 8 : 4,
        gs = f == 2 ? 32 : 64;
    emlx_dtype sdt = mode == EMLX_QMM_AFFINE ? EMLX_FLOAT32 : EMLX_UINT8;
    int64_t M = 2, N = 19, K = 8 * gs;
    qmat q = make_qmat(&rng, mode, bits, gs, true, sdt, N, K);
    float *x = malloc((size_t)(M * K) * sizeof(float)), *out = malloc((size_t)(M * N) * 4);
    for (int64_t i = 0; i < M * K; i++)
      x[i] = (float)tu_uniform(&rng, -1.0, 1.0);
    x[3] = 3000.0f, x[K + 1] = -2500.0f;
    for (int64_t r = 0; r < N; r++) { /* W's group 0: 0 (mxfp4: 2^-127 times the codes) */
      if (mode == EMLX_QMM_AFFINE) {
        ((float *)q.scales)[r * q.groups] = 0.0f;
        ((float *)q.biases)[r * q.groups] = 0.0f;
      } else {
        ((uint8_t *)q.scales)[r * q.groups] = 0;
      }
    }
    emlx_qmm_desc d = desc_of(&q, x, K, M, out, N, false);
    char what[64];
    snprintf(what, sizeof what, "int dot outliers %s b%d", mode_name(mode), bits);
    CHECK_MSG(emlx_cpu_qmm_fast(&d), "%s: handled", what);
    check_out(&q, x, K, out, N, M, N, K, what);
    free(x), free(out), free_qmat(&q);
  }
}

/* x whose groups hold one element of magnitude 1 and the rest below 1e-4:
 * those codes are under 2^10, so their low bytes l carry them nearly whole,
 * and a wrong or dropped l part of the dot products moves the sums far past
 * the bound (which the random x of test_int_dot hides under f32 rounding). */
static void test_int_dot_low_bits(void) {
  tu_rng rng = {2718};
  struct {
    int mode, bits, gs;
    emlx_dtype sdt;
  } f[] = {{EMLX_QMM_AFFINE, 4, 32, EMLX_FLOAT32},  {EMLX_QMM_AFFINE, 4, 64, EMLX_FLOAT16},
           {EMLX_QMM_AFFINE, 4, 128, EMLX_FLOAT32}, {EMLX_QMM_AFFINE, 8, 32, EMLX_BFLOAT16},
           {EMLX_QMM_AFFINE, 8, 64, EMLX_FLOAT32},  {EMLX_QMM_AFFINE, 8, 128, EMLX_FLOAT16},
           {EMLX_QMM_MXFP4, 4, 32, EMLX_UINT8},     {EMLX_QMM_NVFP4, 4, 16, EMLX_UINT8}};
  for (int fi = 0; fi < 8; fi++) {
    const int gs = f[fi].gs;
    const int64_t M = fi % 3 + 1, N = 13, K = 6 * gs;
    qmat q = make_qmat(&rng, f[fi].mode, f[fi].bits, gs, true, f[fi].sdt, N, K);
    float *x = malloc((size_t)(M * K) * sizeof(float)), *out = malloc((size_t)(M * N) * 4);
    for (int64_t i = 0; i < M * K; i++) {
      double small = tu_uniform(&rng, 1e-6, 1e-4);
      x[i] = (float)(i % gs == (i / gs) % gs ? 1.0 : tu_uniform(&rng, -1.0, 1.0) < 0 ? -small
                                                                                     : small);
    }
    emlx_qmm_desc d = desc_of(&q, x, K, M, out, N, false);
    char what[64];
    snprintf(what, sizeof what, "int dot low bits %s b%d g%d M%" PRId64, mode_name(f[fi].mode),
             f[fi].bits, gs, M);
    CHECK_MSG(emlx_cpu_qmm_fast(&d), "%s: handled", what);
    check_out(&q, x, K, out, N, M, N, K, what);
    free(x), free(out), free_qmat(&q);
  }
}

/* x that 24-bit codes cannot carry: NaN or Inf in a row (its outputs NaN or
 * Inf, the other rows right), or groups below 2^-100 (f32 accuracy kept). */
static void test_int_dot_nonfinite(void) {
  tu_rng rng = {404};
  int64_t M = 3, N = 21, K = 256;
  for (int f = 0; f < 2; f++) {
    int mode = f ? EMLX_QMM_MXFP4 : EMLX_QMM_AFFINE, gs = f ? 32 : 64;
    qmat q = make_qmat(&rng, mode, 4, gs, true, f ? EMLX_UINT8 : EMLX_FLOAT32, N, K);
    float *x = malloc((size_t)(M * K) * sizeof(float)), *out = malloc((size_t)(M * N) * 4);
    for (int pass = 0; pass < 3; pass++) {
      for (int64_t i = 0; i < M * K; i++)
        x[i] = (float)tu_uniform(&rng, -1.0, 1.0);
      if (pass == 0)
        x[K + 70] = NAN;
      else if (pass == 1)
        x[K + 70] = INFINITY;
      else
        for (int64_t k = 0; k < K; k++)
          x[K + k] *= 1e-36f; /* row 1 tiny: its code scale would be subnormal */
      emlx_qmm_desc d = desc_of(&q, x, K, M, out, N, false);
      char what[80];
      snprintf(what, sizeof what, "int dot %s x %s", mode_name(mode),
               pass == 0   ? "NaN"
               : pass == 1 ? "Inf"
                           : "tiny");
      CHECK_MSG(emlx_cpu_qmm_fast(&d), "%s: handled", what);
      if (pass < 2) {
        bool nonfinite = true;
        for (int64_t n = 0; n < N; n++)
          nonfinite &= !isfinite(out[N + n]);
        CHECK_MSG(nonfinite, "%s: the row with it is not finite", what);
        check_out(&q, x, K, out, N, 1, N, K, what);                 /* row 0 */
        check_out(&q, x + 2 * K, K, out + 2 * N, N, 1, N, K, what); /* row 2 */
      } else {
        check_out_q(&q, x, K, out, N, M, N, K, false, what); /* f32 accuracy throughout */
      }
    }
    free(x), free(out), free_qmat(&q);
  }
}

/* mxfp4 scale bytes at the ends of e8m0: rows whose bytes span 129 and 125
 * binades (the AVX-512 unit's shortcut for e8m0 scales declines the first
 * and takes the second), and 255 in one W row (MLX's bits 255 << 23, +Inf:
 * that row's outputs are not finite, the others the same as without it).
 * K 4608: blocks of 128 groups (the unit's 4 rows' test at once) and 16. */
static void test_e8m0_extremes(void) {
  tu_rng rng = {9001};
  const int64_t N = 21;
  for (int c = 0; c < 4; c++) {
    const int64_t M = c % 2 ? 3 : 1, K = c < 2 ? 512 : 4608, G = K / 32;
    qmat q = make_qmat(&rng, EMLX_QMM_MXFP4, 4, 32, true, EMLX_UINT8, N, K);
    float *x = malloc((size_t)(M * K) * 4), *out = malloc((size_t)(M * N) * 4),
          *out2 = malloc((size_t)(M * N) * 4);
    for (int64_t i = 0; i < M * K; i++) /* group 2 below 2^-100: 2^127 times it is finite */
      x[i] = (float)(tu_uniform(&rng, -1.0, 1.0) * (i % K / 32 == 2 ? 0x1p-110 : 1.0));
    uint8_t *sc = q.scales;
    sc[5 * G + 3] = 1, sc[5 * G + 4] = 130; /* row 5: 2^-126 and 2^3, 129 binades apart */
    sc[6 * G + 3] = 1, sc[6 * G + 4] = 126; /* row 6: 2^-126 and 2^-1, 125 apart */
    for (int64_t g = 0; g < G; g++)         /* row 3: 2^2 .. 2^8, within 126 binades of 255 */
      sc[3 * G + g] = (uint8_t)(129 + g % 7);
    emlx_qmm_desc d = desc_of(&q, x, K, M, out, N, false);
    char what[64];
    snprintf(what, sizeof what, "e8m0 extremes M%" PRId64 " K%" PRId64, M, K);
    CHECK_MSG(emlx_cpu_qmm_fast(&d), "%s: handled", what);
    check_out(&q, x, K, out, N, M, N, K, what);
    const uint8_t keep = sc[3 * G + 2];
    sc[3 * G + 2] = 255;
    d.out = out2;
    CHECK_MSG(emlx_cpu_qmm_fast(&d), "%s, a byte 255: handled", what);
    bool inf_row = true, others = true;
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        if (n == 3)
          inf_row &= !isfinite(out2[m * N + n]);
        else
          others &= out2[m * N + n] == out[m * N + n];
      }
    CHECK_MSG(inf_row, "%s: the row with a byte 255 is not finite", what);
    CHECK_MSG(others, "%s: the other rows are as without it", what);
    sc[3 * G + 2] = keep;
    free(x), free(out), free(out2), free_qmat(&q);
  }
}

/* ---- gather_qmm ---------------------------------------------------------------- */

static void gather_case(tu_rng *rng, int mode, int bits, int gs, bool transpose, int64_t E,
                        int64_t nx, int64_t count, int64_t M, int64_t N, int64_t K, bool use_lhs,
                        bool use_rhs, bool sort) {
  qmat *ex = malloc((size_t)E * sizeof(qmat));
  emlx_dtype sdt = mode == EMLX_QMM_AFFINE ? EMLX_BFLOAT16 : EMLX_UINT8;
  for (int64_t e = 0; e < E; e++)
    ex[e] = make_qmat(rng, mode, bits, gs, transpose, sdt, N, K);
  /* the experts side by side, as one [E, ...] array */
  int64_t wpe = ex[0].rows * ex[0].rlen * bits / 32, spe = ex[0].rows * ex[0].groups;
  size_t es = tu_dsize(sdt);
  uint32_t *w = malloc((size_t)(E * wpe) * 4);
  char *s = malloc((size_t)(E * spe) * es), *b = malloc((size_t)(E * spe) * es);
  for (int64_t e = 0; e < E; e++) {
    memcpy(w + e * wpe, ex[e].w, (size_t)wpe * 4);
    memcpy(s + e * spe * (int64_t)es, ex[e].scales, (size_t)spe * es);
    if (ex[e].biases)
      memcpy(b + e * spe * (int64_t)es, ex[e].biases, (size_t)spe * es);
  }
  float *x = malloc((size_t)(nx * M * K) * sizeof(float));
  for (int64_t i = 0; i < nx * M * K; i++)
    x[i] = (float)tu_uniform(rng, -1.0, 1.0);
  uint32_t *lhs = malloc((size_t)count * 4), *rhs = malloc((size_t)count * 4);
  for (int64_t i = 0; i < count; i++) {
    lhs[i] = (uint32_t)tu_randint(rng, 0, nx - 1);
    rhs[i] = (uint32_t)tu_randint(rng, 0, E - 1);
  }
  if (sort) /* insertion sort of rhs */
    for (int64_t i = 1; i < count; i++)
      for (int64_t j = i; j > 0 && rhs[j - 1] > rhs[j]; j--) {
        uint32_t t = rhs[j];
        rhs[j] = rhs[j - 1];
        rhs[j - 1] = t;
      }
  float *out = malloc((size_t)(count * M * N) * sizeof(float));
  float *out2 = malloc((size_t)(count * M * N) * sizeof(float));
  for (int64_t i = 0; i < count * M * N; i++)
    out[i] = out2[i] = NAN;
  qmat q0 = ex[0];
  q0.w = w, q0.scales = s, q0.biases = mode == EMLX_QMM_AFFINE ? b : NULL;
  emlx_gqmm_desc g = {.q = desc_of(&q0, x, K, M, out, N, true),
                      .count = count,
                      .lhs = use_lhs ? lhs : NULL,
                      .rhs = use_rhs ? rhs : NULL,
                      .x_stride = M * K,
                      .w_stride = wpe,
                      .s_stride = spe,
                      .o_stride = M * N,
                      .n_x = nx,
                      .n_experts = E,
                      .sorted = sort};
  char what[160];
  snprintf(what, sizeof what, "gather %s b%d %s E%" PRId64 " count%" PRId64 " M%" PRId64 "%s%s%s",
           mode_name(mode), bits, transpose ? "T" : "N", E, count, M, use_lhs ? " lhs" : "",
           use_rhs ? " rhs" : "", sort ? " sorted" : "");
  bool ok = emlx_cpu_gather_qmm_fast(&g);
  CHECK_MSG(ok, "%s: handled", what);
  if (ok) {
    bool all = true;
    for (int64_t i = 0; i < count; i++) {
      int64_t li = use_lhs ? lhs[i] : i, ri = use_rhs ? rhs[i] : i;
      all &= check_out_q(&ex[ri], x + li * M * K, K, out + i * M * N, N, M, N, K,
                         may_code_x(&ex[ri], 1), what); /* an expert's rows may be few */
    }
    CHECK_MSG(all, "%s: every output", what);
    /* the sorted hint never changes a result */
    g.q.out = out2;
    g.sorted = !g.sorted;
    if (!use_rhs || sort) {
      CHECK(emlx_cpu_gather_qmm_fast(&g));
      CHECK_MSG(!memcmp(out, out2, (size_t)(count * M * N) * sizeof(float)),
                "%s: same bits with sorted = %d", what, g.sorted);
    }
  }
  if (use_rhs) { /* an expert index out of range is refused */
    uint32_t keep = rhs[count / 2];
    rhs[count / 2] = (uint32_t)E;
    g.rhs = rhs;
    CHECK_MSG(!emlx_cpu_gather_qmm_fast(&g), "%s: rhs out of range refused", what);
    rhs[count / 2] = keep;
  }
  for (int64_t e = 0; e < E; e++)
    free_qmat(&ex[e]);
  free(ex);
  free(w), free(s), free(b), free(x), free(lhs), free(rhs), free(out), free(out2);
}

static void test_gather(void) {
  tu_rng rng = {2048};
  /* MoE decode: one row per token, top-2 of 5 experts */
  gather_case(&rng, EMLX_QMM_AFFINE, 4, 64, true, 5, 13, 26, 1, 40, 128, true, true, false);
  gather_case(&rng, EMLX_QMM_AFFINE, 4, 64, true, 5, 13, 26, 1, 40, 128, true, true, true);
  /* many rows for one expert: the prefill path */
  gather_case(&rng, EMLX_QMM_AFFINE, 8, 32, true, 2, 40, 40, 1, 24, 96, true, true, false);
  gather_case(&rng, EMLX_QMM_MXFP4, 4, 32, false, 4, 6, 6, 3, 64, 33, false, true, false);
  gather_case(&rng, EMLX_QMM_AFFINE, 4, 32, true, 6, 6, 6, 2, 17, 64, true, false, false);
  gather_case(&rng, EMLX_QMM_NVFP4, 4, 16, true, 9, 9, 9, 1, 20, 48, false, false, false);
}

/* ---- MLX's own answers ---------------------------------------------------------- */

static void test_mlx(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/quantize/qmm_fast_mlx.bin", EMLX_SOURCE_DIR);
  FILE *f = fopen(path, "rb");
  CHECK_MSG(f != NULL, "open %s", path);
  if (!f)
    return;
  char magic[8];
  int32_t ncases = 0;
  CHECK(fread(magic, 1, 8, f) == 8 && !memcmp(magic, "QMMFAST1", 8));
  CHECK(fread(&ncases, 4, 1, f) == 1 && ncases > 0);
  for (int32_t c = 0; c < ncases; c++) {
    int32_t h[7]; /* mode, bits, gs, transpose, M, N, K */
    if (!CHECK(fread(h, 4, 7, f) == 7))
      break;
    int mode = h[0], bits = h[1], gs = h[2];
    bool tr = h[3] != 0;
    int64_t M = h[4], N = h[5], K = h[6];
    emlx_dtype sdt = mode == EMLX_QMM_AFFINE ? EMLX_FLOAT32 : EMLX_UINT8;
    qmat q = {mode, bits, gs, tr, sdt, N, K, 0, 0, 0, NULL, NULL, NULL};
    q.rows = tr ? N : K, q.rlen = tr ? K : N, q.groups = q.rlen / gs;
    int64_t words = q.rows * q.rlen * bits / 32, ns = q.rows * q.groups;
    size_t es = mode == EMLX_QMM_AFFINE ? 4 : 1;
    float *x = malloc((size_t)(M * K) * 4), *want = malloc((size_t)(M * N) * 4),
          *got = malloc((size_t)(M * N) * 4);
    q.w = malloc((size_t)words * 4);
    q.scales = malloc((size_t)ns * es);
    q.biases = mode == EMLX_QMM_AFFINE ? malloc((size_t)ns * es) : NULL;
    bool rd = fread(x, 4, (size_t)(M * K), f) == (size_t)(M * K) &&
              fread(q.w, 4, (size_t)words, f) == (size_t)words &&
              fread(q.scales, es, (size_t)ns, f) == (size_t)ns &&
              (!q.biases || fread(q.biases, es, (size_t)ns, f) == (size_t)ns) &&
              fread(want, 4, (size_t)(M * N), f) == (size_t)(M * N);
    CHECK_MSG(rd, "read case %d", c);
    if (rd) {
      emlx_qmm_desc d = desc_of(&q, x, K, M, got, N, true);
      char what[96];
      snprintf(what, sizeof what, "mlx case %d: %s b%d g%d %s M%" PRId64, c, mode_name(mode), bits,
               gs, tr ? "T" : "N", M);
      CHECK_MSG(emlx_cpu_qmm_fast(&d), "%s: handled", what);
      /* our reference decoding reproduces MLX's product (f32 sums) ... */
      check_out_q(&q, x, K, want, N, M, N, K, false, what);
      /* ... and so does the kernel */
      check_out(&q, x, K, got, N, M, N, K, what);
    }
    free(x), free(want), free(got), free_qmat(&q);
    if (!rd)
      break;
  }
  fclose(f);
}

/* ---- one row of x, affine 4-bit (AVX2: the subnormal-code path) ------------------
 * The products keep x in f32, so the bound is f32 rounding alone (no
 * coding term): every group size and scale type, rows of 1 .. 257 groups
 * (past one block of 128 scales, and a half chunk at the end for g32);
 * scales near the bottom of f32's normal range and large ones (each
 * block's power of two keeps their products normal), x subnormal, huge or
 * zero; NaN scales; and MXCSR's flush bits set by the caller, which the
 * kernel must neither obey (a subnormal code read as zero) nor leave
 * changed. */
static void den_case(tu_rng *rng, int gs, emlx_dtype sdt, int64_t N, int64_t K, double smul,
                     double xmul, bool threaded, const char *tag) {
  qmat q = make_qmat(rng, EMLX_QMM_AFFINE, 4, gs, true, sdt, N, K);
  for (int64_t i = 0; smul != 1.0 && i < q.rows * q.groups; i++) { /* f32 scales only */
    ((float *)q.scales)[i] *= (float)smul; /* the biases too, or they would hide the scales' part */
    ((float *)q.biases)[i] *= (float)smul;
  }
  float *x = malloc((size_t)K * sizeof(float)), *out = guarded_out(1, N);
  for (int64_t k = 0; k < K; k++)
    x[k] = (float)(tu_uniform(rng, -1.0, 1.0) * xmul);
  emlx_qmm_desc d = desc_of(&q, x, K, 1, out, N, threaded);
  char what[160];
  snprintf(what, sizeof what, "one row %s g%d s%d N%" PRId64 " K%" PRId64 "%s", tag, gs, (int)sdt,
           N, K, threaded ? " threads" : "");
  CHECK_MSG(emlx_cpu_qmm_fast(&d), "%s: handled", what);
  check_out_q(&q, x, K, out, N, 1, N, K, false, what);
  check_out_padding(out, 1, N, N, what);
  free(x), free(out), free_qmat(&q);
}

static void test_one_row(void) {
  tu_rng rng = {9001};
  static const int gss[] = {32, 64, 128};
  static const emlx_dtype sdts[] = {EMLX_FLOAT32, EMLX_FLOAT16, EMLX_BFLOAT16};
  static const int64_t Gs[] = {1, 2, 4, 9, 150, 257}; /* groups a row */
  for (int gi = 0; gi < 3; gi++)
    for (int si = 0; si < 3; si++)
      for (int ki = 0; ki < 6; ki++)
        den_case(&rng, gss[gi], sdts[si], ki % 2 ? 40 : 7, Gs[ki] * gss[gi], 1.0, 1.0, ki == 4,
                 "plain");
  for (int gi = 0; gi < 3; gi++) {
    den_case(&rng, gss[gi], EMLX_FLOAT32, 9, 9 * gss[gi], 0x1p-118, 1.0, false, "tiny scales");
    den_case(&rng, gss[gi], EMLX_FLOAT32, 9, 9 * gss[gi], 0x1p100, 1.0, false, "huge scales");
    den_case(&rng, gss[gi], EMLX_FLOAT32, 9, 9 * gss[gi], 1.0, 0x1p-130, false, "subnormal x");
    den_case(&rng, gss[gi], EMLX_FLOAT32, 9, 9 * gss[gi], 1.0, 0x1p100, false, "huge x");
    den_case(&rng, gss[gi], EMLX_FLOAT32, 9, 9 * gss[gi], 1.0, 0.0, false, "zero x");
  }
  /* one block with scales 2^60 apart: the small groups stay within f32 of the sum */
  {
    int64_t N = 5, K = 12 * 64;
    qmat q = make_qmat(&rng, EMLX_QMM_AFFINE, 4, 64, true, EMLX_FLOAT32, N, K);
    for (int64_t i = 0; i < N * q.groups; i++) {
      ((float *)q.scales)[i] *= i % 3 ? 0x1p-60f : 1.0f;
      ((float *)q.biases)[i] *= i % 3 ? 0x1p-60f : 1.0f;
    }
    float *x = malloc((size_t)K * sizeof(float)), *out = guarded_out(1, N);
    for (int64_t k = 0; k < K; k++)
      x[k] = (float)tu_uniform(&rng, -1.0, 1.0);
    emlx_qmm_desc d = desc_of(&q, x, K, 1, out, N, false);
    CHECK_MSG(emlx_cpu_qmm_fast(&d), "one row, scales 2^60 apart: handled");
    check_out_q(&q, x, K, out, N, 1, N, K, false, "one row, scales 2^60 apart");
    free(x), free(out), free_qmat(&q);
  }
  /* a NaN scale: its row NaN, the others right */
  {
    int64_t N = 6, K = 4 * 64;
    qmat q = make_qmat(&rng, EMLX_QMM_AFFINE, 4, 64, true, EMLX_FLOAT32, N, K);
    float *x = malloc((size_t)K * sizeof(float)), *out = guarded_out(1, N);
    for (int64_t k = 0; k < K; k++)
      x[k] = (float)tu_uniform(&rng, -1.0, 1.0);
    emlx_qmm_desc d = desc_of(&q, x, K, 1, out, N, false);
    CHECK_MSG(emlx_cpu_qmm_fast(&d), "one row, NaN scale: handled (before)");
    float keep = out[1];
    ((float *)q.scales)[3 * q.groups + 2] = NAN;
    CHECK_MSG(emlx_cpu_qmm_fast(&d), "one row, NaN scale: handled");
    CHECK_MSG(isnan(out[3]), "one row, NaN scale: its row NaN (%g)", (double)out[3]);
    CHECK_MSG(out[1] == keep, "one row, NaN scale: another row unchanged");
    free(x), free(out), free_qmat(&q);
  }
#if defined(__x86_64__) || defined(__i386__)
  /* the caller's MXCSR with flush-to-zero and denormals-are-zero set */
  {
    const unsigned csr = _mm_getcsr();
    _mm_setcsr(csr | 0x8040u);
    den_case(&rng, 64, EMLX_FLOAT32, 11, 5 * 64, 1.0, 1.0, false, "DAZ FTZ set");
    den_case(&rng, 32, EMLX_FLOAT16, 11, 5 * 32, 1.0, 1.0, false, "DAZ FTZ set");
    const unsigned after = _mm_getcsr();
    _mm_setcsr(csr);
    CHECK_MSG(after == (csr | 0x8040u), "one row: the caller's MXCSR left as set (%#x, %#x)",
              after, csr | 0x8040u);
  }
#endif
}

/* ---- the integer decode path's range -------------------------------------
 * Its powers of two (per x row, and per block of 128 groups of scales and
 * biases) keep every product of a scale and x's code scale a normal f32:
 * without them a scale near the bottom of f32's range times a code scale
 * of about 2^-24 goes subnormal and loses its low bits. Scales tiny and
 * huge (affine times 2^-118 / 2^100, biases alike; e8m0 2^-120 .. 2^-109 /
 * 2^92 .. 2^103), x subnormal (with scales near 2^60, so the results stay
 * normal), tiny and huge, rows of x a power of two apart, 150 groups (two
 * blocks), over 1, 3 and 6 rows and every kind the path takes (affine 4, 8
 * and 3-bit, mxfp4), whichever path the unit runs. */
static void range_case(tu_rng *rng, int mode, int bits, int64_t M, int srange, double xmul,
                       const char *tag) {
  const int gs = mode == EMLX_QMM_AFFINE ? 64 : 32;
  const int64_t N = 9, K = 150 * (int64_t)gs;
  const bool affine = mode == EMLX_QMM_AFFINE;
  qmat q = make_qmat(rng, mode, bits, gs, true, affine ? EMLX_FLOAT32 : EMLX_UINT8, N, K);
  /* affine: times 2^se; e8m0 codes 2^-8 .. 2^3 moved to 2^-120 .. 2^-109 (tiny), by 2^se else */
  const int se = srange < 0 ? -118 : srange == 1 ? 100 : 60;
  for (int64_t i = 0; srange && i < q.rows * q.groups; i++) {
    if (affine) {
      ((float *)q.scales)[i] = ldexpf(((float *)q.scales)[i], se);
      ((float *)q.biases)[i] = ldexpf(((float *)q.biases)[i], se);
    } else {
      ((uint8_t *)q.scales)[i] = (uint8_t)(tu_randint(rng, 119, 130) + (se < -112 ? -112 : se));
    }
  }
  float *x = malloc((size_t)(M * K) * sizeof(float)), *out = guarded_out(M, N);
  for (int64_t m = 0; m < M; m++) /* rows of x times 1, 16, 1/16, 1, ... */
    for (int64_t k = 0; k < K; k++)
      x[m * K + k] = (float)(tu_uniform(rng, -1.0, 1.0) * xmul *
                             (m % 3 == 1 ? 16.0
                              : m % 3    ? 0.0625
                                         : 1.0));
  emlx_qmm_desc d = desc_of(&q, x, K, M, out, N, false);
  char what[160];
  snprintf(what, sizeof what, "int range %s %s b%d M%" PRId64, tag, mode_name(mode), bits, M);
  CHECK_MSG(emlx_cpu_qmm_fast(&d), "%s: handled", what);
  check_out(&q, x, K, out, N, M, N, K, what);
  check_out_padding(out, M, N, N, what);
  free(x), free(out), free_qmat(&q);
}

static void test_int_range(void) {
  tu_rng rng = {4711};
  static const int kinds[][2] = {
      {EMLX_QMM_AFFINE, 4}, {EMLX_QMM_AFFINE, 8}, {EMLX_QMM_AFFINE, 3}, {EMLX_QMM_MXFP4, 4}};
  static const int64_t Ms[] = {1, 3, 6};
  for (int ki = 0; ki < 4; ki++)
    for (int mi = 0; mi < 3; mi++) {
      const int mode = kinds[ki][0], bits = kinds[ki][1];
      const int64_t M = Ms[mi];
      range_case(&rng, mode, bits, M, -1, 1.0, "tiny scales");
      range_case(&rng, mode, bits, M, 1, 1.0, "huge scales");
      range_case(&rng, mode, bits, M, 2, 0x1p-130, "subnormal x, scales 2^60");
      range_case(&rng, mode, bits, M, 0, 0x1p-110, "tiny x");
      range_case(&rng, mode, bits, M, 0, 0x1p100, "huge x");
    }
}

int main(void) {
  test_rejects();
  test_formats();
  test_threads();
  test_decode_blocks();
  test_int_dot();
  test_int_dot_outliers();
  test_int_dot_low_bits();
  test_int_range();
  test_int_dot_nonfinite();
  test_e8m0_extremes();
  test_one_row();
  test_gather();
  test_mlx();
  /* the f32 decode kernels, which the integer path otherwise takes over */
  g_int_dot = false;
  emlx_cpu_qmm_fast_int_dot(false);
  test_formats();
  test_threads();
  test_int_dot();
  test_decode_blocks();
  test_gather();
  emlx_cpu_qmm_fast_int_dot(true);
  return tu_finish();
}
