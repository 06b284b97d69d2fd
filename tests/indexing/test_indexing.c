/* test_indexing.c — the layout ops of the indexing family: slice_update
 * (static and dynamic, in place when donated), pad (low / high / interior,
 * negative), concatenate, stack, as_strided and view, in every dtype, on
 * contiguous, strided, broadcast and empty inputs, and their error cases.
 * References are computed here with naive loops. (Indexed ops:
 * test_gather_scatter.c.) */
#include "indexing_test_util.h"

/* ---- slice_update -------------------------------------------------------------------- */

/* out = src with the slice (first, step per axis, shape sshape) replaced by
 * upd broadcast to sshape. */
static double *ref_slice_update(const double *src, const int64_t *shape, int nd,
                                const int64_t *first, const int64_t *step, const int64_t *sshape,
                                const double *upd, const int64_t *ushape, int und) {
  int64_t n = tu_numel(shape, nd), m = tu_numel(sshape, nd);
  double *out = malloc((size_t)(n > 0 ? n : 1) * sizeof *out);
  memcpy(out, src, (size_t)n * sizeof *out);
  int64_t q[EMLX_MAX_NDIM], p[EMLX_MAX_NDIM];
  for (int64_t i = 0; i < m; i++) {
    tu_unravel(i, sshape, nd, q);
    for (int k = 0; k < nd; k++)
      p[k] = first[k] + q[k] * step[k];
    out[tu_ravel(p, shape, nd)] = it_bval(upd, ushape, und, q, nd);
  }
  return out;
}

static void test_slice_update_dtypes(void) {
  /* src [4, 5], slice [1:4:2, 4:0:-2] -> shape [2, 2], update [2, 2] */
  int64_t shape[2] = {4, 5}, ushape[2] = {2, 2};
  int64_t start[2] = {1, 4}, stop[2] = {4, 0}, strides[2] = {2, -2};
  int64_t first[2] = {1, 4}, step[2] = {2, -2};
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_dtype d = tu_all_dtypes[di];
    double *sv, *uv;
    emlx_array *src = it_make(d, shape, 2, 1, &sv);
    emlx_array *upd = it_make(d, ushape, 2, 2, &uv);
    emlx_array *out = emlx_slice_update(src, upd, start, stop, strides, 2);
    double *ref = ref_slice_update(sv, shape, 2, first, step, ushape, uv, ushape, 2);
    tu_check_array(out, d, shape, 2, ref, 0, "slice_update");
    /* src still holds its values: the result did not write into it */
    tu_check_array(src, d, shape, 2, sv, 0, "slice_update leaves src intact");
    free(ref), free(sv), free(uv);
    emlx_release(src), emlx_release(upd), emlx_release(out);
  }
}

static void test_slice_update_layouts(void) {
  /* transposed src [5, 4] (of a [4, 5] blob), strided update, scalar update */
  int64_t bshape[2] = {4, 5};
  double *bv;
  emlx_array *base = it_make(EMLX_FLOAT32, bshape, 2, 3, &bv);
  emlx_array *src = emlx_transpose(base, NULL, 0);
  double *sv = it_transpose2(bv, 4, 5);
  int64_t shape[2] = {5, 4};
  /* update: every other column of a [4, 4] blob -> [4, 2] */
  int64_t ubshape[2] = {4, 4};
  double *ubv;
  emlx_array *ub = it_make(EMLX_INT32, ubshape, 2, 4, &ubv);
  int64_t us0[2] = {0, 0}, us1[2] = {4, 4}, uss[2] = {1, 2};
  emlx_array *upd = emlx_slice(ub, us0, us1, uss, 2);
  double uv[8];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 2; j++)
      uv[i * 2 + j] = ubv[i * 4 + 2 * j];
  int64_t ushape[2] = {4, 2};
  int64_t start[2] = {-4, 1}, stop[2] = {100, 4}, step[2] = {1, 2}, first[2] = {1, 1};
  emlx_array *out = emlx_slice_update(src, upd, start, stop, step, 2);
  double *ref = ref_slice_update(sv, shape, 2, first, step, ushape, uv, ushape, 2);
  tu_check_array(out, EMLX_FLOAT32, shape, 2, ref, 0, "slice_update transposed/strided/cast");
  free(ref), emlx_release(out);

  /* a 0-d update broadcast over a column, strides NULL */
  emlx_array *s = emlx_scalar_tensor(7.5, EMLX_FLOAT64, EMLX_CPU);
  int64_t c0[2] = {0, 2}, c1[2] = {5, 3}, one[2] = {1, 1}, cshape[2] = {5, 1};
  double seven = 7.5;
  int64_t sshape0[1] = {1};
  out = emlx_slice_update(src, s, c0, c1, NULL, 2);
  ref = ref_slice_update(sv, shape, 2, c0, one, cshape, &seven, sshape0, 0);
  tu_check_array(out, EMLX_FLOAT32, shape, 2, ref, 0, "slice_update scalar broadcast");
  free(ref), emlx_release(out);

  /* a row [4] broadcast over rows 1..3 */
  double row[4] = {1, 2, 3, 4};
  emlx_array *r = tu_make1(EMLX_FLOAT32, 4, row);
  int64_t r0[2] = {1, 0}, r1[2] = {4, 4}, rshape[2] = {3, 4}, rsh[1] = {4};
  out = emlx_slice_update(src, r, r0, r1, NULL, 2);
  ref = ref_slice_update(sv, shape, 2, r0, one, rshape, row, rsh, 1);
  tu_check_array(out, EMLX_FLOAT32, shape, 2, ref, 0, "slice_update row broadcast");
  free(ref), emlx_release(out);

  /* an empty slice leaves src as it is; an empty array works */
  int64_t e0[2] = {3, 0}, e1[2] = {3, 4};
  emlx_array *z = emlx_zeros((int64_t[]){0, 4}, 2, EMLX_FLOAT32, EMLX_CPU);
  out = emlx_slice_update(src, z, e0, e1, NULL, 2);
  tu_check_array(out, EMLX_FLOAT32, shape, 2, sv, 0, "slice_update empty slice");
  emlx_release(out);
  emlx_array *ez = emlx_zeros((int64_t[]){0, 3}, 2, EMLX_INT8, EMLX_CPU);
  out = emlx_slice_update(ez, s, (int64_t[]){0, 0}, (int64_t[]){0, 3}, NULL, 2);
  CHECK(out && emlx_size(out) == 0 && emlx_eval(&out, 1) == 0);
  emlx_release(out), emlx_release(ez), emlx_release(z);

  /* the whole array: the result is the (cast, broadcast) update */
  out = emlx_slice_update(src, s, (int64_t[]){0, 0}, (int64_t[]){5, 4}, NULL, 2);
  double full[20];
  for (int i = 0; i < 20; i++)
    full[i] = 7.5;
  tu_check_array(out, EMLX_FLOAT32, shape, 2, full, 0, "slice_update whole array");
  emlx_release(out);

  /* errors */
  CHECK_NULL_ERR(emlx_slice_update(NULL, s, start, stop, NULL, 2));
  CHECK_NULL_ERR(emlx_slice_update(src, NULL, start, stop, NULL, 2));
  CHECK_NULL_ERR(emlx_slice_update(src, s, start, stop, NULL, 1));
  CHECK_NULL_ERR(emlx_slice_update(src, s, NULL, stop, NULL, 2));
  CHECK_NULL_ERR(emlx_slice_update(src, s, start, stop, (int64_t[]){1, 0}, 2));
  CHECK_NULL_ERR(emlx_slice_update(src, r, c0, c1, NULL, 2));   /* [4] into [5, 1] */
  CHECK_NULL_ERR(emlx_slice_update(src, upd, r0, r1, NULL, 2)); /* [4, 2] into [3, 4] */

  emlx_release(s), emlx_release(r), emlx_release(upd), emlx_release(ub), emlx_release(src);
  emlx_release(base);
  free(bv), free(sv), free(ubv);
}

