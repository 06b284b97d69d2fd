/* test_ops_create.c — creation ops in every dtype: scalar_tensor (and its
 * exact integer and complex variants), full, full_array, ones, zeros, arange,
 * eye; empty and 0-d shapes; and their error cases (bad shapes, dtypes,
 * devices, steps, NULL). */
#include "test_util.h"

static void test_scalars(void) {
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_dtype d = tu_all_dtypes[di];
    emlx_array *s = emlx_scalar_tensor(3.0, d, EMLX_CPU);
    if (!CHECK_MSG(s != NULL, "scalar_tensor %s", tu_dname(d)))
      continue;
    CHECK(emlx_ndim(s) == 0 && emlx_size(s) == 1 && emlx_array_dtype(s) == d);
    double want = d == EMLX_BOOL ? 1.0 : 3.0, got = -1;
    CHECK_MSG(emlx_item_f64(s, &got) == 0 && got == want, "scalar_tensor(3, %s) = %g", tu_dname(d),
              got);
    emlx_release(s);
    /* a non-integral value: floats round, integers truncate */
    s = emlx_scalar_tensor(-2.7, d, EMLX_CPU);
    double ref = tu_is_float(d) || emlx_dtype_is_complex(d) ? tu_quant(d, -2.7)
                 : d == EMLX_BOOL                      ? 1.0
                                                       : -2.0;
    if (!(d >= EMLX_UINT8 && d <= EMLX_UINT64)) { /* -2.7 is out of range for unsigned */
      got = 0;
      CHECK_MSG(emlx_item_f64(s, &got) == 0 && got == ref, "scalar_tensor(-2.7, %s) = %.9g",
                tu_dname(d), got);
    }
    emlx_release(s);
  }
  /* rounding of doubles into the narrow floats, and overflow */
  double got = 0;
  emlx_array *s = emlx_scalar_tensor(1.0 / 3.0, EMLX_FLOAT16, EMLX_CPU);
  CHECK(emlx_item_f64(s, &got) == 0 && got == tu_f16_decode(tu_round_f16(1.0 / 3.0)));
  emlx_release(s);
  s = emlx_scalar_tensor(1.0 / 3.0, EMLX_BFLOAT16, EMLX_CPU);
  CHECK(emlx_item_f64(s, &got) == 0 && got == tu_bf16_decode(tu_round_bf16(1.0 / 3.0)));
  emlx_release(s);
  s = emlx_scalar_tensor(1e6, EMLX_FLOAT16, EMLX_CPU);
  CHECK(emlx_item_f64(s, &got) == 0 && isinf(got) && got > 0);
  emlx_release(s);
  s = emlx_scalar_tensor((double)NAN, EMLX_BFLOAT16, EMLX_CPU);
  CHECK(emlx_item_f64(s, &got) == 0 && isnan(got));
  emlx_release(s);
  s = emlx_scalar_tensor(-0.0, EMLX_FLOAT32, EMLX_CPU);
  CHECK(emlx_item_f64(s, &got) == 0 && got == 0 && signbit(got));
  emlx_release(s);
  s = emlx_scalar_tensor(0.1, EMLX_FLOAT64, EMLX_CPU);
  CHECK(emlx_item_f64(s, &got) == 0 && got == 0.1);
  emlx_release(s);

  /* exact integers */
  struct {
    int64_t v;
    emlx_dtype d;
  } cases[] = {
      {INT64_MAX, EMLX_INT64},   {INT64_MIN, EMLX_INT64}, {(INT64_C(1) << 53) + 1, EMLX_INT64},
      {-128, EMLX_INT8},         {32767, EMLX_INT16},     {INT32_MIN, EMLX_INT32},
      {4294967295, EMLX_UINT32}, {65535, EMLX_UINT16},    {255, EMLX_UINT8}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    emlx_array *t = emlx_scalar_tensor_int(cases[i].v, cases[i].d, EMLX_CPU);
    int64_t gi = 0;
    CHECK_MSG(
        t && emlx_array_dtype(t) == cases[i].d && emlx_item_i64(t, &gi) == 0 && gi == cases[i].v,
        "scalar_tensor_int(%" PRId64 ", %s) = %" PRId64, cases[i].v, tu_dname(cases[i].d), gi);
    emlx_release(t);
  }
  emlx_array *u = emlx_scalar_tensor_int(-1, EMLX_UINT64, EMLX_CPU);
  unsigned char *raw = tu_read_raw(u);
  uint64_t uv = 0;
  if (raw)
    memcpy(&uv, raw, 8);
  CHECK_EQ_U64(uv, UINT64_MAX);
  free(raw), emlx_release(u);
  u = emlx_scalar_tensor_int(INT64_MIN + 7, EMLX_UINT64, EMLX_CPU); /* 2^63 + 7 */
  raw = tu_read_raw(u);
  if (raw)
    memcpy(&uv, raw, 8);
  CHECK_EQ_U64(uv, (UINT64_C(1) << 63) + 7);
  free(raw), emlx_release(u);
  emlx_array *f = emlx_scalar_tensor_int((INT64_C(1) << 24) + 1, EMLX_FLOAT32, EMLX_CPU);
  CHECK(f && emlx_item_f64(f, &got) == 0 && got == 16777216.0);
  emlx_release(f);

  emlx_array *c = emlx_scalar_tensor_complex(1.25f, -3.5f, EMLX_CPU);
  raw = tu_read_raw(c);
  float cv[2] = {0, 0};
  if (raw)
    memcpy(cv, raw, 8);
  CHECK(c && emlx_array_dtype(c) == EMLX_COMPLEX64 && cv[0] == 1.25f && cv[1] == -3.5f);
  free(raw), emlx_release(c);

  CHECK_NULL_ERR(emlx_scalar_tensor(1, EMLX_DTYPE_COUNT, EMLX_CPU));
  CHECK_NULL_ERR(emlx_scalar_tensor(1, EMLX_FLOAT32, EMLX_DEVICE_COUNT));
  CHECK_NULL_ERR(emlx_scalar_tensor_int(1, (emlx_dtype)-1, EMLX_CPU));
  CHECK_NULL_ERR(emlx_scalar_tensor_complex(1, 1, (emlx_device)7));
}

