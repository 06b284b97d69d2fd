/* test_fast.c — the fused kernels of emlx/fast.h against naive float64
 * references, their layouts and their errors.
 *
 *  - rms_norm, layer_norm (+ no_bias) and swiglu against the same formula
 *    built from ordinary ops in float64 (astype, multiply, mean, rsqrt,
 *    sigmoid, ...), for float32 / float16 / bfloat16, odd row lengths (1, 7,
 *    33, 4099: long rows split over threads), strided inputs (a transposed
 *    view), weight / bias absent, and a promoted result (bf16 x, f32 w).
 *  - every rope entry point against a float64 loop over the definition
 *    (emlx/fast.h): theta formed in float32 as documented, then cos/sin and
 *    the rotation in float64; split-half and interleaved, dims < D, ranks 3
 *    to 5, strided x. The layout contract: rope_ids / rope_positions /
 *    rope_with_freqs on {B, T, H, D} turn every head of token t by the same
 *    angle (never by position + h).
 *  - error cases: wrong ranks and sizes, odd or too large dims, integer and
 *    float64 inputs, mismatched shapes and dtypes, NULL inputs.
 * Tolerance: |got - ref| <= k * eps(dtype) * (1 + |ref|), k = 1 for f16 and
 * bf16 (one rounding: half an ulp), 16 for f32 (float32 accumulation). */
#include "test_util.h"

static double eps_of(emlx_dtype d) {
  return d == EMLX_FLOAT32 ? 16.0 / 8388608.0 : d == EMLX_FLOAT16 ? 1.0 / 1024.0 : 1.0 / 128.0;
}

static const emlx_dtype dts[3] = {EMLX_FLOAT32, EMLX_FLOAT16, EMLX_BFLOAT16};

/* Random values in [lo, hi) rounded to d, as an array and as doubles. */
static emlx_array *rand_array(tu_rng *r, emlx_dtype d, const int64_t *shape, int ndim, double lo,
                              double hi, double **vals) {
  int64_t n = tu_numel(shape, ndim);
  double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  for (int64_t i = 0; i < n; i++)
    v[i] = tu_quant(d, tu_uniform(r, lo, hi));
  emlx_array *a = tu_make(d, shape, ndim, v);
  if (vals)
    *vals = v;
  else
    free(v);
  return a;
}

static bool close_all(const char *what, emlx_dtype d, const double *got, const double *ref,
                      int64_t n) {
  double k = eps_of(d);
  for (int64_t i = 0; i < n; i++) {
    double err = fabs(got[i] - ref[i]);
    if (!(err <= k * (1.0 + fabs(ref[i])))) {
      CHECK_MSG(false, "%s (%s): [%lld] got %.9g, reference %.9g", what, tu_dname(d), (long long)i,
                got[i], ref[i]);
      return false;
    }
  }
  CHECK_MSG(true, "%s (%s)", what, tu_dname(d));
  return true;
}

/* Evaluates a in float64 as doubles. */
static double *read_f64(emlx_array *a) {
  emlx_array *f = emlx_astype(a, EMLX_FLOAT64);
  double *v = f ? tu_read(f) : NULL;
  emlx_release(f);
  return v;
}

/* Releases a list of arrays, NULL-terminated. */
static void rel(emlx_array *a, ...) {
  va_list ap;
  va_start(ap, a);
  for (emlx_array *p = a; p; p = va_arg(ap, emlx_array *))
    emlx_release(p);
  va_end(ap);
}

/* ---- the norms against ordinary ops in f64 ------------------------------------------ */
/* reference: rms: x * rsqrt(mean(x^2) + eps) * w;
 * layer: (x - mean) * rsqrt(mean((x - mean)^2) + eps) * w + b */
