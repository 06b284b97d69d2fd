/* test_fast_golden.c — the fused kernels of emlx/fast.h against MLX's own
 * mx.fast outputs (fast_golden.h, made by gen_fast_golden.py): rms_norm,
 * layer_norm with and without bias, rope with a scalar offset (T on axis
 * -2, ranks 3 to 5, dims < D), rope_ids / rope_with_freqs / rope_positions
 * on {B, T, H, D} (MLX run on the transposed layout, or token by token),
 * and swiglu, in float32, float16 and bfloat16.
 *
 * Tolerance: |got - mlx| <= k * eps(dtype) * (1 + |mlx|), k = 4 for f16 and
 * bf16, 16 for f32. MLX's CPU kernels round some intermediate results to the
 * dtype (the normalised row before the weight, each product of the
 * rotation); ours round once, so the two differ by a few units in the last
 * place of bf16 and f16; in f32 the sums are added in another order. */
#include "test_util.h"

enum { FG_RMS, FG_LN, FG_LN_NOBIAS, FG_ROPE, FG_ROPE_IDS, FG_ROPE_POS, FG_ROPE_FREQS, FG_SWIGLU };

typedef struct fg_case {
  const char *name;
  int op;
  emlx_dtype dtype;
  int ndim;
  int64_t shape[5];
  int dims, traditional;
  float base, scale, eps;
  int64_t offset;
  int64_t nints;
  const int64_t *ints;
  const float *x, *w, *b, *u, *freqs, *out;
} fg_case;

#include "fast_golden.h"

static emlx_array *from_f32(const float *v, emlx_dtype d, const int64_t *shape, int ndim) {
  emlx_array *f = emlx_from_blob(v, EMLX_FLOAT32, shape, ndim, EMLX_CPU);
  emlx_array *r = f ? emlx_astype(f, d) : NULL; /* exact: the values are d's */
  emlx_release(f);
  return r;
}

static double eps_of(emlx_dtype d) {
  return d == EMLX_FLOAT32 ? 1.0 / 8388608.0 : d == EMLX_FLOAT16 ? 1.0 / 1024.0 : 1.0 / 128.0;
}

static void run_case(const fg_case *c) {
  int64_t n = tu_numel(c->shape, c->ndim), D = c->shape[c->ndim - 1];
  int64_t vshape[1] = {D};
  emlx_array *x = from_f32(c->x, c->dtype, c->shape, c->ndim);
  emlx_array *w = c->w ? from_f32(c->w, c->dtype, vshape, 1) : NULL;
  emlx_array *b = c->b ? from_f32(c->b, c->dtype, vshape, 1) : NULL;
  emlx_array *u = c->u ? from_f32(c->u, c->dtype, c->shape, c->ndim) : NULL;
  int64_t fshape[1] = {c->dims / 2};
  emlx_array *fr = c->freqs ? emlx_from_blob(c->freqs, EMLX_FLOAT32, fshape, 1, EMLX_CPU) : NULL;
  emlx_array *ints = NULL;
  if (c->ints) {
    int64_t is[2] = {c->shape[0], c->nints / c->shape[0]};
    ints = emlx_from_blob(c->ints, EMLX_INT64, is, c->op == FG_ROPE_POS ? 2 : 1, EMLX_CPU);
  }
  emlx_array *y = NULL;
  switch (c->op) {
  case FG_RMS: y = emlx_fast_rms_norm(x, w, c->eps); break;
  case FG_LN: y = emlx_fast_layer_norm(x, w, b, c->eps); break;
  case FG_LN_NOBIAS: y = emlx_fast_layer_norm_no_bias(x, w, c->eps); break;
  case FG_ROPE:
    y = emlx_fast_rope(x, c->dims, c->traditional, c->base, c->scale, c->offset);
    break;
  case FG_ROPE_IDS:
    y = emlx_fast_rope_ids(x, c->dims, c->traditional, c->base, c->scale, ints);
    break;
  case FG_ROPE_POS:
    y = emlx_fast_rope_positions(x, c->dims, c->traditional, c->base, c->scale, ints);
    break;
  case FG_ROPE_FREQS:
    y = emlx_fast_rope_with_freqs(x, c->dims, c->traditional, c->scale, ints, fr);
    break;
  default: y = emlx_fast_swiglu(x, u); break;
  }
  CHECK_MSG(y != NULL, "%s: built (%s)", c->name, emlx_last_error());
  double *got = y ? tu_read(y) : NULL;
  if (got) {
    CHECK_MSG(emlx_array_dtype(y) == c->dtype, "%s: dtype", c->name);
    double tol_k = (c->dtype == EMLX_FLOAT32 ? 16.0 : 4.0) * eps_of(c->dtype), worst = 0.0;
    int64_t bad = -1;
    for (int64_t i = 0; i < n; i++) {
      double ref = (double)c->out[i], err = fabs(got[i] - ref) / (1.0 + fabs(ref));
      if (!(err <= tol_k) && bad < 0)
        bad = i;
      if (err > worst || err != err)
        worst = err;
    }
    CHECK_MSG(bad < 0, "%s: matches MLX within %g (worst %g; first bad [%lld]: %g vs %g)", c->name,
              tol_k, worst, (long long)bad, bad >= 0 ? got[bad] : 0.0,
              bad >= 0 ? (double)c->out[bad] : 0.0);
  }
  free(got);
  emlx_release(y);
  emlx_release(x);
  emlx_release(w);
  emlx_release(b);
  emlx_release(u);
  emlx_release(fr);
  emlx_release(ints);
}

int main(void) {
  for (size_t i = 0; i < sizeof fg_cases / sizeof fg_cases[0]; i++)
    run_case(&fg_cases[i]);
  return tu_finish();
}
