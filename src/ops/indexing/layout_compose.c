/* layout_compose.c — MLX's everyday layout ops as compositions of views and
 * the indexing family: flatten, moveaxis, swapaxes, flip, roll, tile,
 * repeat, split, diagonal, trace, tril, triu, outer, put_along_axis.
 * Views stay views (flatten of contiguous data, moveaxis, swapaxes, flip,
 * diagonal); the rest build a few nodes that fuse or move data once. */
#include <stdarg.h>
#include <stdlib.h>

#include "ops_util.h"
#include "params_matmul.h"

static emlx_array *done(emlx_array *r, int n, ...) {
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++)
    emlx_release(va_arg(ap, emlx_array *));
  va_end(ap);
  return r;
}

/* axis normalised against ndim, or -1 with an error naming op. */
static int norm_axis(int axis, int ndim, const char *op) {
  int ax = axis < 0 ? axis + ndim : axis;
  if (ax < 0 || ax >= ndim) {
    emlx__set_error("%s: axis %d is out of range for rank %d", op, axis, ndim);
    return -1;
  }
  return ax;
}

static emlx_array *flat(emlx_array *a) {
  int64_t n = a->size;
  return emlx_reshape(a, &n, 1);
}

emlx_array *emlx_flatten(emlx_array *a, int start_axis, int end_axis) {
  EMLX_CHECK_ARRAY(a, "flatten");
  if (a->ndim == 0) {
    int64_t one = 1;
    return emlx_reshape(a, &one, 1);
  }
  int s = norm_axis(start_axis, a->ndim, "flatten");
  int e = s < 0 ? -1 : norm_axis(end_axis, a->ndim, "flatten");
  if (e < 0)
    return NULL;
  if (s > e)
    return EMLX_FAIL_NULL("flatten: start_axis %d is after end_axis %d", start_axis, end_axis);
  int64_t shape[EMLX_MAX_NDIM];
  int nd = 0;
  for (int i = 0; i < s; i++)
    shape[nd++] = a->shape[i];
  int64_t m = 1;
  for (int i = s; i <= e; i++)
    m *= a->shape[i];
  shape[nd++] = m;
  for (int i = e + 1; i < a->ndim; i++)
    shape[nd++] = a->shape[i];
  return emlx_reshape(a, shape, nd);
}

emlx_array *emlx_moveaxis(emlx_array *a, int source, int destination) {
  EMLX_CHECK_ARRAY(a, "moveaxis");
  int s = norm_axis(source, a->ndim, "moveaxis");
  int d = s < 0 ? -1 : norm_axis(destination, a->ndim, "moveaxis");
  if (d < 0)
    return NULL;
  int perm[EMLX_MAX_NDIM], k = 0;
  for (int i = 0; i < a->ndim; i++)
    if (i != s)
      perm[k++] = i;
  for (int i = a->ndim - 1; i > d; i--)
    perm[i] = perm[i - 1];
  perm[d] = s;
  return emlx_transpose(a, perm, a->ndim);
}

emlx_array *emlx_swapaxes(emlx_array *a, int axis1, int axis2) {
  EMLX_CHECK_ARRAY(a, "swapaxes");
  int x = norm_axis(axis1, a->ndim, "swapaxes");
  int y = x < 0 ? -1 : norm_axis(axis2, a->ndim, "swapaxes");
  if (y < 0)
    return NULL;
  int perm[EMLX_MAX_NDIM];
  for (int i = 0; i < a->ndim; i++)
    perm[i] = i;
  perm[x] = y;
  perm[y] = x;
  return emlx_transpose(a, perm, a->ndim);
}

emlx_array *emlx_flip(emlx_array *a, const int *axes, int naxes) {
  EMLX_CHECK_ARRAY(a, "flip");
  int32_t ax[EMLX_MAX_NDIM];
  int n = emlx__normalize_axes(axes, naxes, a->ndim, ax, "flip");
  if (n < 0)
    return NULL;
  int64_t start[EMLX_MAX_NDIM], stop[EMLX_MAX_NDIM], step[EMLX_MAX_NDIM];
  for (int i = 0; i < a->ndim; i++) {
    start[i] = 0;
    stop[i] = a->shape[i];
    step[i] = 1;
  }
  for (int i = 0; i < n; i++) {
    start[ax[i]] = -1;
    stop[ax[i]] = INT64_MIN; /* Python's a[::-1]: clamped to before the start */
    step[ax[i]] = -1;
  }
  return emlx_slice(a, start, stop, step, a->ndim);
}

