/* test_fft_c128.c — the FFT family's complex128 path (fft_c128.c): fft and
 * ifft of complex128 and of float64 (promoted to complex128) for power-of-
 * two lengths and for others (Bluestein), along the last axis and a middle
 * one, with padding and truncation, against a direct DFT in long double
 * (angles reduced exactly, k*j mod n). Error bound: a few ulps of double
 * times log2(n) of the signal's norm. */
#include "../c128_test_util.h"

/* y_k = sum_j x_j e^(-+2 pi i jk / n) (/ n for the inverse), over the first
 * min(len, n) entries of x. */
static void ref_dft(const double *x, int64_t len, int64_t xs, int64_t n, bool inverse, lz *y) {
  const long double two_pi = 6.283185307179586476925286766559005768L;
  int64_t m = len < n ? len : n;
  for (int64_t k = 0; k < n; k++) {
    lz acc = 0;
    for (int64_t j = 0; j < m; j++) {
      long double t = two_pi * (long double)((j * k) % n) / (long double)n;
      acc += zt_lz(x + 2 * j * xs) * (cosl(t) + (inverse ? 1.0L : -1.0L) * sinl(t) * (lz)I);
    }
    y[k] = inverse ? acc / (long double)n : acc;
  }
}

static void check_1d(tu_rng *rng, int64_t len, int64_t n, bool inverse) {
  double *x = zt_random(rng, len);
  emlx_array *a = zt_make(x, &len, 1);
  lz *ref = malloc((size_t)n * sizeof *ref);
  ref_dft(x, len, 1, n, inverse, ref);
  char what[80];
  snprintf(what, sizeof what, "%s c128 len %lld n %lld", inverse ? "ifft" : "fft", (long long)len,
           (long long)n);
  double *got = zt_take(inverse ? emlx_ifft(a, n, 0) : emlx_fft(a, n, 0), n, what);
  long double norm = 0;
  for (int64_t k = 0; k < n; k++)
    norm += creall(ref[k]) * creall(ref[k]) + cimagl(ref[k]) * cimagl(ref[k]);
  double scale = sqrt((double)norm / (double)n) + 1e-300;
  double lg = log2((double)(2 * n)) + 1;
  zt_check(got, ref, n, 8.0 * lg * (n > 1 ? 4.0 : 1.0), scale, what);
  free(got);
  free(ref);
  emlx_release(a);
  free(x);
}

static void test_lengths(void) {
  tu_rng rng = {99};
  static const int64_t ns[] = {1, 2, 8, 64, 1024, 3, 12, 17, 100, 257};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    for (int inv = 0; inv < 2; inv++)
      check_1d(&rng, ns[i], ns[i], inv);
  check_1d(&rng, 5, 8, false);  /* zero padding */
  check_1d(&rng, 20, 12, true); /* truncation */
}

/* float64 input: complex128 result; an axis in the middle of a 3-d array. */
static void test_f64_and_axis(void) {
  tu_rng rng = {5};
  int64_t shape[3] = {2, 6, 3};
  double v[36], xc[72];
  for (int i = 0; i < 36; i++) {
    v[i] = tu_uniform(&rng, -2, 2);
    xc[2 * i] = v[i];
    xc[2 * i + 1] = 0;
  }
  emlx_array *a = emlx_from_blob(v, EMLX_FLOAT64, shape, 3, EMLX_CPU);
  lz ref[36], line[6];
  for (int o = 0; o < 2; o++)
    for (int i = 0; i < 3; i++) {
      ref_dft(xc + 2 * (o * 18 + i), 6, 3, 6, false, line);
      for (int k = 0; k < 6; k++)
        ref[o * 18 + k * 3 + i] = line[k];
    }
  double *got = zt_take(emlx_fft(a, 0, 1), 36, "fft of f64 along axis 1");
  zt_check(got, ref, 36, 64, 1.0, "fft of f64 along axis 1");
  free(got);
  emlx_release(a);
}

int main(void) {
  test_lengths();
  test_f64_and_axis();
  return tu_finish();
}
