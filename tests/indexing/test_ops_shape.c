/* test_ops_shape.c — broadcast_to, reshape (with -1), transpose (every
 * permutation of a 4-D array, negative axes), slice (random starts, stops and
 * steps of either sign against Python's slice rules, extreme indices),
 * squeeze, expand_dims and copy, on contiguous, strided, lazy and empty
 * inputs, and all their error cases (incompatible broadcast, size mismatch,
 * bad or duplicate axes, bad permutations, zero steps, NULL inputs). */
#include "test_util.h"

static void test_broadcast_to(void) {
  double v[6] = {1, 2, 3, 4, 5, 6};
  int64_t s3[1] = {3}, s31[2] = {3, 1}, s23[2] = {2, 3};
  emlx_array *r = tu_make(EMLX_INT16, s3, 1, v), *c = tu_make(EMLX_FLOAT64, s31, 2, v);
  int64_t o1[2] = {2, 3}, o2[3] = {2, 3, 4};
  emlx_array *b1 = emlx_broadcast_to(r, o1, 2), *b2 = emlx_broadcast_to(c, o2, 3);
  double w1[6] = {1, 2, 3, 1, 2, 3}, w2[24];
  for (int i = 0; i < 24; i++)
    w2[i] = v[(i / 4) % 3];
  tu_check_array(b1, EMLX_INT16, o1, 2, w1, 0, "broadcast {3} -> {2,3}");
  tu_check_array(b2, EMLX_FLOAT64, o2, 3, w2, 0, "broadcast {3,1} -> {2,3,4}");
  /* same shape, 0-d, and size 1 -> 0 */
  emlx_array *m = tu_make(EMLX_FLOAT32, s23, 2, v);
  emlx_array *b3 = emlx_broadcast_to(m, s23, 2);
  tu_check_array(b3, EMLX_FLOAT32, s23, 2, v, 0, "broadcast to the same shape");
  emlx_array *sc = tu_make(EMLX_UINT8, NULL, 0, v);
  emlx_array *b4 = emlx_broadcast_to(sc, o2, 3);
  double ones[24];
  for (int i = 0; i < 24; i++)
    ones[i] = 1;
  tu_check_array(b4, EMLX_UINT8, o2, 3, ones, 0, "broadcast 0-d -> {2,3,4}");
  int64_t one[1] = {1}, zero[2] = {4, 0};
  emlx_array *u = tu_make(EMLX_FLOAT32, one, 1, v);
  emlx_array *b5 = emlx_broadcast_to(u, zero, 2);
  tu_check_array(b5, EMLX_FLOAT32, zero, 2, v, 0, "broadcast {1} -> {4,0}");
  /* a broadcast of a lazy, transposed input */
  emlx_array *mm = emlx_multiply(m, m), *mt = emlx_transpose(mm, NULL, 0); /* {3,2} */
  int64_t o3[3] = {2, 3, 2};
  emlx_array *b6 = emlx_broadcast_to(mt, o3, 3);
  double w6[12];
  for (int i = 0; i < 12; i++) {
    int j = (i / 2) % 3, k = i % 2;
    w6[i] = v[k * 3 + j] * v[k * 3 + j];
  }
  tu_check_array(b6, EMLX_FLOAT32, o3, 3, w6, 0, "broadcast of a lazy transpose");
  /* errors */
  int64_t bad1[2] = {2, 4}, bad2[1] = {3}, bad3[2] = {-1, 3}, bad4[2] = {3, 2};
  CHECK_NULL_ERR(emlx_broadcast_to(r, bad1, 2)); /* 3 -> 4 */
  CHECK_NULL_ERR(emlx_broadcast_to(m, bad2, 1)); /* fewer dims */
  CHECK_NULL_ERR(emlx_broadcast_to(r, bad3, 2)); /* negative dim */
  CHECK_NULL_ERR(emlx_broadcast_to(m, bad4, 2));
  int64_t to0[1] = {0};
  CHECK_NULL_ERR(emlx_broadcast_to(r, to0, 1)); /* 3 -> 0 */
  CHECK_NULL_ERR(emlx_broadcast_to(m, NULL, 2));
  CHECK_NULL_ERR(emlx_broadcast_to(NULL, o1, 2));
  int64_t many[EMLX_MAX_NDIM + 1];
  for (int i = 0; i <= EMLX_MAX_NDIM; i++)
    many[i] = 1;
  CHECK_NULL_ERR(emlx_broadcast_to(sc, many, EMLX_MAX_NDIM + 1));
  emlx_release(r), emlx_release(c), emlx_release(b1), emlx_release(b2), emlx_release(m);
  emlx_release(b3), emlx_release(sc), emlx_release(b4), emlx_release(u), emlx_release(b5);
  emlx_release(mm), emlx_release(mt), emlx_release(b6);
}

