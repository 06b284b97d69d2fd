/* shape_ops.c — constructors of the view ops: broadcast_to, reshape,
 * transpose, slice, squeeze, expand_dims. Each validates, computes the
 * result's shape and makes a node whose kernel shares the input's buffer
 * whenever the layout allows. */
#include <stdlib.h>
#include <string.h>

#include "ops_util.h"

static bool same_shape(const emlx_array *a, const int64_t *shape, int ndim) {
  return a->ndim == ndim && (ndim == 0 || memcmp(a->shape, shape, (size_t)ndim * 8) == 0);
}

emlx_array *emlx_broadcast_to(emlx_array *a, const int64_t *shape, int ndim) {
  EMLX_CHECK_ARRAY(a, "broadcast_to");
  if (ndim < 0 || ndim > EMLX_MAX_NDIM || (ndim > 0 && !shape))
    return EMLX_FAIL_NULL("broadcast_to: invalid target rank %d", ndim);
  if (ndim < a->ndim)
    return EMLX_FAIL_NULL("broadcast_to: cannot broadcast rank %d to rank %d", a->ndim, ndim);
  for (int i = 0; i < ndim; i++) {
    int ia = i - (ndim - a->ndim);
    if (shape[i] < 0)
      return EMLX_FAIL_NULL("broadcast_to: dimension %d has negative size %lld", i,
                            (long long)shape[i]);
    if (ia >= 0 && a->shape[ia] != 1 && a->shape[ia] != shape[i])
      return EMLX_FAIL_NULL("broadcast_to: axis %d of size %lld cannot become %lld", ia,
                            (long long)a->shape[ia], (long long)shape[i]);
  }
  if (same_shape(a, shape, ndim)) return emlx_retain(a);
  return emlx__op(EMLX_PRIM_BROADCAST, &a, 1, NULL, 0, a->dtype, shape, ndim);
}

emlx_array *emlx_reshape(emlx_array *a, const int64_t *shape, int ndim) {
  EMLX_CHECK_ARRAY(a, "reshape");
  if (ndim < 0 || ndim > EMLX_MAX_NDIM || (ndim > 0 && !shape))
    return EMLX_FAIL_NULL("reshape: invalid target rank %d", ndim);
  int64_t resolved[EMLX_MAX_NDIM];
  int infer = -1;
  int64_t known = 1, nonzero = 1; /* products of all and of the non-zero dims */
  for (int i = 0; i < ndim; i++) {
    resolved[i] = shape[i];
    if (shape[i] == -1) {
      if (infer >= 0) return EMLX_FAIL_NULL("reshape: more than one dimension is -1");
      infer = i;
    } else if (shape[i] < 0) {
      return EMLX_FAIL_NULL("reshape: dimension %d has negative size %lld", i,
                            (long long)shape[i]);
    } else if (shape[i] != 0 && nonzero > EMLX__MAX_ELEMENTS / shape[i]) {
      return EMLX_FAIL_NULL("reshape: target shape is too large (its non-zero dimensions "
                            "multiply past 2^60)");
    } else {
      known *= shape[i];
      nonzero *= shape[i] ? shape[i] : 1;
    }
  }
  if (infer >= 0) {
    if (known == 0)
      return EMLX_FAIL_NULL("reshape: cannot infer the -1 dimension of an empty shape");
    if (a->size % known != 0)
      return EMLX_FAIL_NULL("reshape: cannot reshape %lld elements into a shape with -1",
                            (long long)a->size);
    resolved[infer] = a->size / known;
    known = a->size;
  }
  if (known != a->size)
    return EMLX_FAIL_NULL("reshape: cannot reshape %lld elements into %lld", (long long)a->size,
                          (long long)known);
  if (same_shape(a, resolved, ndim)) return emlx_retain(a);
  return emlx__op(EMLX_PRIM_RESHAPE, &a, 1, NULL, 0, a->dtype, resolved, ndim);
}

emlx_array *emlx_transpose(emlx_array *a, const int *axes, int naxes) {
  EMLX_CHECK_ARRAY(a, "transpose");
  int nd = a->ndim;
  if (axes && naxes != nd)
    return EMLX_FAIL_NULL("transpose: %d axes given for an array of rank %d", naxes, nd);
  size_t psize = sizeof(emlx_transpose_params) + (size_t)nd * sizeof(int32_t);
  emlx_transpose_params *p = calloc(1, psize);
  if (!p) return EMLX_FAIL_NULL("transpose: out of memory");
  p->ndim = nd;
  bool seen[EMLX_MAX_NDIM] = {false};
  int64_t shape[EMLX_MAX_NDIM];
  bool identity = true;
  for (int i = 0; i < nd; i++) {
    int ax = axes ? axes[i] : nd - 1 - i;
    if (ax < 0) ax += nd;
    if (ax < 0 || ax >= nd || seen[ax]) {
      free(p);
      return EMLX_FAIL_NULL("transpose: axes are not a permutation of 0..%d", nd - 1);
    }
    seen[ax] = true;
    p->perm[i] = ax;
    shape[i] = a->shape[ax];
    identity = identity && ax == i;
  }
  emlx_array *out = identity
                        ? emlx_retain(a)
                        : emlx__op(EMLX_PRIM_TRANSPOSE, &a, 1, p, psize, a->dtype, shape, nd);
  free(p);
  return out;
}

