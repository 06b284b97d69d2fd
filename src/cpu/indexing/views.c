/* views.c — kernels of the view primitives. They share the input's buffer
 * and only compute strides and an offset; reshape copies only when the
 * input's layout cannot be expressed with strides of the new shape. */
#include <string.h>

#include "convert.h"
#include "views.h"

int emlx_cpu_broadcast(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  (void)node;
  const emlx_array *a = in[0];
  emlx_array *o = out[0];
  int64_t strides[EMLX_MAX_NDIM];
  int lead = o->ndim - a->ndim;
  for (int i = 0; i < o->ndim; i++) {
    int ia = i - lead;
    strides[i] = ia < 0 || (a->shape[ia] == 1 && o->shape[i] != 1) ? 0 : a->strides[ia];
  }
  emlx__array_set_view(o, a, a->offset, strides);
  return 0;
}

int emlx_cpu_transpose(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_transpose_params *p = emlx__params(node);
  const emlx_array *a = in[0];
  int64_t strides[EMLX_MAX_NDIM];
  for (int i = 0; i < p->ndim; i++) strides[i] = a->strides[p->perm[i]];
  emlx__array_set_view(out[0], a, a->offset, strides);
  return 0;
}

int emlx_cpu_slice(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_slice_params *p = emlx__params(node);
  const emlx_array *a = in[0];
  int64_t nd = p->ndim, offset = a->offset;
  int64_t strides[EMLX_MAX_NDIM];
  for (int64_t i = 0; i < nd; i++) {
    offset += p->vals[i] * a->strides[i];
    /* A step only matters where the axis keeps two or more elements (then it
     * is below the axis length, so the product cannot overflow). */
    strides[i] = out[0]->shape[i] > 1 ? a->strides[i] * p->vals[nd + i] : a->strides[i];
  }
  emlx__array_set_view(out[0], a, out[0]->size > 0 ? offset : a->offset, strides);
  return 0;
}

/* Strides for viewing `a` with `shape`, without copying; false if the layout
 * does not allow it (NumPy's rule: merge runs of input axes that are
 * contiguous with each other, then split them across the new axes). */
static bool nocopy_strides(const emlx_array *a, const int64_t *shape, int nd, int64_t *strides) {
  int64_t old_shape[EMLX_MAX_NDIM], old_strides[EMLX_MAX_NDIM];
  int ond = 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != 1) {
      old_shape[ond] = a->shape[i];
      old_strides[ond++] = a->strides[i];
    }
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < nd && oi < ond) {
    int64_t np = shape[ni], op = old_shape[oi];
    while (np != op) {
      if (np < op) np *= shape[nj++];
      else op *= old_shape[oj++];
    }
    for (int k = oi; k < oj - 1; k++)
      if (old_strides[k] != old_shape[k + 1] * old_strides[k + 1]) return false;
    strides[nj - 1] = old_strides[oj - 1];
    for (int k = nj - 1; k > ni; k--) strides[k - 1] = strides[k] * shape[k];
    ni = nj++;
    oi = oj++;
  }
  /* Trailing size-1 axes of the new shape. */
  int64_t last = ni > 0 ? strides[ni - 1] : 1;
  for (int k = ni; k < nd; k++) strides[k] = last;
  return true;
}

int emlx_cpu_reshape(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  (void)node;
  const emlx_array *a = in[0];
  emlx_array *o = out[0];
  int64_t strides[EMLX_MAX_NDIM];
  if (a->size == 0 || (a->flags & EMLX_FLAG_ROW_CONTIG)) {
    emlx__array_set_view(o, a, a->offset, NULL);
    return 0;
  }
  if (nocopy_strides(a, o->shape, o->ndim, strides)) {
    emlx__array_set_view(o, a, a->offset, strides);
    return 0;
  }
  /* Copy in a's row-major order into a buffer of a's shape, then view it. */
  if (emlx__array_alloc_data(o) != 0) return -1;
  emlx_array tmp = *a;
  tmp.buffer = o->buffer;
  tmp.offset = 0;
  int64_t tstrides[EMLX_MAX_NDIM];
  emlx__row_major_strides(a->shape, a->ndim, tstrides);
  tmp.strides = tstrides;
  tmp.flags = EMLX_FLAG_ROW_CONTIG;
  emlx_cpu_copy_strided(&tmp, a);
  return 0;
}

typedef struct copy_ctx {
  const emlx_array *src;
  char *dst;
  size_t item;
  int64_t inner; /* elements in the last axis */
} copy_ctx;

static void copy_rows(void *p, int64_t begin, int64_t end) {
  const copy_ctx *c = p;
  const emlx_array *s = c->src;
  int nd = s->ndim;
  int64_t idx[EMLX_MAX_NDIM];
  int64_t r = begin;
  for (int d = nd - 2; d >= 0; d--) {
    idx[d] = r % s->shape[d];
    r /= s->shape[d];
  }
  const char *base = emlx__data(s);
  int64_t istride = s->strides[nd - 1];
  for (int64_t row = begin; row < end; row++) {
    int64_t off = 0;
    for (int d = 0; d < nd - 1; d++) off += idx[d] * s->strides[d];
    char *dst = c->dst + row * c->inner * (int64_t)c->item;
    switch (c->item) {
    case 1: {
      const uint8_t *src = (const uint8_t *)base + off;
      for (int64_t i = 0; i < c->inner; i++) ((uint8_t *)dst)[i] = src[i * istride];
      break;
    }
    case 2: {
      const uint16_t *src = (const uint16_t *)(const void *)base + off;
      for (int64_t i = 0; i < c->inner; i++) ((uint16_t *)(void *)dst)[i] = src[i * istride];
      break;
    }
    case 4: {
      const uint32_t *src = (const uint32_t *)(const void *)base + off;
      for (int64_t i = 0; i < c->inner; i++) ((uint32_t *)(void *)dst)[i] = src[i * istride];
      break;
    }
    case 16: {
      const emlx_b16 *src = (const emlx_b16 *)(const void *)base + off;
      for (int64_t i = 0; i < c->inner; i++) ((emlx_b16 *)(void *)dst)[i] = src[i * istride];
      break;
    }
    default: {
      const uint64_t *src = (const uint64_t *)(const void *)base + off;
      for (int64_t i = 0; i < c->inner; i++) ((uint64_t *)(void *)dst)[i] = src[i * istride];
      break;
    }
    }
    for (int d = nd - 2; d >= 0; d--) {
      if (++idx[d] < s->shape[d]) break;
      idx[d] = 0;
    }
  }
}

void emlx_cpu_copy_strided(emlx_array *dst, const emlx_array *src) {
  if (src->size == 0) return;
  size_t item = emlx_dtype_size(src->dtype);
  if (src->flags & EMLX_FLAG_ROW_CONTIG) {
    memcpy(emlx__data(dst), emlx__data(src), (size_t)src->size * item);
    return;
  }
  if (src->ndim == 0) {
    memcpy(emlx__data(dst), emlx__data(src), item);
    return;
  }
  copy_ctx c = {src, emlx__data(dst), item, src->shape[src->ndim - 1]};
  int64_t rows = src->size / c.inner;
  int64_t grain = c.inner >= 16384 ? 1 : 16384 / c.inner;
  emlx__parallel_for(rows, grain, copy_rows, &c);
}