static emlx_array *ref_norm(emlx_array *x, emlx_array *w, emlx_array *b, float eps, bool layer) {
  const int last = -1;
  emlx_array *xf = emlx_astype(x, EMLX_FLOAT64), *c;
  if (layer) {
    emlx_array *m = emlx_mean(xf, &last, 1, true);
    c = emlx_subtract(xf, m);
    emlx_release(m);
  } else {
    c = emlx_retain(xf);
  }
  emlx_array *sq = emlx_multiply(c, c), *ms = emlx_mean(sq, &last, 1, true);
  emlx_array *e = emlx_scalar_tensor((double)eps, EMLX_FLOAT64, EMLX_CPU);
  emlx_array *me = emlx_add(ms, e), *rs = emlx_rsqrt(me), *y = emlx_multiply(c, rs);
  rel(xf, c, sq, ms, e, me, rs, NULL);
  if (w) {
    emlx_array *wf = emlx_astype(w, EMLX_FLOAT64), *t = emlx_multiply(y, wf);
    rel(wf, y, NULL);
    y = t;
  }
  if (b) {
    emlx_array *bf = emlx_astype(b, EMLX_FLOAT64), *t = emlx_add(y, bf);
    rel(bf, y, NULL);
    y = t;
  }
  return y;
}

static void test_norms(void) {
  tu_rng r = {11};
  const int64_t lens[] = {1, 7, 33, 4099};
  for (int di = 0; di < 3; di++) {
    emlx_dtype d = dts[di];
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
      int64_t n = lens[li], shape[3] = {3, 5, n}, vs[1] = {n};
      for (int op = 0; op < 3; op++) { /* rms, layer, layer no bias */
        emlx_array *x = rand_array(&r, d, shape, 3, op ? 1.0 : -2.0, 3.0, NULL);
        emlx_array *w = rand_array(&r, d, vs, 1, 0.5, 1.5, NULL);
        emlx_array *b = rand_array(&r, d, vs, 1, -1.0, 1.0, NULL);
        emlx_array *y = op == 0   ? emlx_fast_rms_norm(x, w, 1e-5f)
                        : op == 1 ? emlx_fast_layer_norm(x, w, b, 1e-5f)
                                  : emlx_fast_layer_norm_no_bias(x, w, 1e-5f);
        emlx_array *ref = ref_norm(x, w, op == 1 ? b : NULL, 1e-5f, op > 0);
        CHECK(y && emlx_array_dtype(y) == d);
        double *g = y ? tu_read(y) : NULL, *rv = read_f64(ref);
        char what[96];
        snprintf(what, sizeof what, "%s n=%lld",
                 op == 0   ? "rms_norm"
                 : op == 1 ? "layer_norm"
                           : "layer_norm_no_bias",
                 (long long)n);
        if (g && rv)
          close_all(what, d, g, rv, 15 * n);
        free(g);
        free(rv);
        rel(x, w, b, y, ref, NULL);
      }
    }
  }
  /* no weight / no bias; a strided x (transposed view: rows of stride 9) */
  for (int di = 0; di < 3; di++) {
    emlx_dtype d = dts[di];
    int64_t shape[2] = {41, 9};
    const int perm[2] = {1, 0};
    emlx_array *x0 = rand_array(&r, d, shape, 2, -3.0, 3.0, NULL);
    emlx_array *x = emlx_transpose(x0, perm, 2); /* {9, 41}, not contiguous */
    emlx_array *y1 = emlx_fast_rms_norm(x, NULL, 1e-6f), *r1 = ref_norm(x, NULL, NULL, 1e-6f, false);
    emlx_array *y2 = emlx_fast_layer_norm(x, NULL, NULL, 1e-6f);
    emlx_array *r2 = ref_norm(x, NULL, NULL, 1e-6f, true);
    double *g1 = tu_read(y1), *v1 = read_f64(r1), *g2 = tu_read(y2), *v2 = read_f64(r2);
    if (g1 && v1 && g2 && v2) {
      close_all("rms_norm strided, no weight", d, g1, v1, 9 * 41);
      close_all("layer_norm strided, no weight or bias", d, g2, v2, 9 * 41);
    } else {
      CHECK_MSG(false, "strided norms evaluate (%s)", emlx_last_error());
    }
    free(g1), free(v1), free(g2), free(v2);
    rel(x0, x, y1, r1, y2, r2, NULL);
  }
  /* MLX's promotion: bf16 x with an f32 weight gives f32 */
  {
    int64_t shape[2] = {4, 19}, vs[1] = {19};
    emlx_array *x = rand_array(&r, EMLX_BFLOAT16, shape, 2, -1.0, 1.0, NULL);
    emlx_array *w = rand_array(&r, EMLX_FLOAT32, vs, 1, 0.5, 1.5, NULL);
    emlx_array *y = emlx_fast_rms_norm(x, w, 1e-5f), *ref = ref_norm(x, w, NULL, 1e-5f, false);
    CHECK(y && emlx_array_dtype(y) == EMLX_FLOAT32);
    double *g = tu_read(y), *v = read_f64(ref);
    if (g && v)
      close_all("rms_norm bf16 x, f32 weight", EMLX_FLOAT32, g, v, 4 * 19);
    free(g), free(v);
    rel(x, w, y, ref, NULL);
  }
  /* empty: zero rows, and rows of zero length */
  {
    int64_t s0[2] = {0, 8}, s1[2] = {3, 0}, v0[1] = {8}, v1[1] = {0};
    emlx_array *x0 = emlx_zeros(s0, 2, EMLX_FLOAT32, EMLX_CPU), *w0 = emlx_ones(v0, 1, EMLX_FLOAT32, EMLX_CPU);
    emlx_array *x1 = emlx_zeros(s1, 2, EMLX_FLOAT32, EMLX_CPU), *w1 = emlx_ones(v1, 1, EMLX_FLOAT32, EMLX_CPU);
    emlx_array *y0 = emlx_fast_rms_norm(x0, w0, 1e-5f), *y1 = emlx_fast_layer_norm(x1, w1, w1, 1e-5f);
    emlx_array *const ev[2] = {y0, y1};
    CHECK(y0 && y1 && emlx_eval(ev, 2) == 0 && emlx_size(y0) == 0 && emlx_size(y1) == 0);
    rel(x0, w0, x1, w1, y0, y1, NULL);
  }
}

