/* test_conv.c — conv_general against a naive f64 reference computed here (the
 * input explicitly dilated and padded, then correlated with the dilated,
 * optionally flipped kernel): 1-D/2-D/3-D, strides, symmetric, asymmetric
 * and negative padding, kernel and input dilation, feature groups (incl.
 * depthwise with multipliers), batch groups, flip, 1x1, strided views,
 * empty batches, several dtypes, and the error cases. */
#include "test_util.h"

#define MAXS 3

typedef struct cspec {
  int ns;
  int64_t N, Cin, Cout, groups, bgroups;
  int64_t in[MAXS], k[MAXS], s[MAXS], lo[MAXS], hi[MAXS], kd[MAXS], id[MAXS];
  bool flip;
} cspec;

static int64_t out_ext(const cspec *c, int i) {
  if (c->in[i] == 0)
    return 0;
  int64_t span = (c->in[i] - 1) * c->id[i] + 1 + c->lo[i] + c->hi[i];
  int64_t keff = (c->k[i] - 1) * c->kd[i] + 1;
  return span < keff ? 0 : (span - keff) / c->s[i] + 1;
}

/* ref[(n, o..., co)] for x (N, in..., Cin), w (Cout, k..., Cin/G). */
static void ref_conv(const cspec *c, const double *x, const double *w, double *ref,
                     int64_t *oshape) {
  int ns = c->ns;
  int64_t G = c->groups > 1 ? c->groups : c->bgroups, Cg = c->Cin / c->groups, Cog = c->Cout / G;
  int64_t Nout = c->N / c->bgroups;
  int64_t dsh[MAXS], osp[MAXS], npix = 1, nd = 1, no = 1, nk = 1;
  for (int i = 0; i < ns; i++) {
    dsh[i] = c->in[i] == 0 ? 0 : (c->in[i] - 1) * c->id[i] + 1 + c->lo[i] + c->hi[i];
    osp[i] = out_ext(c, i);
    npix *= c->in[i];
    nd *= dsh[i];
    no *= osp[i];
    nk *= c->k[i];
  }
  oshape[0] = Nout;
  for (int i = 0; i < ns; i++)
    oshape[i + 1] = osp[i];
  oshape[ns + 1] = c->Cout;
  /* dilated + padded input, per image: (nd, Cin) */
  double *xd = calloc((size_t)(c->N * nd * c->Cin + 1), sizeof(double));
  int64_t idx[MAXS], didx[MAXS];
  for (int64_t n = 0; n < c->N; n++)
    for (int64_t p = 0; p < npix; p++) {
      tu_unravel(p, c->in, ns, idx);
      bool ok = true;
      for (int i = 0; i < ns; i++) {
        didx[i] = idx[i] * c->id[i] + c->lo[i];
        ok = ok && didx[i] >= 0 && didx[i] < dsh[i];
      }
      if (!ok)
        continue; /* cropped by negative padding */
      int64_t dp = tu_ravel(didx, dsh, ns);
      for (int64_t ch = 0; ch < c->Cin; ch++)
        xd[(n * nd + dp) * c->Cin + ch] = x[(n * npix + p) * c->Cin + ch];
    }
  int64_t oc[MAXS], kc[MAXS], pos[MAXS];
  for (int64_t n = 0; n < Nout; n++)
    for (int64_t o = 0; o < no; o++) {
      tu_unravel(o, osp, ns, oc);
      for (int64_t co = 0; co < c->Cout; co++) {
        int64_t g = co / Cog;
        int64_t nin = c->bgroups > 1 ? g * Nout + n : n;
        int64_t c0 = c->groups > 1 ? g * Cg : 0;
        double acc = 0;
        for (int64_t t = 0; t < nk; t++) {
          tu_unravel(t, c->k, ns, kc);
          for (int i = 0; i < ns; i++)
            pos[i] = oc[i] * c->s[i] + kc[i] * c->kd[i];
          int64_t dp = tu_ravel(pos, dsh, ns);
          int64_t wt = c->flip ? nk - 1 - t : t;
          for (int64_t ci = 0; ci < Cg; ci++)
            acc += xd[(nin * nd + dp) * c->Cin + c0 + ci] * w[(co * nk + wt) * Cg + ci];
        }
        ref[(n * no + o) * c->Cout + co] = acc;
      }
    }
  free(xd);
}

