/* indexing_gather.c — the reading indexed kernels: take, take_along_axis
 * and gather. Each splits its output over the pool; a chunk converts a piece
 * of indices into element offsets (indexing_index.c: wrap, clamp, check),
 * then moves elements by size: a tight gather loop for single elements,
 * block copies (memcpy of contiguous runs) for slices. In CHECK mode the
 * first out-of-range index stops the kernel and becomes its error. */
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "indexing_util.h"
#include "kernels.h"

/* dst[j] = src[off[j]], j < n, elements of es bytes. */
static void gather_elems(char *dst, const char *src, const int64_t *off, int64_t n, size_t es) {
  switch (es) {
  case 1:
    for (int64_t j = 0; j < n; j++)
      ((uint8_t *)dst)[j] = ((const uint8_t *)src)[off[j]];
    break;
  case 2: {
    uint16_t *o = (uint16_t *)(void *)dst;
    const uint16_t *s = (const uint16_t *)(const void *)src;
    for (int64_t j = 0; j < n; j++)
      o[j] = s[off[j]];
    break;
  }
  case 4: {
    uint32_t *o = (uint32_t *)(void *)dst;
    const uint32_t *s = (const uint32_t *)(const void *)src;
    for (int64_t j = 0; j < n; j++)
      o[j] = s[off[j]];
    break;
  }
  case 16: {
    emlx_b16 *o = (emlx_b16 *)(void *)dst;
    const emlx_b16 *s = (const emlx_b16 *)(const void *)src;
    for (int64_t j = 0; j < n; j++)
      o[j] = s[off[j]];
    break;
  }
  default: {
    uint64_t *o = (uint64_t *)(void *)dst;
    const uint64_t *s = (const uint64_t *)(const void *)src;
    for (int64_t j = 0; j < n; j++)
      o[j] = s[off[j]];
    break;
  }
  }
}

static bool stopped(emlx_idx_error *err) {
  return atomic_load_explicit(&err->set, memory_order_relaxed) != 0;
}

/* Units of a slice-moving kernel: (position, row of the slice block). */
static int64_t unit_grain(const emlx_idx_block *slice) {
  int64_t per = slice->shape[slice->ndim - 1];
  return per >= EMLX_IDX_GRAIN ? 1 : EMLX_IDX_GRAIN / (per > 0 ? per : 1);
}

/* ---- take ---------------------------------------------------------------------------- */

/* The common case fused in one loop: contiguous int32/int64 indices, single
 * elements. An index outside [0, dim) takes the slow branch (wrap, clamp).
 * Returns false when the case does not apply. */
#define TAKE_FUSED(IT, ET)                                                                         \
  do {                                                                                             \
    const IT *ip = (const IT *)(const void *)idx;                                                  \
    const ET *s = (const ET *)(const void *)src;                                                   \
    ET *o = (ET *)(void *)dst;                                                                     \
    for (int64_t j = 0; j < n; j++) {                                                              \
      int64_t v = (int64_t)ip[j];                                                                  \
      if ((uint64_t)v >= (uint64_t)dim) {                                                          \
        v += (wrap && v < 0) ? dim : 0;                                                            \
        v = v < 0 ? 0 : (v >= dim ? dim - 1 : v);                                                  \
      }                                                                                            \
      o[j] = s[v * stride];                                                                        \
    }                                                                                              \
  } while (0)

static bool take_fused(char *dst, const char *src, const char *idx, emlx_dtype idt, size_t es,
                       int64_t n, int64_t dim, int64_t stride, int wrap) {
  if (idt == EMLX_INT64) {
    switch (es) {
    case 1:
      TAKE_FUSED(int64_t, uint8_t);
      return true;
    case 2:
      TAKE_FUSED(int64_t, uint16_t);
      return true;
    case 4:
      TAKE_FUSED(int64_t, uint32_t);
      return true;
    case 16:
      TAKE_FUSED(int64_t, emlx_b16);
      return true;
    default:
      TAKE_FUSED(int64_t, uint64_t);
      return true;
    }
  }
  if (idt == EMLX_INT32) {
    switch (es) {
    case 1:
      TAKE_FUSED(int32_t, uint8_t);
      return true;
    case 2:
      TAKE_FUSED(int32_t, uint16_t);
      return true;
    case 4:
      TAKE_FUSED(int32_t, uint32_t);
      return true;
    case 16:
      TAKE_FUSED(int32_t, emlx_b16);
      return true;
    default:
      TAKE_FUSED(int32_t, uint64_t);
      return true;
    }
  }
  return false;
}

typedef struct take_ctx {
  const char *src;
  char *dst;
  size_t es;
  int64_t npos;         /* M: index positions */
  emlx_idx_walk outer;  /* a's axes before axis */
  emlx_idx_block slice; /* a's axes after axis: src strides of a, dst contiguous */
  emlx_idx_src idx;
  emlx_idx_axis ax;
  bool fused;  /* clamp mode, contiguous indices: take_fused applies */
  bool stream; /* a large output: rows written with streaming stores */
  emlx_idx_error err;
} take_ctx;

