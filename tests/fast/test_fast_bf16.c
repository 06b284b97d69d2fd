/* test_fast_bf16.c — the fused kernels' contiguous bfloat16 paths.
 *
 * rms_norm, layer_norm, rope and swiglu on contiguous bfloat16 rows (bf16
 * out) convert in registers (src/cpu/fast/fast_body.h: *_bf16); any other
 * layout is staged: converted to float32, the float32 loop, rounded once.
 * Both must give the same bits, so every case here runs on a contiguous
 * input and on a transposed view holding the same values, and the two
 * results are compared bit for bit (NaN included), then against a float64
 * reference. Row lengths cover the vector bodies (16 lanes on avx512, 8 on
 * avx2, 4 below) and their tails; the values include NaN, infinities,
 * subnormals and halfway cases of the final rounding, so the NaN rule of
 * the rounding and its fast path both run.
 *
 * swiglu runs with EMLX_FAST_NT_BYTES=0: its streaming-store loops (used
 * for outputs far larger than the caches) on every aligned output here.
 * swiglu's bf16 results use exp's degree-4 polynomial (fast_body.h): they
 * must stay within one rounding of the float64 value (half an ulp plus
 * 1e-5 relative) and equal its correctly rounded value in >= 99% of cases. */
#include "test_util.h"

/* Values for a {rows, n} array: uniform in [lo, hi), bf16-exact, with a
 * few specials when special is set (none in the first row). */
static double *values(tu_rng *r, int64_t rows, int64_t n, double lo, double hi, bool special) {
  double *v = malloc((size_t)(rows * n) * sizeof(double));
  for (int64_t i = 0; i < rows * n; i++)
    v[i] = tu_quant(EMLX_BFLOAT16, tu_uniform(r, lo, hi));
  if (special && rows > 1) {
    const double sp[] = {NAN, INFINITY, -INFINITY, 1e-39, -3e-40, 0.0, -0.0};
    for (size_t k = 0; k < sizeof sp / sizeof sp[0]; k++) {
      int64_t i = n + tu_randint(r, 0, (rows - 1) * n - 1);
      v[i] = tu_quant(EMLX_BFLOAT16, sp[k]);
    }
  }
  return v;
}

/* The same values as a contiguous {1, rows, n} array and as the transpose
 * of a contiguous {1, n, rows} one (rows of element stride rows). */
static void both(const double *v, int64_t rows, int64_t n, emlx_array **c, emlx_array **s) {
  int64_t sc[3] = {1, rows, n}, st[3] = {1, n, rows};
  double *t = malloc((size_t)(rows * n) * sizeof(double));
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < n; j++)
      t[j * rows + i] = v[i * n + j];
  *c = tu_make(EMLX_BFLOAT16, sc, 3, v);
  emlx_array *tt = tu_make(EMLX_BFLOAT16, st, 3, t);
  const int perm[3] = {0, 2, 1};
  *s = emlx_transpose(tt, perm, 3);
  emlx_release(tt);
  free(t);
}

/* a and b (bf16, same shape) are the same bits; 0 mismatches. */
static bool same_bits(const char *what, emlx_array *a, emlx_array *b) {
  CHECK_MSG(a && b && emlx_array_dtype(a) == EMLX_BFLOAT16 && emlx_array_dtype(b) == EMLX_BFLOAT16,
            "%s: both results are bf16 (%s)", what, emlx_last_error());
  if (!a || !b)
    return false;
  uint16_t *x = (uint16_t *)tu_read_raw(a), *y = (uint16_t *)tu_read_raw(b);
  int64_t n = emlx_size(a), bad = -1;
  if (x && y && n == emlx_size(b))
    for (int64_t i = 0; i < n && bad < 0; i++)
      if (x[i] != y[i])
        bad = i;
  bool ok = x && y && n == emlx_size(b) && bad < 0;
  CHECK_MSG(
      ok,
      "%s: contiguous and staged paths agree bit for bit (first difference at %lld: %04x vs %04x)",
      what, (long long)bad, bad >= 0 ? x[bad] : 0, bad >= 0 ? y[bad] : 0);
  free(x), free(y);
  return ok;
}

