/* indexing_layout.c — kernels that rearrange whole arrays without indices:
 * slice_update (in place when the source can be donated), pad (low / high /
 * interior, negative = crop), concatenate, as_strided and view (bitcast).
 * They are pure data movement: every dtype goes by its element size. */
#include <stdlib.h>
#include <string.h>

#include "indexing_util.h"
#include "kernels.h"

/* ---- slice_update ---------------------------------------------------------------- */

int emlx_cpu_slice_update(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_slice_update_params *p = emlx__params(node);
  emlx_array *src = in[0];
  const emlx_array *upd = in[1];
  emlx_array *o = out[0];
  int nd = p->ndim;
  int64_t start[EMLX_MAX_NDIM], step[EMLX_MAX_NDIM];
  for (int i = 0; i < nd; i++) {
    if (!p->dynamic) {
      start[i] = p->vals[i];
      step[i] = p->vals[nd + i];
      continue;
    }
    /* Clamp so that the update fits (XLA's dynamic_update_slice). */
    int64_t s = p->vals[i] >= 0 ? emlx_idx_load_at(in[2], p->vals[i]) : 0;
    int64_t hi = src->shape[i] - upd->shape[i];
    start[i] = s < 0 ? 0 : (s > hi ? hi : s);
    step[i] = 1;
  }
  /* In place when src's buffer is ours alone; otherwise copy src first. */
  if (emlx__array_alloc_data_donate(o, src) != 0)
    return -1;
  if (o->buffer != src->buffer)
    emlx_idx_copy_array(emlx__data(o), src);
  if (upd->size == 0)
    return 0;
  size_t es = emlx_dtype_size(o->dtype);
  int64_t off = 0, dst_strides[EMLX_MAX_NDIM];
  for (int i = 0; i < nd; i++) {
    off += start[i] * o->strides[i];
    dst_strides[i] = o->strides[i] * step[i];
  }
  emlx_idx_copy cp = {(char *)emlx__data(o) + off * (int64_t)es, emlx__data(upd), {0}};
  emlx_idx_block_init(&cp.blk, nd, upd->shape, dst_strides, upd->strides);
  emlx_idx_copies_run(&cp, 1, es);
  return 0;
}

/* ---- pad ------------------------------------------------------------------------- */

/* Per axis: the input range [k0, k0 + count) that lands in the output, from
 * output position d0 on, every step elements. */
typedef struct pad_axis {
  int64_t k0, count, d0, step;
} pad_axis;

typedef struct pad_rows_ctx {
  const emlx_array *a;
  emlx_array *o;
  const pad_axis *ax;
  const void *value;
  size_t es;
  bool stream;
} pad_rows_ctx;

/* Bytes of output rows assembled before one streaming write: the output
 * is written in whole cache lines by streaming stores only (mixing them
 * with ordinary stores in a line is slow). */
#define PAD_STAGE 32768

/* Interior-free padding, one output row (all axes but the last fixed) at a
 * time: every output byte is written once. A large output's rows go through
 * a small staging buffer and leave it by streaming stores. */