/* a with axis rolled by shift (elements move toward higher indices). */
static emlx_array *roll_axis(emlx_array *a, int64_t shift, int ax) {
  int64_t d = a->shape[ax];
  int64_t s = d ? ((shift % d) + d) % d : 0;
  if (s == 0)
    return emlx_retain(a);
  int64_t start[EMLX_MAX_NDIM], stop[EMLX_MAX_NDIM];
  for (int i = 0; i < a->ndim; i++) {
    start[i] = 0;
    stop[i] = a->shape[i];
  }
  start[ax] = d - s;
  emlx_array *tail = emlx_slice(a, start, stop, NULL, a->ndim);
  start[ax] = 0;
  stop[ax] = d - s;
  emlx_array *head = tail ? emlx_slice(a, start, stop, NULL, a->ndim) : NULL;
  emlx_array *parts[2] = {tail, head};
  emlx_array *r = head ? emlx_concatenate(parts, 2, ax) : NULL;
  return done(r, 2, tail, head);
}

emlx_array *emlx_roll(emlx_array *a, const int64_t *shifts, const int *axes, int n) {
  EMLX_CHECK_ARRAY(a, "roll");
  if (n < 1 || !shifts)
    return EMLX_FAIL_NULL("roll: give at least one shift");
  if (!axes) {
    if (n != 1)
      return EMLX_FAIL_NULL("roll: without axes, give exactly one shift (got %d)", n);
    emlx_array *f = flat(a), *r = f ? roll_axis(f, shifts[0], 0) : NULL;
    emlx_array *out = r ? emlx_reshape(r, a->shape, a->ndim) : NULL;
    return done(out, 2, f, r);
  }
  for (int i = 0; i < n; i++)
    if (norm_axis(axes[i], a->ndim, "roll") < 0)
      return NULL;
  emlx_array *cur = emlx_retain(a);
  for (int i = 0; i < n && cur; i++) {
    emlx_array *next = roll_axis(cur, shifts[i], norm_axis(axes[i], a->ndim, "roll"));
    emlx_release(cur);
    cur = next;
  }
  return cur;
}

emlx_array *emlx_tile(emlx_array *a, const int64_t *reps, int nreps) {
  EMLX_CHECK_ARRAY(a, "tile");
  if (nreps < 0 || (nreps > 0 && !reps))
    return EMLX_FAIL_NULL("tile: invalid reps");
  int nd = a->ndim > nreps ? a->ndim : nreps;
  if (2 * nd > EMLX_MAX_NDIM)
    return EMLX_FAIL_NULL("tile: rank %d is too large", nd);
  int64_t dims[EMLX_MAX_NDIM], r[EMLX_MAX_NDIM];
  for (int i = 0; i < nd; i++) {
    int ia = i - (nd - a->ndim), ir = i - (nd - nreps);
    dims[i] = ia >= 0 ? a->shape[ia] : 1;
    r[i] = ir >= 0 ? reps[ir] : 1;
    if (r[i] < 0)
      return EMLX_FAIL_NULL("tile: reps must be non-negative (got %lld)", (long long)r[i]);
  }
  /* (1, d0, 1, d1, ...) broadcast to (r0, d0, r1, d1, ...), then merged */
  int64_t s1[EMLX_MAX_NDIM], s2[EMLX_MAX_NDIM], s3[EMLX_MAX_NDIM];
  for (int i = 0; i < nd; i++) {
    s1[2 * i] = 1;
    s1[2 * i + 1] = dims[i];
    s2[2 * i] = r[i];
    s2[2 * i + 1] = dims[i];
    s3[i] = r[i] * dims[i];
  }
  emlx_array *x = emlx_reshape(a, s1, 2 * nd), *b = x ? emlx_broadcast_to(x, s2, 2 * nd) : NULL;
  emlx_array *out = b ? emlx_reshape(b, s3, nd) : NULL;
  return done(out, 2, x, b);
}