static void test_full_ones_zeros(void) {
  int64_t shape[3] = {2, 3, 5};
  double ref[30];
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_dtype d = tu_all_dtypes[di];
    char what[64];
    emlx_array *o = emlx_ones(shape, 3, d, EMLX_CPU), *z = emlx_zeros(shape, 3, d, EMLX_CPU);
    for (int i = 0; i < 30; i++)
      ref[i] = 1;
    snprintf(what, sizeof what, "ones %s", tu_dname(d));
    tu_check_array(o, d, shape, 3, ref, 0, what);
    for (int i = 0; i < 30; i++)
      ref[i] = 0;
    snprintf(what, sizeof what, "zeros %s", tu_dname(d));
    tu_check_array(z, d, shape, 3, ref, 0, what);
    emlx_array *f = emlx_full(shape, 3, 2.75, d, EMLX_CPU);
    double fv = tu_is_float(d) || emlx_dtype_is_complex(d) ? 2.75 : d == EMLX_BOOL ? 1 : 2;
    for (int i = 0; i < 30; i++)
      ref[i] = fv;
    snprintf(what, sizeof what, "full 2.75 %s", tu_dname(d));
    tu_check_array(f, d, shape, 3, ref, 0, what);
    /* 0-d and empty */
    emlx_array *f0 = emlx_full(NULL, 0, 2.75, d, EMLX_CPU);
    snprintf(what, sizeof what, "0-d full %s", tu_dname(d));
    tu_check_array(f0, d, NULL, 0, ref, 0, what);
    int64_t es[2] = {0, 4};
    emlx_array *fe = emlx_full(es, 2, 1.0, d, EMLX_CPU);
    snprintf(what, sizeof what, "empty full %s", tu_dname(d));
    tu_check_array(fe, d, es, 2, ref, 0, what);
    emlx_release(o), emlx_release(z), emlx_release(f), emlx_release(f0), emlx_release(fe);
  }
  /* complex full has a zero imaginary part; floats keep NaN/Inf */
  emlx_array *c = emlx_full(shape, 1, -1.5, EMLX_COMPLEX64, EMLX_CPU);
  unsigned char *raw = tu_read_raw(c);
  float want[4] = {-1.5f, 0.0f, -1.5f, 0.0f};
  CHECK(raw && memcmp(raw, want, 16) == 0);
  free(raw), emlx_release(c);
  emlx_array *fn = emlx_full(shape, 3, (double)NAN, EMLX_FLOAT16, EMLX_CPU);
  double *g = tu_read(fn);
  bool allnan = g != NULL;
  for (int i = 0; g && i < 30; i++)
    allnan &= isnan(g[i]) != 0;
  CHECK_MSG(allnan, "full(NaN) in f16 is NaN everywhere");
  free(g), emlx_release(fn);
  emlx_array *fi = emlx_full(shape, 2, (double)-INFINITY, EMLX_BFLOAT16, EMLX_CPU);
  for (int i = 0; i < 6; i++)
    ref[i] = -INFINITY;
  tu_check_array(fi, EMLX_BFLOAT16, shape, 2, ref, 0, "full(-inf) bf16");
  emlx_release(fi);
  /* a bigger one (the kernel's parallel path) */
  int64_t big[2] = {1000, 1003};
  emlx_array *fb = emlx_full(big, 2, 0.5, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *sb = emlx_sum(fb, NULL, 0, false);
  double got = 0;
  CHECK(sb && emlx_item_f64(sb, &got) == 0 && got == 501500.0);
  emlx_release(fb), emlx_release(sb);

  /* errors */
  int64_t neg[2] = {3, -2}, many[EMLX_MAX_NDIM + 1];
  for (int i = 0; i <= EMLX_MAX_NDIM; i++)
    many[i] = 1;
  CHECK_NULL_ERR(emlx_full(neg, 2, 1, EMLX_FLOAT32, EMLX_CPU));
  CHECK_NULL_ERR(emlx_ones(neg, 2, EMLX_FLOAT32, EMLX_CPU));
  CHECK_NULL_ERR(emlx_zeros(neg, 2, EMLX_INT8, EMLX_CPU));
  CHECK_NULL_ERR(emlx_full(many, EMLX_MAX_NDIM + 1, 1, EMLX_FLOAT32, EMLX_CPU));
  CHECK_NULL_ERR(emlx_full(shape, -1, 1, EMLX_FLOAT32, EMLX_CPU));
  CHECK_NULL_ERR(emlx_full(NULL, 2, 1, EMLX_FLOAT32, EMLX_CPU));
  CHECK_NULL_ERR(emlx_ones(shape, 2, EMLX_DTYPE_COUNT, EMLX_CPU));
  CHECK_NULL_ERR(emlx_zeros(shape, 2, EMLX_FLOAT32, EMLX_DEVICE_COUNT));
}

