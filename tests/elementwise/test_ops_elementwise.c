/* test_ops_elementwise.c — add, subtract, multiply, divide, negate, exp and
 * astype against f64 references: every dtype, MLX promotion with values,
 * integer wrap-around, broadcasting on either side, strided inputs
 * (transposed, sliced with positive and negative steps, broadcast views),
 * empty inputs, fused mixed-dtype chains (each op keeps its dtype: wrap and
 * rounding between fused ops), exhaustive exp over every f16 and bf16 value,
 * and every error case (incompatible shapes, negate of bool, NULL inputs).
 * astype has its own program, test_ops_astype.c.
 * Tolerances: f32/f64 add/sub/mul exact, divide 1 ulp, exp 2 ulp; f16/bf16
 * within 1 ulp of the correctly rounded reference; integers exact. */
#include "test_util.h"

typedef enum { ADD, SUB, MUL, DIV } binop;
static const char *bin_name[] = {"add", "subtract", "multiply", "divide"};

static emlx_array *apply(binop op, emlx_array *a, emlx_array *b) {
  switch (op) {
  case ADD:
    return emlx_add(a, b);
  case SUB:
    return emlx_subtract(a, b);
  case MUL:
    return emlx_multiply(a, b);
  default:
    return emlx_divide(a, b);
  }
}
static double ref_op(binop op, double x, double y) {
  switch (op) {
  case ADD:
    return x + y;
  case SUB:
    return x - y;
  case MUL:
    return x * y;
  default:
    return x / y;
  }
}

/* Index into an input of shape ish (right-aligned against oshape) for the
 * output multi-index idx. */
static int64_t bcast_index(const int64_t *idx, const int64_t *oshape, int ond, const int64_t *ish,
                           int ind) {
  int64_t i = 0;
  for (int k = 0; k < ind; k++) {
    int64_t ik = ish[k] == 1 ? 0 : idx[ond - ind + k];
    i = i * ish[k] + ik;
  }
  (void)oshape;
  return i;
}

/* ---- floats on contiguous data ----------------------------------------------------- */

static void test_float_binary(void) {
  static const emlx_dtype fd[4] = {EMLX_FLOAT32, EMLX_FLOAT16, EMLX_BFLOAT16, EMLX_FLOAT64};
  int64_t shape[2] = {37, 53};
  const int64_t n = 37 * 53;
  double *va = malloc(n * sizeof(double)), *vb = malloc(n * sizeof(double));
  double *ref = malloc(n * sizeof(double));
  tu_rng r = {1234};
  for (int64_t i = 0; i < n; i++) {
    va[i] = tu_uniform(&r, -4, 4);
    vb[i] = tu_uniform(&r, 0.5, 4) * ((i % 3) ? 1 : -1);
  }
  for (int k = 0; k < 4; k++) {
    emlx_dtype d = fd[k];
    emlx_array *a = tu_make(d, shape, 2, va), *b = tu_make(d, shape, 2, vb);
    for (int op = ADD; op <= DIV; op++) {
      for (int64_t i = 0; i < n; i++)
        ref[i] = ref_op((binop)op, tu_quant(d, va[i]), tu_quant(d, vb[i]));
      emlx_array *c = apply((binop)op, a, b);
      double ulp = (d == EMLX_FLOAT16 || d == EMLX_BFLOAT16) ? 1 : op == DIV ? 1 : 0;
      char what[64];
      snprintf(what, sizeof what, "%s contiguous", bin_name[op]);
      tu_check_array(c, d, shape, 2, ref, ulp, what);
      emlx_release(c);
    }
    emlx_release(a), emlx_release(b);
  }
  /* IEEE specials */
  double sa[6] = {1, -1, 0, INFINITY, INFINITY, NAN}, sb[6] = {0, 0, 0, INFINITY, -INFINITY, 1};
  int64_t n6 = 6;
  for (int k = 0; k < 4; k++) {
    emlx_array *a = tu_make1(fd[k], 6, sa), *b = tu_make1(fd[k], 6, sb);
    for (int op = ADD; op <= DIV; op++) {
      double rr[6];
      for (int i = 0; i < 6; i++)
        rr[i] = ref_op((binop)op, sa[i], sb[i]);
      emlx_array *c = apply((binop)op, a, b);
      tu_check_array(c, fd[k], &n6, 1, rr, 0, bin_name[op]);
      emlx_release(c);
    }
    emlx_release(a), emlx_release(b);
  }
  /* a large contiguous add with a ragged tail (the vector and parallel paths) */
  const int64_t big = (INT64_C(1) << 20) + 3;
  double *x = tu_iota(big, -1000.0, 0.00390625), *y = malloc(big * sizeof(double));
  for (int64_t i = 0; i < big; i++)
    y[i] = (double)(i % 977) * 0.5;
  emlx_array *a = tu_make1(EMLX_FLOAT32, big, x), *b = tu_make1(EMLX_FLOAT32, big, y);
  double *rb = malloc(big * sizeof(double));
  for (int64_t i = 0; i < big; i++)
    rb[i] = tu_quant(EMLX_FLOAT32, x[i]) * y[i];
  emlx_array *c = emlx_multiply(a, b);
  tu_check_array(c, EMLX_FLOAT32, &big, 1, rb, 0, "large multiply");
  emlx_release(a), emlx_release(b), emlx_release(c);
  free(x), free(y), free(rb), free(va), free(vb), free(ref);
}

