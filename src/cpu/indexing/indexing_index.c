/* indexing_index.c — reading index arrays: any integer dtype, any layout,
 * into element offsets, with MLX's negative wrap, the clamp into range and,
 * in CHECK mode, the record of the first out-of-range index for the error
 * message. The loops are branch-free per element so that they vectorise;
 * the rare bad index is located afterwards by a scalar rescan. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "indexing_util.h"

void emlx_idx_src_init(emlx_idx_src *s, const emlx_array *idx) {
  s->data = emlx__data(idx);
  s->dtype = idx->dtype;
  emlx_idx_walk_init(&s->walk, idx->ndim, idx->shape, idx->strides);
}

/* The index at p as int64 (u64 beyond INT64_MAX saturates: out of range
 * anyway); *raw receives its bits as given. */
static int64_t load_index(const char *p, emlx_dtype dt, uint64_t *raw) {
  switch (dt) {
  case EMLX_UINT8:
    return (int64_t)(*raw = *(const uint8_t *)p);
  case EMLX_UINT16: {
    uint16_t v;
    memcpy(&v, p, 2);
    return (int64_t)(*raw = v);
  }
  case EMLX_UINT32: {
    uint32_t v;
    memcpy(&v, p, 4);
    return (int64_t)(*raw = v);
  }
  case EMLX_UINT64: {
    uint64_t v;
    memcpy(&v, p, 8);
    *raw = v;
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
  }
  case EMLX_INT8: {
    int8_t v;
    memcpy(&v, p, 1);
    *raw = (uint64_t)(int64_t)v;
    return v;
  }
  case EMLX_INT16: {
    int16_t v;
    memcpy(&v, p, 2);
    *raw = (uint64_t)(int64_t)v;
    return v;
  }
  case EMLX_INT32: {
    int32_t v;
    memcpy(&v, p, 4);
    *raw = (uint64_t)(int64_t)v;
    return v;
  }
  default: {
    int64_t v;
    memcpy(&v, p, 8);
    *raw = (uint64_t)v;
    return v;
  }
  }
}

/* Normalised signed index loop: out[t] += clamp(wrap(q[t * st])) * mul. */
#define CONVERT_SIGNED(T)                                                                          \
  do {                                                                                             \
    const T *q = (const T *)(const void *)ptr;                                                     \
    for (int64_t t = 0; t < len; t++) {                                                            \
      int64_t v = (int64_t)q[t * st];                                                              \
      v += (wrap && v < 0) ? dim : 0;                                                              \
      bad |= (uint64_t)v > (uint64_t)hi;                                                           \
      v = v < 0 ? 0 : v;                                                                           \
      v = v > hi ? hi : v;                                                                         \
      out[t] += v * mul;                                                                           \
    }                                                                                              \
  } while (0)

#define CONVERT_UNSIGNED(T)                                                                        \
  do {                                                                                             \
    const T *q = (const T *)(const void *)ptr;                                                     \
    for (int64_t t = 0; t < len; t++) {                                                            \
      uint64_t u = (uint64_t)q[t * st];                                                            \
      bad |= u > (uint64_t)hi;                                                                     \
      int64_t v = u > (uint64_t)hi ? hi : (int64_t)u;                                              \
      out[t] += v * mul;                                                                           \
    }                                                                                              \
  } while (0)

/* One contiguous-in-the-walk run of len indices starting at ptr. Returns
 * whether one was out of range. */
static int convert_run(const char *ptr, int64_t st, int64_t len, emlx_dtype dt,
                       const emlx_idx_axis *ax, int64_t *out) {
  const int64_t dim = ax->dim, hi = ax->hi, mul = ax->mul;
  const int wrap = ax->wrap;
  int bad = 0;
  switch (dt) {
  case EMLX_UINT8:
    CONVERT_UNSIGNED(uint8_t);
    break;
  case EMLX_UINT16:
    CONVERT_UNSIGNED(uint16_t);
    break;
  case EMLX_UINT32:
    CONVERT_UNSIGNED(uint32_t);
    break;
  case EMLX_UINT64:
    CONVERT_UNSIGNED(uint64_t);
    break;
  case EMLX_INT8:
    CONVERT_SIGNED(int8_t);
    break;
  case EMLX_INT16:
    CONVERT_SIGNED(int16_t);
    break;
  case EMLX_INT32:
    CONVERT_SIGNED(int32_t);
    break;
  default:
    CONVERT_SIGNED(int64_t);
    break;
  }
  return bad;
}

