/* test_array.c — arrays as handles: from_blob/to_blob in every dtype (bit
 * exact, guard bytes, wrong sizes), metadata, NULL handles, bad shapes,
 * devices (no GPU here: asking for one fails cleanly), ranks up to
 * EMLX_MAX_NDIM, int64 sizes (a 2^32-element broadcast view that is never
 * materialised), views that share buffers (strides, offsets, data pointers),
 * and retain/release. */
#include "test_util.h"

/* Bytes of n elements of dtype d with varied, exactly representable values
 * (including NaN/Inf/-0 for floats, extremes for ints). */
static void fill_pattern(unsigned char *buf, emlx_dtype d, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    unsigned char *p = buf + (size_t)i * tu_dsize(d);
    switch (d) {
    case EMLX_BOOL:
      p[0] = (uint8_t)(i % 3 == 0);
      break;
    case EMLX_FLOAT16:
    case EMLX_BFLOAT16: { /* any 16-bit pattern is a value */
      uint16_t h = (uint16_t)(i * 7919u + 13u);
      memcpy(p, &h, 2);
      break;
    }
    case EMLX_FLOAT32: {
      float f = i == 0 ? NAN : i == 1 ? -INFINITY : i == 2 ? -0.0f : (float)i * 0.37f - 3.0f;
      memcpy(p, &f, 4);
      break;
    }
    case EMLX_FLOAT64: {
      double f = i == 0 ? (double)NAN : i == 1 ? DBL_MAX : (double)i / 3.0;
      memcpy(p, &f, 8);
      break;
    }
    default: /* integers and complex: a byte pattern */
      for (size_t k = 0; k < tu_dsize(d); k++)
        p[k] = (unsigned char)(i * 31 + (int64_t)k * 17 + 255);
      break;
    }
  }
}

static void test_blob_roundtrip(void) {
  int64_t shape[2] = {3, 5};
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_dtype d = tu_all_dtypes[di];
    size_t nb = 15 * tu_dsize(d);
    unsigned char src[15 * 16], keep[15 * 16];
    fill_pattern(src, d, 15);
    memcpy(keep, src, nb);
    emlx_array *a = emlx_from_blob(src, d, shape, 2, EMLX_CPU);
    if (!CHECK_MSG(a != NULL, "from_blob %s", tu_dname(d)))
      continue;
    memset(src, 0, sizeof src); /* from_blob copied the data */
    CHECK(emlx_ndim(a) == 2 && emlx_shape(a)[0] == 3 && emlx_shape(a)[1] == 5);
    CHECK(emlx_dim(a, 0) == 3 && emlx_dim(a, 1) == 5 && emlx_dim(a, -1) == 5 &&
          emlx_dim(a, -2) == 3);
    CHECK(emlx_size(a) == 15);
    CHECK_MSG(emlx_nbytes(a) == nb, "nbytes of %s", tu_dname(d));
    CHECK(emlx_array_dtype(a) == d);
    CHECK(emlx_array_device(a) == EMLX_CPU);
    CHECK(emlx_is_evaluated(a));
    const int64_t *st = emlx_strides(a);
    CHECK(st && st[0] == 5 && st[1] == 1);
    CHECK(emlx_offset(a) == 0);
    CHECK(emlx_data(a) && memcmp(emlx_data(a), keep, nb) == 0);
    unsigned char *raw = tu_read_raw(a);
    CHECK_MSG(raw && memcmp(raw, keep, nb) == 0, "to_blob of %s is bit exact", tu_dname(d));
    free(raw);
    /* wrong byte counts fail and write nothing */
    unsigned char out[15 * 16 + 16];
    memset(out, 0x5A, sizeof out);
    CHECK_FAILS(emlx_to_blob(a, out, nb - 1));
    CHECK_FAILS(emlx_to_blob(a, out, nb + 1));
    CHECK_FAILS(emlx_to_blob(a, out, 0));
    bool untouched = true;
    for (size_t i = 0; i < sizeof out; i++)
      untouched &= out[i] == 0x5A;
    CHECK_MSG(untouched, "failed to_blob of %s writes nothing", tu_dname(d));
    CHECK_FAILS(emlx_to_blob(a, NULL, nb));
    emlx_release(a);
  }
  CHECK_FAILS(emlx_to_blob(NULL, NULL, 0));
  unsigned char tmp[16];
  CHECK_FAILS(emlx_to_blob(NULL, tmp, 8));
}

