/* bench_fft.c — benchmarks of the FFT family: a power-of-two length 2^20,
 * a batch of 1024 rows of length 1000, a prime length 10007 (Bluestein) and
 * a 2-D transform of 1024 x 1024, all complex64.
 *
 * The harness makes real inputs only, so each complex input is an f32
 * array with a trailing axis of 2 (real, imaginary) read as complex64
 * through emlx_view (a bitcast, no copy) and reshaped; compare.py does the
 * same with numpy's .view(np.complex64). Built as emlx_bench_bench_fft; run
 * side by side with numpy by bench/compare.py (the fft family's block of
 * CASES mirrors this table). */
#include "bench_harness.h"

#define M1 (INT64_C(1) << 20)
#define C64_BYTES 8.0

/* The f32 (..., 2) input as complex64 of shape (..., ) — views only. */
static emlx_array *as_complex(emlx_array *f, int64_t rows, int64_t n) {
  emlx_array *v = emlx_view(f, EMLX_COMPLEX64);
  if (!v)
    return NULL;
  int64_t shape2[2] = {rows, n};
  emlx_array *c = rows ? emlx_reshape(v, shape2, 2) : emlx_reshape(v, &n, 1);
  emlx_release(v);
  return c;
}

static emlx_array *fft_of(emlx_array *f, int64_t rows, int64_t n) {
  emlx_array *c = as_complex(f, rows, n);
  emlx_array *r = c ? emlx_fft(c, 0, -1) : NULL;
  emlx_release(c);
  return r;
}

static emlx_array *build_fft_1m(emlx_array *const *in) { return fft_of(in[0], 0, M1); }
static emlx_array *build_fft_1000x1024(emlx_array *const *in) { return fft_of(in[0], 1024, 1000); }
static emlx_array *build_fft_10007(emlx_array *const *in) { return fft_of(in[0], 0, 10007); }
static emlx_array *build_fft2_1024(emlx_array *const *in) {
  emlx_array *c = as_complex(in[0], 1024, 1024);
  emlx_array *r = c ? emlx_fft2(c, NULL, NULL) : NULL;
  emlx_release(c);
  return r;
}

#define CPLX(seed_, ...)                                                                           \
  {                                                                                                \
    .dtype = EMLX_FLOAT32, .ndim = sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t),             \
    .shape = {__VA_ARGS__}, .seed = (seed_), .dist = BENCH_SYM                                     \
  }

static const bench_case cases[] = {
    {
        .name = "fft_c64_1M",
        .what = "fft(x), x c64 [2^20] in [-1, 1)^2",
        .bytes = 2.0 * C64_BYTES * (double)M1,
        .ninputs = 1,
        .inputs = {CPLX(401, M1, 2)},
        .build = build_fft_1m,
    },
    {
        .name = "fft_c64_1000x1024",
        .what = "fft(x, axis -1), x c64 [1024, 1000] in [-1, 1)^2",
        .bytes = 2.0 * C64_BYTES * 1024.0 * 1000.0,
        .ninputs = 1,
        .inputs = {CPLX(402, 1024, 1000, 2)},
        .build = build_fft_1000x1024,
    },
    {
        .name = "fft_c64_10007",
        .what = "fft(x), x c64 [10007] (prime) in [-1, 1)^2",
        .bytes = 2.0 * C64_BYTES * 10007.0,
        .ninputs = 1,
        .inputs = {CPLX(403, 10007, 2)},
        .build = build_fft_10007,
    },
    {
        .name = "fft2_c64_1024",
        .what = "fft2(x), x c64 [1024, 1024] in [-1, 1)^2",
        .bytes = 4.0 * C64_BYTES * (double)M1,
        .ninputs = 1,
        .inputs = {CPLX(404, 1024, 1024, 2)},
        .build = build_fft2_1024,
    },
};

int main(int argc, char **argv) {
  return bench_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
