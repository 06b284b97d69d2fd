/* test_sdpa.c — fast scaled dot-product attention against the naive f64
 * reference of att_ref.h: f32 / f16 / bf16, odd sizes, GQA ratios 1, 4 and
 * 8, the decode (split keys) and prefill (transposed tiles) paths, causal
 * masks with T_q < T_kv and T_q > T_kv, bool / additive / key masks with
 * fully masked rows, sinks, strided views, T_kv = 0, the micro-tile edges
 * (rows and keys past whole blocks, D not a multiple of the vector), the
 * row-by-row P V of units of fewer than 8 rows (1-3 row tails, odd keys), the
 * bf16 pairs-order decode path (key and row tails, D != D_v), scores
 * wide enough that most weights underflow exp; and the error cases. */
#include "att_ref.h"

typedef struct tcase {
  const char *what;
  emlx_dtype dt;
  int64_t B, Nq, Nkv, Tq, Tkv, D, Dv;
  int causal;
  int mask_kind; /* 0 none, 1 bool, 2 additive */
  int mrank;     /* mask rank: 2 {Tq, Tkv}, 4 {B, 1, Tq, Tkv} */
  bool key_mask, sinks;
  bool dead_rows;  /* make some rows fully masked */
  bool strided_q;  /* q as a transposed view of {B, Tq, Nq, D} */
  bool strided_kv; /* k, v as transposed views of {B, Nkv, D, Tkv} (element stride Tkv) */
} tcase;

/* A {B, N, T, D} array of the row-major values v, stored {B, N, D, T} and
 * viewed through a transpose of the last two axes. */
static emlx_array *make_dt(emlx_dtype dt, const int64_t *shape, const double *v) {
  int64_t B = shape[0], N = shape[1], T = shape[2], D = shape[3];
  double *t = malloc((size_t)(B * N * T * D > 0 ? B * N * T * D : 1) * sizeof(double));
  for (int64_t bn = 0; bn < B * N; bn++)
    for (int64_t i = 0; i < T; i++)
      for (int64_t d = 0; d < D; d++)
        t[(bn * D + d) * T + i] = v[(bn * T + i) * D + d];
  int64_t ts[4] = {B, N, D, T};
  emlx_array *a = tu_make(dt, ts, 4, t);
  const int perm[4] = {0, 1, 3, 2};
  emlx_array *r = emlx_transpose(a, perm, 4);
  emlx_release(a);
  free(t);
  return r;
}

static double *rand_vals(tu_rng *r, int64_t n, emlx_dtype dt, double lo, double hi) {
  double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  for (int64_t i = 0; i < n; i++)
    v[i] = tu_quant(dt, tu_uniform(r, lo, hi));
  return v;
}