emlx_array *emlx_repeat(emlx_array *a, int64_t repeats, int axis) {
  EMLX_CHECK_ARRAY(a, "repeat");
  if (repeats < 0)
    return EMLX_FAIL_NULL("repeat: repeats must be non-negative (got %lld)", (long long)repeats);
  if (axis == EMLX_AXIS_NONE) {
    emlx_array *f = flat(a), *r = f ? emlx_repeat(f, repeats, 0) : NULL;
    return done(r, 1, f);
  }
  int ax = norm_axis(axis, a->ndim, "repeat");
  if (ax < 0)
    return NULL;
  if (a->ndim + 1 > EMLX_MAX_NDIM)
    return EMLX_FAIL_NULL("repeat: rank %d is too large", a->ndim + 1);
  /* a[..., i, None, ...] broadcast along the new axis, then merged */
  int64_t s1[EMLX_MAX_NDIM], s2[EMLX_MAX_NDIM], s3[EMLX_MAX_NDIM];
  for (int i = 0, j = 0; i < a->ndim; i++) {
    s1[j] = s2[j] = a->shape[i];
    s3[i] = a->shape[i];
    j++;
    if (i == ax) {
      s1[j] = 1;
      s2[j] = repeats;
      s3[i] = a->shape[i] * repeats;
      j++;
    }
  }
  emlx_array *x = emlx_reshape(a, s1, a->ndim + 1);
  emlx_array *b = x ? emlx_broadcast_to(x, s2, a->ndim + 1) : NULL;
  emlx_array *out = b ? emlx_reshape(b, s3, a->ndim) : NULL;
  return done(out, 2, x, b);
}

int emlx_split_at(emlx_array *a, const int64_t *indices, int nindices, int axis, emlx_array **out) {
  if (!a)
    return EMLX_FAIL("split: input array is NULL");
  if (nindices < 0 || (nindices > 0 && !indices) || !out)
    return EMLX_FAIL("split: invalid indices or output");
  if (a->ndim == 0)
    return EMLX_FAIL("split: a 0-d array has no axis to split");
  int ax = norm_axis(axis, a->ndim, "split");
  if (ax < 0)
    return -1;
  int64_t d = a->shape[ax], start[EMLX_MAX_NDIM], stop[EMLX_MAX_NDIM];
  for (int i = 0; i < a->ndim; i++) {
    start[i] = 0;
    stop[i] = a->shape[i];
  }
  int64_t prev = 0;
  for (int k = 0; k <= nindices; k++) {
    int64_t e = k < nindices ? indices[k] : d;
    if (e < 0)
      e += d;
    e = e < 0 ? 0 : e > d ? d : e;
    start[ax] = prev;
    stop[ax] = e > prev ? e : prev; /* a later index before an earlier: empty */
    out[k] = emlx_slice(a, start, stop, NULL, a->ndim);
    if (!out[k]) {
      for (int j = 0; j < k; j++) {
        emlx_release(out[j]);
        out[j] = NULL;
      }
      return -1;
    }
    prev = stop[ax];
  }
  return 0;
}

int emlx_split(emlx_array *a, int num_splits, int axis, emlx_array **out) {
  if (!a)
    return EMLX_FAIL("split: input array is NULL");
  if (num_splits < 1 || !out)
    return EMLX_FAIL("split: num_splits must be >= 1 (got %d)", num_splits);
  if (a->ndim == 0)
    return EMLX_FAIL("split: a 0-d array has no axis to split");
  int ax = norm_axis(axis, a->ndim, "split");
  if (ax < 0)
    return -1;
  int64_t d = a->shape[ax];
  if (d % num_splits != 0)
    return EMLX_FAIL("split: axis %d of size %lld cannot be split into %d equal parts", axis,
                     (long long)d, num_splits);
  int64_t *idx = malloc((size_t)num_splits * sizeof *idx);
  if (!idx)
    return EMLX_FAIL("split: out of memory");
  for (int k = 0; k < num_splits - 1; k++)
    idx[k] = (k + 1) * (d / num_splits);
  int rc = emlx_split_at(a, idx, num_splits - 1, ax, out);
  free(idx);
  return rc;
}

