/* bench_lowp.c — benchmarks of the f16 and bf16 products (matmul_lowp.c and
 * the few-row path), next to their f32 twins: a 2048^3 product and the
 * decode-shaped x [M, 4096] times a 4096 x 4096 weight, M = 1 and 4, with
 * the weight both as [K, N] (x @ W, Nx's dense layout) and as [N, K]
 * (x @ W^T, the layout of ggml's MUL_MAT and of PyTorch's Linear).
 *
 * Built as emlx_bench_bench_lowp; bench/lowp_peers.py runs it next to
 * ggml's MUL_MAT (test-backend-ops perf) on the same shapes and prints the
 * ratios (issue 14). Inputs are small integers, exact in f16 and bf16, so
 * the f32 twin's checksum is the low-precision one's before rounding. One
 * line per case on stdout; see bench/README.md. */
#include "bench_harness.h"

static emlx_array *build_matmul(emlx_array *const *in) { return emlx_matmul(in[0], in[1]); }

static emlx_array *build_matmul_wt(emlx_array *const *in) {
  int axes[2] = {1, 0};
  emlx_array *wt = emlx_transpose(in[1], axes, 2);
  if (!wt)
    return NULL;
  emlx_array *y = emlx_matmul(in[0], wt);
  emlx_release(wt);
  return y;
}

#define MAT(dt, r, c, seed_)                                                                       \
  {                                                                                                \
    .dtype = (dt), .ndim = 2, .shape = {(r), (c)}, .seed = (seed_), .dist = BENCH_INT, .lo = -4,   \
    .hi = 4                                                                                        \
  }

/* a [m, k] @ b [k, n] (ROWS_B k, COLS_B n, build_matmul) or x [m, k] @ W^T
 * with W [n, k] (build_matmul_wt), dtype dt of esz bytes. */
#define CASE_(name_, what_, dt, esz, m, k, n, rb, cb, build_)                                      \
  {                                                                                                \
    .name = name_, .what = what_,                                                                  \
    .bytes = (esz) * ((double)(m) * (k) + (double)(k) * (n) + (double)(m) * (n)), .ninputs = 2,    \
    .inputs = {MAT(dt, m, k, 21), MAT(dt, rb, cb, 22)}, .build = build_,                           \
  }
#define CASE(name_, dt, esz, m, k, n)                                                              \
  CASE_(name_, "a [" #m "," #k "] @ b [" #k "," #n "], " #dt, dt, esz, m, k, n, k, n, build_matmul)
#define CASE_WT(name_, dt, esz, m, k, n)                                                           \
  CASE_(name_, "x [" #m "," #k "] @ W^T, W [" #n "," #k "], " #dt, dt, esz, m, k, n, n, k,         \
        build_matmul_wt)

static const bench_case cases[] = {
    CASE("lowp_bf16_2048", EMLX_BFLOAT16, 2, 2048, 2048, 2048),
    CASE("lowp_f16_2048", EMLX_FLOAT16, 2, 2048, 2048, 2048),
    CASE("lowp_f32_2048", EMLX_FLOAT32, 4, 2048, 2048, 2048),
    CASE_WT("lowp_bf16_2048_wt", EMLX_BFLOAT16, 2, 2048, 2048, 2048),
    CASE_WT("lowp_f16_2048_wt", EMLX_FLOAT16, 2, 2048, 2048, 2048),
    CASE_WT("lowp_f32_2048_wt", EMLX_FLOAT32, 4, 2048, 2048, 2048),
    CASE("lowp_bf16_m1_4096", EMLX_BFLOAT16, 2, 1, 4096, 4096),
    CASE("lowp_f16_m1_4096", EMLX_FLOAT16, 2, 1, 4096, 4096),
    CASE("lowp_f32_m1_4096", EMLX_FLOAT32, 4, 1, 4096, 4096),
    CASE("lowp_bf16_m4_4096", EMLX_BFLOAT16, 2, 4, 4096, 4096),
    CASE("lowp_f16_m4_4096", EMLX_FLOAT16, 2, 4, 4096, 4096),
    CASE("lowp_f32_m4_4096", EMLX_FLOAT32, 4, 4, 4096, 4096),
    CASE_WT("lowp_bf16_m1_4096_wt", EMLX_BFLOAT16, 2, 1, 4096, 4096),
    CASE_WT("lowp_f16_m1_4096_wt", EMLX_FLOAT16, 2, 1, 4096, 4096),
    CASE_WT("lowp_f32_m1_4096_wt", EMLX_FLOAT32, 4, 1, 4096, 4096),
    CASE_WT("lowp_bf16_m4_4096_wt", EMLX_BFLOAT16, 2, 4, 4096, 4096),
    CASE_WT("lowp_f16_m4_4096_wt", EMLX_FLOAT16, 2, 4, 4096, 4096),
    CASE_WT("lowp_f32_m4_4096_wt", EMLX_FLOAT32, 4, 4, 4096, 4096),
};

int main(int argc, char **argv) {
  return bench_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
