/* indexing_copy.c — the data movers of the indexing kernels: simplified
 * strided blocks, contiguous runs (memcpy), fills, and a list of block
 * copies split over the thread pool as one job. */
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "convert.h"
#include "indexing_util.h"

/* Longest piece of a row one work unit copies, in elements: long rows are
 * split so that one big contiguous copy still keeps every thread busy. */
#define ROW_PIECE 65536

void emlx_idx_block_init(emlx_idx_block *b, int ndim, const int64_t *shape,
                         const int64_t *dst_strides, const int64_t *src_strides) {
  int64_t rm[EMLX_MAX_NDIM];
  if (!dst_strides || !src_strides) {
    emlx__row_major_strides(shape, ndim, rm);
    if (!dst_strides)
      dst_strides = rm;
    if (!src_strides)
      src_strides = rm;
  }
  int d = 0;
  b->size = 1;
  for (int i = 0; i < ndim; i++) {
    b->size *= shape[i];
    if (shape[i] == 1)
      continue;
    /* Merge into the previous kept dim when contiguous with it on both sides. */
    if (d > 0 && dst_strides[i] * shape[i] == b->dst[d - 1] &&
        src_strides[i] * shape[i] == b->src[d - 1]) {
      b->shape[d - 1] *= shape[i];
      b->dst[d - 1] = dst_strides[i];
      b->src[d - 1] = src_strides[i];
      continue;
    }
    b->shape[d] = shape[i];
    b->dst[d] = dst_strides[i];
    b->src[d] = src_strides[i];
    d++;
  }
  if (d == 0) {
    b->shape[0] = 1;
    b->dst[0] = b->src[0] = 0;
    d = 1;
  }
  b->ndim = d;
  b->rows = b->shape[d - 1] > 0 ? b->size / b->shape[d - 1] : 0;
}

void emlx_idx_block_row(const emlx_idx_block *b, int64_t r, int64_t *dst_off, int64_t *src_off) {
  int64_t d = 0, s = 0;
  for (int k = b->ndim - 2; k >= 0 && r > 0; k--) {
    int64_t i = r % b->shape[k];
    r /= b->shape[k];
    d += i * b->dst[k];
    s += i * b->src[k];
  }
  *dst_off = d;
  *src_off = s;
}

void emlx_idx_fill_run(char *dst, int64_t n, const void *value, size_t esize) {
  switch (esize) {
  case 1:
    memset(dst, *(const unsigned char *)value, (size_t)n);
    break;
  case 2: {
    uint16_t v, *o = (uint16_t *)(void *)dst;
    memcpy(&v, value, sizeof v);
    for (int64_t i = 0; i < n; i++)
      o[i] = v;
    break;
  }
  case 4: {
    uint32_t v, *o = (uint32_t *)(void *)dst;
    memcpy(&v, value, sizeof v);
    for (int64_t i = 0; i < n; i++)
      o[i] = v;
    break;
  }
  case 16: {
    emlx_b16 v, *o = (emlx_b16 *)(void *)dst;
    memcpy(&v, value, sizeof v);
    for (int64_t i = 0; i < n; i++)
      o[i] = v;
    break;
  }
  default: {
    uint64_t v, *o = (uint64_t *)(void *)dst;
    memcpy(&v, value, sizeof v);
    for (int64_t i = 0; i < n; i++)
      o[i] = v;
    break;
  }
  }
}

typedef struct fill_ctx {
  char *dst;
  const void *value;
  size_t esize;
} fill_ctx;

static void fill_range(void *p, int64_t begin, int64_t end) {
  const fill_ctx *c = p;
  emlx_idx_fill_run(c->dst + begin * (int64_t)c->esize, end - begin, c->value, c->esize);
}

void emlx_idx_fill_parallel(char *dst, int64_t n, const void *value, size_t esize) {
  fill_ctx c = {dst, value, esize};
  emlx__parallel_for(n, 4 * EMLX_IDX_GRAIN, fill_range, &c);
}

#define STRIDED_MOVE(T)                                                                            \
  do {                                                                                             \
    T *o_ = (T *)(void *)dst;                                                                      \
    const T *i_ = (const T *)(const void *)src;                                                    \
    if (ds == 1)                                                                                   \
      for (int64_t j = 0; j < n; j++)                                                              \
        o_[j] = i_[j * ss];                                                                        \
    else                                                                                           \
      for (int64_t j = 0; j < n; j++)                                                              \
        o_[j * ds] = i_[j * ss];                                                                   \
  } while (0)

