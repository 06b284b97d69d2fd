/* emlx/reduce.h — reductions beyond sum/max (product, min, all, any,
 * argmax, argmin), scans (cumulative sum/product/max/min) and sorting.
 *
 * Conventions shared with emlx_sum/emlx_max (emlx/ops.h): inputs are
 * borrowed, a new lazy array is returned (NULL + emlx_last_error() on
 * failure); axes may be negative (counted from the end).
 *
 * Ordering of values (min, argmax, argmin, scans of max/min, sort):
 *  - NaN is the largest value in sorting, and it propagates in min/max
 *    (a min or max over a NaN is NaN; argmax and argmin both return the
 *    index of the FIRST NaN, as numpy and MLX do; Nx's argmax/argmin also
 *    answer a NaN's index). NaNs of any sign or payload are equal.
 *  - -0.0 and +0.0 are equal (ties: the earlier element wins / keeps its
 *    place).
 *  - complex64 compares lexicographically: real part, then imaginary part
 *    (each part ordered as above); for min/max and argmax/argmin an element
 *    with a NaN in either part counts as NaN.
 *  - bool is 0 < 1.
 * Integer arithmetic (product, cumulative sum/product) wraps. f16 and bf16
 * accumulate in f32 and are rounded once per output element (so a partial
 * result beyond the half type's range does not stick as MLX's f16
 * accumulator would). */
#ifndef EMLX_REDUCE_H
#define EMLX_REDUCE_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reductions over any set of axes ------------------------------------- */
/* axes NULL: all axes; naxes 0 with non-NULL axes: no reduction (an astype
 * to the result dtype for product). Duplicate or out-of-range axes are
 * errors. keep_dims keeps reduced axes with size 1.
 *
 * product: dtype as emlx_sum (bool/s8/s16/s32 -> int32, u8/u16/u32 ->
 *   uint32, others keep theirs); 1 for an empty reduction; wraps for ints.
 * min: keeps the dtype; NaN propagates; an empty reduction producing a
 *   non-empty result is an error (as MLX).
 * all / any: any dtype -> bool ("!= 0": NaN is true, -0.0 false, complex
 *   true when either part is non-zero); all of nothing is true, any of
 *   nothing is false. */
EMLX_API emlx_array *emlx_product(emlx_array *a, const int *axes, int naxes, bool keep_dims);
EMLX_API emlx_array *emlx_min(emlx_array *a, const int *axes, int naxes, bool keep_dims);
EMLX_API emlx_array *emlx_all(emlx_array *a, const int *axes, int naxes, bool keep_dims);
EMLX_API emlx_array *emlx_any(emlx_array *a, const int *axes, int naxes, bool keep_dims);

/* ---- argmax / argmin ------------------------------------------------------- */
/* Extra options (NULL or zero-initialised: MLX's behaviour). */
typedef struct emlx_arg_reduce_options {
  /* Ties take the LAST index instead of the first (Nx's tie_break: :high).
   * NaN handling is unchanged: the first NaN wins either way. */
  bool last_index;
  /* Dtype of the indices: EMLX_BOOL (the zero value) means uint32, MLX's
   * choice; any integer dtype may be asked for (Nx wants s32 or s64). An
   * axis whose largest index does not fit the dtype is an error. */
  emlx_dtype index_dtype;
} emlx_arg_reduce_options;

/* Index of the largest (smallest) element along axis: the axis is removed,
 * or kept with size 1 when keep_dims. Ties: the first index (see options);
 * NaN: the first NaN. Every dtype (complex lexicographic, bool 0 < 1).
 * An axis of size 0 is an error unless the result is empty. */
EMLX_API emlx_array *emlx_argmax(emlx_array *a, int axis, bool keep_dims,
                                 const emlx_arg_reduce_options *opts);
EMLX_API emlx_array *emlx_argmin(emlx_array *a, int axis, bool keep_dims,
                                 const emlx_arg_reduce_options *opts);
/* Over the flattened array (row-major flat index): a 0-d result, or every
 * axis kept with size 1 when keep_dims. An empty array is an error. */
EMLX_API emlx_array *emlx_argmax_all(emlx_array *a, bool keep_dims,
                                     const emlx_arg_reduce_options *opts);
EMLX_API emlx_array *emlx_argmin_all(emlx_array *a, bool keep_dims,
                                     const emlx_arg_reduce_options *opts);

/* ---- scans ------------------------------------------------------------------ */
/* Along one axis (0-d arrays have none: error). reverse scans from the end
 * of the axis; inclusive false shifts by one (element i combines elements
 * before i; the first element is the identity: 0, 1, the dtype's lowest /
 * highest value, -inf / +inf for floats, false / true for bool, and
 * (-inf, -inf) / (+inf, +inf) for complex max / min).
 *
 * Dtypes as MLX: cumulative_sum of bool gives int32, every other case keeps
 * the dtype (int8 sums wrap in int8). cumulative_product of bool is a
 * running AND, cumulative_max of bool a running OR, cumulative_min a running
 * AND. Max/min: NaN propagates (from the first NaN on, the result is NaN). */