/* ---- swiglu against ordinary ops ---------------------------------------------------- */
static void test_swiglu(void) {
  tu_rng r = {12};
  const int64_t lens[] = {1, 13, 4096 * 3 + 17};
  for (int di = 0; di < 3; di++) {
    emlx_dtype d = dts[di];
    for (size_t li = 0; li < 3; li++) {
      int64_t shape[2] = {3, lens[li]}, n = 3 * lens[li];
      emlx_array *g = rand_array(&r, d, shape, 2, -20.0, 20.0, NULL);
      emlx_array *u = rand_array(&r, d, shape, 2, -2.0, 2.0, NULL);
      emlx_array *y = emlx_fast_swiglu(g, u);
      emlx_array *gf = emlx_astype(g, EMLX_FLOAT64), *uf = emlx_astype(u, EMLX_FLOAT64);
      emlx_array *sg = emlx_sigmoid(gf), *t = emlx_multiply(gf, sg), *ref = emlx_multiply(t, uf);
      CHECK(y && emlx_array_dtype(y) == d);
      double *gv = y ? tu_read(y) : NULL, *rv = read_f64(ref);
      if (gv && rv)
        close_all("swiglu", d, gv, rv, n);
      free(gv), free(rv);
      rel(g, u, y, gf, uf, sg, t, ref, NULL);
    }
    /* strided gate (a transposed view) */
    int64_t shape[2] = {37, 6};
    const int perm[2] = {1, 0};
    emlx_array *g0 = rand_array(&r, d, shape, 2, -6.0, 6.0, NULL), *g = emlx_transpose(g0, perm, 2);
    int64_t us[2] = {6, 37};
    emlx_array *u = rand_array(&r, d, us, 2, -2.0, 2.0, NULL), *y = emlx_fast_swiglu(g, u);
    emlx_array *gf = emlx_astype(g, EMLX_FLOAT64), *uf = emlx_astype(u, EMLX_FLOAT64);
    emlx_array *sg = emlx_sigmoid(gf), *t = emlx_multiply(gf, sg), *ref = emlx_multiply(t, uf);
    double *gv = tu_read(y), *rv = read_f64(ref);
    if (gv && rv)
      close_all("swiglu, strided gate", d, gv, rv, 6 * 37);
    free(gv), free(rv);
    rel(g0, g, u, y, gf, uf, sg, t, ref, NULL);
  }
}

/* ---- rope against the definition ----------------------------------------------------- */
typedef struct rope_ref {
  int dims;
  bool trad;
  float base, scale;
  const float *freqs; /* NULL: base */
} rope_ref;

