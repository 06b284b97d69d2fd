/* window_util.h — what the window kernels (window.c, window_scatter.c) share:
 * the per-axis window geometry read from the params and the range of window
 * taps that land inside the input for one output coordinate. */
#ifndef EMLX_CPU_WINDOW_UTIL_H
#define EMLX_CPU_WINDOW_UTIL_H

#include "internal.h"
#include "params_conv.h"

typedef struct win_axis {
  int64_t n;      /* input extent */
  int64_t stride; /* input element stride */
  int64_t w, s, lo, d;
} win_axis;

static inline void win_axes(const emlx_window_params *p, const emlx_array *a, win_axis *ax) {
  for (int i = 0; i < p->ndim; i++) {
    const int64_t *v = p->vals + EMLX_WIN_NV * i;
    ax[i].n = a->shape[i];
    ax[i].stride = a->strides[i];
    ax[i].w = v[EMLX_WIN_W];
    ax[i].s = v[EMLX_WIN_S];
    ax[i].lo = v[EMLX_WIN_LO];
    ax[i].d = v[EMLX_WIN_D];
  }
}

/* Taps k in [*kmin, *kmax) of output coordinate o fall inside [0, n); the
 * first one at input index *first. Returns false when there is none. */
static inline bool win_taps(const win_axis *ax, int64_t o, int64_t *kmin, int64_t *kmax,
                            int64_t *first) {
  int64_t start = o * ax->s - ax->lo;
  int64_t k0 = start >= 0 ? 0 : (-start + ax->d - 1) / ax->d;
  if (start > ax->n - 1)
    return false;
  int64_t k1 = (ax->n - 1 - start) / ax->d + 1;
  if (k1 > ax->w)
    k1 = ax->w;
  if (k0 >= k1)
    return false;
  *kmin = k0;
  *kmax = k1;
  *first = start + k0 * ax->d;
  return true;
}

#endif
