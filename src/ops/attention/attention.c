/* attention.c — constructors of the attention family
 * (include/emlx/fast_attention.h): validate shapes and dtypes, bring the
 * optional inputs to the form the kernels read (mask broadcast to
 * {B, N_q, T_q, T_kv} as a view, additive masks as float32, key masks as
 * bool, sinks as float32), and make one SDPA or KV_ATTENTION node
 * (kernels: src/cpu/attention/). */
#include <math.h>
#include <string.h>

#include "ops_util.h"
#include "params_attention.h"

static bool att_dtype_ok(emlx_dtype d) {
  return d == EMLX_FLOAT32 || d == EMLX_FLOAT16 || d == EMLX_BFLOAT16;
}

static const char *att_dname(emlx_dtype d) {
  static const char *const names[EMLX_DTYPE_COUNT] = {
      [EMLX_BOOL] = "bool",       [EMLX_UINT8] = "uint8",     [EMLX_UINT16] = "uint16",
      [EMLX_UINT32] = "uint32",   [EMLX_UINT64] = "uint64",   [EMLX_INT8] = "int8",
      [EMLX_INT16] = "int16",     [EMLX_INT32] = "int32",     [EMLX_INT64] = "int64",
      [EMLX_FLOAT16] = "float16", [EMLX_BFLOAT16] = "bfloat16", [EMLX_FLOAT32] = "float32",
      [EMLX_FLOAT64] = "float64", [EMLX_COMPLEX64] = "complex64"};
  const char *n = (int)d >= 0 && d < EMLX_DTYPE_COUNT ? names[d] : NULL;
  return n ? n : "?";
}

/* q, k, v (rank 4, one float dtype) with `what` naming the layout. */
static bool att_check_qkv(emlx_array *const *a, const char *const *names, int n, const char *what,
                          const char *op) {
  for (int i = 0; i < n; i++) {
    if (!a[i]) {
      emlx__set_error("%s: %s is NULL", op, names[i]);
      return false;
    }
    if (a[i]->ndim != 4) {
      emlx__set_error("%s: %s must have rank 4 %s, got rank %d", op, names[i], what, a[i]->ndim);
      return false;
    }
  }
  if (!att_dtype_ok(a[0]->dtype)) {
    emlx__set_error("%s: %s must be float32, float16 or bfloat16, got %s", op, names[0],
                    att_dname(a[0]->dtype));
    return false;
  }
  for (int i = 1; i < n; i++)
    if (a[i]->dtype != a[0]->dtype) {
      emlx__set_error("%s: %s and %s must have the same dtype, got %s and %s", op, names[0],
                      names[i], att_dname(a[0]->dtype), att_dname(a[i]->dtype));
      return false;
    }
  return true;
}

static emlx_array *att_key_mask(emlx_array *km, int64_t B, int64_t T, const char *op) {
  if (km->ndim != 2 || km->shape[0] != B || km->shape[1] != T)
    return EMLX_FAIL_NULL("%s: key_mask must have shape {%lld, %lld} ({B, T_kv}), got rank %d%s",
                          op, (long long)B, (long long)T, km->ndim,
                          km->ndim == 2 ? " of another shape" : "");
  if (km->dtype == EMLX_COMPLEX64)
    return EMLX_FAIL_NULL("%s: key_mask must be bool, integer or float, got complex64", op);
  return emlx__cast(km, EMLX_BOOL);
}

static emlx_array *att_sinks(emlx_array *s, int64_t Nq, const char *op) {
  if (s->ndim != 1 || s->shape[0] != Nq)
    return EMLX_FAIL_NULL("%s: sinks must have shape {%lld} ({N_q})", op, (long long)Nq);
  if (!emlx_dtype_is_float(s->dtype))
    return EMLX_FAIL_NULL("%s: sinks must be a float tensor, got %s", op, att_dname(s->dtype));
  return emlx__cast(s, EMLX_FLOAT32);
}