/* ---- integers: wrap-around, computed here in the same width --------------------------- */

static uint64_t wrap_ref(binop op, uint64_t x, uint64_t y) {
  switch (op) {
  case ADD:
    return x + y;
  case SUB:
    return x - y;
  default:
    return x * y;
  }
}

static void test_int_binary(void) {
  static const emlx_dtype idt[8] = {EMLX_UINT8, EMLX_UINT16, EMLX_UINT32, EMLX_UINT64,
                                    EMLX_INT8,  EMLX_INT16,  EMLX_INT32,  EMLX_INT64};
  enum { N = 257 };
  tu_rng r = {77};
  for (int k = 0; k < 8; k++) {
    emlx_dtype d = idt[k];
    size_t w = tu_dsize(d);
    unsigned char ra[N * 8], rb[N * 8], want[N * 8];
    for (int i = 0; i < N; i++) {
      uint64_t x = tu_next(&r), y = tu_next(&r);
      if (i < 4)
        x = i == 0 ? 0 : i == 1 ? ~UINT64_C(0) : i == 2 ? UINT64_C(1) << (8 * w - 1) : 1;
      if (i % 5 == 0)
        y = 1;
      memcpy(ra + i * w, &x, w);
      memcpy(rb + i * w, &y, w);
    }
    int64_t n = N;
    emlx_array *a = emlx_from_blob(ra, d, &n, 1, EMLX_CPU),
               *b = emlx_from_blob(rb, d, &n, 1, EMLX_CPU);
    for (int op = ADD; op <= MUL; op++) {
      for (int i = 0; i < N; i++) {
        uint64_t x = 0, y = 0;
        memcpy(&x, ra + i * w, w);
        memcpy(&y, rb + i * w, w);
        uint64_t z = wrap_ref((binop)op, x, y); /* low w bytes are the wrapped result */
        memcpy(want + i * w, &z, w);
      }
      emlx_array *c = apply((binop)op, a, b);
      CHECK_MSG(c && emlx_array_dtype(c) == d, "%s keeps %s", bin_name[op], tu_dname(d));
      unsigned char *got = tu_read_raw(c);
      CHECK_MSG(got && memcmp(got, want, N * w) == 0, "%s %s wraps like two's complement",
                bin_name[op], tu_dname(d));
      free(got);
      emlx_release(c);
    }
    /* negate wraps too (0 - x) */
    for (int i = 0; i < N; i++) {
      uint64_t x = 0;
      memcpy(&x, ra + i * w, w);
      uint64_t z = 0 - x;
      memcpy(want + i * w, &z, w);
    }
    emlx_array *ng = emlx_negate(a);
    unsigned char *got = tu_read_raw(ng);
    CHECK_MSG(ng && emlx_array_dtype(ng) == d && got && memcmp(got, want, N * w) == 0,
              "negate %s wraps", tu_dname(d));
    free(got);
    emlx_release(ng);
    /* integer division gives float32, computed on the float32 values */
    double va[6] = {7, -7, 1, -1, 0, 100}, vb[6] = {2, 2, 0, 0, 0, 7};
    emlx_array *p = tu_make1(d, 6, va), *q = tu_make1(d, 6, vb);
    emlx_array *dv = emlx_divide(p, q);
    double rd[6];
    for (int i = 0; i < 6; i++) {
      float fx = (float)tu_quant(d, va[i]), fy = (float)tu_quant(d, vb[i]);
      rd[i] = (double)(fx / fy);
    }
    int64_t n6 = 6;
    tu_check_array(dv, EMLX_FLOAT32, &n6, 1, rd, 1, "integer divide");
    emlx_release(p), emlx_release(q), emlx_release(dv), emlx_release(a), emlx_release(b);
  }
  /* a few named cases */
  double v200[1] = {200}, v100[1] = {100};
  int64_t n1 = 1;
  emlx_array *a = tu_make1(EMLX_UINT8, 1, v200), *b = tu_make1(EMLX_UINT8, 1, v100);
  emlx_array *c = emlx_add(a, b);
  double w44[1] = {44};
  tu_check_array(c, EMLX_UINT8, &n1, 1, w44, 0, "u8 200 + 100 = 44");
  emlx_release(a), emlx_release(b), emlx_release(c);
  a = tu_make1(EMLX_INT8, 1, v100);
  c = emlx_add(a, a);
  double wm56[1] = {-56};
  tu_check_array(c, EMLX_INT8, &n1, 1, wm56, 0, "s8 100 + 100 = -56");
  emlx_release(a), emlx_release(c);
}

