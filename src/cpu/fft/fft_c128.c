/* fft_c128.c — the FFT kernel's complex128 path (fft.c hands it every
 * complex128 node; the lane machinery of fft_body.h is f32 only).
 *
 * One line at a time, in double: a power-of-two length runs an iterative
 * radix-2 transform in place (bit-reversed order in, natural order out);
 * any other length runs Bluestein's chirp-z through power-of-two
 * transforms of m >= 2n - 1. Twiddles and chirps are computed in long
 * double from exactly reduced angles (k^2 mod 2n for the chirp), then
 * rounded once, so the error grows like log2(n) ulps of double. The
 * inverse is conj(fft(conj(x))) / n, as in the f32 path. Lines are split
 * over the pool; each worker range has its own scratch. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "fft.h"
#include "kernels.h"
#include "params_fft.h"

typedef double _Complex zc;

typedef struct z_plan {
  int64_t n;    /* the transform length */
  int64_t m;    /* power-of-two length of the inner transforms (n itself, or Bluestein's) */
  zc *tw;       /* m / 2 twiddles exp(-2 pi i k / m) */
  zc *chirp;    /* Bluestein: n values exp(-pi i k^2 / n); NULL for powers of two */
  zc *bhat;     /* Bluestein: the FFT of the conjugate chirp, m values */
} z_plan;

static bool is_pow2(int64_t n) { return (n & (n - 1)) == 0; }

static zc z_of(long double re, long double im) { return CMPLX((double)re, (double)im); }

/* In-place forward transform of a power-of-two length m. */
static void fft_pow2(zc *a, int64_t m, const zc *tw) {
  for (int64_t i = 1, j = 0; i < m; i++) { /* bit-reversal permutation */
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1)
      j ^= bit;
    j |= bit;
    if (i < j) {
      zc t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
  }
  for (int64_t len = 2; len <= m; len <<= 1) {
    int64_t half = len >> 1, step = m / len;
    for (int64_t s = 0; s < m; s += len)
      for (int64_t k = 0; k < half; k++) {
        zc w = tw[k * step], u = a[s + k], v = a[s + k + half] * w;
        a[s + k] = u + v;
        a[s + k + half] = u - v;
      }
  }
}

static void plan_free(z_plan *p) {
  free(p->tw);
  free(p->chirp);
  free(p->bhat);
}

static int plan_make(z_plan *p, int64_t n) {
  memset(p, 0, sizeof *p);
  p->n = n;
  int64_t m = 1;
  if (is_pow2(n)) {
    m = n;
  } else {
    while (m < 2 * n - 1)
      m <<= 1;
  }
  p->m = m;
  p->tw = malloc((size_t)(m / 2 > 0 ? m / 2 : 1) * sizeof *p->tw);
  if (!p->tw)
    return -1;
  const long double two_pi = 6.283185307179586476925286766559005768L;
  for (int64_t k = 0; k < m / 2; k++) {
    long double t = two_pi * (long double)k / (long double)m;
    p->tw[k] = z_of(cosl(t), -sinl(t));
  }
  if (m == n)
    return 0;
  p->chirp = malloc((size_t)n * sizeof *p->chirp);
  p->bhat = calloc((size_t)m, sizeof *p->bhat);
  if (!p->chirp || !p->bhat)
    return -1;
  const long double pi = 3.141592653589793238462643383279502884L;
  /* k^2 mod 2n stepwise, exact: (k + 1)^2 = k^2 + 2k + 1. */
  for (int64_t k = 0, r = 0; k < n; k++) {
    long double t = pi * (long double)r / (long double)n;
    p->chirp[k] = z_of(cosl(t), -sinl(t));
    r = (r + 2 * k + 1) % (2 * n);
  }
  p->bhat[0] = conj(p->chirp[0]);
  for (int64_t k = 1; k < n; k++)
    p->bhat[k] = p->bhat[m - k] = conj(p->chirp[k]);
  fft_pow2(p->bhat, m, p->tw);
  return 0;
}