/* q is drawn from [-2 amp, 2 amp] (amp > 1: scores far below their row's max) */
static void run_case(const tcase *c, uint64_t seed, double amp) {
  tu_rng r = {seed};
  int64_t nq = c->B * c->Nq * c->Tq * c->D, nk = c->B * c->Nkv * c->Tkv * c->D,
          nv = c->B * c->Nkv * c->Tkv * c->Dv, nfull = c->B * c->Nq * c->Tq * c->Tkv;
  double *q = rand_vals(&r, nq, c->dt, -2 * amp, 2 * amp), *k = rand_vals(&r, nk, c->dt, -2, 2),
         *v = rand_vals(&r, nv, c->dt, -2, 2);
  double scale = 1.0 / sqrt((double)c->D);
  ref_problem rp = {
      c->B,      c->Nq, c->Nkv, c->Tq, c->Tkv,       c->D, c->Dv, (double)(float)scale,
      c->causal, q,     k,      v,     c->mask_kind, NULL, NULL,  NULL};
  int64_t qshape[4] = {c->B, c->Nq, c->Tq, c->D}, kshape[4] = {c->B, c->Nkv, c->Tkv, c->D},
          vshape[4] = {c->B, c->Nkv, c->Tkv, c->Dv};
  emlx_array *qa;
  if (c->strided_q) { /* the same values stored {B, Tq, Nq, D}, viewed as {B, Nq, Tq, D} */
    double *t = malloc((size_t)(nq > 0 ? nq : 1) * sizeof(double));
    for (int64_t b = 0; b < c->B; b++)
      for (int64_t n = 0; n < c->Nq; n++)
        for (int64_t i = 0; i < c->Tq; i++)
          for (int64_t d = 0; d < c->D; d++)
            t[((b * c->Tq + i) * c->Nq + n) * c->D + d] =
                q[((b * c->Nq + n) * c->Tq + i) * c->D + d];
    int64_t tshape[4] = {c->B, c->Tq, c->Nq, c->D};
    emlx_array *ta = tu_make(c->dt, tshape, 4, t);
    const int perm[4] = {0, 2, 1, 3};
    qa = emlx_transpose(ta, perm, 4);
    emlx_release(ta);
    free(t);
  } else {
    qa = tu_make(c->dt, qshape, 4, q);
  }
  emlx_array *ka = c->strided_kv ? make_dt(c->dt, kshape, k) : tu_make(c->dt, kshape, 4, k),
             *va = c->strided_kv ? make_dt(c->dt, vshape, v) : tu_make(c->dt, vshape, 4, v);
  emlx_array *ma = NULL, *kma = NULL, *sa = NULL;
  double *full = NULL, *km = NULL, *sk = NULL;
  if (c->mask_kind) {
    int64_t mshape[4] = {c->B, 1, c->Tq, c->Tkv};
    int64_t *ms = c->mrank == 2 ? mshape + 2 : mshape;
    int64_t mn = tu_numel(ms, c->mrank);
    double *m = malloc((size_t)(mn > 0 ? mn : 1) * sizeof(double));
    for (int64_t i = 0; i < mn; i++)
      m[i] =
          c->mask_kind == 1 ? (tu_uniform(&r, 0, 1) < 0.6) : tu_quant(c->dt, tu_uniform(&r, -3, 1));
    if (c->dead_rows && c->Tq > 1) /* row 1 of the first mask plane hidden */
      for (int64_t j = 0; j < c->Tkv; j++)
        m[c->Tkv + j] = c->mask_kind == 1 ? 0 : -HUGE_VAL;
    ma = tu_make(c->mask_kind == 1 ? EMLX_BOOL : c->dt, ms, c->mrank, m);
    full = malloc((size_t)(nfull > 0 ? nfull : 1) * sizeof(double));
    for (int64_t b = 0; b < c->B; b++)
      for (int64_t n = 0; n < c->Nq; n++)
        for (int64_t i = 0; i < c->Tq; i++)
          for (int64_t j = 0; j < c->Tkv; j++) {
            int64_t src = c->mrank == 2 ? i * c->Tkv + j : (b * c->Tq + i) * c->Tkv + j;
            full[((b * c->Nq + n) * c->Tq + i) * c->Tkv + j] = m[src];
          }
    rp.mask = full;
    free(m);
  }
  if (c->key_mask) {
    int64_t kms[2] = {c->B, c->Tkv};
    km = malloc((size_t)(c->B * c->Tkv > 0 ? c->B * c->Tkv : 1) * sizeof(double));
    for (int64_t i = 0; i < c->B * c->Tkv; i++)
      km[i] = (double)(tu_uniform(&r, 0, 1) < 0.7) * 3; /* non-zero ints attend */
    if (c->dead_rows)
      for (int64_t j = 0; j < c->Tkv; j++)
        km[j] = 0;
    kma = tu_make(EMLX_INT32, kms, 2, km);
    rp.key_mask = km;
  }
  if (c->sinks) {
    sk = rand_vals(&r, c->Nq, c->dt, -1, 2);
    sa = tu_make1(c->dt, c->Nq, sk);
    rp.sinks = sk;
  }
  emlx_sdpa_options o = {
      .scale = (float)scale, .causal = c->causal, .mask = ma, .key_mask = kma, .sinks = sa};
  emlx_array *out = emlx_fast_scaled_dot_product_attention(qa, ka, va, &o);
  int64_t no = c->B * c->Nq * c->Tq * c->Dv;
  double *ref = malloc((size_t)(no > 0 ? no : 1) * sizeof(double));
  ref_sdpa(&rp, ref);
  if (CHECK_MSG(out != NULL, "%s: result", c->what)) {
    const int64_t *sh = emlx_shape(out);
    CHECK_MSG(emlx_ndim(out) == 4 && sh[0] == c->B && sh[1] == c->Nq && sh[2] == c->Tq &&
                  sh[3] == c->Dv && emlx_array_dtype(out) == c->dt,
              "%s: shape and dtype", c->what);
    double *got = tu_read(out);
    att_check(got, ref, no, c->dt, c->what);
    free(got);
  }
  emlx_release(out);
  emlx_release(qa), emlx_release(ka), emlx_release(va);
  emlx_release(ma), emlx_release(kma), emlx_release(sa);
  free(q), free(k), free(v), free(full), free(km), free(sk), free(ref);
}

