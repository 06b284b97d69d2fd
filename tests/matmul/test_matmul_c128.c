/* test_matmul_c128.c — complex128 matmul (CBLAS zgemm, and zgemv for a
 * vector operand): contiguous, transposed (strided) and batched operands,
 * against a long double product. Error bound: k ulps of double times the
 * sum of the products' magnitudes. */
#include "../c128_test_util.h"

/* c = a b for a (m x k) with strides (ars, acs) and b (k x n) likewise. */
static void ref_mm(const double *a, int64_t ars, int64_t acs, const double *b, int64_t brs,
                   int64_t bcs, int64_t m, int64_t n, int64_t k, lz *c) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      lz acc = 0;
      for (int64_t p = 0; p < k; p++)
        acc += zt_lz(a + 2 * (i * ars + p * acs)) * zt_lz(b + 2 * (p * brs + j * bcs));
      c[i * n + j] = acc;
    }
}

static void check(tu_rng *rng, int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
  double *av = zt_random(rng, m * k), *bv = zt_random(rng, k * n);
  /* stored transposed when asked: the engine sees a transpose view */
  int64_t as[2] = {ta ? k : m, ta ? m : k}, bs[2] = {tb ? n : k, tb ? k : n};
  emlx_array *a0 = zt_make(av, as, 2), *b0 = zt_make(bv, bs, 2);
  emlx_array *a = ta ? emlx_transpose(a0, NULL, 2) : emlx_retain(a0);
  emlx_array *b = tb ? emlx_transpose(b0, NULL, 2) : emlx_retain(b0);
  lz *ref = malloc((size_t)(m * n) * sizeof *ref);
  ref_mm(av, ta ? 1 : k, ta ? m : 1, bv, tb ? 1 : n, tb ? k : 1, m, n, k, ref);
  char what[80];
  snprintf(what, sizeof what, "matmul c128 %lldx%lldx%lld ta %d tb %d", (long long)m,
           (long long)n, (long long)k, ta, tb);
  double *got = zt_take(emlx_matmul(a, b), m * n, what);
  zt_check(got, ref, m * n, 4.0 * (double)k, 2.0 * sqrt((double)k), what);
  free(got), free(ref);
  emlx_release(a), emlx_release(b), emlx_release(a0), emlx_release(b0);
  free(av), free(bv);
}

static void test_batched(tu_rng *rng) {
  int64_t as[3] = {3, 4, 5}, bs[3] = {3, 5, 2};
  double *av = zt_random(rng, 60), *bv = zt_random(rng, 30);
  emlx_array *a = zt_make(av, as, 3), *b = zt_make(bv, bs, 3);
  lz ref[24];
  for (int e = 0; e < 3; e++)
    ref_mm(av + 2 * 20 * e, 5, 1, bv + 2 * 10 * e, 2, 1, 4, 2, 5, ref + 8 * e);
  double *got = zt_take(emlx_matmul(a, b), 24, "batched matmul c128");
  zt_check(got, ref, 24, 20, 4.0, "batched matmul c128");
  free(got);
  emlx_release(a), emlx_release(b);
  free(av), free(bv);
}

int main(void) {
  tu_rng rng = {31};
  check(&rng, 7, 5, 9, false, false);
  check(&rng, 7, 5, 9, true, false);
  check(&rng, 7, 5, 9, false, true);
  check(&rng, 64, 48, 80, true, true);
  check(&rng, 1, 6, 11, false, false); /* a row vector: zgemv */
  check(&rng, 6, 1, 11, false, false); /* a column: zgemv */
  test_batched(&rng);
  return tu_finish();
}
