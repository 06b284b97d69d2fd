/* emlx/conv.h — window reductions, window scatters and N-d convolution.
 *
 * Windows (Nx's window_sum / window_max / window_min / window_product and
 * window_scatter_max / window_scatter_min; XLA's reduce_window and
 * select_and_scatter). A window has one extent per axis of the input (rank
 * r, window_dims has r entries, each >= 1). Per axis, with input extent n,
 * window w, stride s >= 1, padding lo/hi (>= 0) and window dilation d >= 1,
 * the window's effective extent is (w - 1) * d + 1 and the output extent is
 *   floor((n + lo + hi - ((w - 1) * d + 1)) / s) + 1   (0 when negative).
 * Output element o covers input positions o * s + k * d - lo, k in [0, w);
 * positions in the padding hold the reduction's identity: 0 for sum, 1 for
 * product, -inf (integers: the dtype's minimum, bool: false) for max and
 * +inf (integers: maximum, bool: true) for min — so padding never changes a
 * result except for windows that lie wholly in it.
 *
 * Dtypes: every real dtype (not complex); the result has the input's dtype.
 * Integer sums and products wrap. f16/bf16/f32 sums and products accumulate
 * in f64 and round once. max/min propagate NaN (a window holding a NaN
 * gives NaN). Inputs may be any strided view.
 *
 * Convolution (MLX's conv_general plus XLA's batch_group_count) is
 * channels-last: input (N, spatial..., C_in), weight (C_out, kspatial...,
 * C_in / groups), output (N / batch_groups, out_spatial..., C_out), over any
 * number (>= 1) of spatial axes. Nx's default channels-first layout maps to
 * this by transposing input (N, C, S...) -> (N, S..., C), kernel (O, I, K...)
 * -> (O, K..., I) and the result back (the Elixir backend does that).
 *
 *   out[n, o..., co] = sum_{k..., ci} x[n', i..., c'] * w[co, k'..., ci]
 *
 * where per spatial axis the input is first dilated (input_dilation - 1 zeros
 * between elements) and padded (padding_low / padding_high zeros; negative
 * padding crops), position p = o * stride + k * kernel_dilation then indexes
 * the dilated, padded input; k' = k, or (ksize - 1 - k) when flip is set
 * (true convolution rather than cross-correlation). Output extent per axis:
 *   floor(((n - 1) * idil + 1 + lo + hi - ((k - 1) * kdil + 1)) / s) + 1
 * (0 when negative, and 0 when n is 0).
 * Feature groups (groups = G): C_in and C_out divisible by G, weight's last
 * axis C_in / G; output channel co belongs to group g = co / (C_out / G) and
 * reads input channels c' = g * (C_in / G) + ci.
 * Batch groups (batch_groups = B, XLA semantics): N and C_out divisible by B,
 * weight's last axis C_in; output channel co belongs to group
 * g = co / (C_out / B) and reads input batch n' = g * (N / B) + n.
 * groups > 1 together with batch_groups > 1 is an error (as in XLA).
 *
 * Conv dtypes: the promoted dtype of input and weight (MLX's table); floats
 * f16/bf16/f32/f64 (f16/bf16 accumulate in f32) and integers (wrapping);
 * bool and complex are errors. */
#ifndef EMLX_CONV_H
#define EMLX_CONV_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum emlx_window_op {
  EMLX_WINDOW_SUM,
  EMLX_WINDOW_MAX,
  EMLX_WINDOW_MIN,
  EMLX_WINDOW_PRODUCT,
  EMLX_WINDOW_OP_COUNT
} emlx_window_op;

/* Per-axis window options; each pointer has the input's rank entries, NULL
 * means the default (strides 1, padding 0, dilations 1). opts NULL: all
 * defaults. */
typedef struct emlx_window_options {
  const int64_t *strides;
  const int64_t *padding_low;
  const int64_t *padding_high;
  const int64_t *window_dilations;
} emlx_window_options;

/* The reduction op over every window of a (see above). ndim must equal a's
 * rank. Errors: NULL a or window_dims, ndim != rank, window extents < 1,
 * strides or dilations < 1, negative padding, complex dtype, bad op. */
EMLX_API emlx_array *emlx_window_reduce(emlx_array *a, emlx_window_op op,
                                        const int64_t *window_dims, int ndim,
                                        const emlx_window_options *opts);
EMLX_API emlx_array *emlx_window_sum(emlx_array *a, const int64_t *window_dims, int ndim,
                                     const emlx_window_options *opts);
EMLX_API emlx_array *emlx_window_max(emlx_array *a, const int64_t *window_dims, int ndim,
                                     const emlx_window_options *opts);
EMLX_API emlx_array *emlx_window_min(emlx_array *a, const int64_t *window_dims, int ndim,
                                     const emlx_window_options *opts);
EMLX_API emlx_array *emlx_window_product(emlx_array *a, const int64_t *window_dims, int ndim,
                                         const emlx_window_options *opts);

/* Nx's window_scatter_max / window_scatter_min (XLA's select_and_scatter):
 * the result has a's shape and dtype and starts as init_value (a scalar, or
 * any array of one element, cast to a's dtype); for each window (laid out as
 * in emlx_window_reduce with the same options), source's element for that
 * window is added at the position of the window's maximum (minimum) of a —
 * the first one in row-major window order on ties; NaN counts as larger
 * (smaller) than any number, the first NaN wins. Positions in the padding
 * are never selected; a window lying wholly in the padding drops its source
 * value. source must have the shape of the window reduction's output; it is
 * cast to a's dtype. Errors as emlx_window_reduce, plus a source shape
 * mismatch and an init_value of more than one element. */
EMLX_API emlx_array *emlx_window_scatter_max(emlx_array *a, emlx_array *source,
                                             emlx_array *init_value, const int64_t *window_dims,
                                             int ndim, const emlx_window_options *opts);
EMLX_API emlx_array *emlx_window_scatter_min(emlx_array *a, emlx_array *source,
                                             emlx_array *init_value, const int64_t *window_dims,
                                             int ndim, const emlx_window_options *opts);

/* Convolution options; the per-axis pointers have one entry per spatial axis
 * (input rank - 2) and NULL means the default (stride 1, padding 0,
 * dilations 1); groups and batch_groups 0 mean 1. opts NULL: all defaults. */
typedef struct emlx_conv_options {
  const int64_t *strides;
  const int64_t *padding_low;
  const int64_t *padding_high;
  const int64_t *kernel_dilation;
  const int64_t *input_dilation;
  int64_t groups;       /* feature groups (Nx's :feature_group_size) */
  int64_t batch_groups; /* Nx's :batch_group_size */
  bool flip;
} emlx_conv_options;

/* Convolution as described at the top of this header. Errors: NULL inputs,
 * ranks < 3 or different, channel mismatch (weight's last axis !=
 * C_in / groups), groups or batch_groups not dividing C_in / C_out / N,
 * strides or dilations < 1, dilated-padded input of negative extent, bool or
 * complex dtype, different devices. */
EMLX_API emlx_array *emlx_conv_general(emlx_array *input, emlx_array *weight,
                                       const emlx_conv_options *opts);

#ifdef __cplusplus
}
#endif
#endif
