/* kv_cache.c — the KV_ATTENTION kernel: write the new key/value rows into
 * the caches, then attend over the valid prefix with attention.c's driver.
 *
 * The updated caches take the input caches' buffers when nothing else holds
 * them (emlx__array_alloc_data_donate: the steady state of a decode loop);
 * otherwise the caches are copied first. Either layout ({B, T, N, D} or
 * {B, N, T, D}) is read through strides, so no transpose is ever made. */
#include <string.h>

#include "attention.h"
#include "kernels.h"

/* out = cache (donated or copied) with rows [offset, offset + T_new) of the
 * time axis tax set from upd. */
static int kv_update(emlx_array *out, emlx_array *cache, const emlx_array *upd, int tax,
                     int64_t offset) {
  if (emlx__array_alloc_data_donate(out, cache) != 0)
    return -1;
  if (out->buffer != cache->buffer)
    emlx__copy_to_host(cache, emlx__data(out));
  int nax = tax == 1 ? 2 : 1;
  size_t es = emlx_dtype_size(out->dtype);
  int64_t B = upd->shape[0], T = upd->shape[tax], N = upd->shape[nax], D = upd->shape[3];
  char *dst0 = emlx__data(out);
  const char *src0 = emlx__data(upd);
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = 0; t < T; t++)
      for (int64_t n = 0; n < N; n++) {
        char *dst = dst0 + (size_t)(b * out->strides[0] + (offset + t) * out->strides[tax] +
                                    n * out->strides[nax]) *
                               es;
        const char *src =
            src0 + (size_t)(b * upd->strides[0] + t * upd->strides[tax] + n * upd->strides[nax]) *
                       es;
        if (upd->strides[3] == 1) {
          memcpy(dst, src, (size_t)D * es);
        } else {
          for (int64_t d = 0; d < D; d++)
            memcpy(dst + (size_t)d * es, src + (size_t)(d * upd->strides[3]) * es, es);
        }
      }
  return 0;
}

int emlx_cpu_kv_attention(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_attention_params *prm = emlx__params(node);
  const emlx_array *q = in[0], *nk = in[1], *nv = in[2];
  emlx_array *kc = in[3], *vc = in[4];
  int tax = prm->btnd ? 1 : 2, nax = prm->btnd ? 2 : 1;
  /* An output released before evaluation still needs its cache written. */
  emlx_array *kout = out[1], *vout = out[2], *ktmp = NULL, *vtmp = NULL;
  int status = -1;
  if (!kout && !(kout = ktmp = emlx__array_alloc(kc->dtype, kc->shape, kc->ndim, kc->device)))
    goto done;
  if (!vout && !(vout = vtmp = emlx__array_alloc(vc->dtype, vc->shape, vc->ndim, vc->device)))
    goto done;
  if (kv_update(kout, kc, nk, tax, prm->offset) != 0 ||
      kv_update(vout, vc, nv, tax, prm->offset) != 0)
    goto done;
  status = 0;
  emlx_array *o = out[0];
  if (!o)
    goto done;
  status = -1;
  if (emlx__array_alloc_data(o) != 0)
    goto done;
  int64_t Tkv = prm->offset + nk->shape[tax];
  emlx_att_problem p;
  emlx__att_problem_init(&p, prm, q->dtype, q->shape[0], q->shape[nax], kc->shape[nax],
                         q->shape[tax], Tkv, q->shape[3], vc->shape[3]);
  p.q = emlx__data(q);
  p.k = emlx__data(kout);
  p.v = emlx__data(vout);
  p.o = emlx__data(o);
  const int64_t *st[4] = {q->strides, kout->strides, vout->strides, o->strides};
  int64_t *dst[4] = {p.qs, p.ks, p.vs, p.os};
  for (int a = 0; a < 4; a++) {
    dst[a][0] = st[a][0];
    dst[a][1] = st[a][nax];
    dst[a][2] = st[a][tax];
    dst[a][3] = st[a][3];
  }
  if (prm->has_key_mask) {
    const emlx_array *km = in[5];
    p.key_mask = emlx__data(km);
    p.kms[0] = km->strides[0];
    p.kms[1] = km->strides[1];
  }
  status = emlx__att_run(&p);
done:
  emlx_release(ktmp);
  emlx_release(vtmp);
  return status;
}
