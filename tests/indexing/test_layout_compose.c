/* test_layout_compose.c — flatten, moveaxis, swapaxes, flip, roll, tile,
 * repeat, split / split_at, diagonal, trace, tril / triu, outer,
 * put_along_axis, topk, partition / argpartition and addmm against
 * references computed here with index arithmetic (numpy's definitions),
 * on contiguous, strided and empty inputs, and every error case. Runs
 * again at every ISA level. */
#include "test_util.h"

/* a 3 x 4 x 5 array with value 100 i + 10 j + k */
static emlx_array *cube(double *v) {
  for (int i = 0; i < 60; i++)
    v[i] = 100 * (i / 20) + 10 * ((i / 5) % 4) + i % 5;
  return tu_make(EMLX_FLOAT32, (int64_t[]){3, 4, 5}, 3, v);
}

/* Checks r against f(idx of r) = value of the cube at the mapped index. */
typedef void (*map_fn)(const int64_t *oi, int64_t *ci, const void *ctx);
static void check_map(emlx_array *r, const int64_t *shape, int nd, const double *v, map_fn f,
                      const void *ctx, const char *what) {
  int64_t n = tu_numel(shape, nd);
  double *ref = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  const int64_t cs[3] = {3, 4, 5};
  for (int64_t i = 0; i < n; i++) {
    int64_t oi[16], ci[3];
    tu_unravel(i, shape, nd, oi);
    f(oi, ci, ctx);
    ref[i] = v[tu_ravel(ci, cs, 3)];
  }
  tu_check_array(r, EMLX_FLOAT32, shape, nd, ref, 0, what);
  free(ref);
}

static void m_moveaxis(const int64_t *o, int64_t *c, const void *x) { /* (5,3,4): axis 2 -> 0 */
  (void)x;
  c[0] = o[1], c[1] = o[2], c[2] = o[0];
}
static void m_swap(const int64_t *o, int64_t *c, const void *x) {
  (void)x;
  c[0] = o[2], c[1] = o[1], c[2] = o[0];
}
static void m_flip02(const int64_t *o, int64_t *c, const void *x) {
  (void)x;
  c[0] = 2 - o[0], c[1] = o[1], c[2] = 4 - o[2];
}
static void m_roll(const int64_t *o, int64_t *c, const void *x) { /* shifts (1, -2) on axes 0, 2 */
  (void)x;
  c[0] = (o[0] - 1 + 3) % 3, c[1] = o[1], c[2] = (o[2] + 2) % 5;
}
static void m_tile(const int64_t *o, int64_t *c, const void *x) { /* reps (2, 1, 3) */
  (void)x;
  c[0] = o[0] % 3, c[1] = o[1] % 4, c[2] = o[2] % 5;
}
static void m_tile4(const int64_t *o, int64_t *c, const void *x) { /* reps (2, 1, 1, 2): rank 4 */
  (void)x;
  c[0] = o[1], c[1] = o[2], c[2] = o[3] % 5;
}
static void m_repeat1(const int64_t *o, int64_t *c, const void *x) { /* 3 times along axis 1 */
  (void)x;
  c[0] = o[0], c[1] = o[1] / 3, c[2] = o[2];
}
static void m_diag(const int64_t *o, int64_t *c, const void *x) { /* axes (0, 2) offset off */
  int64_t off = *(const int64_t *)x;
  c[1] = o[0];
  c[0] = o[1] + (off < 0 ? -off : 0);
  c[2] = o[1] + (off > 0 ? off : 0);
}

