/* window.c — constructors of the window reductions (window_sum / max / min /
 * product) and the window scatters (window_scatter_max / min).
 *
 * Both validate the window against the input's rank, compute the window
 * output shape (see include/emlx/conv.h) and make one node whose params
 * carry, per axis, window, stride, padding and dilation. */
#include <stdlib.h>
#include <string.h>

#include "ops_util.h"
#include "params_conv.h"

/* Fills p->vals and the window output shape; 0 or -1 with an error. */
static int window_setup(const emlx_array *a, const int64_t *window_dims, int ndim,
                        const emlx_window_options *opts, emlx_window_params *p, int64_t *oshape,
                        const char *op) {
  if (ndim != a->ndim)
    return EMLX_FAIL("%s: window has %d dimensions but the input has rank %d", op, ndim, a->ndim);
  if (ndim > 0 && !window_dims)
    return EMLX_FAIL("%s: window_dims is NULL", op);
  if (emlx_dtype_is_complex(a->dtype))
    return EMLX_FAIL("%s: complex inputs are not supported", op);
  p->ndim = ndim;
  for (int i = 0; i < ndim; i++) {
    int64_t w = window_dims[i];
    int64_t s = opts && opts->strides ? opts->strides[i] : 1;
    int64_t lo = opts && opts->padding_low ? opts->padding_low[i] : 0;
    int64_t hi = opts && opts->padding_high ? opts->padding_high[i] : 0;
    int64_t d = opts && opts->window_dilations ? opts->window_dilations[i] : 1;
    if (w < 1)
      return EMLX_FAIL("%s: window dimension %d is %lld (must be >= 1)", op, i, (long long)w);
    if (s < 1)
      return EMLX_FAIL("%s: stride %d is %lld (must be >= 1)", op, i, (long long)s);
    if (d < 1)
      return EMLX_FAIL("%s: window dilation %d is %lld (must be >= 1)", op, i, (long long)d);
    if (lo < 0 || hi < 0)
      return EMLX_FAIL("%s: negative padding on axis %d", op, i);
    const int64_t big = INT64_C(1) << 40;
    if (w > big || s > big || d > big || lo > big || hi > big)
      return EMLX_FAIL("%s: window parameter too large on axis %d", op, i);
    int64_t eff = (w - 1) * d + 1;
    int64_t span = a->shape[i] + lo + hi;
    oshape[i] = span < eff ? 0 : (span - eff) / s + 1;
    int64_t *v = p->vals + EMLX_WIN_NV * i;
    v[EMLX_WIN_W] = w;
    v[EMLX_WIN_S] = s;
    v[EMLX_WIN_LO] = lo;
    v[EMLX_WIN_HI] = hi;
    v[EMLX_WIN_D] = d;
  }
  return 0;
}

static emlx_window_params *params_new(int ndim, size_t *size) {
  *size = sizeof(emlx_window_params) + (size_t)(EMLX_WIN_NV * ndim) * sizeof(int64_t);
  emlx_window_params *p = calloc(1, *size);
  if (!p)
    emlx__set_error("window: out of memory");
  return p;
}

emlx_array *emlx_window_reduce(emlx_array *a, emlx_window_op op, const int64_t *window_dims,
                               int ndim, const emlx_window_options *opts) {
  static const char *const names[] = {"window_sum", "window_max", "window_min", "window_product"};
  if ((unsigned)op >= EMLX_WINDOW_OP_COUNT)
    return EMLX_FAIL_NULL("window_reduce: invalid op %d", (int)op);
  const char *name = names[op];
  EMLX_CHECK_ARRAY(a, name);
  if (ndim < 0 || ndim > EMLX_MAX_NDIM)
    return EMLX_FAIL_NULL("%s: invalid window rank %d", name, ndim);
  size_t psize;
  emlx_window_params *p = params_new(ndim, &psize);
  if (!p)
    return NULL;
  p->op = (int32_t)op;
  int64_t oshape[EMLX_MAX_NDIM];
  emlx_array *out = NULL;
  if (window_setup(a, window_dims, ndim, opts, p, oshape, name) == 0) {
    emlx_array *in[1] = {a};
    out = emlx__op(EMLX_PRIM_WINDOW_REDUCE, in, 1, p, psize, a->dtype, oshape, ndim);
  }
  free(p);
  return out;
}

