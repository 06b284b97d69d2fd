/* params_attention.h — parameters of the attention family's primitives
 * (include/emlx/fast_attention.h; kernels in src/cpu/attention/).
 *
 * SDPA: inputs q, k, v, then the optional ones in this order, each present
 * when its flag is set: mask (broadcast to {B, N_q, T_q, T_kv}; bool, or
 * float32 when additive), key_mask ({B, T_kv} bool), sinks ({N_q} float32).
 * One output {B, N_q, T_q, D_v}.
 *
 * KV_ATTENTION: inputs q, new_k, new_v, k_cache, v_cache, then key_mask
 * ({B, offset + T_new} bool) when has_key_mask. Outputs: attention, the
 * updated key cache, the updated value cache. btnd selects the {B, T, N, D}
 * layout of every input and output (else {B, N, T, D}). */
#ifndef EMLX_PARAMS_ATTENTION_H
#define EMLX_PARAMS_ATTENTION_H

#include <stdint.h>

enum { EMLX_ATT_MASK_NONE = 0, EMLX_ATT_MASK_BOOL = 1, EMLX_ATT_MASK_ADD = 2 };

typedef struct emlx_attention_params {
  float scale;
  int32_t causal;
  int32_t mask_kind; /* EMLX_ATT_MASK_* */
  int32_t has_key_mask;
  int32_t has_sinks;
  int32_t btnd;   /* KV_ATTENTION only */
  int64_t offset; /* KV_ATTENTION only: first cache row written */
} emlx_attention_params;

#endif
