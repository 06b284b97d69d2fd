/* test_ops_reduce.c — sum and max over every subset of axes of a 3-D and a
 * 4-D array (positive and negative axes, NULL for all), keep_dims on and
 * off, on contiguous, transposed and negative-step-sliced inputs, in f32,
 * f64, f16, bf16, the integer dtypes and bool, against f64 references; the
 * output dtypes (bool/s8/s16/s32 -> int32, u8/u16/u32 -> uint32); f16/bf16
 * accumulation in f32; integer wrap; NaN propagation in max; large inputs;
 * empty and 0-d inputs; and the error cases (bad, duplicate axes, NULL, max
 * over an empty axis). */
#include "test_util.h"

static emlx_dtype sum_dtype(emlx_dtype d) {
  switch (d) {
  case EMLX_BOOL:
  case EMLX_INT8:
  case EMLX_INT16:
  case EMLX_INT32:
    return EMLX_INT32;
  case EMLX_UINT8:
  case EMLX_UINT16:
  case EMLX_UINT32:
    return EMLX_UINT32;
  default:
    return d;
  }
}

/* Reference reduction of logical values in (shape ish, nd dims) over the
 * axes in mask; writes the output (row-major over the kept axes). */
static void ref_reduce(const double *in, const int64_t *ish, int nd, unsigned mask, bool is_max,
                       double *out, int64_t *oshape_keep) {
  int64_t on = 1;
  for (int k = 0; k < nd; k++) {
    oshape_keep[k] = (mask >> k) & 1 ? 1 : ish[k];
    on *= oshape_keep[k];
  }
  for (int64_t i = 0; i < on; i++)
    out[i] = is_max ? -(double)INFINITY : 0.0;
  int64_t n = tu_numel(ish, nd), idx[8];
  bool *nan = calloc((size_t)on, 1);
  for (int64_t i = 0; i < n; i++) {
    tu_unravel(i, ish, nd, idx);
    for (int k = 0; k < nd; k++)
      if ((mask >> k) & 1)
        idx[k] = 0;
    int64_t o = tu_ravel(idx, oshape_keep, nd);
    if (isnan(in[i]))
      nan[o] = true;
    if (is_max)
      out[o] = in[i] > out[o] ? in[i] : out[o];
    else
      out[o] += in[i];
  }
  for (int64_t i = 0; i < on; i++)
    if (nan[i])
      out[i] = NAN;
  free(nan);
}

static double gen_value(tu_rng *r, emlx_dtype d) {
  switch (d) {
  case EMLX_BOOL:
    return (double)tu_randint(r, 0, 1);
  case EMLX_UINT8:
    return (double)tu_randint(r, 0, 255);
  case EMLX_UINT16:
    return (double)tu_randint(r, 0, 65535);
  case EMLX_UINT32:
    return (double)tu_randint(r, 0, 30000000); /* 120 of them fit */
  case EMLX_UINT64:
    return (double)tu_randint(r, 0, INT64_C(1000000000000));
  case EMLX_INT8:
    return (double)tu_randint(r, -128, 127);
  case EMLX_INT16:
    return (double)tu_randint(r, -32768, 32767);
  case EMLX_INT32:
    return (double)tu_randint(r, -1000000, 1000000);
  case EMLX_INT64:
    return (double)tu_randint(r, -INT64_C(1000000000000), INT64_C(1000000000000));
  default:
    return 0.25 * (double)tu_randint(r, -32, 32);
  }
}

typedef enum { CONTIG, TRANSPOSED, SLICED } layout;

/* An input of logical shape s (nd dims) in the given layout; its logical
 * values are written to vals. */