static void test_full_array(void) {
  double v = 7.5;
  emlx_array *s = tu_make(EMLX_FLOAT64, NULL, 0, &v);
  int64_t sh[2] = {2, 3};
  emlx_array *f = emlx_full_array(sh, 2, s, EMLX_INT32);
  double ref[6] = {7, 7, 7, 7, 7, 7};
  tu_check_array(f, EMLX_INT32, sh, 2, ref, 0, "full_array(0-d 7.5) as int32");
  emlx_release(f);
  double row[3] = {1.5, -2, 4};
  emlx_array *r = tu_make1(EMLX_FLOAT32, 3, row);
  f = emlx_full_array(sh, 2, r, EMLX_FLOAT16);
  double ref2[6] = {1.5, -2, 4, 1.5, -2, 4};
  tu_check_array(f, EMLX_FLOAT16, sh, 2, ref2, 0, "full_array(row) broadcast to 2x3 f16");
  emlx_release(f);
  emlx_array *lazy = emlx_add(r, r);
  f = emlx_full_array(sh, 2, lazy, EMLX_FLOAT32);
  double ref3[6] = {3, -4, 8, 3, -4, 8};
  tu_check_array(f, EMLX_FLOAT32, sh, 2, ref3, 0, "full_array of a lazy value");
  emlx_release(f), emlx_release(lazy);
  int64_t bad[2] = {2, 4}, neg[2] = {-1, 3};
  CHECK_NULL_ERR(emlx_full_array(bad, 2, r, EMLX_FLOAT32));
  CHECK_NULL_ERR(emlx_full_array(neg, 2, r, EMLX_FLOAT32));
  CHECK_NULL_ERR(emlx_full_array(sh, 2, NULL, EMLX_FLOAT32));
  CHECK_NULL_ERR(emlx_full_array(sh, 2, r, EMLX_DTYPE_COUNT));
  CHECK_NULL_ERR(emlx_full_array(sh, 0, r, EMLX_FLOAT32)); /* {3} into a 0-d shape */
  emlx_release(s), emlx_release(r);
}

static void check_arange(double start, double stop, double step, emlx_dtype d, int64_t want_n,
                         const char *what) {
  emlx_array *a = emlx_arange(start, stop, step, d, EMLX_CPU);
  double *ref = malloc((size_t)(want_n > 0 ? want_n : 1) * sizeof(double));
  for (int64_t i = 0; i < want_n; i++)
    ref[i] = start + (double)i * step;
  tu_check_array(a, d, &want_n, 1, ref, 0, what);
  free(ref);
  emlx_release(a);
}