static void test_reshape(void) {
  int64_t s234[3] = {2, 3, 4};
  double *v = tu_iota(24, 0, 1);
  emlx_array *a = tu_make(EMLX_INT32, s234, 3, v);
  struct {
    int n;
    int64_t s[4];
    int64_t want[4];
  } cases[] = {{1, {-1}, {24}},
               {2, {4, -1}, {4, 6}},
               {3, {-1, 2, 3}, {4, 2, 3}},
               {4, {2, 2, 3, 2}, {2, 2, 3, 2}},
               {2, {24, 1}, {24, 1}},
               {4, {1, -1, 1, 1}, {1, 24, 1, 1}}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    emlx_array *r = emlx_reshape(a, cases[i].s, cases[i].n);
    tu_check_array(r, EMLX_INT32, cases[i].want, cases[i].n, v, 0, "reshape");
    emlx_release(r);
  }
  /* of a transpose (must copy in logical order) and of a negative-step slice */
  emlx_array *t = emlx_transpose(a, NULL, 0); /* {4,3,2} */
  int64_t s12[2] = {12, 2};
  emlx_array *rt = emlx_reshape(t, s12, 2);
  double wt[24];
  for (int i = 0; i < 24; i++) {
    int64_t idx[3], ts[3] = {4, 3, 2};
    tu_unravel(i, ts, 3, idx);
    wt[i] = v[idx[2] * 12 + idx[1] * 4 + idx[0]];
  }
  tu_check_array(rt, EMLX_INT32, s12, 2, wt, 0, "reshape of a transpose");
  int64_t st[3] = {1, 2, 3}, sp[3] = {0, -4, -5}, step[3] = {-1, -1, -2};
  emlx_array *sl = emlx_slice(a, st, sp, step, 3); /* {1: 1}, {2,1,0}, {3,1} -> {1,3,2} */
  int64_t flat = -1, n6 = 6;
  emlx_array *rs = emlx_reshape(sl, &flat, 1);
  double ws[6] = {v[12 + 8 + 3], v[12 + 8 + 1], v[12 + 4 + 3], v[12 + 4 + 1], v[12 + 3], v[12 + 1]};
  tu_check_array(rs, EMLX_INT32, &n6, 1, ws, 0, "reshape of a negative-step slice");
  /* 0-d <-> {1}, empty */
  emlx_array *sc = tu_make(EMLX_FLOAT32, NULL, 0, v + 5);
  int64_t one = 1;
  emlx_array *r1 = emlx_reshape(sc, &one, 1), *r0 = emlx_reshape(r1, NULL, 0);
  tu_check_array(r1, EMLX_FLOAT32, &one, 1, v + 5, 0, "0-d -> {1}");
  tu_check_array(r0, EMLX_FLOAT32, NULL, 0, v + 5, 0, "{1} -> 0-d");
  int64_t e03[2] = {0, 3}, e30[3] = {3, 0, 5}, em3[2] = {-1, 3};
  emlx_array *e = emlx_zeros(e03, 2, EMLX_FLOAT16, EMLX_CPU);
  emlx_array *re = emlx_reshape(e, e30, 3), *rm = emlx_reshape(e, em3, 2);
  tu_check_array(re, EMLX_FLOAT16, e30, 3, v, 0, "reshape of empty");
  tu_check_array(rm, EMLX_FLOAT16, e03, 2, v, 0, "reshape(-1, 3) of empty");
  /* errors */
  int64_t bad1[2] = {5, 5}, bad2[2] = {-1, -1}, bad3[2] = {-2, -12}, bad4[2] = {-1, 5},
          bad5[2] = {-1, 0};
  CHECK_NULL_ERR(emlx_reshape(a, bad1, 2));
  CHECK_NULL_ERR(emlx_reshape(a, bad2, 2));
  CHECK_NULL_ERR(emlx_reshape(a, bad3, 2));
  CHECK_NULL_ERR(emlx_reshape(a, bad4, 2)); /* 24 is not a multiple of 5 */
  CHECK_NULL_ERR(emlx_reshape(e, bad5, 2)); /* -1 cannot be inferred from 0 */
  CHECK_NULL_ERR(emlx_reshape(a, bad5, 2));
  CHECK_NULL_ERR(emlx_reshape(a, NULL, 2));
  CHECK_NULL_ERR(emlx_reshape(NULL, s234, 3));
  CHECK_NULL_ERR(emlx_reshape(a, s234, -1));
  emlx_release(a), emlx_release(t), emlx_release(rt), emlx_release(sl), emlx_release(rs);
  emlx_release(sc), emlx_release(r1), emlx_release(r0), emlx_release(e), emlx_release(re);
  emlx_release(rm);
  free(v);
}