static void test_values(void) {
  const emlx_dtype dts[3] = {EMLX_FLOAT32, EMLX_FLOAT16, EMLX_BFLOAT16};
  for (int t = 0; t < 3; t++) {
    emlx_dtype dt = dts[t];
    tcase cases[] = {
        {"plain g1", dt, 1, 3, 3, 4, 9, 16, 16, 0, 0, 0, false, false, false, false, false},
        {"plain g4 odd D", dt, 2, 8, 2, 3, 37, 13, 13, 0, 0, 0, false, false, false, false, false},
        {"Dv != D", dt, 1, 4, 2, 2, 21, 24, 40, 0, 0, 0, false, false, false, false, false},
        {"decode g8 split", dt, 1, 8, 1, 1, 1100, 64, 64, 0, 0, 0, false, false, false, false,
         false},
        {"decode g4 split causal", dt, 1, 8, 2, 1, 700, 128, 128, 1, 0, 0, false, false, false,
         false, false},
        {"decode 2 rows split sinks", dt, 1, 4, 1, 2, 900, 32, 32, 1, 0, 0, false, true, false,
         false, false},
        {"prefill causal g4", dt, 1, 8, 2, 70, 70, 64, 64, 1, 0, 0, false, false, false, false,
         false},
        {"prefill causal g1 odd", dt, 2, 2, 2, 67, 67, 20, 20, 1, 0, 0, false, false, false, false,
         false},
        {"causal Tq < Tkv", dt, 1, 4, 1, 5, 19, 16, 16, 1, 0, 0, false, false, false, false, false},
        {"causal Tq > Tkv (dead rows)", dt, 1, 4, 1, 9, 5, 16, 16, 1, 0, 0, false, false, false,
         false, false},
        {"causal Tq > Tkv sinks", dt, 1, 4, 2, 9, 5, 16, 16, 1, 0, 0, false, true, false, false,
         false},
        {"bool mask 2-D dead row", dt, 2, 4, 1, 4, 30, 16, 16, 0, 1, 2, false, false, true, false,
         false},
        {"bool mask 4-D prefill", dt, 2, 8, 1, 20, 45, 32, 32, 0, 1, 4, false, false, true, false,
         false},
        {"additive 4-D -inf row", dt, 2, 4, 2, 3, 70, 16, 16, 0, 2, 4, false, false, true, false,
         false},
        {"additive 2-D sinks", dt, 1, 8, 8, 6, 33, 16, 16, 0, 2, 2, false, true, false, false,
         false},
        {"causal key mask", dt, 2, 8, 2, 6, 50, 32, 32, 1, 0, 0, true, false, false, false, false},
        {"causal key mask dead batch", dt, 2, 4, 1, 3, 12, 16, 16, 1, 0, 0, true, false, true,
         false, false},
        {"key mask dead batch sinks", dt, 2, 4, 1, 3, 12, 16, 16, 1, 0, 0, true, true, true, false,
         false},
        {"strided q", dt, 2, 8, 2, 5, 40, 32, 32, 1, 0, 0, false, false, false, true, false},
        {"strided q prefill", dt, 1, 4, 1, 33, 33, 64, 64, 1, 0, 0, false, false, false, true,
         false},
        {"strided k, v decode", dt, 1, 8, 2, 1, 300, 32, 32, 0, 0, 0, false, false, false, false,
         true},
        {"strided k, v prefill", dt, 1, 4, 2, 20, 40, 32, 32, 1, 0, 0, false, false, false, false,
         true},
        {"T_kv = 0", dt, 1, 2, 1, 3, 0, 16, 16, 0, 0, 0, false, false, false, false, false},
        {"T_q = 0", dt, 1, 2, 1, 0, 5, 16, 16, 1, 0, 0, false, false, false, false, false},
        {"Nq = 128 > RMAX", dt, 1, 128, 1, 1, 300, 16, 16, 0, 0, 0, false, false, false, false,
         false},
        /* the micro-tile edges: rows of a unit R = 13 (6 + 6 + 1 on avx2), 10 (6 + 4), 11
         * with D = 12 (transposed in 8 x 8 blocks and a column tail) and tiles of 64, 64, 3
         * keys; 64 rows of G = 8 with T_q < T_kv; decode's 3-key blocks with 1- and 2-key
         * tails and 3-vector P V strips with a 1-vector tail (D_v = 56) */
        {"prefill R 13", dt, 1, 2, 2, 13, 13, 16, 16, 1, 0, 0, false, false, false, false, false},
        {"prefill R 10 g2", dt, 1, 4, 2, 5, 77, 24, 24, 0, 0, 0, false, false, false, false, false},
        {"prefill R 11 D 12 T_kv 131", dt, 1, 1, 1, 11, 131, 12, 12, 0, 0, 0, false, false, false,
         false, false},
        {"prefill g8 causal Tq < Tkv", dt, 1, 16, 2, 37, 50, 40, 40, 1, 0, 0, false, false, false,
         false, false},
        {"decode g4 key tails D_v 56", dt, 1, 8, 2, 1, 130, 24, 56, 0, 0, 0, false, false, false,
         false, false},
        /* P V by rows of V (units of R < 8 on avx2): groups of 4 rows with 1-3 row tails
         * (R = 1, 2, 5 = 4 + 1, 6 = 4 + 2, 7 = 4 + 3), odd key counts (a 1-key tail of the
         * 2-key blocks, tiles past whole 64s), D_v 8, 12 (converted rows, padded), 40, 56;
         * sinks and fully masked rows */
        {"rows P V g1 T_kv 129 D_v 56", dt, 1, 2, 2, 1, 129, 32, 56, 0, 0, 0, false, false, false,
         false, false},
        {"rows P V g2 D_v 12", dt, 1, 4, 2, 1, 77, 16, 12, 0, 0, 0, false, false, false, false,
         false},
        {"rows P V g3 T_q 2 (R 6)", dt, 1, 6, 2, 2, 101, 24, 40, 0, 0, 0, false, false, false,
         false, false},
        {"rows P V g5 sinks", dt, 1, 10, 2, 1, 65, 16, 24, 0, 0, 0, false, true, false, false,
         false},
        {"rows P V g7 D_v 8", dt, 1, 7, 1, 1, 63, 8, 8, 0, 0, 0, false, false, false, false, false},
        {"rows P V g4 bool mask dead rows", dt, 2, 8, 2, 1, 67, 32, 56, 0, 1, 4, false, false, true,
         false, false},
        /* bf16 K/V in pairs order (avx2, units of R < 8, D and D_v multiples of 16): 4-row x
         * 2-key blocks with a 1-key tail (T_kv 131: tiles of 64, 64, 3), D != D_v, 1-row
         * groups after a 4-row one (R 7), R 2 with a bool mask, dead rows and sinks */
        {"pairs g4 T_kv 131 D 32 D_v 48", dt, 1, 8, 2, 1, 131, 32, 48, 0, 0, 0, false, false,
         false, false, false},
        {"pairs g7 T_kv 67 D 16", dt, 1, 7, 1, 1, 67, 16, 16, 0, 0, 0, false, false, false, false,
         false},
        {"pairs g2 bool mask dead rows sinks", dt, 2, 4, 2, 1, 77, 64, 64, 0, 1, 4, false, true,
         true, false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
      run_case(&cases[i], 1000 + i * 7 + (uint64_t)t, 1);
    /* scores 20x wider: most weights underflow exp (s - max < -87) */
    tcase wide[] = {
        {"decode g4 wide scores", dt, 1, 4, 1, 1, 200, 16, 16, 0, 0, 0, false, false, false, false,
         false},
        {"prefill causal wide scores", dt, 1, 4, 1, 40, 40, 16, 16, 1, 0, 0, false, false, false,
         false, false},
        {"additive -inf row wide scores", dt, 2, 4, 2, 3, 70, 16, 16, 0, 2, 4, false, false, true,
         false, false},
    };
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++)
      run_case(&wide[i], 5000 + i * 7 + (uint64_t)t, 20);
  }
}

/* The spec's wrappers agree with the general form. */
static void test_wrappers(void) {
  tu_rng r = {77};
  int64_t qs[4] = {1, 4, 3, 16}, ks[4] = {1, 2, 6, 16}, kms[2] = {1, 6}, ms[2] = {3, 6};
  double *q = rand_vals(&r, 192, EMLX_FLOAT32, -2, 2), *k = rand_vals(&r, 192, EMLX_FLOAT32, -2, 2),
         *v = rand_vals(&r, 192, EMLX_FLOAT32, -2, 2);
  double kmv[6] = {1, 1, 0, 1, 0, 1}, mv[18], sv[4] = {0.5, -1, 0, 2};
  for (int i = 0; i < 18; i++)
    mv[i] = tu_uniform(&r, -2, 0);
  emlx_array *qa = tu_make(EMLX_FLOAT32, qs, 4, q), *ka = tu_make(EMLX_FLOAT32, ks, 4, k),
             *va = tu_make(EMLX_FLOAT32, ks, 4, v), *kma = tu_make(EMLX_UINT8, kms, 2, kmv),
             *ma = tu_make(EMLX_FLOAT32, ms, 2, mv), *sa = tu_make1(EMLX_FLOAT32, 4, sv);
  struct {
    const char *what;
    emlx_array *a;
    emlx_sdpa_options o;
  } w[] = {
      {"fast_sdpa", emlx_fast_sdpa(qa, ka, va, 0.25f, NULL), {.scale = 0.25f}},
      {"fast_sdpa sinks", emlx_fast_sdpa(qa, ka, va, 0.3f, sa), {.scale = 0.3f, .sinks = sa}},
      {"fast_sdpa_causal",
       emlx_fast_sdpa_causal(qa, ka, va, 0.25f, NULL),
       {.scale = 0.25f, .causal = true}},
      {"fast_sdpa_masked",
       emlx_fast_sdpa_masked(qa, ka, va, 0.25f, ma, NULL),
       {.scale = 0.25f, .mask = ma}},
      {"fast_sdpa_causal_key_masked",
       emlx_fast_sdpa_causal_key_masked(qa, ka, va, 0.25f, kma, sa),
       {.scale = 0.25f, .causal = true, .key_mask = kma, .sinks = sa}},
      {"default scale", emlx_fast_sdpa(qa, ka, va, 0.25f, NULL), {.scale = 0}},
  };
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
    emlx_array *b = emlx_fast_scaled_dot_product_attention(qa, ka, va, &w[i].o);
    double *x = tu_read(w[i].a), *y = tu_read(b);
    att_check(x, y, 48, EMLX_FLOAT32, w[i].what);
    free(x), free(y);
    emlx_release(w[i].a), emlx_release(b);
  }
  emlx_release(qa), emlx_release(ka), emlx_release(va), emlx_release(kma), emlx_release(ma),
      emlx_release(sa);
  free(q), free(k), free(v);
}

