/* emlx/fast_attention.h — fused scaled dot-product attention (MLX's
 * mx.fast.scaled_dot_product_attention) and the KV-cache attention of the
 * decode loop.
 *
 * Shapes: q {B, N_q, T_q, D}, k {B, N_kv, T_kv, D}, v {B, N_kv, T_kv, D_v};
 * the result is {B, N_q, T_q, D_v} in q's dtype. q, k and v share one dtype:
 * float32, float16 or bfloat16 (accumulation is float32). GQA is native:
 * N_q must be a multiple of N_kv, and query head n reads key/value head
 * n / (N_q / N_kv); K and V are never tiled in memory. Any strides are
 * accepted (views are read in place).
 *
 * The kernel is flash-style: K/V tiles stream through an online softmax, no
 * T_q x T_kv matrix is formed; for short queries (decode) the key length is
 * split across the thread pool and the partial (max, sum, accumulator)
 * triples are merged.
 *
 * Masking follows MLX:
 * - causal: query i sees keys j <= i + (T_kv - T_q) (aligned bottom-right);
 * - mask: broadcastable to {B, N_q, T_q, T_kv}; a bool mask hides the false
 *   entries, a float mask is added to the scaled scores;
 * - key_mask: {B, T_kv}, any bool/integer/float dtype, non-zero = attend;
 * - sinks: {N_q}, a per-head logit that joins every row's softmax
 *   denominator (with no value: it only takes weight away).
 * Fully masked rows never give NaN. Keys hidden by a boolean rule (causal,
 * bool mask, key_mask) score as the most negative finite float, as in MLX,
 * so a row that sees no key at all gets MLX's answer: the plain mean of V
 * over all T_kv keys (and 0 with sinks, which then take all the weight). A
 * row whose every score is -inf through an additive mask gives 0 (MLX gives
 * NaN there). T_kv = 0 gives zeros.
 *
 * Every function borrows its inputs and returns new references (or NULL /
 * non-zero with emlx_last_error()). */
#ifndef EMLX_FAST_ATTENTION_H
#define EMLX_FAST_ATTENTION_H

#include "array.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct emlx_sdpa_options {
  float scale;          /* 0: 1 / sqrt(D) */
  bool causal;          /* bottom-right aligned causal mask */
  emlx_array *mask;     /* NULL, bool or float, broadcastable to {B, N_q, T_q, T_kv} */
  emlx_array *key_mask; /* NULL or {B, T_kv}, non-zero = attend */
  emlx_array *sinks;    /* NULL or {N_q} */
} emlx_sdpa_options;

/* The general form; opts may be NULL (no mask, scale 1 / sqrt(D)). */
EMLX_API emlx_array *emlx_fast_scaled_dot_product_attention(emlx_array *q, emlx_array *k,
                                                            emlx_array *v,
                                                            const emlx_sdpa_options *opts);

/* The spec's functions (EMLX.fast_sdpa, ...); sinks may be NULL. */
EMLX_API emlx_array *emlx_fast_sdpa(emlx_array *q, emlx_array *k, emlx_array *v, float scale,
                                    emlx_array *sinks);
EMLX_API emlx_array *emlx_fast_sdpa_causal(emlx_array *q, emlx_array *k, emlx_array *v,
                                           float scale, emlx_array *sinks);
EMLX_API emlx_array *emlx_fast_sdpa_masked(emlx_array *q, emlx_array *k, emlx_array *v,
                                           float scale, emlx_array *mask, emlx_array *sinks);
EMLX_API emlx_array *emlx_fast_sdpa_causal_key_masked(emlx_array *q, emlx_array *k,
                                                      emlx_array *v, float scale,
                                                      emlx_array *key_mask, emlx_array *sinks);

/* ---- KV cache --------------------------------------------------------------
 * One fused node: writes new_k / new_v into the caches at rows
 * [offset, offset + T_new) and attends q over the valid prefix
 * [0, offset + T_new) with the causal mask aligned bottom-right (query i of
 * T_q sees cache rows j <= offset + T_new - T_q + i; with T_q = T_new that is
 * j <= offset + i). The three results go to *attention, *key_cache_out,
 * *value_cache_out (new references; on failure all three are NULL).
 *
 * In place: when the caller holds no other reference to k_cache / v_cache
 * (release them after this call, before eval) and they are dense, the
 * updated caches reuse their buffers, so a decode loop of
 *     emlx_kv_cache_sdpa_update(q, k, v, kc, vc, pos, s, &o, &kc2, &vc2);
 *     emlx_release(kc); emlx_release(vc); emlx_eval(&o, 1); kc = kc2; ...
 * allocates no cache memory after its first step. Otherwise the caches are
 * copied first and the inputs stay untouched.
 *
 * q, new_k, new_v and the caches share one dtype; key_mask (NULL: none) is
 * {B, offset + T_new}, non-zero = attend; 0 <= offset and
 * offset + T_new <= T_max. */

/* Bumblebee layout: q {B, T_q, N_q, D}, new_k / new_v {B, T_new, N_kv, D},
 * caches {B, T_max, N_kv, D}; attention {B, T_q, N_q, D}. */
EMLX_API int emlx_kv_cache_attention(emlx_array *q, emlx_array *new_k, emlx_array *new_v,
                                     emlx_array *k_cache, emlx_array *v_cache, int64_t offset,
                                     float scale, emlx_array **attention,
                                     emlx_array **key_cache_out, emlx_array **value_cache_out);
EMLX_API int emlx_kv_cache_attention_masked(emlx_array *q, emlx_array *new_k, emlx_array *new_v,
                                            emlx_array *k_cache, emlx_array *v_cache,
                                            int64_t offset, float scale, emlx_array *key_mask,
                                            emlx_array **attention, emlx_array **key_cache_out,
                                            emlx_array **value_cache_out);
/* The same with an optional key_mask (EMLX.causal_kv_attention). */
EMLX_API int emlx_causal_kv_attention(emlx_array *q, emlx_array *new_k, emlx_array *new_v,
                                      emlx_array *k_cache, emlx_array *v_cache, int64_t offset,
                                      float scale, emlx_array *key_mask, emlx_array **attention,
                                      emlx_array **key_cache_out, emlx_array **value_cache_out);
/* MLX layout: q {B, N_q, T_q, D}, new_k / new_v {B, N_kv, T_new, D}, caches
 * {B, N_kv, T_max, D}; attention {B, N_q, T_q, D}. */
EMLX_API int emlx_kv_cache_sdpa_update(emlx_array *q, emlx_array *new_k, emlx_array *new_v,
                                       emlx_array *k_cache, emlx_array *v_cache, int64_t offset,
                                       float scale, emlx_array **attention,
                                       emlx_array **key_cache_out, emlx_array **value_cache_out);

#ifdef __cplusplus
}
#endif
#endif