static bool next_perm(int *p, int n) {
  int i = n - 2;
  while (i >= 0 && p[i] >= p[i + 1])
    i--;
  if (i < 0)
    return false;
  int j = n - 1;
  while (p[j] <= p[i])
    j--;
  int t = p[i];
  p[i] = p[j], p[j] = t;
  for (int a = i + 1, b = n - 1; a < b; a++, b--)
    t = p[a], p[a] = p[b], p[b] = t;
  return true;
}

static void test_transpose(void) {
  int64_t s[4] = {2, 3, 4, 5};
  double *v = tu_iota(120, -60, 1);
  emlx_array *a = tu_make(EMLX_INT64, s, 4, v);
  emlx_array *h = tu_make(EMLX_BFLOAT16, s, 4, v);
  int p[4] = {0, 1, 2, 3}, count = 0;
  double ref[120];
  do {
    int64_t os[4], idx[4], src[4];
    for (int k = 0; k < 4; k++)
      os[k] = s[p[k]];
    for (int64_t i = 0; i < 120; i++) {
      tu_unravel(i, os, 4, idx);
      for (int k = 0; k < 4; k++)
        src[p[k]] = idx[k];
      ref[i] = v[tu_ravel(src, s, 4)];
    }
    int neg[4];
    for (int k = 0; k < 4; k++)
      neg[k] = (count + k) % 2 ? p[k] - 4 : p[k]; /* mix in negatives */
    emlx_array *t = emlx_transpose(a, p, 4), *tn = emlx_transpose(h, neg, 4);
    tu_check_array(t, EMLX_INT64, os, 4, ref, 0, "transpose (all 24 permutations)");
    tu_check_array(tn, EMLX_BFLOAT16, os, 4, ref, 0, "transpose with negative axes");
    /* transposing back gives the original */
    int inv[4];
    for (int k = 0; k < 4; k++)
      inv[p[k]] = k;
    emlx_array *back = emlx_transpose(t, inv, 4);
    tu_check_array(back, EMLX_INT64, s, 4, v, 0, "transpose then inverse");
    emlx_release(t), emlx_release(tn), emlx_release(back);
    count++;
  } while (next_perm(p, 4));
  CHECK_EQ_I64(count, 24);
  /* NULL axes reverse; 0-d and 1-d */
  emlx_array *r = emlx_transpose(a, NULL, 0);
  int64_t rs[4] = {5, 4, 3, 2}, idx[4], src[4];
  for (int64_t i = 0; i < 120; i++) {
    tu_unravel(i, rs, 4, idx);
    for (int k = 0; k < 4; k++)
      src[k] = idx[3 - k];
    ref[i] = v[tu_ravel(src, s, 4)];
  }
  tu_check_array(r, EMLX_INT64, rs, 4, ref, 0, "transpose(NULL) reverses");
  emlx_array *sc = tu_make(EMLX_FLOAT32, NULL, 0, v), *sct = emlx_transpose(sc, NULL, 0);
  tu_check_array(sct, EMLX_FLOAT32, NULL, 0, v, 0, "transpose of 0-d");
  int64_t e[2] = {0, 3}, et[2] = {3, 0};
  emlx_array *ea = emlx_zeros(e, 2, EMLX_INT8, EMLX_CPU), *eat = emlx_transpose(ea, NULL, 0);
  tu_check_array(eat, EMLX_INT8, et, 2, v, 0, "transpose of empty");
  /* errors */
  int rep[4] = {0, 1, 1, 3}, oob[4] = {0, 1, 2, 4}, oobn[4] = {0, 1, 2, -5},
      dupn[4] = {0, 1, 3, -1};
  int three[3] = {0, 1, 2};
  CHECK_NULL_ERR(emlx_transpose(a, rep, 4));
  CHECK_NULL_ERR(emlx_transpose(a, oob, 4));
  CHECK_NULL_ERR(emlx_transpose(a, oobn, 4));
  CHECK_NULL_ERR(emlx_transpose(a, dupn, 4)); /* 3 twice */
  CHECK_NULL_ERR(emlx_transpose(a, three, 3));
  CHECK_NULL_ERR(emlx_transpose(a, p, 0));
  CHECK_NULL_ERR(emlx_transpose(NULL, p, 4));
  emlx_release(a), emlx_release(h), emlx_release(r), emlx_release(sc), emlx_release(sct);
  emlx_release(ea), emlx_release(eat);
  free(v);
}