static void pad_rows(void *ctx, int64_t r0, int64_t r1) {
  const pad_rows_ctx *c = ctx;
  const emlx_array *a = c->a;
  int nd = c->o->ndim, last = nd - 1;
  int64_t width = c->o->shape[last], es = (int64_t)c->es, row_bytes = width * es;
  const pad_axis *lx = &c->ax[last];
  int64_t idx[EMLX_MAX_NDIM];
  int64_t rem = r0;
  for (int k = last - 1; k >= 0; k--) {
    idx[k] = rem % c->o->shape[k];
    rem /= c->o->shape[k];
  }
  /* the stage comes from the thread's scratch (no memory: rows go out unstaged) */
  char *stage = c->stream && row_bytes <= PAD_STAGE ? emlx__scratch_get(PAD_STAGE) : NULL;
  bool staged = stage != NULL;
  if (!staged)
    emlx_clear_error();
  char *out = emlx__data(c->o);
  int64_t flush_row = r0, nstaged = 0;
  const char *abase = emlx__data(a);
  for (int64_t r = r0; r < r1; r++) {
    char *dst = staged ? stage + nstaged : out + r * row_bytes;
    bool inside = lx->count > 0;
    int64_t soff = lx->k0 * a->strides[last];
    for (int k = 0; k < last && inside; k++) {
      int64_t q = idx[k] - c->ax[k].d0;
      inside = q >= 0 && q < c->ax[k].count;
      soff += (c->ax[k].k0 + q) * a->strides[k];
    }
    if (!inside) {
      emlx_idx_fill_run(dst, width, c->value, c->es);
    } else {
      int64_t tail = lx->d0 + lx->count;
      emlx_idx_fill_run(dst, lx->d0, c->value, c->es);
      emlx_idx_copy_run(dst + lx->d0 * es, 1, abase + soff * es, a->strides[last], lx->count, c->es,
                        c->stream && !staged);
      emlx_idx_fill_run(dst + tail * es, width - tail, c->value, c->es);
    }
    for (int k = last - 1; k >= 0; k--) {
      if (++idx[k] < c->o->shape[k])
        break;
      idx[k] = 0;
    }
    if (staged && ((nstaged += row_bytes) + row_bytes > PAD_STAGE || r + 1 == r1)) {
      emlx_idx_stream_bytes(out + flush_row * row_bytes, stage, (size_t)nstaged);
      flush_row = r + 1;
      nstaged = 0;
    }
  }
  if (c->stream)
    emlx_idx_stream_fence();
  emlx__scratch_put(stage);
}

int emlx_cpu_pad(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_pad_params *p = emlx__params(node);
  const emlx_array *a = in[0];
  emlx_array *o = out[0];
  if (emlx__array_alloc_data(o) != 0)
    return -1;
  if (o->size == 0)
    return 0;
  size_t es = emlx_dtype_size(o->dtype);
  unsigned char value[16];
  memcpy(value, emlx__data(in[1]), es);
  int nd = o->ndim;
  if (nd == 0) {
    memcpy(emlx__data(o), emlx__data(a), es);
    return 0;
  }
  pad_axis ax[EMLX_MAX_NDIM];
  bool interior = false, empty = false;
  for (int i = 0; i < nd; i++) {
    int64_t lo = p->vals[3 * i], step = p->vals[3 * i + 2] + 1;
    int64_t n = a->shape[i], od = o->shape[i];
    int64_t k0 = lo >= 0 ? 0 : (-lo + step - 1) / step;
    int64_t kmax = od - 1 - lo >= 0 ? (od - 1 - lo) / step + 1 : 0;
    int64_t k1 = n < kmax ? n : kmax;
    ax[i] = (pad_axis){k0, k1 > k0 ? k1 - k0 : 0, lo + k0 * step, step};
    interior = interior || step > 1;
    empty = empty || ax[i].count == 0;
  }
  if (!interior || empty) {
    pad_rows_ctx c = {a, o, ax, value, es, emlx_idx_streams(emlx_nbytes(o))};
    int64_t width = o->shape[nd - 1];
    int64_t rows = o->size / width;
    int64_t grain = width >= EMLX_IDX_GRAIN ? 1 : EMLX_IDX_GRAIN / width;
    emlx__parallel_for(rows, grain, pad_rows, &c);
    return 0;
  }
  /* Interior padding: fill everything, then scatter the input in with
   * strides multiplied by step. */
  emlx_idx_fill_parallel(emlx__data(o), o->size, value, es);
  int64_t doff = 0, soff = 0, shape[EMLX_MAX_NDIM], dst_strides[EMLX_MAX_NDIM];
  for (int i = 0; i < nd; i++) {
    doff += ax[i].d0 * o->strides[i];
    soff += ax[i].k0 * a->strides[i];
    shape[i] = ax[i].count;
    dst_strides[i] = o->strides[i] * ax[i].step;
  }
  emlx_idx_copy cp = {(char *)emlx__data(o) + doff * (int64_t)es,
                      (const char *)emlx__data(a) + soff * (int64_t)es,
                      {0}};
  emlx_idx_block_init(&cp.blk, nd, shape, dst_strides, a->strides);
  emlx_idx_copies_run(&cp, 1, es);
  return 0;
}

/* ---- concatenate ------------------------------------------------------------------- */

