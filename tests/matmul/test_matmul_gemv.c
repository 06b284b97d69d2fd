/* test_matmul_gemv.c — the f16/bf16 decode products: at most 4 rows of x
 * times a weight read straight from memory (matmul_lowp.c's try_gemv and
 * the per-ISA walks of src/cpu/matmul/matmul_gemv_*.c), for W stored
 * [K, N] (x @ W, B's columns contiguous) and [N, K] (x @ W^T, a transposed
 * view), against a naive f64 reference rounded once to the dtype.
 *
 * Values are multiples of 1/4 in [-4, 4], so every f32 partial sum is exact
 * and the one rounding, on the store, must give the reference's rounding
 * exactly (0 ulp): a wrong column, a dropped or doubled row of W, a second
 * rounding or a truncation shows. Shapes put N and K off every vector width
 * and unroll (16 columns, 4 rows), N across the per-thread split and the
 * accumulator chunks; x is also strided (a sliced or transposed view),
 * batched (one product per batch element, or the batch folded into the
 * rows), run at 1 and 3 threads; non-finite inputs (NaN in x, infinities in
 * W, inf - inf) and an f16 sum past its range (inf on the store) follow the
 * f64 reference. At EMLX_ISA=scalar the same cases check the packed path. */
#include <stdlib.h>

#include "test_util.h"

static tu_rng rng = {16016};

static double *quarters(int64_t n) {
  double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  for (int64_t i = 0; i < n; i++)
    v[i] = (double)tu_randint(&rng, -16, 16) * 0.25;
  return v;
}

/* r[e, m, j] = sum_k x[e, m, k] * w[e, k, j] (row-major doubles; wb: 1 when
 * W is shared by the batch, else B). */
static double *ref_product(const double *x, const double *w, int64_t B, int64_t wb, int64_t M,
                           int64_t K, int64_t N) {
  double *r = malloc((size_t)(B * M * N) * sizeof *r);
  for (int64_t e = 0; e < B; e++)
    for (int64_t m = 0; m < M; m++)
      for (int64_t j = 0; j < N; j++) {
        double s = 0.0;
        for (int64_t k = 0; k < K; k++)
          s += x[(e * M + m) * K + k] * w[((wb > 1 ? e : 0) * K + k) * N + j];
        r[(e * M + m) * N + j] = s;
      }
  return r;
}

/* W [K, N] (values w, row-major) as an array: stored [K, N], or stored
 * [N, K] and transposed (wt). */
static emlx_array *make_w(emlx_dtype d, const double *w, int64_t K, int64_t N, bool wt) {
  if (!wt)
    return tu_make(d, (int64_t[]){K, N}, 2, w);
  double *t = malloc((size_t)(K * N) * sizeof *t);
  for (int64_t k = 0; k < K; k++)
    for (int64_t j = 0; j < N; j++)
      t[j * K + k] = w[k * N + j];
  emlx_array *s = tu_make(d, (int64_t[]){N, K}, 2, t);
  emlx_array *v = emlx_transpose(s, NULL, 0);
  emlx_release(s);
  free(t);
  return v;
}

/* How x [M, K] is given: contiguous, every other column of [M, 2K], or
 * the transpose of a [K, M]. */
enum { X_DENSE, X_STEPPED, X_TRANSPOSED };

static emlx_array *make_x(emlx_dtype d, const double *x, int64_t M, int64_t K, int how) {
  if (how == X_DENSE)
    return tu_make(d, (int64_t[]){M, K}, 2, x);
  double *t = malloc((size_t)(2 * M * K) * sizeof *t);
  emlx_array *s, *v;
  if (how == X_STEPPED) {
    for (int64_t i = 0; i < 2 * M * K; i++)
      t[i] = 99.0; /* the skipped columns: wrong if read */
    for (int64_t m = 0; m < M; m++)
      for (int64_t k = 0; k < K; k++)
        t[m * 2 * K + 2 * k] = x[m * K + k];
    s = tu_make(d, (int64_t[]){M, 2 * K}, 2, t);
    v = emlx_slice(s, (int64_t[]){0, 0}, (int64_t[]){M, 2 * K}, (int64_t[]){1, 2}, 2);
  } else {
    for (int64_t m = 0; m < M; m++)
      for (int64_t k = 0; k < K; k++)
        t[k * M + m] = x[m * K + k];
    s = tu_make(d, (int64_t[]){K, M}, 2, t);
    v = emlx_transpose(s, NULL, 0);
  }
  emlx_release(s);
  free(t);
  return v;
}

static const char *const x_names[3] = {"dense x", "stepped x", "transposed x"};

/* x [M, K] @ W [K, N] for one layout of W and one of x, against the f64
 * reference, 0 ulp. */
static void check_one(emlx_dtype d, int64_t M, int64_t K, int64_t N, bool wt, int xhow,
                      const double *x, const double *w) {
  emlx_array *xa = make_x(d, x, M, K, xhow), *wa = make_w(d, w, K, N, wt);
  emlx_array *c = emlx_matmul(xa, wa);
  double *ref = ref_product(x, w, 1, 1, M, K, N);
  char msg[128];
  snprintf(msg, sizeof msg, "gemv %lldx%lldx%lld %s, %s", (long long)M, (long long)K, (long long)N,
           wt ? "x @ W^T" : "x @ W", x_names[xhow]);
  int64_t shape[2] = {M, N};
  tu_check_array(c, d, shape, 2, ref, 0.0, msg);
  emlx_release(xa);
  emlx_release(wa);
  emlx_release(c);
  free(ref);
}

