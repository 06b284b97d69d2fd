/* test_quantize_errors.c — bad input to quantize / dequantize /
 * quantized_matmul / gather_qmm: each returns NULL / -1 with a message that
 * names the problem, and never crashes. */
#include "quant_test_util.h"

/* The call fails and the message contains `needle`. */
#define CHECK_ERR(expr, needle)                                                                    \
  do {                                                                                             \
    emlx_clear_error();                                                                            \
    bool tu_failed_ = (expr);                                                                      \
    const char *e_ = emlx_last_error();                                                            \
    CHECK_MSG(tu_failed_ &&e_ &&strstr(e_, needle) != NULL,                                        \
              "%s fails naming \"%s\" (message \"%s\")", #expr, needle, e_ ? e_ : "(null)");       \
    emlx_clear_error();                                                                            \
  } while (0)

static emlx_array *zeros(emlx_dtype dt, int64_t a, int64_t b) {
  int64_t s[2] = {a, b};
  return emlx_zeros(s, 2, dt, EMLX_CPU);
}

static void test_quantize_errors(void) {
  emlx_array *w = zeros(EMLX_FLOAT32, 4, 96), *q = NULL, *s = NULL, *b = NULL;
  CHECK_ERR(emlx_quantize(w, 64, 4, EMLX_QUANT_AFFINE, &q, &s, &b) != 0, "not divisible");
  CHECK(q == NULL && s == NULL && b == NULL);
  CHECK_ERR(emlx_quantize(w, 32, 7, EMLX_QUANT_AFFINE, &q, &s, &b) != 0, "7 bits");
  CHECK_ERR(emlx_quantize(w, 32, 1, EMLX_QUANT_AFFINE, &q, &s, &b) != 0, "1 bits");
  CHECK_ERR(emlx_quantize(w, 16, 4, EMLX_QUANT_AFFINE, &q, &s, &b) != 0, "group size 16");
  CHECK_ERR(emlx_quantize(w, 64, 4, EMLX_QUANT_MXFP4, &q, &s, &b) != 0, "requires group size 32");
  CHECK_ERR(emlx_quantize(w, 32, 8, EMLX_QUANT_MXFP4, &q, &s, &b) != 0, "requires 4 bits");
  CHECK_ERR(emlx_quantize(w, 32, 4, EMLX_QUANT_NVFP4, &q, &s, &b) != 0, "requires group size 16");
  CHECK_ERR(emlx_quantize(w, 32, 4, EMLX_QUANT_MXFP8, &q, &s, &b) != 0, "requires 8 bits");
  CHECK_ERR(emlx_quantize(w, 32, 4, (emlx_quantization_mode)9, &q, &s, &b) != 0,
            "unsupported quantization mode");
  CHECK_ERR(emlx_quantize(w, 32, 4, EMLX_QUANT_AFFINE, NULL, &s, &b) != 0, "must not be NULL");
  CHECK_ERR(emlx_quantize(NULL, 32, 4, EMLX_QUANT_AFFINE, &q, &s, &b) != 0, "NULL");
  emlx_array *wi = zeros(EMLX_INT32, 4, 64), *wd = zeros(EMLX_FLOAT64, 4, 64);
  CHECK_ERR(emlx_quantize(wi, 32, 4, EMLX_QUANT_AFFINE, &q, &s, &b) != 0, "int32");
  CHECK_ERR(emlx_quantize(wd, 32, 4, EMLX_QUANT_AFFINE, &q, &s, &b) != 0, "float64");
  int64_t one = 64;
  emlx_array *v = emlx_zeros(&one, 1, EMLX_FLOAT32, EMLX_CPU);
  CHECK_ERR(emlx_quantize(v, 32, 4, EMLX_QUANT_AFFINE, &q, &s, &b) != 0, "at least 2 dimensions");
  emlx_quantization_mode m;
  CHECK_ERR(emlx_quantization_mode_parse("int4", &m) != 0, "\"int4\"");
  CHECK(emlx_quantization_mode_parse("nvfp4", &m) == 0 && m == EMLX_QUANT_NVFP4);
  CHECK(strcmp(emlx_quantization_mode_name(EMLX_QUANT_MXFP8), "mxfp8") == 0);
  emlx_release(v);
  emlx_release(wi);
  emlx_release(wd);
  emlx_release(w);
}

static void test_dequantize_and_qmm_errors(void) {
  emlx_array *w = zeros(EMLX_FLOAT32, 8, 128), *q, *s, *b, *qf, *sf;
  if (!CHECK(emlx_quantize(w, 64, 4, EMLX_QUANT_AFFINE, &q, &s, &b) == 0))
    return;
  CHECK(emlx_quantize(w, 32, 4, EMLX_QUANT_MXFP4, &qf, &sf, NULL) == 0);
  emlx_array *s_bad = zeros(EMLX_FLOAT32, 8, 3), *s_rows = zeros(EMLX_FLOAT32, 7, 2);
  emlx_array *s_u8 = zeros(EMLX_UINT8, 8, 2), *q_i = zeros(EMLX_INT32, 8, 16);
  CHECK_ERR(emlx_dequantize(q, s_bad, s_bad, 64, 4, EMLX_QUANT_AFFINE) == NULL,
            "shape of scales does not match");
  CHECK_ERR(emlx_dequantize(q, s_rows, s_rows, 64, 4, EMLX_QUANT_AFFINE) == NULL,
            "shape of scales does not match");
  CHECK_ERR(emlx_dequantize(q, s, s_bad, 64, 4, EMLX_QUANT_AFFINE) == NULL, "same shape");
  CHECK_ERR(emlx_dequantize(q, s, NULL, 64, 4, EMLX_QUANT_AFFINE) == NULL, "biases must be given");
  CHECK_ERR(emlx_dequantize(q, s, b, 32, 4, EMLX_QUANT_AFFINE) == NULL,
            "shape of scales does not match");
  CHECK_ERR(emlx_dequantize(q_i, s, b, 64, 4, EMLX_QUANT_AFFINE) == NULL, "uint32");
  CHECK_ERR(emlx_dequantize(q, s_u8, s_u8, 64, 4, EMLX_QUANT_AFFINE) == NULL,
            "float32, float16 or bfloat16");
  CHECK_ERR(emlx_dequantize(qf, sf, sf, 32, 4, EMLX_QUANT_MXFP4) == NULL, "biases must be NULL");
  CHECK_ERR(emlx_dequantize(qf, s, NULL, 32, 4, EMLX_QUANT_MXFP4) == NULL, "must be uint8");
  CHECK_ERR(emlx_dequantize(q, s, b, 64, 3, EMLX_QUANT_AFFINE) == NULL,
            "shape of scales does not match");
  CHECK_ERR(emlx_dequantize_to(q, s, b, 64, 4, EMLX_QUANT_AFFINE, EMLX_INT32) == NULL,
            "output dtype");

  emlx_array *x = zeros(EMLX_FLOAT32, 2, 128), *x_k = zeros(EMLX_FLOAT32, 2, 100);
  emlx_array *x_i = zeros(EMLX_INT32, 2, 128), *x_d = zeros(EMLX_FLOAT64, 2, 128);
  CHECK_ERR(emlx_quantized_matmul(x_k, q, s, b, true, 64, 4, EMLX_QUANT_AFFINE) == NULL,
            "last axis of x (100)");
  CHECK_ERR(emlx_quantized_matmul(x, q, s, b, false, 64, 4, EMLX_QUANT_AFFINE) == NULL,
            "transpose=false");
  CHECK_ERR(emlx_quantized_matmul(x_i, q, s, b, true, 64, 4, EMLX_QUANT_AFFINE) == NULL,
            "x must be float32");
  CHECK_ERR(emlx_quantized_matmul(x_d, q, s, b, true, 64, 4, EMLX_QUANT_AFFINE) == NULL,
            "(got float64)");
  CHECK_ERR(emlx_quantized_matmul(x, q, s_bad, s_bad, true, 64, 4, EMLX_QUANT_AFFINE) == NULL,
            "shape of scales does not match");
  CHECK_ERR(emlx_quantized_matmul(x, q, s, b, true, 64, 5, EMLX_QUANT_AFFINE) == NULL,
            "shape of scales does not match");
  CHECK_ERR(emlx_quantized_matmul(x, q, s, b, true, 64, 4, EMLX_QUANT_MXFP4) == NULL,
            "requires group size 32");
  CHECK_ERR(emlx_quantized_matmul(NULL, q, s, b, true, 64, 4, EMLX_QUANT_AFFINE) == NULL,
            "x is NULL");
  /* batch axes that do not broadcast */
  int64_t x3s[3] = {2, 2, 128}, w3s[3] = {3, 8, 128};
  emlx_array *x3 = emlx_zeros(x3s, 3, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *w3 = emlx_zeros(w3s, 3, EMLX_FLOAT32, EMLX_CPU), *q3, *s3, *b3;
  CHECK(emlx_quantize(w3, 64, 4, EMLX_QUANT_AFFINE, &q3, &s3, &b3) == 0);
  CHECK_ERR(emlx_quantized_matmul(x3, q3, s3, b3, true, 64, 4, EMLX_QUANT_AFFINE) == NULL,
            "broadcast");
  /* gather_qmm */
  int64_t n2 = 2;
  double iv[2] = {0, 1};
  emlx_array *fi = tu_make(EMLX_FLOAT32, &n2, 1, iv), *ii = tu_make(EMLX_INT32, &n2, 1, iv);
  CHECK_ERR(emlx_gather_qmm(x3, q3, s3, b3, NULL, fi, true, 64, 4, EMLX_QUANT_AFFINE, false) ==
                NULL,
            "rhs_indices must have an integer dtype");
  int64_t n3 = 3;
  double iv3[3] = {0, 1, 2};
  emlx_array *i3 = tu_make(EMLX_INT32, &n3, 1, iv3);
  CHECK_ERR(emlx_gather_qmm(x3, q3, s3, b3, ii, i3, true, 64, 4, EMLX_QUANT_AFFINE, false) == NULL,
            "broadcast");
  int64_t one = 128;
  emlx_array *x1 = emlx_zeros(&one, 1, EMLX_FLOAT32, EMLX_CPU);
  CHECK_ERR(emlx_gather_qmm(x1, q3, s3, b3, NULL, ii, true, 64, 4, EMLX_QUANT_AFFINE, false) ==
                NULL,
            "at least 2 dimensions");
  /* negative index: refused when evaluated */
  double neg[1] = {-1};
  int64_t n1 = 1;
  emlx_array *in = tu_make(EMLX_INT32, &n1, 1, neg);
  emlx_array *g = emlx_gather_qmm(x3, q3, s3, b3, in, ii, true, 64, 4, EMLX_QUANT_AFFINE, false);
  if (CHECK(g != NULL))
    CHECK_ERR(emlx_eval(&g, 1) != 0, "lhs_indices[0] = -1 is out of range");
  emlx_release(g);
  emlx_array *xs[] = {in,  x1,  i3,    fi,     ii,   x3,  w3, q3, s3, b3, x,  x_k,
                      x_i, x_d, s_bad, s_rows, s_u8, q_i, q,  s,  b,  qf, sf, w};
  for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++)
    emlx_release(xs[i]);
}

int main(void) {
  test_quantize_errors();
  test_dequantize_and_qmm_errors();
  return tu_finish();
}
