/* bench_reduce.c — benchmarks of the reduce family: argsort and sort of 1M
 * f32, cumulative_sum of 16M f32, product and min over the inner and the
 * outer axis of a 4096 x 4096 f32, and the sum of 256M int32 as they are
 * and widened to int64 (a fused astype feeding the reduction): over all
 * axes, the last axis and the first axis of a 16384 x 16384; and of 256M
 * uint8 widened to int64.
 *
 * Built as emlx_bench_bench_reduce; run side by side with numpy by
 * bench/compare.py, whose CASES (the reduce family's block) mirror this
 * table: same names, inputs and seeds. One line per case; see
 * bench/README.md. */
#include "bench_harness.h"

#define M1 (INT64_C(1) << 20)
#define M16 (INT64_C(16) << 20)
#define M256 (INT64_C(256) << 20)
#define I32_BYTES 4.0
#define N4K INT64_C(4096)
#define F32_BYTES 4.0
/* an int32 [16384, 16384] (256M elements) in [-1000, 1000) */
#define SQ16K_I32(SEED)                                                                            \
  {                                                                                                \
    .dtype = EMLX_INT32, .ndim = 2, .shape = {16384, 16384}, .seed = (SEED), .dist = BENCH_INT,    \
    .lo = -1000, .hi = 1000                                                                        \
  }

static emlx_array *build_argsort(emlx_array *const *in) { return emlx_argsort(in[0], 0, NULL); }
static emlx_array *build_sort(emlx_array *const *in) { return emlx_sort(in[0], 0, NULL); }
static emlx_array *build_cumsum(emlx_array *const *in) {
  return emlx_cumulative_sum(in[0], 0, false, true);
}
static const int axis0 = 0, axis1 = 1;
static emlx_array *build_sum_i32(emlx_array *const *in) { return emlx_sum(in[0], NULL, 0, false); }
/* The int32 elements widened on the way: a fused astype feeding the sum. */
static emlx_array *build_sum_astype_i64(emlx_array *const *in) {
  emlx_array *w = emlx_astype(in[0], EMLX_INT64);
  emlx_array *s = emlx_sum(w, NULL, 0, false);
  emlx_release(w);
  return s;
}
static emlx_array *build_sum_i32_rows(emlx_array *const *in) {
  return emlx_sum(in[0], &axis1, 1, false);
}
static emlx_array *build_sum_i32_cols(emlx_array *const *in) {
  return emlx_sum(in[0], &axis0, 1, false);
}
static emlx_array *sum_astype_i64_axis(emlx_array *x, const int *axis) {
  emlx_array *w = emlx_astype(x, EMLX_INT64);
  emlx_array *s = emlx_sum(w, axis, axis ? 1 : 0, false);
  emlx_release(w);
  return s;
}
static emlx_array *build_sum_astype_i64_rows(emlx_array *const *in) {
  return sum_astype_i64_axis(in[0], &axis1);
}
static emlx_array *build_sum_astype_i64_cols(emlx_array *const *in) {
  return sum_astype_i64_axis(in[0], &axis0);
}
static emlx_array *build_sum_u8_astype_i64(emlx_array *const *in) {
  return sum_astype_i64_axis(in[0], NULL);
}
static emlx_array *build_prod_inner(emlx_array *const *in) {
  return emlx_product(in[0], &axis1, 1, false);
}
static emlx_array *build_prod_outer(emlx_array *const *in) {
  return emlx_product(in[0], &axis0, 1, false);
}
static emlx_array *build_min_inner(emlx_array *const *in) {
  return emlx_min(in[0], &axis1, 1, false);
}
static emlx_array *build_min_outer(emlx_array *const *in) {
  return emlx_min(in[0], &axis0, 1, false);
}

/* Products of 4096 factors in {-1, 0, 1} (BENCH_INT in [-1, 2)): no row
 * under- or overflows into denormals, which would time the FPU's slow path
 * instead of the reduction, and the pages differ (a constant input can be
 * deduplicated by the host into a single cached page). */
#define SQ_SYM(seed_)                                                                              \
  { .dtype = EMLX_FLOAT32, .ndim = 2, .shape = {N4K, N4K}, .seed = (seed_), .dist = BENCH_SYM }
#define SQ_TRI(seed_)                                                                              \
  {                                                                                                \
    .dtype = EMLX_FLOAT32, .ndim = 2, .shape = {N4K, N4K}, .seed = (seed_), .dist = BENCH_INT,     \
    .lo = -1, .hi = 2                                                                              \
  }

