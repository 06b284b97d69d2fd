/* topk.c — topk, partition and argpartition through the stable sort: a full
 * sort is one valid partition (MLX leaves the order within each side
 * unspecified), and the k largest are the last k of the sorted axis. */
#include "ops_util.h"

static int kth_axis(emlx_array *a, int *axis, emlx_array **flat, const char *op) {
  *flat = NULL;
  if (*axis == EMLX_AXIS_NONE) {
    int64_t n = a->size;
    *flat = emlx_reshape(a, &n, 1);
    if (!*flat)
      return -1;
    *axis = 0;
    return 0;
  }
  int nd = a->ndim, ax = *axis < 0 ? *axis + nd : *axis;
  if (nd == 0)
    return EMLX_FAIL("%s: a 0-d array has no axis", op);
  if (ax < 0 || ax >= nd)
    return EMLX_FAIL("%s: axis %d is out of range for rank %d", op, *axis, nd);
  *axis = ax;
  return 0;
}

emlx_array *emlx_topk(emlx_array *a, int k, int axis) {
  EMLX_CHECK_ARRAY(a, "topk");
  emlx_array *f;
  if (kth_axis(a, &axis, &f, "topk") != 0)
    return NULL;
  emlx_array *x = f ? f : a;
  int64_t d = x->shape[axis];
  if (k < 0 || k > d) {
    emlx_release(f);
    return EMLX_FAIL_NULL("topk: k %d is out of range for an axis of size %lld", k, (long long)d);
  }
  emlx_array *s = emlx_sort(x, axis, NULL);
  int64_t start[EMLX_MAX_NDIM], stop[EMLX_MAX_NDIM];
  for (int i = 0; i < x->ndim; i++) {
    start[i] = 0;
    stop[i] = x->shape[i];
  }
  start[axis] = d - k;
  emlx_array *r = s ? emlx_slice(s, start, stop, NULL, x->ndim) : NULL;
  emlx_release(s);
  emlx_release(f);
  return r;
}

static emlx_array *partition(emlx_array *a, int kth, int axis, bool arg, const char *op) {
  EMLX_CHECK_ARRAY(a, op);
  emlx_array *f;
  if (kth_axis(a, &axis, &f, op) != 0)
    return NULL;
  emlx_array *x = f ? f : a;
  int64_t d = x->shape[axis];
  if (kth < -d || kth >= d) {
    emlx_release(f);
    return EMLX_FAIL_NULL("%s: kth %d is out of range for an axis of size %lld", op, kth,
                          (long long)d);
  }
  emlx_array *r = arg ? emlx_argsort(x, axis, NULL) : emlx_sort(x, axis, NULL);
  emlx_release(f);
  return r;
}

emlx_array *emlx_partition(emlx_array *a, int kth, int axis) {
  return partition(a, kth, axis, false, "partition");
}
emlx_array *emlx_argpartition(emlx_array *a, int kth, int axis) {
  return partition(a, kth, axis, true, "argpartition");
}