static void take_range(void *p, int64_t u0, int64_t u1) {
  take_ctx *c = p;
  int64_t R = c->slice.rows, S = c->slice.size, es = (int64_t)c->es;
  int64_t off[EMLX_IDX_PIECE];
  /* u = (o * M + m) * R + r */
  int64_t u = u0;
  while (u < u1 && !stopped(&c->err)) {
    int64_t om = u / R, r0 = u % R;
    int64_t o = om / c->npos, m0 = om % c->npos;
    int64_t aoff;
    emlx_idx_walk_offsets(&c->outer, o, 1, &aoff);
    /* positions m0 .. m0 + len of this o that the chunk covers */
    int64_t left = (u1 - u + r0 + R - 1) / R;
    int64_t len = c->npos - m0;
    if (len > left)
      len = left;
    const char *src = c->src + aoff * es;
    char *dst = c->dst + om * S * es;
    if (S == 1 && c->fused &&
        take_fused(dst, src, c->idx.data + m0 * (int64_t)emlx_dtype_size(c->idx.dtype),
                   c->idx.dtype, c->es, len, c->ax.dim, c->ax.mul, c->ax.wrap)) {
      u += len;
      continue;
    }
    if (len > EMLX_IDX_PIECE)
      len = EMLX_IDX_PIECE;
    if (emlx_idx_offsets(&c->idx, m0, len, &c->ax, 0, off, &c->err) != 0)
      break;
    if (S == 1) {
      gather_elems(dst, src, off, len, c->es);
      u += len;
      continue;
    }
    for (int64_t j = 0; j < len && u < u1; j++) {
      int64_t r1 = u1 - u + r0 < R ? u1 - u + r0 : R;
      emlx_idx_block_copy_rows(&c->slice, dst + j * S * es, src + off[j] * es, c->es, r0, r1,
                               c->stream);
      u += r1 - r0;
      r0 = 0;
    }
  }
  if (c->stream)
    emlx_idx_stream_fence();
}

int emlx_cpu_take(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_take_params *p = emlx__params(node);
  const emlx_array *a = in[0], *idx = in[1];
  emlx_array *o = out[0];
  if (emlx__array_alloc_data(o) != 0)
    return -1;
  if (o->size == 0)
    return 0;
  int axis = p->axis;
  take_ctx *c = malloc(sizeof *c);
  if (!c)
    return EMLX_FAIL("take: out of memory");
  c->src = emlx__data(a);
  c->dst = emlx__data(o);
  c->es = emlx_dtype_size(a->dtype);
  c->npos = idx->size;
  emlx_idx_walk_init(&c->outer, axis, a->shape, a->strides);
  emlx_idx_block_init(&c->slice, a->ndim - axis - 1, a->shape + axis + 1, NULL,
                      a->strides + axis + 1);
  emlx_idx_src_init(&c->idx, idx);
  c->ax = (emlx_idx_axis){.dim = a->shape[axis],
                          .hi = a->shape[axis] - 1,
                          .mul = a->strides[axis],
                          .wrap = p->mode.wrap,
                          .check = p->mode.check,
                          .axis = axis,
                          .slice = 1};
  c->stream = emlx_idx_streams(emlx_nbytes(o));
  c->fused = !p->mode.check && c->idx.walk.blk.ndim == 1 &&
             (c->idx.walk.blk.src[0] == 1 || c->idx.walk.blk.shape[0] == 1);
  atomic_init(&c->err.set, 0);
  int64_t outer = 1;
  for (int i = 0; i < axis; i++)
    outer *= a->shape[i];
  int64_t units = outer * c->npos * c->slice.rows;
  emlx__parallel_for(units, unit_grain(&c->slice), take_range, c);
  int rc = atomic_load(&c->err.set) ? emlx_idx_error_report(&c->err, "take") : 0;
  free(c);
  return rc;
}

/* ---- take_along_axis ----------------------------------------------------------------- */

typedef struct along_ctx {
  const char *src;
  char *dst;
  size_t es;
  emlx_idx_walk rest; /* a's offsets over the output shape, axis stride 0 */
  emlx_idx_src idx;
  emlx_idx_axis ax;
  emlx_idx_error err;
} along_ctx;

static void along_range(void *p, int64_t u0, int64_t u1) {
  along_ctx *c = p;
  int64_t off[EMLX_IDX_PIECE];
  for (int64_t u = u0; u < u1 && !stopped(&c->err); u += EMLX_IDX_PIECE) {
    int64_t len = u1 - u < EMLX_IDX_PIECE ? u1 - u : EMLX_IDX_PIECE;
    emlx_idx_walk_offsets(&c->rest, u, len, off);
    if (emlx_idx_offsets(&c->idx, u, len, &c->ax, 1, off, &c->err) != 0)
      return;
    gather_elems(c->dst + u * (int64_t)c->es, c->src, off, len, c->es);
  }
}