/* Forward transform of a (n values; Bluestein needs a of m) in place. */
static void transform(const z_plan *p, zc *a) {
  if (!p->chirp) {
    fft_pow2(a, p->m, p->tw);
    return;
  }
  int64_t n = p->n, m = p->m;
  for (int64_t k = 0; k < n; k++)
    a[k] *= p->chirp[k];
  for (int64_t k = n; k < m; k++)
    a[k] = 0;
  fft_pow2(a, m, p->tw);
  for (int64_t k = 0; k < m; k++) /* inverse by conjugation: conj(fft(conj(.))) / m */
    a[k] = conj(a[k] * p->bhat[k]);
  fft_pow2(a, m, p->tw);
  double inv_m = 1.0 / (double)m; /* m is a power of two: exact */
  for (int64_t k = 0; k < n; k++)
    a[k] = conj(a[k]) * inv_m * p->chirp[k];
}

typedef struct z_job {
  const z_plan *plan;
  const emlx_array *x;
  const zc *xd;
  zc *yd;
  int32_t axis;
  int inverse;
  int64_t len, inner; /* input entries used; elements after the axis */
  _Atomic int failed;
} z_job;

static void lines_range(void *ctx, int64_t r0, int64_t r1) {
  z_job *J = ctx;
  const z_plan *p = J->plan;
  zc *a = malloc((size_t)p->m * sizeof *a);
  if (!a) {
    atomic_store(&J->failed, 1);
    return;
  }
  int64_t n = p->n, sx = J->x->strides[J->axis];
  double scale = J->inverse ? 1.0 / (double)n : 1.0;
  for (int64_t r = r0; r < r1; r++) {
    int64_t o = r / J->inner, i = r % J->inner;
    const zc *src = J->xd + emlx__fft_line_offset(J->x, J->axis, o, i);
    for (int64_t k = 0; k < J->len; k++)
      a[k] = J->inverse ? conj(src[k * sx]) : src[k * sx];
    for (int64_t k = J->len; k < n; k++)
      a[k] = 0;
    transform(p, a);
    zc *dst = J->yd + o * n * J->inner + i;
    for (int64_t k = 0; k < n; k++)
      dst[k * J->inner] = J->inverse ? conj(a[k]) * scale : a[k];
  }
  free(a);
}

int emlx_cpu_fft_c128(const emlx_node *node, emlx_array *const *inputs,
                      emlx_array *const *outputs) {
  const emlx_fft_params *P = emlx__params(node);
  const emlx_array *x = inputs[0];
  emlx_array *y = outputs[0];
  if (!y)
    return 0;
  if (x->dtype != EMLX_COMPLEX128 || y->dtype != EMLX_COMPLEX128)
    return EMLX_FAIL("fft: complex128 path given %s -> %s", emlx_dtype_name(x->dtype),
                     emlx_dtype_name(y->dtype));
  if (emlx__array_alloc_data(y) != 0)
    return -1;
  if (y->size == 0)
    return 0;
  const int64_t n = P->n;
  int64_t len = x->shape[P->axis] < n ? x->shape[P->axis] : n;
  if (len == 0) {
    memset(emlx__data(y), 0, (size_t)y->size * sizeof(zc));
    return 0;
  }
  z_plan plan;
  if (plan_make(&plan, n) != 0) {
    plan_free(&plan);
    return EMLX_FAIL("fft: out of memory for a complex128 plan of length %lld", (long long)n);
  }
  int64_t inner = 1;
  for (int d = P->axis + 1; d < y->ndim; d++)
    inner *= y->shape[d];
  z_job J = {.plan = &plan,
             .x = x,
             .xd = emlx__data(x),
             .yd = emlx__data(y),
             .axis = P->axis,
             .inverse = P->inverse != 0,
             .len = len,
             .inner = inner};
  atomic_init(&J.failed, 0);
  int64_t rows = y->size / n;
  /* about 64K butterflies per task */
  int64_t grain = plan.m >= 65536 ? 1 : 65536 / plan.m;
  emlx__parallel_for(rows, grain, lines_range, &J);
  plan_free(&plan);
  return atomic_load(&J.failed) ? EMLX_FAIL("fft: out of memory for the transform's scratch") : 0;
}
