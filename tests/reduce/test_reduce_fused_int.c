/* test_reduce_fused_int.c — integer reductions fed by a fused elementwise
 * region (the region's output is produced in L1-sized pieces and never
 * stored): sums that widen (astype int32 -> int64), sums and products that
 * wrap, max/min and all/any, in row mode (one output, runs split in pieces)
 * and column mode, against references computed here in C. */
#include "test_util.h"

#define N ((INT64_C(1) << 20) + 4097) /* several 64K pieces and a ragged end */

static int32_t *ints(int64_t n, uint64_t seed, int32_t lo, int32_t hi) {
  int32_t *v = malloc((size_t)n * sizeof *v);
  tu_rng r = {seed};
  for (int64_t i = 0; i < n; i++)
    v[i] = (int32_t)tu_randint(&r, lo, hi);
  return v;
}

static void test_widening_sum(void) {
  int64_t n = N;
  int32_t *v = ints(n, 1, INT32_MIN, INT32_MAX);
  int64_t want = 0;
  for (int64_t i = 0; i < n; i++)
    want += v[i]; /* |sum| < 2^51: no overflow */
  emlx_array *x = emlx_from_blob(v, EMLX_INT32, &n, 1, EMLX_CPU);
  emlx_array *w = emlx_astype(x, EMLX_INT64), *s = emlx_sum(w, NULL, 0, false);
  emlx_release(w); /* the sum is the region's only reader: fused, never stored */
  int64_t got = 0;
  CHECK(s && emlx_item_i64(s, &got) == 0);
  CHECK_MSG(got == want, "sum(astype(x, int64)) = %lld, want %lld", (long long)got,
            (long long)want);
  emlx_release(s), emlx_release(x);
  free(v);
}

/* x * x + 3 (wrapping int32), built anew for each reduction so that each
 * one reads a region nobody else holds (the fused, never-stored path). */
static emlx_array *square_plus_3(emlx_array *x) {
  emlx_array *three = emlx_scalar_tensor_int(3, EMLX_INT32, EMLX_CPU);
  emlx_array *m = emlx_multiply(x, x), *t = emlx_add(m, three);
  emlx_release(m), emlx_release(three);
  return t;
}

/* r's value; t (r's input, the caller's handle) is released first. */
static int64_t reduce_item(emlx_array *r, emlx_array *t) {
  emlx_release(t);
  int64_t v = 0;
  CHECK_MSG(r && emlx_item_i64(r, &v) == 0, "reduction: %s", emlx_last_error());
  emlx_release(r);
  return v;
}

static void test_wrapping(void) {
  int64_t n = N;
  int32_t *v = ints(n, 2, -100000, 100000);
  uint32_t sq = 0, prod = 1;
  int32_t mx = INT32_MIN, mn = INT32_MAX;
  bool any_big = false;
  for (int64_t i = 0; i < n; i++) {
    uint32_t t = (uint32_t)v[i] * (uint32_t)v[i] + 3u;
    sq += t;
    prod *= t | 1u;
    mx = (int32_t)t > mx ? (int32_t)t : mx;
    mn = (int32_t)t < mn ? (int32_t)t : mn;
    any_big |= (int32_t)t > 2000000000;
  }
  emlx_array *x = emlx_from_blob(v, EMLX_INT32, &n, 1, EMLX_CPU);
  emlx_array *t = square_plus_3(x);
  int64_t gs = reduce_item(emlx_sum(t, NULL, 0, false), t);
  t = square_plus_3(x);
  emlx_array *one = emlx_scalar_tensor_int(1, EMLX_INT32, EMLX_CPU), *odd = emlx_bitwise_or(t, one);
  emlx_release(t);
  int64_t gp = reduce_item(emlx_product(odd, NULL, 0, false), odd); /* odd: never 0 mod 2^32 */
  emlx_release(one);
  t = square_plus_3(x);
  int64_t gm = reduce_item(emlx_max(t, NULL, 0, false), t);
  t = square_plus_3(x);
  int64_t gn = reduce_item(emlx_min(t, NULL, 0, false), t);
  t = square_plus_3(x);
  emlx_array *big = emlx_scalar_tensor_int(2000000000, EMLX_INT32, EMLX_CPU);
  emlx_array *gt = emlx_greater(t, big);
  emlx_release(t);
  int64_t ga = reduce_item(emlx_any(gt, NULL, 0, false), gt);
  CHECK_MSG((int32_t)gs == (int32_t)sq, "wrapping sum %lld, want %d", (long long)gs, (int32_t)sq);
  CHECK_MSG((int32_t)gp == (int32_t)prod, "wrapping product %lld, want %d", (long long)gp,
            (int32_t)prod);
  CHECK_MSG(gm == mx && gn == mn, "max %lld min %lld, want %d %d", (long long)gm, (long long)gn, mx,
            mn);
  CHECK_MSG((ga != 0) == any_big, "any");
  emlx_release(big), emlx_release(x);
  free(v);
}

static void test_columns(void) { /* sum(astype(x, int64), axis 0) and min over rows */
  int64_t sh[2] = {3000, 357};
  int64_t n = sh[0] * sh[1];
  int32_t *v = ints(n, 3, -1000000, 1000000);
  int64_t *want = calloc((size_t)sh[1], sizeof *want);
  for (int64_t i = 0; i < sh[0]; i++)
    for (int64_t j = 0; j < sh[1]; j++)
      want[j] += v[i * sh[1] + j];
  emlx_array *x = emlx_from_blob(v, EMLX_INT32, sh, 2, EMLX_CPU);
  emlx_array *w = emlx_astype(x, EMLX_INT64);
  const int ax = 0;
  emlx_array *s = emlx_sum(w, &ax, 1, false);
  emlx_release(w);
  int64_t *got = malloc((size_t)sh[1] * sizeof *got);
  CHECK(s && emlx_to_blob(s, got, (size_t)sh[1] * sizeof *got) == 0);
  int bad = 0;
  for (int64_t j = 0; j < sh[1]; j++)
    bad += got[j] != want[j];
  CHECK_MSG(bad == 0, "column sums: %d of %lld off", bad, (long long)sh[1]);
  emlx_release(s), emlx_release(x);
  free(got), free(want), free(v);
}

int main(void) {
  test_widening_sum();
  test_wrapping();
  test_columns();
  return tu_finish();
}