static void test_views(void) {
  double v[60];
  emlx_array *a = cube(v);
  emlx_array *f = emlx_flatten(a, 1, -1);
  double ref[60];
  for (int i = 0; i < 60; i++)
    ref[i] = v[i];
  tu_check_array(f, EMLX_FLOAT32, ((int64_t[]){3, 20}), 2, ref, 0, "flatten 1..-1");
  emlx_release(f);
  f = emlx_flatten(a, 0, -1);
  tu_check_array(f, EMLX_FLOAT32, (int64_t[]){60}, 1, ref, 0, "flatten all");
  emlx_release(f);
  emlx_array *s = emlx_scalar_tensor(4, EMLX_FLOAT32, EMLX_CPU);
  f = emlx_flatten(s, 0, -1);
  tu_check_array(f, EMLX_FLOAT32, (int64_t[]){1}, 1, ((double[]){4}), 0, "flatten 0-d");
  emlx_release(f);
  emlx_release(s);
  CHECK_NULL_ERR(emlx_flatten(a, 2, 1));
  CHECK_NULL_ERR(emlx_flatten(a, 0, 3));

  emlx_array *m = emlx_moveaxis(a, -1, 0);
  check_map(m, (int64_t[]){5, 3, 4}, 3, v, m_moveaxis, NULL, "moveaxis");
  CHECK(emlx_shares_buffer(m, a));
  emlx_release(m);
  m = emlx_swapaxes(a, 0, -1);
  check_map(m, (int64_t[]){5, 4, 3}, 3, v, m_swap, NULL, "swapaxes");
  emlx_release(m);
  CHECK_NULL_ERR(emlx_moveaxis(a, 3, 0));
  CHECK_NULL_ERR(emlx_swapaxes(a, 0, -4));

  int fa[2] = {0, -1};
  m = emlx_flip(a, fa, 2);
  check_map(m, (int64_t[]){3, 4, 5}, 3, v, m_flip02, NULL, "flip");
  emlx_release(m);
  m = emlx_flip(a, NULL, 0);
  emlx_array *m2 = emlx_flip(m, NULL, 0); /* flipping twice is the identity */
  tu_check_array(m2, EMLX_FLOAT32, ((int64_t[]){3, 4, 5}), 3, v, 0, "flip twice");
  emlx_release(m2);
  emlx_release(m);
  CHECK_NULL_ERR(emlx_flip(a, (int[]){0, 0}, 2));

  for (int64_t off = -3; off <= 5; off++) {
    emlx_array *d = emlx_diagonal(a, off, 0, 2);
    int64_t len = 0, r0 = off < 0 ? -off : 0, c0 = off > 0 ? off : 0;
    if (r0 < 3 && c0 < 5)
      len = 3 - r0 < 5 - c0 ? 3 - r0 : 5 - c0;
    check_map(d, ((int64_t[]){4, len}), 2, v, m_diag, &off, "diagonal");
    emlx_release(d);
    emlx_array *t = emlx_trace(a, off, 0, 2);
    double tr[4] = {0};
    for (int j = 0; j < 4; j++)
      for (int64_t k = 0; k < len; k++)
        tr[j] += v[(k + r0) * 20 + j * 5 + k + c0];
    tu_check_array(t, EMLX_FLOAT32, (int64_t[]){4}, 1, tr, 0, "trace");
    emlx_release(t);
  }
  CHECK_NULL_ERR(emlx_diagonal(a, 0, 1, 1));
  CHECK_NULL_ERR(emlx_diagonal(a, 0, 0, 3));
  emlx_array *one = tu_make1(EMLX_FLOAT32, 2, (double[]){1, 2});
  CHECK_NULL_ERR(emlx_diagonal(one, 0, 0, 1));
  CHECK_NULL_ERR(emlx_tril(one, 0));
  emlx_release(one);
  emlx_release(a);
}