static emlx_array *make_input(emlx_dtype d, const int64_t *s, int nd, layout lay, tu_rng *r,
                              double *vals) {
  int64_t n = tu_numel(s, nd), idx[8], src[8];
  if (lay == CONTIG) {
    for (int64_t i = 0; i < n; i++)
      vals[i] = tu_quant(d, gen_value(r, d));
    return tu_make(d, s, nd, vals);
  }
  if (lay == TRANSPOSED) { /* base shape is s reversed; transpose(NULL) gives s */
    int64_t bs[8];
    for (int k = 0; k < nd; k++)
      bs[k] = s[nd - 1 - k];
    double *bv = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++)
      bv[i] = tu_quant(d, gen_value(r, d));
    emlx_array *b = tu_make(d, bs, nd, bv), *t = emlx_transpose(b, NULL, 0);
    for (int64_t i = 0; i < n; i++) {
      tu_unravel(i, s, nd, idx);
      for (int k = 0; k < nd; k++)
        src[k] = idx[nd - 1 - k];
      vals[i] = bv[tu_ravel(src, bs, nd)];
    }
    emlx_release(b), free(bv);
    return t;
  }
  /* SLICED: base twice as long on axis 0 (every other row), reversed on the last axis */
  int64_t bs[8], st[8], sp[8], stp[8];
  for (int k = 0; k < nd; k++)
    bs[k] = s[k], st[k] = 0, sp[k] = s[k], stp[k] = 1;
  bs[0] = 2 * s[0], sp[0] = 2 * s[0], stp[0] = 2;
  st[nd - 1] = -1, sp[nd - 1] = INT64_MIN, stp[nd - 1] = -1;
  int64_t bn = tu_numel(bs, nd);
  double *bv = malloc((size_t)bn * sizeof(double));
  for (int64_t i = 0; i < bn; i++)
    bv[i] = tu_quant(d, gen_value(r, d));
  emlx_array *b = tu_make(d, bs, nd, bv), *sl = emlx_slice(b, st, sp, stp, nd);
  for (int64_t i = 0; i < n; i++) {
    tu_unravel(i, s, nd, idx);
    memcpy(src, idx, sizeof(int64_t) * (size_t)nd);
    src[0] = 2 * idx[0];
    src[nd - 1] = s[nd - 1] - 1 - idx[nd - 1];
    vals[i] = bv[tu_ravel(src, bs, nd)];
  }
  emlx_release(b), free(bv);
  return sl;
}

static void test_all_subsets(void) {
  static const emlx_dtype dts[] = {
      EMLX_FLOAT32, EMLX_FLOAT64, EMLX_FLOAT16, EMLX_BFLOAT16, EMLX_INT8,   EMLX_UINT8, EMLX_INT16,
      EMLX_UINT16,  EMLX_INT32,   EMLX_UINT32,  EMLX_INT64,    EMLX_UINT64, EMLX_BOOL};
  static const int64_t s3[3] = {3, 4, 5}, s4[4] = {2, 3, 4, 5};
  tu_rng r = {2024};
  long cases = 0;
  int failures = 0;
  for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++)
    for (int rank = 3; rank <= 4; rank++)
      for (int lay = CONTIG; lay <= SLICED; lay++) {
        emlx_dtype d = dts[di];
        const int64_t *s = rank == 3 ? s3 : s4;
        double vals[120], ref[120];
        emlx_array *a = make_input(d, s, rank, (layout)lay, &r, vals);
        for (unsigned mask = 0; mask < (1u << rank); mask++)
          for (int keep = 0; keep < 2; keep++)
            for (int is_max = 0; is_max < 2; is_max++) {
              int axes[4], na = 0;
              for (int k = 0; k < rank; k++)
                if ((mask >> k) & 1)
                  axes[na++] = ((mask + (unsigned)k + (unsigned)keep) % 2) ? k - rank : k;
              bool all = mask == (1u << rank) - 1 && keep;
              const int *ap = all && (lay == CONTIG) ? NULL : axes; /* NULL: every axis */
              emlx_array *red =
                  is_max ? emlx_max(a, ap, ap ? na : 0, keep) : emlx_sum(a, ap, ap ? na : 0, keep);
              int64_t oshape[4], okeep[4];
              ref_reduce(vals, s, rank, mask, is_max, ref, okeep);
              int on = 0;
              for (int k = 0; k < rank; k++)
                if (keep || !((mask >> k) & 1))
                  oshape[on++] = okeep[k];
              emlx_dtype od = is_max ? d : sum_dtype(d);
              double ulp = (d == EMLX_FLOAT16 || d == EMLX_BFLOAT16) ? 1 : 0;
              char what[96];
              snprintf(what, sizeof what, "%s %s rank %d layout %d mask %u keep %d",
                       is_max ? "max" : "sum", tu_dname(d), rank, lay, mask, keep);
              if (mask == 0 && red && emlx_array_dtype(red) != od && emlx_array_dtype(red) == d)
                od = d; /* no axes: MLX keeps the dtype; either is accepted */
              if (!tu_check_array(red, od, oshape, on, ref, ulp, what))
                failures++;
              cases++;
              emlx_release(red);
            }
        emlx_release(a);
      }
  CHECK_MSG(failures == 0 && cases == 13L * 3 * (8 + 16) * 2 * 2,
            "all-subsets reductions: %d of %ld cases failed", failures, cases);
}