/* The KV-cache pattern: the old cache released before eval, so every update
 * reuses its buffer and writes only the slice. */
static void test_slice_update_in_place(void) {
  int64_t shape[3] = {2, 64, 8}; /* heads, positions, dim */
  emlx_array *cache = emlx_zeros(shape, 3, EMLX_FLOAT32, EMLX_CPU);
  CHECK_OK(emlx_eval(&cache, 1));
  const void *buf = emlx_data(cache);
  double *ref = calloc(2 * 64 * 8, sizeof *ref);
  bool same = true;
  emlx_memory_stats before = emlx_memory_info();
  for (int t = 0; t < 64; t++) {
    int64_t ushape[3] = {2, 1, 8};
    double uv[16];
    for (int i = 0; i < 16; i++)
      uv[i] = t * 16 + i;
    emlx_array *kv = tu_make(EMLX_FLOAT32, ushape, 3, uv);
    emlx_array *next =
        emlx_slice_update(cache, kv, (int64_t[]){0, t, 0}, (int64_t[]){2, t + 1, 8}, NULL, 3);
    emlx_release(cache), emlx_release(kv);
    cache = next;
    if (!CHECK(cache && emlx_eval(&cache, 1) == 0))
      break;
    same = same && emlx_data(cache) == buf;
    for (int h = 0; h < 2; h++)
      for (int i = 0; i < 8; i++)
        ref[(h * 64 + t) * 8 + i] = uv[h * 8 + i];
  }
  CHECK_MSG(same, "every update reused the cache's buffer");
  emlx_memory_stats after = emlx_memory_info();
  CHECK_MSG(after.active_memory <= before.active_memory, "no memory growth (%zu -> %zu bytes)",
            before.active_memory, after.active_memory);
  tu_check_array(cache, EMLX_FLOAT32, shape, 3, ref, 0, "cache after 64 in-place updates");

  /* Dynamic starts: the position as an array, in place as well. */
  const void *buf2 = emlx_data(cache);
  int64_t pos = 70; /* clamped to 63 */
  emlx_array *start = it_index(EMLX_INT32, NULL, 0, &pos);
  emlx_array *kv = emlx_ones((int64_t[]){2, 1, 8}, 3, EMLX_FLOAT32, EMLX_CPU);
  int axis = 1;
  emlx_array *next = emlx_slice_update_dynamic(cache, kv, start, &axis, 1);
  emlx_release(cache);
  cache = next;
  CHECK(cache && emlx_eval(&cache, 1) == 0 && emlx_data(cache) == buf2);
  for (int h = 0; h < 2; h++)
    for (int i = 0; i < 8; i++)
      ref[(h * 64 + 63) * 8 + i] = 1;
  tu_check_array(cache, EMLX_FLOAT32, shape, 3, ref, 0, "cache after a dynamic update");

  /* While the old handle is alive, the result is a copy and src is intact. */
  emlx_array *held =
      emlx_slice_update(cache, kv, (int64_t[]){0, 0, 0}, (int64_t[]){2, 1, 8}, NULL, 3);
  CHECK(held && emlx_eval(&held, 1) == 0 && emlx_data(held) != emlx_data(cache));
  tu_check_array(cache, EMLX_FLOAT32, shape, 3, ref, 0, "held src intact");
  emlx_release(held), emlx_release(kv), emlx_release(start), emlx_release(cache);
  free(ref);

  /* A lazy chain of updates evaluated at once passes the buffer along. */
  emlx_array *c = emlx_zeros((int64_t[]){4}, 1, EMLX_INT32, EMLX_CPU);
  CHECK_OK(emlx_eval(&c, 1));
  const void *cbuf = emlx_data(c);
  for (int t = 0; t < 4; t++) {
    emlx_array *v = emlx_scalar_tensor(t + 1, EMLX_INT32, EMLX_CPU);
    emlx_array *n = emlx_slice_update(c, v, (int64_t[]){t}, (int64_t[]){t + 1}, NULL, 1);
    emlx_release(c), emlx_release(v);
    c = n;
  }
  CHECK(c && emlx_eval(&c, 1) == 0 && emlx_data(c) == cbuf);
  tu_check_array(c, EMLX_INT32, ((int64_t[]){4}), 1, ((double[]){1, 2, 3, 4}), 0,
                 "a lazy chain of updates");
  emlx_release(c);
}