static void test_scalars_and_empty(void) {
  double v = -7.25;
  emlx_array *s = emlx_from_blob(&v, EMLX_FLOAT64, NULL, 0, EMLX_CPU);
  if (CHECK_NOT_NULL(s)) {
    CHECK(emlx_ndim(s) == 0 && emlx_size(s) == 1 && emlx_nbytes(s) == 8);
    double got = 0;
    CHECK_OK(emlx_item_f64(s, &got));
    CHECK(got == -7.25);
    int64_t gi = 0;
    CHECK_OK(emlx_item_i64(s, &gi));
    CHECK_EQ_I64(gi, -7);
  }
  int64_t sh1[3] = {1, 1, 1};
  int64_t big[1] = {INT64_MIN + 5};
  emlx_array *b = emlx_from_blob(big, EMLX_INT64, sh1, 3, EMLX_CPU);
  int64_t gi = 0;
  CHECK_OK(emlx_item_i64(b, &gi));
  CHECK_EQ_I64(gi, INT64_MIN + 5);
  uint8_t t = 1;
  emlx_array *bt = emlx_from_blob(&t, EMLX_BOOL, NULL, 0, EMLX_CPU);
  double got = 0;
  CHECK_OK(emlx_item_f64(bt, &got));
  CHECK(got == 1.0);
  int64_t sh3[1] = {3};
  float three[3] = {1, 2, 3};
  emlx_array *v3 = emlx_from_blob(three, EMLX_FLOAT32, sh3, 1, EMLX_CPU);
  CHECK_FAILS(emlx_item_f64(v3, &got));
  CHECK_FAILS(emlx_item_i64(v3, &gi));
  CHECK_FAILS(emlx_item_f64(NULL, &got));
  CHECK_FAILS(emlx_item_i64(NULL, &gi));
  CHECK_FAILS(emlx_item_f64(s, NULL));

  /* empty arrays: data may be NULL */
  int64_t esh[3] = {2, 0, 3};
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_array *e = emlx_from_blob(NULL, tu_all_dtypes[di], esh, 3, EMLX_CPU);
    if (!CHECK_MSG(e != NULL, "empty from_blob %s", tu_dname(tu_all_dtypes[di])))
      continue;
    CHECK(emlx_size(e) == 0 && emlx_nbytes(e) == 0 && emlx_ndim(e) == 3 && emlx_dim(e, 1) == 0);
    unsigned char dummy[4] = {1, 2, 3, 4};
    CHECK_OK(emlx_to_blob(e, dummy, 0));
    CHECK(dummy[0] == 1 && dummy[3] == 4);
    CHECK_FAILS(emlx_item_f64(e, &got));
    emlx_release(e);
  }
  emlx_release(s), emlx_release(b), emlx_release(bt), emlx_release(v3);
}

static void test_null_and_bad_input(void) {
  CHECK(emlx_ndim(NULL) == -1);
  CHECK(emlx_shape(NULL) == NULL);
  CHECK(emlx_size(NULL) == -1);
  CHECK(!emlx_is_evaluated(NULL));
  CHECK(emlx_strides(NULL) == NULL);
  CHECK(emlx_offset(NULL) == -1);
  CHECK(emlx_data(NULL) == NULL);
  CHECK(emlx_retain(NULL) == NULL);
  emlx_release(NULL);
  float x[4] = {1, 2, 3, 4};
  int64_t sh[1] = {4};
  emlx_array *a = emlx_from_blob(x, EMLX_FLOAT32, sh, 1, EMLX_CPU);
  CHECK(!emlx_shares_buffer(NULL, a) && !emlx_shares_buffer(a, NULL));
  CHECK(emlx_dim(a, 1) < 0 && emlx_dim(a, -2) < 0);
  emlx_array *list[2] = {a, NULL};
  CHECK_FAILS(emlx_eval(list, 2));
  CHECK_FAILS(emlx_eval(NULL, 1));

  /* bad shapes */
  int64_t neg[2] = {2, -1}, ok2[2] = {2, 2};
  int64_t many[EMLX_MAX_NDIM + 1];
  for (int i = 0; i <= EMLX_MAX_NDIM; i++)
    many[i] = 1;
  CHECK_NULL_ERR(emlx_from_blob(x, EMLX_FLOAT32, neg, 2, EMLX_CPU));
  CHECK_NULL_ERR(emlx_from_blob(x, EMLX_FLOAT32, ok2, -1, EMLX_CPU));
  CHECK_NULL_ERR(emlx_from_blob(x, EMLX_FLOAT32, many, EMLX_MAX_NDIM + 1, EMLX_CPU));
  CHECK_NULL_ERR(emlx_from_blob(x, EMLX_FLOAT32, NULL, 2, EMLX_CPU));
  CHECK_NULL_ERR(emlx_from_blob(NULL, EMLX_FLOAT32, ok2, 2, EMLX_CPU)); /* non-empty */
  CHECK_NULL_ERR(emlx_from_blob(x, EMLX_DTYPE_COUNT, ok2, 2, EMLX_CPU));
  CHECK_NULL_ERR(emlx_from_blob(x, (emlx_dtype)-1, ok2, 2, EMLX_CPU));
  CHECK_NULL_ERR(emlx_from_blob(x, EMLX_FLOAT32, ok2, 2, EMLX_DEVICE_COUNT));
  CHECK_NULL_ERR(emlx_from_blob(x, EMLX_FLOAT32, ok2, 2, (emlx_device)-1));
  /* a shape whose element count overflows int64 */
  int64_t huge2[2] = {INT64_C(1) << 40, INT64_C(1) << 40};
  CHECK_NULL_ERR(emlx_zeros(huge2, 2, EMLX_FLOAT32, EMLX_CPU));
  CHECK_NULL_ERR(emlx_zeros(neg, 2, EMLX_FLOAT32, EMLX_CPU));
  CHECK_NULL_ERR(emlx_zeros(many, EMLX_MAX_NDIM + 1, EMLX_FLOAT32, EMLX_CPU));

  /* the error message is cleared and thread-local state readable */
  emlx_clear_error();
  CHECK_EQ_STR(emlx_last_error(), "");
  emlx_release(a);
}