/* The mask as the kernel reads it: a {B, N_q, T_q, T_kv} view, bool or f32. */
static emlx_array *att_mask(emlx_array *mask, const int64_t *full, int32_t *kind, const char *op) {
  if (mask->ndim > 4)
    return EMLX_FAIL_NULL("%s: mask must have rank <= 4 (broadcastable to {B, N_q, T_q, T_kv}), "
                          "got rank %d",
                          op, mask->ndim);
  for (int i = 0; i < mask->ndim; i++) {
    int64_t d = mask->shape[mask->ndim - 1 - i], f = full[3 - i];
    if (d != 1 && d != f)
      return EMLX_FAIL_NULL("%s: mask dimension %d (%lld) does not broadcast to {B, N_q, T_q, "
                            "T_kv} = {%lld, %lld, %lld, %lld}",
                            op, mask->ndim - 1 - i, (long long)d, (long long)full[0],
                            (long long)full[1], (long long)full[2], (long long)full[3]);
  }
  emlx_array *m;
  if (mask->dtype == EMLX_BOOL) {
    *kind = EMLX_ATT_MASK_BOOL;
    m = emlx_retain(mask);
  } else if (emlx_dtype_is_float(mask->dtype)) {
    *kind = EMLX_ATT_MASK_ADD;
    m = emlx__cast(mask, EMLX_FLOAT32);
  } else {
    return EMLX_FAIL_NULL("%s: mask must be bool or float (additive), got %s", op,
                          att_dname(mask->dtype));
  }
  if (!m)
    return NULL;
  emlx_array *b = emlx_broadcast_to(m, full, 4);
  emlx_release(m);
  return b;
}

static emlx_array *sdpa(emlx_array *q, emlx_array *k, emlx_array *v, float scale, bool causal,
                        emlx_array *mask, emlx_array *key_mask, emlx_array *sinks,
                        const char *op) {
  emlx_array *qkv[3] = {q, k, v};
  static const char *const names[3] = {"q", "k", "v"};
  if (!att_check_qkv(qkv, names, 3, "{B, N, T, D}", op))
    return NULL;
  int64_t B = q->shape[0], Nq = q->shape[1], Tq = q->shape[2], D = q->shape[3];
  int64_t Nkv = k->shape[1], Tkv = k->shape[2];
  if (k->shape[0] != B || v->shape[0] != B)
    return EMLX_FAIL_NULL("%s: q, k and v must have the same batch size, got %lld, %lld, %lld", op,
                          (long long)B, (long long)k->shape[0], (long long)v->shape[0]);
  if (k->shape[3] != D)
    return EMLX_FAIL_NULL("%s: q and k must have the same head size, got %lld and %lld", op,
                          (long long)D, (long long)k->shape[3]);
  if (v->shape[1] != Nkv || v->shape[2] != Tkv)
    return EMLX_FAIL_NULL("%s: k and v must have the same heads and length, got {%lld, %lld} and "
                          "{%lld, %lld}",
                          op, (long long)Nkv, (long long)Tkv, (long long)v->shape[1],
                          (long long)v->shape[2]);
  if (Nkv == 0 ? Nq != 0 : Nq % Nkv != 0)
    return EMLX_FAIL_NULL("%s: the query heads (%lld) must be a multiple of the key/value heads "
                          "(%lld)",
                          op, (long long)Nq, (long long)Nkv);
  if (!isfinite(scale))
    return EMLX_FAIL_NULL("%s: scale must be finite", op);
  emlx_attention_params p;
  memset(&p, 0, sizeof p);
  p.scale = scale;
  p.causal = causal;
  emlx_array *ins[6] = {q, k, v, NULL, NULL, NULL};
  int n = 3, first_owned = 3;
  emlx_array *r = NULL;
  if (mask) {
    const int64_t full[4] = {B, Nq, Tq, Tkv};
    if (!(ins[n] = att_mask(mask, full, &p.mask_kind, op)))
      goto done;
    n++;
  }
  if (key_mask) {
    if (!(ins[n] = att_key_mask(key_mask, B, Tkv, op)))
      goto done;
    n++;
    p.has_key_mask = 1;
  }
  if (sinks) {
    if (!(ins[n] = att_sinks(sinks, Nq, op)))
      goto done;
    n++;
    p.has_sinks = 1;
  }
  const int64_t shape[4] = {B, Nq, Tq, v->shape[3]};
  r = emlx__op(EMLX_PRIM_SDPA, ins, n, &p, sizeof p, q->dtype, shape, 4);
done:
  for (int i = first_owned; i < 6; i++)
    emlx_release(ins[i]);
  return r;
}

