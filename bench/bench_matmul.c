/* bench_matmul.c — benchmarks of matmul (f32 through OpenBLAS, bf16 through
 * our AMX / AVX-512 BF16 kernels).
 *
 * Built as emlx_bench_bench_matmul; run side by side with numpy and torch by
 * bench/compare.py, whose CASES mirror this table (same names, inputs,
 * seeds). The bf16 inputs are small integers, exact in bf16, so every
 * implementation computes exact f32 sums and the checksums agree exactly.
 * One line per case on stdout; see bench/README.md. */
#include "bench_harness.h"

#define N2K 2048
#define N4K 4096

static emlx_array *build_matmul(emlx_array *const *in) { return emlx_matmul(in[0], in[1]); }

#define MAT(dt, r, c, seed_, dist_, lo_, hi_)                                                      \
  {                                                                                                \
    .dtype = (dt), .ndim = 2, .shape = {(r), (c)}, .seed = (seed_), .dist = (dist_), .lo = (lo_),  \
    .hi = (hi_)                                                                                    \
  }

static const bench_case cases[] = {
    {
        .name = "matmul_f32_2048",
        .what = "a @ b, a and b f32 [2048, 2048] in [-1, 1)",
        .bytes = 3.0 * 4.0 * N2K * N2K,
        .ninputs = 2,
        .inputs = {MAT(EMLX_FLOAT32, N2K, N2K, 11, BENCH_SYM, 0, 0),
                   MAT(EMLX_FLOAT32, N2K, N2K, 12, BENCH_SYM, 0, 0)},
        .build = build_matmul,
    },
    {
        .name = "matmul_bf16_2048",
        .what = "a @ b, a and b bf16 [2048, 2048], integers in [-4, 4)",
        .bytes = 3.0 * 2.0 * N2K * N2K,
        .ninputs = 2,
        .inputs = {MAT(EMLX_BFLOAT16, N2K, N2K, 13, BENCH_INT, -4, 4),
                   MAT(EMLX_BFLOAT16, N2K, N2K, 14, BENCH_INT, -4, 4)},
        .build = build_matmul,
    },
    {
        .name = "matmul_f32_2048_int",
        .what = "a @ b, a and b f32 [2048, 2048], integers in [-4, 4) (bf16's f32 twin)",
        .bytes = 3.0 * 4.0 * N2K * N2K,
        .ninputs = 2,
        .inputs = {MAT(EMLX_FLOAT32, N2K, N2K, 13, BENCH_INT, -4, 4),
                   MAT(EMLX_FLOAT32, N2K, N2K, 14, BENCH_INT, -4, 4)},
        .build = build_matmul,
    },
    {
        .name = "gemv_f32_4096",
        .what = "a @ x, a f32 [4096, 4096], x f32 [4096] in [-1, 1)",
        .bytes = 4.0 * ((double)N4K * N4K + 2.0 * N4K),
        .ninputs = 2,
        .inputs =
            {MAT(EMLX_FLOAT32, N4K, N4K, 15, BENCH_SYM, 0, 0),
             {.dtype = EMLX_FLOAT32, .ndim = 1, .shape = {N4K}, .seed = 16, .dist = BENCH_SYM}},
        .build = build_matmul,
    },
    {
        .name = "matmul_f32_batch4096_16",
        .what = "a @ b, a and b f32 [4096, 16, 16] in [-1, 1): 4096 small products",
        .bytes = 3.0 * 4.0 * N4K * 256,
        .ninputs = 2,
        .inputs = {{.dtype = EMLX_FLOAT32,
                    .ndim = 3,
                    .shape = {N4K, 16, 16},
                    .seed = 17,
                    .dist = BENCH_SYM},
                   {.dtype = EMLX_FLOAT32,
                    .ndim = 3,
                    .shape = {N4K, 16, 16},
                    .seed = 18,
                    .dist = BENCH_SYM}},
        .build = build_matmul,
    },
};

int main(int argc, char **argv) {
  return bench_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
