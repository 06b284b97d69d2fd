/* emlx/fast.h — fused transformer kernels (MLX's mlx::fast): RMS and layer
 * normalisation, rotary position embeddings (RoPE) and SwiGLU.
 *
 * Each is one lazy graph node evaluated by a single-pass kernel that reads
 * its input once and writes its output once, accumulating in float32 (as
 * MLX's kernels do). Inputs are borrowed; a new lazy array is returned, or
 * NULL with emlx_last_error() on bad input.
 *
 * Dtypes: x (and gate/up) are float32, float16 or bfloat16; other dtypes,
 * float64 included, are an error (the kernels compute in float32, so a
 * float64 result would silently lose precision).
 *
 * ---- normalisation over the last axis ------------------------------------------
 *   rms_norm(x, w, eps)      y = x * rsqrt(mean(x^2) + eps) * w
 *   layer_norm(x, w, b, eps) y = (x - mean(x)) * rsqrt(var(x) + eps) * w + b
 * var is the biased variance (divided by n, as MLX). x has rank >= 1; w and
 * b are NULL (none: 1 and 0) or rank-1 of x's last dimension. The result
 * dtype is MLX's: the promotion of x, w and b (bf16 x with f32 w gives f32).
 * Rows of zero length give an empty result.
 *
 * ---- rotary position embedding ---------------------------------------------------
 * The first `dims` features of the last axis (dims even, 0 < dims <= D) are
 * rotated in pairs; features from dims on are copied unchanged. Pair i
 * (i < dims / 2) turns by theta = position * scale * inv_freq[i] with
 * inv_freq[i] = base^(-2i / dims), or 1 / freqs[i] when freqs are given
 * (MLX's convention: `freqs` holds the frequencies' reciprocals, base^(2i/dims)).
 *   traditional false (split-half, Llama/Qwen): pair (j, j + dims/2)
 *   traditional true  (interleaved, GPT-J):     pair (2j, 2j + 1)
 *   out_a = a cos(theta) - b sin(theta),  out_b = a sin(theta) + b cos(theta)
 * theta is formed in float32 as MLX does; its cosine and sine are computed in
 * double and rounded to float32 once.
 *
 * Which axis is the sequence axis T (the one a token's position follows):
 *  - emlx_fast_rope: axis -2, x {B, ..., T, D} (e.g. {B, H, T, D}), as
 *    mlx::fast::rope. The position of row t is offset + t, for every batch.
 *  - emlx_fast_rope_ids, emlx_fast_rope_positions, emlx_fast_rope_with_freqs:
 *    axis 1, x {B, T, ..., D} (e.g. Bumblebee's {B, T, H, D}); every axis
 *    between T and D (heads) shares its token's angle. MLX's rope applied to
 *    {B, T, H, D} would rotate head h by position + h (elixir-nx/emlx#121);
 *    these three never do. A rank-3 {B, T, D} reads the same either way.
 * x has rank >= 3.
 *   rope_ids:        offsets {B} (or one element for all), any integer dtype:
 *                    position = offsets[b] + t
 *   rope_positions:  positions {B, T}, any integer dtype: position = positions[b, t]
 *   rope_with_freqs: like rope_ids, with freqs {dims / 2} (float) instead of base
 *
 * ---- SwiGLU ----------------------------------------------------------------------
 *   swiglu(gate, up) = gate * sigmoid(gate) * up = silu(gate) * up
 * gate and up have the same shape and the same dtype (no broadcasting, no
 * promotion: a mismatch is an error); the result has them too. exp is
 * computed in float32 within 2 ulp; exp(-gate) beyond float32's range gives
 * -0 or the product's NaN, as the formula does. */
#ifndef EMLX_FAST_H
#define EMLX_FAST_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

EMLX_API emlx_array *emlx_fast_rms_norm(emlx_array *x, emlx_array *weight, float eps);
EMLX_API emlx_array *emlx_fast_layer_norm(emlx_array *x, emlx_array *weight, emlx_array *bias,
                                          float eps);
EMLX_API emlx_array *emlx_fast_layer_norm_no_bias(emlx_array *x, emlx_array *weight, float eps);

EMLX_API emlx_array *emlx_fast_rope(emlx_array *x, int dims, bool traditional, float base,
                                    float scale, int64_t offset);
EMLX_API emlx_array *emlx_fast_rope_ids(emlx_array *x, int dims, bool traditional, float base,
                                        float scale, emlx_array *offsets);
EMLX_API emlx_array *emlx_fast_rope_positions(emlx_array *x, int dims, bool traditional,
                                              float base, float scale, emlx_array *positions);
EMLX_API emlx_array *emlx_fast_rope_with_freqs(emlx_array *x, int dims, bool traditional,
                                               float scale, emlx_array *offsets,
                                               emlx_array *freqs);

EMLX_API emlx_array *emlx_fast_swiglu(emlx_array *gate, emlx_array *up);

/* ---- attention: see below ---------------------------------------------------------
 * The attention kernels (fast_sdpa*, kv_cache_*, causal_kv_attention) are
 * declared in emlx/fast_attention.h. */

#ifdef __cplusplus
}
#endif

#endif