static void test_devices(void) {
  CHECK(emlx_device_available(EMLX_CPU));
  CHECK(!emlx_device_available(EMLX_DEVICE_COUNT));
  bool gpu = emlx_device_available(EMLX_GPU);
  CHECK_MSG(!gpu, "no GPU backend on this machine");
  if (gpu) { /* a GPU build on a GPU machine: mismatched devices must fail */
    CHECK(emlx_default_device() == EMLX_GPU);
    float x[2] = {1, 2};
    int64_t sh[1] = {2};
    emlx_array *c = emlx_from_blob(x, EMLX_FLOAT32, sh, 1, EMLX_CPU);
    emlx_array *g = emlx_from_blob(x, EMLX_FLOAT32, sh, 1, EMLX_GPU);
    CHECK_NULL_ERR(emlx_add(c, g));
    emlx_release(c), emlx_release(g);
    return;
  }
  CHECK(emlx_default_device() == EMLX_CPU);
  float x[2] = {1, 2};
  int64_t sh[1] = {2};
  CHECK_NULL_ERR(emlx_from_blob(x, EMLX_FLOAT32, sh, 1, EMLX_GPU));
  CHECK_NULL_ERR(emlx_zeros(sh, 1, EMLX_FLOAT32, EMLX_GPU));
  CHECK_NULL_ERR(emlx_ones(sh, 1, EMLX_FLOAT32, EMLX_GPU));
  CHECK_NULL_ERR(emlx_full(sh, 1, 1.0, EMLX_FLOAT32, EMLX_GPU));
  CHECK_NULL_ERR(emlx_scalar_tensor(1.0, EMLX_FLOAT32, EMLX_GPU));
  CHECK_NULL_ERR(emlx_scalar_tensor_int(1, EMLX_INT32, EMLX_GPU));
  CHECK_NULL_ERR(emlx_scalar_tensor_complex(1.0f, 0.0f, EMLX_GPU));
  CHECK_NULL_ERR(emlx_arange(0, 4, 1, EMLX_FLOAT32, EMLX_GPU));
  CHECK_NULL_ERR(emlx_eye(2, 2, 0, EMLX_FLOAT32, EMLX_GPU));
  emlx_clear_error();
  CHECK(emlx_queue_new(EMLX_GPU) == NULL);
  CHECK(emlx_last_error()[0] != '\0');
  CHECK(emlx_default_queue(EMLX_GPU) == NULL);
  /* the library keeps working on the CPU afterwards */
  emlx_array *c = emlx_from_blob(x, EMLX_FLOAT32, sh, 1, EMLX_CPU);
  emlx_array *s = emlx_add(c, c);
  static const double want[2] = {2, 4};
  tu_check_array(s, EMLX_FLOAT32, sh, 1, want, 0, "cpu add after gpu failures");
  emlx_release(c), emlx_release(s);
}

