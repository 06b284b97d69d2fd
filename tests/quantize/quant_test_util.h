/* quant_test_util.h — helpers shared by the quantize tests: an independent
 * decoder of MLX's quantized formats (written from the format definitions,
 * not from the library's code) and an f64 dequantize-then-matmul reference. */
#ifndef EMLX_QUANT_TEST_UTIL_H
#define EMLX_QUANT_TEST_UTIL_H

#include "test_util.h"

/* e2m1: sign, 2 exponent bits (bias 1), 1 mantissa bit; exponent 0 is
 * subnormal (0 or 0.5). */
static inline double qt_e2m1(unsigned c) {
  unsigned e = (c >> 1) & 3u, m = c & 1u;
  double v = e == 0 ? 0.5 * m : ldexp(1.0 + 0.5 * m, (int)e - 1);
  return (c & 8u) ? -v : v;
}

/* e4m3 (OCP fn, as MLX reads it: 0x7F is 480, not NaN): bias 7. */
static inline double qt_e4m3(unsigned c) {
  unsigned e = (c >> 3) & 15u, m = c & 7u;
  double v = e == 0 ? ldexp(m / 8.0, -6) : ldexp(1.0 + m / 8.0, (int)e - 7);
  return (c & 128u) ? -v : v;
}

/* e8m0 as MLX's kernels read it: 2^(s-127); 255 gives Inf. */
static inline double qt_e8m0(unsigned s) {
  return s == 255 ? (double)INFINITY : ldexp(1.0, (int)s - 127);
}

/* Code i of a row of packed words: bits [i*bits, (i+1)*bits) of the row read
 * as one little-endian integer. */
static inline unsigned qt_code(const uint32_t *row, int64_t i, int bits) {
  unsigned v = 0;
  for (int b = 0; b < bits; b++) {
    int64_t bit = i * bits + b;
    v |= ((row[bit / 32] >> (bit % 32)) & 1u) << b;
  }
  return v;
}

/* Logical element (r, c) of a quantized matrix of `cols` values a row, as a
 * double. scales / biases are given as doubles (affine) or raw bytes (mx/nv:
 * sbytes). mode: 0 affine, 1 mxfp4, 2 mxfp8, 3 nvfp4. */
static inline double qt_value(const uint32_t *w, const double *scales, const double *biases,
                              const uint8_t *sbytes, int64_t r, int64_t c, int64_t cols, int gs,
                              int bits, int mode) {
  const uint32_t *row = w + r * (cols * bits / 32);
  unsigned q = qt_code(row, c, bits);
  int64_t g = r * (cols / gs) + c / gs;
  switch (mode) {
  case 0:
    return scales[g] * q + biases[g];
  case 1:
    return qt_e2m1(q) * qt_e8m0(sbytes[g]);
  case 2:
    return qt_e4m3(q) * qt_e8m0(sbytes[g]);
  default:
    return qt_e2m1(q) * qt_e4m3(sbytes[g]);
  }
}

#endif