/* Python's slice.indices(): clamped start and the element count. */
static int64_t py_slice(int64_t len, int64_t start, int64_t stop, int64_t step, int64_t *first) {
  if (start < 0) {
    start = start < -len ? (step < 0 ? -1 : 0) : start + len;
  } else if (start >= len) {
    start = step < 0 ? len - 1 : len;
  }
  if (stop < 0) {
    stop = stop < -len ? (step < 0 ? -1 : 0) : stop + len;
  } else if (stop >= len) {
    stop = step < 0 ? len - 1 : len;
  }
  *first = start;
  if (step < 0)
    return stop < start ? (start - stop - 1) / (-step) + 1 : 0;
  return start < stop ? (stop - start - 1) / step + 1 : 0;
}

static void test_slice(void) {
  int64_t s[3] = {7, 9, 5};
  double *v = tu_iota(315, 0, 1);
  emlx_array *a = tu_make(EMLX_INT32, s, 3, v);
  emlx_array *at = emlx_transpose(a, NULL, 0); /* {5,9,7}: a strided base */
  double *vt = malloc(315 * sizeof(double));
  int64_t ts[3] = {5, 9, 7};
  for (int64_t i = 0; i < 315; i++) {
    int64_t idx[3], src[3];
    tu_unravel(i, ts, 3, idx);
    src[0] = idx[2], src[1] = idx[1], src[2] = idx[0];
    vt[i] = v[tu_ravel(src, s, 3)];
  }
  tu_rng r = {31};
  static const int64_t steps[6] = {-3, -2, -1, 1, 2, 3};
  int bad = 0;
  for (int trial = 0; trial < 400; trial++) {
    bool tr = trial % 2;
    const int64_t *bs = tr ? ts : s;
    const double *bv = tr ? vt : v;
    int64_t start[3], stop[3], step[3], first[3], cnt[3];
    for (int k = 0; k < 3; k++) {
      start[k] = tu_randint(&r, -12, 12);
      stop[k] = tu_randint(&r, -12, 12);
      step[k] = steps[tu_randint(&r, 0, 5)];
      if (trial % 7 == 0)
        start[k] = step[k] < 0 ? INT64_MAX : INT64_MIN;
      if (trial % 11 == 0)
        stop[k] = step[k] < 0 ? INT64_MIN : INT64_MAX;
      cnt[k] = py_slice(bs[k], start[k], stop[k], step[k], &first[k]);
    }
    emlx_array *sl =
        emlx_slice(tr ? at : a, start, stop,
                   trial % 5 == 0 && step[0] == 1 && step[1] == 1 && step[2] == 1 ? NULL : step, 3);
    int64_t n = cnt[0] * cnt[1] * cnt[2];
    double *ref = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
      int64_t idx[3], src[3];
      tu_unravel(i, cnt, 3, idx);
      for (int k = 0; k < 3; k++)
        src[k] = first[k] + idx[k] * step[k];
      ref[i] = bv[tu_ravel(src, bs, 3)];
    }
    if (!tu_check_array(sl, EMLX_INT32, cnt, 3, ref, 0, "random slice") && bad++ < 3)
      fprintf(stderr,
              "  slice of %s: start {%" PRId64 ",%" PRId64 ",%" PRId64 "} stop {%" PRId64
              ",%" PRId64 ",%" PRId64 "} step {%" PRId64 ",%" PRId64 ",%" PRId64 "}\n",
              tr ? "transpose" : "contiguous", start[0], start[1], start[2], stop[0], stop[1],
              stop[2], step[0], step[1], step[2]);
    free(ref);
    emlx_release(sl);
  }
  /* slicing a slice, and a slice of a lazy array */
  int64_t st1[3] = {1, 0, 4}, sp1[3] = {7, 9, -6}, stp1[3] = {2, 3, -1};
  emlx_array *s1 = emlx_slice(a, st1, sp1, stp1, 3); /* rows 1,3,5; cols 0,3,6; d 4..0 */
  int64_t st2[3] = {-1, 1, 1}, sp2[3] = {-4, 3, 5}, stp2[3] = {-1, 1, 2};
  emlx_array *s2 = emlx_slice(s1, st2, sp2, stp2, 3); /* rows 5,3,1; cols 3,6; d 3,1 */
  int64_t s2s[3] = {3, 2, 2};
  double w2[12];
  int rows[3] = {5, 3, 1}, cols[2] = {3, 6}, ds[2] = {3, 1};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++)
      for (int k = 0; k < 2; k++)
        w2[i * 4 + j * 2 + k] = v[rows[i] * 45 + cols[j] * 5 + ds[k]];
  tu_check_array(s2, EMLX_INT32, s2s, 3, w2, 0, "slice of a slice");
  emlx_array *lz = emlx_add(a, a);
  emlx_array *s3 = emlx_slice(lz, st2, sp2, stp2, 3);
  int64_t s3s[3] = {3, 2, 2};
  double w3[12];
  int rows3[3] = {6, 5, 4}, cols3[2] = {1, 2}, ds3[2] = {1, 3};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++)
      for (int k = 0; k < 2; k++)
        w3[i * 4 + j * 2 + k] = 2 * v[rows3[i] * 45 + cols3[j] * 5 + ds3[k]];
  tu_check_array(s3, EMLX_INT32, s3s, 3, w3, 0, "slice of a lazy add");
  /* extreme steps: one element, or every element backwards */
  {
    int64_t n10 = 10, b0[1] = {2}, e0[1] = {INT64_MAX}, big[1] = {INT64_MAX};
    double *v10 = tu_iota(10, 0, 1);
    emlx_array *l = tu_make1(EMLX_INT64, n10, v10);
    emlx_array *x1 = emlx_slice(l, b0, e0, big, 1);
    int64_t one = 1;
    tu_check_array(x1, EMLX_INT64, &one, 1, v10 + 2, 0, "step INT64_MAX");
    int64_t nb[1] = {INT64_MAX}, ne[1] = {INT64_MIN}, nstep[1] = {-INT64_MAX};
    emlx_array *x2 = emlx_slice(l, nb, ne, nstep, 1);
    tu_check_array(x2, EMLX_INT64, &one, 1, v10 + 9, 0, "step -INT64_MAX");
    nstep[0] = INT64_MIN; /* Python allows it: one element */
    emlx_clear_error();
    emlx_array *x3 = emlx_slice(l, nb, ne, nstep, 1);
    if (x3)
      tu_check_array(x3, EMLX_INT64, &one, 1, v10 + 9, 0, "step INT64_MIN");
    else
      CHECK_MSG(emlx_last_error()[0] != '\0', "step INT64_MIN: result or a message");
    emlx_release(l), emlx_release(x1), emlx_release(x2), emlx_release(x3);
    free(v10);
  }
  /* 0-d: nothing to slice */
  emlx_array *sc = tu_make(EMLX_FLOAT32, NULL, 0, v + 3),
             *scs = emlx_slice(sc, NULL, NULL, NULL, 0);
  tu_check_array(scs, EMLX_FLOAT32, NULL, 0, v + 3, 0, "slice of 0-d");
  /* errors */
  int64_t z[3] = {0, 0, 0}, e[3] = {7, 9, 5}, zstep[3] = {1, 0, 1};
  CHECK_NULL_ERR(emlx_slice(a, z, e, zstep, 3));
  CHECK_NULL_ERR(emlx_slice(a, z, e, NULL, 2));
  CHECK_NULL_ERR(emlx_slice(a, z, e, NULL, 4));
  CHECK_NULL_ERR(emlx_slice(a, NULL, e, NULL, 3));
  CHECK_NULL_ERR(emlx_slice(a, z, NULL, NULL, 3));
  CHECK_NULL_ERR(emlx_slice(NULL, z, e, NULL, 3));
  emlx_release(a), emlx_release(at), emlx_release(s1), emlx_release(s2), emlx_release(lz);
  emlx_release(s3), emlx_release(sc), emlx_release(scs);
  free(v), free(vt);
}

