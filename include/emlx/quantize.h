/* emlx/quantize.h — quantization in MLX's formats: quantize, dequantize,
 * quantized_matmul and gather_qmm (MLX's mx.quantize, mx.dequantize,
 * mx.quantized_matmul, mx.gather_qmm).
 *
 * Formats (bit-exact with MLX; golden vectors made by MLX itself in
 * tests/quantize/). A matrix is quantized along its last axis in groups of
 * group_size elements; leading axes are batch axes (any rank >= 2). Each row
 * of the packed weights is a little-endian bit stream of bits-wide codes held
 * in uint32 words (code i at bit i * bits; for 3, 5 and 6 bits codes straddle
 * bytes and words), so a row of K values takes K * bits / 32 words.
 *
 *   mode    bits              group        codes          scales         biases
 *   affine  2 3 4 5 6 8       32 64 128    unsigned ints  w's dtype      w's dtype
 *   mxfp4   4                 32           e2m1           uint8 e8m0     none
 *   mxfp8   8                 32           e4m3           uint8 e8m0     none
 *   nvfp4   4                 16           e2m1           uint8 e4m3     none
 *
 * affine: per group, scale = max((max - min) / (2^bits - 1), 1e-7) with the
 * sign and the edge chosen as MLX does (the edge value is exactly
 * representable), q = clip(rint((w - bias) / scale), 0, 2^bits - 1), and
 * value = scale * q + bias. The microscaled modes use MLX's scale rounding
 * (e8m0: the power of two at or above max|w| / max code, MLX's fp8
 * conversion for e4m3) and MLX's nearest
 * code (ties to the lower code magnitude). NaN and Inf inputs give exactly the
 * codes and scales MLX gives. Quantized inputs are float32, float16 or
 * bfloat16 (float64 is an error, as in MLX's CPU kernels).
 *
 * Every function validates its inputs and returns NULL / -1 with a message
 * naming the problem (emlx_last_error()); nothing aborts. */
#ifndef EMLX_QUANTIZE_H
#define EMLX_QUANTIZE_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum emlx_quantization_mode {
  EMLX_QUANT_AFFINE = 0,
  EMLX_QUANT_MXFP4 = 1,
  EMLX_QUANT_MXFP8 = 2,
  EMLX_QUANT_NVFP4 = 3,
  EMLX_QUANT_MODE_COUNT
} emlx_quantization_mode;

/* "affine", "mxfp4", "mxfp8", "nvfp4" -> *mode. 0, or -1 with an error. */
EMLX_API int emlx_quantization_mode_parse(const char *name, emlx_quantization_mode *mode);
/* The mode's name ("invalid" for a value outside the enum). */
EMLX_API const char *emlx_quantization_mode_name(emlx_quantization_mode mode);

/* Quantizes w (rank >= 2; float32, float16 or bfloat16) along its last axis.
 * group_size / bits of 0 take the mode's defaults (affine: 64 and 4; mxfp4:
 * 32, 4; mxfp8: 32, 8; nvfp4: 16, 4). Outputs: *wq uint32 (..., K * bits /
 * 32); *scales (..., K / group_size) in w's dtype (affine) or uint8; *biases
 * like scales for affine, set to NULL for the other modes. biases may be NULL
 * (the biases are then dropped); wq and scales must not be. Errors: a last
 * axis not divisible by the group size, an unsupported bits / group size /
 * mode combination, rank < 2, a non-float or float64 dtype. */
EMLX_API int emlx_quantize(emlx_array *w, int group_size, int bits, emlx_quantization_mode mode,
                           emlx_array **wq, emlx_array **scales, emlx_array **biases);

/* The dense matrix back: shape (..., wq.shape[-1] * 32 / bits). dtype:
 * affine: promote(scales, biases); the other modes: bfloat16 (MLX's default).
 * Each value is rounded as MLX rounds it (affine: the product scale * q in the
 * scales' dtype, then + bias). biases must be given for affine and be NULL
 * otherwise. Errors: wq not uint32, shapes of wq / scales / biases that do not
 * match (same leading axes; wq.shape[-1] * 32 == scales.shape[-1] *
 * group_size * bits), wrong scales dtype (uint8 for mx/nv, a float for
 * affine), unsupported parameters. */
EMLX_API emlx_array *emlx_dequantize(emlx_array *wq, emlx_array *scales, emlx_array *biases,
                                     int group_size, int bits, emlx_quantization_mode mode);
/* The same with an explicit float output dtype (float32, float16, bfloat16). */
EMLX_API emlx_array *emlx_dequantize_to(emlx_array *wq, emlx_array *scales, emlx_array *biases,
                                        int group_size, int bits, emlx_quantization_mode mode,
                                        emlx_dtype dtype);

/* x @ dequantize(w)^T (transpose true: w holds W as (N, K), quantized along
 * K) or x @ dequantize(w) (transpose false: W is (K, N), quantized along N),
 * without ever forming dequantize(w) in memory. x: (..., M, K) or (K);
 * float32, float16 or bfloat16. w, scales, biases: (..., rows, cols) with
 * the same leading axes; when both x and w have batch axes they broadcast
 * against each other, and a 2-D w serves every matrix of x. Result: (..., M,
 * N) (a 1-D x gives (N)); dtype promote(x, scales, biases) for affine, x's
 * dtype otherwise. Accumulates in float32. */
EMLX_API emlx_array *emlx_quantized_matmul(emlx_array *x, emlx_array *w, emlx_array *scales,
                                           emlx_array *biases, bool transpose, int group_size,
                                           int bits, emlx_quantization_mode mode);

/* quantized_matmul with a gather of matrices (mixture of experts): w
 * (E..., rows, cols) stacks experts on its leading axes, x (B..., M, K)
 * stacks activation matrices. lhs_indices (integers, any shape) picks a
 * matrix of x (index into the flattened B...), rhs_indices one of w
 * (flattened E...); either may be NULL (then 0..B-1 shaped B..., or 0..E-1
 * shaped E...). The two broadcast to a shape S; the result is (S..., M, N),
 * out[s] = x[lhs[s]] @ W[rhs[s]]. The gather happens inside the kernel: no
 * expert's weights are copied. sorted_indices says rhs_indices is sorted
 * (a hint: the result is the same). An index out of range is an error at
 * evaluation. Both indices NULL: quantized_matmul. */
EMLX_API emlx_array *emlx_gather_qmm(emlx_array *x, emlx_array *w, emlx_array *scales,
                                     emlx_array *biases, emlx_array *lhs_indices,
                                     emlx_array *rhs_indices, bool transpose, int group_size,
                                     int bits, emlx_quantization_mode mode, bool sorted_indices);

#ifdef __cplusplus
}
#endif
#endif