static emlx_conv_options opts_of(const cspec *c) {
  return (emlx_conv_options){.strides = c->s,
                             .padding_low = c->lo,
                             .padding_high = c->hi,
                             .kernel_dilation = c->kd,
                             .input_dilation = c->id,
                             .groups = c->groups,
                             .batch_groups = c->bgroups,
                             .flip = c->flip};
}

/* a (rows, cols) made as the transpose of a (cols, rows) array: strided. */
static emlx_array *make_transposed2(emlx_dtype dt, const int64_t *shape, int nd, const double *v) {
  int64_t rows = shape[0], cols = tu_numel(shape + 1, nd - 1);
  double *t = malloc((size_t)(rows * cols + 1) * sizeof(double));
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      t[j * rows + i] = v[i * cols + j];
  int64_t bsh[2] = {cols, rows};
  emlx_array *b = tu_make(dt, bsh, 2, t);
  free(t);
  emlx_array *tr = emlx_transpose(b, NULL, 2);
  emlx_array *r = emlx_reshape(tr, shape, nd); /* not a view: copies lazily */
  emlx_release(b);
  emlx_array *out = nd == 2 ? emlx_retain(tr) : r;
  if (nd == 2)
    emlx_release(r);
  emlx_release(tr);
  return out;
}

static void check_conv(const cspec *c, emlx_dtype dt, bool strided, const char *what) {
  static tu_rng g = {99};
  int ns = c->ns;
  int64_t xsh[MAXS + 2], wsh[MAXS + 2], osh[MAXS + 2];
  xsh[0] = c->N;
  wsh[0] = c->Cout;
  for (int i = 0; i < ns; i++) {
    xsh[i + 1] = c->in[i];
    wsh[i + 1] = c->k[i];
  }
  xsh[ns + 1] = c->Cin;
  wsh[ns + 1] = c->Cin / c->groups;
  int64_t nx = tu_numel(xsh, ns + 2), nw = tu_numel(wsh, ns + 2);
  double *x = malloc((size_t)(nx + 1) * sizeof(double)), *w = malloc((size_t)(nw + 1) * 8);
  bool isint = !tu_is_float(dt);
  for (int64_t i = 0; i < nx; i++)
    x[i] = isint ? (double)tu_randint(&g, -3, 3) : tu_quant(dt, tu_uniform(&g, -1, 1));
  for (int64_t i = 0; i < nw; i++)
    w[i] = isint ? (double)tu_randint(&g, -3, 3) : tu_quant(dt, tu_uniform(&g, -1, 1));
  int64_t nout = c->N / c->bgroups * c->Cout;
  for (int i = 0; i < ns; i++)
    nout *= out_ext(c, i);
  double *ref = malloc((size_t)(nout + 1) * sizeof(double));
  ref_conv(c, x, w, ref, osh);
  emlx_array *xa = strided ? make_transposed2(dt, xsh, ns + 2, x) : tu_make(dt, xsh, ns + 2, x);
  emlx_array *wa = strided ? make_transposed2(dt, wsh, ns + 2, w) : tu_make(dt, wsh, ns + 2, w);
  emlx_conv_options o = opts_of(c);
  emlx_array *y = emlx_conv_general(xa, wa, &o);
  char buf[128];
  snprintf(buf, sizeof buf, "%s [%s]%s", what, tu_dname(dt), strided ? " strided" : "");
  if (isint) {
    tu_check_array(y, dt, osh, ns + 2, ref, 0, buf);
  } else if (CHECK_MSG(y != NULL, "%s: result", buf)) {
    bool shape_ok = emlx_ndim(y) == ns + 2 && emlx_array_dtype(y) == dt;
    for (int i = 0; shape_ok && i < ns + 2; i++)
      shape_ok = emlx_shape(y)[i] == osh[i];
    if (CHECK_MSG(shape_ok, "%s: shape and dtype", buf)) {
      double *got = tu_read(y);
      double e = tu_nmse(got, ref, nout);
      double tol = dt == EMLX_FLOAT64 ? 1e-24 : dt == EMLX_FLOAT32 ? 1e-11 : 1e-4;
      CHECK_MSG(e <= tol, "%s: nmse %g > %g", buf, e, tol);
      free(got);
    }
  }
  emlx_release(y);
  emlx_release(xa);
  emlx_release(wa);
  free(x);
  free(w);
  free(ref);
}