/* 33 and 64 dimensions: round trip, transpose, reductions, reshape. */
static void test_many_dims(void) {
  enum { ND = 33 };
  int64_t shape[ND];
  for (int i = 0; i < ND; i++)
    shape[i] = (i % 8 == 0) ? 2 : 1; /* dims 0,8,16,24,32 */
  double v[32];
  for (int i = 0; i < 32; i++)
    v[i] = i;
  emlx_array *a = tu_make(EMLX_INT32, shape, ND, v);
  if (!CHECK_NOT_NULL(a))
    return;
  CHECK(emlx_ndim(a) == ND && emlx_size(a) == 32 && emlx_dim(a, -1) == 2);
  tu_check_array(a, EMLX_INT32, shape, ND, v, 0, "33-d round trip");
  /* reversed axes: element (i0..i32) of t is a[i32..i0] */
  emlx_array *t = emlx_transpose(a, NULL, 0);
  int64_t tshape[ND], idx[ND], ridx[ND];
  for (int i = 0; i < ND; i++)
    tshape[i] = shape[ND - 1 - i];
  double ref[32];
  for (int64_t i = 0; i < 32; i++) {
    tu_unravel(i, tshape, ND, idx);
    for (int k = 0; k < ND; k++)
      ridx[k] = idx[ND - 1 - k];
    ref[i] = v[tu_ravel(ridx, shape, ND)];
  }
  tu_check_array(t, EMLX_INT32, tshape, ND, ref, 0, "33-d transpose");
  /* sum over axes 0 and 32 with keep_dims */
  int axes[2] = {0, -1};
  emlx_array *s = emlx_sum(t, axes, 2, true);
  int64_t sshape[ND];
  memcpy(sshape, tshape, sizeof sshape);
  sshape[0] = sshape[ND - 1] = 1;
  double sref[8] = {0};
  for (int64_t i = 0; i < 32; i++) {
    tu_unravel(i, tshape, ND, idx);
    idx[0] = idx[ND - 1] = 0;
    sref[tu_ravel(idx, sshape, ND)] += ref[i];
  }
  tu_check_array(s, EMLX_INT32, sshape, ND, sref, 0, "33-d sum over two axes");
  int64_t flat = -1;
  emlx_array *r = emlx_reshape(t, &flat, 1);
  int64_t n32 = 32;
  tu_check_array(r, EMLX_INT32, &n32, 1, ref, 0, "33-d reshape(-1)");

  /* exactly EMLX_MAX_NDIM dims works, one more does not */
  int64_t s64[EMLX_MAX_NDIM];
  for (int i = 0; i < EMLX_MAX_NDIM; i++)
    s64[i] = 1;
  s64[EMLX_MAX_NDIM - 1] = 3;
  double v3[3] = {4, 5, 6};
  emlx_array *m = tu_make(EMLX_FLOAT32, s64, EMLX_MAX_NDIM, v3);
  CHECK(m && emlx_ndim(m) == EMLX_MAX_NDIM);
  tu_check_array(m, EMLX_FLOAT32, s64, EMLX_MAX_NDIM, v3, 0, "64-d round trip");
  int ax0 = 0;
  CHECK_NULL_ERR(emlx_expand_dims(m, &ax0, 1));
  int64_t v3s[1] = {3};
  emlx_array *v1 = tu_make(EMLX_FLOAT32, v3s, 1, v3);
  emlx_array *bm = emlx_broadcast_to(v1, s64, EMLX_MAX_NDIM);
  tu_check_array(bm, EMLX_FLOAT32, s64, EMLX_MAX_NDIM, v3, 0, "broadcast to 64 dims");
  emlx_array *mm = emlx_max(bm, NULL, 0, false);
  double mx = 0;
  CHECK(mm && emlx_ndim(mm) == 0 && emlx_item_f64(mm, &mx) == 0 && mx == 6);
  emlx_release(a), emlx_release(t), emlx_release(s), emlx_release(r), emlx_release(m);
  emlx_release(v1), emlx_release(bm), emlx_release(mm);
}

/* int64 sizes: a 2^32-element (and a 2^36-element) broadcast view, never
 * materialised; corners and strided samples of it read back correctly. */