static void test_accumulation_and_wrap(void) {
  int64_t n4096 = 4096, n1000 = 1000;
  emlx_array *h = emlx_ones(&n4096, 1, EMLX_FLOAT16, EMLX_CPU), *hs = emlx_sum(h, NULL, 0, false);
  double w4096 = 4096, w1000 = 1000;
  tu_check_array(hs, EMLX_FLOAT16, NULL, 0, &w4096, 0, "sum of 4096 f16 ones (f32 accumulation)");
  emlx_array *b = emlx_ones(&n1000, 1, EMLX_BFLOAT16, EMLX_CPU), *bs = emlx_sum(b, NULL, 0, false);
  tu_check_array(bs, EMLX_BFLOAT16, NULL, 0, &w1000, 0, "sum of 1000 bf16 ones (f32 accumulation)");
  double big[3] = {60000, 60000, -60000}, w60k = 60000;
  emlx_array *hb = tu_make1(EMLX_FLOAT16, 3, big), *hbs = emlx_sum(hb, NULL, 0, false);
  tu_check_array(hbs, EMLX_FLOAT16, NULL, 0, &w60k, 0, "f16 partial sums beyond 65504");
  emlx_release(h), emlx_release(hs), emlx_release(b), emlx_release(bs), emlx_release(hb);
  emlx_release(hbs);

  int32_t i32[3] = {1 << 30, 1 << 30, 1 << 30};
  int64_t n3 = 3, n2 = 2;
  emlx_array *a = emlx_from_blob(i32, EMLX_INT32, &n3, 1, EMLX_CPU),
             *s = emlx_sum(a, NULL, 0, false);
  double wrap = -1073741824.0;
  tu_check_array(s, EMLX_INT32, NULL, 0, &wrap, 0, "int32 sum wraps");
  emlx_release(a), emlx_release(s);
  uint64_t u64[2] = {UINT64_C(1) << 63, (UINT64_C(1) << 63) + 5};
  a = emlx_from_blob(u64, EMLX_UINT64, &n2, 1, EMLX_CPU), s = emlx_sum(a, NULL, 0, false);
  unsigned char *raw = tu_read_raw(s);
  uint64_t got = 0;
  if (raw)
    memcpy(&got, raw, 8);
  CHECK_MSG(raw && emlx_array_dtype(s) == EMLX_UINT64 && got == 5, "u64 sum wraps (%" PRIu64 ")",
            got);
  free(raw), emlx_release(a), emlx_release(s);
  int64_t s64[2] = {INT64_C(1) << 62, (INT64_C(1) << 62) - 1};
  a = emlx_from_blob(s64, EMLX_INT64, &n2, 1, EMLX_CPU), s = emlx_sum(a, NULL, 0, false);
  int64_t gi = 0;
  CHECK(emlx_item_i64(s, &gi) == 0 && gi == INT64_MAX);
  emlx_release(a), emlx_release(s);
  /* narrow ints do not wrap: they sum in 32 bits */
  int64_t n100 = 100;
  emlx_array *c = emlx_full(&n100, 1, 127, EMLX_INT8, EMLX_CPU), *cs = emlx_sum(c, NULL, 0, false);
  double w12700 = 12700;
  tu_check_array(cs, EMLX_INT32, NULL, 0, &w12700, 0, "sum of 100 x 127 s8 in int32");
  emlx_array *u = emlx_full(&n1000, 1, 255, EMLX_UINT8, EMLX_CPU),
             *us = emlx_sum(u, NULL, 0, false);
  double w255k = 255000;
  tu_check_array(us, EMLX_UINT32, NULL, 0, &w255k, 0, "sum of 1000 x 255 u8 in uint32");
  emlx_array *bo = emlx_full(&n1000, 1, 1, EMLX_BOOL, EMLX_CPU),
             *bos = emlx_sum(bo, NULL, 0, false);
  tu_check_array(bos, EMLX_INT32, NULL, 0, &w1000, 0, "sum of 1000 true");
  emlx_release(c), emlx_release(cs), emlx_release(u), emlx_release(us), emlx_release(bo);
  emlx_release(bos);
  /* complex64 sums both parts */
  float cv[6] = {1, 2, 3, -1, -0.5f, 0.25f};
  emlx_array *cx = emlx_from_blob(cv, EMLX_COMPLEX64, &n3, 1, EMLX_CPU),
             *cxs = emlx_sum(cx, NULL, 0, false);
  raw = tu_read_raw(cxs);
  float wc[2] = {3.5f, 1.25f};
  CHECK_MSG(raw && emlx_array_dtype(cxs) == EMLX_COMPLEX64 && memcmp(raw, wc, 8) == 0, "c64 sum");
  free(raw), emlx_release(cx), emlx_release(cxs);
}

