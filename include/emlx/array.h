/* emlx/array.h — creating arrays from host memory, evaluating them, reading
 * them back, and their metadata. */
#ifndef EMLX_ARRAY_H
#define EMLX_ARRAY_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Copies ndim sizes from shape and prod(shape) elements of dtype from data
 * (row-major). data may be NULL only when the array is empty. */
EMLX_API emlx_array *emlx_from_blob(const void *data, emlx_dtype dtype, const int64_t *shape,
                                    int ndim, emlx_device dev);

/* Evaluates a and copies it row-major into out, which must hold exactly
 * emlx_nbytes(a) bytes (nbytes is checked). Returns 0 or -1. */
EMLX_API int emlx_to_blob(emlx_array *a, void *out, size_t nbytes);

/* Evaluates the arrays (and everything they depend on) on the calling thread.
 * Returns 0, or -1 with emlx_last_error(); arrays computed before a failure
 * stay computed, and the others stay lazy and can be evaluated again. */
EMLX_API int emlx_eval(emlx_array *const *arrays, size_t n);

EMLX_API emlx_array *emlx_retain(emlx_array *a); /* returns a; NULL-safe */
EMLX_API void emlx_release(emlx_array *a);       /* NULL-safe */

/* Metadata (never evaluates). On a NULL handle: ndim -1, shape NULL, size -1. */
EMLX_API int emlx_ndim(const emlx_array *a);
EMLX_API const int64_t *emlx_shape(const emlx_array *a);
EMLX_API int64_t emlx_dim(const emlx_array *a, int axis); /* negative axes count from the end */
EMLX_API int64_t emlx_size(const emlx_array *a);          /* number of elements */
EMLX_API size_t emlx_nbytes(const emlx_array *a);         /* size * dtype size */
EMLX_API emlx_dtype emlx_array_dtype(const emlx_array *a);
EMLX_API emlx_device emlx_array_device(const emlx_array *a);
EMLX_API bool emlx_is_evaluated(const emlx_array *a);

/* Element strides (not bytes) and offset of an evaluated array, which may be a
 * view; NULL / -1 (with an error) if a is not evaluated. */
EMLX_API const int64_t *emlx_strides(const emlx_array *a);
EMLX_API int64_t emlx_offset(const emlx_array *a);
/* Pointer to the first element of an evaluated array (honouring its offset);
 * valid while the caller holds a reference. NULL if not evaluated. */
EMLX_API const void *emlx_data(const emlx_array *a);
/* True when a shares its buffer with b (both evaluated). */
EMLX_API bool emlx_shares_buffer(const emlx_array *a, const emlx_array *b);

/* Evaluates a 1-element array and returns its value converted to double
 * (the real part for complex64). Returns 0 or -1. */
EMLX_API int emlx_item_f64(emlx_array *a, double *out);
EMLX_API int emlx_item_i64(emlx_array *a, int64_t *out);

#ifdef __cplusplus
}
#endif
#endif