/* The first n values of got (bf16, row-major) against ref (float64, finite
 * entries only): within half an ulp plus rel of |ref|, and the correctly
 * rounded reference in all but a fraction off_frac of them. */
static void near_ref(const char *what, emlx_array *got, const double *ref, int64_t n, double rel,
                     double off_frac) {
  uint16_t *g = (uint16_t *)tu_read_raw(got);
  if (!g)
    return;
  int64_t off = 0, cnt = 0, bad = -1;
  for (int64_t i = 0; i < n; i++) {
    if (!isfinite(ref[i]))
      continue;
    cnt++;
    double v = tu_bf16_decode(g[i]), half = 0.5 * tu_ulp(EMLX_BFLOAT16, fabs(ref[i]));
    if (!(fabs(v - ref[i]) <= half + rel * fabs(ref[i]) + 1e-300) && bad < 0)
      bad = i;
    off += g[i] != tu_round_bf16(ref[i]);
  }
  CHECK_MSG(bad < 0,
            "%s: within half an ulp of the float64 value (first miss at %lld: %.9g vs %.9g)", what,
            (long long)bad, bad >= 0 ? tu_bf16_decode(g[bad]) : 0.0, bad >= 0 ? ref[bad] : 0.0);
  CHECK_MSG((double)off <= off_frac * (double)cnt,
            "%s: %lld of %lld values not the correctly rounded reference", what, (long long)off,
            (long long)cnt);
  free(g);
}

/* ---- the norms ----------------------------------------------------------------------- */
static void test_norms(void) {
  tu_rng r = {41};
  const int64_t lens[] = {1, 7, 31, 33, 4099};
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    int64_t n = lens[li], rows = 6;
    double *v = values(&r, rows, n, -3.0, 3.0, n > 1);
    double *wv = values(&r, 1, n, 0.5, 1.5, false), *bv = values(&r, 1, n, -1.0, 1.0, false);
    emlx_array *xc, *xs;
    both(v, rows, n, &xc, &xs);
    emlx_array *w = tu_make1(EMLX_BFLOAT16, n, wv), *b = tu_make1(EMLX_BFLOAT16, n, bv);
    for (int op = 0; op < 4; op++) { /* rms, rms no weight, layer, layer no bias */
      emlx_array *y[2];
      for (int k = 0; k < 2; k++) {
        emlx_array *x = k ? xs : xc;
        y[k] = op == 0   ? emlx_fast_rms_norm(x, w, 1e-5f)
               : op == 1 ? emlx_fast_rms_norm(x, NULL, 1e-5f)
               : op == 2 ? emlx_fast_layer_norm(x, w, b, 1e-5f)
                         : emlx_fast_layer_norm_no_bias(x, w, 1e-5f);
      }
      char what[80];
      snprintf(what, sizeof what, "%s n=%lld",
               op < 2    ? (op ? "rms_norm, no weight" : "rms_norm")
               : op == 2 ? "layer_norm"
                         : "layer_norm_no_bias",
               (long long)n);
      same_bits(what, y[0], y[1]);
      /* the first row holds no specials: against float64 */
      double *ref = malloc((size_t)n * sizeof(double));
      double m = 0.0, q = 0.0;
      if (op >= 2) {
        for (int64_t j = 0; j < n; j++)
          m += v[j];
        m /= (double)n;
      }
      for (int64_t j = 0; j < n; j++)
        q += (v[j] - m) * (v[j] - m);
      double rs = 1.0 / sqrt(q / (double)n + 1e-5);
      for (int64_t j = 0; j < n; j++)
        ref[j] = (v[j] - m) * rs * (op == 1 ? 1.0 : wv[j]) + (op == 2 ? bv[j] : 0.0);
      if (y[0])
        near_ref(what, y[0], ref, n, 4e-6, 0.02);
      free(ref);
      emlx_release(y[0]), emlx_release(y[1]);
    }
    emlx_release(xc), emlx_release(xs), emlx_release(w), emlx_release(b);
    free(v), free(wv), free(bv);
  }
}