#define ONES                                                                                       \
  { 1, 1, 1 }
#define ZEROS                                                                                      \
  { 0, 0, 0 }
static const cspec cases[] = {
    /* ns N Cin Cout G B  in k s lo hi kd id flip */
    {1, 2, 3, 4, 1, 1, {9}, {3}, ONES, ZEROS, ZEROS, ONES, ONES, false},
    {1, 2, 3, 4, 1, 1, {12}, {3}, {2}, {2}, {1}, {2}, ONES, true},
    {2, 2, 4, 5, 1, 1, {7, 6}, {3, 3}, ONES, {1, 1}, {1, 1}, ONES, ONES, false},
    {2, 1, 3, 2, 1, 1, {8, 7}, {3, 2}, {2, 3}, {0, 2}, {1, 0}, ONES, ONES, false},
    {2, 2, 2, 3, 1, 1, {6, 6}, {2, 3}, ONES, {1, 0}, {0, 1}, {2, 2}, ONES, false},
    {2, 1, 2, 2, 1, 1, {4, 5}, {3, 2}, {1, 2}, {1, 2}, {2, 1}, ONES, {2, 3}, true},
    {2, 2, 6, 4, 2, 1, {5, 5}, {3, 3}, ONES, {1, 1}, {1, 1}, ONES, ONES, false},
    {2, 2, 6, 6, 6, 1, {6, 5}, {3, 3}, {1, 2}, {1, 1}, {1, 1}, ONES, ONES, false}, /* depthwise */
    {2, 1, 3, 6, 3, 1, {5, 5}, {2, 3}, ONES, {1, 0}, {0, 1}, {1, 2}, ONES, true},  /* mult 2 */
    {2, 4, 3, 4, 1, 2, {5, 4}, {2, 2}, ONES, ZEROS, ZEROS, ONES, ONES, false},     /* batch grp */
    {2, 6, 2, 6, 1, 3, {3, 3}, {3, 3}, ONES, {1, 1}, {1, 1}, ONES, ONES, true},
    {2, 2, 5, 7, 1, 1, {4, 3}, {1, 1}, ONES, ZEROS, ZEROS, ONES, ONES, false},     /* 1x1 */
    {2, 2, 6, 4, 2, 1, {4, 3}, {1, 1}, ONES, ZEROS, ZEROS, ONES, ONES, false},     /* 1x1 grp */
    {2, 4, 3, 4, 1, 2, {3, 3}, {1, 1}, ONES, ZEROS, ZEROS, ONES, ONES, false},     /* 1x1 bgrp */
    {2, 1, 2, 3, 1, 1, {8, 8}, {1, 1}, {2, 2}, ZEROS, ZEROS, ONES, ONES, false},   /* strided 1x1 */
    {2, 1, 2, 2, 1, 1, {7, 7}, {3, 3}, ONES, {-1, 0}, {-2, 1}, ONES, ONES, false}, /* neg pad */
    {3,
     2,
     3,
     2,
     1,
     1,
     {4, 5, 3},
     {2, 3, 2},
     {1, 2, 1},
     {1, 0, 1},
     {0, 1, 1},
     {1, 1, 2},
     ONES,
     true},
    {3, 1, 4, 4, 4, 1, {3, 4, 5}, {2, 2, 2}, ONES, {1, 1, 1}, ZEROS, ONES, {1, 2, 1}, false},
    {2, 0, 3, 4, 1, 1, {5, 5}, {3, 3}, ONES, ZEROS, ZEROS, ONES, ONES, false}, /* empty N */
    {2, 1, 3, 4, 1, 1, {2, 2}, {3, 3}, ONES, ZEROS, ZEROS, ONES, ONES, false}, /* out 0 */
    {2, 1, 0, 4, 1, 1, {3, 3}, {2, 2}, ONES, ZEROS, ZEROS, ONES, ONES, false}, /* C_in 0 */
    /* output rows of 14+ positions: the tiled f32 kernels (conv_tile.c) read
     * the input in place there; with strides, kernel dilation, flip, groups,
     * batch groups, output channels past a panel, 1-D and 3-D, and input
     * dilation (always gathered) */
    {2, 2, 5, 40, 1, 1, {5, 40}, {3, 3}, {1, 2}, {1, 2}, {1, 0}, {1, 2}, ONES, true},
    {1, 3, 4, 6, 2, 1, {50}, {4}, {3}, {2}, {1}, {2}, ONES, false},
    {2, 4, 3, 34, 1, 2, {6, 30}, {2, 3}, ONES, ZEROS, ZEROS, ONES, ONES, false},
    {2, 1, 3, 5, 1, 1, {3, 20}, {2, 2}, ONES, {1, 1}, {1, 1}, ONES, {1, 2}, false},
    {3, 1, 2, 3, 1, 1, {2, 3, 20}, {1, 2, 3}, ONES, ZEROS, {0, 0, 1}, ONES, ONES, false},
    /* several im2col row blocks (K = 576 f32: ~1800 rows per block) */
    {2, 2, 64, 8, 1, 1, {32, 32}, {3, 3}, ONES, {1, 1}, {1, 1}, ONES, ONES, false},
};

