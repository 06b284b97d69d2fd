/* bench_model_ops.c — benchmarks of MLX's everyday model ops: softmax and
 * logsumexp over the rows of a 4096 x 4096 f32, and the layer-norm-shaped
 * statistics of a [16384, 768] f32 (mean and var over the last axis, and a
 * whole layer norm (x - mean) * rsqrt(var + 1e-5) built from them).
 *
 * Built as emlx_bench_bench_model_ops; run side by side with numpy by
 * bench/compare.py (its "model ops" block mirrors this table: same names,
 * inputs and seeds). One line per case; see bench/README.md. */
#include "bench_harness.h"

#define N4K INT64_C(4096)
#define LN_ROWS INT64_C(16384)
#define LN_DIM INT64_C(768)
#define F32_BYTES 4.0

static const int last = -1;

static emlx_array *build_softmax(emlx_array *const *in) {
  return emlx_softmax(in[0], &last, 1, false);
}
static emlx_array *build_logsumexp(emlx_array *const *in) {
  return emlx_logsumexp(in[0], &last, 1, false);
}
static emlx_array *build_mean(emlx_array *const *in) { return emlx_mean(in[0], &last, 1, false); }
static emlx_array *build_var(emlx_array *const *in) { return emlx_var(in[0], &last, 1, false, 0); }
static const int first = 0;
static emlx_array *build_mean_outer(emlx_array *const *in) {
  return emlx_mean(in[0], &first, 1, false);
}
/* (x - mean) * rsqrt(var + eps): two fused statistics, one fused pass */
static emlx_array *build_layer_norm(emlx_array *const *in) {
  emlx_array *m = emlx_mean(in[0], &last, 1, true), *v = emlx_var(in[0], &last, 1, true, 0);
  emlx_array *eps = emlx_scalar_tensor(1e-5, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *ve = emlx_add(v, eps), *r = emlx_rsqrt(ve), *d = emlx_subtract(in[0], m);
  emlx_array *out = emlx_multiply(d, r);
  emlx_release(m);
  emlx_release(v);
  emlx_release(eps);
  emlx_release(ve);
  emlx_release(r);
  emlx_release(d);
  return out;
}

#define SQ(seed_)                                                                                  \
  { .dtype = EMLX_FLOAT32, .ndim = 2, .shape = {N4K, N4K}, .seed = (seed_), .dist = BENCH_SYM }
#define LN(seed_)                                                                                  \
  {                                                                                                \
    .dtype = EMLX_FLOAT32, .ndim = 2, .shape = {LN_ROWS, LN_DIM}, .seed = (seed_),                 \
    .dist = BENCH_SYM                                                                              \
  }

static const bench_case cases[] = {
    {
        .name = "softmax_f32_4096",
        .what = "softmax(x, axis -1), x f32 [4096, 4096] in [-1, 1)",
        .bytes = 2.0 * F32_BYTES * (double)(N4K * N4K),
        .ninputs = 1,
        .inputs = {SQ(601)},
        .build = build_softmax,
    },
    {
        .name = "logsumexp_f32_4096",
        .what = "logsumexp(x, axis -1), x f32 [4096, 4096] in [-1, 1)",
        .bytes = F32_BYTES * (double)(N4K * N4K),
        .ninputs = 1,
        .inputs = {SQ(602)},
        .build = build_logsumexp,
    },
    {
        .name = "mean_ln_f32_16384x768",
        .what = "mean(x, axis -1), x f32 [16384, 768] in [-1, 1)",
        .bytes = F32_BYTES * (double)(LN_ROWS * LN_DIM),
        .ninputs = 1,
        .inputs = {LN(603)},
        .build = build_mean,
    },
    {
        .name = "mean_outer_f32_16384x768",
        .what = "mean(x, axis 0), x f32 [16384, 768] in [-1, 1) (strided rows)",
        .bytes = F32_BYTES * (double)(LN_ROWS * LN_DIM),
        .ninputs = 1,
        .inputs = {LN(606)},
        .build = build_mean_outer,
    },
    {
        .name = "var_ln_f32_16384x768",
        .what = "var(x, axis -1), x f32 [16384, 768] in [-1, 1)",
        .bytes = F32_BYTES * (double)(LN_ROWS * LN_DIM),
        .ninputs = 1,
        .inputs = {LN(604)},
        .build = build_var,
    },
    {
        .name = "layer_norm_f32_16384x768",
        .what = "(x - mean(x)) * rsqrt(var(x) + 1e-5) over axis -1, x f32 [16384, 768]",
        .bytes = 2.0 * F32_BYTES * (double)(LN_ROWS * LN_DIM),
        .ninputs = 1,
        .inputs = {LN(605)},
        .build = build_layer_norm,
    },
};

int main(int argc, char **argv) {
  return bench_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
