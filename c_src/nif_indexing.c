/* nif_indexing.c — the handlers of the indexing and layout rows: take,
 * take_along_axis, gather, scatter, slice_update, pad, concatenate, stack,
 * as_strided and view. Out-of-range indices follow the engine's default
 * bounds mode (see emlx/indexing.h); the :enable_bounds_check debug flag adds
 * an eager check on the Elixir side. */
#include <string.h>

#include "emlx_nif.h"

NIF_HANDLER(h_take) {
  AXIS_ARG(axis, 2);
  return nif_ok_tensor(c, emlx_take(a[0].array, a[1].array, axis, NULL));
}

NIF_HANDLER(h_take_along_axis) {
  AXIS_ARG(axis, 2);
  return nif_ok_tensor(c, emlx_take_along_axis(a[0].array, a[1].array, axis, NULL));
}

/* gather(tensor, [indices], axes, slice_sizes) */
NIF_HANDLER(h_gather) {
  if (a[1].n != a[2].n)
    return nif_error(c, "%d index tensors given for %d axes", a[1].n, a[2].n);
  return nif_ok_tensor(
      c, emlx_gather(a[0].array, a[1].arrays, a[1].n, a[2].axes, a[3].ints, a[3].n, NULL));
}

/* scatter(tensor, [indices], updates, axes) and scatter_add */
NIF_HANDLER(h_scatter) {
  if (a[1].n != a[3].n)
    return nif_error(c, "%d index tensors given for %d axes", a[1].n, a[3].n);
  return nif_ok_tensor(c,
                       emlx_scatter(a[0].array, a[1].arrays, a[1].n, a[2].array, a[3].axes, NULL));
}

NIF_HANDLER(h_scatter_add) {
  if (a[1].n != a[3].n)
    return nif_error(c, "%d index tensors given for %d axes", a[1].n, a[3].n);
  return nif_ok_tensor(
      c, emlx_scatter_add(a[0].array, a[1].arrays, a[1].n, a[2].array, a[3].axes, NULL));
}

/* slice_update(tensor, updates, starts, stops): strides 1 */
NIF_HANDLER(h_slice_update) {
  if (a[2].n != a[3].n)
    return nif_error(c, "starts and stops must have one entry per axis (got %d and %d)", a[2].n,
                     a[3].n);
  return nif_ok_tensor(
      c, emlx_slice_update(a[0].array, a[1].array, a[2].ints, a[3].ints, NULL, a[2].n));
}

/* pad(tensor, axes, low, high, pad_value): low[i]/high[i] elements around
 * axes[i] (negative removes); other axes are left alone. */
NIF_HANDLER(h_pad) {
  int nd = emlx_ndim(a[0].array);
  if (a[1].n != a[2].n || a[1].n != a[3].n)
    return nif_error(c, "axes, low and high must have the same length (got %d, %d, %d)", a[1].n,
                     a[2].n, a[3].n);
  int64_t low[EMLX_MAX_NDIM] = {0}, high[EMLX_MAX_NDIM] = {0};
  bool seen[EMLX_MAX_NDIM] = {false};
  for (int i = 0; i < a[1].n; i++) {
    int axis = a[1].axes[i] < 0 ? a[1].axes[i] + nd : a[1].axes[i];
    if (axis < 0 || axis >= nd)
      return nif_error(c, "axis %d is out of range for rank %d", a[1].axes[i], nd);
    if (seen[axis])
      return nif_error(c, "axis %d is listed twice", a[1].axes[i]);
    seen[axis] = true;
    low[axis] = a[2].ints[i];
    high[axis] = a[3].ints[i];
  }
  return nif_ok_tensor(c, emlx_pad_array(a[0].array, low, high, NULL, nd, a[4].array));
}

NIF_HANDLER(h_concatenate) {
  AXIS_ARG(axis, 1);
  return nif_ok_tensor(c, emlx_concatenate(a[0].arrays, a[0].n, axis));
}

NIF_HANDLER(h_stack) {
  AXIS_ARG(axis, 1);
  return nif_ok_tensor(c, emlx_stack(a[0].arrays, a[0].n, axis));
}

/* as_strided(tensor, shape, strides, offset), in elements */
NIF_HANDLER(h_as_strided) {
  if (a[1].n != a[2].n)
    return nif_error(c, "the shape has %d axes but %d strides were given", a[1].n, a[2].n);
  return nif_ok_tensor(c, emlx_as_strided(a[0].array, a[1].ints, a[2].ints, a[1].n, a[3].i));
}

NIF_HANDLER(h_view) { return nif_ok_tensor(c, emlx_view(a[0].array, a[1].dtype)); }