emlx_array *emlx_diagonal(emlx_array *a, int64_t offset, int axis1, int axis2) {
  EMLX_CHECK_ARRAY(a, "diagonal");
  if (a->ndim < 2)
    return EMLX_FAIL_NULL("diagonal: the array needs at least 2 dimensions (got %d)", a->ndim);
  int x = norm_axis(axis1, a->ndim, "diagonal");
  int y = x < 0 ? -1 : norm_axis(axis2, a->ndim, "diagonal");
  if (y < 0)
    return NULL;
  if (x == y)
    return EMLX_FAIL_NULL("diagonal: axis1 and axis2 are the same axis (%d)", x);
  /* the two axes last, cut to the diagonal's square, then one DIAG_VIEW */
  int nd = a->ndim, perm[EMLX_MAX_NDIM], k = 0;
  for (int i = 0; i < nd; i++)
    if (i != x && i != y)
      perm[k++] = i;
  perm[k++] = x;
  perm[k++] = y;
  int64_t d1 = a->shape[x], d2 = a->shape[y];
  int64_t r0 = offset < 0 ? -offset : 0, c0 = offset > 0 ? offset : 0;
  int64_t len = 0;
  if (r0 < d1 && c0 < d2)
    len = d1 - r0 < d2 - c0 ? d1 - r0 : d2 - c0;
  emlx_array *t = emlx_transpose(a, perm, nd);
  int64_t start[EMLX_MAX_NDIM], stop[EMLX_MAX_NDIM];
  for (int i = 0; t && i < nd; i++) {
    start[i] = 0;
    stop[i] = t->shape[i];
  }
  start[nd - 2] = len ? r0 : 0;
  stop[nd - 2] = start[nd - 2] + len;
  start[nd - 1] = len ? c0 : 0;
  stop[nd - 1] = start[nd - 1] + len;
  emlx_array *s = t ? emlx_slice(t, start, stop, NULL, nd) : NULL;
  emlx_array *r = NULL;
  if (s) {
    size_t psize = sizeof(emlx_diag_view_params) + (size_t)nd * sizeof(int32_t);
    emlx_diag_view_params *p = calloc(1, psize);
    if (p) {
      p->ndim_in = nd;
      for (int i = 0; i < nd; i++)
        p->group[i] = i < nd - 1 ? i : nd - 2;
      int64_t shape[EMLX_MAX_NDIM];
      for (int i = 0; i < nd - 1; i++)
        shape[i] = s->shape[i];
      r = emlx__op(EMLX_PRIM_DIAG_VIEW, &s, 1, p, psize, s->dtype, shape, nd - 1);
      free(p);
    } else {
      emlx__set_error("diagonal: out of memory");
    }
  }
  return done(r, 2, t, s);
}

emlx_array *emlx_trace(emlx_array *a, int64_t offset, int axis1, int axis2) {
  emlx_array *d = emlx_diagonal(a, offset, axis1, axis2);
  int last = -1;
  emlx_array *r = d ? emlx_sum(d, &last, 1, false) : NULL;
  return done(r, 1, d);
}

/* where(tri mask, a, 0) over the last two axes. */
static emlx_array *tri_mask(emlx_array *a, int64_t k, bool lower, const char *op) {
  EMLX_CHECK_ARRAY(a, op);
  if (a->ndim < 2)
    return EMLX_FAIL_NULL("%s: the array needs at least 2 dimensions (got %d)", op, a->ndim);
  int64_t n = a->shape[a->ndim - 2], m = a->shape[a->ndim - 1];
  /* lower: col - row <= k; upper: col - row >= k, i.e. not (<= k - 1) */
  emlx_array *t = emlx_tri(n, m, lower ? k : k - 1, EMLX_BOOL, a->device);
  emlx_array *mask = t ? (lower ? emlx_retain(t) : emlx_logical_not(t)) : NULL;
  emlx_array *z = mask ? emlx_scalar_tensor(0, a->dtype, a->device) : NULL;
  emlx_array *r = z ? emlx_where(mask, a, z) : NULL;
  return done(r, 3, t, mask, z);
}