static void test_int64_sizes(void) {
  const int64_t K = INT64_C(1) << 16;
  size_t before = emlx_memory_info().active_memory;
  uint16_t *col = malloc((size_t)K * sizeof(uint16_t));
  for (int64_t i = 0; i < K; i++)
    col[i] = (uint16_t)(i * 40503u);
  int64_t cshape[2] = {K, 1}, bshape[2] = {K, K};
  emlx_array *c = emlx_from_blob(col, EMLX_UINT16, cshape, 2, EMLX_CPU);
  emlx_array *b = emlx_broadcast_to(c, bshape, 2);
  if (!CHECK_NOT_NULL(b))
    goto out;
  CHECK_EQ_I64(emlx_size(b), INT64_C(1) << 32);
  CHECK_EQ_U64(emlx_nbytes(b), UINT64_C(1) << 33);
  CHECK_OK(emlx_eval(&b, 1));
  CHECK_MSG(emlx_memory_info().active_memory - before < (size_t)(4 << 20),
            "2^32-element broadcast view allocates nothing (active grew by %zu)",
            emlx_memory_info().active_memory - before);
  CHECK(emlx_shares_buffer(b, c));
  const int64_t *st = emlx_strides(b);
  CHECK(st && st[0] == 1 && st[1] == 0);
  {
    /* the last corner: rows K-3..K-1, columns K-5..K-1 */
    int64_t start[2] = {K - 3, K - 5}, stop[2] = {K, K};
    emlx_array *corner = emlx_slice(b, start, stop, NULL, 2);
    int64_t csh[2] = {3, 5};
    double ref[15];
    for (int i = 0; i < 15; i++)
      ref[i] = col[K - 3 + i / 5];
    tu_check_array(corner, EMLX_UINT16, csh, 2, ref, 0, "corner of a 2^32 view");
    emlx_array *cs = emlx_sum(corner, NULL, 0, false);
    double tot = 0, got = -1;
    for (int i = 0; i < 15; i++)
      tot += ref[i];
    CHECK(cs && emlx_array_dtype(cs) == EMLX_UINT32 && emlx_item_f64(cs, &got) == 0 && got == tot);
    /* every 4099th row and 8191st column */
    int64_t st2[2] = {5, 7}, sp2[2] = {K, K}, step[2] = {4099, 8191};
    emlx_array *sparse = emlx_slice(b, st2, sp2, step, 2);
    int64_t ssh[2] = {(K - 5 + 4098) / 4099, (K - 7 + 8190) / 8191};
    int64_t ns = ssh[0] * ssh[1];
    double *sref = malloc((size_t)ns * sizeof(double));
    for (int64_t i = 0; i < ns; i++)
      sref[i] = col[5 + (i / ssh[1]) * 4099];
    tu_check_array(sparse, EMLX_UINT16, ssh, 2, sref, 0, "strided sample of a 2^32 view");
    free(sref);
    emlx_release(corner), emlx_release(cs), emlx_release(sparse);
  }
  {
    /* 2^36 elements in three dims, then a reshape that keeps it a view */
    uint8_t one = 3;
    emlx_array *o = emlx_from_blob(&one, EMLX_UINT8, NULL, 0, EMLX_CPU);
    int64_t s3[3] = {INT64_C(1) << 12, INT64_C(1) << 12, INT64_C(1) << 12};
    emlx_array *o3 = emlx_broadcast_to(o, s3, 3);
    CHECK(o3 && emlx_size(o3) == INT64_C(1) << 36);
    int64_t st3[3] = {4093, 4090, 4094}, sp3[3] = {4096, 4096, 4096};
    emlx_array *oc = emlx_slice(o3, st3, sp3, NULL, 3);
    emlx_array *os = emlx_sum(oc, NULL, 0, false);
    double got = 0;
    CHECK(os && emlx_item_f64(os, &got) == 0 && got == 3.0 * 3 * 6 * 2);
    emlx_release(o), emlx_release(o3), emlx_release(oc), emlx_release(os);
  }
  CHECK_MSG(emlx_memory_info().active_memory - before < (size_t)(4 << 20),
            "views over 2^32+ elements stay unmaterialised");
  {
    /* reducing a broadcast view reads it in place: a 2^26-element bool view
     * (64 MiB logically, 256 MiB as int32) must not be copied to be summed */
    uint8_t flags[4] = {1, 0, 1, 1};
    int64_t fs[2] = {4, 1}, vs[2] = {4, INT64_C(1) << 24};
    emlx_array *f = emlx_from_blob(flags, EMLX_BOOL, fs, 2, EMLX_CPU);
    emlx_array *fv = emlx_broadcast_to(f, vs, 2);
    int ax = 1;
    emlx_array *rs = emlx_sum(fv, &ax, 1, false), *all = emlx_sum(fv, NULL, 0, false);
    emlx_array *both[2] = {rs, all};
    emlx_reset_peak_memory();
    size_t act = emlx_memory_info().active_memory;
    CHECK_OK(emlx_eval(both, 2));
    size_t grew = emlx_memory_info().peak_memory - act;
    CHECK_MSG(grew < (size_t)(16 << 20),
              "summing a 2^26-element broadcast view allocated %zu MiB at peak", grew >> 20);
    double wr[4] = {16777216.0, 0, 16777216.0, 16777216.0};
    int64_t n4 = 4, tot = 0;
    tu_check_array(rs, EMLX_INT32, &n4, 1, wr, 0, "row sums of a broadcast bool view");
    CHECK(emlx_item_i64(all, &tot) == 0 && tot == 3 * (INT64_C(1) << 24));
    emlx_release(f), emlx_release(fv), emlx_release(rs), emlx_release(all);
  }
out:
  emlx_release(b), emlx_release(c);
  free(col);
}