static void test_bool_ops(void) {
  double a[4] = {0, 0, 1, 1}, b[4] = {0, 1, 0, 1};
  int64_t n = 4;
  emlx_array *x = tu_make1(EMLX_BOOL, 4, a), *y = tu_make1(EMLX_BOOL, 4, b);
  emlx_array *s = emlx_add(x, y), *d = emlx_subtract(x, y), *m = emlx_multiply(x, y);
  emlx_array *q = emlx_divide(x, y);
  double w_or[4] = {0, 1, 1, 1}, w_xor[4] = {0, 1, 1, 0}, w_and[4] = {0, 0, 0, 1};
  double w_div[4] = {NAN, 0, INFINITY, 1};
  tu_check_array(s, EMLX_BOOL, &n, 1, w_or, 0, "bool add is or");
  tu_check_array(d, EMLX_BOOL, &n, 1, w_xor, 0, "bool subtract is xor");
  tu_check_array(m, EMLX_BOOL, &n, 1, w_and, 0, "bool multiply is and");
  tu_check_array(q, EMLX_FLOAT32, &n, 1, w_div, 0, "bool divide gives float32");
  CHECK_NULL_ERR(emlx_negate(x));
  emlx_array *e = emlx_exp(x);
  double w_exp[4] = {1, 1, M_E, M_E};
  tu_check_array(e, EMLX_FLOAT32, &n, 1, w_exp, 2, "exp of bool gives float32");
  emlx_release(x), emlx_release(y), emlx_release(s), emlx_release(d), emlx_release(m);
  emlx_release(q), emlx_release(e);
}

/* Mixed dtypes: the promoted dtype, with values that need the wider type. */
static void test_mixed_promotion(void) {
  int64_t n = 4;
  struct {
    emlx_dtype a, b, out;
    double va[4], vb[4];
  } cases[] = {
      {EMLX_UINT8, EMLX_INT8, EMLX_INT16, {200, 255, 0, 7}, {-100, 127, -128, 1}},
      {EMLX_UINT16, EMLX_INT16, EMLX_INT32, {65535, 0, 40000, 1}, {32767, -32768, -1, 1}},
      {EMLX_UINT32, EMLX_INT32, EMLX_INT64, {4e9, 0, 3e9, 1}, {2e9, -2147483648.0, -1, 5}},
      {EMLX_INT32, EMLX_FLOAT16, EMLX_FLOAT16, {2049, -3, 100, 65504}, {0, 0.5, 0.25, 0}},
      {EMLX_INT64, EMLX_FLOAT32, EMLX_FLOAT32, {16777217, -5, 1, 0}, {0, 0.5, 1e-8, -0.0}},
      {EMLX_UINT64, EMLX_INT8, EMLX_FLOAT32, {1e18, 3, 0, 255}, {-1, -3, 7, 1}},
      {EMLX_FLOAT16, EMLX_BFLOAT16, EMLX_FLOAT32, {0.1, 65504, -2, 1}, {0.1, 1e10, 3, 1.0 / 3}},
      {EMLX_BOOL, EMLX_FLOAT16, EMLX_FLOAT16, {1, 0, 1, 1}, {0.5, 2, -1, 1e-3}},
      {EMLX_BFLOAT16, EMLX_INT64, EMLX_BFLOAT16, {1, 2, 3, 0}, {257, 1000, -7, 1}},
      {EMLX_FLOAT32, EMLX_FLOAT64, EMLX_FLOAT64, {0.1, 1, 2, 3}, {0.2, 1e-300, 1e300, -3}},
  };
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    emlx_array *a = tu_make1(cases[ci].a, 4, cases[ci].va),
               *b = tu_make1(cases[ci].b, 4, cases[ci].vb);
    for (int op = ADD; op <= MUL; op++) {
      double ref[4];
      for (int i = 0; i < 4; i++) {
        /* each operand is first converted to the result dtype, then the op runs */
        double x = tu_quant(cases[ci].out, tu_quant(cases[ci].a, cases[ci].va[i]));
        double y = tu_quant(cases[ci].out, tu_quant(cases[ci].b, cases[ci].vb[i]));
        ref[i] = ref_op((binop)op, x, y);
      }
      emlx_array *c = apply((binop)op, a, b);
      char what[80];
      snprintf(what, sizeof what, "%s(%s, %s)", bin_name[op], tu_dname(cases[ci].a),
               tu_dname(cases[ci].b));
      double ulp = (cases[ci].out == EMLX_FLOAT16 || cases[ci].out == EMLX_BFLOAT16) ? 1 : 0;
      tu_check_array(c, cases[ci].out, &n, 1, ref, ulp, what);
      emlx_release(c);
    }
    emlx_release(a), emlx_release(b);
  }
  /* complex + real keeps the imaginary part */
  float cv[4] = {1, 2, -3, 0.5f};
  int64_t n2 = 2;
  emlx_array *c = emlx_from_blob(cv, EMLX_COMPLEX64, &n2, 1, EMLX_CPU);
  double rv[2] = {10, 20};
  emlx_array *r = tu_make1(EMLX_FLOAT32, 2, rv);
  emlx_array *s = emlx_add(c, r), *m = emlx_multiply(c, c), *q = emlx_divide(c, r);
  emlx_array *ng = emlx_negate(c), *sb = emlx_subtract(r, c);
  float want_s[4] = {11, 2, 17, 0.5f}, want_m[4] = {1 - 4, 4, 9 - 0.25f, -3};
  float want_q[4] = {0.1f, 0.2f, -0.15f, 0.025f}, want_n[4] = {-1, -2, 3, -0.5f};
  float want_sb[4] = {9, -2, 23, -0.5f};
  struct {
    emlx_array *a;
    float *w;
    const char *what;
  } cc[] = {{s, want_s, "c64 + f32"},
            {m, want_m, "c64 * c64"},
            {q, want_q, "c64 / f32"},
            {ng, want_n, "negate c64"},
            {sb, want_sb, "f32 - c64"}};
  for (size_t i = 0; i < 5; i++) {
    unsigned char *raw = tu_read_raw(cc[i].a);
    bool ok = raw && emlx_array_dtype(cc[i].a) == EMLX_COMPLEX64;
    for (int k = 0; ok && k < 4; k++) {
      float g;
      memcpy(&g, raw + 4 * k, 4);
      ok = fabs((double)g - (double)cc[i].w[k]) <=
           2 * tu_ulp(EMLX_FLOAT32, (double)cc[i].w[k]) + 1e-30;
    }
    CHECK_MSG(ok, "%s", cc[i].what);
    free(raw);
  }
  emlx_release(c), emlx_release(r), emlx_release(s), emlx_release(m), emlx_release(q);
  emlx_release(ng), emlx_release(sb);
}