static void check_shape(emlx_dtype d, int64_t M, int64_t K, int64_t N) {
  double *x = quarters(M * K), *w = quarters(K * N);
  for (int wt = 0; wt < 2; wt++)
    for (int xhow = 0; xhow < 3; xhow++)
      check_one(d, M, K, N, wt, xhow, x, w);
  free(x);
  free(w);
}

static const emlx_dtype lowp[2] = {EMLX_BFLOAT16, EMLX_FLOAT16};

/* N and K off the 16-column vectors and 4-row unroll, from one element to
 * several accumulator chunks a thread (N = 4099 at M = 1: two threads of
 * 2064 and 2035 columns, each over 2048). */
static void test_shapes(void) {
  static const int64_t kn[][2] = {{1, 1},      {1, 17},    {3, 16},   {5, 33},
                                  {7, 100},    {9, 15},    {16, 32},  {403, 1101},
                                  {130, 2050}, {64, 4099}, {2051, 7}, {37, 48}};
  for (int t = 0; t < 2; t++)
    for (int64_t M = 1; M <= 4; M++)
      for (size_t s = 0; s < sizeof kn / sizeof kn[0]; s++)
        check_shape(lowp[t], M, kn[s][0], kn[s][1]);
}

/* The thread split at other counts: one range (1), three ranges (3). */
static void test_threads(void) {
  int old = emlx_num_threads();
  int counts[2] = {1, 3};
  for (int i = 0; i < 2; i++) {
    CHECK(emlx_set_num_threads(counts[i]) >= 1);
    for (int t = 0; t < 2; t++) {
      check_shape(lowp[t], 1, 403, 1101);
      check_shape(lowp[t], 3, 130, 2050);
    }
  }
  CHECK(emlx_set_num_threads(old) >= 1);
}

/* x [B, M, K] @ W [B, K, N] (a product per batch element) and
 * x [B, M, K] @ W [K, N] (B * M <= 4: the batch folded into the rows). */
static void test_batched(void) {
  for (int t = 0; t < 2; t++) {
    emlx_dtype d = lowp[t];
    const int64_t B = 3, K = 67, N = 301;
    for (int64_t M = 1; M <= 2; M++)
      for (int wb = 0; wb < 2; wb++) {
        int64_t nw = wb ? B : 1;
        if (!wb && B * M > 4)
          continue;
        double *x = quarters(B * M * K), *w = quarters(nw * K * N);
        for (int wt = 0; wt < 2; wt++) {
          emlx_array *xa = tu_make(d, (int64_t[]){B, M, K}, 3, x), *wa;
          if (wt) {
            double *tw = malloc((size_t)(nw * K * N) * sizeof *tw);
            for (int64_t e = 0; e < nw; e++)
              for (int64_t k = 0; k < K; k++)
                for (int64_t j = 0; j < N; j++)
                  tw[(e * N + j) * K + k] = w[(e * K + k) * N + j];
            emlx_array *s =
                wb ? tu_make(d, (int64_t[]){B, N, K}, 3, tw) : tu_make(d, (int64_t[]){N, K}, 2, tw);
            wa = wb ? emlx_transpose(s, (int[]){0, 2, 1}, 3) : emlx_transpose(s, NULL, 0);
            emlx_release(s);
            free(tw);
          } else {
            wa = wb ? tu_make(d, (int64_t[]){B, K, N}, 3, w) : tu_make(d, (int64_t[]){K, N}, 2, w);
          }
          emlx_array *c = emlx_matmul(xa, wa);
          double *ref = ref_product(x, w, B, nw, M, K, N);
          char msg[128];
          snprintf(msg, sizeof msg, "batched gemv [%lld, %lld, %lld] @ %s%s", (long long)B,
                   (long long)M, (long long)K, wb ? "[B, K, N]" : "[K, N]", wt ? " (W^T)" : "");
          int64_t shape[3] = {B, M, N};
          tu_check_array(c, d, shape, 3, ref, 0.0, msg);
          emlx_release(xa);
          emlx_release(wa);
          emlx_release(c);
          free(ref);
        }
        free(x);
        free(w);
      }
  }
}

/* NaN in one x element (its row all NaN), +inf in W (inf in its column),
 * +inf and -inf in one column (NaN), inf times 0 (NaN); and for f16 a
 * column whose exact f32 sum (65600) rounds past the largest f16 (inf). */
static void test_non_finite(void) {
  const int64_t M = 3, K = 4100, N = 37;
  for (int t = 0; t < 2; t++) {
    emlx_dtype d = lowp[t];
    double *x = quarters(M * K), *w = quarters(K * N);
    x[0 * K + 5] = NAN;
    for (int64_t m = 1; m < M; m++) {
      x[m * K + 10] = 1.0;
      x[m * K + 11] = 1.0;
    }
    x[2 * K + 12] = 0.0;
    w[10 * N + 3] = INFINITY;  /* column 3: +inf */
    w[10 * N + 20] = INFINITY; /* column 20: inf - inf */
    w[11 * N + 20] = -INFINITY;
    w[12 * N + 30] = INFINITY;      /* column 30, row 2: inf * 0 */
    for (int64_t k = 0; k < K; k++) /* column 36: 4100 * 16 = 65600 in rows 1, 2 */
      w[k * N + 36] = 4.0;
    for (int64_t m = 1; m < M; m++)
      for (int64_t k = 0; k < K; k++)
        if (k != 10 && k != 11 && !(m == 2 && k == 12))
          x[m * K + k] = 4.0;
    for (int wt = 0; wt < 2; wt++)
      check_one(d, M, K, N, wt, X_DENSE, x, w);
    free(x);
    free(w);
  }
}

int main(void) {
  test_shapes();
  test_threads();
  test_batched();
  test_non_finite();
  return tu_finish();
}