static void test_cases(void) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char what[32];
    snprintf(what, sizeof what, "case %zu", i);
    check_conv(&cases[i], EMLX_FLOAT32, false, what);
    check_conv(&cases[i], EMLX_FLOAT64, false, what);
    if (i % 3 == 0)
      check_conv(&cases[i], EMLX_FLOAT32, true, what);
    if (i + 1 == sizeof cases / sizeof cases[0])
      continue; /* the big case: f32/f64 only */
    check_conv(&cases[i], EMLX_FLOAT16, false, what);
    check_conv(&cases[i], EMLX_BFLOAT16, false, what);
    check_conv(&cases[i], EMLX_INT32, false, what);
    if (i % 4 == 0)
      check_conv(&cases[i], EMLX_INT8, false, what);
  }
}

/* 3x3 stride-1 f32 convolutions with 16+ channels in and out: Winograd
 * F(2x2, 3x3) at the AVX2 and AVX-512 levels (conv_wino.c). Odd output
 * extents (clipped tiles), asymmetric and negative padding, flip, channel
 * counts off the vector widths and past a panel, several chunks of tiles;
 * each has the 64 tiles (of 2 x 2 outputs) the path asks for. */
static const cspec wino_cases[] = {
    /* ns N Cin Cout G B  in k s lo hi kd id flip */
    {2, 3, 16, 16, 1, 1, {9, 11}, {3, 3}, ONES, {1, 1}, {1, 1}, ONES, ONES, false},
    {2, 2, 20, 35, 1, 1, {12, 13}, {3, 3}, ONES, {0, 2}, {1, 0}, ONES, ONES, true},
    {2, 2, 17, 16, 1, 1, {22, 21}, {3, 3}, ONES, ZEROS, ZEROS, ONES, ONES, false},
    {2, 4, 16, 18, 1, 1, {10, 10}, {3, 3}, ONES, {-1, 1}, {0, -1}, ONES, ONES, false},
    {2, 64, 16, 16, 1, 1, {4, 4}, {3, 3}, ONES, ZEROS, ZEROS, ONES, ONES, true},
    {2, 2, 64, 64, 1, 1, {14, 14}, {3, 3}, ONES, {1, 1}, {1, 1}, ONES, ONES, false},
};

static void test_winograd(void) {
  for (size_t i = 0; i < sizeof wino_cases / sizeof wino_cases[0]; i++) {
    char what[32];
    snprintf(what, sizeof what, "winograd case %zu", i);
    check_conv(&wino_cases[i], EMLX_FLOAT32, false, what);
    if (i % 2 == 0)
      check_conv(&wino_cases[i], EMLX_FLOAT32, true, what);
  }
}