/* ---- broadcasting ---------------------------------------------------------------------- */

static void test_broadcast(void) {
  struct {
    int na;
    int64_t a[4];
    int nb;
    int64_t b[4];
    int no;
    int64_t o[4];
  } cases[] = {
      {2, {3, 1}, 2, {1, 4}, 2, {3, 4}},
      {1, {4}, 3, {2, 3, 4}, 3, {2, 3, 4}},
      {0, {0}, 2, {2, 3}, 2, {2, 3}},
      {3, {2, 1, 3}, 2, {4, 1}, 3, {2, 4, 3}},
      {3, {5, 1, 1}, 2, {1, 1}, 3, {5, 1, 1}},
      {4, {2, 1, 3, 1}, 4, {1, 4, 1, 5}, 4, {2, 4, 3, 5}},
      {1, {1}, 1, {7}, 1, {7}},
      {2, {3, 4}, 2, {3, 4}, 2, {3, 4}},
  };
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
    for (int swap = 0; swap < 2; swap++) {
      int na = swap ? cases[ci].nb : cases[ci].na, nb = swap ? cases[ci].na : cases[ci].nb;
      const int64_t *sa = swap ? cases[ci].b : cases[ci].a, *sb = swap ? cases[ci].a : cases[ci].b;
      int64_t ea = tu_numel(sa, na), eb = tu_numel(sb, nb),
              eo = tu_numel(cases[ci].o, cases[ci].no);
      double *va = tu_iota(ea, 1, 1), *vb = tu_iota(eb, -2, 0.5),
             *ref = malloc(eo * sizeof(double));
      emlx_array *a = tu_make(EMLX_FLOAT32, sa, na, va), *b = tu_make(EMLX_INT32, sb, nb, vb);
      int64_t idx[4];
      for (binop op = SUB; op <= MUL; op++) {
        for (int64_t i = 0; i < eo; i++) {
          tu_unravel(i, cases[ci].o, cases[ci].no, idx);
          double x = va[bcast_index(idx, cases[ci].o, cases[ci].no, sa, na)];
          double y = tu_quant(EMLX_INT32, vb[bcast_index(idx, cases[ci].o, cases[ci].no, sb, nb)]);
          ref[i] = ref_op(op, x, y);
        }
        emlx_array *c = apply(op, a, b);
        char what[64];
        snprintf(what, sizeof what, "broadcast %s case %zu%s", bin_name[op], ci,
                 swap ? " swapped" : "");
        tu_check_array(c, EMLX_FLOAT32, cases[ci].o, cases[ci].no, ref, 0, what);
        emlx_release(c);
      }
      emlx_release(a), emlx_release(b);
      free(va), free(vb), free(ref);
    }
  struct {
    int na;
    int64_t a[4];
    int nb;
    int64_t b[4];
  } bad[] = {
      {1, {3}, 1, {4}}, {2, {2, 3}, 2, {3, 2}}, {3, {2, 1, 3}, 4, {2, 4, 1, 2}}, {1, {0}, 1, {2}}};
  for (size_t ci = 0; ci < sizeof bad / sizeof bad[0]; ci++) {
    emlx_array *a = emlx_zeros(bad[ci].a, bad[ci].na, EMLX_FLOAT32, EMLX_CPU);
    emlx_array *b = emlx_ones(bad[ci].b, bad[ci].nb, EMLX_FLOAT32, EMLX_CPU);
    for (binop op = ADD; op <= DIV; op++) {
      CHECK_NULL_ERR(apply(op, a, b));
      CHECK_NULL_ERR(apply(op, b, a));
    }
    emlx_release(a), emlx_release(b);
  }
}

/* ---- strided inputs ---------------------------------------------------------------------- */