emlx_array *emlx_fast_scaled_dot_product_attention(emlx_array *q, emlx_array *k, emlx_array *v,
                                                   const emlx_sdpa_options *opts) {
  const char *op = "fast_scaled_dot_product_attention";
  emlx_sdpa_options none = {0};
  if (!opts)
    opts = &none;
  float scale = opts->scale;
  if (scale == 0.0f && q && q->ndim == 4)
    scale = q->shape[3] > 0 ? 1.0f / sqrtf((float)q->shape[3]) : 1.0f;
  return sdpa(q, k, v, scale, opts->causal, opts->mask, opts->key_mask, opts->sinks, op);
}

emlx_array *emlx_fast_sdpa(emlx_array *q, emlx_array *k, emlx_array *v, float scale,
                           emlx_array *sinks) {
  return sdpa(q, k, v, scale, false, NULL, NULL, sinks, "fast_sdpa");
}

emlx_array *emlx_fast_sdpa_causal(emlx_array *q, emlx_array *k, emlx_array *v, float scale,
                                  emlx_array *sinks) {
  return sdpa(q, k, v, scale, true, NULL, NULL, sinks, "fast_sdpa_causal");
}

emlx_array *emlx_fast_sdpa_masked(emlx_array *q, emlx_array *k, emlx_array *v, float scale,
                                  emlx_array *mask, emlx_array *sinks) {
  if (!mask)
    return EMLX_FAIL_NULL("fast_sdpa_masked: mask is NULL");
  return sdpa(q, k, v, scale, false, mask, NULL, sinks, "fast_sdpa_masked");
}

emlx_array *emlx_fast_sdpa_causal_key_masked(emlx_array *q, emlx_array *k, emlx_array *v,
                                             float scale, emlx_array *key_mask,
                                             emlx_array *sinks) {
  if (!key_mask)
    return EMLX_FAIL_NULL("fast_sdpa_causal_key_masked: key_mask is NULL");
  return sdpa(q, k, v, scale, true, NULL, key_mask, sinks, "fast_sdpa_causal_key_masked");
}

/* ---- KV cache -------------------------------------------------------------- */

static int kv_attention(emlx_array *q, emlx_array *nk, emlx_array *nv, emlx_array *kc,
                        emlx_array *vc, int64_t offset, float scale, emlx_array *key_mask,
                        bool btnd, const char *op, emlx_array **attention,
                        emlx_array **key_cache_out, emlx_array **value_cache_out) {
  if (!attention || !key_cache_out || !value_cache_out)
    return EMLX_FAIL("%s: an output pointer is NULL", op);
  *attention = *key_cache_out = *value_cache_out = NULL;
  emlx_array *arr[5] = {q, nk, nv, kc, vc};
  static const char *const names[5] = {"q", "new_k", "new_v", "k_cache", "v_cache"};
  if (!att_check_qkv(arr, names, 5, btnd ? "{B, T, N, D}" : "{B, N, T, D}", op))
    return -1;
  int tax = btnd ? 1 : 2, nax = btnd ? 2 : 1;
  int64_t B = q->shape[0], Nq = q->shape[nax], Tq = q->shape[tax], D = q->shape[3];
  int64_t Nkv = kc->shape[nax], Tmax = kc->shape[tax], Tnew = nk->shape[tax];
  for (int i = 1; i < 5; i++)
    if (arr[i]->shape[0] != B)
      return EMLX_FAIL("%s: %s has batch size %lld, q has %lld", op, names[i],
                       (long long)arr[i]->shape[0], (long long)B);
  if (!emlx__same_shape(kc, vc))
    return EMLX_FAIL("%s: k_cache and v_cache must have the same shape", op);
  if (!emlx__same_shape(nk, nv))
    return EMLX_FAIL("%s: new_k and new_v must have the same shape", op);
  if (nk->shape[nax] != Nkv || nk->shape[3] != kc->shape[3])
    return EMLX_FAIL("%s: new_k must have the cache's heads (%lld) and head size (%lld)", op,
                     (long long)Nkv, (long long)kc->shape[3]);
  if (kc->shape[3] != D)
    return EMLX_FAIL("%s: q and the caches must have the same head size, got %lld and %lld", op,
                     (long long)D, (long long)kc->shape[3]);
  if (Nkv == 0 ? Nq != 0 : Nq % Nkv != 0)
    return EMLX_FAIL("%s: the query heads (%lld) must be a multiple of the key/value heads (%lld)",
                     op, (long long)Nq, (long long)Nkv);
  if (offset < 0 || offset > Tmax - Tnew)
    return EMLX_FAIL("%s: offset %lld with %lld new rows does not fit the cache length %lld", op,
                     (long long)offset, (long long)Tnew, (long long)Tmax);
  if (!isfinite(scale))
    return EMLX_FAIL("%s: scale must be finite", op);
  emlx_attention_params p;
  memset(&p, 0, sizeof p);
  p.scale = scale;
  p.causal = 1;
  p.btnd = btnd;
  p.offset = offset;
  emlx_array *ins[6] = {q, nk, nv, kc, vc, NULL};
  int n = 5;
  if (key_mask) {
    if (!(ins[5] = att_key_mask(key_mask, B, offset + Tnew, op)))
      return -1;
    n = 6;
    p.has_key_mask = 1;
  }
  int64_t oshape[4] = {B, 0, 0, D};
  oshape[tax] = Tq;
  oshape[nax] = Nq;
  const int64_t *shapes[3] = {oshape, kc->shape, vc->shape};
  const emlx_dtype dtypes[3] = {q->dtype, kc->dtype, vc->dtype};
  const int ndims[3] = {4, 4, 4};
  emlx_array *outs[3];
  emlx_array *r = emlx__node_make(EMLX_PRIM_KV_ATTENTION, ins, n, &p, sizeof p, 3, dtypes, shapes,
                                  ndims, q->device, outs);
  emlx_release(ins[5]);
  if (!r)
    return -1;
  *attention = outs[0];
  *key_cache_out = outs[1];
  *value_cache_out = outs[2];
  return 0;
}

