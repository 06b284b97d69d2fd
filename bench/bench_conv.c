/* bench_conv.c — benchmarks of the conv family: a 3x3 "same" conv2d
 * (N=8, 56x56, 64 -> 64 channels, f32, channels-last) and a 3x3 stride-2
 * max pool over (8, 112, 112, 64) f32.
 *
 * Built as emlx_bench_bench_conv; run side by side with numpy (im2col
 * through sliding_window_view + tensordot / matmul) and torch (conv2d /
 * max_pool2d, 2 threads) by bench/compare.py, whose CASES mirror this table
 * (same names, inputs, seeds). One line per case on stdout. */
#include "bench_harness.h"

static emlx_array *build_conv2d(emlx_array *const *in) {
  int64_t pad[2] = {1, 1};
  emlx_conv_options o = {.padding_low = pad, .padding_high = pad};
  return emlx_conv_general(in[0], in[1], &o);
}

static emlx_array *build_maxpool(emlx_array *const *in) {
  int64_t w[4] = {1, 3, 3, 1}, s[4] = {1, 2, 2, 1}, p[4] = {0, 1, 1, 0};
  emlx_window_options o = {.strides = s, .padding_low = p, .padding_high = p};
  return emlx_window_max(in[0], w, 4, &o);
}

static const bench_case cases[] = {
    {
        .name = "conv2d_f32_n8_c64_56",
        .what = "conv_general(x [8,56,56,64], w [64,3,3,64], padding 1), f32 in [-1, 1)",
        .bytes = 4.0 * (2.0 * 8 * 56 * 56 * 64 + 64 * 9 * 64),
        .ninputs = 2,
        .inputs = {{.dtype = EMLX_FLOAT32,
                    .ndim = 4,
                    .shape = {8, 56, 56, 64},
                    .seed = 301,
                    .dist = BENCH_SYM},
                   {.dtype = EMLX_FLOAT32,
                    .ndim = 4,
                    .shape = {64, 3, 3, 64},
                    .seed = 302,
                    .dist = BENCH_SYM}},
        .build = build_conv2d,
    },
    {
        .name = "maxpool2d_f32_112",
        .what = "window_max(x [8,112,112,64], window {1,3,3,1}, strides {1,2,2,1}, padding 1)",
        .bytes = 4.0 * (8.0 * 112 * 112 * 64 + 8.0 * 56 * 56 * 64),
        .ninputs = 1,
        .inputs = {{.dtype = EMLX_FLOAT32,
                    .ndim = 4,
                    .shape = {8, 112, 112, 64},
                    .seed = 303,
                    .dist = BENCH_SYM}},
        .build = build_maxpool,
    },
};

int main(int argc, char **argv) {
  return bench_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
