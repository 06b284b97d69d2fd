/* kernels.h — the attention family's kernels (src/cpu/attention/):
 * attention.c: SDPA (the flash-style driver: work split, KV split for
 * decode, merge, finalise); kv_cache.c: KV_ATTENTION (in-place cache update,
 * then the same driver over the valid prefix); attention_body.h, compiled by
 * attention_{scalar,avx2,avx512}.c: the per-ISA tile loop. */
#ifndef EMLX_CPU_ATTENTION_KERNELS_H
#define EMLX_CPU_ATTENTION_KERNELS_H

#include "internal.h"

int emlx_cpu_sdpa(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_kv_attention(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);

/* Designated initialisers "[EMLX_PRIM_X] = kernel," for this family. */
#define EMLX_CPU_ATTENTION_KERNELS                                                                 \
  [EMLX_PRIM_SDPA] = emlx_cpu_sdpa, [EMLX_PRIM_KV_ATTENTION] = emlx_cpu_kv_attention,

#endif