static void test_slice_update_dynamic(void) {
  int64_t shape[2] = {5, 6}, ushape[2] = {2, 3};
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_dtype d = tu_all_dtypes[di];
    double *sv, *uv;
    emlx_array *src = it_make(d, shape, 2, 5, &sv);
    emlx_array *upd = it_make(d, ushape, 2, 6, &uv);
    /* starts (row, col) per index dtype: in range, clamped high, negative */
    static const int64_t cases[][2] = {{1, 2}, {4, 5}, {-1, 3}, {3, 100}};
    static const int64_t want[][2] = {{1, 2}, {3, 3}, {0, 3}, {3, 3}};
    static const emlx_dtype idt[] = {EMLX_INT64, EMLX_INT32, EMLX_INT8, EMLX_UINT16};
    for (int c = 0; c < 4; c++) {
      int64_t st[2] = {cases[c][0], cases[c][1]};
      if (idt[c] == EMLX_UINT16 && st[0] < 0)
        continue;
      emlx_array *starts = it_index1(idt[c], 2, st);
      int axes[2] = {0, -1};
      emlx_array *out = emlx_slice_update_dynamic(src, upd, starts, axes, 2);
      int64_t one[2] = {1, 1};
      double *ref = ref_slice_update(sv, shape, 2, want[c], one, ushape, uv, ushape, 2);
      tu_check_array(out, d, shape, 2, ref, 0, "slice_update_dynamic");
      free(ref), emlx_release(out), emlx_release(starts);
    }
    free(sv), free(uv);
    emlx_release(src), emlx_release(upd);
  }
  /* one axis, the other starting at 0; no axes at all */
  double *sv, *uv;
  emlx_array *src = it_make(EMLX_INT16, shape, 2, 7, &sv);
  emlx_array *upd = it_make(EMLX_INT16, ushape, 2, 8, &uv);
  int64_t col = 2;
  emlx_array *starts = it_index1(EMLX_UINT8, 1, &col);
  int axis = 1;
  emlx_array *out = emlx_slice_update_dynamic(src, upd, starts, &axis, 1);
  double *ref =
      ref_slice_update(sv, shape, 2, (int64_t[]){0, 2}, (int64_t[]){1, 1}, ushape, uv, ushape, 2);
  tu_check_array(out, EMLX_INT16, shape, 2, ref, 0, "slice_update_dynamic one axis");
  free(ref), emlx_release(out);
  out = emlx_slice_update_dynamic(src, upd, NULL, NULL, 0);
  ref = ref_slice_update(sv, shape, 2, (int64_t[]){0, 0}, (int64_t[]){1, 1}, ushape, uv, ushape, 2);
  tu_check_array(out, EMLX_INT16, shape, 2, ref, 0, "slice_update_dynamic no axes");
  free(ref), emlx_release(out);

  /* errors */
  emlx_array *fstart = emlx_zeros((int64_t[]){1}, 1, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *two = emlx_zeros((int64_t[]){2}, 1, EMLX_INT32, EMLX_CPU);
  emlx_array *big = emlx_zeros((int64_t[]){6, 1}, 2, EMLX_INT16, EMLX_CPU);
  emlx_array *r1 = emlx_zeros((int64_t[]){3}, 1, EMLX_INT16, EMLX_CPU);
  CHECK_NULL_ERR(emlx_slice_update_dynamic(NULL, upd, starts, &axis, 1));
  CHECK_NULL_ERR(emlx_slice_update_dynamic(src, upd, fstart, &axis, 1));
  CHECK_NULL_ERR(emlx_slice_update_dynamic(src, upd, two, &axis, 1));
  CHECK_NULL_ERR(emlx_slice_update_dynamic(src, big, starts, &axis, 1));
  CHECK_NULL_ERR(emlx_slice_update_dynamic(src, r1, starts, &axis, 1));
  CHECK_NULL_ERR(emlx_slice_update_dynamic(src, upd, two, (int[]){1, -1}, 2));
  CHECK_NULL_ERR(emlx_slice_update_dynamic(src, upd, starts, (int[]){2}, 1));
  CHECK_NULL_ERR(emlx_slice_update_dynamic(src, upd, NULL, &axis, 1));
  emlx_release(fstart), emlx_release(two), emlx_release(big), emlx_release(r1);
  emlx_release(starts), emlx_release(src), emlx_release(upd);
  free(sv), free(uv);
}

/* ---- pad ----------------------------------------------------------------------------- */

static double *ref_pad(const double *a, const int64_t *shape, int nd, const int64_t *lo,
                       const int64_t *hi, const int64_t *in, double value, int64_t *oshape) {
  for (int k = 0; k < nd; k++) {
    int64_t n = shape[k], g = n + (n > 1 ? (n - 1) * (in ? in[k] : 0) : 0);
    oshape[k] = g + lo[k] + hi[k];
  }
  int64_t m = tu_numel(oshape, nd);
  double *out = malloc((size_t)(m > 0 ? m : 1) * sizeof *out);
  int64_t p[EMLX_MAX_NDIM], q[EMLX_MAX_NDIM];
  for (int64_t i = 0; i < m; i++) {
    tu_unravel(i, oshape, nd, p);
    bool hit = true;
    for (int k = 0; k < nd && hit; k++) {
      int64_t step = (in ? in[k] : 0) + 1, r = p[k] - lo[k];
      hit = r >= 0 && r % step == 0 && r / step < shape[k];
      q[k] = hit ? r / step : 0;
    }
    out[i] = hit ? a[tu_ravel(q, shape, nd)] : value;
  }
  return out;
}

