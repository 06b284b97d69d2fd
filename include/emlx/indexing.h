/* emlx/indexing.h — indexing and layout: slice_update, pad, concatenate,
 * stack, as_strided, view, gather, scatter, scatter_add, take,
 * take_along_axis.
 *
 * These ops move data and never compute on it (scatter_add excepted), so
 * they accept every dtype, including bool, f16, bf16 and complex64.
 *
 * Indices. Index arrays may have any integer dtype (bool and floats are an
 * error) and any layout. As in MLX, a negative index counts from the end of
 * its axis once: i < 0 means i + dim (set no_negative_wrap for Nx/XLA, where
 * a negative index is simply out of range). What happens to an index still
 * out of range is chosen per call by emlx_index_options.bounds, whose
 * default is the process-wide switch emlx_set_bounds_check():
 *   - CLAMP (the switch off, the default): the index is clamped into range.
 *     For a gathered or scattered slice of size s along an axis of size d,
 *     "in range" means the whole slice fits: the start is clamped into
 *     [0, d - s] (as XLA does). Scatter clamps the same way (it does not drop
 *     the update).
 *   - CHECK: evaluating the result fails (emlx_eval returns -1) with a
 *     message naming the op, the offending index and the axis, e.g.
 *     "take: index 12 is out of range for axis 0 of size 10". Nothing is
 *     written: a failing scatter leaves its input untouched.
 * The mode is captured when the op is built (arrays are lazy), so switching
 * it later does not change arrays already built. */
#ifndef EMLX_INDEXING_H
#define EMLX_INDEXING_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- out-of-range indices ------------------------------------------------ */
typedef enum emlx_bounds_mode {
  EMLX_BOUNDS_DEFAULT = 0, /* the process-wide switch, read when the op is built */
  EMLX_BOUNDS_CLAMP = 1,   /* clamp into range (defined behaviour, no error) */
  EMLX_BOUNDS_CHECK = 2,   /* fail the eval with a message naming the index */
} emlx_bounds_mode;

/* Options of the indexed ops; NULL or a zeroed struct means the defaults. */
typedef struct emlx_index_options {
  emlx_bounds_mode bounds;
  /* false (MLX): a negative index counts from the end once (i + dim).
   * true (Nx/XLA): a negative index is out of range (clamped to 0, or an
   * error in CHECK mode). */
  bool no_negative_wrap;
} emlx_index_options;

/* The process-wide default of EMLX_BOUNDS_DEFAULT: true = CHECK, false =
 * CLAMP (the initial value). Thread-safe; returns the previous value. */
EMLX_API bool emlx_set_bounds_check(bool on);
EMLX_API bool emlx_get_bounds_check(void);

/* For emlx_take and emlx_take_along_axis: no axis, work on the flattened
 * array (MLX's axis=None). */
#ifndef EMLX_AXIS_NONE
#define EMLX_AXIS_NONE (-2147483647 - 1)
#endif

/* ---- slice_update ---------------------------------------------------------
 * A copy of src with the slice start:stop:strides (one entry per axis, the
 * same rules as emlx_slice: Python clamping, negative indices from the end,
 * negative strides walk backwards; strides NULL means all 1) replaced by
 * update, which is cast to src's dtype and broadcast to the slice's shape.
 * The result has src's shape and dtype.
 *
 * In place: when src's buffer can be donated at eval (the node holds the
 * last reference to src, which is row-contiguous at offset 0 and shares its
 * buffer with nobody), the result reuses it and only the slice is written.
 * This is the KV-cache pattern: build the update, release your handle on
 * the old cache, evaluate the new one. */
EMLX_API emlx_array *emlx_slice_update(emlx_array *src, emlx_array *update, const int64_t *start,
                                       const int64_t *stop, const int64_t *strides, int ndim);

/* The same with start indices known only at eval (a position held in an
 * array, as a compiled decode loop needs). update has src's rank and no
 * dimension larger than src's; it is cast to src's dtype. start_indices is a
 * 0-d or 1-d integer array of naxes elements giving the start along each of
 * axes (distinct, may be negative); other axes start at 0. Each start is
 * clamped into [0, dim - update_dim] so the update always fits (XLA's and
 * Nx's dynamic_update_slice; negative starts clamp to 0). Donates like
 * emlx_slice_update. */
EMLX_API emlx_array *emlx_slice_update_dynamic(emlx_array *src, emlx_array *update,
                                               emlx_array *start_indices, const int *axes,
                                               int naxes);

