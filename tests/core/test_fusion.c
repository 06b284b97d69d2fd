/* test_fusion.c — fusion at eval (include/emlx/compile.h) against the
 * unfused kernels.
 *
 * Every elementwise op (the unary and binary ops of ops.h and
 * elementwise.h, where, clip, isclose, astype between dtypes, copy) is
 * chained inside a multi-op region, post(op(pre(x))), where pre multiplies
 * by ones (identity for every dtype) and post doubles (or negates a bool).
 * The same graph is built twice from the same leaves, one copy evaluated
 * with fusion on and one with it off; the results must be bit-identical for
 * integers and bool and within 1 ulp for floats (NaN matches NaN). The fused
 * eval must also have run a region covering the op (fusion stats), so a
 * comparison of two unfused runs cannot pass for a fused one. Inputs: random
 * values (with NaN, infinities and signed zeros for floats) of f32, f64,
 * f16, bf16, int32, int8, uint8, bool and complex64 where the op takes them,
 * laid out contiguous, transposed, sliced with a step, as a broadcast row,
 * column or 0-d scalar, empty, and large enough for several tiles
 * (contiguous and transposed); binary ops see each layout on either side.
 *
 * Also: multi-output regions (intermediates the caller holds are written
 * and stay right), diamonds through reductions (softmax), a reduction with
 * an elementwise prologue, the plan cache counters (hit, miss, dtype and
 * contiguity in the key, capacity and eviction, clear; regions differing
 * only in an op's parameter or result dtype get plans of their own),
 * EMLX_FUSION=0 in the environment (the program re-executes itself), the
 * compute-once counters of emlx_eval_stats_get, concurrent evals sharing
 * plans, and a chain of a million adds. CTest runs the program at every ISA level
 * (EMLX_ISA). */
#include <pthread.h>

#include "test_util.h"

enum { R = 12, C = 37, BR = 67, BC = 129, NDT = 9 };

/* The dtypes under test, and a mask bit per entry. */
static const emlx_dtype dts[NDT] = {EMLX_FLOAT32,  EMLX_FLOAT64, EMLX_FLOAT16,
                                    EMLX_BFLOAT16, EMLX_INT32,   EMLX_INT8,
                                    EMLX_UINT8,    EMLX_BOOL,    EMLX_COMPLEX64};
#define M_ALL 0x1FFu
#define M_BOOL (1u << 7)
#define M_C64 (1u << 8)
#define M_NOBOOL (M_ALL & ~M_BOOL)
#define M_NOC64 (M_ALL & ~M_C64)
#define M_INTB ((1u << 4) | (1u << 5) | (1u << 6) | (1u << 7))

/* ---- comparing the two paths ---------------------------------------------- */

static long g_float_elems, g_float_inexact; /* elements within 1 ulp but not equal */

static bool is_nan_bits(emlx_dtype d, uint64_t b) {
  switch (d) {
  case EMLX_FLOAT16:
    return (b & 0x7C00) == 0x7C00 && (b & 0x3FF);
  case EMLX_BFLOAT16:
    return (b & 0x7F80) == 0x7F80 && (b & 0x7F);
  case EMLX_FLOAT32:
    return (b & 0x7F800000u) == 0x7F800000u && (b & 0x7FFFFFu);
  default:
    return (b & 0x7FF0000000000000ull) == 0x7FF0000000000000ull && (b & 0xFFFFFFFFFFFFFull);
  }
}

/* Distance in ulp of two floats given by their bit patterns of width w. */
static uint64_t ulp_dist(uint64_t a, uint64_t b, int w) {
  uint64_t sign = 1ull << (w - 1);
  int64_t ka = (a & sign) ? -(int64_t)(a & ~sign) : (int64_t)a;
  int64_t kb = (b & sign) ? -(int64_t)(b & ~sign) : (int64_t)b;
  return ka > kb ? (uint64_t)(ka - kb) : (uint64_t)(kb - ka);
}

static uint64_t bits_at(const unsigned char *p, size_t w) {
  uint64_t v = 0;
  memcpy(&v, p, w); /* little-endian: the low bytes */
  return v;
}

/* Compares one float lane (width w bytes, dtype d for NaN detection). */
static bool float_lane_ok(emlx_dtype d, const unsigned char *pu, const unsigned char *pf,
                          size_t w) {
  uint64_t bu = bits_at(pu, w), bf = bits_at(pf, w);
  g_float_elems++;
  if (is_nan_bits(d, bu) || is_nan_bits(d, bf))
    return is_nan_bits(d, bu) && is_nan_bits(d, bf);
  if (bu != bf)
    g_float_inexact++;
  return ulp_dist(bu, bf, (int)(8 * w)) <= 1;
}

/* u (unfused) against f (fused): same dtype and shape, values as above. */
static bool same_values_at(emlx_array *u, emlx_array *f, const char *what, const char *file,
                           int line) {
  emlx_dtype d = emlx_array_dtype(u);
  bool meta = emlx_array_dtype(f) == d && emlx_ndim(f) == emlx_ndim(u);
  for (int i = 0; meta && i < emlx_ndim(u); i++)
    meta = emlx_shape(u)[i] == emlx_shape(f)[i];
  if (!tu_record(meta, file, line, "%s: fused dtype/shape match the unfused ones", what))
    return false;
  unsigned char *ru = tu_read_raw_at(u, file, line), *rf = tu_read_raw_at(f, file, line);
  bool ok = ru && rf;
  int64_t n = emlx_size(u), bad = 0;
  size_t es = tu_dsize(d);
  long inexact0 = g_float_inexact;
  for (int64_t i = 0; ok && i < n; i++) {
    const unsigned char *pu = ru + (size_t)i * es, *pf = rf + (size_t)i * es;
    bool e;
    if (d == EMLX_COMPLEX64)
      e = float_lane_ok(EMLX_FLOAT32, pu, pf, 4) && float_lane_ok(EMLX_FLOAT32, pu + 4, pf + 4, 4);
    else if (tu_is_float(d))
      e = float_lane_ok(d, pu, pf, es);
    else
      e = memcmp(pu, pf, es) == 0;
    if (!e && bad++ < 3)
      fprintf(stderr, "%s:%d: %s [%s] element %" PRId64 ": unfused %.17g, fused %.17g\n", file,
              line, what, tu_dname(d), i, tu_load(pu, d), tu_load(pf, d));
  }
  free(ru);
  free(rf);
  if (g_float_inexact > inexact0)
    fprintf(stderr, "note: %s [%s]: %ld elements within 1 ulp, not bit-identical\n", what,
            tu_dname(d), g_float_inexact - inexact0);
  if (!ok)
    return false;
  return tu_record(bad == 0, file, line, "%s [%s]: %" PRId64 " of %" PRId64 " elements differ",
                   what, tu_dname(d), bad, n);
}
#define same_values(u, f, what) same_values_at((u), (f), (what), __FILE__, __LINE__)

static emlx_fusion_stats fstats(void) { return emlx_fusion_stats_get(); }

/* Builds one copy of the graph under test; ctx holds the (shared) leaves. */
typedef emlx_array *(*build_fn)(const void *ctx);

/* Builds the graph twice, evaluates one copy fused and one unfused, and
 * compares. When the result is not empty, the fused eval must have run at
 * least one region covering min_ops ops, and the unfused one none. */
static void check_paths_at(build_fn build, const void *ctx, int min_ops, const char *what,
                           const char *file, int line) {
  emlx_array *f = build(ctx), *u = build(ctx);
  if (!tu_record(f && u, file, line, "%s: graph builds", what)) {
    emlx_release(f), emlx_release(u);
    return;
  }
  emlx_set_fusion_enabled(true);
  emlx_fusion_stats s0 = fstats();
  int rf = emlx_eval(&f, 1);
  emlx_fusion_stats s1 = fstats();
  emlx_set_fusion_enabled(false);
  int ru = emlx_eval(&u, 1);
  emlx_fusion_stats s2 = fstats();
  emlx_set_fusion_enabled(true);
  tu_record(rf == 0 && ru == 0, file, line, "%s: both evals succeed (%d, %d)", what, rf, ru);
  tu_record(s2.regions == s1.regions, file, line, "%s: no region runs with fusion off", what);
  if (min_ops > 0 && emlx_size(f) > 0)
    tu_record(s1.regions > s0.regions && s1.fused_ops - s0.fused_ops >= (uint64_t)min_ops, file,
              line, "%s: fused eval ran a region of >= %d ops (regions +%llu, ops +%llu)", what,
              min_ops, (unsigned long long)(s1.regions - s0.regions),
              (unsigned long long)(s1.fused_ops - s0.fused_ops));
  if (rf == 0 && ru == 0)
    same_values_at(u, f, what, file, line);
  emlx_release(f);
  emlx_release(u);
}
#define check_paths(b, ctx, min_ops, what)                                                         \
  check_paths_at((b), (ctx), (min_ops), (what), __FILE__, __LINE__)

/* ---- inputs ----------------------------------------------------------------- */

typedef enum dom { D_ANY, D_POS, D_UNIT, D_GE1, D_EXP, D_CAST } dom;