int emlx_cpu_take_along_axis(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_take_params *p = emlx__params(node);
  const emlx_array *a = in[0], *idx = in[1];
  emlx_array *o = out[0];
  if (emlx__array_alloc_data(o) != 0)
    return -1;
  if (o->size == 0)
    return 0;
  int axis = p->axis;
  along_ctx *c = malloc(sizeof *c);
  if (!c)
    return EMLX_FAIL("take_along_axis: out of memory");
  c->src = emlx__data(a);
  c->dst = emlx__data(o);
  c->es = emlx_dtype_size(a->dtype);
  int64_t strides[EMLX_MAX_NDIM];
  memcpy(strides, a->strides, (size_t)a->ndim * sizeof *strides);
  strides[axis] = 0;
  emlx_idx_walk_init(&c->rest, o->ndim, o->shape, strides);
  emlx_idx_src_init(&c->idx, idx);
  c->ax = (emlx_idx_axis){.dim = a->shape[axis],
                          .hi = a->shape[axis] - 1,
                          .mul = a->strides[axis],
                          .wrap = p->mode.wrap,
                          .check = p->mode.check,
                          .axis = axis,
                          .slice = 1};
  atomic_init(&c->err.set, 0);
  emlx__parallel_for(o->size, EMLX_IDX_GRAIN, along_range, c);
  int rc = atomic_load(&c->err.set) ? emlx_idx_error_report(&c->err, "take_along_axis") : 0;
  free(c);
  return rc;
}

/* ---- gather --------------------------------------------------------------------------- */

typedef struct gather_ctx {
  const char *src;
  char *dst;
  size_t es;
  int nidx;
  int64_t npos;
  emlx_idx_block slice; /* slice_sizes over a's strides, dst contiguous */
  emlx_idx_src idx[EMLX_MAX_NDIM];
  emlx_idx_axis ax[EMLX_MAX_NDIM];
  bool stream; /* a large output: rows written with streaming stores */
  emlx_idx_error err;
} gather_ctx;

/* off[j] = element offset in a of the slice start of position m0 + j. */
static int slice_starts(gather_ctx *c, int64_t m0, int64_t len, int64_t *off) {
  if (c->nidx == 0) {
    memset(off, 0, (size_t)len * sizeof *off);
    return 0;
  }
  for (int k = 0; k < c->nidx; k++)
    if (emlx_idx_offsets(&c->idx[k], m0, len, &c->ax[k], k > 0, off, &c->err) != 0)
      return -1;
  return 0;
}

static void gather_range(void *p, int64_t u0, int64_t u1) {
  gather_ctx *c = p;
  int64_t R = c->slice.rows, S = c->slice.size, es = (int64_t)c->es;
  int64_t off[EMLX_IDX_PIECE];
  int64_t u = u0;
  while (u < u1 && !stopped(&c->err)) {
    int64_t m0 = u / R, r0 = u % R;
    int64_t len = (u1 - u + r0 + R - 1) / R;
    if (len > EMLX_IDX_PIECE)
      len = EMLX_IDX_PIECE;
    if (slice_starts(c, m0, len, off) != 0)
      break;
    char *dst = c->dst + m0 * S * es;
    if (S == 1) {
      gather_elems(dst, c->src, off, len, c->es);
      u += len;
      continue;
    }
    for (int64_t j = 0; j < len && u < u1; j++) {
      int64_t r1 = u1 - u + r0 < R ? u1 - u + r0 : R;
      emlx_idx_block_copy_rows(&c->slice, dst + j * S * es, c->src + off[j] * es, c->es, r0, r1,
                               c->stream);
      u += r1 - r0;
      r0 = 0;
    }
  }
  if (c->stream)
    emlx_idx_stream_fence();
}

int emlx_cpu_gather(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_gather_params *p = emlx__params(node);
  const emlx_array *a = in[0];
  emlx_array *o = out[0];
  if (emlx__array_alloc_data(o) != 0)
    return -1;
  if (o->size == 0)
    return 0;
  gather_ctx *c = malloc(sizeof *c);
  if (!c)
    return EMLX_FAIL("gather: out of memory");
  int nd = a->ndim, ni = o->ndim - nd;
  const int64_t *slice_sizes = o->shape + ni;
  c->src = emlx__data(a);
  c->dst = emlx__data(o);
  c->es = emlx_dtype_size(a->dtype);
  c->nidx = p->naxes;
  c->npos = 1;
  for (int i = 0; i < ni; i++)
    c->npos *= o->shape[i];
  emlx_idx_block_init(&c->slice, nd, slice_sizes, NULL, a->strides);
  for (int k = 0; k < p->naxes; k++) {
    int ax = p->axes[k];
    emlx_idx_src_init(&c->idx[k], in[1 + k]);
    c->ax[k] = (emlx_idx_axis){.dim = a->shape[ax],
                               .hi = a->shape[ax] - slice_sizes[ax],
                               .mul = a->strides[ax],
                               .wrap = p->mode.wrap,
                               .check = p->mode.check,
                               .axis = ax,
                               .slice = slice_sizes[ax]};
  }
  c->stream = emlx_idx_streams(emlx_nbytes(o));
  atomic_init(&c->err.set, 0);
  emlx__parallel_for(c->npos * c->slice.rows, unit_grain(&c->slice), gather_range, c);
  int rc = atomic_load(&c->err.set) ? emlx_idx_error_report(&c->err, "gather") : 0;
  free(c);
  return rc;
}
