/* c128_test_util.h — what the complex128 tests of several families share:
 * making and reading complex128 arrays, long double complex references and
 * a norm-wise comparison in ulps of double. */
#ifndef EMLX_TESTS_C128_TEST_UTIL_H
#define EMLX_TESTS_C128_TEST_UTIL_H

#include <complex.h>

#include "test_util.h"

typedef long double _Complex lz;

static inline lz zt_lz(const double *p) { return (long double)p[0] + (long double)p[1] * (lz)I; }

/* A complex128 array of the given shape from interleaved (re, im) doubles. */
static inline emlx_array *zt_make(const double *re_im, const int64_t *shape, int nd) {
  return emlx_from_blob(re_im, EMLX_COMPLEX128, shape, nd, EMLX_CPU);
}

/* Reads a (releasing it) into a malloc'd array of 2 * size doubles, after
 * checking its dtype and element count; NULL on failure. */
static inline double *zt_take_at(emlx_array *a, emlx_dtype want, int64_t n, const char *what,
                                 const char *file, int line) {
  bool ok = tu_record(a && emlx_array_dtype(a) == want && emlx_size(a) == n, file, line,
                      "%s: %s result of %lld elements (got %s, %lld)", what, tu_dname(want),
                      (long long)n, a ? tu_dname(emlx_array_dtype(a)) : "NULL",
                      a ? (long long)emlx_size(a) : -1LL);
  unsigned char *raw = ok ? tu_read_raw_at(a, file, line) : NULL;
  emlx_release(a);
  return (double *)(void *)raw;
}
#define zt_take(a, n, what) zt_take_at((a), EMLX_COMPLEX128, (n), (what), __FILE__, __LINE__)

/* got (n complex doubles) against ref: |got - ref| <= ulps * 2^-52 * scale
 * elementwise, where scale is max(|ref_i|, floor); one check in all. */
static inline bool zt_check_at(const double *got, const lz *ref, int64_t n, double ulps,
                               double floor, const char *what, const char *file, int line) {
  if (!got)
    return false;
  int bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double rre = (double)creall(ref[i]), rim = (double)cimagl(ref[i]);
    double mag = (double)cabsl(ref[i]);
    double tol = ulps * 0x1p-52 * (mag > floor ? mag : floor);
    bool ok = hypot(got[2 * i] - rre, got[2 * i + 1] - rim) <= tol;
    if (!ok && bad++ < 4)
      fprintf(stderr, "%s:%d: %s element %lld: got %.17g%+.17gi, want %.17g%+.17gi\n", file, line,
              what, (long long)i, got[2 * i], got[2 * i + 1], rre, rim);
  }
  return tu_record(bad == 0, file, line, "%s: %d of %lld elements off", what, bad, (long long)n);
}
#define zt_check(got, ref, n, ulps, floor, what)                                                   \
  zt_check_at((got), (ref), (n), (ulps), (floor), (what), __FILE__, __LINE__)

/* n complex values uniform in [-1, 1]^2 (interleaved), malloc'd. */
static inline double *zt_random(tu_rng *rng, int64_t n) {
  double *v = malloc((size_t)(n > 0 ? 2 * n : 1) * sizeof *v);
  for (int64_t i = 0; i < 2 * n; i++)
    v[i] = tu_uniform(rng, -1.0, 1.0);
  return v;
}

#endif