/* ---- rope ---------------------------------------------------------------------------- */
static void test_rope(void) {
  tu_rng r = {42};
  /* {D, dims}: 64 pairs (vector bodies only), 37 pairs (bodies and a
   * tail), dims < D (the rest copied through float32), a short row */
  const int64_t cfg[][2] = {{128, 128}, {74, 74}, {160, 128}, {90, 74}, {10, 6}};
  for (size_t ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++)
    for (int trad = 0; trad < 2; trad++) {
      int64_t D = cfg[ci][0], dims = cfg[ci][1], T = 13;
      double *v = values(&r, T, D, -2.0, 2.0, true);
      emlx_array *xc, *xs;
      both(v, T, D, &xc, &xs); /* {1, T, D}: T on axis -2 */
      int64_t off = 100;
      emlx_array *yc = emlx_fast_rope(xc, (int)dims, trad, 10000.0f, 1.0f, off);
      emlx_array *ys = emlx_fast_rope(xs, (int)dims, trad, 10000.0f, 1.0f, off);
      char what[80];
      snprintf(what, sizeof what, "rope D=%lld dims=%lld %s", (long long)D, (long long)dims,
               trad ? "interleaved" : "split-half");
      same_bits(what, yc, ys);
      /* row 0 (t = 0: position off) against float64: theta formed in
       * float32 (emlx/fast.h), cos / sin and the rotation in double */
      double *ref = malloc((size_t)D * sizeof(double));
      int64_t half = dims / 2;
      float k = logf(10000.0f) / (float)half;
      for (int64_t i = 0; i < half; i++) {
        float th = (float)off * expf(-(float)i * k);
        double c = cos((double)th), s = sin((double)th);
        int64_t a = trad ? 2 * i : i, b = trad ? 2 * i + 1 : i + half;
        ref[a] = v[a] * c - v[b] * s;
        ref[b] = v[a] * s + v[b] * c;
      }
      for (int64_t d = dims; d < D; d++)
        ref[d] = v[d];
      if (yc)
        near_ref(what, yc, ref, D, 1e-6, 0.02);
      free(ref);
      emlx_release(xc), emlx_release(xs), emlx_release(yc), emlx_release(ys);
      free(v);
    }
}

/* rope_with_freqs: a frequency that is a NaN with low payload bits makes
 * NaN angles whose float32 bits the plain rounding would carry into the
 * sign (0x7FFFFFFF + 0x7FFF -> 0x8000...: -0); NaN must stay NaN, and the
 * contiguous path must match the staged one. */
static void test_rope_nan_freq(void) {
  tu_rng r = {44};
  for (int trad = 0; trad < 2; trad++) {
    int64_t D = 128, T = 3, half = 64;
    double *v = values(&r, T, D, -2.0, 2.0, false);
    emlx_array *xc, *xs;
    both(v, T, D, &xc, &xs);
    float fr[64];
    for (int i = 0; i < half; i++)
      fr[i] = (float)pow(10000.0, 2.0 * i / 128.0);
    fr[5] = tu_bits_f32(0x7FFFFFFFu);
    fr[40] = tu_bits_f32(0xFFC0FFFFu);
    int64_t fs[1] = {64}, offs[1] = {7}, os[1] = {1};
    emlx_array *fa = emlx_from_blob(fr, EMLX_FLOAT32, fs, 1, EMLX_CPU);
    emlx_array *oa = emlx_from_blob(offs, EMLX_INT64, os, 1, EMLX_CPU);
    emlx_array *yc = emlx_fast_rope_with_freqs(xc, 128, trad, 1.0f, oa, fa);
    emlx_array *ys = emlx_fast_rope_with_freqs(xs, 128, trad, 1.0f, oa, fa);
    same_bits(trad ? "rope_with_freqs, NaN frequency, interleaved"
                   : "rope_with_freqs, NaN frequency, split-half",
              yc, ys);
    uint16_t *g = yc ? (uint16_t *)tu_read_raw(yc) : NULL;
    int64_t nan = 0;
    for (int64_t t = 0; g && t < T; t++)
      for (int k = 0; k < 2; k++) { /* pairs 5 and 40: both elements NaN */
        int64_t i = k ? 40 : 5, a = trad ? 2 * i : i, b = trad ? 2 * i + 1 : i + half;
        nan += tu_bf16_is_nan(g[t * D + a]) && tu_bf16_is_nan(g[t * D + b]);
      }
    CHECK_MSG(g && nan == 2 * T, "rope_with_freqs: NaN frequencies give NaN pairs (%lld of %lld)",
              (long long)nan, (long long)(2 * T));
    free(g), free(v);
    emlx_release(xc), emlx_release(xs), emlx_release(fa), emlx_release(oa);
    emlx_release(yc), emlx_release(ys);
  }
}

