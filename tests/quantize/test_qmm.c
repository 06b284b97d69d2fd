/* test_qmm.c — quantized_matmul and gather_qmm in every mode and bit width,
 * both layouts, x in float32 / float16 / bfloat16, batch broadcast, 1-D x,
 * strided operands, odd sizes and empty shapes, against an f64
 * dequantize-then-matmul computed here (the packed weights are decoded with
 * the independent decoder of quant_test_util.h). Also: dequantize(quantize(w))
 * stays within half a step of w (affine). */
#include "quant_test_util.h"

typedef struct cfg {
  int mode, bits, gs;
} cfg;

static const cfg CFGS[] = {{0, 2, 32},  {0, 3, 64}, {0, 4, 64}, {0, 5, 128}, {0, 6, 32}, {0, 8, 64},
                           {0, 4, 128}, {0, 3, 32}, {1, 4, 32}, {2, 8, 32},  {3, 4, 16}};
#define NCFG ((int)(sizeof CFGS / sizeof CFGS[0]))

static tu_rng g_rng = {1515};

static emlx_array *random_array(emlx_dtype dt, const int64_t *shape, int nd) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++)
    n *= shape[i];
  double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
  for (int64_t i = 0; i < n; i++)
    v[i] = tu_uniform(&g_rng, -1.0, 1.0);
  emlx_array *a = tu_make(dt, shape, nd, v);
  free(v);
  return a;
}

/* The quantized stack of w as the test reads it: words, scales as doubles
 * (affine) or bytes. */
typedef struct qmat {
  uint32_t *w;
  double *s, *b;
  uint8_t *sb;
} qmat;

static bool read_q(emlx_array *wq, emlx_array *sc, emlx_array *bi, qmat *q) {
  memset(q, 0, sizeof *q);
  q->w = (uint32_t *)tu_read_raw(wq);
  if (bi) {
    q->s = tu_read(sc);
    q->b = tu_read(bi);
  } else {
    q->sb = tu_read_raw(sc);
  }
  return q->w && (bi ? q->s && q->b : q->sb != NULL);
}

static void free_q(qmat *q) {
  free(q->w);
  free(q->s);
  free(q->b);
  free(q->sb);
}

/* Checks out (nmat, M, N) against x[xi[i]] . W[wi[i]]. */
static void check_products(const char *what, emlx_array *out, const double *x, const qmat *q,
                           int64_t nmat, const int64_t *xi, const int64_t *wi, int64_t M, int64_t K,
                           int64_t N, bool transpose, const cfg *c, emlx_dtype odt) {
  double *got = tu_read(out);
  if (!got)
    return;
  int64_t rows = transpose ? N : K, cols = transpose ? K : N;
  double eps_out = odt == EMLX_FLOAT32 ? 0x1p-24 : odt == EMLX_FLOAT16 ? 0x1p-11 : 0x1p-8;
  double worst = 0;
  for (int64_t i = 0; i < nmat; i++) {
    const uint32_t *wm = q->w + wi[i] * rows * cols * c->bits / 32;
    int64_t so = wi[i] * rows * (cols / c->gs);
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        double s = 0, a = 0;
        for (int64_t k = 0; k < K; k++) {
          double v = qt_value(wm, q->s ? q->s + so : NULL, q->b ? q->b + so : NULL,
                              q->sb ? q->sb + so : NULL, transpose ? n : k, transpose ? k : n, cols,
                              c->gs, c->bits, c->mode);
          double xv = x[(xi[i] * M + m) * K + k];
          s += xv * v;
          a += fabs(xv * v);
        }
        double e = fabs(got[(i * M + m) * N + n] - s) / (2e-6 * a + eps_out * fabs(s) + 1e-30);
        worst = e > worst ? e : worst;
      }
  }
  CHECK_MSG(worst <= 1.0, "%s mode=%d bits=%d gs=%d transpose=%d %s: %.3g of tolerance", what,
            c->mode, c->bits, c->gs, transpose, tu_dname(odt), worst);
  free(got);
}

/* Quantizes a random stack W (batch dims wb, rows x cols) with cfg. */
static bool make_q(const cfg *c, const int64_t *wshape, int wnd, emlx_dtype wdt, emlx_array **wq,
                   emlx_array **sc, emlx_array **bi) {
  emlx_array *w = random_array(wdt, wshape, wnd);
  *bi = NULL;
  int rc = emlx_quantize(w, c->gs, c->bits, (emlx_quantization_mode)c->mode, wq, sc,
                         c->mode == 0 ? bi : NULL);
  emlx_release(w);
  return CHECK_MSG(rc == 0, "quantize mode=%d bits=%d", c->mode, c->bits);
}

