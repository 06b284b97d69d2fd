/* test_nx_types.c — Nx's f8 and sub-byte types (emlx/nx_types.h):
 *   - encoding against what Nx itself writes (nx_types_golden.h, made by
 *     scripts/gen_nx_types_golden.exs: every f8 value, the ties between
 *     neighbours and the doubles next to them, random and edge doubles; the
 *     integers -20..20 in each sub-byte type), from f64, f32 and f16;
 *   - decoding every one of the 256 codes of both f8 formats against values
 *     worked out here from the format definitions, and back (bit-exact, NaN
 *     codes included), as buffers and as arrays (moved through views, and
 *     through arithmetic, which gives Nx's NaN);
 *   - every sub-byte code at every position of a packed buffer, both ways,
 *     against a reference packer that goes one bit at a time;
 *   - the errors (dtypes, sizes, names, NULLs). */
#include "test_util.h"

#include "nx_types_golden.h"

#define NGOLD ((int64_t)(sizeof nx_f8_golden / sizeof nx_f8_golden[0]))

static double from_bits64(uint64_t b) {
  double x;
  memcpy(&x, &b, 8);
  return x;
}

/* The value of an f8 code from the format's definition (bias 15 / 7). */
static double ref_e5m2(unsigned c) {
  int s = c >> 7, e = (c >> 2) & 31, m = c & 3;
  double v;
  if (e == 31)
    v = m ? (double)NAN : (double)INFINITY;
  else
    v = e == 0 ? m / 4.0 * pow(2, -14) : (1 + m / 4.0) * pow(2, e - 15);
  return s ? -v : v;
}
static double ref_e4m3fn(unsigned c) {
  int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
  double v;
  if (e == 15 && m == 7)
    v = (double)NAN;
  else
    v = e == 0 ? m / 8.0 * pow(2, -6) : (1 + m / 8.0) * pow(2, e - 7);
  return s ? -v : v;
}

static void test_f8_encode_golden(void) {
  unsigned char *out = malloc((size_t)NGOLD);
  double *x = malloc((size_t)NGOLD * sizeof *x);
  float *xf = malloc((size_t)NGOLD * sizeof *xf);
  for (int64_t i = 0; i < NGOLD; i++)
    x[i] = from_bits64(nx_f8_golden[i].bits);
  for (int t = 0; t < 2; t++) {
    emlx_nx_type type = t ? EMLX_NX_F8_E4M3FN : EMLX_NX_F8_E5M2;
    /* f64 source, with Nx-on-this-OTP's treatment of -0.0 */
    unsigned flags = nx_f8_golden[0].e4m3fn == 0 ? EMLX_NX_NEG_ZERO_POSITIVE : 0;
    CHECK_OK(
        emlx_nx_encode(type, EMLX_FLOAT64, x, (size_t)NGOLD * 8, NGOLD, out, (size_t)NGOLD, flags));
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < NGOLD; i++) {
      unsigned want = t ? nx_f8_golden[i].e4m3fn : nx_f8_golden[i].e5m2;
      if (out[i] != want) {
        bad++;
        if (first < 0)
          first = i;
      }
    }
    CHECK_MSG(bad == 0, "%s from f64: %lld of %lld differ from Nx (first %.17g: 0x%02x vs 0x%02x)",
              emlx_nx_type_name(type), (long long)bad, (long long)NGOLD,
              first >= 0 ? x[first] : 0.0, first >= 0 ? out[first] : 0,
              first >= 0 ? (t ? nx_f8_golden[first].e4m3fn : nx_f8_golden[first].e5m2) : 0);
    /* f32 source: the entries that are floats */
    int64_t nf = 0;
    int64_t *idx = malloc((size_t)NGOLD * sizeof *idx);
    for (int64_t i = 0; i < NGOLD; i++)
      if ((double)(float)x[i] == x[i] && (float)x[i] != 0.0f) {
        idx[nf] = i;
        xf[nf++] = (float)x[i];
      }
    CHECK_OK(emlx_nx_encode(type, EMLX_FLOAT32, xf, (size_t)nf * 4, nf, out, (size_t)nf, flags));
    bad = 0;
    for (int64_t k = 0; k < nf; k++)
      bad += out[k] != (t ? nx_f8_golden[idx[k]].e4m3fn : nx_f8_golden[idx[k]].e5m2);
    CHECK_MSG(bad == 0 && nf > 500, "%s from f32: %lld of %lld differ from Nx",
              emlx_nx_type_name(type), (long long)bad, (long long)nf);
    free(idx);
    /* non-finite values */
    double nf3[3] = {NAN, INFINITY, -INFINITY};
    unsigned char o3[3];
    CHECK_OK(emlx_nx_encode(type, EMLX_FLOAT64, nf3, sizeof nf3, 3, o3, 3, 0));
    for (int k = 0; k < 3; k++)
      CHECK_EQ_I64(o3[k], nx_f8_nonfinite[t][k]);
    double negnan = -NAN;
    CHECK_OK(emlx_nx_encode(type, EMLX_FLOAT64, &negnan, 8, 1, o3, 1, 0));
    CHECK_EQ_I64(o3[0], nx_f8_nonfinite[t][0]);
  }
  /* -0.0: 0x80 by default (Nx on OTP 27+), 0x00 with the flag. */
  double nz = -0.0;
  unsigned char o;
  CHECK_OK(emlx_nx_encode(EMLX_NX_F8_E4M3FN, EMLX_FLOAT64, &nz, 8, 1, &o, 1, 0));
  CHECK_EQ_I64(o, 0x80);
  CHECK_OK(
      emlx_nx_encode(EMLX_NX_F8_E4M3FN, EMLX_FLOAT64, &nz, 8, 1, &o, 1, EMLX_NX_NEG_ZERO_POSITIVE));
  CHECK_EQ_I64(o, 0x00);
  CHECK_OK(emlx_nx_encode(EMLX_NX_F8_E5M2, EMLX_FLOAT64, &nz, 8, 1, &o, 1, 0));
  CHECK_EQ_I64(o, 0x80);
  free(out);
  free(x);
  free(xf);
}

