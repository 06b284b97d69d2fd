/* emlx/ops.h — array operations. Every op validates its inputs, infers the
 * result's shape and dtype, and returns a new lazy array (or NULL with
 * emlx_last_error()). Inputs are borrowed.
 *
 * Broadcasting follows NumPy/MLX (align trailing axes; a size-1 axis
 * stretches). Binary ops promote with emlx_promote_types(). Axes may be
 * negative (counted from the end). Integer arithmetic wraps. */
#ifndef EMLX_OPS_H
#define EMLX_OPS_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- creation ---------------------------------------------------------- */
/* A 0-d array holding value converted to dtype. */
EMLX_API emlx_array *emlx_scalar_tensor(double value, emlx_dtype dtype, emlx_device dev);
/* Exact for every integer dtype (u64 values pass through their bit pattern). */
EMLX_API emlx_array *emlx_scalar_tensor_int(int64_t value, emlx_dtype dtype, emlx_device dev);
EMLX_API emlx_array *emlx_scalar_tensor_complex(float re, float im, emlx_device dev);
EMLX_API emlx_array *emlx_scalar_tensor_complex128(double re, double im, emlx_device dev);
EMLX_API emlx_array *emlx_full(const int64_t *shape, int ndim, double value, emlx_dtype dtype,
                               emlx_device dev);
/* Broadcasts the (0-d or broadcastable) array value to shape, cast to dtype. */
EMLX_API emlx_array *emlx_full_array(const int64_t *shape, int ndim, emlx_array *value,
                                     emlx_dtype dtype);
EMLX_API emlx_array *emlx_ones(const int64_t *shape, int ndim, emlx_dtype dtype, emlx_device dev);
EMLX_API emlx_array *emlx_zeros(const int64_t *shape, int ndim, emlx_dtype dtype,
                                emlx_device dev);
/* ceil((stop - start) / step) elements start + i * step (computed in f64,
 * then cast); step must be non-zero and finite. */
EMLX_API emlx_array *emlx_arange(double start, double stop, double step, emlx_dtype dtype,
                                 emlx_device dev);
/* n x m with ones on diagonal k (k > 0 above the main diagonal). */
EMLX_API emlx_array *emlx_eye(int64_t n, int64_t m, int64_t k, emlx_dtype dtype,
                              emlx_device dev);

/* ---- elementwise ------------------------------------------------------- */
EMLX_API emlx_array *emlx_add(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_subtract(emlx_array *a, emlx_array *b);
EMLX_API emlx_array *emlx_multiply(emlx_array *a, emlx_array *b);
/* True division: integer and bool inputs give float32 (as MLX). Integer
 * division by zero follows IEEE on the float result. */
EMLX_API emlx_array *emlx_divide(emlx_array *a, emlx_array *b);
/* Not defined for bool (error, as MLX). */
EMLX_API emlx_array *emlx_negate(emlx_array *a);
/* Integer and bool inputs give float32. float32 results are the C
 * library's double exp rounded once, bit for bit (see elementwise.h). */
EMLX_API emlx_array *emlx_exp(emlx_array *a);
/* Float to integer truncates toward zero (out-of-range and NaN saturate to
 * the type's limits, NaN to 0); anything to bool is "!= 0"; complex to real
 * keeps the real part. */
EMLX_API emlx_array *emlx_astype(emlx_array *a, emlx_dtype dtype);

/* ---- shape ------------------------------------------------------------- */
EMLX_API emlx_array *emlx_broadcast_to(emlx_array *a, const int64_t *shape, int ndim);
/* One entry of shape may be -1 (inferred). A view when the data allows. */
EMLX_API emlx_array *emlx_reshape(emlx_array *a, const int64_t *shape, int ndim);
/* axes: a permutation of 0..ndim-1; NULL reverses the axes. A view. */
EMLX_API emlx_array *emlx_transpose(emlx_array *a, const int *axes, int naxes);
/* start/stop/strides hold one entry per axis (strides may be NULL: all 1);
 * indices are clamped like Python slices, negative ones count from the end,
 * negative strides walk backwards. A view. */
EMLX_API emlx_array *emlx_slice(emlx_array *a, const int64_t *start, const int64_t *stop,
                                const int64_t *strides, int ndim);
/* axes NULL removes every size-1 axis; named axes must have size 1. A view. */
EMLX_API emlx_array *emlx_squeeze(emlx_array *a, const int *axes, int naxes);
EMLX_API emlx_array *emlx_expand_dims(emlx_array *a, const int *axes, int naxes);
/* A row-major copy with its own buffer. */
EMLX_API emlx_array *emlx_copy(emlx_array *a);

/* ---- reductions -------------------------------------------------------- */
/* Over the listed axes (axes NULL: all axes; naxes 0 with non-NULL axes: no
 * reduction). Duplicate axes are an error. sum: bool/s8/s16/s32 give int32,
 * u8/u16/u32 give uint32, others keep their dtype (f16/bf16 accumulate in
 * f32). max: keeps the dtype; NaN propagates; empty reductions are an error. */
EMLX_API emlx_array *emlx_sum(emlx_array *a, const int *axes, int naxes, bool keep_dims);
EMLX_API emlx_array *emlx_max(emlx_array *a, const int *axes, int naxes, bool keep_dims);

/* ---- more creation (MLX's linspace and tri) ---------------------------- */
/* num evenly spaced values from start to stop, both included:
 * start * (1 - t) + stop * t, t = i / (num - 1), in f64, then cast to dtype
 * (as astype; complex64 is an error). num 0: empty; num 1: {start}. */
EMLX_API emlx_array *emlx_linspace(double start, double stop, int64_t num, emlx_dtype dtype,
                                   emlx_device dev);
/* n x m, ones where column - row <= k (on and below diagonal k). */
EMLX_API emlx_array *emlx_tri(int64_t n, int64_t m, int64_t k, emlx_dtype dtype,
                              emlx_device dev);

#ifdef __cplusplus
}
#endif
#endif
