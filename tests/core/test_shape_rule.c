/* test_shape_rule.c — the one shape rule (the product of a shape's non-zero
 * dimensions is at most 2^60, empty shapes included) at its edge, through
 * every constructor and every op family. Shapes past it are refused with a
 * clear error whatever the order of their dimensions; empty shapes at it
 * ({0, 2^30, 2^30}) flow through elementwise, fused, reduce, scan, sort,
 * indexing, matmul, window, fft and linalg ops to an empty result or a clear
 * error, never an overflow: CI runs this under UBSan, which traps on signed
 * overflow in stride, size or offset arithmetic. */
#include "test_util.h"

#define G ((int64_t)1 << 30)
#define BIG ((int64_t)1 << 60)

static bool fails_clearly(emlx_array *r) {
  bool ok = r == NULL && emlx_last_error()[0] != '\0';
  emlx_release(r);
  emlx_clear_error();
  return ok;
}

/* r is an array of shape `shape` that evaluates (empty), or, when
 * allow_error, a clear refusal at construction or at eval (an op with a
 * limit of its own, LAPACK's 32-bit sizes, say). */
static void expect_empty_at(emlx_array *r, const int64_t *shape, int nd, bool allow_error,
                            const char *what, int line) {
  if (!r) {
    tu_record(allow_error && emlx_last_error()[0] != '\0', __FILE__, line, "%s: refused (%s)", what,
              emlx_last_error());
    emlx_clear_error();
    return;
  }
  bool same = emlx_ndim(r) == nd;
  for (int i = 0; same && i < nd; i++)
    same = emlx_shape(r)[i] == shape[i];
  int rc = emlx_eval(&r, 1);
  if (rc != 0 && allow_error && emlx_last_error()[0] != '\0') {
    tu_record(same, __FILE__, line, "%s: refused at eval (%s)", what, emlx_last_error());
    emlx_clear_error();
    emlx_release(r);
    return;
  }
  tu_record(same && rc == 0 && emlx_size(r) == 0, __FILE__, line,
            "%s: an empty result of the expected shape that evaluates (rc %d: %s)", what, rc,
            rc ? emlx_last_error() : "");
  emlx_release(r);
}
#define EXPECT_EMPTY(r, shape, nd, what)                                                           \
  expect_empty_at((r), (shape), (nd), false, (what), __LINE__)
#define EMPTY_OR_ERROR(r, shape, nd, what)                                                         \
  expect_empty_at((r), (shape), (nd), true, (what), __LINE__)