emlx_array *emlx_window_sum(emlx_array *a, const int64_t *window_dims, int ndim,
                            const emlx_window_options *opts) {
  return emlx_window_reduce(a, EMLX_WINDOW_SUM, window_dims, ndim, opts);
}
emlx_array *emlx_window_max(emlx_array *a, const int64_t *window_dims, int ndim,
                            const emlx_window_options *opts) {
  return emlx_window_reduce(a, EMLX_WINDOW_MAX, window_dims, ndim, opts);
}
emlx_array *emlx_window_min(emlx_array *a, const int64_t *window_dims, int ndim,
                            const emlx_window_options *opts) {
  return emlx_window_reduce(a, EMLX_WINDOW_MIN, window_dims, ndim, opts);
}
emlx_array *emlx_window_product(emlx_array *a, const int64_t *window_dims, int ndim,
                                const emlx_window_options *opts) {
  return emlx_window_reduce(a, EMLX_WINDOW_PRODUCT, window_dims, ndim, opts);
}

static emlx_array *window_scatter(emlx_array *a, emlx_array *source, emlx_array *init,
                                  const int64_t *window_dims, int ndim,
                                  const emlx_window_options *opts, emlx_window_op op,
                                  const char *name) {
  EMLX_CHECK_ARRAY(a, name);
  EMLX_CHECK_ARRAY(source, name);
  EMLX_CHECK_ARRAY(init, name);
  if (source->device != a->device || init->device != a->device)
    return EMLX_FAIL_NULL("%s: inputs are on different devices", name);
  if (ndim < 0 || ndim > EMLX_MAX_NDIM)
    return EMLX_FAIL_NULL("%s: invalid window rank %d", name, ndim);
  if (init->size != 1)
    return EMLX_FAIL_NULL("%s: init_value must have one element (has %lld)", name,
                          (long long)init->size);
  if (emlx_dtype_is_complex(source->dtype) || emlx_dtype_is_complex(init->dtype))
    return EMLX_FAIL_NULL("%s: complex inputs are not supported", name);
  size_t psize;
  emlx_window_params *p = params_new(ndim, &psize);
  if (!p)
    return NULL;
  p->op = (int32_t)op;
  int64_t oshape[EMLX_MAX_NDIM];
  emlx_array *out = NULL, *src = NULL, *ini = NULL;
  if (window_setup(a, window_dims, ndim, opts, p, oshape, name) != 0)
    goto done;
  bool same = source->ndim == ndim;
  for (int i = 0; same && i < ndim; i++)
    same = source->shape[i] == oshape[i];
  if (!same) {
    emlx__set_error("%s: source shape does not match the windows' output shape", name);
    goto done;
  }
  src = emlx__cast(source, a->dtype);
  ini = src ? emlx__cast(init, a->dtype) : NULL;
  if (ini) {
    emlx_array *in[3] = {a, src, ini};
    out = emlx__op(EMLX_PRIM_WINDOW_SCATTER, in, 3, p, psize, a->dtype, a->shape, a->ndim);
  }
done:
  emlx_release(src);
  emlx_release(ini);
  free(p);
  return out;
}

emlx_array *emlx_window_scatter_max(emlx_array *a, emlx_array *source, emlx_array *init_value,
                                    const int64_t *window_dims, int ndim,
                                    const emlx_window_options *opts) {
  return window_scatter(a, source, init_value, window_dims, ndim, opts, EMLX_WINDOW_MAX,
                        "window_scatter_max");
}
emlx_array *emlx_window_scatter_min(emlx_array *a, emlx_array *source, emlx_array *init_value,
                                    const int64_t *window_dims, int ndim,
                                    const emlx_window_options *opts) {
  return window_scatter(a, source, init_value, window_dims, ndim, opts, EMLX_WINDOW_MIN,
                        "window_scatter_min");
}