static void test_copies(void) {
  double v[60];
  emlx_array *a = cube(v);
  emlx_array *r = emlx_roll(a, (int64_t[]){1, -2}, (int[]){0, 2}, 2);
  check_map(r, (int64_t[]){3, 4, 5}, 3, v, m_roll, NULL, "roll");
  emlx_release(r);
  r = emlx_roll(a, (int64_t[]){-61}, NULL, 1); /* flat roll, shift beyond the size */
  double ref[60];
  for (int i = 0; i < 60; i++)
    ref[i] = v[(i + 1) % 60];
  tu_check_array(r, EMLX_FLOAT32, ((int64_t[]){3, 4, 5}), 3, ref, 0, "roll flattened");
  emlx_release(r);
  CHECK_NULL_ERR(emlx_roll(a, (int64_t[]){1, 2}, NULL, 2));
  CHECK_NULL_ERR(emlx_roll(a, (int64_t[]){1}, (int[]){3}, 1));

  r = emlx_tile(a, (int64_t[]){2, 1, 3}, 3);
  check_map(r, (int64_t[]){6, 4, 15}, 3, v, m_tile, NULL, "tile");
  emlx_release(r);
  r = emlx_tile(a, (int64_t[]){2, 1, 1, 2}, 4);
  check_map(r, (int64_t[]){2, 3, 4, 10}, 4, v, m_tile4, NULL, "tile to higher rank");
  emlx_release(r);
  r = emlx_tile(a, (int64_t[]){0}, 1);
  CHECK(r && emlx_size(r) == 0 && emlx_shape(r)[2] == 0);
  emlx_release(r);
  CHECK_NULL_ERR(emlx_tile(a, (int64_t[]){-1}, 1));

  r = emlx_repeat(a, 3, 1);
  check_map(r, (int64_t[]){3, 12, 5}, 3, v, m_repeat1, NULL, "repeat");
  emlx_release(r);
  r = emlx_repeat(a, 2, EMLX_AXIS_NONE);
  double rr[120];
  for (int i = 0; i < 120; i++)
    rr[i] = v[i / 2];
  tu_check_array(r, EMLX_FLOAT32, (int64_t[]){120}, 1, rr, 0, "repeat flattened");
  emlx_release(r);
  CHECK_NULL_ERR(emlx_repeat(a, -1, 0));
  CHECK_NULL_ERR(emlx_repeat(a, 2, 3));

  emlx_array *parts[6] = {NULL};
  CHECK_OK(emlx_split(a, 2, 1, parts));
  for (int p = 0; p < 2; p++) {
    double pr[30];
    for (int i = 0; i < 30; i++)
      pr[i] = v[(i / 10) * 20 + (p * 2 + (i / 5) % 2) * 5 + i % 5];
    tu_check_array(parts[p], EMLX_FLOAT32, ((int64_t[]){3, 2, 5}), 3, pr, 0, "split");
    emlx_release(parts[p]);
  }
  CHECK_FAILS(emlx_split(a, 3, 1, parts)); /* 4 is not a multiple of 3 */
  CHECK_FAILS(emlx_split(a, 0, 1, parts));
  CHECK_OK(emlx_split_at(a, (int64_t[]){1, -1, 2}, 3, -1, parts)); /* [0:1] [1:4] [4:4] [4:5] */
  static const int64_t lo[4] = {0, 1, 4, 4}, hi[4] = {1, 4, 4, 5};
  for (int p = 0; p < 4; p++) {
    int64_t w = hi[p] - lo[p];
    double pr[60];
    for (int64_t i = 0; i < 12 * w; i++)
      pr[i] = v[(i / w) * 5 + lo[p] + i % w];
    tu_check_array(parts[p], EMLX_FLOAT32, ((int64_t[]){3, 4, w}), 3, pr, 0, "split_at");
    emlx_release(parts[p]);
  }
  CHECK_FAILS(emlx_split_at(a, (int64_t[]){1}, 1, 3, parts));

  /* tril / triu against the index rule, on a strided (transposed) input */
  emlx_array *t = emlx_swapaxes(a, 1, 2); /* (3, 5, 4) */
  for (int64_t k = -2; k <= 2; k++) {
    emlx_array *lw = emlx_tril(t, k), *up = emlx_triu(t, k);
    double rl[60], ru[60];
    for (int i = 0; i < 60; i++) {
      int64_t b = i / 20, row = (i / 4) % 5, col = i % 4;
      double x = v[b * 20 + col * 5 + row];
      rl[i] = col - row <= k ? x : 0;
      ru[i] = col - row >= k ? x : 0;
    }
    tu_check_array(lw, EMLX_FLOAT32, ((int64_t[]){3, 5, 4}), 3, rl, 0, "tril");
    tu_check_array(up, EMLX_FLOAT32, ((int64_t[]){3, 5, 4}), 3, ru, 0, "triu");
    emlx_release(lw);
    emlx_release(up);
  }
  emlx_release(t);

  emlx_array *x = tu_make1(EMLX_INT32, 3, (double[]){1, -2, 3});
  emlx_array *y = tu_make(EMLX_FLOAT32, (int64_t[]){2, 2}, 2, (double[]){0.5, 1, 2, -1});
  emlx_array *o = emlx_outer(x, y);
  double orf[12];
  const double xv[3] = {1, -2, 3}, yv[4] = {0.5, 1, 2, -1};
  for (int i = 0; i < 12; i++)
    orf[i] = xv[i / 4] * yv[i % 4];
  tu_check_array(o, EMLX_FLOAT32, ((int64_t[]){3, 4}), 2, orf, 0, "outer");
  emlx_release(o);
  emlx_release(x);
  emlx_release(y);
  emlx_release(a);
}

