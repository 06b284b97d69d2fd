/* bench_math.c — benchmarks of the math family (include/emlx/elementwise.h):
 * our own f32 tanh, sin and cos (the last two libm's double rounded once,
 * math_cr_body.h) and SLEEF's erf on 16M elements, and a broadcast add of
 * a row over a 4096 x 4096 matrix (the core's add, with the broadcast
 * stride-0 operand this family's binary ops share).
 *
 * Built as emlx_bench_bench_math; run side by side with numpy (scipy for
 * erf, which numpy lacks) by bench/compare.py, whose CASES dict mirrors
 * this table (same names, inputs, seeds). One line per case on stdout; see
 * bench/README.md. */
#include "bench_harness.h"

#define M16 (INT64_C(16) << 20)
#define F32_BYTES 4.0

#define F32_1D(n, seed_, dist_)                                                                    \
  { .dtype = EMLX_FLOAT32, .ndim = 1, .shape = {(n)}, .seed = (seed_), .dist = (dist_) }

static emlx_array *build_tanh(emlx_array *const *in) { return emlx_tanh(in[0]); }
static emlx_array *build_sin(emlx_array *const *in) { return emlx_sin(in[0]); }
static emlx_array *build_cos(emlx_array *const *in) { return emlx_cos(in[0]); }
static emlx_array *build_erf(emlx_array *const *in) { return emlx_erf(in[0]); }
static emlx_array *build_add(emlx_array *const *in) { return emlx_add(in[0], in[1]); }

static const bench_case cases[] = {
    {
        .name = "tanh_f32_16M",
        .what = "tanh(x), x f32 [16M] in [-1, 1)",
        .bytes = 2.0 * F32_BYTES * (double)M16,
        .ninputs = 1,
        .inputs = {F32_1D(M16, 301, BENCH_SYM)},
        .build = build_tanh,
    },
    {
        .name = "sin_f32_16M",
        .what = "sin(x), x f32 [16M] in [-1, 1)",
        .bytes = 2.0 * F32_BYTES * (double)M16,
        .ninputs = 1,
        .inputs = {F32_1D(M16, 305, BENCH_SYM)},
        .build = build_sin,
    },
    {
        .name = "cos_f32_16M",
        .what = "cos(x), x f32 [16M] in [-1, 1)",
        .bytes = 2.0 * F32_BYTES * (double)M16,
        .ninputs = 1,
        .inputs = {F32_1D(M16, 306, BENCH_SYM)},
        .build = build_cos,
    },
    {
        .name = "erf_f32_16M",
        .what = "erf(x), x f32 [16M] in [-1, 1)",
        .bytes = 2.0 * F32_BYTES * (double)M16,
        .ninputs = 1,
        .inputs = {F32_1D(M16, 302, BENCH_SYM)},
        .build = build_erf,
    },
    {
        .name = "add_bcast_f32_4096",
        .what = "a + b, a f32 [4096, 4096], b f32 [4096] broadcast over the rows",
        .bytes = F32_BYTES * (2.0 * 4096 * 4096 + 4096),
        .ninputs = 2,
        .inputs = {{.dtype = EMLX_FLOAT32,
                    .ndim = 2,
                    .shape = {4096, 4096},
                    .seed = 303,
                    .dist = BENCH_SYM},
                   F32_1D(4096, 304, BENCH_SYM)},
        .build = build_add,
    },
};

int main(int argc, char **argv) {
  return bench_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