/* f16 source: every finite f16 pattern encodes as its double value would
 * (E5M2 from f16 is the high byte; the golden covers the doubles). */
static void test_f8_encode_f16(void) {
  uint16_t *h = malloc(65536 * 2);
  double *d = malloc(65536 * sizeof *d);
  unsigned char *a = malloc(65536), *b = malloc(65536);
  int64_t n = 0;
  for (uint32_t p = 0; p < 65536; p++)
    if ((p & 0x7C00) != 0x7C00) {
      h[n] = (uint16_t)p;
      d[n++] = tu_f16_decode((uint16_t)p);
    }
  for (int t = 0; t < 2; t++) {
    emlx_nx_type type = t ? EMLX_NX_F8_E4M3FN : EMLX_NX_F8_E5M2;
    CHECK_OK(emlx_nx_encode(type, EMLX_FLOAT16, h, (size_t)n * 2, n, a, (size_t)n, 0));
    CHECK_OK(emlx_nx_encode(type, EMLX_FLOAT64, d, (size_t)n * 8, n, b, (size_t)n, 0));
    CHECK_MSG(memcmp(a, b, (size_t)n) == 0, "%s: f16 and f64 sources agree",
              emlx_nx_type_name(type));
    if (!t) {
      int64_t bad = 0;
      for (int64_t i = 0; i < n; i++)
        bad += a[i] != h[i] >> 8;
      CHECK_MSG(bad == 0, "e5m2 from f16 keeps the high byte (%lld differ)", (long long)bad);
    }
  }
  free(h);
  free(d);
  free(a);
  free(b);
}

static bool same_value(double got, double want) {
  if (isnan(want))
    return isnan(got);
  return got == want && signbit(got) == signbit(want);
}

static void test_f8_decode_roundtrip(void) {
  unsigned char codes[256], back[256];
  for (int c = 0; c < 256; c++)
    codes[c] = (unsigned char)c;
  const emlx_dtype wide[] = {EMLX_FLOAT16, EMLX_FLOAT32, EMLX_FLOAT64};
  for (int t = 0; t < 2; t++) {
    emlx_nx_type type = t ? EMLX_NX_F8_E4M3FN : EMLX_NX_F8_E5M2;
    for (int w = 0; w < 3; w++) {
      emlx_dtype d = wide[w];
      size_t es = emlx_dtype_size(d);
      unsigned char *buf = malloc(256 * es);
      CHECK_OK(emlx_nx_decode(type, codes, 256, 256, d, buf, 256 * es));
      int bad = 0;
      for (int c = 0; c < 256; c++) {
        double want = t ? ref_e4m3fn((unsigned)c) : ref_e5m2((unsigned)c);
        bad += !same_value(tu_load(buf + c * es, d), want);
      }
      CHECK_MSG(bad == 0, "%s -> %s: %d of 256 values wrong", emlx_nx_type_name(type),
                emlx_dtype_name(d), bad);
      memset(back, 0, sizeof back);
      CHECK_OK(emlx_nx_encode(type, d, buf, 256 * es, 256, back, 256, 0));
      CHECK_MSG(memcmp(back, codes, 256) == 0, "%s -> %s -> %s returns all 256 codes",
                emlx_nx_type_name(type), emlx_dtype_name(d), emlx_nx_type_name(type));
      free(buf);
    }
  }
}

