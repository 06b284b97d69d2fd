/* params_indexing.h — the parameter structs of the indexing family's
 * primitives (SLICE_UPDATE, PAD, CONCATENATE, AS_STRIDED, VIEW_DTYPE, GATHER,
 * SCATTER, SCATTER_ADD, TAKE, TAKE_ALONG_AXIS).
 *
 * Plain data, no pointers, allocated zeroed (padding included): nodes compare
 * them bytewise. Variable-length parts are flexible array members. Shapes
 * that the output array already carries are not repeated here. */
#ifndef EMLX_PARAMS_INDEXING_H
#define EMLX_PARAMS_INDEXING_H

#include <stdint.h>

/* How a kernel treats an index after the optional negative wrap. */
enum { EMLX_IDX_CLAMP = 0, EMLX_IDX_CHECK = 1 };

/* Index handling shared by the indexed primitives. */
typedef struct emlx_index_mode {
  int32_t check; /* EMLX_IDX_CLAMP or EMLX_IDX_CHECK */
  int32_t wrap;  /* 1: a negative index means index + dim (MLX) */
} emlx_index_mode;

/* SLICE_UPDATE, inputs (src, update[, starts]). update already has the
 * slice's shape (broadcast by the constructor) and src's dtype.
 * Static (dynamic == 0): vals[0..ndim) are the clamped starts and
 * vals[ndim..2*ndim) the steps, as emlx_slice_params.
 * Dynamic (dynamic == 1): vals[i] is the position in the starts input of
 * axis i's start, or -1 when axis i starts at 0; steps are 1. */
typedef struct emlx_slice_update_params {
  int32_t ndim;
  int32_t dynamic;
  int64_t vals[];
} emlx_slice_update_params;

/* PAD, inputs (a, value): value has one element of a's dtype.
 * vals[3*i + 0, 1, 2] = low, high, interior of axis i. */
typedef struct emlx_pad_params {
  int64_t ndim;
  int64_t vals[];
} emlx_pad_params;

/* CONCATENATE, inputs already of the output's dtype. */
typedef struct emlx_concatenate_params {
  int64_t axis;
} emlx_concatenate_params;

/* AS_STRIDED: element offset and strides (one per output axis) relative to
 * a row-major copy of the input; validated by the constructor. */
typedef struct emlx_as_strided_params {
  int64_t offset;
  int64_t strides[];
} emlx_as_strided_params;

/* VIEW_DTYPE carries no params (the output's dtype and shape say it all). */

/* GATHER, inputs (a, idx_0 .. idx_{naxes-1}); the index arrays share one
 * shape I (broadcast by the constructor); the output is I ++ slice sizes.
 * SCATTER / SCATTER_ADD, inputs (a, idx_0 .. idx_{naxes-1}, updates). */
typedef struct emlx_gather_params {
  emlx_index_mode mode;
  int32_t naxes;
  int32_t pad_;
  int32_t axes[];
} emlx_gather_params;

/* TAKE (inputs a, indices) and TAKE_ALONG_AXIS (inputs a, indices broadcast
 * against a as the constructor arranged): the axis of a. */
typedef struct emlx_take_params {
  emlx_index_mode mode;
  int32_t axis;
  int32_t pad_;
} emlx_take_params;

#endif
