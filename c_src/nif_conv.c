/* nif_conv.c — the handlers of the window and convolution rows:
 * window_sum / max / min / product, window_scatter_max / min and
 * conv_general (include/emlx/conv.h has the semantics). Per-axis option
 * lists must have one entry per window axis (per spatial axis for conv). */
#include "emlx_nif.h"

/* Checks that the option lists a[first..first+count) have n entries each. */
static bool same_lengths(nif_call *c, nif_arg *a, int first, int count, int n, ERL_NIF_TERM *err) {
  for (int k = first; k < first + count; k++)
    if (a[k].n != n) {
      *err = nif_error(c, "argument %d: expected %d entries, got %d", k + 1, n, a[k].n);
      return false;
    }
  return true;
}

/* window_<op>(tensor, window_dims, strides, padding_low, padding_high, window_dilations) */
static ERL_NIF_TERM window_reduce(nif_call *c, nif_arg *a, emlx_window_op op) {
  ERL_NIF_TERM err;
  if (!same_lengths(c, a, 2, 4, a[1].n, &err))
    return err;
  emlx_window_options o = {.strides = a[2].ints,
                           .padding_low = a[3].ints,
                           .padding_high = a[4].ints,
                           .window_dilations = a[5].ints};
  return nif_ok_tensor(c, emlx_window_reduce(a[0].array, op, a[1].ints, a[1].n, &o));
}

NIF_HANDLER(h_window_sum) { return window_reduce(c, a, EMLX_WINDOW_SUM); }
NIF_HANDLER(h_window_max) { return window_reduce(c, a, EMLX_WINDOW_MAX); }
NIF_HANDLER(h_window_min) { return window_reduce(c, a, EMLX_WINDOW_MIN); }
NIF_HANDLER(h_window_product) { return window_reduce(c, a, EMLX_WINDOW_PRODUCT); }

/* window_scatter_<op>(tensor, source, init_value, window_dims, strides, padding_low,
 * padding_high) */
static ERL_NIF_TERM window_scatter(nif_call *c, nif_arg *a, bool is_max) {
  ERL_NIF_TERM err;
  if (!same_lengths(c, a, 4, 3, a[3].n, &err))
    return err;
  emlx_window_options o = {
      .strides = a[4].ints, .padding_low = a[5].ints, .padding_high = a[6].ints};
  emlx_array *r =
      is_max ? emlx_window_scatter_max(a[0].array, a[1].array, a[2].array, a[3].ints, a[3].n, &o)
             : emlx_window_scatter_min(a[0].array, a[1].array, a[2].array, a[3].ints, a[3].n, &o);
  return nif_ok_tensor(c, r);
}

NIF_HANDLER(h_window_scatter_max) { return window_scatter(c, a, true); }
NIF_HANDLER(h_window_scatter_min) { return window_scatter(c, a, false); }

/* conv_general(input, kernel, strides, padding_low, padding_high, kernel_dilation,
 * input_dilation, feature_group_count[, batch_group_count, flip]) */
NIF_HANDLER(h_conv_general) {
  int ns = emlx_ndim(a[0].array) - 2;
  ERL_NIF_TERM err;
  if (ns < 1)
    return nif_error(c, "input must have rank >= 3 (N, spatial..., C), got %d", ns + 2);
  if (!same_lengths(c, a, 2, 5, ns, &err))
    return err;
  emlx_conv_options o = {.strides = a[2].ints,
                         .padding_low = a[3].ints,
                         .padding_high = a[4].ints,
                         .kernel_dilation = a[5].ints,
                         .input_dilation = a[6].ints,
                         .groups = a[7].i};
  if (o.groups < 1)
    return nif_error(c, "feature_group_count must be >= 1, got %ld", (long)o.groups);
  if (c->argc == 10) {
    o.batch_groups = a[8].i;
    o.flip = a[9].b;
    if (o.batch_groups < 1)
      return nif_error(c, "batch_group_count must be >= 1, got %ld", (long)o.batch_groups);
  }
  return nif_ok_tensor(c, emlx_conv_general(a[0].array, a[1].array, &o));
}