/* out = the rotation of row x (D values) at position pos (emlx/fast.h). */
static void ref_rope_row(const rope_ref *p, const double *x, int64_t D, double pos_raw, double *y) {
  int half = p->dims / 2;
  float pos = (float)pos_raw * p->scale;
  float k = logf(p->base) / (float)half;
  for (int64_t i = 0; i < D; i++)
    y[i] = x[i];
  for (int i = 0; i < half; i++) {
    float inv = p->freqs ? 1.0f / p->freqs[i] : expf(-(float)i * k);
    double th = (double)(pos * inv), c = cos(th), s = sin(th);
    int ia = p->trad ? 2 * i : i, ib = p->trad ? 2 * i + 1 : i + half;
    y[ia] = x[ia] * c - x[ib] * s;
    y[ib] = x[ia] * s + x[ib] * c;
  }
}

/* x (row-major values of shape) with T on axis sa; pos_of(b, t) gives the
 * raw position. */
typedef double (*pos_fn)(const void *ctx, int64_t b, int64_t t);

static double *ref_rope(const rope_ref *p, const double *x, const int64_t *shape, int ndim, int sa,
                        pos_fn pf, const void *ctx) {
  int64_t n = tu_numel(shape, ndim), D = shape[ndim - 1];
  double *y = malloc((size_t)n * sizeof(double));
  int64_t idx[8];
  for (int64_t r = 0; r < n / D; r++) {
    tu_unravel(r * D, shape, ndim, idx);
    ref_rope_row(p, x + r * D, D, pf(ctx, idx[0], idx[sa]), y + r * D);
  }
  return y;
}

static double pos_scalar(const void *ctx, int64_t b, int64_t t) {
  (void)b;
  return (double)(*(const int64_t *)ctx + t);
}
static double pos_offsets(const void *ctx, int64_t b, int64_t t) {
  return (double)(((const int64_t *)ctx)[b] + t);
}
typedef struct pos_table {
  const int64_t *p;
  int64_t T;
} pos_table;
static double pos_positions(const void *ctx, int64_t b, int64_t t) {
  const pos_table *pt = ctx;
  return (double)pt->p[b * pt->T + t];
}

static void check_rope(const char *what, emlx_dtype d, emlx_array *y, const double *ref, int64_t n) {
  CHECK_MSG(y != NULL, "%s builds (%s)", what, emlx_last_error());
  double *g = y ? tu_read(y) : NULL;
  if (g) {
    CHECK(emlx_array_dtype(y) == d);
    close_all(what, d, g, ref, n);
  }
  free(g);
}

