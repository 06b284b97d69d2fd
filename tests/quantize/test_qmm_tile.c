/* test_qmm_tile.c — the bfloat16-x prefill kernel (src/cpu/quantize/
 * qmm_tile.h) against the dequantize-then-dot reference in f64 of
 * qmm_ref.h (written from the format description): every mode, bit width, group size and scale
 * dtype; row counts not a multiple of the kernel's 6, column counts not a multiple of its 32 (and
 * below 32), K with a 4-bit tail past a multiple of 32 codes, strided x and out with guarded
 * padding, the pool on and off; what it must decline (non-finite or tiny x, too few rows,
 * !transpose, a bad format); and quantized_matmul itself with a bfloat16 x, a batch whose second
 * matrix the kernel declines included. Run at every ISA level: below avx512, or on a CPU without
 * AVX-512 BF16, the kernel must decline everything and the op must still be right. Where the CPU
 * has AMX-BF16, everything runs twice: on the AMX micro-kernel and on the vdpbf16ps one. */
#include "matmul/matmul.h"
#include "qmm_ref.h"
#include "quantize/qmm_tile.h"
#include "test_util.h"

/* got[m][n] (stride ldo) against sum_k x[m][k] W(n, k) in f64, within 1e-5
 * of sum |x||W| (f32 rounding of the sums; a wrong code, scale or bias is
 * off by far more) plus rel * |reference| (the output's own rounding). */
static bool check_out(const qmat *q, const uint16_t *xb, int64_t ldx, const double *got,
                      int64_t ldo, int64_t M, double rel, const char *what) {
  int64_t N = q->N, K = q->K;
  double *wd = malloc((size_t)(N * K) * sizeof(double));
  for (int64_t n = 0; n < N; n++)
    for (int64_t k = 0; k < K; k++)
      wd[n * K + k] = ref_w(q, n, k);
  int bad = 0;
  for (int64_t m = 0; m < M && bad < 3; m++)
    for (int64_t n = 0; n < N && bad < 3; n++) {
      double s = 0, a = 0;
      for (int64_t k = 0; k < K; k++) {
        double t = tu_bf16_decode(xb[m * ldx + k]) * wd[n * K + k];
        s += t;
        a += fabs(t);
      }
      double g = got[m * ldo + n];
      if (!(fabs(g - s) <= 1e-5 * a + rel * fabs(s) + 1e-300)) {
        bad++;
        CHECK_MSG(false, "%s: out[%" PRId64 "][%" PRId64 "] = %.9g, reference %.9g (scale %.3g)",
                  what, m, n, g, s, a);
      }
    }
  free(wd);
  if (!bad)
    CHECK_MSG(true, "%s", what);
  return bad == 0;
}

static const char *mode_name(int mode) {
  static const char *names[] = {"affine", "mxfp4", "mxfp8", "nvfp4"};
  return names[mode];
}

/* Whether this process runs the kernel (else it must decline everything). */
static bool g_active;

static uint16_t *make_x(tu_rng *rng, int64_t n) {
  uint16_t *x = malloc((size_t)n * 2);
  for (int64_t i = 0; i < n; i++)
    x[i] = tu_round_bf16(tu_uniform(rng, -1.0, 1.0));
  return x;
}

/* One kernel case: x [M][K] bf16 (row stride ldx), out [M][N] (stride ldo,
 * padding guarded). */
static void run_case(tu_rng *rng, int mode, int bits, int gs, emlx_dtype sdt, int64_t M, int64_t N,
                     int64_t K, bool threaded, bool strided) {
  qmat q = make_qmat(rng, mode, bits, gs, true, sdt, N, K);
  int64_t ldx = strided ? K + 5 : K, ldo = strided ? N + 3 : N;
  uint16_t *x = make_x(rng, M * ldx);
  float *out = guarded_out(M, ldo);
  double *got = malloc((size_t)(M * ldo) * sizeof(double));
  emlx_qmm_desc d = desc_of(&q, NULL, ldx, M, out, ldo, threaded);
  char what[160];
  snprintf(what, sizeof what, "%s b%d g%d s%d M%" PRId64 " N%" PRId64 " K%" PRId64 "%s%s",
           mode_name(mode), bits, gs, (int)sdt, M, N, K, threaded ? " threads" : "",
           strided ? " strided" : "");
  bool ok = emlx_cpu_qmm_tile(&d, x);
  CHECK_MSG(ok == g_active, "%s: handled %d, expected %d", what, ok, g_active);
  if (ok) {
    for (int64_t i = 0; i < M * ldo; i++)
      got[i] = out[i];
    check_out(&q, x, ldx, got, ldo, M, 0.0, what);
    check_out_padding(out, M, N, ldo, what);
  }
  free(x);
  free(out);
  free(got);
  free_qmat(&q);
}

