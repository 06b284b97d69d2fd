/* nif_model_ops.c — the handlers of MLX's everyday model-building ops
 * (statistics and softmax, the elementwise compositions, layout ops, top-k
 * and partitions, linspace / tri, addmm). Axes lists follow nif_reduce.c:
 * nil and [] both mean every axis. Functions without an axis argument
 * (topk/2, repeat/2, put_along_axis/3) work on the flattened tensor. */
#include <stdlib.h>

#include "emlx_nif.h"

#define ALL_IF_EMPTY(arg) ((arg).present && (arg).n > 0 ? (arg).axes : NULL)
#define NALL_IF_EMPTY(arg) ((arg).present && (arg).n > 0 ? (arg).n : 0)

#define INT_ARG(var, k, what)                                                                      \
  if (a[k].i < INT32_MIN || a[k].i > INT32_MAX)                                                    \
    return nif_error(c, "argument %d: %s %ld is out of range", (k) + 1, what, (long)a[k].i);       \
  int var = (int)a[k].i

/* ---- statistics and softmax --------------------------------------------------- */
NIF_HANDLER(h_mean) {
  return nif_ok_tensor(c, emlx_mean(a[0].array, ALL_IF_EMPTY(a[1]), NALL_IF_EMPTY(a[1]), a[2].b));
}

NIF_HANDLER(h_var) {
  INT_ARG(ddof, 3, "ddof");
  return nif_ok_tensor(c,
                       emlx_var(a[0].array, ALL_IF_EMPTY(a[1]), NALL_IF_EMPTY(a[1]), a[2].b, ddof));
}

NIF_HANDLER(h_std) {
  INT_ARG(ddof, 3, "ddof");
  return nif_ok_tensor(c,
                       emlx_std(a[0].array, ALL_IF_EMPTY(a[1]), NALL_IF_EMPTY(a[1]), a[2].b, ddof));
}

NIF_HANDLER(h_logsumexp) {
  return nif_ok_tensor(c,
                       emlx_logsumexp(a[0].array, ALL_IF_EMPTY(a[1]), NALL_IF_EMPTY(a[1]), a[2].b));
}

NIF_HANDLER(h_softmax) {
  return nif_ok_tensor(c,
                       emlx_softmax(a[0].array, ALL_IF_EMPTY(a[1]), NALL_IF_EMPTY(a[1]), a[2].b));
}

NIF_HANDLER(h_log_softmax) {
  return nif_ok_tensor(
      c, emlx_log_softmax(a[0].array, ALL_IF_EMPTY(a[1]), NALL_IF_EMPTY(a[1]), a[2].b));
}

/* ---- elementwise ---------------------------------------------------------------- */
NIF_HANDLER(h_logaddexp) { return nif_ok_tensor(c, emlx_logaddexp(a[0].array, a[1].array)); }
NIF_HANDLER(h_log2) { return nif_ok_tensor(c, emlx_log2(a[0].array)); }
NIF_HANDLER(h_log10) { return nif_ok_tensor(c, emlx_log10(a[0].array)); }
NIF_HANDLER(h_isfinite) { return nif_ok_tensor(c, emlx_isfinite(a[0].array)); }
NIF_HANDLER(h_isposinf) { return nif_ok_tensor(c, emlx_isposinf(a[0].array)); }
NIF_HANDLER(h_isneginf) { return nif_ok_tensor(c, emlx_isneginf(a[0].array)); }
NIF_HANDLER(h_square) { return nif_ok_tensor(c, emlx_square(a[0].array)); }
NIF_HANDLER(h_reciprocal) { return nif_ok_tensor(c, emlx_reciprocal(a[0].array)); }

/* nan_to_num(tensor, nan) or nan_to_num(tensor, nan, posinf, neginf) */
NIF_HANDLER(h_nan_to_num) {
  if (c->argc == 2)
    return nif_ok_tensor(c, emlx_nan_to_num(a[0].array, a[1].f, NULL, NULL));
  return nif_ok_tensor(c, emlx_nan_to_num(a[0].array, a[1].f, &a[2].f, &a[3].f));
}

/* ---- creation --------------------------------------------------------------------- */
NIF_HANDLER(h_linspace) {
  return nif_ok_tensor(c, emlx_linspace(a[0].f, a[1].f, a[2].i, a[3].dtype, a[4].device));
}

NIF_HANDLER(h_tri) {
  return nif_ok_tensor(c, emlx_tri(a[0].i, a[1].i, a[2].i, a[3].dtype, a[4].device));
}

/* ---- layout --------------------------------------------------------------------------- */
NIF_HANDLER(h_tril) { return nif_ok_tensor(c, emlx_tril(a[0].array, a[1].i)); }
NIF_HANDLER(h_triu) { return nif_ok_tensor(c, emlx_triu(a[0].array, a[1].i)); }

NIF_HANDLER(h_diagonal) {
  AXIS_ARG(axis1, 2);
  AXIS_ARG(axis2, 3);
  return nif_ok_tensor(c, emlx_diagonal(a[0].array, a[1].i, axis1, axis2));
}

NIF_HANDLER(h_trace) {
  AXIS_ARG(axis1, 2);
  AXIS_ARG(axis2, 3);
  return nif_ok_tensor(c, emlx_trace(a[0].array, a[1].i, axis1, axis2));
}

NIF_HANDLER(h_flip) {
  return nif_ok_tensor(c, emlx_flip(a[0].array, ALL_IF_EMPTY(a[1]), NALL_IF_EMPTY(a[1])));
}

