/* nif_attention.c — the handlers of the attention rows
 * (emlx/fast_attention.h): fast_sdpa and its masked / causal forms, and the
 * KV-cache functions, which answer {:ok, {attention, key_cache, value_cache}}.
 *
 * kv_cache_sdpa_update takes the caches over: their tensors are deallocated
 * once the node holds them, so the node is the caches' only owner and the
 * update runs in place (the engine's donation) — the spec's move-extraction.
 * The other KV functions leave their inputs alone (the update then copies
 * the caches unless the caller dropped every other reference). */
#include "emlx_nif.h"

/* {:ok, {attention, k, v}} taking ownership; the engine error when status != 0. */
static ERL_NIF_TERM ok_triple(nif_call *c, int status, emlx_array **out) {
  if (status != 0)
    return nif_engine_error(c);
  ERL_NIF_TERM items[3];
  for (int i = 0; i < 3; i++) {
    int ok;
    items[i] = nif_make_tensor(c->env, out[i], &ok);
    if (!ok) {
      for (int j = i + 1; j < 3; j++)
        emlx_release(out[j]);
      return nif_error(c, "out of memory for the tensor resource");
    }
  }
  return nif_ok(c, enif_make_tuple_from_array(c->env, items, 3));
}

/* fast_sdpa(q, k, v, scale, sinks | nil) */
NIF_HANDLER(h_fast_sdpa) {
  return nif_ok_tensor(c, emlx_fast_sdpa(a[0].array, a[1].array, a[2].array, (float)a[3].f,
                                         a[4].array));
}

/* fast_sdpa_causal(q, k, v, scale, sinks | nil) */
NIF_HANDLER(h_fast_sdpa_causal) {
  return nif_ok_tensor(c, emlx_fast_sdpa_causal(a[0].array, a[1].array, a[2].array,
                                                (float)a[3].f, a[4].array));
}

/* fast_sdpa_masked(q, k, v, scale, mask, sinks | nil) */
NIF_HANDLER(h_fast_sdpa_masked) {
  return nif_ok_tensor(c, emlx_fast_sdpa_masked(a[0].array, a[1].array, a[2].array,
                                                (float)a[3].f, a[4].array, a[5].array));
}

/* fast_sdpa_causal_key_masked(q, k, v, scale, key_mask, sinks | nil) */
NIF_HANDLER(h_fast_sdpa_causal_key_masked) {
  return nif_ok_tensor(c, emlx_fast_sdpa_causal_key_masked(a[0].array, a[1].array, a[2].array,
                                                           (float)a[3].f, a[4].array, a[5].array));
}

/* kv_cache_attention(q, new_k, new_v, k_cache, v_cache, offset, scale) */
NIF_HANDLER(h_kv_cache_attention) {
  emlx_array *out[3] = {NULL, NULL, NULL};
  int rc = emlx_kv_cache_attention(a[0].array, a[1].array, a[2].array, a[3].array, a[4].array,
                                   a[5].i, (float)a[6].f, &out[0], &out[1], &out[2]);
  return ok_triple(c, rc, out);
}

/* kv_cache_attention_masked(q, new_k, new_v, k_cache, v_cache, offset, scale, key_mask) */
NIF_HANDLER(h_kv_cache_attention_masked) {
  emlx_array *out[3] = {NULL, NULL, NULL};
  int rc = emlx_kv_cache_attention_masked(a[0].array, a[1].array, a[2].array, a[3].array,
                                          a[4].array, a[5].i, (float)a[6].f, a[7].array, &out[0],
                                          &out[1], &out[2]);
  return ok_triple(c, rc, out);
}

/* causal_kv_attention(q, new_k, new_v, k_cache, v_cache, offset, scale, key_mask | nil) */
NIF_HANDLER(h_causal_kv_attention) {
  emlx_array *out[3] = {NULL, NULL, NULL};
  int rc = emlx_causal_kv_attention(a[0].array, a[1].array, a[2].array, a[3].array, a[4].array,
                                    a[5].i, (float)a[6].f, a[7].array, &out[0], &out[1], &out[2]);
  return ok_triple(c, rc, out);
}

/* kv_cache_sdpa_update(q, new_k, new_v, k_cache, v_cache, offset, scale):
 * the cache tensors are deallocated on success (see the file comment). */
NIF_HANDLER(h_kv_cache_sdpa_update) {
  if (a[3].tensor == a[4].tensor)
    return nif_error(c, "k_cache and v_cache must be different tensors");
  emlx_array *out[3] = {NULL, NULL, NULL};
  int rc = emlx_kv_cache_sdpa_update(a[0].array, a[1].array, a[2].array, a[3].array, a[4].array,
                                     a[5].i, (float)a[6].f, &out[0], &out[1], &out[2]);
  if (rc == 0) {
    nif_tensor_deallocate(a[3].tensor);
    nif_tensor_deallocate(a[4].tensor);
  }
  return ok_triple(c, rc, out);
}