/* Arrays: the round trip through the engine, through views, through math. */
static void test_f8_arrays(void) {
  unsigned char codes[256], back[256];
  for (int c = 0; c < 256; c++)
    codes[c] = (unsigned char)c;
  int64_t shape[2] = {16, 16};
  for (int t = 0; t < 2; t++) {
    emlx_nx_type type = t ? EMLX_NX_F8_E4M3FN : EMLX_NX_F8_E5M2;
    unsigned char nan_code = t ? 0x7F : 0x7E;
    for (int w = 0; w < 2; w++) {
      emlx_dtype d = w ? EMLX_FLOAT32 : EMLX_FLOAT16;
      emlx_array *a = emlx_from_nx_blob(codes, 256, type, shape, 2, d, EMLX_CPU);
      if (!CHECK_NOT_NULL(a))
        continue;
      CHECK(emlx_array_dtype(a) == d && emlx_ndim(a) == 2);
      CHECK_OK(emlx_to_nx_blob(a, type, back, 256, 0));
      CHECK_MSG(memcmp(back, codes, 256) == 0, "%s array round trip (%s)", emlx_nx_type_name(type),
                emlx_dtype_name(d));
      /* a transpose moves every code, NaN codes included */
      int axes[2] = {1, 0};
      emlx_array *tr = emlx_transpose(a, axes, 2);
      CHECK_OK(emlx_to_nx_blob(tr, type, back, 256, 0));
      int bad = 0;
      for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++)
          bad += back[i * 16 + j] != codes[j * 16 + i];
      CHECK_MSG(bad == 0, "%s transposed keeps the codes (%d differ)", emlx_nx_type_name(type),
                bad);
      /* arithmetic: a * 1 keeps the finite codes; NaNs become Nx's NaN */
      emlx_array *one = emlx_scalar_tensor(1.0, d, EMLX_CPU), *m = emlx_multiply(a, one);
      CHECK_OK(emlx_to_nx_blob(m, type, back, 256, 0));
      bad = 0;
      for (int c = 0; c < 256; c++) {
        bool nan = t ? (c & 0x7F) == 0x7F : (c & 0x7C) == 0x7C && (c & 3);
        bad += back[c] != (nan ? nan_code : codes[c]);
      }
      CHECK_MSG(bad == 0, "%s * 1 gives the codes, and Nx's NaN for NaNs (%d differ)",
                emlx_nx_type_name(type), bad);
      emlx_release(m);
      emlx_release(one);
      emlx_release(tr);
      emlx_release(a);
    }
  }
}

/* ---- sub-byte ------------------------------------------------------------------ */

/* Reference packing: a string of bits, most significant first. */
static void ref_pack(const int64_t *v, int64_t n, int bits, unsigned char *out, size_t nbytes) {
  char bitstr[1024] = {0};
  for (int64_t i = 0; i < n; i++)
    for (int b = 0; b < bits; b++)
      bitstr[i * bits + b] = (char)((((uint64_t)v[i]) >> (bits - 1 - b)) & 1);
  for (size_t k = 0; k < nbytes; k++) {
    unsigned byte = 0;
    for (int b = 0; b < 8; b++)
      byte = byte << 1 | (unsigned)bitstr[k * 8 + (size_t)b];
    out[k] = (unsigned char)byte;
  }
}