static void test_promotion(void) {
  /* f16 input with f32 weight convolves in f32 */
  double xv[4] = {1, 2, 3, 4}, wv[2] = {1, -1};
  int64_t xs[3] = {1, 4, 1}, ws[3] = {1, 2, 1}, os[3] = {1, 3, 1};
  emlx_array *x = tu_make(EMLX_FLOAT16, xs, 3, xv), *w = tu_make(EMLX_FLOAT32, ws, 3, wv);
  emlx_array *y = emlx_conv_general(x, w, NULL);
  double want[3] = {-1, -1, -1};
  tu_check_array(y, EMLX_FLOAT32, os, 3, want, 0, "promotion f16 x f32");
  emlx_release(y);
  emlx_release(x);
  emlx_release(w);
}

static void test_errors(void) {
  static const double z[256] = {0};
  int64_t xs[4] = {2, 5, 5, 4}, ws[4] = {6, 3, 3, 4}, w2s[4] = {6, 3, 3, 2}, w3s[3] = {6, 3, 4};
  emlx_array *x = tu_make(EMLX_FLOAT32, xs, 4, z), *w = tu_make(EMLX_FLOAT32, ws, 4, z);
  emlx_array *w2 = tu_make(EMLX_FLOAT32, w2s, 4, z), *w3 = tu_make(EMLX_FLOAT32, w3s, 3, z);
  CHECK_NULL_ERR(emlx_conv_general(NULL, w, NULL));
  CHECK_NULL_ERR(emlx_conv_general(x, NULL, NULL));
  CHECK_NULL_ERR(emlx_conv_general(x, w3, NULL)); /* rank mismatch */
  CHECK_NULL_ERR(emlx_conv_general(x, w2, NULL)); /* channel mismatch */
  emlx_conv_options o = {.groups = 3};            /* 3 does not divide 4 */
  CHECK_NULL_ERR(emlx_conv_general(x, w, &o));
  o = (emlx_conv_options){.groups = 2}; /* weight's C_in must be 2: OK with w2 */
  emlx_array *ok = emlx_conv_general(x, w2, &o);
  CHECK_NOT_NULL(ok);
  emlx_release(ok);
  o = (emlx_conv_options){.groups = 2};
  CHECK_NULL_ERR(emlx_conv_general(x, w, &o)); /* weight has 4 channels, want 2 */
  o = (emlx_conv_options){.groups = -1};
  CHECK_NULL_ERR(emlx_conv_general(x, w, &o));
  o = (emlx_conv_options){.batch_groups = 4}; /* does not divide N = 2 */
  CHECK_NULL_ERR(emlx_conv_general(x, w, &o));
  o = (emlx_conv_options){.batch_groups = 2, .groups = 2};
  CHECK_NULL_ERR(emlx_conv_general(x, w2, &o));
  int64_t zero2[2] = {0, 1}, negbig[2] = {-20, 0};
  o = (emlx_conv_options){.strides = zero2};
  CHECK_NULL_ERR(emlx_conv_general(x, w, &o));
  o = (emlx_conv_options){.kernel_dilation = zero2};
  CHECK_NULL_ERR(emlx_conv_general(x, w, &o));
  o = (emlx_conv_options){.input_dilation = zero2};
  CHECK_NULL_ERR(emlx_conv_general(x, w, &o));
  o = (emlx_conv_options){.padding_low = negbig};
  CHECK_NULL_ERR(emlx_conv_general(x, w, &o));
  emlx_array *xb = emlx_astype(x, EMLX_BOOL), *wb = emlx_astype(w, EMLX_BOOL);
  CHECK_NULL_ERR(emlx_conv_general(xb, wb, NULL));
  emlx_array *xc = emlx_astype(x, EMLX_COMPLEX64);
  CHECK_NULL_ERR(emlx_conv_general(xc, w, NULL));
  int64_t s2[2] = {3, 4};
  emlx_array *x2 = tu_make(EMLX_FLOAT32, s2, 2, z);
  CHECK_NULL_ERR(emlx_conv_general(x2, x2, NULL)); /* rank < 3 */
  emlx_release(xb);
  emlx_release(wb);
  emlx_release(xc);
  emlx_release(x2);
  emlx_release(x);
  emlx_release(w);
  emlx_release(w2);
  emlx_release(w3);
}

int main(void) {
  test_cases();
  test_winograd();
  test_promotion();
  test_errors();
  return tu_finish();
}