static void check_pad(emlx_array *a, const double *av, const int64_t *shape, int nd,
                      const int64_t *lo, const int64_t *hi, const int64_t *in, double value,
                      const char *what) {
  int64_t oshape[EMLX_MAX_NDIM] = {0};
  emlx_dtype d = emlx_array_dtype(a);
  double *ref = ref_pad(av, shape, nd, lo, hi, in, tu_quant(d, value), oshape);
  emlx_array *out = emlx_pad(a, lo, hi, in, nd, value);
  tu_check_array(out, d, oshape, nd, ref, 0, what);
  free(ref), emlx_release(out);
}

static void test_pad(void) {
  int64_t shape[2] = {3, 4};
  int64_t lo[2] = {1, 2}, hi[2] = {2, 0};
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_dtype d = tu_all_dtypes[di];
    double *av;
    emlx_array *a = it_make(d, shape, 2, 9, &av);
    check_pad(a, av, shape, 2, lo, hi, NULL, 3.0, "pad low/high");
    check_pad(a, av, shape, 2, (int64_t[]){-1, 1}, (int64_t[]){1, -2}, (int64_t[]){1, 2}, 1.0,
              "pad negative + interior");
    free(av), emlx_release(a);
  }
  /* transposed and broadcast inputs; crops through the interior */
  int64_t bshape[2] = {4, 3};
  double *bv;
  emlx_array *b = it_make(EMLX_FLOAT32, bshape, 2, 10, &bv);
  emlx_array *t = emlx_transpose(b, NULL, 0);
  double *tv = it_transpose2(bv, 4, 3);
  check_pad(t, tv, shape, 2, lo, hi, NULL, -1.5, "pad transposed");
  check_pad(t, tv, shape, 2, (int64_t[]){-2, -3}, (int64_t[]){-3, -1}, (int64_t[]){2, 1}, 9.0,
            "pad crops into the interior");
  check_pad(t, tv, shape, 2, (int64_t[]){-3, -2}, (int64_t[]){0, -2}, NULL, 9.0,
            "pad crops to empty");
  check_pad(t, tv, shape, 2, (int64_t[]){-5, 0}, (int64_t[]){3, 0}, NULL, 4.0,
            "pad shifts everything out");
  double row[4] = {1, 2, 3, 4};
  emlx_array *r = tu_make1(EMLX_FLOAT32, 4, row);
  emlx_array *rb = emlx_broadcast_to(r, shape, 2);
  double rbv[12];
  for (int i = 0; i < 12; i++)
    rbv[i] = row[i % 4];
  check_pad(rb, rbv, shape, 2, lo, hi, (int64_t[]){1, 0}, 0.0, "pad broadcast input");
  /* 0-d, empty and 1-d; a larger case runs over the pool */
  emlx_array *s = emlx_scalar_tensor(5.0, EMLX_INT32, EMLX_CPU);
  double five = 5;
  check_pad(s, &five, NULL, 0, NULL, NULL, NULL, 1.0, "pad 0-d");
  emlx_array *e = emlx_zeros((int64_t[]){0, 2}, 2, EMLX_FLOAT32, EMLX_CPU);
  check_pad(e, NULL, (int64_t[]){0, 2}, 2, (int64_t[]){1, 1}, (int64_t[]){1, 0}, (int64_t[]){3, 0},
            2.0, "pad empty input");
  int64_t lshape[2] = {300, 257};
  double *lv;
  emlx_array *l = it_make(EMLX_BFLOAT16, lshape, 2, 11, &lv);
  check_pad(l, lv, lshape, 2, (int64_t[]){1, 1}, (int64_t[]){1, 1}, NULL, 0.5, "pad large");
  check_pad(l, lv, lshape, 2, (int64_t[]){-1, 3}, (int64_t[]){2, -5}, (int64_t[]){0, 1}, 0.5,
            "pad large interior");

  /* pad_array: complex and 64-bit values */
  emlx_array *c = emlx_zeros((int64_t[]){2}, 1, EMLX_COMPLEX64, EMLX_CPU);
  emlx_array *cv = emlx_scalar_tensor_complex(1.5f, -2.0f, EMLX_CPU);
  emlx_array *cp = emlx_pad_array(c, (int64_t[]){1}, (int64_t[]){0}, NULL, 1, cv);
  unsigned char *raw = tu_read_raw(cp);
  float f[6] = {0};
  if (raw)
    memcpy(f, raw, sizeof f);
  CHECK(raw && f[0] == 1.5f && f[1] == -2.0f && f[2] == 0 && f[3] == 0 && f[5] == 0);
  free(raw), emlx_release(cp);
  emlx_array *i64 = emlx_zeros((int64_t[]){1}, 1, EMLX_INT64, EMLX_CPU);
  int64_t bigv = (INT64_C(1) << 62) + 1;
  emlx_array *iv = emlx_scalar_tensor_int(bigv, EMLX_INT64, EMLX_CPU);
  emlx_array *ip = emlx_pad_array(i64, (int64_t[]){0}, (int64_t[]){1}, NULL, 1, iv);
  raw = tu_read_raw(ip);
  int64_t g[2] = {0};
  if (raw)
    memcpy(g, raw, sizeof g);
  CHECK(raw && g[0] == 0 && g[1] == bigv);
  free(raw), emlx_release(ip);
  /* a pad value of another dtype is cast: 2.7 into int32 is 2 */
  emlx_array *fv = emlx_scalar_tensor(2.7, EMLX_FLOAT64, EMLX_CPU);
  emlx_array *fp = emlx_pad_array(s, NULL, NULL, NULL, 0, fv);
  CHECK(fp == s); /* no padding: the same array */
  emlx_release(fp);
  emlx_array *one = emlx_zeros((int64_t[]){1}, 1, EMLX_INT32, EMLX_CPU);
  fp = emlx_pad_array(one, (int64_t[]){1}, (int64_t[]){0}, NULL, 1, fv);
  tu_check_array(fp, EMLX_INT32, (int64_t[]){2}, 1, ((double[]){2, 0}), 0, "pad value cast");
  emlx_release(fp);

  /* errors */
  emlx_array *two = emlx_zeros((int64_t[]){2}, 1, EMLX_INT32, EMLX_CPU);
  CHECK_NULL_ERR(emlx_pad(NULL, lo, hi, NULL, 2, 0));
  CHECK_NULL_ERR(emlx_pad(t, lo, hi, NULL, 1, 0));
  CHECK_NULL_ERR(emlx_pad(t, NULL, hi, NULL, 2, 0));
  CHECK_NULL_ERR(emlx_pad(t, lo, hi, (int64_t[]){0, -1}, 2, 0));
  CHECK_NULL_ERR(emlx_pad(t, (int64_t[]){-4, 0}, (int64_t[]){0, 0}, NULL, 2, 0));
  CHECK_NULL_ERR(emlx_pad(t, (int64_t[]){INT64_MIN, 0}, (int64_t[]){0, 0}, NULL, 2, 0));
  CHECK_NULL_ERR(emlx_pad(t, lo, hi, (int64_t[]){INT64_MAX, 0}, 2, 0));
  CHECK_NULL_ERR(emlx_pad_array(t, lo, hi, NULL, 2, two));
  CHECK_NULL_ERR(emlx_pad_array(t, lo, hi, NULL, 2, NULL));

  emlx_release(two), emlx_release(one), emlx_release(fv), emlx_release(iv), emlx_release(i64);
  emlx_release(cv), emlx_release(c), emlx_release(l), emlx_release(e), emlx_release(s);
  emlx_release(rb), emlx_release(r), emlx_release(t), emlx_release(b);
  free(lv), free(bv), free(tv);
}