static void test_sub_byte(void) {
  const emlx_nx_type types[4] = {EMLX_NX_S2, EMLX_NX_S4, EMLX_NX_U2, EMLX_NX_U4};
  /* Nx's own bytes for -20..20 */
  int64_t n = (int64_t)(sizeof nx_sub_ints / sizeof nx_sub_ints[0]);
  int64_t vals[64];
  for (int64_t i = 0; i < n; i++)
    vals[i] = nx_sub_ints[i];
  const emlx_dtype srcs[] = {EMLX_INT8, EMLX_INT32, EMLX_INT64, EMLX_UINT16};
  for (int t = 0; t < 4; t++) {
    size_t nb = emlx_nx_type_nbytes(types[t], n);
    CHECK_EQ_U64(nb, (uint64_t)(n * emlx_nx_type_bits(types[t]) + 7) / 8);
    for (int s = 0; s < 4; s++) {
      size_t es = emlx_dtype_size(srcs[s]);
      unsigned char src[64 * 8], out[32];
      for (int64_t i = 0; i < n; i++)
        memcpy(src + i * (int64_t)es, &vals[i], es); /* low bytes: two's complement */
      CHECK_OK(emlx_nx_encode(types[t], srcs[s], src, (size_t)n * es, n, out, nb, 0));
      CHECK_MSG(memcmp(out, nx_sub_golden[t], nb) == 0, "%s from %s matches Nx's bytes",
                emlx_nx_type_name(types[t]), emlx_dtype_name(srcs[s]));
    }
  }
  /* every code at every position (n = 1..9 covers partial last bytes) */
  for (int t = 0; t < 4; t++) {
    int bits = emlx_nx_type_bits(types[t]);
    bool sgn = types[t] == EMLX_NX_S2 || types[t] == EMLX_NX_S4;
    int ncodes = 1 << bits;
    for (int64_t len = 0; len <= 9; len++) {
      for (int shift = 0; shift < ncodes; shift++) {
        int64_t v[16];
        for (int64_t i = 0; i < len; i++) {
          int code = (int)((i + shift) % ncodes);
          v[i] = sgn && code >= ncodes / 2 ? code - ncodes : code;
        }
        size_t nb = emlx_nx_type_nbytes(types[t], len);
        unsigned char want[8] = {0}, got[8], packed_in[8];
        ref_pack(v, len, bits, want, nb);
        int64_t wide[16];
        CHECK_OK(emlx_nx_encode(types[t], EMLX_INT64, v, (size_t)len * 8, len, got, nb, 0));
        if (!CHECK_MSG(memcmp(got, want, nb) == 0, "%s encode of %lld elements",
                       emlx_nx_type_name(types[t]), (long long)len))
          return;
        /* decoding ignores the padding bits: set them */
        memcpy(packed_in, want, nb);
        if (nb && (len * bits) % 8)
          packed_in[nb - 1] |= (unsigned char)(0xFF >> ((len * bits) % 8));
        CHECK_OK(emlx_nx_decode(types[t], packed_in, nb, len, EMLX_INT64, wide, (size_t)len * 8));
        bool ok = true;
        for (int64_t i = 0; i < len; i++)
          ok = ok && wide[i] == v[i];
        if (!CHECK_MSG(ok, "%s decode of %lld elements", emlx_nx_type_name(types[t]),
                       (long long)len))
          return;
        int8_t w8[16];
        CHECK_OK(emlx_nx_decode(types[t], want, nb, len, EMLX_INT8, w8, (size_t)len));
        for (int64_t i = 0; i < len; i++)
          ok = ok && w8[i] == v[i];
        CHECK(ok);
      }
    }
  }
  /* arrays: u4 into u8 storage, add in u8 (wraps), re-encode keeps the low bits as Nx does */
  unsigned char packed[2] = {0x1F, 0xE7}; /* 1, 15, 14, 7 */
  int64_t shape[1] = {4};
  emlx_array *a = emlx_from_nx_blob(packed, 2, EMLX_NX_U4, shape, 1, EMLX_UINT8, EMLX_CPU);
  if (CHECK_NOT_NULL(a)) {
    double *got = tu_read(a);
    double want[4] = {1, 15, 14, 7};
    CHECK(got && tu_check_values_at(got, want, 4, EMLX_UINT8, 0, "u4 decoded", __FILE__, __LINE__));
    free(got);
    emlx_array *three = emlx_scalar_tensor_int(3, EMLX_UINT8, EMLX_CPU), *s = emlx_add(a, three);
    unsigned char out[2];
    CHECK_OK(emlx_to_nx_blob(s, EMLX_NX_U4, out, 2, 0));
    CHECK_EQ_I64(out[0], 0x42); /* 4, 18 & 15 = 2 */
    CHECK_EQ_I64(out[1], 0x1A); /* 17 & 15 = 1, 10 */
    emlx_release(s);
    emlx_release(three);
    emlx_release(a);
  }
}

