/* indexing_gather.c — constructors of the indexed ops: gather, scatter,
 * scatter_add, take, take_along_axis, and the process-wide bounds-check
 * switch. Index arrays keep their own integer dtype (kernels read any);
 * index shapes are broadcast here with views, so kernels see arrays of one
 * shape. Kernels: src/cpu/indexing/indexing_gather.c and indexing_scatter.c. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ops_util.h"
#include "params_indexing.h"

static _Atomic bool g_bounds_check;

bool emlx_set_bounds_check(bool on) { return atomic_exchange(&g_bounds_check, on); }
bool emlx_get_bounds_check(void) { return atomic_load(&g_bounds_check); }

/* The per-node index policy from the options (NULL: defaults). */
static int index_mode(const emlx_index_options *opts, emlx_index_mode *m, const char *op) {
  emlx_bounds_mode b = opts ? opts->bounds : EMLX_BOUNDS_DEFAULT;
  if (b != EMLX_BOUNDS_DEFAULT && b != EMLX_BOUNDS_CLAMP && b != EMLX_BOUNDS_CHECK)
    return EMLX_FAIL("%s: invalid bounds mode %d", op, (int)b);
  memset(m, 0, sizeof *m);
  m->check = b == EMLX_BOUNDS_CHECK || (b == EMLX_BOUNDS_DEFAULT && emlx_get_bounds_check())
                 ? EMLX_IDX_CHECK
                 : EMLX_IDX_CLAMP;
  m->wrap = !(opts && opts->no_negative_wrap);
  return 0;
}

static int check_index_dtype(const emlx_array *idx, const char *op) {
  if (!emlx_dtype_is_integer(idx->dtype))
    return EMLX_FAIL("%s: indices must have an integer dtype, got %s", op,
                     emlx_dtype_name(idx->dtype));
  return 0;
}

/* ---- gather / scatter -------------------------------------------------------------- */

/* Validates the index arrays and axes shared by gather and scatter, fills
 * the params' axes, and broadcasts the index arrays to one shape (views,
 * into bidx). Returns the index rank, or -1. */
static int prepare_indices(const emlx_array *a, emlx_array *const *indices, int n, const int *axes,
                           emlx_gather_params *p, int64_t *ishape, emlx_array **bidx,
                           const char *op) {
  if (n < 0 || n > a->ndim)
    return EMLX_FAIL("%s: %d index arrays given for an array of rank %d", op, n, a->ndim);
  if (n > 0 && (!indices || !axes))
    return EMLX_FAIL("%s: indices or axes is NULL", op);
  bool seen[EMLX_MAX_NDIM] = {false};
  int ni = 0;
  for (int k = 0; k < n; k++) {
    if (!indices[k])
      return EMLX_FAIL("%s: index array %d is NULL", op, k);
    if (check_index_dtype(indices[k], op) != 0)
      return -1;
    int ax = axes[k] < 0 ? axes[k] + a->ndim : axes[k];
    if (ax < 0 || ax >= a->ndim)
      return EMLX_FAIL("%s: axis %d is out of range for rank %d", op, axes[k], a->ndim);
    if (seen[ax])
      return EMLX_FAIL("%s: axis %d is repeated", op, axes[k]);
    seen[ax] = true;
    p->axes[k] = ax;
    int64_t tmp[EMLX_MAX_NDIM];
    ni = emlx__broadcast_shapes(ishape, ni, indices[k]->shape, indices[k]->ndim, tmp, op);
    if (ni < 0)
      return -1;
    memcpy(ishape, tmp, (size_t)ni * sizeof *tmp);
  }
  if (ni + a->ndim > EMLX_MAX_NDIM)
    return EMLX_FAIL("%s: the result's rank %d is too large", op, ni + a->ndim);
  for (int k = 0; k < n; k++) {
    bidx[k] = emlx_broadcast_to(indices[k], ishape, ni);
    if (!bidx[k]) {
      for (int j = 0; j < k; j++)
        emlx_release(bidx[j]);
      return -1;
    }
  }
  return ni;
}

