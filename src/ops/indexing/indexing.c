/* indexing.c — constructors of the layout ops of the indexing family:
 * slice_update (static and dynamic starts), pad, concatenate, stack,
 * as_strided and view. Each validates its arguments, works out the result's
 * shape and dtype (casting inputs where MLX promotes), and makes a node whose
 * kernel is in src/cpu/indexing/indexing_layout.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_util.h"
#include "params_indexing.h"

#define MAX_EXTENT ((int64_t)1 << 60)

static bool same_shape(const int64_t *a, const int64_t *b, int n) {
  return n == 0 || memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* ---- slice_update ---------------------------------------------------------------- */

/* update cast to dtype and broadcast to shape (a new reference or NULL). */
static emlx_array *fit_update(emlx_array *update, emlx_dtype dtype, const int64_t *shape, int nd,
                              const char *op) {
  emlx_array *cast = emlx__cast(update, dtype);
  if (!cast)
    return NULL;
  emlx_array *b = emlx_broadcast_to(cast, shape, nd);
  emlx_release(cast);
  if (!b) {
    char why[256];
    snprintf(why, sizeof why, "%s", emlx_last_error());
    emlx__set_error("%s: the update does not broadcast to the slice's shape (%s)", op, why);
  }
  return b;
}

emlx_array *emlx_slice_update(emlx_array *src, emlx_array *update, const int64_t *start,
                              const int64_t *stop, const int64_t *strides, int ndim) {
  EMLX_CHECK_ARRAY(src, "slice_update");
  EMLX_CHECK_ARRAY(update, "slice_update");
  if (ndim != src->ndim)
    return EMLX_FAIL_NULL("slice_update: %d indices given for an array of rank %d", ndim,
                          src->ndim);
  if (ndim > 0 && (!start || !stop))
    return EMLX_FAIL_NULL("slice_update: start or stop is NULL");
  int64_t shape[EMLX_MAX_NDIM], first[EMLX_MAX_NDIM], step[EMLX_MAX_NDIM];
  bool whole = true;
  for (int i = 0; i < ndim; i++) {
    step[i] = strides ? strides[i] : 1;
    if (step[i] == 0)
      return EMLX_FAIL_NULL("slice_update: stride of axis %d must be non-zero", i);
    shape[i] = emlx__clamp_slice(src->shape[i], start[i], stop[i], step[i], &first[i]);
    if (shape[i] == 0)
      first[i] = 0;
    if (shape[i] <= 1) /* the step is never taken: keep the kernel's stride product small */
      step[i] = step[i] > 0 ? 1 : -1;
    whole =
        whole && shape[i] == src->shape[i] && (shape[i] <= 1 || (first[i] == 0 && step[i] == 1));
  }
  emlx_array *upd = fit_update(update, src->dtype, shape, ndim, "slice_update");
  if (!upd || whole)
    return upd; /* the update replaces everything (as MLX) */
  size_t psize = sizeof(emlx_slice_update_params) + 2 * (size_t)ndim * sizeof(int64_t);
  emlx_slice_update_params *p = calloc(1, psize);
  emlx_array *out = NULL;
  if (!p) {
    emlx__set_error("slice_update: out of memory");
  } else {
    p->ndim = ndim;
    for (int i = 0; i < ndim; i++) {
      p->vals[i] = first[i];
      p->vals[ndim + i] = step[i];
    }
    emlx_array *in[2] = {src, upd};
    out = emlx__op(EMLX_PRIM_SLICE_UPDATE, in, 2, p, psize, src->dtype, src->shape, ndim);
  }
  free(p);
  emlx_release(upd);
  return out;
}