/* ---- pad ------------------------------------------------------------------
 * Pads every axis i with low[i] elements before and high[i] after, and
 * interior[i] elements between each pair of neighbours (interior NULL: no
 * interior padding; interior entries must be >= 0). Negative low/high
 * remove elements from that edge (Nx's pad/3; applied after the interior
 * padding). Axis i of the result has size
 *   low + high + n + max(n - 1, 0) * interior,
 * which must be >= 0. The result keeps a's dtype; the pad value is cast to
 * it (as astype). emlx_pad takes the value as a double; emlx_pad_array takes
 * an array of exactly one element (any shape, any dtype: use it for
 * complex64 or 64-bit integers beyond 2^53). */
EMLX_API emlx_array *emlx_pad(emlx_array *a, const int64_t *low, const int64_t *high,
                              const int64_t *interior, int ndim, double value);
EMLX_API emlx_array *emlx_pad_array(emlx_array *a, const int64_t *low, const int64_t *high,
                                    const int64_t *interior, int ndim, emlx_array *value);

/* ---- concatenate / stack --------------------------------------------------
 * concatenate: n >= 1 arrays of equal rank (>= 1) whose shapes agree except
 * along axis; the dtype is the promotion of all (emlx_promote_types, as
 * MLX). stack: n >= 1 arrays of the same shape joined along a new axis in
 * [-(ndim + 1), ndim]; dtype promoted likewise. */
EMLX_API emlx_array *emlx_concatenate(emlx_array *const *arrays, int n, int axis);
EMLX_API emlx_array *emlx_stack(emlx_array *const *arrays, int n, int axis);

/* ---- as_strided -----------------------------------------------------------
 * A view of a with the given shape, element strides (NULL: row-major for
 * shape; entries may be 0 or negative) and element offset, addressing a's
 * elements as if a were row-contiguous (MLX's semantics: a non-contiguous a
 * is copied first). Unlike MLX, the request is validated: every element the
 * view can reach must lie inside a (offset + sum of the extreme
 * (shape[i] - 1) * strides[i] within [0, size(a))), otherwise it is an
 * error; an empty view needs 0 <= offset <= size(a). */
EMLX_API emlx_array *emlx_as_strided(emlx_array *a, const int64_t *shape, const int64_t *strides,
                                     int ndim, int64_t offset);

/* ---- view -----------------------------------------------------------------
 * The same bytes read as another dtype (a bitcast; MLX's mx.view). With
 * equal element sizes the shape is kept. Otherwise the last axis scales by
 * the size ratio: to a smaller dtype it grows (f32 [2, 3] as u8: [2, 12]);
 * to a larger one its byte size must be a multiple of the new element size
 * (u8 [2, 8] as f64: [2, 1]), else an error. A 0-d array may only change to
 * a dtype of the same size. Non-contiguous inputs are viewed in their
 * logical (row-major) order, copying when the layout requires it. Values
 * that are not valid for the new dtype (e.g. a bool byte of 2) are kept as
 * they are. */
EMLX_API emlx_array *emlx_view(emlx_array *a, emlx_dtype dtype);

/* ---- gather / scatter ------------------------------------------------------
 * MLX's gather: nindices index arrays (broadcast together to a shape I)
 * select, along the distinct axes axes[k] (negative axes count from the
 * end), the start of a slice of shape slice_sizes (nslice == rank of a,
 * 0 <= slice_sizes[i] <= a's dim i). The result has shape I ++ slice_sizes:
 *   out[m..., s...] = a[s + start(m)],  start(m)[axes[k]] = indices[k][m...],
 *   other coordinates of start 0.
 * nindices may be 0 (one slice at the origin). */
EMLX_API emlx_array *emlx_gather(emlx_array *a, emlx_array *const *indices, int nindices,
                                 const int *axes, const int64_t *slice_sizes, int nslice,
                                 const emlx_index_options *opts);

/* MLX's scatter: a copy of a with, for each index position m of the
 * broadcast index shape I, the slice updates[m...] written at start(m) (as
 * in gather). updates has rank ndim(I) + ndim(a), its leading dims equal I
 * and its trailing dims (the slice) are each <= a's; it is cast to a's
 * dtype. Duplicate indices: the update that comes last in row-major order
 * of I wins (deterministic). Donates a's buffer when it can (see
 * slice_update). */
EMLX_API emlx_array *emlx_scatter(emlx_array *a, emlx_array *const *indices, int nindices,
                                  emlx_array *updates, const int *axes,
                                  const emlx_index_options *opts);
/* The same, adding instead of replacing; duplicate indices accumulate, in
 * row-major order of I. Integers wrap, bool adds as logical or, f16/bf16
 * add in f32 and round after each addition, complex64 adds both parts. */
EMLX_API emlx_array *emlx_scatter_add(emlx_array *a, emlx_array *const *indices, int nindices,
                                      emlx_array *updates, const int *axes,
                                      const emlx_index_options *opts);