static void test_put_along_axis(void) {
  double v[60];
  emlx_array *a = cube(v);
  /* along axis 1: indices (3, 2, 5) */
  double iv[30], vals[30];
  for (int i = 0; i < 30; i++) {
    iv[i] = (i * 7) % 4 - (i % 3 == 0 ? 4 : 0); /* some negative */
    vals[i] = -1 - i;
  }
  emlx_array *idx = tu_make(EMLX_INT32, (int64_t[]){3, 2, 5}, 3, iv);
  emlx_array *val = tu_make(EMLX_FLOAT32, (int64_t[]){3, 2, 5}, 3, vals);
  emlx_array *r = emlx_put_along_axis(a, idx, val, 1, NULL);
  double ref[60];
  memcpy(ref, v, sizeof ref);
  for (int i = 0; i < 30; i++) { /* row-major order: the last write wins */
    int64_t b = i / 10, j = (i / 5) % 2, k = i % 5;
    int64_t t = (int64_t)iv[i] < 0 ? (int64_t)iv[i] + 4 : (int64_t)iv[i];
    (void)j;
    ref[b * 20 + t * 5 + k] = vals[i];
  }
  tu_check_array(r, EMLX_FLOAT32, ((int64_t[]){3, 4, 5}), 3, ref, 0, "put_along_axis");
  emlx_release(r);
  /* a scalar value broadcast, indices broadcast along axis 0 */
  emlx_array *i2 = tu_make(EMLX_INT64, (int64_t[]){1, 1, 5}, 3, (double[]){0, 1, 2, 3, 0});
  emlx_array *z = emlx_scalar_tensor(9, EMLX_FLOAT64, EMLX_CPU);
  r = emlx_put_along_axis(a, i2, z, -2, NULL);
  memcpy(ref, v, sizeof ref);
  const int tk[5] = {0, 1, 2, 3, 0};
  for (int b = 0; b < 3; b++)
    for (int k = 0; k < 5; k++)
      ref[b * 20 + tk[k] * 5 + k] = 9;
  tu_check_array(r, EMLX_FLOAT32, ((int64_t[]){3, 4, 5}), 3, ref, 0, "put_along_axis broadcast");
  emlx_release(r);
  emlx_array *bad =
      tu_make(EMLX_INT64, (int64_t[]){2, 1, 5}, 3, (double[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  CHECK_NULL_ERR(emlx_put_along_axis(a, bad, z, 1, NULL));
  CHECK_NULL_ERR(emlx_put_along_axis(a, i2, z, 3, NULL));
  emlx_array *flat1 = tu_make1(EMLX_INT32, 2, (double[]){0, 0});
  CHECK_NULL_ERR(emlx_put_along_axis(a, flat1, z, 1, NULL)); /* rank mismatch */
  r = emlx_put_along_axis(a, flat1, z, EMLX_AXIS_NONE, NULL);
  memcpy(ref, v, sizeof ref);
  ref[0] = 9;
  tu_check_array(r, EMLX_FLOAT32, ((int64_t[]){3, 4, 5}), 3, ref, 0, "put_along_axis flattened");
  emlx_release(r);
  emlx_index_options chk = {.bounds = EMLX_BOUNDS_CHECK};
  emlx_array *oob = tu_make(EMLX_INT64, (int64_t[]){1, 1, 1}, 3, (double[]){7});
  r = emlx_put_along_axis(a, oob, z, 1, &chk);
  CHECK(r != NULL);
  if (r)
    CHECK_FAILS(emlx_eval(&r, 1));
  emlx_release(r);
  emlx_release(oob);
  emlx_release(flat1);
  emlx_release(bad);
  emlx_release(i2);
  emlx_release(z);
  emlx_release(idx);
  emlx_release(val);
  emlx_release(a);
}

static int cmp_d(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static void test_topk_partition(void) {
  tu_rng rng = {77};
  double v[4 * 9];
  for (int i = 0; i < 36; i++)
    v[i] = floor(tu_uniform(&rng, -5, 5)); /* ties */
  emlx_array *a = tu_make(EMLX_FLOAT32, (int64_t[]){4, 9}, 2, v);
  for (int k = 0; k <= 9; k += 3) {
    emlx_array *t = emlx_topk(a, k, -1);
    double ref[36];
    for (int r = 0; r < 4; r++) {
      double row[9];
      memcpy(row, v + 9 * r, sizeof row);
      qsort(row, 9, sizeof(double), cmp_d);
      for (int j = 0; j < k; j++)
        ref[r * k + j] = row[9 - k + j];
    }
    tu_check_array(t, EMLX_FLOAT32, ((int64_t[]){4, k}), 2, ref, 0, "topk");
    emlx_release(t);
  }
  emlx_array *tf = emlx_topk(a, 2, EMLX_AXIS_NONE);
  double all[36];
  memcpy(all, v, sizeof all);
  qsort(all, 36, sizeof(double), cmp_d);
  tu_check_array(tf, EMLX_FLOAT32, (int64_t[]){2}, 1, all + 34, 0, "topk flattened");
  emlx_release(tf);
  CHECK_NULL_ERR(emlx_topk(a, 10, 1));
  CHECK_NULL_ERR(emlx_topk(a, -1, 1));
  CHECK_NULL_ERR(emlx_topk(a, 1, 2));
  /* partition: the kth element in place, <= before, >= after */
  for (int kth = -9; kth < 9; kth += 4) {
    emlx_array *p = emlx_partition(a, kth, 1), *ap = emlx_argpartition(a, kth, 1);
    double *pv = tu_read(p), *iv = tu_read(ap);
    int kk = kth < 0 ? kth + 9 : kth;
    bool ok = pv && iv && emlx_array_dtype(ap) == EMLX_UINT32;
    for (int r = 0; ok && r < 4; r++) {
      double row[9];
      memcpy(row, v + 9 * r, sizeof row);
      qsort(row, 9, sizeof(double), cmp_d);
      ok = pv[r * 9 + kk] == row[kk];
      for (int j = 0; j < 9; j++) {
        ok = ok && (j < kk ? pv[r * 9 + j] <= row[kk] : pv[r * 9 + j] >= row[kk]);
        ok = ok && v[r * 9 + (int)iv[r * 9 + j]] == pv[r * 9 + j]; /* indices agree */
      }
    }
    CHECK_MSG(ok, "partition / argpartition at kth %d", kth);
    free(pv);
    free(iv);
    emlx_release(p);
    emlx_release(ap);
  }
  CHECK_NULL_ERR(emlx_partition(a, 9, 1));
  CHECK_NULL_ERR(emlx_argpartition(a, -10, 1));
  emlx_array *s = emlx_scalar_tensor(1, EMLX_FLOAT32, EMLX_CPU);
  CHECK_NULL_ERR(emlx_argpartition(s, 0, 0));
  emlx_release(s);
  emlx_release(a);
}

static void test_addmm(void) {
  double av[6] = {1, 2, 3, 4, 5, 6}, bv[6] = {1, 0, -1, 2, 0.5, 1}, cv[2] = {10, -10};
  emlx_array *a = tu_make(EMLX_FLOAT32, (int64_t[]){2, 3}, 2, av);
  emlx_array *b = tu_make(EMLX_FLOAT32, (int64_t[]){3, 2}, 2, bv);
  emlx_array *c = tu_make1(EMLX_FLOAT32, 2, cv);
  emlx_array *r = emlx_addmm(c, a, b, 2.0, -0.5);
  double ref[4];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      double s = 0;
      for (int k = 0; k < 3; k++)
        s += av[i * 3 + k] * bv[k * 2 + j];
      ref[i * 2 + j] = 2 * s - 0.5 * cv[j];
    }
  tu_check_array(r, EMLX_FLOAT32, ((int64_t[]){2, 2}), 2, ref, 1, "addmm");
  emlx_release(r);
  CHECK_NULL_ERR(emlx_addmm(c, a, a, 1, 1));
  CHECK_NULL_ERR(emlx_addmm(NULL, a, b, 1, 1));
  emlx_release(a);
  emlx_release(b);
  emlx_release(c);
}

int main(void) {
  test_views();
  test_copies();
  test_put_along_axis();
  test_topk_partition();
  test_addmm();
  return tu_finish();
}
