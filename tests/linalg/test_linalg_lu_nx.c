/* test_linalg_lu_nx.c — real LU computes Nx.LinAlg.LU's arithmetic exactly
 * (src/cpu/linalg_factor.c): the factors equal, bit for bit, a row-major
 * transcription of Nx's algorithm written here (first largest |pivot|,
 * whole-row swaps, division by the pivot, trailing update with the product
 * and the difference each rounded), for f32 and f64, square, tall and wide,
 * batched, with ties between pivot candidates, a zero pivot column and
 * integer-valued matrices, one panel and several (the kernel works by
 * panels of 32 columns); and lu_factor gives the same factors. A getrf-
 * style reciprocal or fused update differs from it in the last bit. */
#include "test_util.h"

#define REF_LU(NAME, T, ABS)                                                                       \
  /* a: m x n row-major, in place; perm: row i of the result is row perm[i] */                     \
  static void NAME(int m, int n, T *a, int *perm) {                                                \
    for (int i = 0; i < m; i++)                                                                    \
      perm[i] = i;                                                                                 \
    int k = m < n ? m : n;                                                                         \
    for (int c = 0; c < k; c++) {                                                                  \
      int piv = c;                                                                                 \
      for (int i = c + 1; i < m; i++)                                                              \
        if (ABS(a[i * n + c]) > ABS(a[piv * n + c]))                                               \
          piv = i;                                                                                 \
      if (piv != c) {                                                                              \
        for (int j = 0; j < n; j++) {                                                              \
          T t = a[c * n + j];                                                                      \
          a[c * n + j] = a[piv * n + j];                                                           \
          a[piv * n + j] = t;                                                                      \
        }                                                                                          \
        int t = perm[c];                                                                           \
        perm[c] = perm[piv];                                                                       \
        perm[piv] = t;                                                                             \
      }                                                                                            \
      T d = a[c * n + c];                                                                          \
      for (int i = c + 1; i < m; i++) {                                                            \
        if (d != 0)                                                                                \
          a[i * n + c] = a[i * n + c] / d;                                                         \
        for (int j = c + 1; j < n; j++) {                                                          \
          volatile T prod = a[i * n + c] * a[c * n + j];                                           \
          a[i * n + j] = a[i * n + j] - prod;                                                      \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }
REF_LU(ref_lu_f32, float, fabsf)
REF_LU(ref_lu_f64, double, fabs)

static bool same(emlx_dtype dt, double x, double y) {
  if (dt == EMLX_FLOAT32) {
    float a = (float)x, b = (float)y;
    return memcmp(&a, &b, sizeof a) == 0;
  }
  return memcmp(&x, &y, sizeof x) == 0;
}

/* kind 0: random normal-ish; 1: small integers (pivot ties); 2: column 1 all
 * zero (a zero pivot, no scaling). */
static void check_case(emlx_dtype dt, int nbatch, int m, int n, int kind, uint64_t seed) {
  int k = m < n ? m : n;
  int64_t total = (int64_t)nbatch * m * n;
  double *v = malloc((size_t)total * sizeof(double));
  tu_rng r = {seed};
  for (int64_t i = 0; i < total; i++) {
    double x = kind == 1 ? floor(tu_uniform(&r, -4, 5)) : tu_uniform(&r, -3, 3);
    if (kind == 2 && (i % n) == 1)
      x = 0;
    v[i] = dt == EMLX_FLOAT32 ? (double)(float)x : x;
  }
  int64_t shape[3] = {nbatch, m, n};
  emlx_array *a = tu_make(dt, shape, 3, v);
  emlx_array *p = NULL, *l = NULL, *u = NULL, *lu = NULL, *piv = NULL;
  CHECK_OK(emlx_linalg_lu(a, &p, &l, &u));
  CHECK_OK(emlx_linalg_lu_factor(a, &lu, &piv));
  double *gl = tu_read(l), *gu = tu_read(u), *glu = tu_read(lu);
  unsigned char *gp = tu_read_raw(p);
  int bad = 0, bad_perm = 0, bad_compact = 0;
  float *wf = malloc((size_t)m * n * sizeof(float));
  double *wd = malloc((size_t)m * n * sizeof(double));
  int *perm = malloc((size_t)m * sizeof(int));
  for (int b = 0; gl && gu && glu && gp && b < nbatch; b++) {
    const double *src = v + (size_t)b * m * n;
    for (int i = 0; i < m * n; i++) {
      wf[i] = (float)src[i];
      wd[i] = src[i];
    }
    if (dt == EMLX_FLOAT32)
      ref_lu_f32(m, n, wf, perm);
    else
      ref_lu_f64(m, n, wd, perm);
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) {
        double want = dt == EMLX_FLOAT32 ? (double)wf[i * n + j] : wd[i * n + j];
        double lw = j < i ? want : (j == i ? 1.0 : 0.0), uw = j >= i ? want : 0.0;
        if (j < k && !same(dt, gl[((size_t)b * m + i) * k + j], lw))
          bad++;
        if (i < k && !same(dt, gu[((size_t)b * k + i) * n + j], uw))
          bad++;
        if (!same(dt, glu[((size_t)b * m + i) * n + j], want))
          bad_compact++;
      }
    /* p[i] is the row of L U that holds row i of a: the inverse of perm */
    const uint32_t *pp = (const uint32_t *)(const void *)gp + (size_t)b * m;
    for (int i = 0; i < m; i++)
      if ((int)pp[perm[i]] != i)
        bad_perm++;
  }
  CHECK_MSG(bad == 0 && bad_perm == 0 && bad_compact == 0,
            "lu %s %dx%dx%d kind %d: %d factor, %d permutation, %d compact elements differ from "
            "Nx's algorithm",
            tu_dname(dt), nbatch, m, n, kind, bad, bad_perm, bad_compact);
  free(wf);
  free(wd);
  free(perm);
  free(gl);
  free(gu);
  free(glu);
  free(gp);
  free(v);
  emlx_release(a);
  emlx_release(p);
  emlx_release(l);
  emlx_release(u);
  emlx_release(lu);
  emlx_release(piv);
}

int main(void) {
  static const emlx_dtype dts[] = {EMLX_FLOAT32, EMLX_FLOAT64};
  static const int dims[][2] = {{1, 1},
                                {2, 2},
                                {3, 3},
                                {4, 4},
                                {7, 7},
                                {33, 33},
                                {64, 64},
                                {6, 4},
                                {4, 6},
                                {50, 17},
                                /* several 32-column panels, tall and wide */
                                {100, 100},
                                {130, 70},
                                {70, 130}};
  uint64_t seed = 11;
  for (size_t d = 0; d < 2; d++)
    for (size_t s = 0; s < sizeof dims / sizeof dims[0]; s++)
      for (int kind = 0; kind < 3; kind++)
        check_case(dts[d], 3, dims[s][0], dims[s][1], kind, seed++);
  return tu_finish();
}