/* ---- concatenate / stack --------------------------------------------------------------- */

static void test_concatenate(void) {
  /* [2, 3] ++ [2, 1] ++ [2, 0] ++ [2, 2] along axis 1 (and -1), per dtype */
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_dtype d = tu_all_dtypes[di];
    int64_t w[4] = {3, 1, 0, 2};
    emlx_array *arr[4];
    double *v[4];
    for (int i = 0; i < 4; i++)
      arr[i] = it_make(d, (int64_t[]){2, w[i]}, 2, 20 + i, &v[i]);
    double ref[12];
    for (int r = 0, k = 0; r < 2; r++)
      for (int i = 0; i < 4; i++)
        for (int j = 0; j < w[i]; j++)
          ref[k++] = v[i][r * w[i] + j];
    emlx_array *out = emlx_concatenate(arr, 4, -1);
    tu_check_array(out, d, ((int64_t[]){2, 6}), 2, ref, 0, "concatenate axis -1");
    emlx_release(out);
    for (int i = 0; i < 4; i++)
      emlx_release(arr[i]), free(v[i]);
  }
  /* promotion (as MLX), transposed and broadcast inputs, axis 0 */
  struct {
    emlx_dtype a, b, want;
  } promo[] = {
      {EMLX_UINT8, EMLX_INT8, EMLX_INT16},         {EMLX_UINT64, EMLX_INT8, EMLX_FLOAT32},
      {EMLX_BFLOAT16, EMLX_FLOAT16, EMLX_FLOAT32}, {EMLX_INT32, EMLX_FLOAT16, EMLX_FLOAT16},
      {EMLX_BOOL, EMLX_INT32, EMLX_INT32},         {EMLX_FLOAT32, EMLX_COMPLEX64, EMLX_COMPLEX64}};
  for (size_t c = 0; c < sizeof promo / sizeof promo[0]; c++) {
    double *bv, *cv;
    emlx_array *b = it_make(promo[c].a, (int64_t[]){3, 2}, 2, 30, &bv);
    emlx_array *bt = emlx_transpose(b, NULL, 0); /* [2, 3] */
    emlx_array *x = it_make(promo[c].b, (int64_t[]){3}, 1, 31, &cv);
    emlx_array *xb = emlx_broadcast_to(x, (int64_t[]){4, 3}, 2);
    emlx_array *arr[2] = {bt, xb};
    emlx_array *out = emlx_concatenate(arr, 2, 0);
    double ref[18];
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++)
        ref[i * 3 + j] = tu_quant(promo[c].a, bv[j * 2 + i]);
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 3; j++)
        ref[6 + i * 3 + j] = tu_quant(promo[c].b, cv[j]);
    tu_check_array(out, promo[c].want, ((int64_t[]){6, 3}), 2, ref, 0, "concatenate promoted");
    emlx_release(out), emlx_release(xb), emlx_release(x), emlx_release(bt), emlx_release(b);
    free(bv), free(cv);
  }
  /* one array: itself; large inputs (over the pool) along the middle axis */
  double *v1;
  emlx_array *a1 = it_make(EMLX_INT8, (int64_t[]){2, 2}, 2, 40, &v1);
  emlx_array *o1 = emlx_concatenate(&a1, 1, 1);
  tu_check_array(o1, EMLX_INT8, ((int64_t[]){2, 2}), 2, v1, 0, "concatenate one");
  emlx_release(o1);
  int64_t s0[3] = {3, 700, 50}, s1[3] = {3, 300, 50};
  double *lv0, *lv1;
  emlx_array *l[2] = {it_make(EMLX_FLOAT32, s0, 3, 41, &lv0),
                      it_make(EMLX_FLOAT32, s1, 3, 42, &lv1)};
  emlx_array *lo = emlx_concatenate(l, 2, 1);
  double *lref = malloc(3 * 1000 * 50 * sizeof *lref);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 1000; j++)
      for (int k = 0; k < 50; k++)
        lref[(i * 1000 + j) * 50 + k] =
            j < 700 ? lv0[(i * 700 + j) * 50 + k] : lv1[(i * 300 + j - 700) * 50 + k];
  tu_check_array(lo, EMLX_FLOAT32, ((int64_t[]){3, 1000, 50}), 3, lref, 0, "concatenate large");
  emlx_release(lo), emlx_release(l[0]), emlx_release(l[1]);
  free(lref), free(lv0), free(lv1);

  /* errors */
  emlx_array *s = emlx_scalar_tensor(1, EMLX_INT8, EMLX_CPU);
  emlx_array *r3 = emlx_zeros((int64_t[]){3}, 1, EMLX_INT8, EMLX_CPU);
  emlx_array *m23 = emlx_zeros((int64_t[]){2, 3}, 2, EMLX_INT8, EMLX_CPU);
  CHECK_NULL_ERR(emlx_concatenate(NULL, 1, 0));
  CHECK_NULL_ERR(emlx_concatenate(&a1, 0, 0));
  CHECK_NULL_ERR(emlx_concatenate((emlx_array *[]){a1, NULL}, 2, 0));
  CHECK_NULL_ERR(emlx_concatenate((emlx_array *[]){s, s}, 2, 0));
  CHECK_NULL_ERR(emlx_concatenate((emlx_array *[]){a1, r3}, 2, 0));
  CHECK_NULL_ERR(emlx_concatenate((emlx_array *[]){a1, m23}, 2, 0)); /* [2,2] vs [2,3] axis 0 */
  CHECK_NULL_ERR(emlx_concatenate((emlx_array *[]){a1, a1}, 2, 2));
  CHECK_NULL_ERR(emlx_concatenate((emlx_array *[]){a1, a1}, 2, -3));
  emlx_release(s), emlx_release(r3), emlx_release(m23), emlx_release(a1);
  free(v1);
}