/* The sum of a bool broadcast view of 2^31 + 2^16 elements (int32 result).
 * It reads every element, so it runs only with EMLX_TEST_LARGE=1 (measured:
 * ~45 s for the full reduction, ~5 s along one axis, Release, 2 cores). */
static void test_int64_large_sum(void) {
  if (!getenv("EMLX_TEST_LARGE")) {
    fprintf(stderr, "skipping the 2^31-element sum (set EMLX_TEST_LARGE=1)\n");
    return;
  }
  const int64_t K = INT64_C(1) << 16, C = 32769;
  uint8_t *col = malloc((size_t)K);
  int64_t ones = 0;
  for (int64_t i = 0; i < K; i++) {
    col[i] = (uint8_t)(i % 3 == 0);
    ones += col[i];
  }
  int64_t cs[2] = {K, 1}, bs[2] = {K, C};
  emlx_array *c = emlx_from_blob(col, EMLX_BOOL, cs, 2, EMLX_CPU);
  emlx_array *b = emlx_broadcast_to(c, bs, 2);
  CHECK(b && emlx_size(b) > (INT64_C(1) << 31));
  emlx_array *s = emlx_sum(b, NULL, 0, false);
  int64_t got = 0;
  emlx_reset_peak_memory();
  size_t act = emlx_memory_info().active_memory;
  CHECK(s && emlx_array_dtype(s) == EMLX_INT32 && emlx_item_i64(s, &got) == 0);
  CHECK_EQ_I64(got, ones * C);
  CHECK_MSG(emlx_memory_info().peak_memory - act < (size_t)(64 << 20),
            "the sum of a 2^31-element view allocated %zu MiB at peak",
            (emlx_memory_info().peak_memory - act) >> 20);
  int ax = 1;
  emlx_array *rows = emlx_sum(b, &ax, 1, false);
  double *ref = malloc((size_t)K * sizeof(double));
  for (int64_t i = 0; i < K; i++)
    ref[i] = (double)(col[i] * C);
  tu_check_array(rows, EMLX_INT32, &K, 1, ref, 0, "row sums of a 2^31-element bool view");
  free(ref), free(col);
  emlx_release(c), emlx_release(b), emlx_release(s), emlx_release(rows);
}