emlx_array *emlx_gather(emlx_array *a, emlx_array *const *indices, int nindices, const int *axes,
                        const int64_t *slice_sizes, int nslice, const emlx_index_options *opts) {
  EMLX_CHECK_ARRAY(a, "gather");
  if (nslice != a->ndim)
    return EMLX_FAIL_NULL("gather: %d slice sizes given for an array of rank %d", nslice, a->ndim);
  if (nslice > 0 && !slice_sizes)
    return EMLX_FAIL_NULL("gather: slice_sizes is NULL");
  for (int i = 0; i < nslice; i++)
    if (slice_sizes[i] < 0 || slice_sizes[i] > a->shape[i])
      return EMLX_FAIL_NULL("gather: slice size %lld of axis %d is not in [0, %lld]",
                            (long long)slice_sizes[i], i, (long long)a->shape[i]);
  if (nindices < 0 || nindices > a->ndim)
    return EMLX_FAIL_NULL("gather: %d index arrays given for an array of rank %d", nindices,
                          a->ndim);
  size_t psize = sizeof(emlx_gather_params) + (size_t)nindices * sizeof(int32_t);
  emlx_gather_params *p = calloc(1, psize);
  emlx_array *in[1 + EMLX_MAX_NDIM];
  int64_t shape[EMLX_MAX_NDIM];
  if (!p)
    return EMLX_FAIL_NULL("gather: out of memory");
  p->naxes = nindices;
  int ni = index_mode(opts, &p->mode, "gather") == 0
               ? prepare_indices(a, indices, nindices, axes, p, shape, in + 1, "gather")
               : -1;
  emlx_array *out = NULL;
  if (ni >= 0) {
    memcpy(shape + ni, slice_sizes, (size_t)nslice * sizeof *shape);
    in[0] = a;
    out = emlx__op(EMLX_PRIM_GATHER, in, 1 + nindices, p, psize, a->dtype, shape, ni + nslice);
    for (int k = 0; k < nindices; k++)
      emlx_release(in[1 + k]);
  }
  free(p);
  return out;
}

static emlx_array *scatter_op(emlx_prim prim, emlx_array *a, emlx_array *const *indices, int n,
                              emlx_array *updates, const int *axes,
                              const emlx_index_options *opts) {
  const char *op = emlx_prim_table[prim].name;
  EMLX_CHECK_ARRAY(a, op);
  EMLX_CHECK_ARRAY(updates, op);
  if (n < 0 || n > a->ndim)
    return EMLX_FAIL_NULL("%s: %d index arrays given for an array of rank %d", op, n, a->ndim);
  size_t psize = sizeof(emlx_gather_params) + (size_t)n * sizeof(int32_t);
  emlx_gather_params *p = calloc(1, psize);
  if (!p)
    return EMLX_FAIL_NULL("%s: out of memory", op);
  p->naxes = n;
  emlx_array *in[2 + EMLX_MAX_NDIM];
  int64_t ishape[EMLX_MAX_NDIM];
  int ni = index_mode(opts, &p->mode, op) == 0
               ? prepare_indices(a, indices, n, axes, p, ishape, in + 1, op)
               : -1;
  if (ni < 0) {
    free(p);
    return NULL;
  }
  emlx_array *out = NULL;
  bool ok = updates->ndim == ni + a->ndim;
  if (!ok)
    emlx__set_error("%s: updates have rank %d, expected %d (the index rank %d plus the array's "
                    "rank %d)",
                    op, updates->ndim, ni + a->ndim, ni, a->ndim);
  for (int i = 0; ok && i < ni; i++)
    if (updates->shape[i] != ishape[i]) {
      ok = false;
      emlx__set_error("%s: updates' axis %d has size %lld, the broadcast indices %lld", op, i,
                      (long long)updates->shape[i], (long long)ishape[i]);
    }
  for (int i = 0; ok && i < a->ndim; i++)
    if (updates->shape[ni + i] > a->shape[i]) {
      ok = false;
      emlx__set_error("%s: the update slice's axis %d (%lld) is larger than the array's (%lld)", op,
                      i, (long long)updates->shape[ni + i], (long long)a->shape[i]);
    }
  emlx_array *upd = ok ? emlx__cast(updates, a->dtype) : NULL;
  if (upd) {
    in[0] = a;
    in[1 + n] = upd;
    out = emlx__op(prim, in, 2 + n, p, psize, a->dtype, a->shape, a->ndim);
  }
  emlx_release(upd);
  for (int k = 0; k < n; k++)
    emlx_release(in[1 + k]);
  free(p);
  return out;
}

emlx_array *emlx_scatter(emlx_array *a, emlx_array *const *indices, int nindices,
                         emlx_array *updates, const int *axes, const emlx_index_options *opts) {
  return scatter_op(EMLX_PRIM_SCATTER, a, indices, nindices, updates, axes, opts);
}

emlx_array *emlx_scatter_add(emlx_array *a, emlx_array *const *indices, int nindices,
                             emlx_array *updates, const int *axes, const emlx_index_options *opts) {
  return scatter_op(EMLX_PRIM_SCATTER_ADD, a, indices, nindices, updates, axes, opts);
}

/* ---- take / take_along_axis -------------------------------------------------------- */

/* a flattened to 1-d (a view when the layout allows). */
static emlx_array *flatten(emlx_array *a) {
  int64_t n = a->size;
  return emlx_reshape(a, &n, 1);
}