static void test_squeeze_expand(void) {
  int64_t s[5] = {1, 3, 1, 4, 1};
  double *v = tu_iota(12, 1, 1);
  emlx_array *a = tu_make(EMLX_FLOAT32, s, 5, v);
  struct {
    int n;
    int axes[3];
    int on;
    int64_t o[5];
  } sq[] = {{-1, {0}, 2, {3, 4}},       {1, {0}, 4, {3, 1, 4, 1}}, {2, {0, -1}, 3, {3, 1, 4}},
            {1, {-3}, 4, {1, 3, 4, 1}}, {3, {4, 0, 2}, 2, {3, 4}}, {0, {0}, 5, {1, 3, 1, 4, 1}}};
  for (size_t i = 0; i < sizeof sq / sizeof sq[0]; i++) {
    emlx_array *r = sq[i].n < 0 ? emlx_squeeze(a, NULL, 0) : emlx_squeeze(a, sq[i].axes, sq[i].n);
    tu_check_array(r, EMLX_FLOAT32, sq[i].o, sq[i].on, v, 0, "squeeze");
    emlx_release(r);
  }
  int ax1[1] = {1}, ax9[1] = {5}, axn[1] = {-6}, dup[2] = {0, -5};
  CHECK_NULL_ERR(emlx_squeeze(a, ax1, 1)); /* size 3 */
  CHECK_NULL_ERR(emlx_squeeze(a, ax9, 1));
  CHECK_NULL_ERR(emlx_squeeze(a, axn, 1));
  CHECK_NULL_ERR(emlx_squeeze(a, dup, 2));
  CHECK_NULL_ERR(emlx_squeeze(NULL, NULL, 0));

  int64_t s34[2] = {3, 4};
  emlx_array *b = tu_make(EMLX_UINT16, s34, 2, v);
  struct {
    int n;
    int axes[3];
    int on;
    int64_t o[5];
  } ex[] = {{2, {0, 3}, 4, {1, 3, 4, 1}},       {2, {1, -1}, 4, {3, 1, 4, 1}},
            {2, {-1, -4}, 4, {1, 3, 4, 1}},     {1, {2}, 3, {3, 4, 1}},
            {3, {0, 1, 2}, 5, {1, 1, 1, 3, 4}}, {1, {-2}, 3, {3, 1, 4}}};
  for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
    emlx_array *r = emlx_expand_dims(b, ex[i].axes, ex[i].n);
    tu_check_array(r, EMLX_UINT16, ex[i].o, ex[i].on, v, 0, "expand_dims");
    emlx_release(r);
  }
  emlx_array *sc = tu_make(EMLX_INT8, NULL, 0, v);
  int z[1] = {0};
  int64_t one[1] = {1};
  emlx_array *sce = emlx_expand_dims(sc, z, 1);
  tu_check_array(sce, EMLX_INT8, one, 1, v, 0, "expand_dims of 0-d");
  int e3[1] = {3}, en[1] = {-4}, ed[2] = {0, 0}, edn[2] = {1, -3};
  CHECK_NULL_ERR(emlx_expand_dims(b, e3, 1));
  CHECK_NULL_ERR(emlx_expand_dims(b, en, 1));
  CHECK_NULL_ERR(emlx_expand_dims(b, ed, 2));
  CHECK_NULL_ERR(emlx_expand_dims(b, edn, 2)); /* 1 and -3 of a 4-d result: both axis 1 */
  CHECK_NULL_ERR(emlx_expand_dims(NULL, z, 1));
  CHECK_NULL_ERR(emlx_expand_dims(b, NULL, 1));
  emlx_release(a), emlx_release(b), emlx_release(sc), emlx_release(sce);
  free(v);
}