/* Views share the buffer and carry the expected strides and offsets. */
static void test_views(void) {
  int64_t shape[2] = {4, 6};
  double *v = tu_iota(24, 0, 1);
  emlx_array *a = tu_make(EMLX_FLOAT32, shape, 2, v);
  int64_t flat = -1, n24 = 24, s83[2] = {8, 3};
  emlx_array *r = emlx_reshape(a, &flat, 1);
  emlx_array *r2 = emlx_reshape(a, s83, 2);
  emlx_array *t = emlx_transpose(a, NULL, 0);
  int64_t start[2] = {1, 5}, stop[2] = {4, -7}, step[2] = {2, -2};
  emlx_array *sl = emlx_slice(a, start, stop, step, 2);
  int64_t s34[3] = {3, 4, 6};
  emlx_array *br = emlx_broadcast_to(a, s34, 3);
  int64_t s1[4] = {1, 4, 1, 6};
  emlx_array *e = emlx_reshape(a, s1, 4);
  emlx_array *sq = emlx_squeeze(e, NULL, 0);
  int ax[2] = {0, 3};
  emlx_array *ed = emlx_expand_dims(a, ax, 2);
  emlx_array *cp = emlx_copy(a);
  int64_t rs[2] = {1, 0}, re[2] = {3, 6};
  emlx_array *rows = emlx_slice(a, rs, re, NULL, 2);
  int64_t n12 = 12;
  emlx_array *rows_flat = emlx_reshape(rows, &n12, 1);
  emlx_array *t_flat = emlx_reshape(t, &flat, 1);
  emlx_array *all[] = {r, r2, t, sl, br, e, sq, ed, cp, rows, rows_flat, t_flat};
  size_t nall = sizeof all / sizeof all[0];
  for (size_t i = 0; i < nall; i++)
    CHECK_MSG(all[i] != NULL, "view %zu built", i);
  CHECK_OK(emlx_eval(all, nall));
  const char *names[] = {"reshape(-1)",  "reshape(8,3)",         "transpose", "strided slice",
                         "broadcast_to", "reshape to unit dims", "squeeze",   "expand_dims"};
  for (size_t i = 0; i < 8; i++)
    CHECK_MSG(emlx_shares_buffer(all[i], a), "%s shares the buffer", names[i]);
  CHECK_MSG(!emlx_shares_buffer(cp, a), "copy has its own buffer");
  CHECK_MSG(emlx_shares_buffer(rows, a) && emlx_shares_buffer(rows_flat, a),
            "reshape of a row-contiguous slice is a view");
  CHECK_MSG(!emlx_shares_buffer(t_flat, a), "reshape of a transpose must copy");

  const int64_t *st;
  st = emlx_strides(t);
  CHECK(st && st[0] == 1 && st[1] == 6 && emlx_offset(t) == 0);
  st = emlx_strides(sl);
  CHECK(st && st[0] == 12 && st[1] == -2);
  CHECK_EQ_I64(emlx_offset(sl), 11);
  CHECK(emlx_data(sl) == (const char *)emlx_data(a) + 11 * 4);
  st = emlx_strides(br);
  CHECK(st && st[0] == 0 && st[1] == 6 && st[2] == 1);
  CHECK_EQ_I64(emlx_offset(rows), 6);
  CHECK(emlx_data(rows) == (const char *)emlx_data(a) + 6 * 4);

  /* values through the views */
  tu_check_array(r, EMLX_FLOAT32, &n24, 1, v, 0, "reshape(-1)");
  double tref[24], slref[6] = {11, 9, 7, 23, 21, 19}, bref[72];
  for (int i = 0; i < 24; i++)
    tref[i] = v[(i % 4) * 6 + i / 4];
  for (int i = 0; i < 72; i++)
    bref[i] = v[i % 24];
  int64_t ts[2] = {6, 4}, sls[2] = {2, 3};
  tu_check_array(t, EMLX_FLOAT32, ts, 2, tref, 0, "transpose");
  tu_check_array(sl, EMLX_FLOAT32, sls, 2, slref, 0, "slice with negative step");
  tu_check_array(br, EMLX_FLOAT32, s34, 3, bref, 0, "broadcast_to");
  tu_check_array(sq, EMLX_FLOAT32, shape, 2, v, 0, "squeeze");
  int64_t eds[4] = {1, 4, 6, 1};
  tu_check_array(ed, EMLX_FLOAT32, eds, 4, v, 0, "expand_dims");
  tu_check_array(rows_flat, EMLX_FLOAT32, &n12, 1, v + 6, 0, "reshape of row slice");
  tu_check_array(t_flat, EMLX_FLOAT32, &n24, 1, tref, 0, "reshape of transpose");

  /* a view outlives its base handle */
  emlx_release(a);
  a = NULL;
  tu_check_array(sl, EMLX_FLOAT32, sls, 2, slref, 0, "slice after the base was released");
  /* a view of a view of a lazy array */
  emlx_array *x = tu_make(EMLX_FLOAT32, shape, 2, v);
  emlx_array *lz = emlx_add(x, x);
  CHECK(!emlx_is_evaluated(lz));
  emlx_clear_error();
  CHECK(emlx_strides(lz) == NULL && emlx_last_error()[0] != '\0');
  CHECK(emlx_offset(lz) == -1 && emlx_data(lz) == NULL);
  CHECK(!emlx_shares_buffer(lz, x));
  emlx_array *lt = emlx_transpose(lz, NULL, 0);
  emlx_array *lts = emlx_slice(lt, start, stop, step, 2); /* rows 1,3 of 6x4; cols 3,1 */
  double lref[4] = {2 * v[3 * 6 + 1], 2 * v[1 * 6 + 1], 2 * v[3 * 6 + 3], 2 * v[1 * 6 + 3]};
  int64_t lsh[2] = {2, 2};
  tu_check_array(lts, EMLX_FLOAT32, lsh, 2, lref, 0, "slice of transpose of lazy add");
  CHECK(emlx_is_evaluated(lts));
  emlx_release(x), emlx_release(lz), emlx_release(lt), emlx_release(lts);
  for (size_t i = 0; i < nall; i++)
    emlx_release(all[i]);
  free(v);
}