static void test_qmm_broadcast(void) {
  const emlx_dtype xdts[3] = {EMLX_FLOAT32, EMLX_FLOAT16, EMLX_BFLOAT16};
  for (int ci = 0; ci < NCFG; ci++) {
    const cfg *c = &CFGS[ci];
    for (int t = 0; t < 2; t++) {
      bool transpose = t == 0;
      emlx_dtype xdt = xdts[(ci + t) % 3];
      int64_t M = 3, K = transpose ? 288 : 64 + 16, N = transpose ? 19 : 2 * c->gs;
      if (!transpose && K % 16)
        K = 80;
      if (transpose && K % c->gs)
        K = 384;
      /* x (2, 1, M, K) against w (3, rows, cols): output (2, 3, M, N) */
      int64_t xs[4] = {2, 1, M, K};
      int64_t ws[3] = {3, transpose ? N : K, transpose ? K : N};
      emlx_array *x = random_array(xdt, xs, 4), *wq, *sc, *bi;
      if (!make_q(c, ws, 3, xdt, &wq, &sc, &bi)) {
        emlx_release(x);
        continue;
      }
      emlx_array *out = emlx_quantized_matmul(x, wq, sc, bi, transpose, c->gs, c->bits,
                                              (emlx_quantization_mode)c->mode);
      qmat q;
      double *xd = tu_read(x);
      if (CHECK(out != NULL) && read_q(wq, sc, bi, &q) && xd) {
        CHECK(emlx_ndim(out) == 4 && emlx_shape(out)[0] == 2 && emlx_shape(out)[1] == 3 &&
              emlx_shape(out)[2] == M && emlx_shape(out)[3] == N);
        CHECK(emlx_array_dtype(out) == xdt);
        int64_t xi[6] = {0, 0, 0, 1, 1, 1}, wi[6] = {0, 1, 2, 0, 1, 2};
        check_products("qmm broadcast", out, xd, &q, 6, xi, wi, M, K, N, transpose, c, xdt);
      }
      if (out)
        free_q(&q);
      free(xd);
      emlx_release(out);
      emlx_release(x);
      emlx_release(wq);
      emlx_release(sc);
      emlx_release(bi);
    }
  }
}

static void test_qmm_shapes(void) {
  const cfg *c = &CFGS[2]; /* affine 4 bits g64 */
  /* 2-D w with 3-D x; 1-D x; M = 1 (decode); strided (transposed) x */
  int64_t ws[2] = {40, 128};
  emlx_array *wq, *sc, *bi;
  if (!make_q(c, ws, 2, EMLX_FLOAT32, &wq, &sc, &bi))
    return;
  qmat q;
  if (!read_q(wq, sc, bi, &q))
    return;
  int64_t xs[3] = {2, 5, 128};
  emlx_array *x = random_array(EMLX_FLOAT32, xs, 3);
  double *xd = tu_read(x);
  emlx_array *out = emlx_quantized_matmul(x, wq, sc, bi, true, 64, 4, EMLX_QUANT_AFFINE);
  int64_t xi[2] = {0, 1}, wi[2] = {0, 0};
  if (CHECK(out != NULL))
    check_products("qmm 2-D w", out, xd, &q, 2, xi, wi, 5, 128, 40, true, c, EMLX_FLOAT32);
  emlx_release(out);
  /* 1-D x: row 0 of x[0] */
  int64_t one = 128;
  emlx_array *v = tu_make(EMLX_FLOAT32, &one, 1, xd);
  out = emlx_quantized_matmul(v, wq, sc, bi, true, 64, 4, EMLX_QUANT_AFFINE);
  if (CHECK(out != NULL) && CHECK(emlx_ndim(out) == 1 && emlx_shape(out)[0] == 40))
    check_products("qmm 1-D x", out, xd, &q, 1, xi, wi, 1, 128, 40, true, c, EMLX_FLOAT32);
  emlx_release(out);
  emlx_release(v);
  /* x given as a transposed view: x^T of a (128, 5) array */
  int64_t ts[2] = {128, 5};
  double *tv = malloc(128 * 5 * sizeof *tv);
  for (int k = 0; k < 128; k++)
    for (int m = 0; m < 5; m++)
      tv[k * 5 + m] = xd[m * 128 + k];
  emlx_array *xt0 = tu_make(EMLX_FLOAT32, ts, 2, tv);
  emlx_array *xt = emlx_transpose(xt0, NULL, 0);
  out = emlx_quantized_matmul(xt, wq, sc, bi, true, 64, 4, EMLX_QUANT_AFFINE);
  if (CHECK(out != NULL))
    check_products("qmm strided x", out, xd, &q, 1, xi, wi, 5, 128, 40, true, c, EMLX_FLOAT32);
  emlx_release(out);
  emlx_release(xt);
  emlx_release(xt0);
  free(tv);
  /* empty M: shape (2, 0, 40) */
  int64_t es[3] = {2, 0, 128};
  emlx_array *xe = emlx_zeros(es, 3, EMLX_FLOAT32, EMLX_CPU);
  out = emlx_quantized_matmul(xe, wq, sc, bi, true, 64, 4, EMLX_QUANT_AFFINE);
  if (CHECK(out != NULL)) {
    CHECK(emlx_eval(&out, 1) == 0);
    CHECK(emlx_size(out) == 0 && emlx_shape(out)[2] == 40);
  }
  emlx_release(out);
  emlx_release(xe);
  emlx_release(x);
  free(xd);
  free_q(&q);
  emlx_release(wq);
  emlx_release(sc);
  emlx_release(bi);
}