static void test_rope(void) {
  tu_rng r = {13};
  for (int di = 0; di < 3; di++) {
    emlx_dtype d = dts[di];
    for (int trad = 0; trad < 2; trad++) {
      /* scalar offset, {B, H, T, D}, full and partial dims, a scale */
      const int64_t shapes[3][5] = {{2, 3, 9, 16}, {3, 11, 24}, {1, 2, 2, 5, 8}};
      const int nds[3] = {4, 3, 5};
      const int dimss[3] = {16, 10, 8};
      for (int si = 0; si < 3; si++) {
        double *xv;
        emlx_array *x = rand_array(&r, d, shapes[si], nds[si], -1.0, 1.0, &xv);
        rope_ref p = {.dims = dimss[si], .trad = trad, .base = 10000.0f, .scale = si == 1 ? 0.25f : 1.0f};
        int64_t off = si == 1 ? 4000 : 3, n = tu_numel(shapes[si], nds[si]);
        emlx_array *y = emlx_fast_rope(x, p.dims, trad, p.base, p.scale, off);
        double *ref = ref_rope(&p, xv, shapes[si], nds[si], nds[si] - 2, pos_scalar, &off);
        char what[64];
        snprintf(what, sizeof what, "rope rank %d dims %d %s", nds[si], p.dims,
                 trad ? "interleaved" : "split-half");
        check_rope(what, d, y, ref, n);
        free(ref), free(xv);
        rel(x, y, NULL);
      }
      /* {B, T, H, D}: offsets, positions, freqs; T on axis 1 */
      int64_t shape[4] = {3, 6, 4, 20}, n = 3 * 6 * 4 * 20;
      double *xv;
      emlx_array *x = rand_array(&r, d, shape, 4, -1.0, 1.0, &xv);
      int64_t offs[3] = {0, 17, 5}, os[1] = {3};
      emlx_array *oa = emlx_from_blob(offs, EMLX_INT64, os, 1, EMLX_CPU);
      emlx_array *oa32 = emlx_astype(oa, EMLX_INT32);
      rope_ref p = {.dims = 12, .trad = trad, .base = 1e6f, .scale = 1.0f};
      emlx_array *y = emlx_fast_rope_ids(x, 12, trad, p.base, p.scale, oa32);
      double *ref = ref_rope(&p, xv, shape, 4, 1, pos_offsets, offs);
      check_rope(trad ? "rope_ids {B,T,H,D} interleaved" : "rope_ids {B,T,H,D} split-half", d, y,
                 ref, n);
      free(ref);
      emlx_release(y);
      /* one offset for every batch */
      int64_t one[3] = {9, 9, 9}, s1[1] = {1};
      emlx_array *o1 = emlx_from_blob(one, EMLX_INT64, s1, 1, EMLX_CPU);
      y = emlx_fast_rope_ids(x, 12, trad, p.base, p.scale, o1);
      ref = ref_rope(&p, xv, shape, 4, 1, pos_offsets, one);
      check_rope("rope_ids, one offset", d, y, ref, n);
      free(ref);
      emlx_release(y);
      /* positions {B, T}, not sequential */
      int64_t pos[18];
      for (int i = 0; i < 18; i++)
        pos[i] = tu_randint(&r, 0, 3000);
      int64_t ps[2] = {3, 6};
      emlx_array *pa = emlx_from_blob(pos, EMLX_INT64, ps, 2, EMLX_CPU);
      pos_table pt = {pos, 6};
      y = emlx_fast_rope_positions(x, 12, trad, p.base, 0.5f, pa);
      rope_ref ph = p;
      ph.scale = 0.5f;
      ref = ref_rope(&ph, xv, shape, 4, 1, pos_positions, &pt);
      check_rope("rope_positions {B,T,H,D}", d, y, ref, n);
      free(ref);
      emlx_release(y);
      /* freqs */
      float fr[6];
      for (int i = 0; i < 6; i++)
        fr[i] = (float)(pow(10000.0, 2.0 * i / 12.0) * (1.0 + i));
      int64_t fs[1] = {6};
      emlx_array *fa = emlx_from_blob(fr, EMLX_FLOAT32, fs, 1, EMLX_CPU);
      rope_ref pf = {.dims = 12, .trad = trad, .base = 1.0f, .scale = 2.0f, .freqs = fr};
      y = emlx_fast_rope_with_freqs(x, 12, trad, 2.0f, oa, fa);
      ref = ref_rope(&pf, xv, shape, 4, 1, pos_offsets, offs);
      check_rope("rope_with_freqs {B,T,H,D}", d, y, ref, n);
      free(ref);
      emlx_release(y);
      free(xv);
      rel(x, oa, oa32, o1, pa, fa, NULL);
    }
  }
}

/* rope_ids on {B, T, H, D} and rope (T on axis -2) on the {B, H, T, D}
 * transpose agree: heads share their token's position. With one batch and
 * offset 0 the two entry points must give the same values. */