/* ---- the rule at the constructors -------------------------------------------------- */
static void test_refused_everywhere(void) {
  const int64_t over[][3] = {{0, INT64_MAX, 2}, {INT64_MAX, 2, 0}, {2, 0, INT64_MAX},
                             {2 * G, G, 0},     {0, BIG, 2},       {BIG + 1, 0, 1}};
  for (size_t k = 0; k < sizeof over / sizeof over[0]; k++) {
    const int64_t *s = over[k];
    CHECK_MSG(fails_clearly(emlx_zeros(s, 3, EMLX_FLOAT32, EMLX_CPU)), "zeros %zu", k);
    CHECK_MSG(fails_clearly(emlx_ones(s, 3, EMLX_INT64, EMLX_CPU)), "ones %zu", k);
    CHECK_MSG(fails_clearly(emlx_full(s, 3, 2.0, EMLX_FLOAT64, EMLX_CPU)), "full %zu", k);
    CHECK_MSG(fails_clearly(emlx_from_blob(NULL, EMLX_UINT8, s, 3, EMLX_CPU)), "from_blob %zu", k);
    int64_t z = 0;
    emlx_array *e = emlx_zeros(&z, 1, EMLX_FLOAT32, EMLX_CPU);
    CHECK_MSG(fails_clearly(emlx_reshape(e, s, 3)), "reshape %zu", k);
    CHECK_MSG(fails_clearly(emlx_as_strided(e, s, NULL, 3, 0)), "as_strided %zu", k);
    int64_t st[3] = {1, 1, 1};
    CHECK_MSG(fails_clearly(emlx_as_strided(e, s, st, 3, 0)), "as_strided strided %zu", k);
    CHECK_MSG(fails_clearly(emlx_broadcast_to(e, s, 3)), "broadcast_to %zu", k);
    emlx_release(e);
  }
  /* The message names the rule, for empty shapes too. */
  const int64_t s0[3] = {0, INT64_MAX, 2};
  emlx_array *bad = emlx_zeros(s0, 3, EMLX_FLOAT32, EMLX_CPU);
  CHECK_MSG(!bad && strstr(emlx_last_error(), "2^60") != NULL, "message: %s", emlx_last_error());
  emlx_clear_error();
  /* At the edge: accepted, in any order, and evaluated. */
  const int64_t edge[][3] = {{0, G, G}, {G, G, 0}, {G, 0, G}, {0, BIG, 1}};
  for (size_t k = 0; k < sizeof edge / sizeof edge[0]; k++) {
    EXPECT_EMPTY(emlx_zeros(edge[k], 3, EMLX_FLOAT32, EMLX_CPU), edge[k], 3, "zeros at the edge");
    EXPECT_EMPTY(emlx_full(edge[k], 3, 7.0, EMLX_INT16, EMLX_CPU), edge[k], 3, "full at the edge");
    EXPECT_EMPTY(emlx_from_blob(NULL, EMLX_COMPLEX64, edge[k], 3, EMLX_CPU), edge[k], 3,
                 "from_blob at the edge");
  }
  /* pad: an axis grown past the rule is refused, not overflowed. */
  const int64_t s1[3] = {0, G, G};
  emlx_array *z = emlx_zeros(s1, 3, EMLX_FLOAT32, EMLX_CPU);
  int64_t lo[3] = {0, 1, 0}, hi[3] = {0, 0, 0}, in[3] = {0, 0, 0};
  CHECK(fails_clearly(emlx_pad(z, lo, hi, in, 3, 0.0)));
  int64_t lo2[3] = {0, BIG, 0}, hi2[3] = {0, BIG, 0};
  CHECK(fails_clearly(emlx_pad(z, lo2, hi2, in, 3, 0.0)));
  int64_t lo3[3] = {1, 0, 0}; /* {1, 2^30, 2^30}: 2^60 elements, within the rule; no memory */
  emlx_array *p3 = emlx_pad(z, lo3, hi, in, 3, 0.0);
  CHECK_MSG(p3 && emlx_eval(&p3, 1) != 0 && emlx_last_error()[0], "pad to 2^60 elements: %s",
            emlx_last_error());
  emlx_release(p3);
  emlx_clear_error();
  int64_t lo4[3] = {0, -G, 0}, out4[3] = {0, 0, G};
  EXPECT_EMPTY(emlx_pad(z, lo4, hi, in, 3, 0.0), out4, 3, "pad shrinking to an empty axis");
  emlx_release(z);
}

