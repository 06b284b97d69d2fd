/* fft.c — constructors of the FFT family: fft/ifft along one axis,
 * fft2/ifft2 and fftn/ifftn over several. Every transform is a chain of
 * one-axis FFT nodes (the transforms are separable); the input is converted
 * to complex64 first (complex128 from complex128 and float64). Semantics and errors: include/emlx/fft.h. */
#include <string.h>

#include "ops_util.h"
#include "params_fft.h"

/* One FFT node along ax (already normalised) with length n >= 1. */
static emlx_array *fft_axis(emlx_array *c, int ax, int64_t n, bool inverse) {
  int64_t shape[EMLX_MAX_NDIM];
  for (int d = 0; d < c->ndim; d++)
    shape[d] = c->shape[d];
  shape[ax] = n;
  emlx_fft_params p;
  memset(&p, 0, sizeof p);
  p.n = n;
  p.axis = ax;
  p.inverse = inverse;
  return emlx__op(EMLX_PRIM_FFT, &c, 1, &p, sizeof p, c->dtype, shape, c->ndim);
}

/* The length asked for axis ax: s (0: the axis's own); -1 with an error
 * when it is negative or resolves to 0. */
static int64_t resolve_length(const emlx_array *a, int ax, int64_t s, const char *op) {
  if (s < 0)
    return EMLX_FAIL("%s: invalid FFT length %lld for axis %d", op, (long long)s, ax);
  int64_t n = s ? s : a->shape[ax];
  if (n == 0)
    return EMLX_FAIL("%s: invalid FFT length 0 for axis %d (an empty axis needs an explicit "
                     "length)",
                     op, ax);
  return n;
}

/* Validates axes (distinct, in range; NULL: all) and lengths, then chains
 * the nodes, last listed axis first (numpy's order). */
static emlx_array *fftn_impl(emlx_array *a, const int64_t *s, const int *axes, int naxes,
                             bool inverse, const char *op) {
  EMLX_CHECK_ARRAY(a, op);
  int nd = a->ndim;
  int32_t ax[EMLX_MAX_NDIM];
  int64_t len[EMLX_MAX_NDIM];
  if (!axes) {
    naxes = nd;
    for (int d = 0; d < nd; d++)
      ax[d] = d;
  } else {
    if (naxes < 0 || naxes > EMLX_MAX_NDIM)
      return EMLX_FAIL_NULL("%s: invalid number of axes %d", op, naxes);
    for (int i = 0; i < naxes; i++) {
      int v = axes[i] < 0 ? axes[i] + nd : axes[i];
      if (v < 0 || v >= nd)
        return EMLX_FAIL_NULL("%s: axis %d is out of range for rank %d", op, axes[i], nd);
      for (int j = 0; j < i; j++)
        if (ax[j] == v)
          return EMLX_FAIL_NULL("%s: axis %d is repeated", op, axes[i]);
      ax[i] = v;
    }
  }
  for (int i = 0; i < naxes; i++) {
    len[i] = resolve_length(a, ax[i], s ? s[i] : 0, op);
    if (len[i] < 0)
      return NULL;
  }
  bool wide = a->dtype == EMLX_COMPLEX128 || a->dtype == EMLX_FLOAT64;
  emlx_array *cur = emlx__cast(a, wide ? EMLX_COMPLEX128 : EMLX_COMPLEX64);
  for (int i = naxes - 1; i >= 0 && cur; i--) {
    emlx_array *next = fft_axis(cur, ax[i], len[i], inverse);
    emlx_release(cur);
    cur = next;
  }
  return cur;
}

static emlx_array *fft1(emlx_array *a, int64_t n, int axis, bool inverse, const char *op) {
  EMLX_CHECK_ARRAY(a, op);
  int ax = axis < 0 ? axis + a->ndim : axis;
  if (ax < 0 || ax >= a->ndim)
    return EMLX_FAIL_NULL("%s: axis %d is out of range for rank %d", op, axis, a->ndim);
  return fftn_impl(a, &n, &ax, 1, inverse, op);
}

static emlx_array *fft2(emlx_array *a, const int64_t *s, const int *axes, bool inverse,
                        const char *op) {
  EMLX_CHECK_ARRAY(a, op);
  static const int last_two[2] = {-2, -1};
  if (!axes && a->ndim < 2)
    return EMLX_FAIL_NULL("%s: needs an array of rank >= 2 (got rank %d)", op, a->ndim);
  return fftn_impl(a, s, axes ? axes : last_two, 2, inverse, op);
}

emlx_array *emlx_fft(emlx_array *a, int64_t n, int axis) { return fft1(a, n, axis, false, "fft"); }
emlx_array *emlx_ifft(emlx_array *a, int64_t n, int axis) { return fft1(a, n, axis, true, "ifft"); }
emlx_array *emlx_fft2(emlx_array *a, const int64_t *s, const int *axes) {
  return fft2(a, s, axes, false, "fft2");
}
emlx_array *emlx_ifft2(emlx_array *a, const int64_t *s, const int *axes) {
  return fft2(a, s, axes, true, "ifft2");
}
emlx_array *emlx_fftn(emlx_array *a, const int64_t *s, const int *axes, int naxes) {
  return fftn_impl(a, s, axes, naxes, false, "fftn");
}
emlx_array *emlx_ifftn(emlx_array *a, const int64_t *s, const int *axes, int naxes) {
  return fftn_impl(a, s, axes, naxes, true, "ifftn");
}