static void test_formats(void) {
  tu_rng rng = {1515};
  static const int abits[] = {2, 3, 4, 5, 6, 8};
  static const int gss[] = {32, 64, 128};
  static const emlx_dtype sdts[] = {EMLX_FLOAT32, EMLX_FLOAT16, EMLX_BFLOAT16};
  for (int bi = 0; bi < 6; bi++)
    for (int gi = 0; gi < 3; gi++) {
      int gs = gss[gi];
      run_case(&rng, EMLX_QMM_AFFINE, abits[bi], gs, sdts[(bi + gi) % 3], 37, 70, 3 * gs, false,
               false);
      run_case(&rng, EMLX_QMM_AFFINE, abits[bi], gs, sdts[(bi + gi + 1) % 3], 32, 21, 2 * gs, true,
               true);
    }
  struct {
    int mode, bits, gs;
  } fp[] = {{EMLX_QMM_MXFP4, 4, 32}, {EMLX_QMM_MXFP8, 8, 32}, {EMLX_QMM_NVFP4, 4, 16}};
  for (int f = 0; f < 3; f++) {
    int gs = fp[f].gs;
    /* K = 5 groups: nvfp4's 80 codes end 16 past a multiple of 32 */
    run_case(&rng, fp[f].mode, fp[f].bits, gs, EMLX_UINT8, 43, 45, 5 * gs, false, false);
    run_case(&rng, fp[f].mode, fp[f].bits, gs, EMLX_UINT8, 38, 96, 4 * gs, true, true);
    run_case(&rng, fp[f].mode, fp[f].bits, gs, EMLX_UINT8, 64, 7, 3 * gs, false, true);
  }
  /* a larger one on the pool: many column blocks, K of many groups */
  run_case(&rng, EMLX_QMM_AFFINE, 4, 64, EMLX_FLOAT32, 77, 200, 1024, true, false);
  run_case(&rng, EMLX_QMM_MXFP4, 4, 32, EMLX_UINT8, 50, 130, 512, true, false);
}

/* What the kernel must decline, at every level. */
static void test_declines(void) {
  tu_rng rng = {77};
  qmat q = make_qmat(&rng, EMLX_QMM_AFFINE, 4, 32, true, EMLX_FLOAT32, 40, 64);
  int64_t M = 36;
  uint16_t *x = make_x(&rng, M * 64);
  float *out = malloc((size_t)(M * 40) * sizeof(float));
  emlx_qmm_desc d = desc_of(&q, NULL, 64, M, out, 40, false);
  CHECK_MSG(emlx_cpu_qmm_tile(&d, x) == g_active, "plain x: handled iff the kernel is active");
  emlx_qmm_desc e = d;
  e.M = EMLX_QMM_TILE_MIN_M - 1;
  CHECK_MSG(!emlx_cpu_qmm_tile(&e, x), "declines M below EMLX_QMM_TILE_MIN_M");
  e = d;
  e.transpose = false;
  CHECK_MSG(!emlx_cpu_qmm_tile(&e, x), "declines transpose = false");
  e = d;
  e.bits = 7;
  CHECK_MSG(!emlx_cpu_qmm_tile(&e, x), "declines 7-bit codes");
  e = d;
  e.biases = NULL;
  CHECK_MSG(!emlx_cpu_qmm_tile(&e, x), "declines affine without biases");
  CHECK_MSG(!emlx_cpu_qmm_tile(&d, NULL), "declines a NULL x");
  uint16_t keep = x[5 * 64 + 17];
  x[5 * 64 + 17] = 0x7F80; /* +Inf */
  CHECK_MSG(!emlx_cpu_qmm_tile(&d, x), "declines an x with Inf");
  x[5 * 64 + 17] = 0x7FC0; /* NaN */
  CHECK_MSG(!emlx_cpu_qmm_tile(&d, x), "declines an x with NaN");
  x[5 * 64 + 17] = tu_round_bf16(1e-30); /* vdpbf16ps would lose it */
  CHECK_MSG(!emlx_cpu_qmm_tile(&d, x), "declines an x with a value below 2^-60");
  x[5 * 64 + 17] = 0x8000; /* -0 is fine */
  CHECK_MSG(emlx_cpu_qmm_tile(&d, x) == g_active, "-0 in x: handled iff active");
  x[5 * 64 + 17] = keep;
  free(x);
  free(out);
  free_qmat(&q);
}