static void test_gather(void) {
  for (int ci = 0; ci < NCFG; ci++) {
    const cfg *c = &CFGS[ci];
    for (int t = 0; t < 2; t++) {
      bool transpose = t == 1;
      int64_t E = 5, B = 3, M = 2, K = transpose ? 128 : 64, N = transpose ? 24 : 128;
      int64_t ws[3] = {E, transpose ? N : K, transpose ? K : N}, xs[3] = {B, M, K};
      emlx_array *wq, *sc, *bi;
      if (!make_q(c, ws, 3, EMLX_FLOAT32, &wq, &sc, &bi))
        continue;
      emlx_array *x = random_array(EMLX_FLOAT32, xs, 3);
      double lv[4] = {2, 0, 1, 2}, rv[4] = {4, 4, 0, 1};
      int64_t cnt = 4;
      emlx_array *li = tu_make(EMLX_INT32, &cnt, 1, lv), *ri = tu_make(EMLX_INT64, &cnt, 1, rv);
      emlx_array *out = emlx_gather_qmm(x, wq, sc, bi, li, ri, transpose, c->gs, c->bits,
                                        (emlx_quantization_mode)c->mode, false);
      qmat q;
      double *xd = tu_read(x);
      bool okq = read_q(wq, sc, bi, &q);
      int64_t xi[4] = {2, 0, 1, 2}, wi[4] = {4, 4, 0, 1};
      if (CHECK(out != NULL) && okq && xd)
        check_products("gather_qmm", out, xd, &q, 4, xi, wi, M, K, N, transpose, c, EMLX_FLOAT32);
      emlx_release(out);
      /* lhs NULL: x's matrices in order, broadcast against rhs of shape (3) */
      double rv2[3] = {3, 3, 1};
      int64_t three = 3;
      emlx_array *r2 = tu_make(EMLX_UINT32, &three, 1, rv2);
      out = emlx_gather_qmm(x, wq, sc, bi, NULL, r2, transpose, c->gs, c->bits,
                            (emlx_quantization_mode)c->mode, true);
      int64_t xi2[3] = {0, 1, 2}, wi2[3] = {3, 3, 1};
      if (CHECK(out != NULL) && okq && xd)
        check_products("gather_qmm sorted, lhs NULL", out, xd, &q, 3, xi2, wi2, M, K, N, transpose,
                       c, EMLX_FLOAT32);
      emlx_release(out);
      /* an index out of range fails at evaluation, with a message */
      double bad[1] = {5};
      int64_t onei = 1;
      emlx_array *rb = tu_make(EMLX_INT32, &onei, 1, bad);
      out = emlx_gather_qmm(x, wq, sc, bi, NULL, rb, transpose, c->gs, c->bits,
                            (emlx_quantization_mode)c->mode, false);
      if (CHECK(out != NULL) && ci == 0 && t == 0) {
        /* x has 3 matrices, rhs 1 index: broadcast fails at construction? no: shapes
         * (3) and (1) broadcast to (3); evaluation must refuse index 5 of 5 experts */
        CHECK_FAILS(emlx_eval(&out, 1));
      }
      emlx_release(out);
      emlx_release(rb);
      emlx_release(r2);
      if (okq)
        free_q(&q);
      free(xd);
      emlx_release(li);
      emlx_release(ri);
      emlx_release(x);
      emlx_release(wq);
      emlx_release(sc);
      emlx_release(bi);
    }
  }
}

/* Affine: |dequantize(quantize(w)) - w| <= |scale| (+ rounding). Half a step
 * inside the range; MLX moves the scale so that the group's edge value is
 * exact, and the other end may then be clipped by up to a step. */
static void test_roundtrip(void) {
  for (int bits = 2; bits <= 8; bits++) {
    if (bits == 7)
      continue;
    int64_t shape[3] = {2, 3, 256};
    emlx_array *w = random_array(EMLX_FLOAT32, shape, 3), *wq, *sc, *bi;
    CHECK_OK(emlx_quantize(w, 64, bits, EMLX_QUANT_AFFINE, &wq, &sc, &bi));
    emlx_array *d = emlx_dequantize(wq, sc, bi, 64, bits, EMLX_QUANT_AFFINE);
    double *wv = tu_read(w), *dv = d ? tu_read(d) : NULL, *sv = tu_read(sc);
    if (CHECK(wv && dv && sv)) {
      double worst = 0;
      for (int i = 0; i < 2 * 3 * 256; i++) {
        double e = fabs(wv[i] - dv[i]) / (fabs(sv[i / 64]) * (1 + 1e-5) + 1e-6);
        worst = e > worst ? e : worst;
      }
      CHECK_MSG(worst <= 1.0, "roundtrip bits=%d: %.3g of a step", bits, worst);
    }
    free(wv);
    free(dv);
    free(sv);
    emlx_release(d);
    emlx_release(w);
    emlx_release(wq);
    emlx_release(sc);
    emlx_release(bi);
  }
}

int main(void) {
  test_qmm_broadcast();
  test_qmm_shapes();
  test_gather();
  test_roundtrip();
  return tu_finish();
}