static void test_stack(void) {
  int64_t shape[2] = {2, 3};
  double *av, *bv;
  emlx_array *a = it_make(EMLX_INT16, shape, 2, 50, &av);
  emlx_array *b = it_make(EMLX_FLOAT16, shape, 2, 51, &bv);
  emlx_array *arr[2] = {a, b};
  for (int axis = -3; axis <= 2; axis++) {
    int ax = axis < 0 ? axis + 3 : axis;
    int64_t oshape[3];
    for (int i = 0, j = 0; i < 3; i++)
      oshape[i] = i == ax ? 2 : shape[j++];
    double ref[12];
    int64_t p[3];
    for (int i = 0; i < 12; i++) {
      tu_unravel(i, oshape, 3, p);
      int64_t q[2];
      for (int k = 0, j = 0; k < 3; k++)
        if (k != ax)
          q[j++] = p[k];
      ref[i] = (p[ax] == 0 ? av : bv)[q[0] * 3 + q[1]];
    }
    emlx_array *out = emlx_stack(arr, 2, axis);
    tu_check_array(out, EMLX_FLOAT16, oshape, 3, ref, 0, "stack");
    emlx_release(out);
  }
  /* 0-d arrays stack into a vector */
  emlx_array *s[3] = {emlx_scalar_tensor(1, EMLX_INT8, EMLX_CPU),
                      emlx_scalar_tensor(2.5, EMLX_FLOAT32, EMLX_CPU),
                      emlx_scalar_tensor(-3, EMLX_INT64, EMLX_CPU)};
  emlx_array *v = emlx_stack(s, 3, 0);
  tu_check_array(v, EMLX_FLOAT32, ((int64_t[]){3}), 1, ((double[]){1, 2.5, -3}), 0, "stack 0-d");
  emlx_release(v);
  emlx_array *r = emlx_zeros((int64_t[]){3, 2}, 2, EMLX_INT16, EMLX_CPU);
  CHECK_NULL_ERR(emlx_stack(NULL, 2, 0));
  CHECK_NULL_ERR(emlx_stack(arr, 0, 0));
  CHECK_NULL_ERR(emlx_stack((emlx_array *[]){a, r}, 2, 0));
  CHECK_NULL_ERR(emlx_stack((emlx_array *[]){a, NULL}, 2, 0));
  CHECK_NULL_ERR(emlx_stack(arr, 2, 3));
  CHECK_NULL_ERR(emlx_stack(arr, 2, -4));
  for (int i = 0; i < 3; i++)
    emlx_release(s[i]);
  emlx_release(r), emlx_release(a), emlx_release(b);
  free(av), free(bv);
}

/* ---- as_strided ------------------------------------------------------------------------ */

static void check_strided(emlx_array *a, const double *av, const int64_t *shape,
                          const int64_t *strides, int nd, int64_t offset, const char *what) {
  int64_t n = tu_numel(shape, nd), p[EMLX_MAX_NDIM];
  double *ref = malloc((size_t)(n > 0 ? n : 1) * sizeof *ref);
  for (int64_t i = 0; i < n; i++) {
    tu_unravel(i, shape, nd, p);
    int64_t off = offset;
    for (int k = 0; k < nd; k++)
      off += p[k] * strides[k];
    ref[i] = av[off];
  }
  emlx_array *out = emlx_as_strided(a, shape, strides, nd, offset);
  tu_check_array(out, emlx_array_dtype(a), shape, nd, ref, 0, what);
  free(ref), emlx_release(out);
}