static emlx_array *take_axis(emlx_array *a, emlx_array *indices, int axis,
                             const emlx_take_params *p) {
  int nd = a->ndim;
  int ax = axis < 0 ? axis + nd : axis;
  if (ax < 0 || ax >= nd)
    return EMLX_FAIL_NULL("take: axis %d is out of range for rank %d", axis, nd);
  if (a->shape[ax] == 0 && indices->size > 0)
    return EMLX_FAIL_NULL("take: cannot take %lld elements from axis %d of size 0",
                          (long long)indices->size, ax);
  int ond = nd - 1 + indices->ndim;
  if (ond > EMLX_MAX_NDIM)
    return EMLX_FAIL_NULL("take: the result's rank %d is too large", ond);
  int64_t shape[EMLX_MAX_NDIM];
  memcpy(shape, a->shape, (size_t)ax * sizeof *shape);
  memcpy(shape + ax, indices->shape, (size_t)indices->ndim * sizeof *shape);
  memcpy(shape + ax + indices->ndim, a->shape + ax + 1, (size_t)(nd - ax - 1) * sizeof *shape);
  emlx_take_params q = *p;
  q.axis = ax;
  emlx_array *in[2] = {a, indices};
  return emlx__op(EMLX_PRIM_TAKE, in, 2, &q, sizeof q, a->dtype, shape, ond);
}

emlx_array *emlx_take(emlx_array *a, emlx_array *indices, int axis,
                      const emlx_index_options *opts) {
  EMLX_CHECK_ARRAY(a, "take");
  EMLX_CHECK_ARRAY(indices, "take");
  emlx_take_params p;
  memset(&p, 0, sizeof p);
  if (check_index_dtype(indices, "take") != 0 || index_mode(opts, &p.mode, "take") != 0)
    return NULL;
  if (axis != EMLX_AXIS_NONE)
    return take_axis(a, indices, axis, &p);
  emlx_array *flat = flatten(a);
  emlx_array *out = flat ? take_axis(flat, indices, 0, &p) : NULL;
  emlx_release(flat);
  return out;
}

static emlx_array *along_axis(emlx_array *a, emlx_array *indices, int axis,
                              const emlx_take_params *p) {
  const char *op = "take_along_axis";
  int nd = a->ndim;
  if (indices->ndim != nd)
    return EMLX_FAIL_NULL("%s: indices have rank %d, the array %d", op, indices->ndim, nd);
  int ax = axis < 0 ? axis + nd : axis;
  if (ax < 0 || ax >= nd)
    return EMLX_FAIL_NULL("%s: axis %d is out of range for rank %d", op, axis, nd);
  /* Broadcast everything but the axis; the axis keeps each side's size. */
  int64_t sa[EMLX_MAX_NDIM], si[EMLX_MAX_NDIM], shape[EMLX_MAX_NDIM];
  memcpy(sa, a->shape, (size_t)nd * sizeof *sa);
  memcpy(si, indices->shape, (size_t)nd * sizeof *si);
  sa[ax] = si[ax] = 1;
  if (emlx__broadcast_shapes(sa, nd, si, nd, shape, op) < 0)
    return NULL;
  shape[ax] = indices->shape[ax];
  int64_t osize = 1;
  for (int i = 0; i < nd; i++)
    osize *= shape[i];
  if (a->shape[ax] == 0 && osize > 0)
    return EMLX_FAIL_NULL("%s: cannot take from axis %d of size 0", op, ax);
  shape[ax] = a->shape[ax];
  emlx_array *ba = emlx_broadcast_to(a, shape, nd);
  shape[ax] = indices->shape[ax];
  emlx_array *bi = ba ? emlx_broadcast_to(indices, shape, nd) : NULL;
  emlx_array *out = NULL;
  if (bi) {
    emlx_take_params q = *p;
    q.axis = ax;
    emlx_array *in[2] = {ba, bi};
    out = emlx__op(EMLX_PRIM_TAKE_ALONG_AXIS, in, 2, &q, sizeof q, a->dtype, shape, nd);
  }
  emlx_release(ba);
  emlx_release(bi);
  return out;
}

emlx_array *emlx_take_along_axis(emlx_array *a, emlx_array *indices, int axis,
                                 const emlx_index_options *opts) {
  const char *op = "take_along_axis";
  EMLX_CHECK_ARRAY(a, op);
  EMLX_CHECK_ARRAY(indices, op);
  emlx_take_params p;
  memset(&p, 0, sizeof p);
  if (check_index_dtype(indices, op) != 0 || index_mode(opts, &p.mode, op) != 0)
    return NULL;
  if (axis != EMLX_AXIS_NONE)
    return along_axis(a, indices, axis, &p);
  if (indices->ndim != 1)
    return EMLX_FAIL_NULL("%s: with no axis, indices must be 1-d, got rank %d", op, indices->ndim);
  emlx_array *flat = flatten(a);
  emlx_array *out = flat ? along_axis(flat, indices, 0, &p) : NULL;
  emlx_release(flat);
  return out;
}