static void test_rope_layouts(void) {
  tu_rng r = {14};
  int64_t shape[4] = {1, 7, 5, 16};
  emlx_array *x = rand_array(&r, EMLX_FLOAT32, shape, 4, -1.0, 1.0, NULL);
  int64_t z[1] = {0}, s1[1] = {1};
  emlx_array *off = emlx_from_blob(z, EMLX_INT64, s1, 1, EMLX_CPU);
  const int perm[4] = {0, 2, 1, 3};
  emlx_array *xt = emlx_transpose(x, perm, 4);                         /* {1, H, T, D} */
  emlx_array *a = emlx_fast_rope_ids(x, 16, false, 10000.0f, 1.0f, off); /* {1, T, H, D} */
  emlx_array *bt = emlx_fast_rope(xt, 16, false, 10000.0f, 1.0f, 0);     /* {1, H, T, D} */
  emlx_array *b = emlx_transpose(bt, perm, 4);
  double *av = tu_read(a), *bv = tu_read(b);
  bool same = av && bv;
  for (int64_t i = 0; same && i < 7 * 5 * 16; i++)
    same = av[i] == bv[i];
  CHECK_MSG(same, "rope_ids on {B,T,H,D} == rope on {B,H,T,D}, transposed back");
  /* and head h of token t is not turned by t + h: heads 0 and 1 of one
   * token, given equal inputs, come out equal */
  float ones[1 * 3 * 2 * 4];
  for (int i = 0; i < 24; i++)
    ones[i] = (float)(i % 4 + 1);
  int64_t s2[4] = {1, 3, 2, 4};
  emlx_array *e = emlx_from_blob(ones, EMLX_FLOAT32, s2, 4, EMLX_CPU);
  emlx_array *pe = emlx_fast_rope_positions(e, 4, false, 10000.0f, 1.0f, NULL);
  CHECK(pe == NULL); /* NULL positions: an error */
  int64_t pv[3] = {5, 6, 7}, ps[2] = {1, 3};
  emlx_array *pa = emlx_from_blob(pv, EMLX_INT64, ps, 2, EMLX_CPU);
  emlx_array *ye = emlx_fast_rope_positions(e, 4, false, 10000.0f, 1.0f, pa);
  double *yv = tu_read(ye);
  bool heads_same = yv != NULL;
  for (int t = 0; heads_same && t < 3; t++)
    for (int k = 0; k < 4; k++)
      heads_same = heads_same && yv[t * 8 + k] == yv[t * 8 + 4 + k];
  CHECK_MSG(heads_same, "rope_positions: every head of a token gets the same angle");
  free(av), free(bv), free(yv);
  rel(x, off, xt, a, bt, b, e, pa, ye, NULL);
}