static void test_max_specials(void) {
  static const emlx_dtype fd[4] = {EMLX_FLOAT32, EMLX_FLOAT64, EMLX_FLOAT16, EMLX_BFLOAT16};
  int64_t s[2] = {4, 5}, s4[1] = {4}, s5[1] = {5};
  double v[20];
  for (int i = 0; i < 20; i++)
    v[i] = -100 - i;  /* all negative: catches a zero start */
  v[1 * 5 + 2] = NAN; /* mid-row */
  v[3 * 5 + 0] = NAN; /* first of its row */
  for (int k = 0; k < 4; k++) {
    emlx_array *a = tu_make(fd[k], s, 2, v);
    int ax0 = 0, ax1 = 1;
    emlx_array *m0 = emlx_max(a, &ax0, 1, false), *m1 = emlx_max(a, &ax1, 1, false);
    emlx_array *ma = emlx_max(a, NULL, 0, false);
    double w0[5] = {NAN, -101, NAN, -103, -104}, w1[4] = {-100, NAN, -110, NAN}, wa = NAN;
    tu_check_array(m0, fd[k], s5, 1, w0, 0, "max over axis 0 propagates NaN");
    tu_check_array(m1, fd[k], s4, 1, w1, 0, "max over axis 1 propagates NaN");
    tu_check_array(ma, fd[k], NULL, 0, &wa, 0, "max of all propagates NaN");
    emlx_release(a), emlx_release(m0), emlx_release(m1), emlx_release(ma);
    double ninf[3] = {-INFINITY, -INFINITY, -INFINITY}, wn = -INFINITY;
    a = tu_make1(fd[k], 3, ninf), ma = emlx_max(a, NULL, 0, false);
    tu_check_array(ma, fd[k], NULL, 0, &wn, 0, "max of -inf");
    emlx_release(a), emlx_release(ma);
  }
  /* sum propagates NaN as well */
  emlx_array *a = tu_make(EMLX_FLOAT32, s, 2, v);
  int ax1 = 1;
  emlx_array *sm = emlx_sum(a, &ax1, 1, true);
  double ws[4] = {-510, NAN, -560, NAN};
  int64_t s41[2] = {4, 1};
  tu_check_array(sm, EMLX_FLOAT32, s41, 2, ws, 0, "sum with NaN");
  emlx_release(a), emlx_release(sm);
  /* integer extremes */
  int8_t mn[3] = {-128, -128, -128};
  int64_t n3 = 3;
  a = emlx_from_blob(mn, EMLX_INT8, &n3, 1, EMLX_CPU);
  emlx_array *m = emlx_max(a, NULL, 0, false);
  double w128 = -128;
  tu_check_array(m, EMLX_INT8, NULL, 0, &w128, 0, "max of s8 minimum");
  emlx_release(a), emlx_release(m);
  int64_t lmin[3] = {INT64_MIN, INT64_MIN + 1, INT64_MIN};
  a = emlx_from_blob(lmin, EMLX_INT64, &n3, 1, EMLX_CPU), m = emlx_max(a, NULL, 0, false);
  int64_t gi = 0;
  CHECK(emlx_item_i64(m, &gi) == 0 && gi == INT64_MIN + 1);
  emlx_release(a), emlx_release(m);
  uint64_t ub[3] = {UINT64_MAX - 1, 5, UINT64_MAX};
  a = emlx_from_blob(ub, EMLX_UINT64, &n3, 1, EMLX_CPU), m = emlx_max(a, NULL, 0, false);
  unsigned char *raw = tu_read_raw(m);
  uint64_t gu = 0;
  if (raw)
    memcpy(&gu, raw, 8);
  CHECK_MSG(gu == UINT64_MAX, "max of u64 near 2^64");
  free(raw), emlx_release(a), emlx_release(m);
}

