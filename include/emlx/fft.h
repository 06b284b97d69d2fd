/* emlx/fft.h — fast Fourier transforms (MLX's mx.fft.fft/ifft/fft2/ifft2/
 * fftn/ifftn).
 *
 * Conventions: inputs are borrowed, a new lazy array is returned (NULL +
 * emlx_last_error() on failure); axes may be negative (counted from the
 * end).
 *
 * Dtypes: the result is always complex64. A complex64 input is used as is;
 * an input of any other dtype (bool, integers, f16, bf16, f32, f64) is
 * converted to complex64 first (imaginary part 0), as MLX does. The
 * arithmetic is f32 with twiddle factors computed in f64 and rounded once:
 * the error of a length-n transform is about log2(n) * eps(f32) * norm(x)
 * (a few times more for lengths with a large prime factor, which go through
 * Bluestein's algorithm).
 *
 * Definitions (numpy's, "backward" normalisation):
 *   fft:  y[k] = sum_j x[j] * exp(-2 pi i j k / n)
 *   ifft: y[k] = (1/n) sum_j x[j] * exp(+2 pi i j k / n)
 * Any length n >= 1 is supported: powers of two and lengths whose prime
 * factors are small are computed directly (mixed radix 2, 3, 4, 5, 7, 8 and
 * a generic odd radix), other lengths through Bluestein's chirp-z algorithm.
 *
 * Lengths: n (or s[i]) is the length of the transform along its axis. When
 * it is smaller than the axis, the input is truncated to its first n
 * entries; when larger, it is zero-padded at the end; the output axis has
 * length n. 0 means "the axis's own length" (numpy's n=None); a negative
 * length is an error, and so is an axis of length 0 transformed at its own
 * length (numpy and MLX refuse a zero-point FFT). Transforming an array
 * whose other axes are empty gives an empty complex64 array.
 *
 * Errors: NULL input, an axis out of range, a repeated axis, a negative
 * length, a zero-length transform. */
#ifndef EMLX_FFT_H
#define EMLX_FFT_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One-dimensional transform along `axis` with length n (0: the axis's). */
EMLX_API emlx_array *emlx_fft(emlx_array *a, int64_t n, int axis);
EMLX_API emlx_array *emlx_ifft(emlx_array *a, int64_t n, int axis);

/* Two-dimensional transform. axes: two distinct axes, or NULL for the last
 * two {-2, -1} (the array needs rank >= 2). s: the two lengths, in the
 * order of axes, or NULL for the axes' own lengths (entries 0 also mean
 * "own length"). */
EMLX_API emlx_array *emlx_fft2(emlx_array *a, const int64_t *s, const int *axes);
EMLX_API emlx_array *emlx_ifft2(emlx_array *a, const int64_t *s, const int *axes);

/* N-dimensional transform over any set of distinct axes.
 *   axes NULL: every axis of a (naxes is ignored; s, when given, has one
 *     length per axis of a);
 *   otherwise naxes axes, in any order, and s NULL or naxes lengths.
 * naxes 0 with non-NULL axes transforms nothing: the result is the input
 * converted to complex64. The transforms are separable, so the order of
 * the axes does not change the result (beyond rounding). */
EMLX_API emlx_array *emlx_fftn(emlx_array *a, const int64_t *s, const int *axes, int naxes);
EMLX_API emlx_array *emlx_ifftn(emlx_array *a, const int64_t *s, const int *axes, int naxes);

#ifdef __cplusplus
}
#endif
#endif