int emlx_kv_cache_attention(emlx_array *q, emlx_array *new_k, emlx_array *new_v,
                            emlx_array *k_cache, emlx_array *v_cache, int64_t offset, float scale,
                            emlx_array **attention, emlx_array **key_cache_out,
                            emlx_array **value_cache_out) {
  return kv_attention(q, new_k, new_v, k_cache, v_cache, offset, scale, NULL, true,
                      "kv_cache_attention", attention, key_cache_out, value_cache_out);
}

int emlx_kv_cache_attention_masked(emlx_array *q, emlx_array *new_k, emlx_array *new_v,
                                   emlx_array *k_cache, emlx_array *v_cache, int64_t offset,
                                   float scale, emlx_array *key_mask, emlx_array **attention,
                                   emlx_array **key_cache_out, emlx_array **value_cache_out) {
  if (!key_mask) {
    if (attention && key_cache_out && value_cache_out)
      *attention = *key_cache_out = *value_cache_out = NULL;
    return EMLX_FAIL("kv_cache_attention_masked: key_mask is NULL");
  }
  return kv_attention(q, new_k, new_v, k_cache, v_cache, offset, scale, key_mask, true,
                      "kv_cache_attention_masked", attention, key_cache_out, value_cache_out);
}

int emlx_causal_kv_attention(emlx_array *q, emlx_array *new_k, emlx_array *new_v,
                             emlx_array *k_cache, emlx_array *v_cache, int64_t offset, float scale,
                             emlx_array *key_mask, emlx_array **attention,
                             emlx_array **key_cache_out, emlx_array **value_cache_out) {
  return kv_attention(q, new_k, new_v, k_cache, v_cache, offset, scale, key_mask, true,
                      "causal_kv_attention", attention, key_cache_out, value_cache_out);
}

int emlx_kv_cache_sdpa_update(emlx_array *q, emlx_array *new_k, emlx_array *new_v,
                              emlx_array *k_cache, emlx_array *v_cache, int64_t offset,
                              float scale, emlx_array **attention, emlx_array **key_cache_out,
                              emlx_array **value_cache_out) {
  return kv_attention(q, new_k, new_v, k_cache, v_cache, offset, scale, NULL, false,
                      "kv_cache_sdpa_update", attention, key_cache_out, value_cache_out);
}