#if defined(__SSE2__)
/* memcpy with non-temporal 16-byte stores for the aligned body. */
void emlx_idx_stream_bytes(char *dst, const char *src, size_t n) {
  size_t head = (16 - ((uintptr_t)dst & 15)) & 15;
  if (head > n)
    head = n;
  memcpy(dst, src, head);
  dst += head, src += head, n -= head;
  size_t body = n & ~(size_t)63;
  for (size_t i = 0; i < body; i += 64) {
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 32));
    __m128i d = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 48));
    _mm_stream_si128((__m128i *)(void *)(dst + i), a);
    _mm_stream_si128((__m128i *)(void *)(dst + i + 16), b);
    _mm_stream_si128((__m128i *)(void *)(dst + i + 32), c);
    _mm_stream_si128((__m128i *)(void *)(dst + i + 48), d);
  }
  memcpy(dst + body, src + body, n - body);
}
void emlx_idx_stream_fence(void) { _mm_sfence(); }
#else
void emlx_idx_stream_bytes(char *dst, const char *src, size_t n) { memcpy(dst, src, n); }
void emlx_idx_stream_fence(void) {}
#endif

void emlx_idx_copy_run(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n, size_t esize,
                       bool stream) {
  if (n <= 0)
    return;
  if (ds == 1 && ss == 1) {
    size_t bytes = (size_t)n * esize;
    if (stream && bytes >= 256)
      emlx_idx_stream_bytes(dst, src, bytes);
    else
      memcpy(dst, src, bytes);
    return;
  }
  if (ss == 0 && ds == 1) {
    emlx_idx_fill_run(dst, n, src, esize);
    return;
  }
  switch (esize) {
  case 1:
    STRIDED_MOVE(uint8_t);
    break;
  case 2:
    STRIDED_MOVE(uint16_t);
    break;
  case 4:
    STRIDED_MOVE(uint32_t);
    break;
  case 16:
    STRIDED_MOVE(emlx_b16);
    break;
  default:
    STRIDED_MOVE(uint64_t);
    break;
  }
}

void emlx_idx_block_copy_rows(const emlx_idx_block *b, char *dst, const char *src, size_t esize,
                              int64_t r0, int64_t r1, bool stream) {
  if (r0 >= r1 || b->size == 0)
    return;
  int last = b->ndim - 1;
  int64_t inner = b->shape[last], es = (int64_t)esize;
  int64_t idx[EMLX_MAX_NDIM];
  int64_t rem = r0, doff = 0, soff = 0;
  for (int k = last - 1; k >= 0; k--) {
    idx[k] = rem % b->shape[k];
    rem /= b->shape[k];
    doff += idx[k] * b->dst[k];
    soff += idx[k] * b->src[k];
  }
  for (int64_t r = r0;;) {
    emlx_idx_copy_run(dst + doff * es, b->dst[last], src + soff * es, b->src[last], inner, esize,
                      stream);
    if (++r >= r1)
      break;
    for (int k = last - 1; k >= 0; k--) { /* odometer over the outer dims */
      doff += b->dst[k];
      soff += b->src[k];
      if (++idx[k] < b->shape[k])
        break;
      doff -= b->dst[k] * b->shape[k];
      soff -= b->src[k] * b->shape[k];
      idx[k] = 0;
    }
  }
}

/* ---- a list of copies as one parallel job -------------------------------------- */

typedef struct copies_ctx {
  const emlx_idx_copy *copies;
  int n;
  size_t esize;
  bool stream;
  const int64_t *first_unit; /* n + 1 prefix sums of units */
} copies_ctx;

static int64_t pieces_of(const emlx_idx_block *b) {
  int64_t inner = b->shape[b->ndim - 1];
  return inner > ROW_PIECE ? (inner + ROW_PIECE - 1) / ROW_PIECE : 1;
}