/* ---- swiglu -------------------------------------------------------------------------- */
static void test_swiglu(void) {
  tu_rng r = {43};
  const int64_t lens[] = {1, 15, 31, 32, 33, 4096 + 45};
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    int64_t n = lens[li], rows = 5;
    double *gv = values(&r, rows, n, -12.0, 12.0, n > 1),
           *uv = values(&r, rows, n, -3.0, 3.0, n > 1);
    emlx_array *gc, *gs, *uc, *us;
    both(gv, rows, n, &gc, &gs);
    both(uv, rows, n, &uc, &us);
    emlx_array *yc = emlx_fast_swiglu(gc, uc), *ys = emlx_fast_swiglu(gs, us);
    char what[64];
    snprintf(what, sizeof what, "swiglu n=%lld", (long long)n);
    same_bits(what, yc, ys);
    double *ref = malloc((size_t)(rows * n) * sizeof(double));
    for (int64_t i = 0; i < rows * n; i++)
      ref[i] = gv[i] * uv[i] / (1.0 + exp(-gv[i]));
    if (yc)
      near_ref(what, yc, ref, rows * n, 1e-5, 0.01);
    free(ref);
    emlx_release(gc), emlx_release(gs), emlx_release(uc), emlx_release(us);
    emlx_release(yc), emlx_release(ys);
    free(gv), free(uv);
  }
  /* the whole range of the gate, where exp over- and underflows */
  {
    int64_t n = 2000;
    double *gv = malloc((size_t)n * sizeof(double)), *uv = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
      gv[i] = tu_quant(EMLX_BFLOAT16, -100.0 + 200.0 * (double)i / (double)n);
      uv[i] = tu_quant(EMLX_BFLOAT16, 1.0 + (double)(i % 7) / 8.0);
    }
    emlx_array *g = tu_make1(EMLX_BFLOAT16, n, gv), *u = tu_make1(EMLX_BFLOAT16, n, uv);
    emlx_array *y = emlx_fast_swiglu(g, u);
    /* exp(-g) is +inf for g < -88.38 (fast_body.h), and bfloat16 gates
     * step by 0.5 there, so every g < -88.3 here gives -0 (the float64
     * value is below 1e-36); elsewhere the rule */
    double *ref = malloc((size_t)n * sizeof(double));
    int64_t nz = 0, zeros = 0;
    for (int64_t i = 0; i < n; i++)
      ref[i] = gv[i] < -88.3 ? (nz++, (double)NAN) : gv[i] * uv[i] / (1.0 + exp(-gv[i]));
    uint16_t *raw = y ? (uint16_t *)tu_read_raw(y) : NULL;
    for (int64_t i = 0; raw && i < n; i++)
      zeros += gv[i] < -88.3 && raw[i] == 0x8000;
    CHECK_MSG(raw && zeros == nz && nz > 0, "swiglu: gate < -88.3 gives -0 (%lld of %lld)",
              (long long)zeros, (long long)nz);
    free(raw);
    if (y)
      near_ref("swiglu, gate over [-100, 100]", y, ref, n, 1e-5, 0.01);
    else
      CHECK_MSG(false, "swiglu over [-100, 100] evaluates (%s)", emlx_last_error());
    free(ref), free(gv), free(uv);
    emlx_release(g), emlx_release(u), emlx_release(y);
  }
}

/* swiglu's streaming stores (outputs >= EMLX_FAST_NT_BYTES, set to 0 in
 * main: every aligned output here) in float32, against float64: exp's
 * 2 ulp, the product and the division */