static void test_as_strided(void) {
  double *av;
  emlx_array *a = it_make(EMLX_FLOAT64, (int64_t[]){12}, 1, 60, &av);
  /* sliding windows of 4 with step 2, zero strides, negative strides */
  check_strided(a, av, (int64_t[]){5, 4}, (int64_t[]){2, 1}, 2, 0, "as_strided windows");
  check_strided(a, av, (int64_t[]){3, 3}, (int64_t[]){0, 1}, 2, 9, "as_strided zero stride");
  check_strided(a, av, (int64_t[]){4, 3}, (int64_t[]){-3, 1}, 2, 9, "as_strided negative");
  /* it shares a's buffer */
  emlx_array *w = emlx_as_strided(a, (int64_t[]){2}, (int64_t[]){5}, 1, 1);
  CHECK(w && emlx_eval(&w, 1) == 0 && emlx_eval(&a, 1) == 0 && emlx_shares_buffer(w, a));
  emlx_release(w);
  /* a non-contiguous input is addressed in its logical order */
  double *bv;
  emlx_array *b = it_make(EMLX_UINT8, (int64_t[]){3, 4}, 2, 61, &bv);
  emlx_array *bt = emlx_transpose(b, NULL, 0);
  double *tv = it_transpose2(bv, 3, 4);
  check_strided(bt, tv, (int64_t[]){6, 2}, (int64_t[]){2, 1}, 2, 0, "as_strided transposed");
  check_strided(bt, tv, (int64_t[]){2, 2}, (int64_t[]){2, 1}, 2, 5, "as_strided offset");
  /* strides NULL: row-major; empty views */
  emlx_array *rm = emlx_as_strided(a, (int64_t[]){3, 4}, NULL, 2, 0);
  tu_check_array(rm, EMLX_FLOAT64, ((int64_t[]){3, 4}), 2, av, 0, "as_strided row-major");
  emlx_release(rm);
  emlx_array *ev = emlx_as_strided(a, (int64_t[]){0, 5}, (int64_t[]){100, 100}, 2, 12);
  CHECK(ev && emlx_size(ev) == 0 && emlx_eval(&ev, 1) == 0);
  emlx_release(ev);
  /* errors: every reachable element must lie inside a */
  CHECK_NULL_ERR(emlx_as_strided(NULL, (int64_t[]){2}, NULL, 1, 0));
  CHECK_NULL_ERR(emlx_as_strided(a, (int64_t[]){13}, NULL, 1, 0));
  CHECK_NULL_ERR(emlx_as_strided(a, (int64_t[]){4}, (int64_t[]){3}, 1, 3));
  CHECK_NULL_ERR(emlx_as_strided(a, (int64_t[]){4}, (int64_t[]){-1}, 1, 2));
  CHECK_NULL_ERR(emlx_as_strided(a, (int64_t[]){2}, NULL, 1, -1));
  CHECK_NULL_ERR(emlx_as_strided(a, (int64_t[]){0}, NULL, 1, 13));
  CHECK_NULL_ERR(emlx_as_strided(a, (int64_t[]){2, 2}, (int64_t[]){INT64_MAX, 1}, 2, 0));
  CHECK_NULL_ERR(emlx_as_strided(a, (int64_t[]){-1}, NULL, 1, 0));
  CHECK_NULL_ERR(emlx_as_strided(a, NULL, NULL, 1, 0));
  emlx_release(bt), emlx_release(b), emlx_release(a);
  free(av), free(bv), free(tv);
}

/* ---- view ------------------------------------------------------------------------------ */

/* The row-major bytes of a's logical elements. */
static unsigned char *logical_bytes(emlx_array *a) { return tu_read_raw(a); }

static void check_view(emlx_array *a, emlx_dtype to, const int64_t *want_shape, int nd,
                       const char *what) {
  unsigned char *src = logical_bytes(a);
  emlx_array *v = emlx_view(a, to);
  bool ok = v && emlx_array_dtype(v) == to && emlx_ndim(v) == nd;
  for (int i = 0; ok && i < nd; i++)
    ok = emlx_shape(v)[i] == want_shape[i];
  if (CHECK_MSG(ok, "%s: dtype and shape", what)) {
    unsigned char *got = tu_read_raw(v);
    CHECK_MSG(got && src && memcmp(got, src, emlx_nbytes(a)) == 0, "%s: same bytes", what);
    free(got);
  }
  free(src), emlx_release(v);
}