/* Finds the first bad index of a run and records it (first writer wins). */
static void record_bad(const char *ptr, int64_t st, int64_t len, emlx_dtype dt,
                       const emlx_idx_axis *ax, emlx_idx_error *err) {
  size_t es = emlx_dtype_size(dt);
  for (int64_t t = 0; t < len; t++) {
    uint64_t raw;
    int64_t v = load_index(ptr + t * st * (int64_t)es, dt, &raw);
    if (ax->wrap && v < 0)
      v += ax->dim;
    if (v >= 0 && v <= ax->hi)
      continue;
    int expected = 0;
    if (atomic_compare_exchange_strong(&err->set, &expected, 1)) {
      err->axis = ax->axis;
      err->dim = ax->dim;
      err->slice = ax->slice;
      err->raw = raw;
      err->is_unsigned = !emlx_dtype_is_signed(dt);
    }
    return;
  }
}

int emlx_idx_offsets(const emlx_idx_src *s, int64_t p0, int64_t n, const emlx_idx_axis *ax, int add,
                     int64_t *out, emlx_idx_error *err) {
  if (!add)
    memset(out, 0, (size_t)n * sizeof *out);
  const emlx_idx_block *b = &s->walk.blk;
  int last = b->ndim - 1;
  int64_t inner = b->shape[last], st = b->src[last];
  int64_t es = (int64_t)emlx_dtype_size(s->dtype);
  int64_t row = p0 / inner, j = p0 % inner, doff, off;
  emlx_idx_block_row(b, row, &doff, &off);
  int64_t idx[EMLX_MAX_NDIM];
  for (int k = last - 1; k >= 0; k--) {
    idx[k] = row % b->shape[k];
    row /= b->shape[k];
  }
  int rc = 0;
  while (n > 0) {
    int64_t len = inner - j < n ? inner - j : n;
    const char *ptr = s->data + (off + j * st) * es;
    if (convert_run(ptr, st, len, s->dtype, ax, out) && ax->check) {
      record_bad(ptr, st, len, s->dtype, ax, err);
      rc = -1;
    }
    out += len;
    n -= len;
    j = 0;
    for (int k = last - 1; k >= 0; k--) {
      off += b->src[k];
      if (++idx[k] < b->shape[k])
        break;
      off -= b->src[k] * b->shape[k];
      idx[k] = 0;
    }
  }
  return rc;
}

int64_t emlx_idx_load_at(const emlx_array *a, int64_t pos) {
  int64_t off = 0;
  for (int k = a->ndim - 1; k >= 0; k--) {
    off += (pos % a->shape[k]) * a->strides[k];
    pos /= a->shape[k];
  }
  uint64_t raw;
  return load_index((const char *)emlx__data(a) + off * (int64_t)emlx_dtype_size(a->dtype),
                    a->dtype, &raw);
}

int emlx_idx_error_report(const emlx_idx_error *err, const char *op) {
  char val[32];
  if (err->is_unsigned)
    snprintf(val, sizeof val, "%" PRIu64, err->raw);
  else
    snprintf(val, sizeof val, "%" PRId64, (int64_t)err->raw);
  if (err->slice > 1)
    return EMLX_FAIL("%s: index %s is out of range for axis %d of size %" PRId64
                     " (a slice of size %" PRId64 " must fit)",
                     op, val, err->axis, err->dim, err->slice);
  return EMLX_FAIL("%s: index %s is out of range for axis %d of size %" PRId64, op, val, err->axis,
                   err->dim);
}