/* roll(tensor, shifts, axes | nil): nil rolls the flattened tensor */
NIF_HANDLER(h_roll) {
  if (!a[2].present)
    return nif_ok_tensor(c, emlx_roll(a[0].array, a[1].ints, NULL, a[1].n));
  if (a[1].n != a[2].n)
    return nif_error(c, "%d shifts for %d axes", a[1].n, a[2].n);
  return nif_ok_tensor(c, emlx_roll(a[0].array, a[1].ints, a[2].axes, a[1].n));
}

NIF_HANDLER(h_tile) { return nif_ok_tensor(c, emlx_tile(a[0].array, a[1].ints, a[1].n)); }

/* repeat(tensor, repeats) on the flattened tensor; repeat(tensor, repeats, axis) */
NIF_HANDLER(h_repeat) {
  if (c->argc == 2)
    return nif_ok_tensor(c, emlx_repeat(a[0].array, a[1].i, EMLX_AXIS_NONE));
  AXIS_ARG(axis, 2);
  return nif_ok_tensor(c, emlx_repeat(a[0].array, a[1].i, axis));
}

NIF_HANDLER(h_flatten) {
  AXIS_ARG(start, 1);
  AXIS_ARG(end, 2);
  return nif_ok_tensor(c, emlx_flatten(a[0].array, start, end));
}

NIF_HANDLER(h_moveaxis) {
  AXIS_ARG(src, 1);
  AXIS_ARG(dst, 2);
  return nif_ok_tensor(c, emlx_moveaxis(a[0].array, src, dst));
}

NIF_HANDLER(h_swapaxes) {
  AXIS_ARG(x, 1);
  AXIS_ARG(y, 2);
  return nif_ok_tensor(c, emlx_swapaxes(a[0].array, x, y));
}

/* {:ok, [tensors]} taking ownership of all n arrays. */
static ERL_NIF_TERM ok_list(nif_call *c, emlx_array **arrays, int n) {
  ERL_NIF_TERM list = enif_make_list(c->env, 0);
  ERL_NIF_TERM *items = enif_alloc(sizeof(ERL_NIF_TERM) * (size_t)(n > 0 ? n : 1));
  if (!items) {
    for (int i = 0; i < n; i++)
      emlx_release(arrays[i]);
    return nif_error(c, "out of memory");
  }
  for (int i = 0; i < n; i++) {
    int ok;
    items[i] = nif_make_tensor(c->env, arrays[i], &ok);
    if (!ok) {
      for (int j = i + 1; j < n; j++)
        emlx_release(arrays[j]);
      enif_free(items);
      return nif_error(c, "out of memory for the tensor resource");
    }
  }
  list = enif_make_list_from_array(c->env, items, (unsigned)n);
  enif_free(items);
  return nif_ok(c, list);
}

/* split(tensor, num_splits, axis) */
NIF_HANDLER(h_split) {
  AXIS_ARG(axis, 2);
  if (a[1].i < 1 || a[1].i > 65536)
    return nif_error(c, "argument 2: num_splits must be in 1..65536 (got %ld)", (long)a[1].i);
  int n = (int)a[1].i;
  emlx_array **out = enif_alloc(sizeof(emlx_array *) * (size_t)n);
  if (!out)
    return nif_error(c, "out of memory");
  ERL_NIF_TERM r =
      emlx_split(a[0].array, n, axis, out) == 0 ? ok_list(c, out, n) : nif_engine_error(c);
  enif_free(out);
  return r;
}

/* split_at(tensor, indices, axis) */
NIF_HANDLER(h_split_at) {
  AXIS_ARG(axis, 2);
  int n = a[1].n + 1;
  emlx_array **out = enif_alloc(sizeof(emlx_array *) * (size_t)n);
  if (!out)
    return nif_error(c, "out of memory");
  ERL_NIF_TERM r = emlx_split_at(a[0].array, a[1].ints, a[1].n, axis, out) == 0
                       ? ok_list(c, out, n)
                       : nif_engine_error(c);
  enif_free(out);
  return r;
}

NIF_HANDLER(h_outer) { return nif_ok_tensor(c, emlx_outer(a[0].array, a[1].array)); }

/* put_along_axis(tensor, indices, values) flattened, or (..., axis) */
NIF_HANDLER(h_put_along_axis) {
  if (c->argc == 3)
    return nif_ok_tensor(
        c, emlx_put_along_axis(a[0].array, a[1].array, a[2].array, EMLX_AXIS_NONE, NULL));
  AXIS_ARG(axis, 3);
  return nif_ok_tensor(c, emlx_put_along_axis(a[0].array, a[1].array, a[2].array, axis, NULL));
}

/* ---- top-k and partitions ----------------------------------------------------------- */
NIF_HANDLER(h_topk) {
  INT_ARG(k, 1, "k");
  if (c->argc == 2)
    return nif_ok_tensor(c, emlx_topk(a[0].array, k, EMLX_AXIS_NONE));
  AXIS_ARG(axis, 2);
  return nif_ok_tensor(c, emlx_topk(a[0].array, k, axis));
}

NIF_HANDLER(h_partition) {
  INT_ARG(kth, 1, "kth");
  AXIS_ARG(axis, 2);
  return nif_ok_tensor(c, emlx_partition(a[0].array, kth, axis));
}

NIF_HANDLER(h_argpartition) {
  INT_ARG(kth, 1, "kth");
  AXIS_ARG(axis, 2);
  return nif_ok_tensor(c, emlx_argpartition(a[0].array, kth, axis));
}

/* ---- matmul ------------------------------------------------------------------------------ */
NIF_HANDLER(h_addmm) {
  return nif_ok_tensor(c, emlx_addmm(a[0].array, a[1].array, a[2].array, a[3].f, a[4].f));
}
