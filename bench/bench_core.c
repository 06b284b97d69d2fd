/* bench_core.c — benchmarks of the core elementwise ops and reductions.
 *
 * Built as emlx_bench_bench_core; run side by side with numpy by
 * bench/compare.py, whose CASES dict mirrors this table (same names, inputs,
 * seeds). To add a case: write a build function, append a row here and an
 * entry there. One line per case on stdout; see bench/README.md. */
#include "bench_harness.h"

#define M16 (INT64_C(16) << 20)
#define M64 (INT64_C(64) << 20)
#define F32_BYTES 4.0

/* A 1-d f32 input of n elements. */
#define F32_1D(n, seed_, dist_)                                                                    \
  { .dtype = EMLX_FLOAT32, .ndim = 1, .shape = {(n)}, .seed = (seed_), .dist = (dist_) }

static emlx_array *build_add(emlx_array *const *in) { return emlx_add(in[0], in[1]); }

/* exp(x) * 2 + 1, the intermediates released before eval as a user's
 * expression would leave them. */
static emlx_array *build_exp2p1(emlx_array *const *in) {
  emlx_array *e = emlx_exp(in[0]);
  emlx_array *two = emlx_scalar_tensor(2.0, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *m = e && two ? emlx_multiply(e, two) : NULL;
  emlx_array *one = emlx_scalar_tensor(1.0, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *r = m && one ? emlx_add(m, one) : NULL;
  emlx_release(e);
  emlx_release(two);
  emlx_release(m);
  emlx_release(one);
  return r;
}

static emlx_array *build_sum_all(emlx_array *const *in) { return emlx_sum(in[0], NULL, 0, false); }

static emlx_array *build_exp(emlx_array *const *in) { return emlx_exp(in[0]); }

static emlx_array *build_sum_inner(emlx_array *const *in) {
  const int axis = 1;
  return emlx_sum(in[0], &axis, 1, false);
}

static emlx_array *build_sum_outer(emlx_array *const *in) {
  const int axis = 0;
  return emlx_sum(in[0], &axis, 1, false);
}

#define F32_4096SQ(seed_)                                                                          \
  { .dtype = EMLX_FLOAT32, .ndim = 2, .shape = {4096, 4096}, .seed = (seed_), .dist = BENCH_U01 }

static const bench_case cases[] = {
    {
        .name = "add_f32_16M",
        .what = "a + b, a and b f32 [16M] in [-1, 1)",
        .bytes = 3.0 * F32_BYTES * (double)M16,
        .ninputs = 2,
        .inputs = {F32_1D(M16, 1, BENCH_SYM), F32_1D(M16, 2, BENCH_SYM)},
        .build = build_add,
    },
    {
        .name = "exp2p1_f32_16M",
        .what = "exp(x) * 2 + 1, x f32 [16M] in [-1, 1)",
        .bytes = 2.0 * F32_BYTES * (double)M16,
        .ninputs = 1,
        .inputs = {F32_1D(M16, 3, BENCH_SYM)},
        .build = build_exp2p1,
    },
    {
        .name = "sum_f32_64M",
        .what = "sum(a) over all axes, a f32 [64M] in [0, 1)",
        .bytes = F32_BYTES * (double)M64,
        .ninputs = 1,
        .inputs = {F32_1D(M64, 4, BENCH_U01)},
        .build = build_sum_all,
    },
    {
        .name = "exp_f32_16M",
        .what = "exp(x), x f32 [16M] in [-1, 1)",
        .bytes = 2.0 * F32_BYTES * (double)M16,
        .ninputs = 1,
        .inputs = {F32_1D(M16, 5, BENCH_SYM)},
        .build = build_exp,
    },
    {
        .name = "sum_inner_f32_4096",
        .what = "sum(a, axis=1), a f32 [4096, 4096] in [0, 1)",
        .bytes = F32_BYTES * 4096.0 * 4096.0,
        .ninputs = 1,
        .inputs = {F32_4096SQ(6)},
        .build = build_sum_inner,
    },
    {
        .name = "sum_outer_f32_4096",
        .what = "sum(a, axis=0), a f32 [4096, 4096] in [0, 1)",
        .bytes = F32_BYTES * 4096.0 * 4096.0,
        .ninputs = 1,
        .inputs = {F32_4096SQ(7)},
        .build = build_sum_outer,
    },
};

int main(int argc, char **argv) {
  return bench_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