static void test_errors(void) {
  unsigned char b[4] = {0};
  double d[4] = {0};
  emlx_nx_type t;
  CHECK_OK(emlx_nx_type_from_name("f8_e4m3fn", &t));
  CHECK(t == EMLX_NX_F8_E4M3FN);
  CHECK_FAILS(emlx_nx_type_from_name("f4", &t));
  CHECK_FAILS(emlx_nx_type_from_name(NULL, &t));
  CHECK_EQ_STR(emlx_nx_type_name((emlx_nx_type)99), "invalid");
  CHECK_EQ_I64(emlx_nx_type_nbytes((emlx_nx_type)99, 4), 0);
  CHECK_EQ_I64(emlx_nx_type_nbytes(EMLX_NX_S4, -1), 0);
  CHECK_EQ_I64(emlx_nx_type_nbytes(EMLX_NX_S4, 3), 2);
  /* dtypes */
  CHECK_FAILS(emlx_nx_decode(EMLX_NX_F8_E5M2, b, 4, 4, EMLX_INT32, d, 16));
  CHECK_FAILS(emlx_nx_decode(EMLX_NX_F8_E5M2, b, 4, 4, EMLX_BFLOAT16, d, 8));
  CHECK_FAILS(emlx_nx_decode(EMLX_NX_S4, b, 2, 4, EMLX_UINT8, d, 4)); /* negatives */
  CHECK_FAILS(emlx_nx_decode(EMLX_NX_U4, b, 2, 4, EMLX_FLOAT32, d, 16));
  CHECK_FAILS(emlx_nx_encode(EMLX_NX_F8_E4M3FN, EMLX_INT32, d, 16, 4, b, 4, 0));
  CHECK_FAILS(emlx_nx_encode(EMLX_NX_F8_E4M3FN, EMLX_COMPLEX64, d, 32, 4, b, 4, 0));
  CHECK_FAILS(emlx_nx_encode(EMLX_NX_S2, EMLX_FLOAT32, d, 16, 4, b, 1, 0));
  CHECK_FAILS(emlx_nx_encode(EMLX_NX_S2, EMLX_BOOL, d, 4, 4, b, 1, 0));
  CHECK_FAILS(emlx_nx_encode((emlx_nx_type)-1, EMLX_INT8, d, 4, 4, b, 4, 0));
  CHECK_FAILS(emlx_nx_decode(EMLX_NX_S4, b, 2, 4, (emlx_dtype)77, d, 4));
  /* sizes */
  CHECK_FAILS(emlx_nx_decode(EMLX_NX_F8_E5M2, b, 3, 4, EMLX_FLOAT32, d, 16));
  CHECK_FAILS(emlx_nx_decode(EMLX_NX_F8_E5M2, b, 4, 4, EMLX_FLOAT32, d, 12));
  CHECK_FAILS(emlx_nx_decode(EMLX_NX_S4, b, 3, 4, EMLX_INT8, d, 4));
  CHECK_FAILS(emlx_nx_encode(EMLX_NX_U2, EMLX_INT8, d, 5, 5, b, 1, 0));
  CHECK_FAILS(emlx_nx_encode(EMLX_NX_U2, EMLX_INT8, d, 4, -4, b, 1, 0));
  CHECK_FAILS(emlx_nx_encode(EMLX_NX_U2, EMLX_INT8, NULL, 4, 4, b, 1, 0));
  CHECK_OK(emlx_nx_encode(EMLX_NX_U2, EMLX_INT8, NULL, 0, 0, NULL, 0, 0)); /* empty is fine */
  /* arrays */
  int64_t shape[2] = {2, 2}, neg[1] = {-1};
  CHECK_NULL_ERR(emlx_from_nx_blob(b, 3, EMLX_NX_F8_E5M2, shape, 2, EMLX_FLOAT16, EMLX_CPU));
  CHECK_NULL_ERR(emlx_from_nx_blob(b, 4, EMLX_NX_F8_E5M2, neg, 1, EMLX_FLOAT16, EMLX_CPU));
  CHECK_NULL_ERR(emlx_from_nx_blob(b, 4, EMLX_NX_F8_E5M2, shape, -1, EMLX_FLOAT16, EMLX_CPU));
  CHECK_NULL_ERR(emlx_from_nx_blob(b, 4, EMLX_NX_F8_E5M2, shape, 2, EMLX_INT8, EMLX_CPU));
  CHECK_FAILS(emlx_to_nx_blob(NULL, EMLX_NX_S4, b, 1, 0));
  emlx_array *a = emlx_from_nx_blob(b, 4, EMLX_NX_F8_E5M2, shape, 2, EMLX_FLOAT32, EMLX_CPU);
  CHECK_FAILS(emlx_to_nx_blob(a, EMLX_NX_F8_E5M2, b, 3, 0));
  CHECK_FAILS(emlx_to_nx_blob(a, EMLX_NX_S4, b, 2, 0)); /* a float array into s4 */
  emlx_release(a);
  emlx_array *empty =
      emlx_from_nx_blob(NULL, 0, EMLX_NX_S4, (int64_t[]){0}, 1, EMLX_INT8, EMLX_CPU);
  CHECK(empty && emlx_size(empty) == 0);
  emlx_release(empty);
}

int main(void) {
  test_f8_encode_golden();
  test_f8_encode_f16();
  test_f8_decode_roundtrip();
  test_f8_arrays();
  test_sub_byte();
  test_errors();
  return tu_finish();
}