static void test_swiglu_f32_stream(void) {
  tu_rng r = {45};
  const int64_t lens[] = {15, 16, 17, 4096 * 2 + 9};
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    int64_t n = lens[li], shape[2] = {3, n};
    double *gv = malloc((size_t)(3 * n) * sizeof(double)),
           *uv = malloc((size_t)(3 * n) * sizeof(double));
    for (int64_t i = 0; i < 3 * n; i++) {
      gv[i] = tu_quant(EMLX_FLOAT32, tu_uniform(&r, -12.0, 12.0));
      uv[i] = tu_quant(EMLX_FLOAT32, tu_uniform(&r, -3.0, 3.0));
    }
    emlx_array *g = tu_make(EMLX_FLOAT32, shape, 2, gv), *u = tu_make(EMLX_FLOAT32, shape, 2, uv);
    emlx_array *y = emlx_fast_swiglu(g, u);
    double *got = y ? tu_read(y) : NULL;
    int64_t bad = -1;
    for (int64_t i = 0; got && i < 3 * n && bad < 0; i++) {
      double ref = gv[i] * uv[i] / (1.0 + exp(-gv[i]));
      if (!(fabs(got[i] - ref) <= 8.0 * 0x1p-24 * fabs(ref) + 1e-37))
        bad = i;
    }
    CHECK_MSG(got && bad < 0,
              "swiglu f32, streaming stores, n=%lld: within 8 ulp (first miss at %lld)",
              (long long)n, (long long)bad);
    free(got), free(gv), free(uv);
    emlx_release(g), emlx_release(u), emlx_release(y);
  }
}

/* float32 swiglu over the whole range of the gate, where exp's argument is
 * clamped (fast_body.h): below -87.3 (1 + exp is 1), above 88.38 (exp is
 * +inf, the result -0 for finite g), and the special values: g = -inf
 * gives NaN (-inf * sigmoid(-inf) = -inf * 0), g = +inf gives +inf * u,
 * NaN stays NaN. A gate above 89 or below -87.3 taken unclamped would
 * give garbage exponents. */
static void test_swiglu_f32_range(void) {
  const int64_t n = 4001 + 6;
  double *gv = malloc((size_t)n * sizeof(double)), *uv = malloc((size_t)n * sizeof(double));
  for (int64_t i = 0; i < n - 6; i++) {
    gv[i] = tu_quant(EMLX_FLOAT32, -200.0 + 400.0 * (double)i / (double)(n - 7));
    uv[i] = tu_quant(EMLX_FLOAT32, 1.0 + (double)(i % 7) / 8.0);
  }
  const double sg[6] = {-HUGE_VAL, HUGE_VAL, HUGE_VAL, (double)NAN, -88.35, -88.4};
  const double su[6] = {2.0, 1.5, -0.5, 1.0, 1.0, 1.0};
  for (int k = 0; k < 6; k++)
    gv[n - 6 + k] = tu_quant(EMLX_FLOAT32, sg[k]), uv[n - 6 + k] = su[k];
  emlx_array *g = tu_make1(EMLX_FLOAT32, n, gv), *u = tu_make1(EMLX_FLOAT32, n, uv);
  emlx_array *y = emlx_fast_swiglu(g, u);
  double *got = y ? tu_read(y) : NULL;
  int64_t bad = -1;
  for (int64_t i = 0; got && i < n && bad < 0; i++) {
    if (i == n - 6 || i == n - 3) /* -inf, NaN: below */
      continue;
    double ref = i == n - 5 || i == n - 4 ? HUGE_VAL * uv[i] : gv[i] * uv[i] / (1.0 + exp(-gv[i]));
    if (!(fabs(got[i] - ref) <= 8.0 * 0x1p-24 * fabs(ref) + 1e-36) &&
        !(isinf(ref) && got[i] == ref))
      bad = i;
  }
  CHECK_MSG(got && bad < 0, "swiglu f32, gate over [-200, 200]: within 8 ulp (first miss at %lld)",
            (long long)bad);
  CHECK_MSG(got && isnan(got[n - 6]) && isnan(got[n - 3]),
            "swiglu f32: g = -inf and g = NaN give NaN");
  free(got), free(gv), free(uv);
  emlx_release(g), emlx_release(u), emlx_release(y);
}

int main(void) {
  /* swiglu: the streaming-store loops for every output (the bf16 cases
   * then hold them against the staged path, which never streams) */
  setenv("EMLX_FAST_NT_BYTES", "0", 1);
  test_norms();
  test_rope();
  test_rope_nan_freq();
  test_swiglu();
  test_swiglu_f32_stream();
  test_swiglu_f32_range();
  return tu_finish();
}