/* ---- every op family on {0, 2^30, 2^30} ------------------------------------------- */
static void test_families(void) {
  const int64_t s[3] = {0, G, G};
  emlx_array *z = emlx_zeros(s, 3, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *zi = emlx_zeros(s, 3, EMLX_INT32, EMLX_CPU);
  CHECK(emlx_eval(&z, 1) == 0 && emlx_eval(&zi, 1) == 0);
  /* elementwise, fused and not */
  EXPECT_EMPTY(emlx_exp(z), s, 3, "exp");
  emlx_array *two = emlx_scalar_tensor(2.0, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *m = emlx_multiply(z, two), *f = emlx_add(m, two), *e = emlx_sinh(f);
  EXPECT_EMPTY(emlx_retain(e), s, 3, "fused exp chain");
  emlx_release(e);
  emlx_release(f);
  emlx_release(m);
  EXPECT_EMPTY(emlx_astype(zi, EMLX_FLOAT64), s, 3, "astype");
  EXPECT_EMPTY(emlx_where(zi, z, two), s, 3, "where");
  int64_t row[1] = {G};
  emlx_array *r = emlx_zeros(row, 1, EMLX_FLOAT32, EMLX_CPU);
  EXPECT_EMPTY(emlx_add(z, r), s, 3, "broadcast add");
  /* reductions, scans, sorts */
  const int ax0 = 0, ax1 = 1, ax2 = 2, ax12[2] = {1, 2};
  int64_t s12[2] = {0, G}, sc[1] = {0};
  EXPECT_EMPTY(emlx_sum(z, &ax1, 1, false), s12, 2, "sum axis 1");
  EXPECT_EMPTY(emlx_max(z, &ax2, 1, false), s12, 2, "max axis 2");
  EXPECT_EMPTY(emlx_sum(z, ax12, 2, false), sc, 1, "sum axes 1, 2");
  emlx_array *sa = emlx_sum(zi, NULL, 0, false);
  int32_t tot = -1;
  CHECK(sa && emlx_eval(&sa, 1) == 0 && emlx_to_blob(sa, &tot, sizeof tot) == 0 && tot == 0);
  emlx_release(sa);
  emlx_array *s0 = emlx_sum(z, &ax0, 1, false); /* 2^60 outputs: too large to allocate */
  CHECK_MSG(s0 && emlx_eval(&s0, 1) != 0 && emlx_last_error()[0], "sum over the empty axis: %s",
            emlx_last_error());
  emlx_release(s0);
  emlx_clear_error();
  EXPECT_EMPTY(emlx_product(z, &ax1, 1, false), s12, 2, "product");
  EXPECT_EMPTY(emlx_all(zi, &ax2, 1, false), s12, 2, "all");
  EXPECT_EMPTY(emlx_argmax(z, 2, false, NULL), s12, 2, "argmax");
  EXPECT_EMPTY(emlx_cumulative_sum(z, 2, false, true), s, 3, "cumulative_sum");
  EXPECT_EMPTY(emlx_sort(z, 1, NULL), s, 3, "sort");
  EXPECT_EMPTY(emlx_argsort(z, 2, NULL), s, 3, "argsort");
  /* indexing and views */
  const int perm[3] = {2, 0, 1};
  int64_t sp[3] = {G, 0, G};
  EXPECT_EMPTY(emlx_transpose(z, perm, 3), sp, 3, "transpose");
  EXPECT_EMPTY(emlx_reshape(z, sp, 3), sp, 3, "reshape");
  int64_t st0[3] = {0, 0, 0}, st1[3] = {0, G, G}, step[3] = {1, INT64_MAX, -3};
  int64_t ss[3] = {0, 1, 0};
  EXPECT_EMPTY(emlx_slice(z, st0, st1, step, 3), ss, 3, "slice with huge steps");
  emlx_array *pair[2] = {z, z};
  EXPECT_EMPTY(emlx_concatenate(pair, 2, 0), s, 3, "concatenate");
  CHECK(fails_clearly(emlx_concatenate(pair, 2, 1))); /* {0, 2^31, 2^30} */
  emlx_array *idx = emlx_zeros(row, 1, EMLX_INT32, EMLX_CPU);
  int64_t stake[3] = {0, G, G};
  EMPTY_OR_ERROR(emlx_take(z, idx, 1, NULL), stake, 3, "take");
  /* matmul: {0, 2^30, 2^30} @ a broadcast {2^30, 2^30} view (no data) */
  emlx_array *one = emlx_scalar_tensor(1.0, EMLX_FLOAT32, EMLX_CPU);
  int64_t sq[2] = {G, G};
  emlx_array *w = emlx_broadcast_to(one, sq, 2);
  EMPTY_OR_ERROR(emlx_matmul(z, w), s, 3, "matmul");
  int64_t s2[2] = {0, G}, sw[2] = {G, 0}, s00[2] = {0, 0};
  emlx_array *a2 = emlx_zeros(s2, 2, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *b2 = emlx_zeros(sw, 2, EMLX_FLOAT32, EMLX_CPU);
  EXPECT_EMPTY(emlx_matmul(a2, b2), s00, 2, "matmul 0 x 2^30 x 0");
  /* window and conv: batch 0, huge spatial extent */
  int64_t sx[4] = {0, G, G, 1}, win[4] = {1, 3, 3, 1}, sxo[4] = {0, G - 2, G - 2, 1};
  emlx_array *x4 = emlx_zeros(sx, 4, EMLX_FLOAT32, EMLX_CPU);
  EMPTY_OR_ERROR(emlx_window_max(x4, win, 4, NULL), sxo, 4, "window_max");
  EMPTY_OR_ERROR(emlx_window_sum(x4, win, 4, NULL), sxo, 4, "window_sum");
  int64_t swt[4] = {1, 3, 3, 1};
  emlx_array *k4 = emlx_ones(swt, 4, EMLX_FLOAT32, EMLX_CPU);
  EMPTY_OR_ERROR(emlx_conv_general(x4, k4, NULL), sxo, 4, "conv_general");
  /* fft along an empty axis and along a huge one of an empty array */
  emlx_array *zc = emlx_astype(z, EMLX_COMPLEX64);
  EMPTY_OR_ERROR(emlx_fft(zc, 0, 0), s, 3, "fft over the empty axis");
  int64_t s8[3] = {0, 8, G};
  EMPTY_OR_ERROR(emlx_fft(zc, 8, 1), s8, 3, "fft of an empty batch");
  /* linalg: a batch of no 2^30 x 2^30 matrices */
  EMPTY_OR_ERROR(emlx_linalg_inv(z), s, 3, "linalg_inv");
  EMPTY_OR_ERROR(emlx_linalg_cholesky(z, false), s, 3, "linalg_cholesky");
  emlx_release(zc);
  emlx_release(k4);
  emlx_release(x4);
  emlx_release(b2);
  emlx_release(a2);
  emlx_release(w);
  emlx_release(one);
  emlx_release(idx);
  emlx_release(r);
  emlx_release(two);
  emlx_release(zi);
  emlx_release(z);
}

/* Slice steps at the ends of int64 are steps like any other (a step of
 * INT64_MIN has no int64 negation, which clamping must not need). */
static void test_slice_steps(void) {
  double v[5] = {0, 1, 2, 3, 4};
  emlx_array *a = tu_make1(EMLX_FLOAT32, 5, v);
  int64_t start = 4, stop = -6, step = INT64_MIN;
  emlx_array *s = emlx_slice(a, &start, &stop, &step, 1);
  double *g = s ? tu_read(s) : NULL;
  CHECK_MSG(s && emlx_size(s) == 1 && g && g[0] == 4.0, "slice 4::INT64_MIN is [4] (%s)",
            s ? "" : emlx_last_error());
  free(g);
  emlx_release(s);
  start = 0, stop = 5, step = INT64_MAX;
  s = emlx_slice(a, &start, &stop, &step, 1);
  g = s ? tu_read(s) : NULL;
  CHECK(s && emlx_size(s) == 1 && g && g[0] == 0.0);
  free(g);
  emlx_release(s);
  double u = 9;
  emlx_array *up = tu_make1(EMLX_FLOAT32, 1, &u);
  start = 2, stop = -6, step = INT64_MIN;
  emlx_array *su = emlx_slice_update(a, up, &start, &stop, &step, 1);
  g = su ? tu_read(su) : NULL;
  CHECK_MSG(g && g[0] == 0 && g[1] == 1 && g[2] == 9 && g[3] == 3 && g[4] == 4,
            "slice_update 2::INT64_MIN writes element 2 (%s)", su ? "" : emlx_last_error());
  free(g);
  emlx_release(su);
  step = 0;
  emlx_array *z0 = emlx_slice(a, &start, &stop, &step, 1);
  CHECK_MSG(!z0 && strstr(emlx_last_error(), "non-zero") != NULL, "%s", emlx_last_error());
  emlx_clear_error();
  emlx_release(up);
  emlx_release(a);
}

static void test_queue_device_null(void) {
  emlx_clear_error();
  CHECK(emlx_queue_device(NULL) == EMLX_DEVICE_COUNT);
  CHECK_MSG(strstr(emlx_last_error(), "NULL") != NULL, "queue_device(NULL) sets an error: '%s'",
            emlx_last_error());
}

int main(void) {
  test_refused_everywhere();
  test_families();
  test_slice_steps();
  test_queue_device_null();
  return tu_finish();
}