static void test_strided(void) {
  /* base 8x12; views of shape 4x6 */
  int64_t bs[2] = {8, 12}, ts[2] = {6, 4}, vs[2] = {4, 6};
  double *vbase = tu_iota(96, -3, 0.125), *vt = tu_iota(24, 0.5, 0.25);
  emlx_array *base = tu_make(EMLX_FLOAT32, bs, 2, vbase);
  emlx_array *tsrc = tu_make(EMLX_FLOAT32, ts, 2, vt);
  emlx_array *t = emlx_transpose(tsrc, NULL, 0); /* 4x6, strides (1, 4) */
  int64_t st[2] = {1, 11}, sp[2] = {8, 0}, step[2] = {2, -2};
  emlx_array *s = emlx_slice(base, st, sp, step, 2); /* rows 1,3,5,7; cols 11,9,...,1 */
  double row[6] = {1, 2, 3, 4, 5, 6};
  emlx_array *rv = tu_make1(EMLX_FLOAT32, 6, row);
  emlx_array *b = emlx_broadcast_to(rv, vs, 2);
  double rt[24], rs[24], rb[24];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 6; j++) {
      rt[i * 6 + j] = tu_quant(EMLX_FLOAT32, vt[j * 4 + i]);
      rs[i * 6 + j] = vbase[(1 + 2 * i) * 12 + (11 - 2 * j)];
      rb[i * 6 + j] = row[j];
    }
  tu_check_array(s, EMLX_FLOAT32, vs, 2, rs, 0, "negative-step slice as input");
  double ref[24];
  emlx_array *views[3] = {t, s, b};
  double *rvals[3] = {rt, rs, rb};
  for (int x = 0; x < 3; x++)
    for (int y = 0; y < 3; y++)
      for (binop op = ADD; op <= DIV; op++) {
        for (int i = 0; i < 24; i++)
          ref[i] = ref_op(op, rvals[x][i], rvals[y][i]);
        emlx_array *c = apply(op, views[x], views[y]);
        char what[64];
        snprintf(what, sizeof what, "%s of strided views %d,%d", bin_name[op], x, y);
        tu_check_array(c, EMLX_FLOAT32, vs, 2, ref, op == DIV ? 1 : 0, what);
        emlx_release(c);
      }
  /* unary ops on strided views */
  for (int x = 0; x < 3; x++) {
    emlx_array *e = emlx_exp(views[x]), *ng = emlx_negate(views[x]);
    emlx_array *h = emlx_astype(views[x], EMLX_FLOAT16), *i8 = emlx_astype(views[x], EMLX_INT8);
    double re[24], rn[24], ri[24];
    for (int i = 0; i < 24; i++) {
      re[i] = exp(rvals[x][i]);
      rn[i] = -rvals[x][i];
      ri[i] = trunc(rvals[x][i]);
    }
    tu_check_array(e, EMLX_FLOAT32, vs, 2, re, 2, "exp of a strided view");
    tu_check_array(ng, EMLX_FLOAT32, vs, 2, rn, 0, "negate of a strided view");
    tu_check_array(h, EMLX_FLOAT16, vs, 2, rvals[x], 0, "astype f16 of a strided view");
    tu_check_array(i8, EMLX_INT8, vs, 2, ri, 0, "astype s8 of a strided view");
    emlx_release(e), emlx_release(ng), emlx_release(h), emlx_release(i8);
  }
  /* a large transposed operand (parallel strided path) */
  int64_t ls[2] = {1031, 1024}, lt[2] = {1024, 1031};
  int64_t ln = 1031 * 1024;
  double *lv = malloc(ln * sizeof(double)), *lw = malloc(ln * sizeof(double)),
         *lr = malloc(ln * sizeof(double));
  for (int64_t i = 0; i < ln; i++)
    lv[i] = (double)(i % 1000) * 0.25, lw[i] = (double)(i % 7);
  emlx_array *L = tu_make(EMLX_FLOAT32, ls, 2, lv), *W = tu_make(EMLX_FLOAT32, lt, 2, lw);
  emlx_array *LT = emlx_transpose(L, NULL, 0);
  emlx_array *sum = emlx_add(LT, W);
  for (int64_t i = 0; i < 1024; i++)
    for (int64_t j = 0; j < 1031; j++)
      lr[i * 1031 + j] = lv[j * 1024 + i] + lw[i * 1031 + j];
  tu_check_array(sum, EMLX_FLOAT32, lt, 2, lr, 0, "large transposed + contiguous");
  emlx_release(L), emlx_release(W), emlx_release(LT), emlx_release(sum);
  free(lv), free(lw), free(lr);
  emlx_release(base), emlx_release(tsrc), emlx_release(t), emlx_release(s), emlx_release(rv);
  emlx_release(b);
  free(vbase), free(vt);
}

/* ---- empty inputs ---------------------------------------------------------------------- */

