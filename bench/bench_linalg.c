/* bench_linalg.c — benchmarks of the linear algebra ops on 512 x 512
 * float32 matrices (LAPACK through OpenBLAS), run side by side with
 * numpy.linalg by bench/compare.py, whose CASES mirror this table (same
 * names, inputs, seeds).
 *
 * Each case computes what numpy's call computes and returns the output
 * whose checksum does not depend on sign conventions: svd computes U, S and
 * Vt (full, as np.linalg.svd) and returns S; eigh computes eigenvalues and
 * eigenvectors (as np.linalg.eigh, reading the lower triangle of a
 * non-symmetric input just like numpy) and returns the eigenvalues; qr
 * returns the reduced Q (numpy and EMLX both use Householder geqrf + orgqr,
 * so their signs agree); solve returns x. One line per case on stdout; see
 * bench/README.md. */
#include "bench_harness.h"

#define N 512

static emlx_array *build_svd(emlx_array *const *in) {
  emlx_array *u = NULL, *s = NULL, *vt = NULL;
  if (emlx_linalg_svd(in[0], true, true, &u, &s, &vt) != 0)
    return NULL;
  emlx_release(u); /* still computed (into scratch) when s is evaluated */
  emlx_release(vt);
  return s;
}

static emlx_array *build_qr(emlx_array *const *in) {
  emlx_array *q = NULL, *r = NULL;
  if (emlx_linalg_qr(in[0], false, &q, &r) != 0)
    return NULL;
  emlx_release(r);
  return q;
}

static emlx_array *build_eigh(emlx_array *const *in) {
  emlx_array *w = NULL, *v = NULL;
  if (emlx_linalg_eigh(in[0], "L", &w, &v) != 0)
    return NULL;
  emlx_release(v);
  return w;
}

static emlx_array *build_solve(emlx_array *const *in) { return emlx_linalg_solve(in[0], in[1]); }

#define SQ(seed_)                                                                                  \
  { .dtype = EMLX_FLOAT32, .ndim = 2, .shape = {N, N}, .seed = (seed_), .dist = BENCH_SYM }

static const bench_case cases[] = {
    {
        .name = "svd_f32_512",
        .what = "U, S, Vt = svd(a) (full matrices), a f32 [512, 512] in [-1, 1); returns S",
        .bytes = 4.0 * 3 * N * N,
        .ninputs = 1,
        .inputs = {SQ(501)},
        .build = build_svd,
    },
    {
        .name = "qr_f32_512",
        .what = "Q, R = qr(a) (reduced), a f32 [512, 512] in [-1, 1); returns Q",
        .bytes = 4.0 * 3 * N * N,
        .ninputs = 1,
        .inputs = {SQ(502)},
        .build = build_qr,
    },
    {
        .name = "eigh_f32_512",
        .what = "w, v = eigh(a) (lower triangle), a f32 [512, 512] in [-1, 1); returns w",
        .bytes = 4.0 * 2 * N * N,
        .ninputs = 1,
        .inputs = {SQ(503)},
        .build = build_eigh,
    },
    {
        .name = "solve_f32_512",
        .what = "solve(a, b), a f32 [512, 512], b f32 [512] in [-1, 1)",
        .bytes = 4.0 * (N * N + 2.0 * N),
        .ninputs = 2,
        .inputs =
            {SQ(504),
             {.dtype = EMLX_FLOAT32, .ndim = 1, .shape = {N}, .seed = 505, .dist = BENCH_SYM}},
        .build = build_solve,
    },
    {
        .name = "solve_f32_512x512",
        .what = "solve(a, b), a and b f32 [512, 512] in [-1, 1): 512 right-hand sides",
        .bytes = 4.0 * 3 * N * N,
        .ninputs = 2,
        .inputs = {SQ(506), SQ(507)},
        .build = build_solve,
    },
};

int main(int argc, char **argv) {
  return bench_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