EMLX_API emlx_array *emlx_cumulative_sum(emlx_array *a, int axis, bool reverse, bool inclusive);
EMLX_API emlx_array *emlx_cumulative_product(emlx_array *a, int axis, bool reverse, bool inclusive);
EMLX_API emlx_array *emlx_cumulative_max(emlx_array *a, int axis, bool reverse, bool inclusive);
EMLX_API emlx_array *emlx_cumulative_min(emlx_array *a, int axis, bool reverse, bool inclusive);

/* ---- sorting ---------------------------------------------------------------- */
/* Options (NULL or zero-initialised: ascending, uint32 indices as MLX). */
typedef struct emlx_sort_options {
  /* Largest first. Still stable: equal elements keep their original order
   * (so descending is NOT the reverse of ascending when there are ties).
   * NaNs, the largest values, come first (as Nx's direction: :desc). */
  bool descending;
  /* argsort only: as emlx_arg_reduce_options.index_dtype. */
  emlx_dtype index_dtype;
} emlx_sort_options;

/* Sorts along axis (negative counts from the end; 0-d arrays are an error),
 * stable, every dtype (order as at the top of this file: ascending puts NaNs
 * last, as numpy and MLX; -0.0 and +0.0 keep their relative order; sort
 * keeps each element's bits). Axes longer than 2^32 - 1 are an error. */
EMLX_API emlx_array *emlx_sort(emlx_array *a, int axis, const emlx_sort_options *opts);
/* The indices that sort a along axis (same shape as a), stable. */
EMLX_API emlx_array *emlx_argsort(emlx_array *a, int axis, const emlx_sort_options *opts);

/* ---- statistics and softmax: one fused kernel per call ----------------------
 * Over the listed axes (the rules of emlx_sum: axes NULL is every axis; naxes
 * 0 with non-NULL axes reduces nothing; duplicate or out-of-range axes are
 * errors; negative axes count from the end). Float dtypes keep their dtype;
 * bool and integer inputs give float32 (as MLX); complex64 is an error
 * (except for emlx_mean). Each output element is computed from one pass (or
 * two, over data still in cache) over its elements with f64 accumulators
 * (f32 and f16/bf16 inputs are read as f32, f64 as f64) and rounded once.
 *
 * mean: the sum over n. An empty reduction is NaN (0 / 0, as numpy).
 *   complex64 means are sum * (1 / n) in complex64.
 * var: the sum of squared deviations from the mean (two-pass, f64) over
 *   max(n - ddof, 0): ddof >= n gives +inf, or NaN when every deviation is 0
 *   (numpy's and MLX's result); a negative ddof is allowed (as numpy).
 *   std: sqrt(var). NaN propagates; an inf gives NaN (inf - inf).
 * logsumexp: max + log(sum(exp(x - max))) (max-subtracted, so large values do
 *   not overflow); a reduction whose max is +-inf gives that max (all -inf:
 *   -inf; an empty reduction: -inf); NaN propagates. */
EMLX_API emlx_array *emlx_mean(emlx_array *a, const int *axes, int naxes, bool keep_dims);
EMLX_API emlx_array *emlx_var(emlx_array *a, const int *axes, int naxes, bool keep_dims, int ddof);
EMLX_API emlx_array *emlx_std(emlx_array *a, const int *axes, int naxes, bool keep_dims, int ddof);
EMLX_API emlx_array *emlx_logsumexp(emlx_array *a, const int *axes, int naxes, bool keep_dims);

/* softmax: exp(x - max) / sum(exp(x - max)) over the axes (the result has
 * a's shape); log_softmax: x - logsumexp(x). Axes as above. precise is MLX's
 * flag (accumulate f16/bf16 in f32); here every dtype is always computed in
 * f32 (f64 for f64) and rounded once, so both values of the flag give the
 * precise result. A row holding NaN, or whose max is +-inf, gives NaN in
 * every element of that row (for a row of -inf, as MLX and torch); a row
 * holding +inf among finite values gives NaN too (inf - inf). */
EMLX_API emlx_array *emlx_softmax(emlx_array *a, const int *axes, int naxes, bool precise);
EMLX_API emlx_array *emlx_log_softmax(emlx_array *a, const int *axes, int naxes, bool precise);

/* ---- top-k and partitions -------------------------------------------------
 * topk: the k largest elements along axis (negative from the end;
 *   EMLX_AXIS_NONE of indexing.h: the flattened array), 0 <= k <= the axis'
 *   size. MLX leaves their order unspecified; here they come in ascending
 *   order (the last k of a stable sort, so NaNs, the largest, come last).
 * partition / argpartition: the array (the indices, uint32) arranged so that
 *   the element at position kth is the one a sort would put there, every
 *   element before it is <= it and every one after >= it (numpy/MLX; kth may
 *   be negative: counts from the end). Computed by a full stable sort,
 *   which is one valid partition. */
EMLX_API emlx_array *emlx_topk(emlx_array *a, int k, int axis);
EMLX_API emlx_array *emlx_partition(emlx_array *a, int kth, int axis);
EMLX_API emlx_array *emlx_argpartition(emlx_array *a, int kth, int axis);

#ifdef __cplusplus
}
#endif
#endif