emlx_array *emlx_tril(emlx_array *a, int64_t k) { return tri_mask(a, k, true, "tril"); }
emlx_array *emlx_triu(emlx_array *a, int64_t k) { return tri_mask(a, k, false, "triu"); }

emlx_array *emlx_outer(emlx_array *a, emlx_array *b) {
  EMLX_CHECK_ARRAY(a, "outer");
  EMLX_CHECK_ARRAY(b, "outer");
  int64_t sa[2] = {a->size, 1}, sb[2] = {1, b->size};
  emlx_array *x = emlx_reshape(a, sa, 2), *y = x ? emlx_reshape(b, sb, 2) : NULL;
  emlx_array *r = y ? emlx_multiply(x, y) : NULL;
  return done(r, 2, x, y);
}

emlx_array *emlx_put_along_axis(emlx_array *a, emlx_array *indices, emlx_array *values, int axis,
                                const emlx_index_options *opts) {
  EMLX_CHECK_ARRAY(a, "put_along_axis");
  EMLX_CHECK_ARRAY(indices, "put_along_axis");
  EMLX_CHECK_ARRAY(values, "put_along_axis");
  if (axis == EMLX_AXIS_NONE) {
    emlx_array *f = flat(a), *r = f ? emlx_put_along_axis(f, indices, values, 0, opts) : NULL;
    emlx_array *out = r ? emlx_reshape(r, a->shape, a->ndim) : NULL;
    return done(out, 2, f, r);
  }
  int nd = a->ndim;
  int ax = norm_axis(axis, nd, "put_along_axis");
  if (ax < 0)
    return NULL;
  if (indices->ndim != nd)
    return EMLX_FAIL_NULL("put_along_axis: indices have rank %d, the array %d", indices->ndim, nd);
  if (2 * nd > EMLX_MAX_NDIM)
    return EMLX_FAIL_NULL("put_along_axis: rank %d is too large", nd);
  /* the positions written: indices along axis, every position elsewhere */
  int64_t B[EMLX_MAX_NDIM] = {0};
  for (int i = 0; i < nd; i++) {
    B[i] = i == ax ? indices->shape[i] : a->shape[i];
    if (i != ax && indices->shape[i] != 1 && indices->shape[i] != a->shape[i])
      return EMLX_FAIL_NULL("put_along_axis: indices of size %lld along axis %d do not "
                            "broadcast to the array's %lld",
                            (long long)indices->shape[i], i, (long long)a->shape[i]);
  }
  emlx_array *idx[EMLX_MAX_NDIM] = {NULL};
  int axes[EMLX_MAX_NDIM];
  emlx_array *r = NULL, *vb = NULL, *upd = NULL;
  bool ok = true;
  for (int i = 0; i < nd && ok; i++) {
    axes[i] = i;
    if (i == ax) {
      idx[i] = emlx_broadcast_to(indices, B, nd);
    } else {
      int64_t s[EMLX_MAX_NDIM];
      for (int j = 0; j < nd; j++)
        s[j] = j == i ? a->shape[i] : 1;
      emlx_array *ar = emlx_arange(0, (double)a->shape[i], 1, EMLX_INT64, a->device);
      emlx_array *rs = ar ? emlx_reshape(ar, s, nd) : NULL;
      idx[i] = rs ? emlx_broadcast_to(rs, B, nd) : NULL;
      emlx_release(ar);
      emlx_release(rs);
    }
    ok = idx[i] != NULL;
  }
  if (ok) {
    vb = emlx_broadcast_to(values, B, nd);
    int64_t us[EMLX_MAX_NDIM];
    for (int i = 0; i < nd; i++) {
      us[i] = B[i];
      us[nd + i] = 1;
    }
    upd = vb ? emlx_reshape(vb, us, 2 * nd) : NULL;
    r = upd ? emlx_scatter(a, idx, nd, upd, axes, opts) : NULL;
  }
  for (int i = 0; i < nd; i++)
    emlx_release(idx[i]);
  return done(r, 2, vb, upd);
}