static void test_view(void) {
  float fv[8] = {1, 2, 3, 4, -0.5f, 1e30f, -7, 0};
  emlx_array *f = emlx_from_blob(fv, EMLX_FLOAT32, (int64_t[]){2, 4}, 2, EMLX_CPU);
  check_view(f, EMLX_UINT8, (int64_t[]){2, 16}, 2, "view f32 as u8");
  check_view(f, EMLX_BFLOAT16, (int64_t[]){2, 8}, 2, "view f32 as bf16");
  check_view(f, EMLX_INT32, (int64_t[]){2, 4}, 2, "view f32 as i32");
  check_view(f, EMLX_FLOAT64, (int64_t[]){2, 2}, 2, "view f32 as f64");
  check_view(f, EMLX_COMPLEX64, (int64_t[]){2, 2}, 2, "view f32 as c64");
  /* shares the buffer when contiguous */
  emlx_array *u = emlx_view(f, EMLX_UINT16);
  CHECK(u && emlx_eval(&u, 1) == 0 && emlx_eval(&f, 1) == 0 && emlx_shares_buffer(u, f));
  /* and back */
  emlx_array *back = emlx_view(u, EMLX_FLOAT32);
  tu_check_array(back, EMLX_FLOAT32, ((int64_t[]){2, 4}), 2,
                 ((double[]){1, 2, 3, 4, -0.5, (double)1e30f, -7, 0}), 0, "view round trip");
  emlx_release(back), emlx_release(u);
  /* non-contiguous inputs: transposed, stepped, offset */
  emlx_array *t = emlx_transpose(f, NULL, 0); /* [4, 2] */
  check_view(t, EMLX_INT64, (int64_t[]){4, 1}, 2, "view transposed as i64");
  check_view(t, EMLX_UINT8, (int64_t[]){4, 8}, 2, "view transposed as u8");
  check_view(t, EMLX_INT32, (int64_t[]){4, 2}, 2, "view transposed same size");
  emlx_array *sl = emlx_slice(f, (int64_t[]){0, 1}, (int64_t[]){2, 3}, NULL, 2); /* [2, 2] */
  check_view(sl, EMLX_FLOAT64, (int64_t[]){2, 1}, 2, "view offset slice as f64");
  check_view(sl, EMLX_FLOAT16, (int64_t[]){2, 4}, 2, "view offset slice as f16");
  emlx_array *st = emlx_slice(f, (int64_t[]){0, 0}, (int64_t[]){2, 4}, (int64_t[]){1, 2}, 2);
  check_view(st, EMLX_UINT16, (int64_t[]){2, 4}, 2, "view stepped as u16");
  /* u8 -> f32 -> bool, 0-d of equal size */
  unsigned char bytes[12] = {0, 0, 128, 63, 0, 0, 0, 64, 1, 0, 2, 0};
  emlx_array *b = emlx_from_blob(bytes, EMLX_UINT8, (int64_t[]){12}, 1, EMLX_CPU);
  check_view(b, EMLX_FLOAT32, (int64_t[]){3}, 1, "view u8 as f32");
  check_view(b, EMLX_BOOL, (int64_t[]){12}, 1, "view u8 as bool");
  check_view(b, EMLX_INT16, (int64_t[]){6}, 1, "view u8 as i16");
  emlx_array *s = emlx_scalar_tensor(1.0, EMLX_FLOAT32, EMLX_CPU);
  check_view(s, EMLX_INT32, NULL, 0, "view 0-d");
  emlx_array *e = emlx_zeros((int64_t[]){3, 0}, 2, EMLX_FLOAT32, EMLX_CPU);
  check_view(e, EMLX_INT64, (int64_t[]){3, 0}, 2, "view empty");
  CHECK(emlx_view(f, EMLX_FLOAT32) == f);
  emlx_release(f);
  /* errors */
  emlx_array *odd = emlx_zeros((int64_t[]){2, 3}, 2, EMLX_FLOAT32, EMLX_CPU);
  CHECK_NULL_ERR(emlx_view(NULL, EMLX_INT8));
  CHECK_NULL_ERR(emlx_view(odd, EMLX_FLOAT64));
  CHECK_NULL_ERR(emlx_view(b, EMLX_INT64)); /* 12 bytes, not a multiple of 8 */
  CHECK_NULL_ERR(emlx_view(s, EMLX_FLOAT16));
  CHECK_NULL_ERR(emlx_view(s, EMLX_DTYPE_COUNT));
  emlx_release(odd), emlx_release(e), emlx_release(s), emlx_release(b);
  emlx_release(st), emlx_release(sl), emlx_release(t), emlx_release(f);
}

/* Outputs of 32 MiB and more take the streaming-store path. */
static void test_large_outputs(void) {
  int64_t n = INT64_C(16) << 20;
  unsigned char *x = malloc((size_t)n), *y = malloc((size_t)n);
  for (int64_t i = 0; i < n; i++)
    x[i] = (unsigned char)(i * 7 + 1), y[i] = (unsigned char)(i * 13 + 5);
  emlx_array *a = emlx_from_blob(x, EMLX_UINT8, &n, 1, EMLX_CPU);
  emlx_array *b = emlx_from_blob(y, EMLX_UINT8, &n, 1, EMLX_CPU);
  emlx_array *ab[2] = {a, b};
  emlx_array *c = emlx_concatenate(ab, 2, 0);
  unsigned char *got = tu_read_raw(c);
  CHECK_MSG(got && memcmp(got, x, (size_t)n) == 0 && memcmp(got + n, y, (size_t)n) == 0,
            "concatenate of 32 MiB");
  free(got), emlx_release(c);
  /* pad a [2048, 16384] view of x ++ y by one on each side */
  emlx_array *m = emlx_concatenate(ab, 2, 0);
  emlx_array *m2 = m ? emlx_reshape(m, (int64_t[]){2048, 16384}, 2) : NULL;
  emlx_array *p = emlx_pad(m2, (int64_t[]){1, 1}, (int64_t[]){1, 1}, NULL, 2, 9.0);
  got = tu_read_raw(p);
  bool ok = got != NULL;
  for (int64_t r = 0; ok && r < 2050; r++) {
    const unsigned char *row = got + r * 16386;
    if (r == 0 || r == 2049) {
      for (int64_t j = 0; ok && j < 16386; j++)
        ok = row[j] == 9;
      continue;
    }
    const unsigned char *src = r - 1 < 1024 ? x + (r - 1) * 16384 : y + (r - 1025) * 16384;
    ok = row[0] == 9 && row[16385] == 9 && memcmp(row + 1, src, 16384) == 0;
  }
  CHECK_MSG(ok, "pad of a 32 MiB array");
  free(got), emlx_release(p), emlx_release(m2), emlx_release(m);
  emlx_release(a), emlx_release(b);
  free(x), free(y);
}

int main(void) {
  test_slice_update_dtypes();
  test_slice_update_layouts();
  test_slice_update_in_place();
  test_slice_update_dynamic();
  test_pad();
  test_concatenate();
  test_stack();
  test_as_strided();
  test_view();
  test_large_outputs();
  return tu_finish();
}
