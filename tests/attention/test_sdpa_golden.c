/* test_sdpa_golden.c — fast attention against outputs of MLX's
 * mx.fast.scaled_dot_product_attention (golden_sdpa.h, made by
 * gen_golden.py from the same golden_value inputs): no mask, causal with
 * T_q < T_kv and T_q > T_kv (MLX's mean-of-V rows), a bool mask with a
 * fully masked row, an additive mask with a -inf entry, sinks, a prefill,
 * f16 and bf16. */
#include "att_ref.h"
#include "golden_sdpa.h"

static emlx_dtype dtype_of(const char *s) {
  return !strcmp(s, "float16") ? EMLX_FLOAT16 : !strcmp(s, "bfloat16") ? EMLX_BFLOAT16 : EMLX_FLOAT32;
}

static emlx_array *gen(uint64_t seed, emlx_dtype dt, const int64_t *shape, int nd) {
  int64_t n = tu_numel(shape, nd);
  double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  golden_value(seed, n, v);
  emlx_array *a = tu_make(dt, shape, nd, v);
  free(v);
  return a;
}

int main(void) {
  for (size_t c = 0; c < sizeof golden_cases / sizeof golden_cases[0]; c++) {
    const golden_case *g = &golden_cases[c];
    emlx_dtype dt = dtype_of(g->dtype);
    int64_t qs[4] = {g->B, g->Nq, g->Tq, g->D}, ks[4] = {g->B, g->Nkv, g->Tkv, g->D};
    emlx_array *q = gen(1, dt, qs, 4), *k = gen(2, dt, ks, 4), *v = gen(3, dt, ks, 4);
    emlx_array *mask = NULL, *sinks = NULL;
    if (g->mask == 2) {
      int64_t ms[2] = {g->Tq, g->Tkv};
      int64_t n = g->Tq * g->Tkv;
      double *m = malloc((size_t)n * sizeof(double));
      golden_value(4, n, m);
      for (int64_t i = 0; i < n; i++)
        m[i] = m[i] > -0.8;
      for (int64_t j = 0; j < g->Tkv; j++)
        m[g->Tkv + j] = 0, m[2 * g->Tkv + j] = 1;
      mask = tu_make(EMLX_BOOL, ms, 2, m);
      free(m);
    } else if (g->mask == 3) {
      int64_t ms[4] = {g->B, 1, g->Tq, g->Tkv};
      int64_t n = g->B * g->Tq * g->Tkv;
      double *m = malloc((size_t)n * sizeof(double));
      golden_value(5, n, m);
      m[1 * g->Tkv + 3] = -HUGE_VAL;
      mask = tu_make(dt, ms, 4, m);
      free(m);
    }
    if (g->sinks) {
      int64_t ss = g->Nq;
      sinks = gen(6, dt, &ss, 1);
    }
    emlx_sdpa_options o = {.scale = g->scale, .causal = g->mask == 1, .mask = mask, .sinks = sinks};
    emlx_array *out = emlx_fast_scaled_dot_product_attention(q, k, v, &o);
    int64_t n = g->B * g->Nq * g->Tq * g->D;
    double *got = tu_read(out), *want = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++)
      want[i] = g->out[i];
    /* MLX rounds q * scale and the scores to the dtype: twice our tolerance */
    double tol = 2 * att_tol(dt), worst = 0;
    for (int64_t i = 0; got && i < n; i++) {
      double e = fabs(got[i] - want[i]) / (1 + fabs(want[i]));
      worst = isfinite(got[i]) && e <= worst ? worst : (isfinite(got[i]) ? e : HUGE_VAL);
    }
    CHECK_MSG(got && worst <= tol, "%s: worst error %.3g vs MLX, tol %.3g", g->name, worst, tol);
    free(got), free(want);
    emlx_release(out), emlx_release(q), emlx_release(k), emlx_release(v), emlx_release(mask),
        emlx_release(sinks);
  }
  return tu_finish();
}