emlx_array *emlx_slice_update_dynamic(emlx_array *src, emlx_array *update,
                                      emlx_array *start_indices, const int *axes, int naxes) {
  const char *op = "slice_update_dynamic";
  EMLX_CHECK_ARRAY(src, op);
  EMLX_CHECK_ARRAY(update, op);
  int nd = src->ndim;
  if (update->ndim != nd)
    return EMLX_FAIL_NULL("%s: the update has rank %d, the array %d", op, update->ndim, nd);
  for (int i = 0; i < nd; i++)
    if (update->shape[i] > src->shape[i])
      return EMLX_FAIL_NULL("%s: the update's axis %d (%lld) is larger than the array's (%lld)", op,
                            i, (long long)update->shape[i], (long long)src->shape[i]);
  if (naxes < 0 || naxes > nd || (naxes > 0 && (!axes || !start_indices)))
    return EMLX_FAIL_NULL("%s: invalid axes or start indices", op);
  if (naxes > 0) {
    if (!emlx_dtype_is_integer(start_indices->dtype))
      return EMLX_FAIL_NULL("%s: start indices must have an integer dtype, got %s", op,
                            emlx_dtype_name(start_indices->dtype));
    if (start_indices->ndim > 1 || start_indices->size != naxes)
      return EMLX_FAIL_NULL("%s: start indices must be a 0-d or 1-d array of %d elements", op,
                            naxes);
  }
  size_t psize = sizeof(emlx_slice_update_params) + (size_t)nd * sizeof(int64_t);
  emlx_slice_update_params *p = calloc(1, psize);
  if (!p)
    return EMLX_FAIL_NULL("%s: out of memory", op);
  p->ndim = nd;
  p->dynamic = 1;
  for (int i = 0; i < nd; i++)
    p->vals[i] = -1;
  for (int k = 0; k < naxes; k++) {
    int ax = axes[k] < 0 ? axes[k] + nd : axes[k];
    if (ax < 0 || ax >= nd || p->vals[ax] >= 0) {
      free(p);
      return EMLX_FAIL_NULL("%s: axis %d is out of range or repeated", op, axes[k]);
    }
    p->vals[ax] = k;
  }
  emlx_array *upd = emlx__cast(update, src->dtype);
  emlx_array *out = NULL;
  if (upd) {
    emlx_array *in[3] = {src, upd, start_indices};
    out = emlx__op(EMLX_PRIM_SLICE_UPDATE, in, naxes > 0 ? 3 : 2, p, psize, src->dtype, src->shape,
                   nd);
  }
  emlx_release(upd);
  free(p);
  return out;
}

/* ---- pad ------------------------------------------------------------------------- */

emlx_array *emlx_pad_array(emlx_array *a, const int64_t *low, const int64_t *high,
                           const int64_t *interior, int ndim, emlx_array *value) {
  EMLX_CHECK_ARRAY(a, "pad");
  EMLX_CHECK_ARRAY(value, "pad");
  if (ndim != a->ndim)
    return EMLX_FAIL_NULL("pad: %d pad widths given for an array of rank %d", ndim, a->ndim);
  if (ndim > 0 && (!low || !high))
    return EMLX_FAIL_NULL("pad: low or high is NULL");
  if (value->size != 1)
    return EMLX_FAIL_NULL("pad: the pad value must have one element, got %lld",
                          (long long)value->size);
  int64_t shape[EMLX_MAX_NDIM];
  bool identity = true;
  for (int i = 0; i < ndim; i++) {
    int64_t n = a->shape[i], lo = low[i], hi = high[i], in = interior ? interior[i] : 0;
    if (in < 0 || in > MAX_EXTENT)
      return EMLX_FAIL_NULL("pad: interior padding of axis %d must be in [0, 2^60], got %lld", i,
                            (long long)in);
    if (lo < -MAX_EXTENT || lo > MAX_EXTENT || hi < -MAX_EXTENT || hi > MAX_EXTENT)
      return EMLX_FAIL_NULL("pad: padding of axis %d is out of range", i);
    int64_t grown = n;
    if (n > 1 && in > 0) {
      if (n - 1 > (MAX_EXTENT - n) / in)
        return EMLX_FAIL_NULL("pad: axis %d would be too large", i);
      grown += (n - 1) * in;
    }
    shape[i] = grown + lo + hi;
    if (shape[i] < 0)
      return EMLX_FAIL_NULL("pad: axis %d would have negative size %lld (size %lld, low %lld, "
                            "high %lld, interior %lld)",
                            i, (long long)shape[i], (long long)n, (long long)lo, (long long)hi,
                            (long long)in);
    identity = identity && lo == 0 && hi == 0 && (in == 0 || n <= 1);
  }
  if (identity)
    return emlx_retain(a);
  size_t psize = sizeof(emlx_pad_params) + 3 * (size_t)ndim * sizeof(int64_t);
  emlx_pad_params *p = calloc(1, psize);
  if (!p)
    return EMLX_FAIL_NULL("pad: out of memory");
  p->ndim = ndim;
  for (int i = 0; i < ndim; i++) {
    p->vals[3 * i] = low[i];
    p->vals[3 * i + 1] = high[i];
    p->vals[3 * i + 2] = interior ? interior[i] : 0;
  }
  emlx_array *v = emlx__cast(value, a->dtype);
  emlx_array *out = NULL;
  if (v) {
    emlx_array *in[2] = {a, v};
    out = emlx__op(EMLX_PRIM_PAD, in, 2, p, psize, a->dtype, shape, ndim);
  }
  emlx_release(v);
  free(p);
  return out;
}

