/* bench_indexing.c — benchmarks of the indexing family: take (1M random
 * indices from 1M f32), concatenate (8 x 2M f32), pad (4096 x 4096 f32 by 1
 * on each side), and a scatter_add and a gather-style take of rows.
 *
 * Built as emlx_bench_bench_indexing; run side by side with numpy by
 * bench/compare.py, whose CASES dict mirrors this table (same names, inputs,
 * seeds). One line per case on stdout; see bench/README.md. */
#include "bench_harness.h"

#define M1 (INT64_C(1) << 20)
#define M2 (INT64_C(2) << 20)
#define F32_BYTES 4.0

#define F32_1D(n, seed_)                                                                           \
  { .dtype = EMLX_FLOAT32, .ndim = 1, .shape = {(n)}, .seed = (seed_), .dist = BENCH_SYM }
#define INDEX_1D(dt, n, seed_, hi_)                                                                \
  {                                                                                                \
    .dtype = (dt), .ndim = 1, .shape = {(n)}, .seed = (seed_), .dist = BENCH_INT, .lo = 0,         \
    .hi = (hi_)                                                                                    \
  }

static emlx_array *build_take(emlx_array *const *in) { return emlx_take(in[0], in[1], 0, NULL); }

static emlx_array *build_take_rows(emlx_array *const *in) {
  return emlx_take(in[0], in[1], 0, NULL);
}

static emlx_array *build_concat8(emlx_array *const *in) { return emlx_concatenate(in, 8, 0); }

static emlx_array *build_pad1(emlx_array *const *in) {
  int64_t one[2] = {1, 1};
  return emlx_pad(in[0], one, one, NULL, 2, 0.0);
}

static emlx_array *build_scatter_add(emlx_array *const *in) {
  int64_t shape[2] = {emlx_size(in[2]), 1};
  emlx_array *u = emlx_reshape(in[2], shape, 2);
  int axis = 0;
  emlx_array *r = u ? emlx_scatter_add(in[0], &in[1], 1, u, &axis, NULL) : NULL;
  emlx_release(u);
  return r;
}

static const bench_case cases[] = {
    {
        .name = "take_f32_1M",
        .what = "take(a, idx), a f32 [1M], idx int64 [1M] uniform in [0, 1M)",
        .bytes = (F32_BYTES + 8.0 + F32_BYTES) * (double)M1,
        .ninputs = 2,
        .inputs = {F32_1D(M1, 101), INDEX_1D(EMLX_INT64, M1, 102, M1)},
        .build = build_take,
    },
    {
        .name = "take_f32_1M_i32",
        .what = "take(a, idx), a f32 [1M], idx int32 [1M] uniform in [0, 1M)",
        .bytes = (F32_BYTES + 4.0 + F32_BYTES) * (double)M1,
        .ninputs = 2,
        .inputs = {F32_1D(M1, 103), INDEX_1D(EMLX_INT32, M1, 104, M1)},
        .build = build_take,
    },
    {
        .name = "take_rows_f32",
        .what = "take(a, idx, axis 0), a f32 [32768, 256], idx int64 [32768] in [0, 32768)",
        .bytes = 2.0 * F32_BYTES * 32768.0 * 256.0,
        .ninputs = 2,
        .inputs = {{.dtype = EMLX_FLOAT32,
                    .ndim = 2,
                    .shape = {32768, 256},
                    .seed = 105,
                    .dist = BENCH_SYM},
                   INDEX_1D(EMLX_INT64, 32768, 106, 32768)},
        .build = build_take_rows,
    },
    {
        .name = "concat_f32_8x2M",
        .what = "concatenate of 8 f32 [2M] arrays along axis 0",
        .bytes = 2.0 * 8.0 * F32_BYTES * (double)M2,
        .ninputs = 8,
        .inputs = {F32_1D(M2, 111), F32_1D(M2, 112), F32_1D(M2, 113), F32_1D(M2, 114),
                   F32_1D(M2, 115), F32_1D(M2, 116), F32_1D(M2, 117), F32_1D(M2, 118)},
        .build = build_concat8,
    },
    {
        .name = "pad_f32_4096",
        .what = "pad(a, 1 on each side of both axes, 0), a f32 [4096, 4096]",
        .bytes = F32_BYTES * (4096.0 * 4096.0 + 4098.0 * 4098.0),
        .ninputs = 1,
        .inputs = {{.dtype = EMLX_FLOAT32,
                    .ndim = 2,
                    .shape = {4096, 4096},
                    .seed = 121,
                    .dist = BENCH_SYM}},
        .build = build_pad1,
    },
    {
        .name = "scatter_add_f32_1M",
        .what = "scatter_add(a, idx, u), a f32 [64K], idx int32 [1M] in [0, 64K), u f32 [1M]",
        .bytes = (F32_BYTES + 4.0) * (double)M1 + 2.0 * F32_BYTES * 65536.0,
        .ninputs = 3,
        .inputs = {F32_1D(65536, 131),
                   INDEX_1D(EMLX_INT32, M1, 132, 65536),
                   {.dtype = EMLX_FLOAT32,
                    .ndim = 1,
                    .shape = {M1},
                    .seed = 133,
                    .dist = BENCH_INT,
                    .lo = -8,
                    .hi = 8}},
        .build = build_scatter_add,
    },
};

int main(int argc, char **argv) {
  return bench_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
