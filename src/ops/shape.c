/* shape.c — broadcasting and axis rules used by every op constructor. */
#include <stdlib.h>
#include <string.h>

#include "ops_util.h"

int emlx__broadcast_shapes(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out,
                           const char *op) {
  int n = na > nb ? na : nb;
  for (int i = 0; i < n; i++) {
    int ia = na - n + i, ib = nb - n + i;
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      emlx__set_error("%s: shapes cannot be broadcast (axis %d: %lld vs %lld)", op, i,
                      (long long)da, (long long)db);
      return -1;
    }
    out[i] = da == 1 ? db : da;
  }
  return n;
}

static int cmp_i32(const void *x, const void *y) {
  int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
  return (a > b) - (a < b);
}

int emlx__normalize_axes(const int *axes, int naxes, int ndim, int32_t *out, const char *op) {
  if (!axes) {
    for (int i = 0; i < ndim; i++) out[i] = i;
    return ndim;
  }
  if (naxes < 0 || naxes > ndim) {
    emlx__set_error("%s: %d axes given for an array of rank %d", op, naxes, ndim);
    return -1;
  }
  for (int i = 0; i < naxes; i++) {
    int ax = axes[i] < 0 ? axes[i] + ndim : axes[i];
    if (ax < 0 || ax >= ndim) {
      emlx__set_error("%s: axis %d is out of range for rank %d", op, axes[i], ndim);
      return -1;
    }
    out[i] = ax;
  }
  qsort(out, (size_t)naxes, sizeof *out, cmp_i32);
  for (int i = 1; i < naxes; i++)
    if (out[i] == out[i - 1]) {
      emlx__set_error("%s: axis %d is repeated", op, out[i]);
      return -1;
    }
  return naxes;
}

emlx_array *emlx__cast(emlx_array *a, emlx_dtype dtype) {
  if (a->dtype == dtype) return emlx_retain(a);
  return emlx__op(EMLX_PRIM_ASTYPE, &a, 1, NULL, 0, dtype, a->shape, a->ndim);
}