emlx_array *emlx_pad(emlx_array *a, const int64_t *low, const int64_t *high,
                     const int64_t *interior, int ndim, double value) {
  EMLX_CHECK_ARRAY(a, "pad");
  emlx_array *v = emlx_scalar_tensor(value, a->dtype, a->device);
  if (!v)
    return NULL;
  emlx_array *out = emlx_pad_array(a, low, high, interior, ndim, v);
  emlx_release(v);
  return out;
}

/* ---- concatenate / stack ----------------------------------------------------------- */

emlx_array *emlx_concatenate(emlx_array *const *arrays, int n, int axis) {
  if (n < 1 || !arrays)
    return EMLX_FAIL_NULL("concatenate: no arrays given");
  for (int i = 0; i < n; i++)
    if (!arrays[i])
      return EMLX_FAIL_NULL("concatenate: array %d is NULL", i);
  const emlx_array *a0 = arrays[0];
  int nd = a0->ndim;
  if (nd == 0)
    return EMLX_FAIL_NULL("concatenate: cannot concatenate 0-d arrays");
  int ax = axis < 0 ? axis + nd : axis;
  if (ax < 0 || ax >= nd)
    return EMLX_FAIL_NULL("concatenate: axis %d is out of range for rank %d", axis, nd);
  int64_t shape[EMLX_MAX_NDIM];
  memcpy(shape, a0->shape, (size_t)nd * sizeof *shape);
  emlx_dtype dtype = a0->dtype;
  for (int i = 1; i < n; i++) {
    const emlx_array *a = arrays[i];
    if (a->ndim != nd)
      return EMLX_FAIL_NULL("concatenate: array %d has rank %d, array 0 has rank %d", i, a->ndim,
                            nd);
    for (int d = 0; d < nd; d++)
      if (d != ax && a->shape[d] != shape[d])
        return EMLX_FAIL_NULL("concatenate: array %d has size %lld on axis %d, array 0 has "
                              "%lld (only axis %d may differ)",
                              i, (long long)a->shape[d], d, (long long)shape[d], ax);
    if (a->shape[ax] > MAX_EXTENT - shape[ax])
      return EMLX_FAIL_NULL("concatenate: the result is too large");
    shape[ax] += a->shape[ax];
    dtype = emlx_promote_types(dtype, a->dtype);
  }
  if (n == 1)
    return emlx__cast(arrays[0], dtype);
  emlx_array *local[8];
  emlx_array **in = n <= 8 ? local : calloc((size_t)n, sizeof *in);
  if (!in)
    return EMLX_FAIL_NULL("concatenate: out of memory");
  emlx_array *out = NULL;
  int made = 0;
  for (; made < n; made++)
    if (!(in[made] = emlx__cast(arrays[made], dtype)))
      break;
  if (made == n) {
    emlx_concatenate_params p = {ax};
    out = emlx__op(EMLX_PRIM_CONCATENATE, in, n, &p, sizeof p, dtype, shape, nd);
  }
  for (int i = 0; i < made; i++)
    emlx_release(in[i]);
  if (in != local)
    free(in);
  return out;
}

emlx_array *emlx_stack(emlx_array *const *arrays, int n, int axis) {
  if (n < 1 || !arrays)
    return EMLX_FAIL_NULL("stack: no arrays given");
  for (int i = 0; i < n; i++)
    if (!arrays[i])
      return EMLX_FAIL_NULL("stack: array %d is NULL", i);
  int nd = arrays[0]->ndim;
  if (nd + 1 > EMLX_MAX_NDIM)
    return EMLX_FAIL_NULL("stack: rank %d is too large", nd + 1);
  int ax = axis < 0 ? axis + nd + 1 : axis;
  if (ax < 0 || ax > nd)
    return EMLX_FAIL_NULL("stack: axis %d is out of range for rank %d", axis, nd + 1);
  for (int i = 1; i < n; i++)
    if (arrays[i]->ndim != nd || !same_shape(arrays[i]->shape, arrays[0]->shape, nd))
      return EMLX_FAIL_NULL("stack: array %d's shape differs from array 0's", i);
  emlx_array *local[8];
  emlx_array **ex = n <= 8 ? local : calloc((size_t)n, sizeof *ex);
  if (!ex)
    return EMLX_FAIL_NULL("stack: out of memory");
  int made = 0;
  for (; made < n; made++)
    if (!(ex[made] = emlx_expand_dims(arrays[made], &ax, 1)))
      break;
  emlx_array *out = made == n ? emlx_concatenate(ex, n, ax) : NULL;
  for (int i = 0; i < made; i++)
    emlx_release(ex[i]);
  if (ex != local)
    free(ex);
  return out;
}

