/* nif_fast.c — the handlers of the fused transformer kernels' rows
 * (emlx/fast.h): fast_rms_norm, fast_layer_norm(_no_bias), the four rope
 * entry points and fast_swiglu. Weight and bias may be nil (none). The
 * engine validates shapes and dtypes; here only C ranges are checked. */
#include <float.h>

#include "emlx_nif.h"

#define FLOAT_ARG(var, k, what)                                                                    \
  if (a[k].f > (double)FLT_MAX || a[k].f < -(double)FLT_MAX)                                       \
    return nif_error(c, "argument %d: %s %g is out of float32 range", (k) + 1, what, a[k].f);      \
  float var = (float)a[k].f

#define DIMS_ARG(var, k)                                                                           \
  if (a[k].i < 0 || a[k].i > INT32_MAX)                                                            \
    return nif_error(c, "argument %d: dims %ld is out of range", (k) + 1, (long)a[k].i);           \
  int var = (int)a[k].i

/* fast_rms_norm(x, weight | nil, eps) */
NIF_HANDLER(h_fast_rms_norm) {
  FLOAT_ARG(eps, 2, "eps");
  return nif_ok_tensor(c, emlx_fast_rms_norm(a[0].array, a[1].array, eps));
}

/* fast_layer_norm(x, weight | nil, bias | nil, eps) */
NIF_HANDLER(h_fast_layer_norm) {
  FLOAT_ARG(eps, 3, "eps");
  return nif_ok_tensor(c, emlx_fast_layer_norm(a[0].array, a[1].array, a[2].array, eps));
}

/* fast_layer_norm_no_bias(x, weight | nil, eps) */
NIF_HANDLER(h_fast_layer_norm_no_bias) {
  FLOAT_ARG(eps, 2, "eps");
  return nif_ok_tensor(c, emlx_fast_layer_norm_no_bias(a[0].array, a[1].array, eps));
}

/* fast_rope(a, dims, traditional, base, scale, offset) */
NIF_HANDLER(h_fast_rope) {
  DIMS_ARG(dims, 1);
  FLOAT_ARG(base, 3, "base");
  FLOAT_ARG(scale, 4, "scale");
  return nif_ok_tensor(c, emlx_fast_rope(a[0].array, dims, a[2].b, base, scale, a[5].i));
}

/* fast_rope_ids(a, dims, traditional, base, scale, offsets) */
NIF_HANDLER(h_fast_rope_ids) {
  DIMS_ARG(dims, 1);
  FLOAT_ARG(base, 3, "base");
  FLOAT_ARG(scale, 4, "scale");
  return nif_ok_tensor(c, emlx_fast_rope_ids(a[0].array, dims, a[2].b, base, scale, a[5].array));
}

/* fast_rope_positions(a, dims, traditional, base, scale, position_ids) */
NIF_HANDLER(h_fast_rope_positions) {
  DIMS_ARG(dims, 1);
  FLOAT_ARG(base, 3, "base");
  FLOAT_ARG(scale, 4, "scale");
  return nif_ok_tensor(c,
                       emlx_fast_rope_positions(a[0].array, dims, a[2].b, base, scale, a[5].array));
}

/* fast_rope_with_freqs(a, dims, traditional, scale, offsets, freqs) */
NIF_HANDLER(h_fast_rope_with_freqs) {
  DIMS_ARG(dims, 1);
  FLOAT_ARG(scale, 3, "scale");
  return nif_ok_tensor(
      c, emlx_fast_rope_with_freqs(a[0].array, dims, a[2].b, scale, a[4].array, a[5].array));
}

/* fast_swiglu(gate, up) */
NIF_HANDLER(h_fast_swiglu) { return nif_ok_tensor(c, emlx_fast_swiglu(a[0].array, a[1].array)); }