static void test_copy(void) {
  /* every dtype copies bit for bit (from a strided view) */
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_dtype d = tu_all_dtypes[di];
    size_t w = tu_dsize(d);
    unsigned char src[24 * 16];
    for (size_t i = 0; i < sizeof src; i++)
      src[i] = (unsigned char)(i * 37 + 11);
    if (d == EMLX_BOOL)
      for (int i = 0; i < 24; i++)
        src[i] = (unsigned char)(i % 3 == 0);
    int64_t s[2] = {4, 6};
    emlx_array *a = emlx_from_blob(src, d, s, 2, EMLX_CPU);
    emlx_array *t = emlx_transpose(a, NULL, 0), *c = emlx_copy(t);
    CHECK_OK(emlx_eval(&c, 1));
    unsigned char *raw = tu_read_raw(c);
    bool ok = raw && emlx_array_dtype(c) == d && emlx_ndim(c) == 2 && emlx_dim(c, 0) == 6;
    for (int i = 0; ok && i < 6; i++)
      for (int j = 0; j < 4; j++)
        ok &= memcmp(raw + (i * 4 + j) * w, src + (j * 6 + i) * w, w) == 0;
    CHECK_MSG(ok, "copy of a transposed %s is exact", tu_dname(d));
    const int64_t *st = emlx_strides(c);
    CHECK_MSG(st && st[0] == 4 && st[1] == 1 && emlx_offset(c) == 0, "copy is row-major");
    CHECK_MSG(!emlx_shares_buffer(c, a), "copy owns its buffer");
    free(raw);
    emlx_release(a), emlx_release(t), emlx_release(c);
  }
  int64_t e[2] = {0, 3};
  emlx_array *ea = emlx_zeros(e, 2, EMLX_FLOAT32, EMLX_CPU), *ec = emlx_copy(ea);
  double none[1] = {0};
  tu_check_array(ec, EMLX_FLOAT32, e, 2, none, 0, "copy of empty");
  CHECK_NULL_ERR(emlx_copy(NULL));
  emlx_release(ea), emlx_release(ec);
  /* a long composition of views, then a copy */
  int64_t s[3] = {4, 5, 6};
  double *v = tu_iota(120, 0, 1);
  emlx_array *a = tu_make(EMLX_FLOAT64, s, 3, v);
  int perm[3] = {2, 0, 1};
  int64_t st[3] = {5, 3, 0}, sp[3] = {0, -5, 5}, step[3] = {-2, -1, 2};
  int ax[1] = {1};
  emlx_array *t = emlx_transpose(a, perm, 3);      /* {6,4,5} */
  emlx_array *sl = emlx_slice(t, st, sp, step, 3); /* d 5,3,1; r 3,2,1,0; c 0,2,4 */
  emlx_array *ex = emlx_expand_dims(sl, ax, 1);    /* {3,1,4,3} */
  int64_t bs2[4] = {3, 2, 4, 3};
  emlx_array *br = emlx_broadcast_to(ex, bs2, 4);
  emlx_array *cp = emlx_copy(br);
  double ref[72];
  int ds[3] = {5, 3, 1}, rs[4] = {3, 2, 1, 0}, cs[3] = {0, 2, 4};
  for (int i = 0; i < 3; i++)
    for (int b = 0; b < 2; b++)
      for (int j = 0; j < 4; j++)
        for (int k = 0; k < 3; k++)
          ref[((i * 2 + b) * 4 + j) * 3 + k] = v[rs[j] * 30 + cs[k] * 6 + ds[i]];
  tu_check_array(cp, EMLX_FLOAT64, bs2, 4, ref, 0, "copy of transpose/slice/expand/broadcast");
  emlx_release(a), emlx_release(t), emlx_release(sl), emlx_release(ex), emlx_release(br);
  emlx_release(cp);
  free(v);
}

int main(void) {
  test_broadcast_to();
  test_reshape();
  test_transpose();
  test_slice();
  test_squeeze_expand();
  test_copy();
  return tu_finish();
}