/* ---- as_strided / view ------------------------------------------------------------ */

emlx_array *emlx_as_strided(emlx_array *a, const int64_t *shape, const int64_t *strides, int ndim,
                            int64_t offset) {
  EMLX_CHECK_ARRAY(a, "as_strided");
  if (ndim < 0 || ndim > EMLX_MAX_NDIM || (ndim > 0 && !shape))
    return EMLX_FAIL_NULL("as_strided: invalid rank %d or NULL shape", ndim);
  int64_t st[EMLX_MAX_NDIM], size;
  if (!emlx__shape_size(shape, ndim, &size)) {
    char why[256];
    snprintf(why, sizeof why, "%s", emlx_last_error());
    return EMLX_FAIL_NULL("as_strided: %s", why);
  }
  if (strides)
    memcpy(st, strides, (size_t)ndim * sizeof *st);
  else
    emlx__row_major_strides(shape, ndim, st);
  if (offset < 0)
    return EMLX_FAIL_NULL("as_strided: offset %lld is negative", (long long)offset);
  /* The lowest and highest element the view can reach must lie inside a. */
  int64_t lo = offset, hi = offset;
  bool overflow = false;
  if (size > 0)
    for (int i = 0; i < ndim; i++) {
      int64_t reach;
      overflow |= __builtin_mul_overflow(shape[i] - 1, st[i], &reach);
      overflow |= reach < 0 ? __builtin_add_overflow(lo, reach, &lo)
                            : __builtin_add_overflow(hi, reach, &hi);
    }
  if (overflow || (size > 0 && (lo < 0 || hi >= a->size)) || (size == 0 && offset > a->size))
    return EMLX_FAIL_NULL("as_strided: the view reaches outside the array's %lld elements "
                          "(offset %lld, shape and strides reach [%lld, %lld])",
                          (long long)a->size, (long long)offset, (long long)lo, (long long)hi);
  size_t psize = sizeof(emlx_as_strided_params) + (size_t)ndim * sizeof(int64_t);
  emlx_as_strided_params *p = calloc(1, psize);
  if (!p)
    return EMLX_FAIL_NULL("as_strided: out of memory");
  p->offset = offset;
  memcpy(p->strides, st, (size_t)ndim * sizeof *st);
  emlx_array *out = emlx__op(EMLX_PRIM_AS_STRIDED, &a, 1, p, psize, a->dtype, shape, ndim);
  free(p);
  return out;
}

emlx_array *emlx_view(emlx_array *a, emlx_dtype dtype) {
  EMLX_CHECK_ARRAY(a, "view");
  if (!emlx_dtype_is_valid(dtype))
    return EMLX_FAIL_NULL("view: invalid dtype %d", (int)dtype);
  if (dtype == a->dtype)
    return emlx_retain(a);
  int64_t isz = (int64_t)emlx_dtype_size(a->dtype), osz = (int64_t)emlx_dtype_size(dtype);
  int nd = a->ndim;
  int64_t shape[EMLX_MAX_NDIM];
  memcpy(shape, a->shape, (size_t)nd * sizeof *shape);
  if (isz != osz) {
    if (nd == 0)
      return EMLX_FAIL_NULL("view: a 0-d array can only be viewed as a dtype of the same size "
                            "(%s is %lld bytes, %s is %lld)",
                            emlx_dtype_name(a->dtype), (long long)isz, emlx_dtype_name(dtype),
                            (long long)osz);
    int64_t bytes = shape[nd - 1] * isz;
    if (bytes % osz != 0)
      return EMLX_FAIL_NULL("view: the last axis holds %lld bytes, not a multiple of %s's %lld",
                            (long long)bytes, emlx_dtype_name(dtype), (long long)osz);
    shape[nd - 1] = bytes / osz;
  }
  return emlx__op(EMLX_PRIM_VIEW_DTYPE, &a, 1, NULL, 0, dtype, shape, nd);
}