static void test_large(void) {
  int64_t s[2] = {1000, 1027};
  const int64_t n = 1000 * 1027;
  double *v = malloc(n * sizeof(double));
  tu_rng r = {9};
  for (int64_t i = 0; i < n; i++)
    v[i] = tu_quant(EMLX_FLOAT32, tu_uniform(&r, -1, 1));
  emlx_array *a = tu_make(EMLX_FLOAT32, s, 2, v), *t = emlx_transpose(a, NULL, 0);
  double *ref = malloc(1027 * sizeof(double)), *absr = malloc(1027 * sizeof(double));
  int64_t okeep[2];
  for (int ax = 0; ax < 2; ax++)
    for (int tr = 0; tr < 2; tr++) {
      /* reduce axis ax of a (or, equivalently, axis 1-ax of t) */
      int axis = tr ? 1 - ax : ax;
      emlx_array *sm = emlx_sum(tr ? t : a, &axis, 1, false),
                 *mx = emlx_max(tr ? t : a, &axis, 1, false);
      ref_reduce(v, s, 2, 1u << ax, false, ref, okeep);
      double *abs_v = malloc(n * sizeof(double));
      for (int64_t i = 0; i < n; i++)
        abs_v[i] = fabs(v[i]);
      ref_reduce(abs_v, s, 2, 1u << ax, false, absr, okeep);
      free(abs_v);
      int64_t on = s[1 - ax];
      double *g = tu_read(sm);
      if (g) {
        bool ok = tu_all_finite(g, on);
        for (int64_t i = 0; ok && i < on; i++)
          ok = fabs(g[i] - ref[i]) <= 0x1p-24 * (double)s[ax] * absr[i];
        CHECK_MSG(ok && tu_nmse(g, ref, on) < 1e-10, "large f32 sum axis %d%s", ax,
                  tr ? " (transposed)" : "");
      }
      free(g);
      ref_reduce(v, s, 2, 1u << ax, true, ref, okeep);
      tu_check_array(mx, EMLX_FLOAT32, &on, 1, ref, 0, "large f32 max");
      emlx_release(sm), emlx_release(mx);
    }
  emlx_array *all = emlx_sum(t, NULL, 0, false);
  double tot = 0, atot = 0, got = 0;
  for (int64_t i = 0; i < n; i++)
    tot += v[i], atot += fabs(v[i]);
  CHECK(all && emlx_item_f64(all, &got) == 0 && fabs(got - tot) <= 1e-5 * atot);
  emlx_release(all), emlx_release(a), emlx_release(t);
  free(v), free(ref), free(absr);
}