static void test_retain_release(void) {
  size_t base = emlx_memory_info().active_memory;
  int64_t n = 1 << 16;
  emlx_array *a = emlx_zeros(&n, 1, EMLX_FLOAT32, EMLX_CPU);
  CHECK(emlx_retain(a) == a);
  CHECK(emlx_retain(a) == a);
  CHECK_OK(emlx_eval(&a, 1));
  emlx_release(a);
  emlx_release(a);
  double z = 0;
  emlx_array *s = emlx_sum(a, NULL, 0, false); /* still alive: one reference left */
  CHECK(s && emlx_item_f64(s, &z) == 0 && z == 0);
  emlx_release(s);
  emlx_release(a);
  CHECK_MSG(emlx_memory_info().active_memory == base, "active back to %zu (is %zu)", base,
            emlx_memory_info().active_memory);
  /* an input released by the caller stays alive through the lazy graph */
  float x[3] = {1, 2, 3};
  int64_t n3 = 3;
  emlx_array *xa = emlx_from_blob(x, EMLX_FLOAT32, &n3, 1, EMLX_CPU);
  emlx_array *y = emlx_multiply(xa, xa);
  emlx_release(xa);
  static const double want[3] = {1, 4, 9};
  tu_check_array(y, EMLX_FLOAT32, &n3, 1, want, 0, "input released before eval");
  emlx_release(y);
  CHECK(emlx_memory_info().active_memory == base);
}

/* A scalar tensor is an evaluated leaf from the start (MLX's array(value)),
 * in every dtype, holding the value converted; full() of rank 0 stays lazy. */
static void test_scalar_tensor_is_a_leaf(void) {
  static const emlx_dtype dts[] = {EMLX_BOOL,    EMLX_UINT8,    EMLX_INT32,   EMLX_INT64,
                                   EMLX_FLOAT16, EMLX_BFLOAT16, EMLX_FLOAT32, EMLX_FLOAT64};
  for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
    emlx_array *s = emlx_scalar_tensor(3.0, dts[i], EMLX_CPU);
    double v = -1;
    CHECK_MSG(s && emlx_is_evaluated(s) && emlx_ndim(s) == 0 && emlx_array_dtype(s) == dts[i],
              "scalar_tensor(3, %s) is an evaluated 0-d array", emlx_dtype_name(dts[i]));
    CHECK_MSG(s && emlx_item_f64(s, &v) == 0 && v == (dts[i] == EMLX_BOOL ? 1.0 : 3.0),
              "scalar_tensor(3, %s) holds %g", emlx_dtype_name(dts[i]), v);
    emlx_release(s);
  }
  emlx_array *i = emlx_scalar_tensor_int(-7, EMLX_INT64, EMLX_CPU);
  int64_t iv = 0;
  CHECK(i && emlx_is_evaluated(i) && emlx_item_i64(i, &iv) == 0 && iv == -7);
  emlx_release(i);
  emlx_array *c = emlx_scalar_tensor_complex(1.5f, -2.0f, EMLX_CPU);
  float cv[2] = {0};
  CHECK(c && emlx_is_evaluated(c) && emlx_to_blob(c, cv, sizeof cv) == 0 && cv[0] == 1.5f &&
        cv[1] == -2.0f);
  emlx_release(c);
  CHECK_NULL_ERR(emlx_scalar_tensor(1.0, EMLX_DTYPE_COUNT, EMLX_CPU));
  CHECK_NULL_ERR(emlx_scalar_tensor(1.0, EMLX_FLOAT32, EMLX_DEVICE_COUNT));
  emlx_array *f = emlx_full(NULL, 0, 2.0, EMLX_FLOAT32, EMLX_CPU);
  CHECK_MSG(f && !emlx_is_evaluated(f), "full() of rank 0 is lazy");
  emlx_release(f);
}

int main(void) {
  test_scalar_tensor_is_a_leaf();
  test_blob_roundtrip();
  test_scalars_and_empty();
  test_null_and_bad_input();
  test_devices();
  test_many_dims();
  test_int64_sizes();
  test_int64_large_sum();
  test_views();
  test_retain_release();
  return tu_finish();
}