/* ---- errors ---------------------------------------------------------------------- */
static void test_errors(void) {
  int64_t s3[3] = {2, 4, 8}, s1[1] = {8}, s7[1] = {7}, s0[1] = {0}, s2[2] = {2, 4};
  emlx_array *x = emlx_zeros(s3, 3, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *xh = emlx_zeros(s3, 3, EMLX_FLOAT16, EMLX_CPU);
  emlx_array *xi = emlx_zeros(s3, 3, EMLX_INT32, EMLX_CPU);
  emlx_array *xd = emlx_zeros(s3, 3, EMLX_FLOAT64, EMLX_CPU);
  emlx_array *w = emlx_ones(s1, 1, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *w7 = emlx_ones(s7, 1, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *w2 = emlx_ones(s2, 2, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *wi = emlx_ones(s1, 1, EMLX_INT32, EMLX_CPU);
  emlx_array *sc = emlx_scalar_tensor(1.0, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *x2 = emlx_zeros(s2, 2, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *e0 = emlx_zeros(s0, 1, EMLX_INT32, EMLX_CPU);
  /* norms */
  CHECK_NULL_ERR(emlx_fast_rms_norm(NULL, w, 1e-5f));
  CHECK_NULL_ERR(emlx_fast_rms_norm(sc, NULL, 1e-5f)); /* rank 0 */
  CHECK_NULL_ERR(emlx_fast_rms_norm(x, w7, 1e-5f));    /* size */
  CHECK_NULL_ERR(emlx_fast_rms_norm(x, w2, 1e-5f));    /* rank of weight */
  CHECK_NULL_ERR(emlx_fast_rms_norm(xi, NULL, 1e-5f)); /* integer x */
  CHECK_NULL_ERR(emlx_fast_rms_norm(xd, NULL, 1e-5f)); /* float64 */
  CHECK_NULL_ERR(emlx_fast_rms_norm(x, wi, 1e-5f));    /* integer weight */
  CHECK_NULL_ERR(emlx_fast_rms_norm(x, w, -1.0f));     /* eps */
  CHECK_NULL_ERR(emlx_fast_layer_norm(x, w, w7, 1e-5f));
  CHECK_NULL_ERR(emlx_fast_layer_norm_no_bias(x, w7, 1e-5f));
  /* rope */
  CHECK_NULL_ERR(emlx_fast_rope(x2, 4, false, 1e4f, 1.0f, 0)); /* rank 2 */
  CHECK_NULL_ERR(emlx_fast_rope(x, 5, false, 1e4f, 1.0f, 0));  /* odd dims */
  CHECK_NULL_ERR(emlx_fast_rope(x, 10, false, 1e4f, 1.0f, 0)); /* dims > D */
  CHECK_NULL_ERR(emlx_fast_rope(x, 0, false, 1e4f, 1.0f, 0));
  CHECK_NULL_ERR(emlx_fast_rope(x, 8, false, 0.0f, 1.0f, 0)); /* base */
  CHECK_NULL_ERR(emlx_fast_rope(xi, 8, false, 1e4f, 1.0f, 0));
  CHECK_NULL_ERR(emlx_fast_rope(xd, 8, false, 1e4f, 1.0f, 0));
  int64_t o3[3] = {1, 2, 3}, so3[1] = {3};
  emlx_array *off3 = emlx_from_blob(o3, EMLX_INT64, so3, 1, EMLX_CPU);
  emlx_array *offf = emlx_astype(off3, EMLX_FLOAT32);
  CHECK_NULL_ERR(emlx_fast_rope_ids(x, 8, false, 1e4f, 1.0f, off3)); /* B is 2 */
  CHECK_NULL_ERR(emlx_fast_rope_ids(x, 8, false, 1e4f, 1.0f, offf)); /* float offsets */
  CHECK_NULL_ERR(emlx_fast_rope_ids(x, 8, false, 1e4f, 1.0f, NULL));
  CHECK_NULL_ERR(emlx_fast_rope_ids(x, 8, false, 1e4f, 1.0f, x2)); /* rank 2 */
  CHECK_NULL_ERR(emlx_fast_rope_positions(x, 8, false, 1e4f, 1.0f, off3)); /* rank 1 */
  emlx_array *p24 = emlx_zeros(s2, 2, EMLX_INT32, EMLX_CPU);               /* {2, 4}: B, T */
  int64_t s25[2] = {2, 5};
  emlx_array *p25 = emlx_zeros(s25, 2, EMLX_INT32, EMLX_CPU);
  CHECK_NULL_ERR(emlx_fast_rope_positions(x, 8, false, 1e4f, 1.0f, p25)); /* T is 4 */
  emlx_array *ok = emlx_fast_rope_positions(x, 8, false, 1e4f, 1.0f, p24);
  CHECK(ok != NULL);
  emlx_release(ok);
  emlx_array *f3 = emlx_ones(so3, 1, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *f4i = emlx_ones(s2 + 1, 1, EMLX_INT32, EMLX_CPU);
  int64_t two[2] = {1, 2}, s2b[1] = {2};
  emlx_array *off2 = emlx_from_blob(two, EMLX_INT64, s2b, 1, EMLX_CPU);
  CHECK_NULL_ERR(emlx_fast_rope_with_freqs(x, 8, false, 1.0f, off2, f3));  /* size != dims/2 */
  CHECK_NULL_ERR(emlx_fast_rope_with_freqs(x, 8, false, 1.0f, off2, f4i)); /* integer freqs */
  CHECK_NULL_ERR(emlx_fast_rope_with_freqs(x, 8, false, 1.0f, off2, NULL));
  CHECK_NULL_ERR(emlx_fast_rope_with_freqs(x, 8, false, 1.0f, e0, w));
  /* swiglu */
  CHECK_NULL_ERR(emlx_fast_swiglu(x, xh));   /* dtypes */
  CHECK_NULL_ERR(emlx_fast_swiglu(x, x2));   /* shapes */
  CHECK_NULL_ERR(emlx_fast_swiglu(xi, xi));  /* integers */
  CHECK_NULL_ERR(emlx_fast_swiglu(x, NULL));
  rel(x, xh, xi, xd, w, w7, w2, wi, sc, x2, e0, off3, offf, p24, p25, f3, f4i, off2, NULL);
}

int main(void) {
  test_norms();
  test_swiglu();
  test_rope();
  test_rope_layouts();
  test_errors();
  return tu_finish();
}
