/* ops_util.h — validation and shape rules shared by the op constructors. */
#ifndef EMLX_OPS_UTIL_H
#define EMLX_OPS_UTIL_H

#include "internal.h"

/* NumPy/MLX broadcast of two shapes into out (EMLX_MAX_NDIM entries); returns
 * the result's rank, or -1 with an error naming op. */
int emlx__broadcast_shapes(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out,
                           const char *op);
/* Normalises `naxes` axes against rank ndim into a sorted list without
 * duplicates (axes NULL: all axes). Returns the count or -1 with an error. */
int emlx__normalize_axes(const int *axes, int naxes, int ndim, int32_t *out, const char *op);
/* Python's slice clamping of start:stop:step (step != 0, any other int64,
 * INT64_MIN included) over an axis of n elements: returns the slice's length
 * and sets *first to its first index. */
int64_t emlx__clamp_slice(int64_t n, int64_t start, int64_t stop, int64_t step, int64_t *first);
/* The array itself (a new reference) when it already has dtype, else an
 * astype node. */
emlx_array *emlx__cast(emlx_array *a, emlx_dtype dtype);

#define EMLX_CHECK_ARRAY(a, op)                                                                  \
  do {                                                                                           \
    if (!(a)) return EMLX_FAIL_NULL("%s: input array is NULL", op);                              \
  } while (0)

#endif