static void test_empty(void) {
  int64_t e0[1] = {0}, e03[2] = {0, 3}, s3[1] = {3}, s1[1] = {1}, e20[2] = {2, 0};
  emlx_array *a = emlx_zeros(e0, 1, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *b = emlx_ones(e03, 2, EMLX_INT32, EMLX_CPU);
  emlx_array *c = emlx_ones(s3, 1, EMLX_FLOAT16, EMLX_CPU);
  emlx_array *d = emlx_ones(s1, 1, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *sc = emlx_scalar_tensor(2, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *e = emlx_zeros(e20, 2, EMLX_INT8, EMLX_CPU);
  double none[1] = {0};
  emlx_array *r;
  r = emlx_add(a, a);
  tu_check_array(r, EMLX_FLOAT32, e0, 1, none, 0, "{0} + {0}");
  emlx_release(r);
  r = emlx_multiply(b, c);
  tu_check_array(r, EMLX_FLOAT16, e03, 2, none, 0, "{0,3} * {3}");
  emlx_release(r);
  r = emlx_subtract(a, sc);
  tu_check_array(r, EMLX_FLOAT32, e0, 1, none, 0, "{0} - scalar");
  emlx_release(r);
  r = emlx_divide(d, a);
  tu_check_array(r, EMLX_FLOAT32, e0, 1, none, 0, "{1} / {0}");
  emlx_release(r);
  r = emlx_exp(e);
  tu_check_array(r, EMLX_FLOAT32, e20, 2, none, 0, "exp of {2,0} s8");
  emlx_release(r);
  r = emlx_negate(e);
  tu_check_array(r, EMLX_INT8, e20, 2, none, 0, "negate of {2,0}");
  emlx_release(r);
  r = emlx_astype(b, EMLX_BFLOAT16);
  tu_check_array(r, EMLX_BFLOAT16, e03, 2, none, 0, "astype of {0,3}");
  emlx_release(r);
  CHECK_NULL_ERR(emlx_add(a, c)); /* {0} vs {3} */
  emlx_release(a), emlx_release(b), emlx_release(c), emlx_release(d), emlx_release(sc);
  emlx_release(e);
}

/* ---- exp ----------------------------------------------------------------------------- */

static void check_exp_exhaustive16(emlx_dtype d) {
  int64_t n = 65536;
  uint16_t *bits = malloc(65536 * 2);
  for (int i = 0; i < 65536; i++)
    bits[i] = (uint16_t)i;
  emlx_array *a = emlx_from_blob(bits, d, &n, 1, EMLX_CPU);
  emlx_array *e = emlx_exp(a);
  double *got = tu_read(e);
  double *ref = malloc(65536 * sizeof(double));
  for (int i = 0; i < 65536; i++)
    ref[i] = exp(d == EMLX_FLOAT16 ? tu_f16_decode(bits[i]) : tu_bf16_decode(bits[i]));
  CHECK(e && emlx_array_dtype(e) == d);
  if (got)
    tu_check_values(got, ref, n, d, 1,
                    d == EMLX_FLOAT16 ? "exp of every f16" : "exp of every bf16");
  free(got), free(ref), free(bits);
  emlx_release(a), emlx_release(e);
}

static void test_exp(void) {
  /* f32 over its whole finite range, including subnormal results, and specials */
  const int64_t n = 20000;
  double *v = malloc(n * sizeof(double)), *ref = malloc(n * sizeof(double));
  tu_rng r = {5};
  for (int64_t i = 0; i < n; i++)
    v[i] = tu_quant(EMLX_FLOAT32, tu_uniform(&r, -103, 88.7));
  v[0] = -INFINITY, v[1] = INFINITY, v[2] = NAN, v[3] = 89, v[4] = -200, v[5] = 0, v[6] = -0.0;
  v[7] = 1e-40;
  for (int64_t i = 0; i < n; i++)
    ref[i] = exp(v[i]);
  emlx_array *a = tu_make1(EMLX_FLOAT32, n, v), *e = emlx_exp(a);
  tu_check_array(e, EMLX_FLOAT32, &n, 1, ref, 2, "exp f32");
  emlx_release(a), emlx_release(e);
  /* f64 */
  for (int64_t i = 8; i < n; i++)
    v[i] = tu_uniform(&r, -708, 709);
  for (int64_t i = 0; i < n; i++)
    ref[i] = exp(v[i]);
  a = tu_make1(EMLX_FLOAT64, n, v), e = emlx_exp(a);
  tu_check_array(e, EMLX_FLOAT64, &n, 1, ref, 2, "exp f64");
  emlx_release(a), emlx_release(e);
  /* integers give float32 */
  static const emlx_dtype idt[4] = {EMLX_INT8, EMLX_UINT8, EMLX_INT32, EMLX_INT64};
  double iv[8] = {-20, -3, -1, 0, 1, 5, 20, 80};
  int64_t n8 = 8;
  for (int k = 0; k < 4; k++) {
    double ir[8];
    for (int i = 0; i < 8; i++)
      ir[i] = exp(tu_quant(idt[k], iv[i]));
    a = tu_make1(idt[k], 8, iv), e = emlx_exp(a);
    tu_check_array(e, EMLX_FLOAT32, &n8, 1, ir, 2, "exp of an integer dtype");
    emlx_release(a), emlx_release(e);
  }
  check_exp_exhaustive16(EMLX_FLOAT16);
  check_exp_exhaustive16(EMLX_BFLOAT16);
  /* complex: e^a (cos b + i sin b) */
  float cv[8] = {0, 0, 1, 2, -1, 3.14159265f, 2.5f, -0.75f};
  int64_t n4 = 4;
  emlx_array *c = emlx_from_blob(cv, EMLX_COMPLEX64, &n4, 1, EMLX_CPU), *ce = emlx_exp(c);
  unsigned char *raw = tu_read_raw(ce);
  bool ok = raw && emlx_array_dtype(ce) == EMLX_COMPLEX64;
  for (int i = 0; ok && i < 4; i++) {
    float g[2];
    memcpy(g, raw + 8 * i, 8);
    double m = exp((double)cv[2 * i]), re = m * cos((double)cv[2 * i + 1]),
           im = m * sin((double)cv[2 * i + 1]);
    ok = fabs((double)g[0] - re) <= 1e-6 * m && fabs((double)g[1] - im) <= 1e-6 * m;
  }
  CHECK_MSG(ok, "exp of complex64");
  free(raw), emlx_release(c), emlx_release(ce);
  free(v), free(ref);
}

/* ---- a fused mixed-dtype chain ---------------------------------------------------------- */

static void test_fused_chain(void) {
  /* out = ((a * b + c) - d^T) / e with a f16 {4,5}, b f32 {5}, c s32 {4,1},
   * d bf16 {5,4} transposed, e f32 scalar; every step is an f32 op */
  int64_t sa[2] = {4, 5}, sb[1] = {5}, sc[2] = {4, 1}, sd[2] = {5, 4};
  double va[20], vb[5], vc[4], vd[20], ve = 3;
  for (int i = 0; i < 20; i++)
    va[i] = 0.1 * i - 1, vd[i] = 1.0 / (i + 1);
  for (int i = 0; i < 5; i++)
    vb[i] = 1.5 - 0.7 * i;
  for (int i = 0; i < 4; i++)
    vc[i] = i * 3 - 4;
  emlx_array *a = tu_make(EMLX_FLOAT16, sa, 2, va), *b = tu_make(EMLX_FLOAT32, sb, 1, vb);
  emlx_array *c = tu_make(EMLX_INT32, sc, 2, vc), *d = tu_make(EMLX_BFLOAT16, sd, 2, vd);
  emlx_array *e = tu_make(EMLX_FLOAT32, NULL, 0, &ve);
  emlx_array *dt = emlx_transpose(d, NULL, 0);
  emlx_array *ab = emlx_multiply(a, b), *abc = emlx_add(ab, c), *abcd = emlx_subtract(abc, dt);
  emlx_array *out = emlx_divide(abcd, e);
  double ref[20];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 5; j++) {
      float x = (float)tu_quant(EMLX_FLOAT16, va[i * 5 + j]) * (float)vb[j];
      x = x + (float)vc[i];
      x = x - (float)tu_quant(EMLX_BFLOAT16, vd[j * 4 + i]);
      ref[i * 5 + j] = (double)(x / 3.0f);
    }
  tu_check_array(out, EMLX_FLOAT32, sa, 2, ref, 1, "fused mixed-dtype chain");
  /* the intermediate arrays are still valid results of their own */
  double rab[20];
  for (int i = 0; i < 20; i++)
    rab[i] = (double)((float)tu_quant(EMLX_FLOAT16, va[i]) * (float)vb[i % 5]);
  tu_check_array(ab, EMLX_FLOAT32, sa, 2, rab, 0, "intermediate of the chain");
  emlx_release(a), emlx_release(b), emlx_release(c), emlx_release(d), emlx_release(e);
  emlx_release(dt), emlx_release(ab), emlx_release(abc), emlx_release(abcd), emlx_release(out);
}

/* Every op's result has its own dtype even inside a fused chain: narrow
 * integers wrap and f16/bf16 round after each op, 64-bit integers stay exact. */
static void test_fusion_keeps_dtypes(void) {
  int64_t n = 3;
  double a8[3] = {200, 100, 255}, b8[3] = {100, 100, 2}, two[3] = {2, 2, 2};
  emlx_array *a = tu_make1(EMLX_UINT8, 3, a8), *b = tu_make1(EMLX_UINT8, 3, b8);
  emlx_array *c = tu_make1(EMLX_UINT8, 3, two);
  emlx_array *s = emlx_add(a, b), *f = emlx_astype(s, EMLX_FLOAT32), *q = emlx_divide(s, c);
  double wf[3] = {44, 200, 1}, wq[3] = {22, 100, 0.5};
  tu_check_array(f, EMLX_FLOAT32, &n, 1, wf, 0, "astype(u8 + u8) sees the wrapped sum");
  tu_check_array(q, EMLX_FLOAT32, &n, 1, wq, 0, "(u8 + u8) / u8 sees the wrapped sum");
  emlx_release(s), emlx_release(f), emlx_release(q);
  emlx_release(a), emlx_release(b), emlx_release(c);
  double s8[3] = {100, -100, 127};
  a = tu_make1(EMLX_INT8, 3, s8);
  s = emlx_add(a, a);
  emlx_array *e = emlx_exp(s);
  double we[3] = {exp(-56.0), exp(56.0), exp(-2.0)};
  tu_check_array(e, EMLX_FLOAT32, &n, 1, we, 2, "exp(s8 + s8) sees the wrapped sum");
  emlx_release(a), emlx_release(s), emlx_release(e);

  /* f16: 1 + 2^-11 rounds to 1 before the cast; 300 * 300 overflows to inf */
  double h1[3] = {1, 300, 1}, h2[3] = {0x1p-11, 300, 0x1p-10};
  a = tu_make1(EMLX_FLOAT16, 3, h1), b = tu_make1(EMLX_FLOAT16, 3, h2);
  s = emlx_add(a, b);
  f = emlx_astype(s, EMLX_FLOAT32);
  double wh[3] = {1, 600, 1 + 0x1p-10};
  tu_check_array(f, EMLX_FLOAT32, &n, 1, wh, 0, "astype(f16 + f16) sees the rounded sum");
  emlx_array *m = emlx_multiply(a, b), *d = emlx_subtract(m, m);
  double wd[3] = {0, NAN, 0};
  tu_check_array(d, EMLX_FLOAT16, &n, 1, wd, 0, "f16 product overflows before the subtraction");
  emlx_release(a), emlx_release(b), emlx_release(s), emlx_release(f), emlx_release(m);
  emlx_release(d);
  double g1[3] = {1, 1, 256}, g2[3] = {0x1p-8, 0x1p-7, 1};
  a = tu_make1(EMLX_BFLOAT16, 3, g1), b = tu_make1(EMLX_BFLOAT16, 3, g2);
  s = emlx_add(a, b);
  f = emlx_astype(s, EMLX_FLOAT64);
  double wg[3] = {1, 1 + 0x1p-7, 256};
  tu_check_array(f, EMLX_FLOAT64, &n, 1, wg, 0, "astype(bf16 + bf16) sees the rounded sum");
  emlx_release(a), emlx_release(b), emlx_release(s), emlx_release(f);
  /* a reduction of a fused f16 producer: each element is 1.0 after rounding */
  int64_t k = 1000;
  emlx_array *ones = emlx_ones(&k, 1, EMLX_FLOAT16, EMLX_CPU);
  emlx_array *tiny = emlx_full(&k, 1, 0x1p-11, EMLX_FLOAT16, EMLX_CPU);
  s = emlx_add(ones, tiny);
  emlx_array *sum = emlx_sum(s, NULL, 0, false);
  double w1000 = 1000;
  tu_check_array(sum, EMLX_FLOAT16, NULL, 0, &w1000, 0, "sum(f16 + f16) of rounded elements");
  emlx_release(ones), emlx_release(tiny), emlx_release(s), emlx_release(sum);

  /* 64-bit integers through a chain: exact beyond 2^53 */
  int64_t va[2] = {(INT64_C(1) << 62) + 1, -(INT64_C(1) << 61) - 3}, vb[2] = {3, -5};
  int64_t n2 = 2;
  a = emlx_from_blob(va, EMLX_INT64, &n2, 1, EMLX_CPU),
  b = emlx_from_blob(vb, EMLX_INT64, &n2, 1, EMLX_CPU);
  s = emlx_add(a, b);
  m = emlx_multiply(s, b);
  d = emlx_subtract(m, a);
  int64_t wdd[2];
  for (int i = 0; i < 2; i++)
    wdd[i] = (int64_t)(((uint64_t)va[i] + (uint64_t)vb[i]) * (uint64_t)vb[i] - (uint64_t)va[i]);
  unsigned char *raw = tu_read_raw(d);
  CHECK_MSG(raw && memcmp(raw, wdd, 16) == 0, "s64 chain exact and wrapping");
  free(raw);
  emlx_release(a), emlx_release(b), emlx_release(s), emlx_release(m), emlx_release(d);
  uint64_t ua[2] = {UINT64_MAX - 10, (UINT64_C(1) << 63) + 12345}, ub[2] = {7, 3};
  a = emlx_from_blob(ua, EMLX_UINT64, &n2, 1, EMLX_CPU),
  b = emlx_from_blob(ub, EMLX_UINT64, &n2, 1, EMLX_CPU);
  s = emlx_add(a, b);
  m = emlx_multiply(s, b);
  uint64_t wu[2];
  for (int i = 0; i < 2; i++)
    wu[i] = (ua[i] + ub[i]) * ub[i];
  raw = tu_read_raw(m);
  CHECK_MSG(raw && memcmp(raw, wu, 16) == 0, "u64 chain exact and wrapping");
  free(raw);
  emlx_release(a), emlx_release(b), emlx_release(s), emlx_release(m);
}

static void test_null_inputs(void) {
  double v[2] = {1, 2};
  emlx_array *a = tu_make1(EMLX_FLOAT32, 2, v);
  for (binop op = ADD; op <= DIV; op++) {
    CHECK_NULL_ERR(apply(op, NULL, a));
    CHECK_NULL_ERR(apply(op, a, NULL));
    CHECK_NULL_ERR(apply(op, NULL, NULL));
  }
  CHECK_NULL_ERR(emlx_negate(NULL));
  CHECK_NULL_ERR(emlx_exp(NULL));
  emlx_release(a);
}

int main(void) {
  tu_run_isa_variants();
  test_float_binary();
  test_int_binary();
  test_bool_ops();
  test_mixed_promotion();
  test_broadcast();
  test_strided();
  test_empty();
  test_exp();
  test_fused_chain();
  test_fusion_keeps_dtypes();
  test_null_inputs();
  return tu_finish();
}