static void test_arange(void) {
  emlx_array *a = emlx_arange(0, 10, 3, EMLX_INT32, EMLX_CPU);
  double want[4] = {0, 3, 6, 9};
  int64_t n4 = 4;
  tu_check_array(a, EMLX_INT32, &n4, 1, want, 0, "arange(0, 10, 3, int32)");
  emlx_release(a);
  check_arange(0, 1, 0.1, EMLX_FLOAT32, 10, "arange(0, 1, 0.1) f32");
  check_arange(0, 1, 0.1, EMLX_FLOAT64, 10, "arange(0, 1, 0.1) f64");
  check_arange(5, 0, -1, EMLX_INT64, 5, "arange(5, 0, -1) s64");
  check_arange(-3, 3, 0.5, EMLX_FLOAT16, 12, "arange(-3, 3, 0.5) f16");
  check_arange(-3, 3, 0.25, EMLX_BFLOAT16, 24, "arange(-3, 3, 0.25) bf16");
  check_arange(0, 256, 17, EMLX_UINT8, 16, "arange(0, 256, 17) u8");
  check_arange(-100, 100, 7, EMLX_INT8, 29, "arange(-100, 100, 7) s8");
  check_arange(0.5, 4, 1, EMLX_FLOAT32, 4, "arange(0.5, 4) f32");
  check_arange(0, 1e6, 1, EMLX_INT32, 1000000, "arange(0, 1e6) int32");
  check_arange(0, 0, 1, EMLX_FLOAT32, 0, "arange(0, 0) is empty");
  check_arange(3, 1, 1, EMLX_FLOAT32, 0, "arange(3, 1, 1) is empty");
  check_arange(1, 3, -1, EMLX_INT32, 0, "arange(1, 3, -1) is empty");
  /* non-integral values into an integer dtype truncate */
  a = emlx_arange(0, 3, 0.75, EMLX_INT32, EMLX_CPU);
  double wt[4] = {0, 0, 1, 2};
  tu_check_array(a, EMLX_INT32, &n4, 1, wt, 0, "arange(0, 3, 0.75, int32)");
  emlx_release(a);
  emlx_array *c = emlx_arange(0, 3, 1, EMLX_COMPLEX64, EMLX_CPU);
  unsigned char *raw = tu_read_raw(c);
  float wc[6] = {0, 0, 1, 0, 2, 0};
  CHECK(raw && memcmp(raw, wc, 24) == 0);
  free(raw), emlx_release(c);
  CHECK_NULL_ERR(emlx_arange(0, 10, 0, EMLX_FLOAT32, EMLX_CPU));
  CHECK_NULL_ERR(emlx_arange(0, 1e19, 1, EMLX_FLOAT32, EMLX_CPU)); /* too many elements */
  CHECK_NULL_ERR(emlx_arange(0, 10, (double)NAN, EMLX_FLOAT32, EMLX_CPU));
  CHECK_NULL_ERR(emlx_arange(0, 10, (double)INFINITY, EMLX_FLOAT32, EMLX_CPU));
  CHECK_NULL_ERR(emlx_arange(0, 10, 1, EMLX_DTYPE_COUNT, EMLX_CPU));
  CHECK_NULL_ERR(emlx_arange(0, 10, 1, EMLX_FLOAT32, EMLX_DEVICE_COUNT));
}

static void test_eye(void) {
  struct {
    int64_t n, m, k;
  } cases[] = {{4, 4, 0},  {3, 4, 1}, {3, 4, -2}, {5, 2, -1}, {3, 3, 5},
               {3, 3, -7}, {1, 1, 0}, {0, 3, 0},  {3, 0, 0}};
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
    for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
      emlx_dtype d = tu_all_dtypes[di];
      int64_t n = cases[ci].n, m = cases[ci].m, k = cases[ci].k;
      emlx_array *e = emlx_eye(n, m, k, d, EMLX_CPU);
      double ref[64];
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++)
          ref[i * m + j] = (j - i == k) ? 1 : 0;
      int64_t sh[2] = {n, m};
      char what[80];
      snprintf(what, sizeof what, "eye(%" PRId64 ", %" PRId64 ", %" PRId64 ") %s", n, m, k,
               tu_dname(d));
      tu_check_array(e, d, sh, 2, ref, 0, what);
      emlx_release(e);
    }
  CHECK_NULL_ERR(emlx_eye(-1, 3, 0, EMLX_FLOAT32, EMLX_CPU));
  CHECK_NULL_ERR(emlx_eye(3, -1, 0, EMLX_FLOAT32, EMLX_CPU));
  CHECK_NULL_ERR(emlx_eye(3, 3, 0, EMLX_DTYPE_COUNT, EMLX_CPU));
  CHECK_NULL_ERR(emlx_eye(3, 3, 0, EMLX_FLOAT32, EMLX_DEVICE_COUNT));
}

int main(void) {
  test_scalars();
  test_full_ones_zeros();
  test_full_array();
  test_arange();
  test_eye();
  return tu_finish();
}