static void copies_range(void *p, int64_t begin, int64_t end) {
  const copies_ctx *c = p;
  /* The copy holding unit `begin`: the last with first_unit <= begin. */
  int lo = 0, hi = c->n - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (c->first_unit[mid] <= begin)
      lo = mid;
    else
      hi = mid - 1;
  }
  int64_t es = (int64_t)c->esize;
  for (int i = lo; i < c->n && begin < end; i++) {
    const emlx_idx_copy *cp = &c->copies[i];
    const emlx_idx_block *b = &cp->blk;
    int64_t u0 = begin - c->first_unit[i];
    int64_t u1 = (end < c->first_unit[i + 1] ? end : c->first_unit[i + 1]) - c->first_unit[i];
    begin = c->first_unit[i] + u1;
    if (u0 >= u1)
      continue;
    int64_t pieces = pieces_of(b);
    if (pieces == 1) {
      emlx_idx_block_copy_rows(b, cp->dst, cp->src, c->esize, u0, u1, c->stream);
      continue;
    }
    int last = b->ndim - 1;
    int64_t inner = b->shape[last];
    for (int64_t u = u0; u < u1; u++) {
      int64_t row = u / pieces, piece = u % pieces, doff, soff;
      emlx_idx_block_row(b, row, &doff, &soff);
      int64_t j0 = piece * ROW_PIECE;
      int64_t len = inner - j0 < ROW_PIECE ? inner - j0 : ROW_PIECE;
      emlx_idx_copy_run(cp->dst + (doff + j0 * b->dst[last]) * es, b->dst[last],
                        cp->src + (soff + j0 * b->src[last]) * es, b->src[last], len, c->esize,
                        c->stream);
    }
  }
  if (c->stream)
    emlx_idx_stream_fence();
}

void emlx_idx_copies_run(const emlx_idx_copy *copies, int n, size_t esize) {
  int64_t first_local[17];
  int64_t *first = n < 17 ? first_local : malloc(((size_t)n + 1) * sizeof *first);
  if (!first) { /* out of memory for the table: copy one by one */
    for (int i = 0; i < n; i++)
      emlx_idx_copies_run(&copies[i], 1, esize);
    return;
  }
  int64_t units = 0, elems = 0;
  for (int i = 0; i < n; i++) {
    first[i] = units;
    const emlx_idx_block *b = &copies[i].blk;
    if (b->size > 0) {
      units += b->rows * pieces_of(b);
      elems += b->size;
    }
  }
  first[n] = units;
  if (units > 0) {
    copies_ctx c = {copies, n, esize, emlx_idx_streams((size_t)elems * esize), first};
    int64_t per_unit = elems / units > 0 ? elems / units : 1;
    int64_t grain = EMLX_IDX_GRAIN / per_unit > 0 ? EMLX_IDX_GRAIN / per_unit : 1;
    emlx__parallel_for(units, grain, copies_range, &c);
  }
  if (first != first_local)
    free(first);
}

void emlx_idx_copy_array(char *dst, const emlx_array *src) {
  if (src->size == 0)
    return;
  emlx_idx_copy cp = {dst, emlx__data(src), {0}};
  emlx_idx_block_init(&cp.blk, src->ndim, src->shape, NULL, src->strides);
  emlx_idx_copies_run(&cp, 1, emlx_dtype_size(src->dtype));
}

/* ---- walks ------------------------------------------------------------------------ */

void emlx_idx_walk_init(emlx_idx_walk *w, int ndim, const int64_t *shape, const int64_t *strides) {
  emlx_idx_block_init(&w->blk, ndim, shape, NULL, strides);
}

void emlx_idx_walk_offsets(const emlx_idx_walk *w, int64_t p0, int64_t n, int64_t *out) {
  const emlx_idx_block *b = &w->blk;
  int last = b->ndim - 1;
  int64_t inner = b->shape[last], s = b->src[last];
  int64_t row = p0 / inner, j = p0 % inner, doff, off;
  emlx_idx_block_row(b, row, &doff, &off);
  int64_t idx[EMLX_MAX_NDIM];
  int64_t rem = row;
  for (int k = last - 1; k >= 0; k--) {
    idx[k] = rem % b->shape[k];
    rem /= b->shape[k];
  }
  while (n > 0) {
    int64_t len = inner - j < n ? inner - j : n;
    for (int64_t t = 0; t < len; t++)
      out[t] = off + (j + t) * s;
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
}
