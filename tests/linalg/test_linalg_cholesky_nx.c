/* test_linalg_cholesky_nx.c — float32 Cholesky computes Nx.LinAlg.Cholesky's
 * arithmetic exactly (src/cpu/linalg_factor.c): the factor equals, bit for
 * bit, a transcription of Nx's Cholesky-Banachiewicz written here (row by
 * row; each dot product of f32 entries accumulated in double in k order and
 * rounded once; float subtraction, division by (L[j][j] + 1e-10) rounded
 * from double, float square root), for lower and upper, batched, sizes 1 to
 * 100, on random symmetric positive definite matrices, with the other
 * triangle holding garbage the kernel must not read; a matrix that is not
 * positive definite is still an error. LAPACK's spotrf differs in the last
 * bit. */
#include "test_util.h"

static void ref_cholesky(int n, const float *a, float *l) {
  for (int i = 0; i < n * n; i++)
    l[i] = 0.0f;
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      double s = 0.0;
      for (int k = 0; k < j; k++) {
        volatile double prod = (double)l[i * n + k] * (double)l[j * n + k];
        s = prod + s;
      }
      float sum = (float)s;
      if (i == j)
        l[i * n + i] = sqrtf(a[i * n + i] - sum);
      else
        l[i * n + j] = (a[i * n + j] - sum) / (float)((double)l[j * n + j] + 1e-10);
    }
}

static void check(int nbatch, int n, bool upper, uint64_t seed) {
  tu_rng r = {seed};
  int64_t total = (int64_t)nbatch * n * n;
  double *v = malloc((size_t)total * sizeof(double));
  float *af = malloc((size_t)n * n * sizeof(float)), *lf = malloc((size_t)n * n * sizeof(float));
  double *g = malloc((size_t)n * n * sizeof(double));
  for (int b = 0; b < nbatch; b++) {
    /* A = G G^T + n I, in f32 */
    for (int i = 0; i < n * n; i++)
      g[i] = tu_uniform(&r, -1, 1);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double s = i == j ? n : 0.0;
        for (int k = 0; k < n; k++)
          s += g[i * n + k] * g[j * n + k];
        v[((int64_t)b * n + i) * n + j] = (double)(float)s;
      }
    /* garbage in the triangle the kernel must not read */
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        if (upper ? j < i : j > i)
          v[((int64_t)b * n + i) * n + j] = 1.0e6;
  }
  int64_t shape[3] = {nbatch, n, n};
  emlx_array *a = tu_make(EMLX_FLOAT32, shape, 3, v);
  emlx_array *c = emlx_linalg_cholesky(a, upper);
  double *got = tu_read(c);
  int bad = 0;
  for (int b = 0; got && b < nbatch; b++) {
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        /* the lower triangle of A (for upper: the transpose of its upper one) */
        int64_t at = upper ? ((int64_t)b * n + (j < i ? j : i)) * n + (j < i ? i : j)
                           : ((int64_t)b * n + (j > i ? j : i)) * n + (j > i ? i : j);
        af[i * n + j] = (float)v[at];
      }
    ref_cholesky(n, af, lf);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        float want = upper ? lf[j * n + i] : lf[i * n + j];
        float have = (float)got[((size_t)b * n + i) * n + j];
        if (memcmp(&want, &have, sizeof want) != 0)
          bad++;
      }
  }
  CHECK_MSG(got && bad == 0, "cholesky f32 %dx%dx%d %s: %d elements differ from Nx's algorithm",
            nbatch, n, n, upper ? "upper" : "lower", bad);
  free(got);
  free(v);
  free(af);
  free(lf);
  free(g);
  emlx_release(c);
  emlx_release(a);
}

static void check_not_positive_definite(void) {
  double v[4] = {1, 2, 2, 1};
  int64_t shape[2] = {2, 2};
  emlx_array *a = tu_make(EMLX_FLOAT32, shape, 2, v);
  emlx_array *c = emlx_linalg_cholesky(a, false);
  CHECK(c != NULL);
  CHECK_FAILS(emlx_eval(&c, 1));
  emlx_release(c);
  emlx_release(a);
}

int main(void) {
  static const int ns[] = {1, 2, 3, 5, 8, 33, 100};
  uint64_t seed = 5;
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    for (int upper = 0; upper < 2; upper++)
      check(3, ns[i], upper, seed++);
  check_not_positive_definite();
  return tu_finish();
}