static double float_value(tu_rng *r, dom dm) {
  if (tu_next(r) % 16 == 0) { /* a special now and then */
    static const double sp[6] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1.0};
    return sp[tu_next(r) % 6];
  }
  switch (dm) {
  case D_POS:
    return tu_uniform(r, 0.01, 6.0);
  case D_UNIT:
    return tu_uniform(r, -0.98, 0.98);
  case D_GE1:
    return tu_uniform(r, 1.0, 6.0);
  case D_EXP:
    return (tu_next(r) & 1) ? (double)tu_randint(r, -3, 6) : tu_uniform(r, -3.0, 3.0);
  case D_CAST: {
    static const double big[6] = {3e9, -3e9, 1e20, -1e20, 65519.0, -129.5};
    return (tu_next(r) % 8 == 0) ? big[tu_next(r) % 6] : tu_uniform(r, -300.0, 300.0);
  }
  default:
    return tu_uniform(r, -4.0, 4.0);
  }
}

static int64_t int_value(tu_rng *r, emlx_dtype d, dom dm) {
  switch (dm) {
  case D_POS:
    return tu_randint(r, 0, 100);
  case D_UNIT:
    return tu_randint(r, -1, 1);
  case D_GE1:
    return tu_randint(r, 1, 6);
  case D_EXP:
    return tu_randint(r, -2, 40); /* shift counts and exponents, some >= the width */
  default:
    break;
  }
  if (tu_next(r) % 8 == 0) { /* the edges */
    static const int64_t e32[5] = {INT32_MIN, INT32_MAX, -1, 0, 1};
    static const int64_t e8[5] = {INT8_MIN, INT8_MAX, -1, 0, 1};
    static const int64_t eu8[5] = {0, 255, 1, 128, 127};
    int k = (int)(tu_next(r) % 5);
    return d == EMLX_INT32 ? e32[k] : d == EMLX_INT8 ? e8[k] : eu8[k];
  }
  return (int64_t)tu_next(r); /* wrapped to the dtype by the store */
}

/* n random elements of dtype d in the domain dm, as raw bytes. */
static void *random_raw(emlx_dtype d, int64_t n, dom dm, tu_rng *r) {
  size_t es = tu_dsize(d);
  unsigned char *buf = malloc((size_t)(n > 0 ? n : 1) * es);
  for (int64_t i = 0; i < n; i++) {
    unsigned char *p = buf + (size_t)i * es;
    if (d == EMLX_COMPLEX64) {
      float z[2] = {(float)float_value(r, dm), (float)float_value(r, dm)};
      memcpy(p, z, 8);
    } else if (tu_is_float(d)) {
      tu_store(p, d, float_value(r, dm));
    } else if (d == EMLX_BOOL) {
      p[0] = (unsigned char)(tu_next(r) & 1);
    } else {
      int64_t v = int_value(r, d, dm);
      memcpy(p, &v, es); /* little-endian truncation: wraps */
    }
  }
  return buf;
}

static emlx_array *random_array(emlx_dtype d, const int64_t *shape, int ndim, dom dm, tu_rng *r) {
  void *buf = random_raw(d, tu_numel(shape, ndim), dm, r);
  emlx_array *a = emlx_from_blob(buf, d, shape, ndim, EMLX_CPU);
  free(buf);
  return a;
}

typedef enum layout {
  L_CONTIG,
  L_TRANS,
  L_SLICE,
  L_ROW,
  L_COL,
  L_SCALAR,
  L_EMPTY,
  L_BIG,
  L_BIGT,
  L_COUNT
} layout;
static const char *lname[L_COUNT] = {"contiguous", "transposed", "sliced",
                                     "row",        "column",     "scalar",
                                     "empty",      "large",      "large-transposed"};

static bool is_bcast(layout l) { return l == L_ROW || l == L_COL || l == L_SCALAR; }

/* The shape of the region an input of layout l takes part in. */
static void region_shape(layout l, int64_t sh[2]) {
  sh[0] = l == L_EMPTY ? 0 : (l == L_BIG || l == L_BIGT) ? BR : R;
  sh[1] = (l == L_BIG || l == L_BIGT) ? BC : C;
}

/* A leaf (or view of one) of dtype d in layout l. */
static emlx_array *make_leaf(emlx_dtype d, layout l, dom dm, tu_rng *r) {
  int64_t sh[2];
  region_shape(l, sh);
  switch (l) {
  case L_TRANS:
  case L_BIGT: {
    int64_t st[2] = {sh[1], sh[0]};
    emlx_array *base = random_array(d, st, 2, dm, r);
    emlx_array *v = emlx_transpose(base, NULL, 0);
    emlx_release(base);
    return v;
  }
  case L_SLICE: {
    int64_t sb[2] = {sh[0], 2 * sh[1] + 1}, start[2] = {0, 1}, stop[2] = {sh[0], 2 * sh[1] + 1},
            step[2] = {1, 2};
    emlx_array *base = random_array(d, sb, 2, dm, r);
    emlx_array *v = emlx_slice(base, start, stop, step, 2);
    emlx_release(base);
    return v;
  }
  case L_ROW: {
    int64_t s1[2] = {1, sh[1]};
    return random_array(d, s1, 2, dm, r);
  }
  case L_COL: {
    int64_t s1[2] = {sh[0], 1};
    return random_array(d, s1, 2, dm, r);
  }
  case L_SCALAR:
    return random_array(d, NULL, 0, dm, r);
  default:
    return random_array(d, sh, 2, dm, r);
  }
}

/* A contiguous leaf of the full region shape of layout l. */
static emlx_array *make_full(emlx_dtype d, layout l, dom dm, tu_rng *r) {
  int64_t sh[2];
  region_shape(l, sh);
  return random_array(d, sh, 2, dm, r);
}

/* pre(x): x * ones, the ones of the region's full shape when x is a
 * broadcast layout (so the region has the full shape), else 0-d. */
static emlx_array *pre(emlx_array *x, layout l) {
  int64_t sh[2];
  region_shape(l, sh);
  emlx_array *ones = is_bcast(l) ? emlx_ones(sh, 2, emlx_array_dtype(x), EMLX_CPU)
                                 : emlx_ones(NULL, 0, emlx_array_dtype(x), EMLX_CPU);
  emlx_array *t = emlx_multiply(x, ones);
  emlx_release(ones);
  return t;
}

/* post(y): logical_not for bool, else y * 2 in y's dtype. Consumes y. */
static emlx_array *post(emlx_array *y) {
  if (!y)
    return NULL;
  emlx_array *z;
  if (emlx_array_dtype(y) == EMLX_BOOL) {
    z = emlx_logical_not(y);
  } else {
    emlx_array *two = emlx_dtype_is_complex(emlx_array_dtype(y))
                          ? emlx_scalar_tensor_complex(2.0f, 0.0f, EMLX_CPU)
                          : emlx_scalar_tensor(2.0, emlx_array_dtype(y), EMLX_CPU);
    z = emlx_multiply(y, two);
    emlx_release(two);
  }
  emlx_release(y);
  return z;
}

/* ---- every unary op --------------------------------------------------------- */

typedef emlx_array *(*un_fn)(emlx_array *);
typedef emlx_array *(*bin_fn)(emlx_array *, emlx_array *);

typedef struct unop {
  const char *name;
  un_fn fn;
  unsigned mask;
  dom dm;
  unsigned const_mask; /* dtypes whose result is a constant (no fusion expected) */
} unop;

