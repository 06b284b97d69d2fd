/* nif_reduce.c — the handlers of the reduction, scan and sorting rows.
 *
 * Reductions over a list of axes treat nil and [] alike: every axis (as the
 * original EMLX did for sum, product, all and any, and as Nx expects). */
#include "emlx_nif.h"

#define ALL_IF_EMPTY(arg) ((arg).present && (arg).n > 0 ? (arg).axes : NULL)
#define NALL_IF_EMPTY(arg) ((arg).present && (arg).n > 0 ? (arg).n : 0)

#define REDUCE(handler, fn)                                                                        \
  NIF_HANDLER(handler) {                                                                           \
    return nif_ok_tensor(c, fn(a[0].array, ALL_IF_EMPTY(a[1]), NALL_IF_EMPTY(a[1]), a[2].b));      \
  }

REDUCE(h_sum, emlx_sum)
REDUCE(h_max, emlx_max)
REDUCE(h_min, emlx_min)
REDUCE(h_product, emlx_product)
REDUCE(h_all, emlx_all)
REDUCE(h_any, emlx_any)

/* argmax(tensor, keep_axes) over the flattened tensor; argmax(tensor, axis,
 * keep_axes) along one axis. Indices are uint32 (MLX's choice). */
NIF_HANDLER(h_argmax) {
  if (c->argc == 2)
    return nif_ok_tensor(c, emlx_argmax_all(a[0].array, a[1].b, NULL));
  AXIS_ARG(axis, 1);
  return nif_ok_tensor(c, emlx_argmax(a[0].array, axis, a[2].b, NULL));
}

NIF_HANDLER(h_argmin) {
  if (c->argc == 2)
    return nif_ok_tensor(c, emlx_argmin_all(a[0].array, a[1].b, NULL));
  AXIS_ARG(axis, 1);
  return nif_ok_tensor(c, emlx_argmin(a[0].array, axis, a[2].b, NULL));
}

#define SCAN(handler, fn)                                                                          \
  NIF_HANDLER(handler) {                                                                           \
    AXIS_ARG(axis, 1);                                                                             \
    return nif_ok_tensor(c, fn(a[0].array, axis, a[2].b, a[3].b));                                 \
  }

SCAN(h_cumulative_sum, emlx_cumulative_sum)
SCAN(h_cumulative_product, emlx_cumulative_product)
SCAN(h_cumulative_max, emlx_cumulative_max)
SCAN(h_cumulative_min, emlx_cumulative_min)

NIF_HANDLER(h_sort) {
  AXIS_ARG(axis, 1);
  return nif_ok_tensor(c, emlx_sort(a[0].array, axis, NULL));
}

NIF_HANDLER(h_argsort) {
  AXIS_ARG(axis, 1);
  return nif_ok_tensor(c, emlx_argsort(a[0].array, axis, NULL));
}