static void test_empty_and_scalar(void) {
  int64_t e03[2] = {0, 3}, e20[2] = {2, 0}, e0[1] = {0}, s3[1] = {3}, s21[2] = {2, 1}, s2[1] = {2};
  double zeros[3] = {0, 0, 0};
  emlx_array *a = emlx_ones(e03, 2, EMLX_FLOAT32, EMLX_CPU);
  int ax0 = 0, ax1 = 1;
  emlx_array *r = emlx_sum(a, &ax0, 1, false);
  tu_check_array(r, EMLX_FLOAT32, s3, 1, zeros, 0, "sum over an empty axis is 0");
  emlx_release(r);
  emlx_array *b = emlx_ones(e20, 2, EMLX_INT8, EMLX_CPU);
  r = emlx_sum(b, &ax1, 1, true);
  tu_check_array(r, EMLX_INT32, s21, 2, zeros, 0, "sum {2,0} axis 1 keep");
  emlx_release(r);
  r = emlx_sum(b, &ax0, 1, false);
  tu_check_array(r, EMLX_INT32, e0, 1, zeros, 0, "sum {2,0} axis 0 is empty");
  emlx_release(r);
  emlx_array *c = emlx_zeros(e0, 1, EMLX_FLOAT16, EMLX_CPU);
  r = emlx_sum(c, NULL, 0, false);
  tu_check_array(r, EMLX_FLOAT16, NULL, 0, zeros, 0, "sum of {0} is 0-d 0");
  emlx_release(r);
  CHECK_NULL_ERR(emlx_max(c, NULL, 0, false));
  CHECK_NULL_ERR(emlx_max(a, &ax0, 1, false));
  CHECK_NULL_ERR(emlx_max(b, &ax1, 1, true));
  double v = 4.5;
  emlx_array *sc = tu_make(EMLX_FLOAT64, NULL, 0, &v);
  r = emlx_sum(sc, NULL, 0, false);
  tu_check_array(r, EMLX_FLOAT64, NULL, 0, &v, 0, "sum of 0-d");
  emlx_release(r);
  r = emlx_max(sc, NULL, 0, true);
  tu_check_array(r, EMLX_FLOAT64, NULL, 0, &v, 0, "max of 0-d");
  emlx_release(r);
  /* a reduction of a lazy broadcast */
  double row[2] = {1.5, -2};
  emlx_array *rw = tu_make(EMLX_FLOAT32, s2, 1, row);
  int64_t bs[3] = {4, 3, 2};
  emlx_array *bb = emlx_broadcast_to(rw, bs, 3);
  int axes[2] = {0, 1};
  r = emlx_sum(bb, axes, 2, false);
  double wr[2] = {18, -24};
  tu_check_array(r, EMLX_FLOAT32, s2, 1, wr, 0, "sum of a broadcast view");
  emlx_release(r), emlx_release(rw), emlx_release(bb);
  /* axes in any order */
  int64_t s234[3] = {2, 3, 4};
  double *iv = tu_iota(24, 0, 1), w3[3] = {0, 0, 0};
  for (int i = 0; i < 24; i++)
    w3[(i / 4) % 3] += iv[i];
  emlx_array *x = tu_make(EMLX_INT32, s234, 3, iv);
  int unsorted[2] = {2, 0}, mixed[2] = {-1, 0};
  emlx_array *u1 = emlx_sum(x, unsorted, 2, false), *u2 = emlx_sum(x, mixed, 2, false);
  tu_check_array(u1, EMLX_INT32, s3, 1, w3, 0, "sum over axes {2, 0}");
  tu_check_array(u2, EMLX_INT32, s3, 1, w3, 0, "sum over axes {-1, 0}");
  emlx_release(x), emlx_release(u1), emlx_release(u2);
  free(iv);
  emlx_release(a), emlx_release(b), emlx_release(c), emlx_release(sc);
}

static void test_errors(void) {
  int64_t s[3] = {2, 3, 4};
  emlx_array *a = emlx_ones(s, 3, EMLX_FLOAT32, EMLX_CPU);
  int oob[1] = {3}, oobn[1] = {-4}, dup[2] = {0, 0}, dupn[2] = {1, -2}, ok[1] = {0};
  emlx_array *(*fns[2])(emlx_array *, const int *, int, bool) = {emlx_sum, emlx_max};
  for (int f = 0; f < 2; f++) {
    CHECK_NULL_ERR(fns[f](a, oob, 1, false));
    CHECK_NULL_ERR(fns[f](a, oobn, 1, true));
    CHECK_NULL_ERR(fns[f](a, dup, 2, false));
    CHECK_NULL_ERR(fns[f](a, dupn, 2, false));
    CHECK_NULL_ERR(fns[f](a, ok, -1, false));
    CHECK_NULL_ERR(fns[f](NULL, ok, 1, false));
    CHECK_NULL_ERR(fns[f](NULL, NULL, 0, false));
  }
  emlx_release(a);
}

int main(void) {
  tu_run_isa_variants();
  test_all_subsets();
  test_accumulation_and_wrap();
  test_max_specials();
  test_large();
  test_empty_and_scalar();
  test_errors();
  return tu_finish();
}