static emlx_array *zeros(emlx_dtype dt, int64_t a, int64_t b, int64_t c, int64_t d, int nd) {
  int64_t s[4] = {a, b, c, d};
  return emlx_zeros(s, nd, dt, EMLX_CPU);
}

static void test_errors(void) {
  emlx_array *q = zeros(EMLX_FLOAT32, 1, 4, 3, 16, 4), *k = zeros(EMLX_FLOAT32, 1, 2, 5, 16, 4),
             *v = zeros(EMLX_FLOAT32, 1, 2, 5, 16, 4);
  emlx_array *q3 = zeros(EMLX_FLOAT32, 4, 3, 16, 0, 3), *k3h = zeros(EMLX_FLOAT32, 1, 3, 5, 16, 4),
             *qh = zeros(EMLX_FLOAT16, 1, 4, 3, 16, 4), *qi = zeros(EMLX_INT32, 1, 4, 3, 16, 4),
             *kd = zeros(EMLX_FLOAT32, 1, 2, 5, 8, 4), *vt = zeros(EMLX_FLOAT32, 1, 2, 6, 16, 4),
             *kb = zeros(EMLX_FLOAT32, 2, 2, 5, 16, 4), *q64 = zeros(EMLX_FLOAT64, 1, 4, 3, 16, 4),
             *k64 = zeros(EMLX_FLOAT64, 1, 2, 5, 16, 4);
  emlx_array *mbad = zeros(EMLX_BOOL, 4, 5, 0, 0, 2), *mint = zeros(EMLX_INT32, 3, 5, 0, 0, 2),
             *m5 = zeros(EMLX_BOOL, 1, 1, 1, 3, 4), *kmbad = zeros(EMLX_BOOL, 1, 4, 0, 0, 2),
             *sbad = zeros(EMLX_FLOAT32, 3, 0, 0, 0, 1), *sint = zeros(EMLX_INT32, 4, 0, 0, 0, 1);
  CHECK_NULL_ERR(emlx_fast_sdpa(q3, k, v, 1.0f, NULL));      /* rank 3 */
  CHECK_NULL_ERR(emlx_fast_sdpa(q, k3h, k3h, 1.0f, NULL));   /* 4 heads over 3 */
  CHECK_NULL_ERR(emlx_fast_sdpa(qh, k, v, 1.0f, NULL));      /* f16 q, f32 k */
  CHECK_NULL_ERR(emlx_fast_sdpa(qi, k, v, 1.0f, NULL));      /* int32 */
  CHECK_NULL_ERR(emlx_fast_sdpa(q64, k64, k64, 1.0f, NULL)); /* float64 */
  CHECK_NULL_ERR(emlx_fast_sdpa(q, kd, v, 1.0f, NULL));      /* head sizes */
  CHECK_NULL_ERR(emlx_fast_sdpa(q, k, vt, 1.0f, NULL));      /* k/v lengths */
  CHECK_NULL_ERR(emlx_fast_sdpa(q, kb, kb, 1.0f, NULL));     /* batch */
  CHECK_NULL_ERR(emlx_fast_sdpa(NULL, k, v, 1.0f, NULL));
  CHECK_NULL_ERR(emlx_fast_sdpa(q, k, v, NAN, NULL));
  CHECK_NULL_ERR(emlx_fast_sdpa_masked(q, k, v, 1.0f, mbad, NULL)); /* {4, 5} vs {3, 5} */
  CHECK_NULL_ERR(emlx_fast_sdpa_masked(q, k, v, 1.0f, mint, NULL)); /* int mask */
  CHECK_NULL_ERR(emlx_fast_sdpa_masked(q, k, v, 1.0f, m5, NULL));   /* last dim 3 */
  CHECK_NULL_ERR(emlx_fast_sdpa_masked(q, k, v, 1.0f, NULL, NULL));
  CHECK_NULL_ERR(emlx_fast_sdpa_causal_key_masked(q, k, v, 1.0f, kmbad, NULL));
  CHECK_NULL_ERR(emlx_fast_sdpa(q, k, v, 1.0f, sbad)); /* 3 sinks, 4 heads */
  CHECK_NULL_ERR(emlx_fast_sdpa(q, k, v, 1.0f, sint));
  emlx_clear_error();
  emlx_array *ok = emlx_fast_sdpa(q, k, v, 1.0f, NULL);
  CHECK(ok != NULL && emlx_eval(&ok, 1) == 0);
  emlx_release(ok);
  emlx_array *all[] = {q,  k,   v,   q3,   k3h,  qh, qi,    kd,   vt,
                       kb, q64, k64, mbad, mint, m5, kmbad, sbad, sint};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    emlx_release(all[i]);
}

int main(void) {
  test_values();
  test_wrappers();
  test_errors();
  return tu_finish();
}
