/* test_ops_astype.c — astype between every pair of the 14 dtypes, and the
 * conversion rules against hand-derived references: float -> int truncates
 * toward zero and saturates (NaN -> 0), anything -> bool is "!= 0" (NaN is
 * true), integer narrowing wraps, u64/s64 <-> floats at the extremes,
 * f64 -> f32 rounding and overflow, complex -> real keeps the real part;
 * invalid dtypes and NULL inputs fail. (f32 <-> f16/bf16 bit-exactness is in
 * test_dtype.c.) */
#include "test_util.h"

/* ---- astype -------------------------------------------------------------------------- */

static void test_astype(void) {
  /* every pair, on values every dtype holds exactly */
  double v[6] = {0, 1, 2, 3, 100, 127};
  int64_t n = 6;
  for (int s = 0; s < EMLX_DTYPE_COUNT; s++)
    for (int t = 0; t < EMLX_DTYPE_COUNT; t++) {
      emlx_dtype ds = tu_all_dtypes[s], dt = tu_all_dtypes[t];
      emlx_array *a = tu_make1(ds, 6, v), *c = emlx_astype(a, dt);
      double ref[6];
      for (int i = 0; i < 6; i++)
        ref[i] = tu_quant(dt, tu_quant(ds, v[i]));
      char what[64];
      snprintf(what, sizeof what, "astype %s -> %s", tu_dname(ds), tu_dname(dt));
      tu_check_array(c, dt, &n, 1, ref, 0, what);
      emlx_release(a), emlx_release(c);
    }
  /* float -> int: truncation toward zero, saturation, NaN -> 0 */
  double fv[9] = {2.7, -2.7, 1e10, -1e10, NAN, INFINITY, -INFINITY, 2147483520.0, -2147483648.0};
  double w32[9] = {2, -2, INT32_MAX, INT32_MIN, 0, INT32_MAX, INT32_MIN, 2147483520.0, INT32_MIN};
  int64_t n9 = 9;
  emlx_array *a = tu_make1(EMLX_FLOAT32, 9, fv), *c = emlx_astype(a, EMLX_INT32);
  tu_check_array(c, EMLX_INT32, &n9, 1, w32, 0, "f32 -> s32 truncates and saturates");
  emlx_release(c);
  double wu8[9] = {2, 0, 255, 0, 0, 255, 0, 255, 0};
  c = emlx_astype(a, EMLX_UINT8);
  tu_check_array(c, EMLX_UINT8, &n9, 1, wu8, 0, "f32 -> u8 saturates");
  emlx_release(c);
  double wb[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  c = emlx_astype(a, EMLX_BOOL);
  tu_check_array(c, EMLX_BOOL, &n9, 1, wb, 0, "f32 -> bool is != 0 (NaN is true)");
  emlx_release(c), emlx_release(a);
  double zv[3] = {0, -0.0, 0.5};
  double wz[3] = {0, 0, 1};
  int64_t n3 = 3;
  a = tu_make1(EMLX_FLOAT16, 3, zv), c = emlx_astype(a, EMLX_BOOL);
  tu_check_array(c, EMLX_BOOL, &n3, 1, wz, 0, "f16 -> bool");
  emlx_release(a), emlx_release(c);
  double hv[3] = {200, -200, -3.5}, wh[3] = {127, -128, -3};
  a = tu_make1(EMLX_FLOAT16, 3, hv), c = emlx_astype(a, EMLX_INT8);
  tu_check_array(c, EMLX_INT8, &n3, 1, wh, 0, "f16 -> s8 saturates");
  emlx_release(a), emlx_release(c);
  /* f64 -> 64-bit integers, compared bit for bit */
  double dv[4] = {1e19, -1e19, 9.2e18, NAN};
  int64_t w64[4] = {INT64_MAX, INT64_MIN, INT64_C(9200000000000000000), 0};
  uint64_t wu64[4] = {UINT64_C(10000000000000000000), 0, UINT64_C(9200000000000000000), 0};
  int64_t n4 = 4;
  a = tu_make1(EMLX_FLOAT64, 4, dv);
  c = emlx_astype(a, EMLX_INT64);
  unsigned char *raw = tu_read_raw(c);
  CHECK_MSG(raw && memcmp(raw, w64, 32) == 0, "f64 -> s64 saturates");
  free(raw), emlx_release(c);
  c = emlx_astype(a, EMLX_UINT64);
  raw = tu_read_raw(c);
  CHECK_MSG(raw && memcmp(raw, wu64, 32) == 0, "f64 -> u64 (negative saturates to 0)");
  free(raw), emlx_release(c), emlx_release(a);
  /* integer narrowing wraps */
  int32_t iv[4] = {300, -1, 200, -129};
  emlx_array *ia = emlx_from_blob(iv, EMLX_INT32, &n4, 1, EMLX_CPU);
  double wn8[4] = {44, 255, 200, 127}, ws8[4] = {44, -1, -56, 127};
  c = emlx_astype(ia, EMLX_UINT8);
  tu_check_array(c, EMLX_UINT8, &n4, 1, wn8, 0, "s32 -> u8 wraps");
  emlx_release(c);
  c = emlx_astype(ia, EMLX_INT8);
  tu_check_array(c, EMLX_INT8, &n4, 1, ws8, 0, "s32 -> s8 wraps");
  emlx_release(c);
  c = emlx_astype(ia, EMLX_UINT32);
  double wu32[4] = {300, 4294967295.0, 200, 4294967167.0};
  tu_check_array(c, EMLX_UINT32, &n4, 1, wu32, 0, "s32 -> u32 wraps");
  emlx_release(c), emlx_release(ia);
  uint64_t uv[2] = {UINT64_MAX, (UINT64_C(1) << 63) + 2048};
  int64_t n2 = 2;
  emlx_array *ua = emlx_from_blob(uv, EMLX_UINT64, &n2, 1, EMLX_CPU);
  c = emlx_astype(ua, EMLX_INT64);
  raw = tu_read_raw(c);
  int64_t ws64[2] = {-1, INT64_MIN + 2048};
  CHECK_MSG(raw && memcmp(raw, ws64, 16) == 0, "u64 -> s64 wraps");
  free(raw), emlx_release(c);
  c = emlx_astype(ua, EMLX_FLOAT64);
  double wf64[2] = {0x1p64, 0x1p63 + 2048};
  tu_check_array(c, EMLX_FLOAT64, &n2, 1, wf64, 0, "u64 -> f64");
  emlx_release(c);
  c = emlx_astype(ua, EMLX_FLOAT32);
  double wf32[2] = {0x1p64, 0x1p63};
  tu_check_array(c, EMLX_FLOAT32, &n2, 1, wf32, 0, "u64 -> f32");
  emlx_release(c), emlx_release(ua);
  int64_t sv[2] = {INT64_MIN, INT64_MAX};
  emlx_array *sa = emlx_from_blob(sv, EMLX_INT64, &n2, 1, EMLX_CPU);
  c = emlx_astype(sa, EMLX_FLOAT64);
  double wsf[2] = {-0x1p63, 0x1p63};
  tu_check_array(c, EMLX_FLOAT64, &n2, 1, wsf, 0, "s64 -> f64");
  emlx_release(c);
  c = emlx_astype(sa, EMLX_UINT64);
  raw = tu_read_raw(c);
  uint64_t wsu[2] = {UINT64_C(1) << 63, (UINT64_C(1) << 63) - 1};
  CHECK_MSG(raw && memcmp(raw, wsu, 16) == 0, "s64 -> u64 wraps");
  free(raw), emlx_release(c), emlx_release(sa);
  /* f64 -> f32 rounds and overflows */
  double ff[4] = {0.1, 1e300, 1e-50, -1e300}, wff[4] = {0.1, INFINITY, 0, -INFINITY};
  a = tu_make1(EMLX_FLOAT64, 4, ff), c = emlx_astype(a, EMLX_FLOAT32);
  tu_check_array(c, EMLX_FLOAT32, &n4, 1, wff, 0, "f64 -> f32");
  emlx_release(a), emlx_release(c);
  /* complex -> real keeps the real part */
  float cv[4] = {2.7f, 5, -3.9f, -1};
  emlx_array *ca = emlx_from_blob(cv, EMLX_COMPLEX64, &n2, 1, EMLX_CPU);
  c = emlx_astype(ca, EMLX_INT32);
  double wci[2] = {2, -3};
  tu_check_array(c, EMLX_INT32, &n2, 1, wci, 0, "c64 -> s32");
  emlx_release(c);
  c = emlx_astype(ca, EMLX_FLOAT16);
  double wch[2] = {(double)2.7f, (double)-3.9f};
  tu_check_array(c, EMLX_FLOAT16, &n2, 1, wch, 0, "c64 -> f16");
  emlx_release(c), emlx_release(ca);
  /* errors */
  a = tu_make1(EMLX_FLOAT32, 3, zv);
  CHECK_NULL_ERR(emlx_astype(a, EMLX_DTYPE_COUNT));
  CHECK_NULL_ERR(emlx_astype(a, (emlx_dtype)-2));
  CHECK_NULL_ERR(emlx_astype(NULL, EMLX_FLOAT32));
  emlx_release(a);
}

/* The saturating float -> integer rule, written out per destination. */
static void sat_store(unsigned char *p, emlx_dtype d, double x) {
  if (d == EMLX_BOOL) {
    p[0] = x != 0 || isnan(x); /* NaN is "!= 0" */
    return;
  }
  double t = isnan(x) ? 0.0 : trunc(x);
  switch (d) {
  case EMLX_UINT8: {
    uint8_t v = t <= 0 ? 0 : t >= 255 ? 255 : (uint8_t)t;
    memcpy(p, &v, 1);
    break;
  }
  case EMLX_INT8: {
    int8_t v = t <= -128 ? -128 : t >= 127 ? 127 : (int8_t)t;
    memcpy(p, &v, 1);
    break;
  }
  case EMLX_UINT16: {
    uint16_t v = t <= 0 ? 0 : t >= 65535 ? 65535 : (uint16_t)t;
    memcpy(p, &v, 2);
    break;
  }
  case EMLX_INT16: {
    int16_t v = t <= -32768 ? -32768 : t >= 32767 ? 32767 : (int16_t)t;
    memcpy(p, &v, 2);
    break;
  }
  case EMLX_UINT32: {
    uint32_t v = t <= 0 ? 0 : t >= 4294967295.0 ? UINT32_MAX : (uint32_t)t;
    memcpy(p, &v, 4);
    break;
  }
  case EMLX_INT32: {
    int32_t v = t <= -2147483648.0 ? INT32_MIN : t >= 2147483647.0 ? INT32_MAX : (int32_t)t;
    memcpy(p, &v, 4);
    break;
  }
  case EMLX_UINT64: {
    uint64_t v = t <= 0 ? 0 : t >= 0x1p64 ? UINT64_MAX : (uint64_t)t;
    memcpy(p, &v, 8);
    break;
  }
  case EMLX_INT64: {
    int64_t v = t < -0x1p63 ? INT64_MIN : t >= 0x1p63 ? INT64_MAX : (int64_t)t;
    memcpy(p, &v, 8);
    break;
  }
  default:
    break;
  }
}

/* Every f16 and every bf16 value (NaN, inf, subnormals included) to every
 * integer dtype and bool, bit for bit. */
static void test_exhaustive_to_int(void) {
  static const emlx_dtype dst[9] = {EMLX_BOOL,   EMLX_UINT8, EMLX_INT8,   EMLX_UINT16, EMLX_INT16,
                                    EMLX_UINT32, EMLX_INT32, EMLX_UINT64, EMLX_INT64};
  int64_t n = 65536;
  uint16_t *bits = malloc(65536 * 2);
  unsigned char *want = malloc(65536 * 8);
  for (int i = 0; i < 65536; i++)
    bits[i] = (uint16_t)i;
  for (int src = 0; src < 2; src++) {
    emlx_dtype sd = src ? EMLX_BFLOAT16 : EMLX_FLOAT16;
    emlx_array *a = emlx_from_blob(bits, sd, &n, 1, EMLX_CPU);
    for (int k = 0; k < 9; k++) {
      size_t w = tu_dsize(dst[k]);
      for (int i = 0; i < 65536; i++)
        sat_store(want + (size_t)i * w, dst[k],
                  src ? tu_bf16_decode(bits[i]) : tu_f16_decode(bits[i]));
      emlx_array *c = emlx_astype(a, dst[k]);
      unsigned char *raw = tu_read_raw(c);
      int64_t bad = 0, first = -1;
      for (int64_t i = 0; raw && i < n; i++)
        if (memcmp(raw + i * (int64_t)w, want + i * (int64_t)w, w) != 0 && bad++ == 0)
          first = i;
      CHECK_MSG(raw && bad == 0,
                "astype %s -> %s, all 65536 values: %" PRId64 " wrong (first: 0x%04" PRIx64 ")",
                tu_dname(sd), tu_dname(dst[k]), bad, first);
      free(raw);
      emlx_release(c);
    }
    emlx_release(a);
  }
  free(bits), free(want);
}

int main(void) {
  tu_run_isa_variants();
  test_astype();
  test_exhaustive_to_int();
  return tu_finish();
}