int emlx_cpu_concatenate(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_concatenate_params *p = emlx__params(node);
  emlx_array *o = out[0];
  if (emlx__array_alloc_data(o) != 0)
    return -1;
  if (o->size == 0)
    return 0;
  int n = node->ninputs;
  size_t es = emlx_dtype_size(o->dtype);
  emlx_idx_copy local[8];
  emlx_idx_copy *cps = n <= 8 ? local : malloc((size_t)n * sizeof *cps);
  if (!cps)
    return EMLX_FAIL("concatenate: out of memory");
  int64_t along = 0;
  int ncp = 0;
  for (int i = 0; i < n; i++) {
    const emlx_array *a = in[i];
    char *dst = (char *)emlx__data(o) + along * o->strides[p->axis] * (int64_t)es;
    along += a->shape[p->axis];
    if (a->size == 0)
      continue;
    cps[ncp].dst = dst;
    cps[ncp].src = emlx__data(a);
    emlx_idx_block_init(&cps[ncp].blk, a->ndim, a->shape, o->strides, a->strides);
    ncp++;
  }
  emlx_idx_copies_run(cps, ncp, es);
  if (cps != local)
    free(cps);
  return 0;
}

/* ---- as_strided / view ---------------------------------------------------------------- */

/* Gives o a fresh buffer holding a row-major copy of a (a->size elements of
 * a's dtype, which may differ from o's size), then views it. */
static int view_of_copy(emlx_array *o, const emlx_array *a, int64_t offset,
                        const int64_t *strides) {
  size_t nbytes = (size_t)a->size * emlx_dtype_size(a->dtype);
  emlx_buffer *b = emlx__buffer_alloc(nbytes, o->device);
  if (!b)
    return -1;
  emlx_idx_copy_array(b->ptr, a);
  emlx_buffer *old = o->buffer;
  o->buffer = b;
  emlx__buffer_release(old);
  o->offset = offset;
  if (strides)
    memcpy(o->strides, strides, (size_t)o->ndim * sizeof(int64_t));
  else
    emlx__row_major_strides(o->shape, o->ndim, o->strides);
  emlx__array_update_flags(o);
  return 0;
}

int emlx_cpu_as_strided(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_as_strided_params *p = emlx__params(node);
  const emlx_array *a = in[0];
  if (a->flags & EMLX_FLAG_ROW_CONTIG) {
    emlx__array_set_view(out[0], a, a->offset + p->offset, p->strides);
    return 0;
  }
  return view_of_copy(out[0], a, p->offset, p->strides);
}

int emlx_cpu_view_dtype(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  (void)node;
  const emlx_array *a = in[0];
  emlx_array *o = out[0];
  int64_t isz = (int64_t)emlx_dtype_size(a->dtype), osz = (int64_t)emlx_dtype_size(o->dtype);
  if (a->size == 0)
    return emlx__array_alloc_data(o);
  if (isz == osz) {
    emlx__array_set_view(o, a, a->offset, a->strides);
    return 0;
  }
  int last = a->ndim - 1;
  int64_t strides[EMLX_MAX_NDIM];
  bool ok = a->strides[last] == 1 || a->shape[last] == 1;
  if (ok && isz > osz) { /* each element becomes r narrower ones along the last axis */
    int64_t r = isz / osz;
    for (int i = 0; i < last; i++)
      strides[i] = a->strides[i] * r;
    strides[last] = 1;
    emlx__array_set_view(o, a, a->offset * r, strides);
    return 0;
  }
  if (ok) { /* r elements of the last axis become one wider element */
    int64_t r = osz / isz;
    ok = a->offset % r == 0;
    for (int i = 0; i < last && ok; i++) {
      ok = a->shape[i] == 1 || a->strides[i] % r == 0;
      strides[i] = a->strides[i] / r;
    }
    strides[last] = 1;
    if (ok) {
      emlx__array_set_view(o, a, a->offset / r, strides);
      return 0;
    }
  }
  /* The bytes are not laid out as the new dtype needs: copy row-major. */
  if (emlx__array_alloc_data(o) != 0)
    return -1;
  emlx_idx_copy_array(emlx__data(o), a);
  return 0;
}