/* quantized_matmul with a bfloat16 x: batch of 2 x matrices, the second
 * holding tiny values (the kernel declines it; the op must still be
 * right), output bf16. */
static void test_op(int mode, int bits, int gs, bool tiny) {
  tu_rng rng = {(uint64_t)(900 + mode * 10 + bits + tiny)};
  int64_t B = 2, M = 40, N = 45, K = 4 * gs;
  emlx_dtype sdt = mode == EMLX_QMM_AFFINE ? EMLX_BFLOAT16 : EMLX_UINT8;
  qmat q = make_qmat(&rng, mode, bits, gs, true, sdt, N, K);
  uint16_t *x = make_x(&rng, B * M * K);
  if (tiny)
    for (int64_t i = M * K; i < B * M * K; i += 7)
      x[i] = tu_round_bf16(tu_uniform(&rng, -1.0, 1.0) * 1e-25);
  int64_t xs[3] = {B, M, K}, ws[2] = {N, K * bits / 32}, ss[2] = {N, K / gs};
  emlx_array *xa = emlx_from_blob(x, EMLX_BFLOAT16, xs, 3, EMLX_CPU);
  emlx_array *wa = emlx_from_blob(q.w, EMLX_UINT32, ws, 2, EMLX_CPU);
  emlx_array *sa = emlx_from_blob(q.scales, sdt, ss, 2, EMLX_CPU);
  emlx_array *ba = q.biases ? emlx_from_blob(q.biases, sdt, ss, 2, EMLX_CPU) : NULL;
  emlx_array *o =
      emlx_quantized_matmul(xa, wa, sa, ba, true, gs, bits, (emlx_quantization_mode)mode);
  char what[96];
  snprintf(what, sizeof what, "op %s b%d g%d bf16 x%s", mode_name(mode), bits, gs,
           tiny ? " (tiny second matrix)" : "");
  CHECK_MSG(o != NULL, "%s: %s", what, o ? "" : emlx_last_error());
  if (o) {
    CHECK_MSG(emlx_array_dtype(o) == EMLX_BFLOAT16, "%s: bf16 out", what);
    double *got = tu_read(o);
    for (int64_t b = 0; b < B && got; b++)
      check_out(&q, x + b * M * K, K, got + b * M * N, N, M, 0x1p-8, what);
    free(got);
  }
  emlx_release(o);
  emlx_release(xa);
  emlx_release(wa);
  emlx_release(sa);
  emlx_release(ba);
  free(x);
  free_qmat(&q);
}

int main(void) {
  const char *lvl = emlx_simd_level();
  g_active = lvl && !strcmp(lvl, "avx512") && emlx_mm_cpu_has_avx512bf16();
  printf("# simd %s: the bf16 tile kernel is %s\n", lvl ? lvl : "?",
         g_active ? "active" : "expected to decline (no AVX-512 BF16 at this level)");
  /* both of its micro-kernels where this machine has AMX-BF16 (the default
   * there; EMLX_QMM_TILE_KERNEL=avx512-bf16 forces vdpbf16ps) */
  const bool amx = g_active && emlx_mm_lowp_amx() != NULL;
  for (int k = 0; k < (amx ? 2 : 1); k++) {
    if (k == 1)
      setenv("EMLX_QMM_TILE_KERNEL", "avx512-bf16", 1);
    printf("# micro-kernel: %s\n", amx && k == 0 ? "amx-bf16" : "avx512-bf16");
    test_formats();
    test_declines();
    test_op(EMLX_QMM_AFFINE, 4, 64, false);
    test_op(EMLX_QMM_AFFINE, 3, 32, true);
    test_op(EMLX_QMM_MXFP4, 4, 32, true);
    test_op(EMLX_QMM_MXFP8, 8, 32, false);
    test_op(EMLX_QMM_NVFP4, 4, 16, false);
  }
  unsetenv("EMLX_QMM_TILE_KERNEL");
  return tu_finish();
}