int64_t emlx__clamp_slice(int64_t n, int64_t start, int64_t stop, int64_t step, int64_t *first) {
  if (step > 0) {
    if (start < 0) start += n;
    if (stop < 0) stop += n;
    start = start < 0 ? 0 : (start > n ? n : start);
    stop = stop < 0 ? 0 : (stop > n ? n : stop);
    *first = start;
    return stop > start ? (stop - start - 1) / step + 1 : 0; /* no overflow for huge steps */
  }
  if (start < 0) start += n;
  if (stop < 0) stop += n;
  start = start < -1 ? -1 : (start > n - 1 ? n - 1 : start);
  stop = stop < -1 ? -1 : (stop > n - 1 ? n - 1 : stop);
  *first = start;
  /* -step in unsigned: a step of INT64_MIN has no int64 negation */
  return start > stop ? (int64_t)((uint64_t)(start - stop - 1) / (0u - (uint64_t)step)) + 1 : 0;
}

emlx_array *emlx_slice(emlx_array *a, const int64_t *start, const int64_t *stop,
                       const int64_t *strides, int ndim) {
  EMLX_CHECK_ARRAY(a, "slice");
  if (ndim != a->ndim)
    return EMLX_FAIL_NULL("slice: %d indices given for an array of rank %d", ndim, a->ndim);
  if (ndim > 0 && (!start || !stop)) return EMLX_FAIL_NULL("slice: start or stop is NULL");
  size_t psize = sizeof(emlx_slice_params) + 2 * (size_t)ndim * sizeof(int64_t);
  emlx_slice_params *p = calloc(1, psize);
  if (!p) return EMLX_FAIL_NULL("slice: out of memory");
  p->ndim = ndim;
  int64_t shape[EMLX_MAX_NDIM];
  bool identity = true;
  for (int i = 0; i < ndim; i++) {
    int64_t step = strides ? strides[i] : 1;
    if (step == 0) {
      free(p);
      return EMLX_FAIL_NULL("slice: stride of axis %d must be non-zero", i);
    }
    int64_t first;
    shape[i] = emlx__clamp_slice(a->shape[i], start[i], stop[i], step, &first);
    p->vals[i] = shape[i] > 0 ? first : 0;
    p->vals[ndim + i] = step;
    identity = identity && shape[i] == a->shape[i] && (shape[i] <= 1 || (first == 0 && step == 1));
  }
  emlx_array *out =
      identity ? emlx_retain(a) : emlx__op(EMLX_PRIM_SLICE, &a, 1, p, psize, a->dtype, shape, ndim);
  free(p);
  return out;
}

emlx_array *emlx_squeeze(emlx_array *a, const int *axes, int naxes) {
  EMLX_CHECK_ARRAY(a, "squeeze");
  int64_t shape[EMLX_MAX_NDIM];
  int nd = 0;
  if (!axes) {
    for (int i = 0; i < a->ndim; i++)
      if (a->shape[i] != 1) shape[nd++] = a->shape[i];
  } else {
    int32_t ax[EMLX_MAX_NDIM];
    int n = emlx__normalize_axes(axes, naxes, a->ndim, ax, "squeeze");
    if (n < 0) return NULL;
    bool drop[EMLX_MAX_NDIM] = {false};
    for (int i = 0; i < n; i++) {
      if (a->shape[ax[i]] != 1)
        return EMLX_FAIL_NULL("squeeze: axis %d has size %lld, not 1", ax[i],
                              (long long)a->shape[ax[i]]);
      drop[ax[i]] = true;
    }
    for (int i = 0; i < a->ndim; i++)
      if (!drop[i]) shape[nd++] = a->shape[i];
  }
  return emlx_reshape(a, shape, nd);
}

emlx_array *emlx_expand_dims(emlx_array *a, const int *axes, int naxes) {
  EMLX_CHECK_ARRAY(a, "expand_dims");
  if (naxes < 0 || (naxes > 0 && !axes)) return EMLX_FAIL_NULL("expand_dims: invalid axes");
  int nd = a->ndim + naxes;
  if (nd > EMLX_MAX_NDIM) return EMLX_FAIL_NULL("expand_dims: rank %d is too large", nd);
  bool add[EMLX_MAX_NDIM] = {false};
  for (int i = 0; i < naxes; i++) {
    int ax = axes[i] < 0 ? axes[i] + nd : axes[i];
    if (ax < 0 || ax >= nd) return EMLX_FAIL_NULL("expand_dims: axis %d is out of range", axes[i]);
    if (add[ax]) return EMLX_FAIL_NULL("expand_dims: axis %d is repeated", axes[i]);
    add[ax] = true;
  }
  int64_t shape[EMLX_MAX_NDIM];
  for (int i = 0, j = 0; i < nd; i++) shape[i] = add[i] ? 1 : a->shape[j++];
  return emlx_reshape(a, shape, nd);
}
