/* qmm_ref.h — the quantize tests' reference: a random packed matrix in
 * MLX's layout (an LSB-first bit stream of codes per row, groups along the
 * row, random codes, scales and biases) and its elements dequantized in f64
 * from the format description (e2m1, e4m3 and e8m0 decoded from their bit
 * fields). Written here, not taken from src/, so that it checks the
 * kernels independently. Included by the test programs that need it. */
#ifndef EMLX_TESTS_QMM_REF_H
#define EMLX_TESTS_QMM_REF_H

#include "quantize/qmm_fast.h"
#include "test_util.h"

/* ---- reference decoding ------------------------------------------------------ */

static uint32_t ref_code(const uint8_t *row, int bits, int64_t i) {
  uint32_t q = 0;
  for (int b = 0; b < bits; b++) {
    int64_t bit = i * bits + b;
    q |= (uint32_t)((row[bit / 8] >> (bit % 8)) & 1u) << b;
  }
  return q;
}

static double ref_e2m1(uint32_t c) {
  int s = (c >> 3) & 1, e = (c >> 1) & 3, m = c & 1;
  double v = e == 0 ? 0.5 * m : ldexp(1.0 + 0.5 * m, e - 1);
  return s ? -v : v;
}

static double ref_e4m3(uint32_t c) { /* MLX reads 0x7f / 0xff as +-480 (no NaN) */
  int s = (c >> 7) & 1, e = (c >> 3) & 15, m = c & 7;
  double v = e == 0 ? ldexp(m / 8.0, -6) : ldexp(1.0 + m / 8.0, e - 7);
  return s ? -v : v;
}

static double ref_e8m0(uint32_t s) { return ldexp(1.0, (int)s - 127); }

typedef struct qmat {
  int mode, bits, gs;
  bool transpose;
  emlx_dtype sdt;
  int64_t N, K;               /* the logical [N, K] */
  int64_t rows, rlen, groups; /* packed rows, elements per row */
  uint32_t *w;
  void *scales, *biases;
} qmat;

static double ref_scale(const qmat *q, int64_t r, int64_t g) {
  const void *s = q->scales;
  int64_t at = r * q->groups + g;
  if (q->mode == EMLX_QMM_AFFINE)
    return tu_load((const char *)s + at * (int64_t)tu_dsize(q->sdt), q->sdt);
  uint8_t c = ((const uint8_t *)s)[at];
  return q->mode == EMLX_QMM_NVFP4 ? ref_e4m3(c) : ref_e8m0(c);
}

/* Element e of packed row r, dequantized. */
static double ref_elem(const qmat *q, int64_t r, int64_t e) {
  const uint8_t *row = (const uint8_t *)q->w + r * (q->rlen * q->bits / 8);
  uint32_t c = ref_code(row, q->bits, e);
  int64_t g = e / q->gs;
  double s = ref_scale(q, r, g);
  switch (q->mode) {
  case EMLX_QMM_AFFINE:
    return s * c +
           tu_load((const char *)q->biases + (r * q->groups + g) * (int64_t)tu_dsize(q->sdt),
                   q->sdt);
  case EMLX_QMM_MXFP8:
    return s * ref_e4m3(c);
  default:
    return s * ref_e2m1(c);
  }
}

/* W(n, k) in the logical [N, K] orientation. */
static double ref_w(const qmat *q, int64_t n, int64_t k) {
  return q->transpose ? ref_elem(q, n, k) : ref_elem(q, k, n);
}

/* A random packed matrix: random codes and scales (and biases). */
static qmat make_qmat(tu_rng *rng, int mode, int bits, int gs, bool transpose, emlx_dtype sdt,
                      int64_t N, int64_t K) {
  qmat q = {mode, bits, gs, transpose, sdt, N, K, 0, 0, 0, NULL, NULL, NULL};
  q.rows = transpose ? N : K;
  q.rlen = transpose ? K : N;
  q.groups = q.rlen / gs;
  int64_t words = q.rows * q.rlen * bits / 32;
  q.w = malloc((size_t)words * 4 + 4);
  for (int64_t i = 0; i < words; i++)
    q.w[i] = (uint32_t)tu_next(rng);
  int64_t ns = q.rows * q.groups;
  if (mode == EMLX_QMM_AFFINE) {
    size_t es = tu_dsize(sdt);
    q.scales = malloc((size_t)ns * es);
    q.biases = malloc((size_t)ns * es);
    for (int64_t i = 0; i < ns; i++) {
      tu_store((char *)q.scales + i * (int64_t)es, sdt, tu_uniform(rng, -0.2, 0.2));
      tu_store((char *)q.biases + i * (int64_t)es, sdt, tu_uniform(rng, -1.0, 1.0));
    }
  } else {
    uint8_t *s = malloc((size_t)ns);
    for (int64_t i = 0; i < ns; i++) /* e8m0 2^-8 .. 2^3; e4m3 any finite code but tiny */
      s[i] = mode == EMLX_QMM_NVFP4 ? (uint8_t)tu_randint(rng, 0, 0x7e)
                                    : (uint8_t)tu_randint(rng, 119, 130);
    if (mode == EMLX_QMM_NVFP4)
      s[0] = 0x7f; /* MLX's 480 */
    q.scales = s;
  }
  return q;
}

static void free_qmat(qmat *q) {
  free(q->w);
  free(q->scales);
  free(q->biases);
}

/* An M x ldo output filled with a guard value, and the check that a kernel
 * writing M x N of it left the padding columns N .. ldo - 1 untouched (the
 * reference comparison sees the written part). */
#define QMM_OUT_GUARD 12345.0f
static float *guarded_out(int64_t M, int64_t ldo) {
  float *out = malloc((size_t)(M * ldo) * sizeof(float));
  for (int64_t i = 0; out && i < M * ldo; i++)
    out[i] = QMM_OUT_GUARD;
  return out;
}

static void check_out_padding(const float *out, int64_t M, int64_t N, int64_t ldo,
                              const char *what) {
  bool pad_ok = true;
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = N; n < ldo; n++)
      pad_ok &= out[m * ldo + n] == QMM_OUT_GUARD;
  CHECK_MSG(pad_ok, "%s: out padding untouched", what);
}

/* The kernel descriptor of x (M rows, ldx apart) times q into out. */
static emlx_qmm_desc desc_of(const qmat *q, const float *x, int64_t ldx, int64_t M, float *out,
                             int64_t ldo, bool threaded) {
  emlx_qmm_desc d = {.x = x,
                     .ldx = ldx,
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
                     .transpose = q->transpose,
                     .out = out,
                     .ldo = ldo,
                     .threaded = threaded};
  return d;
}

#endif