#define UN(f, m, d)                                                                                \
  { #f, emlx_##f, (m), (d), 0 }
static const unop unops[] = {
    UN(negate, M_NOBOOL, D_ANY),
    UN(exp, M_ALL, D_ANY),
    UN(copy, M_ALL, D_ANY),
    UN(abs, M_ALL, D_ANY),
    UN(sign, M_ALL, D_ANY),
    UN(floor, M_NOC64, D_ANY),
    UN(ceil, M_NOC64, D_ANY),
    UN(round, M_ALL, D_CAST),
    UN(round_half_away, M_NOC64, D_CAST),
    UN(conjugate, M_ALL, D_ANY),
    UN(real, M_ALL, D_ANY),
    {"imag", emlx_imag, M_ALL, D_ANY, M_ALL & ~M_C64},
    UN(bitwise_not, M_INTB, D_ANY),
    UN(sqrt, M_ALL, D_POS),
    UN(rsqrt, M_ALL, D_POS),
    UN(log, M_ALL, D_POS),
    UN(log1p, M_ALL, D_POS),
    UN(expm1, M_NOC64, D_ANY),
    UN(sin, M_ALL, D_ANY),
    UN(cos, M_ALL, D_ANY),
    UN(tan, M_ALL, D_ANY),
    UN(asin, M_ALL, D_UNIT),
    UN(acos, M_ALL, D_UNIT),
    UN(atan, M_ALL, D_ANY),
    UN(sinh, M_ALL, D_ANY),
    UN(cosh, M_ALL, D_ANY),
    UN(tanh, M_ALL, D_ANY),
    UN(asinh, M_ALL, D_ANY),
    UN(acosh, M_ALL, D_GE1),
    UN(atanh, M_ALL, D_UNIT),
    UN(erf, M_NOC64, D_ANY),
    UN(erf_inv, M_NOC64, D_UNIT),
    UN(sigmoid, M_NOC64, D_ANY),
    {"is_nan", emlx_is_nan, M_ALL, D_ANY, M_INTB},
    {"is_infinity", emlx_is_infinity, M_ALL, D_ANY, M_INTB},
    UN(logical_not, M_ALL, D_ANY),
};

typedef struct un_ctx {
  un_fn fn;
  emlx_array *x;
  layout l;
} un_ctx;

static emlx_array *build_unary(const void *p) {
  const un_ctx *c = p;
  emlx_array *t = pre(c->x, c->l);
  emlx_array *y = t ? c->fn(t) : NULL;
  emlx_release(t);
  return post(y);
}

/* Ops in post(fn(pre(x))): 2 when fn returns its input itself. */
static int chain_ops(un_fn fn, emlx_array *x, layout l) {
  emlx_array *t = pre(x, l), *y = t ? fn(t) : NULL;
  int n = y == t ? 2 : 3;
  emlx_release(y), emlx_release(t);
  return n;
}

static void test_unary_ops(void) {
  tu_rng r = {101};
  char what[160];
  for (size_t k = 0; k < sizeof unops / sizeof unops[0]; k++)
    for (int di = 0; di < NDT; di++) {
      if (!(unops[k].mask & (1u << di)))
        continue;
      for (int l = 0; l < L_COUNT; l++) {
        un_ctx c = {unops[k].fn, make_leaf(dts[di], (layout)l, unops[k].dm, &r), (layout)l};
        snprintf(what, sizeof what, "%s of %s %s", unops[k].name, lname[l], tu_dname(dts[di]));
        /* imag of a real dtype is zeros, is_nan of an integer false: constants
         * that do not read the input, so only post() is left to fuse */
        int ops = (unops[k].const_mask & (1u << di)) ? 0 : c.x ? chain_ops(c.fn, c.x, c.l) : 3;
        check_paths(build_unary, &c, ops, what);
        emlx_release(c.x);
      }
    }
}

/* ---- every binary op -------------------------------------------------------- */

typedef struct binop {
  const char *name;
  bin_fn fn;
  unsigned mask;
  dom da, db;
} binop;

#define BI(f, m, a, b)                                                                             \
  { #f, emlx_##f, (m), (a), (b) }
static const binop binops[] = {
    BI(add, M_ALL, D_ANY, D_ANY),           BI(subtract, M_ALL, D_ANY, D_ANY),
    BI(multiply, M_ALL, D_ANY, D_ANY),      BI(divide, M_ALL, D_ANY, D_ANY),
    BI(quotient, M_NOC64, D_ANY, D_ANY),    BI(floor_divide, M_NOC64, D_ANY, D_ANY),
    BI(remainder, M_NOC64, D_ANY, D_ANY),   BI(remainder_trunc, M_NOC64, D_ANY, D_ANY),
    BI(pow, M_ALL, D_POS, D_EXP),           BI(atan2, M_NOC64, D_ANY, D_ANY),
    BI(maximum, M_ALL, D_ANY, D_ANY),       BI(minimum, M_ALL, D_ANY, D_ANY),
    BI(equal, M_ALL, D_UNIT, D_UNIT),       BI(not_equal, M_ALL, D_UNIT, D_UNIT),
    BI(greater, M_ALL, D_ANY, D_ANY),       BI(greater_equal, M_ALL, D_UNIT, D_UNIT),
    BI(less, M_ALL, D_ANY, D_ANY),          BI(less_equal, M_ALL, D_UNIT, D_UNIT),
    BI(logical_and, M_ALL, D_UNIT, D_UNIT), BI(logical_or, M_ALL, D_UNIT, D_UNIT),
    BI(logical_xor, M_ALL, D_UNIT, D_UNIT), BI(bitwise_and, M_INTB, D_ANY, D_ANY),
    BI(bitwise_or, M_INTB, D_ANY, D_ANY),   BI(bitwise_xor, M_INTB, D_ANY, D_ANY),
    BI(left_shift, M_INTB, D_ANY, D_EXP),   BI(right_shift, M_INTB, D_ANY, D_EXP),
};

typedef struct bin_ctx {
  bin_fn fn;
  emlx_array *a, *b;
  layout la; /* the layout of a (pre is applied to a) */
} bin_ctx;

static emlx_array *build_binary(const void *p) {
  const bin_ctx *c = p;
  emlx_array *t = pre(c->a, c->la);
  emlx_array *y = t ? c->fn(t, c->b) : NULL;
  emlx_release(t);
  return post(y);
}

static void test_binary_ops(void) {
  tu_rng r = {202};
  char what[200];
  for (size_t k = 0; k < sizeof binops / sizeof binops[0]; k++)
    for (int di = 0; di < NDT; di++) {
      if (!(binops[k].mask & (1u << di)))
        continue;
      emlx_dtype d = dts[di];
      for (int l = 0; l < L_COUNT; l++)
        for (int side = 0; side < 2; side++) {
          bin_ctx c = {binops[k].fn, NULL, NULL, (layout)l};
          if (side == 0) { /* a in layout l (through pre), b a full contiguous leaf */
            c.a = make_leaf(d, (layout)l, binops[k].da, &r);
            c.b = make_full(d, (layout)l, binops[k].db, &r);
          } else { /* a full contiguous, b in layout l: used as is (broadcast in the region) */
            c.a = make_full(d, (layout)l, binops[k].da, &r);
            c.b = make_leaf(d, (layout)l, binops[k].db, &r);
            c.la = l == L_EMPTY ? L_EMPTY : (l == L_BIG || l == L_BIGT) ? L_BIG : L_CONTIG;
          }
          snprintf(what, sizeof what, "%s of %s, %s %s", binops[k].name,
                   side == 0 ? lname[l] : "contiguous", side == 0 ? "contiguous" : lname[l],
                   tu_dname(d));
          check_paths(build_binary, &c, 3, what);
          emlx_release(c.a), emlx_release(c.b);
        }
    }
}

/* Mixed dtypes: the promotion's implicit conversions inside the region. */
static void test_mixed_promotion(void) {
  static const emlx_dtype pairs[][2] = {{EMLX_INT8, EMLX_FLOAT16},      {EMLX_UINT8, EMLX_INT32},
                                        {EMLX_BOOL, EMLX_FLOAT32},      {EMLX_INT32, EMLX_FLOAT64},
                                        {EMLX_BFLOAT16, EMLX_FLOAT16},  {EMLX_UINT8, EMLX_INT8},
                                        {EMLX_FLOAT32, EMLX_COMPLEX64}, {EMLX_INT8, EMLX_BFLOAT16}};
  static const bin_fn fns[4] = {emlx_add, emlx_multiply, emlx_maximum, emlx_less};
  static const char *names[4] = {"add", "multiply", "maximum", "less"};
  tu_rng r = {303};
  char what[160];
  for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
    for (int k = 0; k < 4; k++)
      for (int l = 0; l < L_COUNT; l++) {
        bin_ctx c = {fns[k], make_leaf(pairs[p][0], (layout)l, D_ANY, &r),
                     make_full(pairs[p][1], (layout)l, D_ANY, &r), (layout)l};
        snprintf(what, sizeof what, "%s(%s %s, %s)", names[k], lname[l], tu_dname(pairs[p][0]),
                 tu_dname(pairs[p][1]));
        check_paths(build_binary, &c, 3, what);
        emlx_release(c.a), emlx_release(c.b);
      }
}

/* ---- astype, where, clip, isclose -------------------------------------------- */

typedef struct cast_ctx {
  emlx_array *x;
  layout l;
  emlx_dtype to;
} cast_ctx;

static emlx_array *build_cast(const void *p) {
  const cast_ctx *c = p;
  emlx_array *t = pre(c->x, c->l);
  emlx_array *y = t ? emlx_astype(t, c->to) : NULL;
  emlx_release(t);
  return post(y);
}

static void test_astype(void) {
  static const layout lays[5] = {L_CONTIG, L_TRANS, L_ROW, L_SCALAR, L_BIGT};
  tu_rng r = {404};
  char what[160];
  for (int si = 0; si < NDT; si++)
    for (int ti = 0; ti < NDT; ti++)
      for (int k = 0; k < 5; k++) {
        cast_ctx c = {make_leaf(dts[si], lays[k], D_CAST, &r), lays[k], dts[ti]};
        emlx_array *t = pre(c.x, c.l), *y = emlx_astype(t, c.to);
        int ops = y == t ? 2 : 3;
        emlx_release(y), emlx_release(t);
        snprintf(what, sizeof what, "astype %s %s -> %s", lname[lays[k]], tu_dname(dts[si]),
                 tu_dname(dts[ti]));
        check_paths(build_cast, &c, ops, what);
        emlx_release(c.x);
      }
}

typedef struct sel_ctx {
  emlx_array *cond, *x, *y, *lo, *hi;
  layout l;
  double rtol, atol;
  bool equal_nan;
} sel_ctx;

/* post(where(!cond, pre(x), y)) */
static emlx_array *build_where(const void *p) {
  const sel_ctx *c = p;
  emlx_array *nc = emlx_logical_not(c->cond), *t = pre(c->x, L_CONTIG);
  emlx_array *w = nc && t ? emlx_where(nc, t, c->y) : NULL;
  emlx_release(nc), emlx_release(t);
  return post(w);
}

/* post(clip(pre(x), lo, hi)) */
static emlx_array *build_clip(const void *p) {
  const sel_ctx *c = p;
  emlx_array *t = pre(c->x, c->l);
  emlx_array *y = t ? emlx_clip(t, c->lo, c->hi) : NULL;
  emlx_release(t);
  return post(y);
}

/* post(isclose(pre(x), pre(x) + y)) */
static emlx_array *build_isclose(const void *p) {
  const sel_ctx *c = p;
  emlx_array *t = pre(c->x, c->l), *t2 = pre(c->x, c->l);
  emlx_array *b = t2 ? emlx_add(t2, c->y) : NULL;
  emlx_array *y = t && b ? emlx_isclose(t, b, c->rtol, c->atol, c->equal_nan) : NULL;
  emlx_release(t), emlx_release(t2), emlx_release(b);
  return post(y);
}

static void test_selection(void) {
  tu_rng r = {505};
  char what[200];
  for (int di = 0; di < NDT; di++) {
    emlx_dtype d = dts[di];
    for (int l = 0; l < L_COUNT; l++) {
      layout lay = (layout)l;
      /* where: cond in layout l; x full (through pre); y in layout l */
      sel_ctx c = {.cond = make_leaf(EMLX_BOOL, lay, D_ANY, &r),
                   .x = make_full(d, lay, D_ANY, &r),
                   .y = make_leaf(d, lay, D_ANY, &r),
                   .l = lay};
      /* a broadcast cond's logical_not has the cond's own shape: another region */
      int wops = is_bcast(lay) ? 3 : 4;
      snprintf(what, sizeof what, "where(%s cond, x, %s y) %s", lname[l], lname[l], tu_dname(d));
      check_paths(build_where, &c, wops, what);
      emlx_release(c.cond), emlx_release(c.x), emlx_release(c.y);

      /* where with mixed x / y dtypes */
      c = (sel_ctx){.cond = make_leaf(EMLX_BOOL, lay, D_ANY, &r),
                    .x = make_full(d, lay, D_ANY, &r),
                    .y = make_leaf(di == 0 ? EMLX_INT8 : EMLX_FLOAT32, lay, D_ANY, &r),
                    .l = lay};
      snprintf(what, sizeof what, "where(%s cond, %s x, %s y)", lname[l], tu_dname(d),
               tu_dname(emlx_array_dtype(c.y)));
      check_paths(build_where, &c, wops, what);
      emlx_release(c.cond), emlx_release(c.x), emlx_release(c.y);

      /* clip: x in layout l; bounds a row / 0-d / absent, in turn */
      int64_t sh[2];
      region_shape(lay, sh);
      int64_t srow[2] = {1, sh[1]};
      for (int b = 0; b < 3; b++) {
        emlx_array *row = random_array(d, srow, 2, D_ANY, &r);
        emlx_array *sc = random_array(d, NULL, 0, D_ANY, &r);
        c = (sel_ctx){.x = make_leaf(d, lay, D_ANY, &r), .l = lay};
        c.lo = b == 0 ? row : b == 1 ? NULL : sc;
        c.hi = b == 0 ? sc : b == 1 ? row : NULL;
        snprintf(what, sizeof what, "clip(%s x, %s, %s) %s", lname[l],
                 c.lo == row ? "row"
                 : c.lo      ? "scalar"
                             : "none",
                 c.hi == row ? "row"
                 : c.hi      ? "scalar"
                             : "none",
                 tu_dname(d));
        check_paths(build_clip, &c, 3, what);
        emlx_release(c.x), emlx_release(row), emlx_release(sc);
      }

      /* isclose: x against x + small noise */
      for (int en = 0; en < 2; en++) {
        c = (sel_ctx){.x = make_leaf(d, lay, D_ANY, &r),
                      .l = lay,
                      .rtol = 1e-3,
                      .atol = 1e-4,
                      .equal_nan = en != 0};
        int64_t shy[2];
        region_shape(lay, shy);
        c.y = random_array(d, shy, 2, D_UNIT, &r);
        if (tu_is_float(d) || d == EMLX_COMPLEX64) { /* scale the noise to ~1e-3 */
          emlx_array *s =
              emlx_scalar_tensor(1e-3, d == EMLX_COMPLEX64 ? EMLX_FLOAT32 : d, EMLX_CPU);
          emlx_array *y2 = emlx_multiply(c.y, s);
          emlx_release(s), emlx_release(c.y);
          c.y = y2;
          CHECK(emlx_eval(&c.y, 1) == 0);
        }
        snprintf(what, sizeof what, "isclose(%s x, x + noise, equal_nan=%d) %s", lname[l], en,
                 tu_dname(d));
        check_paths(build_isclose, &c, 4, what);
        emlx_release(c.x), emlx_release(c.y);
      }
    }
  }
}

/* ---- regions with several outputs ------------------------------------------- */

/* f64 reference of x as stored in f32 (row-major). */
static double *f32_values(emlx_array *x) { return tu_read(x); }

/* t = exp(x), u = t * 2, v = u + y, w = sin(v): the caller holds t, u, v, w
 * and asks for w only. Every held intermediate must come out of the region
 * evaluated and right, and evaluating it again must compute nothing. */
static void test_multi_output(void) {
  int64_t sh[2] = {R, C};
  tu_rng r = {606};
  emlx_array *x = random_array(EMLX_FLOAT32, sh, 2, D_UNIT, &r);
  emlx_array *y = random_array(EMLX_FLOAT32, sh, 2, D_UNIT, &r);
  emlx_array *two = emlx_scalar_tensor(2.0, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *h[2][4]; /* [unfused, fused][t u v w] */
  for (int p = 0; p < 2; p++) {
    h[p][0] = emlx_exp(x);
    h[p][1] = emlx_multiply(h[p][0], two);
    h[p][2] = emlx_add(h[p][1], y);
    h[p][3] = emlx_sin(h[p][2]);
  }
  emlx_set_fusion_enabled(false);
  CHECK_OK(emlx_eval(&h[0][3], 1));
  emlx_set_fusion_enabled(true);
  emlx_fusion_stats s0 = fstats();
  CHECK_OK(emlx_eval(&h[1][3], 1));
  emlx_fusion_stats s1 = fstats();
  CHECK_MSG(s1.regions > s0.regions && s1.fused_ops - s0.fused_ops >= 4,
            "multi-output: one region covered the four ops (ops +%llu)",
            (unsigned long long)(s1.fused_ops - s0.fused_ops));
  static const char *nm[4] = {"t = exp(x)", "u = t * 2", "v = u + y", "w = sin(v)"};
  for (int i = 0; i < 4; i++)
    CHECK_MSG(emlx_is_evaluated(h[1][i]), "multi-output: held %s is evaluated by the region",
              nm[i]);
  uint64_t c0 = emlx_eval_stats_get().nodes_computed;
  CHECK_OK(emlx_eval(h[1], 3));
  CHECK_MSG(emlx_eval_stats_get().nodes_computed == c0,
            "multi-output: evaluating the held intermediates again computes nothing");
  for (int i = 0; i < 4; i++) {
    emlx_set_fusion_enabled(false);
    CHECK_OK(emlx_eval(&h[0][i], 1));
    emlx_set_fusion_enabled(true);
    same_values(h[0][i], h[1][i], nm[i]);
  }
  /* against f64 */
  double *xv = f32_values(x), *yv = f32_values(y), *w = tu_read(h[1][3]);
  if (xv && yv && w) {
    double *ref = malloc(sizeof(double) * R * C);
    for (int i = 0; i < R * C; i++)
      ref[i] = sin(exp(xv[i]) * 2 + yv[i]);
    double maxerr = 0;
    for (int i = 0; i < R * C; i++)
      maxerr = fmax(maxerr, fabs(w[i] - ref[i]));
    CHECK_MSG(maxerr < 1e-5, "multi-output: w against f64 (max error %g)", maxerr);
    free(ref);
  }
  free(xv), free(yv), free(w);

  /* two requested outputs of one region plus a released intermediate */
  emlx_array *o[2][2];
  for (int p = 0; p < 2; p++) {
    emlx_array *t = emlx_exp(x), *u = emlx_multiply(t, y);
    o[p][0] = emlx_cos(u);
    o[p][1] = emlx_subtract(u, t);
    emlx_release(t), emlx_release(u);
  }
  emlx_set_fusion_enabled(false);
  CHECK_OK(emlx_eval(o[0], 2));
  emlx_set_fusion_enabled(true);
  CHECK_OK(emlx_eval(o[1], 2));
  same_values(o[0][0], o[1][0], "two requested outputs: cos(exp(x) * y)");
  same_values(o[0][1], o[1][1], "two requested outputs: exp(x) * y - exp(x)");
  for (int p = 0; p < 2; p++)
    for (int i = 0; i < 2; i++)
      emlx_release(o[p][i]);
  for (int p = 0; p < 2; p++)
    for (int i = 0; i < 4; i++)
      emlx_release(h[p][i]);
  emlx_release(two), emlx_release(x), emlx_release(y);
}

/* ---- through reductions ---------------------------------------------------- */

/* softmax(x * s) + x over the rows: exp feeds a sum (not elementwise) and a
 * later divide (elementwise), so the region cannot simply absorb it. */
static emlx_array *build_softmax(const void *p) {
  emlx_array *const *in = p; /* x, s, hold */
  int ax = 1;
  emlx_array *t = emlx_multiply(in[0], in[1]);
  emlx_array *m = emlx_max(t, &ax, 1, true);
  emlx_array *d = emlx_subtract(t, m);
  emlx_array *e = emlx_exp(d);
  emlx_array *s = emlx_sum(e, &ax, 1, true);
  emlx_array *q = emlx_divide(e, s);
  emlx_array *o = emlx_add(q, in[0]);
  emlx_release(t), emlx_release(m), emlx_release(d), emlx_release(s), emlx_release(q);
  emlx_release(e);
  return o;
}

static void test_diamonds(void) {
  int64_t sh[2] = {R, C}, shb[2] = {BR, BC};
  tu_rng r = {707};
  for (int big = 0; big < 2; big++) {
    emlx_array *x = random_array(EMLX_FLOAT32, big ? shb : sh, 2, D_ANY, &r);
    emlx_array *sc = emlx_scalar_tensor(1.5, EMLX_FLOAT32, EMLX_CPU);
    emlx_array *in[2] = {x, sc};
    check_paths(build_softmax, in, 2, big ? "softmax diamond, large" : "softmax diamond");
    /* and against f64 */
    emlx_array *o = build_softmax(in);
    double *xv = tu_read(x), *ov = tu_read(o);
    int64_t rr = big ? BR : R, cc = big ? BC : C;
    if (xv && ov) {
      double maxerr = 0;
      for (int64_t i = 0; i < rr; i++) {
        double mx = -INFINITY, s = 0;
        for (int64_t j = 0; j < cc; j++)
          mx = fmax(mx, (double)(float)(xv[i * cc + j] * 1.5));
        for (int64_t j = 0; j < cc; j++)
          s += exp((double)(float)(xv[i * cc + j] * 1.5) - mx);
        for (int64_t j = 0; j < cc; j++) {
          double ref = exp((double)(float)(xv[i * cc + j] * 1.5) - mx) / s + xv[i * cc + j];
          maxerr = fmax(maxerr, fabs(ov[i * cc + j] - ref));
        }
      }
      CHECK_MSG(maxerr < 1e-5, "softmax diamond against f64 (max error %g)", maxerr);
    }
    free(xv), free(ov);
    emlx_release(o), emlx_release(sc), emlx_release(x);
  }

  /* the caller holds the exp that feeds the sum and the divide */
  emlx_array *x = random_array(EMLX_FLOAT32, sh, 2, D_UNIT, &r);
  emlx_array *e[2], *o[2];
  int ax = 0;
  for (int p = 0; p < 2; p++) {
    emlx_array *t = emlx_sin(x);
    e[p] = emlx_exp(t);
    emlx_array *s = emlx_sum(e[p], &ax, 1, false);
    emlx_array *q = emlx_divide(e[p], s);
    o[p] = emlx_multiply(q, t);
    emlx_release(t), emlx_release(s), emlx_release(q);
  }
  emlx_set_fusion_enabled(false);
  CHECK_OK(emlx_eval(&o[0], 1));
  emlx_set_fusion_enabled(true);
  CHECK_OK(emlx_eval(&o[1], 1));
  same_values(o[0], o[1], "held exp feeding a sum and a divide");
  CHECK_MSG(emlx_is_evaluated(e[1]), "the held exp is evaluated");
  same_values(e[0], e[1], "the held exp itself");
  for (int p = 0; p < 2; p++)
    emlx_release(e[p]), emlx_release(o[p]);

  /* a reduction with an elementwise prologue: sum(x * x) and sum(exp(x)) over
   * each axis and all axes, against f64 (the fused reduction may add in
   * another order) */
  double *xv = tu_read(x);
  for (int k = 0; k < 3 && xv; k++) {
    int axes[1] = {k};
    emlx_array *sq = emlx_multiply(x, x);
    emlx_array *s = k < 2 ? emlx_sum(sq, axes, 1, false) : emlx_sum(sq, NULL, 0, false);
    double *sv = tu_read(s);
    int64_t nout = k == 0 ? C : k == 1 ? R : 1;
    double maxrel = 0;
    for (int64_t o2 = 0; sv && o2 < nout; o2++) {
      double ref = 0;
      for (int64_t i = 0; i < R; i++)
        for (int64_t j = 0; j < C; j++)
          if ((k == 0 && j == o2) || (k == 1 && i == o2) || k == 2)
            ref += (double)(float)(xv[i * C + j] * xv[i * C + j]);
      maxrel = fmax(maxrel, fabs(sv[o2] - ref) / fmax(1.0, fabs(ref)));
    }
    CHECK_MSG(sv && maxrel < 1e-5, "sum(x * x) over axis %d against f64 (rel error %g)", k, maxrel);
    free(sv);
    emlx_release(s), emlx_release(sq);
  }
  free(xv);
  emlx_release(x);
}

/* ---- the plan cache ------------------------------------------------------------ */

/* exp(x) * 2 + 1 on a leaf of the given dtype and shape (or the transpose). */
static emlx_array *exp2p1(emlx_array *x) {
  emlx_dtype d = emlx_array_dtype(x);
  emlx_array *two = emlx_scalar_tensor(2.0, d, EMLX_CPU),
             *one = emlx_scalar_tensor(1.0, d, EMLX_CPU);
  emlx_array *e = emlx_exp(x), *m = emlx_multiply(e, two), *a = emlx_add(m, one);
  emlx_release(two), emlx_release(one), emlx_release(e), emlx_release(m);
  return a;
}

/* Evaluates exp2p1 on x once with fusion on; returns the stats delta. */
static emlx_fusion_stats run_exp2p1(emlx_array *x) {
  emlx_fusion_stats s0 = fstats();
  emlx_array *a = exp2p1(x);
  CHECK(a && emlx_eval(&a, 1) == 0);
  emlx_release(a);
  emlx_fusion_stats s1 = fstats();
  return (emlx_fusion_stats){.regions = s1.regions - s0.regions,
                             .fused_ops = s1.fused_ops - s0.fused_ops,
                             .hits = s1.hits - s0.hits,
                             .misses = s1.misses - s0.misses,
                             .evictions = s1.evictions - s0.evictions,
                             .cached = s1.cached,
                             .capacity = s1.capacity};
}

static void test_plan_cache(void) {
  emlx_set_fusion_enabled(true);
  int64_t sh[2] = {R, C}, sh2[2] = {2 * R, C + 3}, st[2] = {C, R};
  tu_rng r = {808};
  emlx_array *x32 = random_array(EMLX_FLOAT32, sh, 2, D_ANY, &r);
  emlx_array *x32b = random_array(EMLX_FLOAT32, sh2, 2, D_ANY, &r);
  emlx_array *x64 = random_array(EMLX_FLOAT64, sh, 2, D_ANY, &r);
  emlx_array *base = random_array(EMLX_FLOAT32, st, 2, D_ANY, &r);
  emlx_array *xt = emlx_transpose(base, NULL, 0);
  CHECK_OK(emlx_eval(&xt, 1));

  emlx_fusion_stats s = fstats();
  CHECK_MSG(s.capacity == 1024, "default capacity 1024 (got %zu)", s.capacity);
  emlx_fusion_cache_clear();
  CHECK_EQ_U64(fstats().cached, 0);

  emlx_fusion_stats d = run_exp2p1(x32);
  CHECK_MSG(d.regions == 1 && d.misses == 1 && d.hits == 0 && d.cached == 1,
            "first exp(x)*2+1: one region, one miss (regions %llu misses %llu hits %llu cached "
            "%zu)",
            (unsigned long long)d.regions, (unsigned long long)d.misses, (unsigned long long)d.hits,
            d.cached);
  CHECK_MSG(d.fused_ops == 3, "exp(x)*2+1 is a region of 3 ops (got %llu)",
            (unsigned long long)d.fused_ops);
  d = run_exp2p1(x32);
  CHECK_MSG(d.misses == 0 && d.hits == 1 && d.cached == 1,
            "same structure again: a hit (misses %llu hits %llu)", (unsigned long long)d.misses,
            (unsigned long long)d.hits);
  d = run_exp2p1(x32b);
  CHECK_MSG(d.misses == 0 && d.hits == 1,
            "same structure, other sizes of the same rank: a hit (misses %llu hits %llu)",
            (unsigned long long)d.misses, (unsigned long long)d.hits);
  d = run_exp2p1(x64);
  CHECK_MSG(d.misses == 1 && d.hits == 0 && d.cached == 2,
            "other dtype: a new miss (misses %llu hits %llu cached %zu)",
            (unsigned long long)d.misses, (unsigned long long)d.hits, d.cached);
  d = run_exp2p1(xt);
  CHECK_MSG(d.misses == 1 && d.cached == 3,
            "strided input (other contiguity class): a new miss (misses %llu cached %zu)",
            (unsigned long long)d.misses, d.cached);

  /* lowering the bound evicts at once */
  size_t before = fstats().cached;
  uint64_t ev0 = fstats().evictions;
  size_t prev = emlx_set_fusion_cache_capacity(1);
  CHECK_MSG(prev == 1024, "set_fusion_cache_capacity returns the previous bound (%zu)", prev);
  s = fstats();
  CHECK_MSG(s.capacity == 1 && s.cached == 1 && s.evictions - ev0 == before - 1,
            "capacity 1: %zu cached, %llu evicted (want 1, %zu)", s.cached,
            (unsigned long long)(s.evictions - ev0), before - 1);

  /* two structures alternately through a cache of one */
  emlx_fusion_stats a0 = fstats();
  for (int i = 0; i < 6; i++)
    run_exp2p1((i & 1) ? x64 : x32);
  emlx_fusion_stats a1 = fstats();
  CHECK_MSG(a1.misses - a0.misses == 6 && a1.hits == a0.hits && a1.evictions - a0.evictions >= 5 &&
                a1.cached == 1,
            "alternating through capacity 1: misses +%llu hits +%llu evictions +%llu cached %zu",
            (unsigned long long)(a1.misses - a0.misses), (unsigned long long)(a1.hits - a0.hits),
            (unsigned long long)(a1.evictions - a0.evictions), a1.cached);
  CHECK_EQ_U64(emlx_set_fusion_cache_capacity(prev), 1);

  /* results stay right through evictions */
  emlx_array *a = exp2p1(x32);
  CHECK_OK(emlx_eval(&a, 1));
  double *xv = tu_read(x32), *av = tu_read(a);
  if (xv && av) {
    double ref[R * C];
    for (int i = 0; i < R * C; i++)
      ref[i] = (double)(float)(exp(xv[i]) * 2.0 + 1.0);
    tu_check_values(av, ref, R * C, EMLX_FLOAT32, 3, "exp(x)*2+1 after evictions");
  }
  free(xv), free(av);
  emlx_release(a);

  /* clear drops everything and counts it as evictions */
  run_exp2p1(x64);
  s = fstats();
  emlx_fusion_cache_clear();
  emlx_fusion_stats s2 = fstats();
  CHECK_MSG(s.cached >= 1 && s2.cached == 0 && s2.evictions - s.evictions == s.cached &&
                s2.hits == s.hits && s2.misses == s.misses,
            "clear: %zu cached -> %zu, evictions +%llu, counters kept", s.cached, s2.cached,
            (unsigned long long)(s2.evictions - s.evictions));
  d = run_exp2p1(x32);
  CHECK_MSG(d.misses == 1, "after clear: a miss again");

  emlx_release(x32), emlx_release(x32b), emlx_release(x64), emlx_release(xt), emlx_release(base);
}

/* Regions of one structure that differ only in an op's parameter (rounding
 * mode, remainder mode, isclose tolerance) or result dtype: build(variant)
 * makes round(x * 2) + 1 with ties to even / away, remainder(x * 3, y)
 * floored / truncated, isclose(x + y, x) with atol 0.5 / 1.5, or
 * astype(astype(x * 2 / 3, f16 / bf16), f32) + 1. */
typedef struct param_pair {
  int kind, variant;
  emlx_array *x, *y;
} param_pair;
enum { PP_ROUND, PP_REMAINDER, PP_ISCLOSE, PP_CAST, PP_COUNT };
static const char *const pp_name[PP_COUNT] = {"rounding mode", "remainder mode",
                                              "isclose tolerance", "cast dtype"};

static emlx_array *build_param_pair(const void *p) {
  const param_pair *c = p;
  emlx_array *two = emlx_scalar_tensor(2.0, EMLX_FLOAT32, EMLX_CPU),
             *three = emlx_scalar_tensor(3.0, EMLX_FLOAT32, EMLX_CPU),
             *one = emlx_scalar_tensor(1.0, EMLX_FLOAT32, EMLX_CPU), *out = NULL;
  emlx_array *x2 = emlx_multiply(c->x, two), *t = NULL, *u = NULL;
  switch (c->kind) {
  case PP_ROUND:
    t = c->variant ? emlx_round_half_away(x2) : emlx_round(x2);
    out = emlx_add(t, one);
    break;
  case PP_REMAINDER:
    u = emlx_multiply(c->x, three);
    out = c->variant ? emlx_remainder_trunc(u, c->y) : emlx_remainder(u, c->y);
    break;
  case PP_ISCLOSE:
    u = emlx_add(c->x, c->y);
    out = emlx_isclose(u, c->x, 0.0, c->variant ? 1.5 : 0.5, false);
    break;
  default: {
    emlx_array *q = emlx_divide(x2, three); /* thirds: f16 and bf16 round them apart */
    u = emlx_astype(q, c->variant ? EMLX_BFLOAT16 : EMLX_FLOAT16);
    t = emlx_astype(u, EMLX_FLOAT32);
    out = emlx_add(t, one);
    emlx_release(q);
    break;
  }
  }
  emlx_release(two), emlx_release(three), emlx_release(one);
  emlx_release(x2), emlx_release(t), emlx_release(u);
  return out;
}

/* True when a and b differ in dtype, shape or some byte. */
static bool arrays_differ(emlx_array *a, emlx_array *b) {
  if (emlx_array_dtype(a) != emlx_array_dtype(b) || emlx_ndim(a) != emlx_ndim(b))
    return true;
  for (int i = 0; i < emlx_ndim(a); i++)
    if (emlx_shape(a)[i] != emlx_shape(b)[i])
      return true;
  unsigned char *ra = tu_read_raw(a), *rb = tu_read_raw(b);
  bool differ = ra && rb && memcmp(ra, rb, emlx_nbytes(a)) != 0;
  free(ra), free(rb);
  return differ;
}

/* Two such regions must not share a plan: from an empty cache the two evals
 * are two misses and no hit, and each fused result equals its unfused one
 * (the two unfused results differ, so a shared plan could not pass). */
static void test_plan_cache_params(void) {
  int64_t sh[2] = {R, C};
  tu_rng r = {809};
  double xv[R * C], yv[R * C];
  for (int i = 0; i < R * C; i++) {
    xv[i] = (double)tu_randint(&r, -40, 40) / 4; /* x * 2 hits many ties */
    yv[i] = (double)(tu_randint(&r, 1, 5) * (tu_randint(&r, 0, 1) ? 1 : -1));
    if (i % 3 == 0)
      yv[i] = (double)tu_randint(&r, -4, 4) / 4; /* some |y| <= 1 for isclose */
  }
  emlx_array *x = tu_make(EMLX_FLOAT32, sh, 2, xv), *y = tu_make(EMLX_FLOAT32, sh, 2, yv);
  char what[96];
  for (int k = 0; k < PP_COUNT; k++) {
    param_pair pc[2] = {{k, 0, x, y}, {k, 1, x, y}};
    emlx_array *u[2], *f[2];
    emlx_set_fusion_enabled(false);
    for (int v = 0; v < 2; v++) {
      u[v] = build_param_pair(&pc[v]);
      CHECK_MSG(u[v] && emlx_eval(&u[v], 1) == 0, "%s %d: unfused eval", pp_name[k], v);
    }
    emlx_set_fusion_enabled(true);
    emlx_fusion_cache_clear();
    emlx_fusion_stats s0 = fstats();
    for (int v = 0; v < 2; v++) {
      f[v] = build_param_pair(&pc[v]);
      CHECK_MSG(f[v] && emlx_eval(&f[v], 1) == 0, "%s %d: fused eval", pp_name[k], v);
    }
    emlx_fusion_stats s1 = fstats();
    CHECK_MSG(s1.regions - s0.regions == 2 && s1.misses - s0.misses == 2 && s1.hits == s0.hits,
              "regions differing only in the %s: two plans (regions +%llu misses +%llu hits "
              "+%llu)",
              pp_name[k], (unsigned long long)(s1.regions - s0.regions),
              (unsigned long long)(s1.misses - s0.misses), (unsigned long long)(s1.hits - s0.hits));
    if (u[0] && u[1])
      CHECK_MSG(arrays_differ(u[0], u[1]), "%s: the two variants' results differ", pp_name[k]);
    for (int v = 0; v < 2; v++) {
      snprintf(what, sizeof what, "%s variant %d", pp_name[k], v);
      if (u[v] && f[v])
        same_values(u[v], f[v], what);
      emlx_release(u[v]), emlx_release(f[v]);
    }
  }
  emlx_release(x), emlx_release(y);
}

/* ---- the switch: API and environment ------------------------------------------ */

static void test_switch_api(void) {
  bool was = emlx_set_fusion_enabled(false);
  CHECK(was == true);
  CHECK(emlx_fusion_enabled() == false);
  int64_t sh[2] = {R, C};
  tu_rng r = {909};
  emlx_array *x = random_array(EMLX_FLOAT32, sh, 2, D_ANY, &r);
  emlx_fusion_stats s0 = fstats();
  emlx_array *a = exp2p1(x);
  CHECK_OK(emlx_eval(&a, 1));
  emlx_fusion_stats s1 = fstats();
  CHECK_MSG(s1.regions == s0.regions && s1.hits == s0.hits && s1.misses == s0.misses,
            "fusion off: no region, no cache lookup");
  CHECK(emlx_set_fusion_enabled(true) == false);
  CHECK(emlx_fusion_enabled() == true);
  emlx_release(a), emlx_release(x);
}

/* The child: evaluates exp(x)*2+1 (the first eval reads EMLX_FUSION) and
 * exits 0 when the fusion state and the regions run match want_on, and the
 * values are right. */
static int fusion_env_child(bool want_on) {
  int64_t n = 1000;
  double *v = tu_iota(n, -2.0, 0.004);
  emlx_array *x = tu_make(EMLX_FLOAT32, &n, 1, v);
  emlx_array *a = exp2p1(x);
  int rc = a ? emlx_eval(&a, 1) : -1;
  emlx_fusion_stats s = fstats();
  double *got = rc == 0 ? tu_read(a) : NULL;
  bool values = got != NULL;
  for (int64_t i = 0; values && i < n; i++) {
    double ref = exp((double)(float)v[i]) * 2.0 + 1.0;
    values = fabs(got[i] - ref) <= 4e-7 * fabs(ref);
  }
  bool state = emlx_fusion_enabled() == want_on && (want_on ? s.regions > 0 : s.regions == 0);
  fprintf(stderr, "fusion env child (want %s): enabled %d, regions %llu, values %s\n",
          want_on ? "on" : "off", (int)emlx_fusion_enabled(), (unsigned long long)s.regions,
          values ? "ok" : "WRONG");
  free(v), free(got);
  emlx_release(a), emlx_release(x);
  return state && values ? 0 : 3;
}

/* Runs this program as a child with EMLX_FUSION=value (NULL: unset). */
static int spawn_env_child(const char *value, const char *want) {
  extern char **environ;
  size_t n = 0;
  while (environ[n])
    n++;
  char **env = malloc((n + 2) * sizeof(char *));
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "EMLX_FUSION=", 12) != 0)
      env[k++] = environ[i];
  char var[64];
  if (value) {
    snprintf(var, sizeof var, "EMLX_FUSION=%s", value);
    env[k++] = var;
  }
  env[k] = NULL;
  char exe[] = "/proc/self/exe", arg[] = "--fusion-env-child", wantv[8];
  snprintf(wantv, sizeof wantv, "%s", want);
  char *argv[4] = {exe, arg, wantv, NULL};
  pid_t pid;
  int status = 0, rc = posix_spawn(&pid, exe, NULL, NULL, argv, env);
  if (rc == 0 && waitpid(pid, &status, 0) != pid)
    rc = -1;
  free(env);
  return rc == 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_switch_env(void) {
  CHECK_MSG(spawn_env_child("0", "off") == 0, "EMLX_FUSION=0: no region runs");
  CHECK_MSG(spawn_env_child(NULL, "on") == 0, "EMLX_FUSION unset: fusion on, regions run");
  CHECK_MSG(spawn_env_child("1", "on") == 0, "EMLX_FUSION=1: fusion on");
}

/* ---- compute-once counters ------------------------------------------------------ */

static uint64_t computed(void) { return emlx_eval_stats_get().nodes_computed; }

static void test_eval_stats(void) {
  int64_t sh[2] = {R, C};
  tu_rng r = {1010};
  emlx_array *x = random_array(EMLX_FLOAT32, sh, 2, D_UNIT, &r);
  for (int on = 0; on < 2; on++) {
    emlx_set_fusion_enabled(on != 0);
    emlx_array *t1 = emlx_exp(x), *t2 = emlx_sin(t1), *t3 = emlx_add(t2, x);
    emlx_array *t4 = emlx_multiply(t3, t1);
    uint64_t c0 = computed();
    CHECK_OK(emlx_eval(&t4, 1));
    uint64_t d1 = computed() - c0;
    if (on)
      CHECK_MSG(d1 >= 1 && d1 <= 4, "fusion on: 4 ops ran as 1..4 kernels (got %llu)",
                (unsigned long long)d1);
    else
      CHECK_MSG(d1 == 4, "fusion off: 4 ops ran as 4 kernels (got %llu)", (unsigned long long)d1);
    c0 = computed();
    CHECK_OK(emlx_eval(&t4, 1));
    emlx_array *held[2] = {t1, t3};
    CHECK_OK(emlx_eval(held, 2));
    CHECK_MSG(computed() == c0,
              "fusion %s: evaluating again (and held intermediates) computes "
              "nothing (got %llu)",
              on ? "on" : "off", (unsigned long long)(computed() - c0));
    emlx_release(t1), emlx_release(t2), emlx_release(t3), emlx_release(t4);

    /* one producer, many consumers in one eval: computed once */
    emlx_array *e = emlx_exp(x), *cons[6];
    for (int i = 0; i < 6; i++) {
      int ax = i % 2;
      emlx_array *s = emlx_sum(e, &ax, 1, true);
      cons[i] = emlx_divide(e, s);
      emlx_release(s);
    }
    c0 = computed();
    CHECK_OK(emlx_eval(cons, 6));
    uint64_t d2 = computed() - c0;
    CHECK_MSG(d2 >= 1 && d2 <= 13, "fusion %s: exp shared by 6 sums and divides: %llu kernels",
              on ? "on" : "off", (unsigned long long)d2);
    c0 = computed();
    CHECK_OK(emlx_eval(&e, 1));
    CHECK_MSG(computed() == c0, "fusion %s: the shared, held exp is not computed again",
              on ? "on" : "off");
    for (int i = 1; i < 6; i++)
      same_values(cons[i % 2], cons[i], "every consumer sees the same shared values");
    for (int i = 0; i < 6; i++)
      emlx_release(cons[i]);
    emlx_release(e);
  }
  emlx_set_fusion_enabled(true);
  emlx_release(x);
}

/* ---- concurrent evals share plans ---------------------------------------------- */

typedef struct thr_arg {
  emlx_array *x, *want;
  int ok;
} thr_arg;

static void *thr_main(void *p) {
  thr_arg *a = p;
  a->ok = 1;
  for (int it = 0; it < 20; it++) {
    emlx_array *t = emlx_sigmoid(a->x), *u = emlx_multiply(t, a->x), *v = emlx_sqrt(t);
    emlx_array *w = emlx_add(u, v);
    if (!w || emlx_eval(&w, 1) != 0 || !emlx_is_evaluated(w)) {
      a->ok = 0;
    } else {
      size_t nb = emlx_nbytes(w);
      unsigned char *g = malloc(nb), *e = malloc(nb);
      if (emlx_to_blob(w, g, nb) != 0 || emlx_to_blob(a->want, e, nb) != 0 || memcmp(g, e, nb))
        a->ok = 0;
      free(g), free(e);
    }
    emlx_release(t), emlx_release(u), emlx_release(v), emlx_release(w);
  }
  return NULL;
}

static void test_threads(void) {
  enum { T = 4 };
  int64_t sh[2] = {BR, BC};
  tu_rng r = {1111};
  thr_arg args[T];
  pthread_t th[T];
  for (int i = 0; i < T; i++) {
    args[i].x = random_array(EMLX_FLOAT32, sh, 2, D_POS, &r);
    emlx_array *t = emlx_sigmoid(args[i].x), *u = emlx_multiply(t, args[i].x), *v = emlx_sqrt(t);
    args[i].want = emlx_add(u, v);
    CHECK_OK(emlx_eval(&args[i].want, 1));
    emlx_release(t), emlx_release(u), emlx_release(v);
  }
  for (int i = 0; i < T; i++)
    pthread_create(&th[i], NULL, thr_main, &args[i]);
  for (int i = 0; i < T; i++)
    pthread_join(th[i], NULL);
  for (int i = 0; i < T; i++) {
    CHECK_MSG(args[i].ok, "thread %d: fused results equal the single-threaded ones", i);
    emlx_release(args[i].x), emlx_release(args[i].want);
  }
}

/* ---- a million adds ------------------------------------------------------------------ */

static void test_long_chain(void) {
  enum { CHAIN = 1000000 };
  emlx_set_fusion_enabled(true);
  float zero = 0.0f, onev = 1.0f;
  int64_t n1 = 1;
  emlx_array *x = emlx_from_blob(&zero, EMLX_FLOAT32, &n1, 1, EMLX_CPU);
  emlx_array *one = emlx_from_blob(&onev, EMLX_FLOAT32, &n1, 1, EMLX_CPU);
  emlx_array *cur = emlx_retain(x);
  for (int i = 0; i < CHAIN && cur; i++) {
    emlx_array *nxt = emlx_add(cur, one);
    emlx_release(cur);
    cur = nxt;
  }
  CHECK_MSG(cur != NULL, "built a chain of %d adds", CHAIN);
  emlx_fusion_stats s0 = fstats();
  CHECK_OK(emlx_eval(&cur, 1));
  emlx_fusion_stats s1 = fstats();
  double got = -1;
  CHECK(cur && emlx_item_f64(cur, &got) == 0 && got == (double)CHAIN);
  CHECK_MSG(s1.regions > s0.regions && s1.fused_ops - s0.fused_ops >= CHAIN / 2,
            "the chain ran fused (regions +%llu, ops +%llu)",
            (unsigned long long)(s1.regions - s0.regions),
            (unsigned long long)(s1.fused_ops - s0.fused_ops));
  emlx_release(cur);
  emlx_fusion_cache_clear(); /* the plan of a million ops */
  emlx_release(x), emlx_release(one);
}

/* Threads evaluating the same fresh graph at once, in different orders:
 * regions whose inner values no thread keeps (their nodes go back to
 * pending), reductions fed by regions, and plain elementwise roots. A
 * thread that finds such a node pending again must compute its inputs
 * first; every result must equal the one-thread values. */
enum { SH_T = 6, SH_ROOTS = 6, SH_ITERS = 120 };

typedef struct shared_arg {
  emlx_array **roots;
  pthread_barrier_t *go;
  int tid, rc;
} shared_arg;

static void *shared_main(void *p) {
  shared_arg *a = p;
  emlx_array *order[SH_ROOTS];
  for (int i = 0; i < SH_ROOTS; i++)
    order[i] = a->roots[(i * (a->tid + 1) + a->tid) % SH_ROOTS];
  pthread_barrier_wait(a->go);
  a->rc = emlx_eval(order, SH_ROOTS);
  return NULL;
}

static void build_shared(emlx_array *x, emlx_array **roots) {
  for (int i = 0; i < SH_ROOTS; i++) {
    emlx_array *c = emlx_scalar_tensor(0.25 * (i + 1), EMLX_FLOAT32, EMLX_CPU);
    emlx_array *m = emlx_multiply(x, c), *e = emlx_exp(m);
    int ax = i % 2;
    if (i < SH_ROOTS / 2) {
      roots[i] = emlx_sum(e, &ax, 1, false); /* a reduction fed by a region */
    } else {
      emlx_array *t = emlx_tanh(e);
      roots[i] = emlx_add(t, x); /* a region of four ops */
      emlx_release(t);
    }
    emlx_release(c), emlx_release(m), emlx_release(e);
  }
}

static void test_shared_graph_threads(void) {
  int64_t sh[2] = {BR, BC};
  tu_rng r = {2222};
  emlx_array *x = random_array(EMLX_FLOAT32, sh, 2, D_UNIT, &r);
  emlx_array *want[SH_ROOTS];
  build_shared(x, want);
  CHECK_OK(emlx_eval(want, SH_ROOTS));
  unsigned char *ref[SH_ROOTS];
  for (int i = 0; i < SH_ROOTS; i++)
    ref[i] = tu_read_raw_at(want[i], __FILE__, __LINE__);
  int bad = 0, fails = 0;
  for (int it = 0; it < SH_ITERS; it++) {
    emlx_array *roots[SH_ROOTS];
    build_shared(x, roots);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, SH_T);
    shared_arg args[SH_T];
    pthread_t th[SH_T];
    for (int t = 0; t < SH_T; t++) {
      args[t] = (shared_arg){roots, &go, t, -1};
      pthread_create(&th[t], NULL, shared_main, &args[t]);
    }
    for (int t = 0; t < SH_T; t++) {
      pthread_join(th[t], NULL);
      fails += args[t].rc != 0;
    }
    pthread_barrier_destroy(&go);
    for (int i = 0; i < SH_ROOTS; i++) {
      unsigned char *got = tu_read_raw_at(roots[i], __FILE__, __LINE__);
      bad += !got || !ref[i] || memcmp(got, ref[i], emlx_nbytes(roots[i])) != 0;
      free(got);
      emlx_release(roots[i]);
    }
  }
  CHECK_MSG(fails == 0 && bad == 0,
            "%d threads x %d rounds on shared graphs: %d failed evals, %d wrong roots", SH_T,
            SH_ITERS, fails, bad);
  for (int i = 0; i < SH_ROOTS; i++)
    free(ref[i]), emlx_release(want[i]);
  emlx_release(x);
}

/* Outputs large enough to be streamed past the caches (two 16 MiB outputs,
 * one of them held by the caller, a transposed input and a broadcast row):
 * fused and unfused agree bit for bit. */
static void test_large_outputs(void) {
  enum { S = 2048 };
  tu_rng r = {91};
  float *v = malloc((size_t)S * S * sizeof *v), row[S];
  if (!CHECK_NOT_NULL(v))
    return;
  for (int64_t i = 0; i < (int64_t)S * S; i++)
    v[i] = (float)tu_uniform(&r, -1, 1);
  for (int i = 0; i < S; i++)
    row[i] = (float)tu_uniform(&r, -1, 1);
  int64_t sh[2] = {S, S}, rs = S;
  emlx_array *x = emlx_from_blob(v, EMLX_FLOAT32, sh, 2, EMLX_CPU);
  emlx_array *b = emlx_from_blob(row, EMLX_FLOAT32, &rs, 1, EMLX_CPU);
  emlx_array *xt = emlx_transpose(x, NULL, 0);
  emlx_array *res[2][2];
  for (int fused = 0; fused < 2; fused++) {
    emlx_set_fusion_enabled(fused);
    emlx_array *y = emlx_multiply(xt, b), *t = emlx_tanh(y), *z = emlx_add(t, x);
    emlx_release(t);
    emlx_fusion_stats s0 = fstats();
    emlx_array *both[2] = {y, z};
    CHECK_OK(emlx_eval(both, 2));
    emlx_fusion_stats s1 = fstats();
    CHECK_MSG(!fused || s1.regions > s0.regions, "the large region ran fused");
    res[fused][0] = y, res[fused][1] = z;
  }
  emlx_set_fusion_enabled(true);
  for (int k = 0; k < 2; k++) {
    unsigned char *a = tu_read_raw_at(res[0][k], __FILE__, __LINE__);
    unsigned char *c = tu_read_raw_at(res[1][k], __FILE__, __LINE__);
    CHECK_MSG(a && c && memcmp(a, c, (size_t)S * S * 4) == 0,
              "large output %d: fused equals unfused bit for bit", k);
    free(a), free(c);
    emlx_release(res[0][k]), emlx_release(res[1][k]);
  }
  emlx_release(xt), emlx_release(b), emlx_release(x);
  free(v);
}

/* y = exp(x) * 0.5 + x (a region) and s = sum(y * y) (a region feeding a
 * reduction) over the memory limit: the eval fails with an error, nothing
 * is left half-computed, and once the limit is raised the same arrays
 * evaluate to the values the unfused kernels give. */
static void test_memory_limit(void) {
  enum { N = 1 << 20 }; /* 4 MiB of f32 per intermediate */
  tu_rng r = {77};
  float *v = malloc(N * sizeof *v);
  if (!CHECK_NOT_NULL(v))
    return;
  for (int i = 0; i < N; i++)
    v[i] = (float)tu_uniform(&r, -2, 2);
  int64_t n = N;
  emlx_array *x = emlx_from_blob(v, EMLX_FLOAT32, &n, 1, EMLX_CPU);
  emlx_array *half = emlx_scalar_tensor(0.5, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *got[2], *want[2];
  for (int fused = 0; fused < 2; fused++) {
    emlx_array *e = emlx_exp(x), *m = emlx_multiply(e, half), *y = emlx_add(m, x);
    emlx_array *yy = emlx_multiply(y, y), *s = emlx_sum(yy, NULL, 0, false);
    emlx_release(e), emlx_release(m), emlx_release(yy);
    emlx_array **dst = fused ? got : want;
    dst[0] = y, dst[1] = s;
  }
  emlx_set_fusion_enabled(false);
  CHECK_OK(emlx_eval(want, 2));
  emlx_set_fusion_enabled(true);
  CHECK_OK(emlx_eval(&half, 1));
  emlx_clear_cache();
  size_t active = emlx_memory_info().active_memory;
  size_t prev = emlx_set_memory_limit(active + (1u << 20)); /* no room for y */
  emlx_fusion_stats s0 = fstats();
  emlx_clear_error();
  int rc = emlx_eval(got, 2);
  CHECK_MSG(rc != 0 && emlx_last_error()[0], "a fused eval over the memory limit fails (\"%s\")",
            emlx_last_error());
  CHECK_MSG(!emlx_is_evaluated(got[0]) && !emlx_is_evaluated(got[1]),
            "the failed fused eval left both results lazy");
  emlx_set_memory_limit(prev);
  CHECK_OK(emlx_eval(got, 2));
  emlx_fusion_stats s1 = fstats();
  CHECK_MSG(s1.regions > s0.regions, "the second eval ran fused (regions +%llu)",
            (unsigned long long)(s1.regions - s0.regions));
  for (int k = 0; k < 2; k++) {
    unsigned char *a = tu_read_raw_at(got[k], __FILE__, __LINE__);
    unsigned char *b = tu_read_raw_at(want[k], __FILE__, __LINE__);
    size_t bytes = (size_t)emlx_size(got[k]) * 4;
    CHECK_MSG(a && b && memcmp(a, b, bytes) == 0,
              "after the failure, %s equals the unfused result bit for bit", k ? "sum(y*y)" : "y");
    free(a), free(b);
  }
  for (int k = 0; k < 2; k++)
    emlx_release(got[k]), emlx_release(want[k]);
  emlx_release(half), emlx_release(x);
  free(v);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--fusion-env-child") == 0)
    return fusion_env_child(strcmp(argv[2], "on") == 0);
  test_switch_env(); /* first: spawns before this process has threads */
  test_switch_api();
  test_unary_ops();
  test_binary_ops();
  test_mixed_promotion();
  test_astype();
  test_selection();
  test_multi_output();
  test_diamonds();
  test_plan_cache();
  test_plan_cache_params();
  test_eval_stats();
  test_threads();
  test_shared_graph_threads();
  test_long_chain();
  test_memory_limit();
  test_large_outputs();
  printf("float elements compared %ld, within 1 ulp but not bit-identical %ld\n", g_float_elems,
         g_float_inexact);
  return tu_finish();
}