/* ---- take / take_along_axis ------------------------------------------------
 * take: elements of a at indices along axis (the result has shape
 * a.shape[:axis] ++ indices.shape ++ a.shape[axis+1:]); with axis
 * EMLX_AXIS_NONE, a is flattened first and the result has indices' shape.
 * indices may be 0-d. Taking a non-empty set of indices from an empty axis
 * is an error. */
EMLX_API emlx_array *emlx_take(emlx_array *a, emlx_array *indices, int axis,
                               const emlx_index_options *opts);
/* take_along_axis: indices has a's rank; apart from axis, the shapes of a
 * and indices broadcast together (to B); the result has shape B with
 * indices' size along axis:
 *   out[..., j, ...] = a[..., indices[..., j, ...], ...].
 * With axis EMLX_AXIS_NONE both are flattened (indices must then be 1-d). */
EMLX_API emlx_array *emlx_take_along_axis(emlx_array *a, emlx_array *indices, int axis,
                                          const emlx_index_options *opts);

/* ---- MLX's everyday layout ops (views where the layout allows) -----------
 * flatten: axes start_axis..end_axis (inclusive, negative from the end)
 *   merged into one; a 0-d array gives shape {1}. A view when the data is
 *   contiguous (as reshape).
 * moveaxis: axis source moved to position destination; swapaxes: two axes
 *   exchanged. Views.
 * flip: the listed axes reversed (axes NULL: all). A view.
 * roll: each axes[i] rolled by shifts[i] (elements move toward higher
 *   indices; negative shifts the other way; any size, taken modulo the
 *   axis); axes NULL: the flattened array rolled by shifts[0] (n must be 1),
 *   the shape kept.
 * tile: numpy's tile: the array repeated reps[i] times along each axis (a
 *   shorter reps is padded with leading 1s, a shorter array with leading
 *   axes of size 1); reps >= 0.
 * repeat: each element repeated `repeats` times along axis (EMLX_AXIS_NONE:
 *   the flattened array); repeats >= 0.
 * split: num_splits equal parts along axis (the axis' size must be a
 *   multiple) written to out[0..num_splits). split_at: the parts before
 *   indices[0], between consecutive indices, and after the last (nindices
 *   + 1 arrays in out; indices clamped into the axis, negative from the end,
 *   a decreasing index gives an empty part, as numpy). Both return 0, or -1
 *   with nothing in out. The parts are views.
 * diagonal: the diagonal `offset` (> 0 above the main one) of the matrices
 *   in axes axis1, axis2, which are removed; the diagonal is the new last
 *   axis (numpy / MLX). A view.
 * trace: the sum of that diagonal (emlx_sum's dtypes).
 * tril / triu: zeros above diagonal k / below diagonal k of the last two
 *   axes (rank >= 2).
 * outer: a (flattened, n) times b (flattened, m) as an n x m array (the
 *   dtypes promote as multiply).
 * put_along_axis: a copy of a with values (cast to a's dtype, broadcast to
 *   the indexed positions) written at indices along axis; indices have a's
 *   rank and, apart from axis, size 1 or a's size (numpy / MLX). With axis
 *   EMLX_AXIS_NONE a is flattened (the shape is kept). Duplicate indices:
 *   the last in row-major order wins; out-of-range indices follow opts (see
 *   the top of this file). */
EMLX_API emlx_array *emlx_flatten(emlx_array *a, int start_axis, int end_axis);
EMLX_API emlx_array *emlx_moveaxis(emlx_array *a, int source, int destination);
EMLX_API emlx_array *emlx_swapaxes(emlx_array *a, int axis1, int axis2);
EMLX_API emlx_array *emlx_flip(emlx_array *a, const int *axes, int naxes);
EMLX_API emlx_array *emlx_roll(emlx_array *a, const int64_t *shifts, const int *axes, int n);
EMLX_API emlx_array *emlx_tile(emlx_array *a, const int64_t *reps, int nreps);
EMLX_API emlx_array *emlx_repeat(emlx_array *a, int64_t repeats, int axis);
EMLX_API int emlx_split(emlx_array *a, int num_splits, int axis, emlx_array **out);
EMLX_API int emlx_split_at(emlx_array *a, const int64_t *indices, int nindices, int axis,
                           emlx_array **out);
EMLX_API emlx_array *emlx_diagonal(emlx_array *a, int64_t offset, int axis1, int axis2);
EMLX_API emlx_array *emlx_trace(emlx_array *a, int64_t offset, int axis1, int axis2);
EMLX_API emlx_array *emlx_tril(emlx_array *a, int64_t k);
EMLX_API emlx_array *emlx_triu(emlx_array *a, int64_t k);
EMLX_API emlx_array *emlx_outer(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_put_along_axis(emlx_array *a, emlx_array *indices, emlx_array *values,
                                         int axis, const emlx_index_options *opts);

#ifdef __cplusplus
}
#endif
#endif