static const bench_case cases[] = {
    {
        .name = "argsort_f32_1M",
        .what = "argsort(x) (stable, uint32 indices), x f32 [1M] in [-1, 1)",
        .bytes = 2.0 * F32_BYTES * (double)M1,
        .ninputs = 1,
        .inputs =
            {{.dtype = EMLX_FLOAT32, .ndim = 1, .shape = {M1}, .seed = 201, .dist = BENCH_SYM}},
        .build = build_argsort,
    },
    {
        .name = "sort_f32_1M",
        .what = "sort(x), x f32 [1M] in [-1, 1)",
        .bytes = 2.0 * F32_BYTES * (double)M1,
        .ninputs = 1,
        .inputs =
            {{.dtype = EMLX_FLOAT32, .ndim = 1, .shape = {M1}, .seed = 202, .dist = BENCH_SYM}},
        .build = build_sort,
    },
    {
        .name = "cumsum_f32_16M",
        .what = "cumulative_sum(x, axis 0), x f32 [16M] in [-1, 1)",
        .bytes = 2.0 * F32_BYTES * (double)M16,
        .ninputs = 1,
        .inputs =
            {{.dtype = EMLX_FLOAT32, .ndim = 1, .shape = {M16}, .seed = 203, .dist = BENCH_SYM}},
        .build = build_cumsum,
    },
    {
        .name = "product_inner_f32_4096",
        .what = "product(a, axis 1), a f32 [4096, 4096] in {-1, 0, 1}",
        .bytes = F32_BYTES * (double)(N4K * N4K),
        .ninputs = 1,
        .inputs = {SQ_TRI(204)},
        .build = build_prod_inner,
    },
    {
        .name = "product_outer_f32_4096",
        .what = "product(a, axis 0), a f32 [4096, 4096] in {-1, 0, 1}",
        .bytes = F32_BYTES * (double)(N4K * N4K),
        .ninputs = 1,
        .inputs = {SQ_TRI(205)},
        .build = build_prod_outer,
    },
    {
        .name = "min_inner_f32_4096",
        .what = "min(a, axis 1), a f32 [4096, 4096] in [-1, 1)",
        .bytes = F32_BYTES * (double)(N4K * N4K),
        .ninputs = 1,
        .inputs = {SQ_SYM(206)},
        .build = build_min_inner,
    },
    {
        .name = "min_outer_f32_4096",
        .what = "min(a, axis 0), a f32 [4096, 4096] in [-1, 1)",
        .bytes = F32_BYTES * (double)(N4K * N4K),
        .ninputs = 1,
        .inputs = {SQ_SYM(207)},
        .build = build_min_outer,
    },
    {
        .name = "sum_i32_256M",
        .what = "sum(x) over all axes (an int32 result, wrapping), x int32 [256M] in [-1000, 1000)",
        .bytes = I32_BYTES * (double)M256,
        .ninputs = 1,
        .inputs = {{.dtype = EMLX_INT32,
                    .ndim = 1,
                    .shape = {M256},
                    .seed = 208,
                    .dist = BENCH_INT,
                    .lo = -1000,
                    .hi = 1000}},
        .build = build_sum_i32,
    },
    {
        .name = "sum_astype_i64_256M",
        .what = "sum(astype(x, int64)), x int32 [256M] in [-1000, 1000) (fused: no int64 copy)",
        .bytes = I32_BYTES * (double)M256,
        .ninputs = 1,
        .inputs = {{.dtype = EMLX_INT32,
                    .ndim = 1,
                    .shape = {M256},
                    .seed = 208,
                    .dist = BENCH_INT,
                    .lo = -1000,
                    .hi = 1000}},
        .build = build_sum_astype_i64,
    },
    {
        .name = "sum_i32_rows_16K",
        .what = "sum(x, axis 1) (int32, wrapping), x int32 [16384, 16384] in [-1000, 1000)",
        .bytes = I32_BYTES * (double)M256,
        .ninputs = 1,
        .inputs = {SQ16K_I32(209)},
        .build = build_sum_i32_rows,
    },
    {
        .name = "sum_astype_i64_rows_16K",
        .what = "sum(astype(x, int64), axis 1), x int32 [16384, 16384] in [-1000, 1000)",
        .bytes = I32_BYTES * (double)M256,
        .ninputs = 1,
        .inputs = {SQ16K_I32(209)},
        .build = build_sum_astype_i64_rows,
    },
    {
        .name = "sum_i32_cols_16K",
        .what = "sum(x, axis 0) (int32, wrapping), x int32 [16384, 16384] in [-1000, 1000)",
        .bytes = I32_BYTES * (double)M256,
        .ninputs = 1,
        .inputs = {SQ16K_I32(209)},
        .build = build_sum_i32_cols,
    },
    {
        .name = "sum_astype_i64_cols_16K",
        .what = "sum(astype(x, int64), axis 0), x int32 [16384, 16384] in [-1000, 1000)",
        .bytes = I32_BYTES * (double)M256,
        .ninputs = 1,
        .inputs = {SQ16K_I32(209)},
        .build = build_sum_astype_i64_cols,
    },
    {
        .name = "sum_u8_astype_i64_256M",
        .what = "sum(astype(x, int64)), x uint8 [256M] in [0, 200)",
        .bytes = (double)M256,
        .ninputs = 1,
        .inputs = {{.dtype = EMLX_UINT8,
                    .ndim = 1,
                    .shape = {M256},
                    .seed = 210,
                    .dist = BENCH_INT,
                    .lo = 0,
                    .hi = 200}},
        .build = build_sum_u8_astype_i64,
    },
};

int main(int argc, char **argv) {
  return bench_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
