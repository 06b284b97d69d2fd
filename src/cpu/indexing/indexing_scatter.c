/* indexing_scatter.c — scatter and scatter_add.
 *
 * Three steps. (1) In CHECK mode every index is validated, over the pool,
 * before anything is written (a donated input must not be half-updated).
 * (2) The output takes a's buffer when it can be donated (in place), else a
 * copy of a. (3) The updates are applied by output ranges: a range's task
 * converts every position's indices into slice starts, piece by piece, and
 * applies the parts that fall in its range. No two tasks touch one element,
 * and each element sees its updates in index order, so duplicates resolve
 * deterministically (scatter: the last wins; scatter_add: summed in order).
 * Since every range re-reads all indices, only scatters of long slices
 * (rows) are split over the pool; single-element scatters run in one pass,
 * which is memory-bound anyway. */
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "indexing_util.h"
#include "kernels.h"

/* Below this many update elements, or with slices shorter than
 * SCATTER_SPLIT_SLICE, one pass does everything. */
#define SCATTER_PARALLEL_MIN 32768
#define SCATTER_SPLIT_SLICE 64

/* ---- the add loops, per dtype ---------------------------------------------------- */

#define ADD_WRAP(T)                                                                                \
  do {                                                                                             \
    T *o_ = (T *)(void *)dst;                                                                      \
    const T *u_ = (const T *)(const void *)src;                                                    \
    for (int64_t j = 0; j < n; j++)                                                                \
      o_[j * ds] = (T)(o_[j * ds] + u_[j * ss]);                                                   \
  } while (0)

#define ADD_HALF(TO_F32, FROM_F32)                                                                 \
  do {                                                                                             \
    uint16_t *o_ = (uint16_t *)(void *)dst;                                                        \
    const uint16_t *u_ = (const uint16_t *)(const void *)src;                                      \
    for (int64_t j = 0; j < n; j++)                                                                \
      o_[j * ds] = FROM_F32(TO_F32(o_[j * ds]) + TO_F32(u_[j * ss]));                              \
  } while (0)

/* dst[j * ds] += src[j * ss], j < n, in dtype dt (integers wrap: the
 * unsigned types carry the signed ones' bits). */
static void add_run(emlx_dtype dt, char *dst, int64_t ds, const char *src, int64_t ss, int64_t n) {
  switch (dt) {
  case EMLX_BOOL: {
    uint8_t *o = (uint8_t *)dst;
    const uint8_t *u = (const uint8_t *)src;
    for (int64_t j = 0; j < n; j++)
      o[j * ds] = (uint8_t)((o[j * ds] | u[j * ss]) != 0);
    break;
  }
  case EMLX_UINT8:
  case EMLX_INT8:
    ADD_WRAP(uint8_t);
    break;
  case EMLX_UINT16:
  case EMLX_INT16:
    ADD_WRAP(uint16_t);
    break;
  case EMLX_UINT32:
  case EMLX_INT32:
    ADD_WRAP(uint32_t);
    break;
  case EMLX_UINT64:
  case EMLX_INT64:
    ADD_WRAP(uint64_t);
    break;
  case EMLX_FLOAT16:
    ADD_HALF(emlx_cv_f16_to_f32, emlx_cv_f32_to_f16);
    break;
  case EMLX_BFLOAT16:
    ADD_HALF(emlx_cv_bf16_to_f32, emlx_cv_f32_to_bf16);
    break;
  case EMLX_FLOAT32:
    ADD_WRAP(float);
    break;
  case EMLX_FLOAT64:
    ADD_WRAP(double);
    break;
  case EMLX_COMPLEX64: {
    float *o = (float *)(void *)dst;
    const float *u = (const float *)(const void *)src;
    for (int64_t j = 0; j < n; j++) {
      o[2 * j * ds] += u[2 * j * ss];
      o[2 * j * ds + 1] += u[2 * j * ss + 1];
    }
    break;
  }
  case EMLX_COMPLEX128: {
    double *o = (double *)(void *)dst;
    const double *u = (const double *)(const void *)src;
    for (int64_t j = 0; j < n; j++) {
      o[2 * j * ds] += u[2 * j * ss];
      o[2 * j * ds + 1] += u[2 * j * ss + 1];
    }
    break;
  }
  default:
    break;
  }
}

/* ---- the kernel ------------------------------------------------------------------- */

typedef struct scatter_ctx {
  bool add;
  emlx_dtype dtype;
  size_t es;
  char *out;
  const char *upd;
  int64_t out_size;
  int64_t nranges; /* the output is applied in this many ranges */
  int64_t npos;
  int nidx;
  int64_t span;          /* largest output offset of a slice element, from its start */
  emlx_idx_block slice;  /* dst: output strides, src: updates' slice strides */
  emlx_idx_walk upd_pos; /* updates' offsets over the index positions */
  emlx_idx_src idx[EMLX_MAX_NDIM];
  emlx_idx_axis ax[EMLX_MAX_NDIM];
  emlx_idx_error err;
} scatter_ctx;

/* st[j] = output offset of the slice start of position m0 + j. Returns -1
 * on an out-of-range index in CHECK mode. */
static int slice_starts(scatter_ctx *c, int64_t m0, int64_t len, int64_t *st) {
  if (c->nidx == 0)
    memset(st, 0, (size_t)len * sizeof *st);
  for (int k = 0; k < c->nidx; k++)
    if (emlx_idx_offsets(&c->idx[k], m0, len, &c->ax[k], k > 0, st, &c->err) != 0)
      return -1;
  return 0;
}

/* CHECK mode: every index is validated before anything is written. */
static void check_range(void *p, int64_t m0, int64_t m1) {
  scatter_ctx *c = p;
  int64_t st[EMLX_IDX_PIECE];
  for (int64_t m = m0; m < m1; m += EMLX_IDX_PIECE) {
    int64_t len = m1 - m < EMLX_IDX_PIECE ? m1 - m : EMLX_IDX_PIECE;
    if (atomic_load_explicit(&c->err.set, memory_order_relaxed) || slice_starts(c, m, len, st))
      return;
  }
}

/* Single-element slices (the common indexed_put / indexed_add): one typed
 * loop per dtype. LOOP(T, BODY) runs BODY for each position whose output
 * offset s lies in [lo, hi), with o the output, x the update, both as T. */
#define APPLY_BY_DTYPE(LOOP)                                                                       \
  do {                                                                                             \
    if (!c->add) {                                                                                 \
      switch (c->es) {                                                                             \
      case 1:                                                                                      \
        LOOP(uint8_t, o[s] = x);                                                                   \
        break;                                                                                     \
      case 2:                                                                                      \
        LOOP(uint16_t, o[s] = x);                                                                  \
        break;                                                                                     \
      case 4:                                                                                      \
        LOOP(uint32_t, o[s] = x);                                                                  \
        break;                                                                                     \
      case 16:                                                                                     \
        LOOP(emlx_b16, o[s] = x);                                                                  \
        break;                                                                                     \
      default:                                                                                     \
        LOOP(uint64_t, o[s] = x);                                                                  \
        break;                                                                                     \
      }                                                                                            \
      break;                                                                                       \
    }                                                                                              \
    switch (c->dtype) {                                                                            \
    case EMLX_BOOL:                                                                                \
      LOOP(uint8_t, o[s] = (uint8_t)((o[s] | x) != 0));                                            \
      break;                                                                                       \
    case EMLX_UINT8:                                                                               \
    case EMLX_INT8:                                                                                \
      LOOP(uint8_t, o[s] = (uint8_t)(o[s] + x));                                                   \
      break;                                                                                       \
    case EMLX_UINT16:                                                                              \
    case EMLX_INT16:                                                                               \
      LOOP(uint16_t, o[s] = (uint16_t)(o[s] + x));                                                 \
      break;                                                                                       \
    case EMLX_UINT32:                                                                              \
    case EMLX_INT32:                                                                               \
      LOOP(uint32_t, o[s] += x);                                                                   \
      break;                                                                                       \
    case EMLX_UINT64:                                                                              \
    case EMLX_INT64:                                                                               \
      LOOP(uint64_t, o[s] += x);                                                                   \
      break;                                                                                       \
    case EMLX_FLOAT16:                                                                             \
      LOOP(uint16_t, o[s] = emlx_cv_f32_to_f16(emlx_cv_f16_to_f32(o[s]) + emlx_cv_f16_to_f32(x))); \
      break;                                                                                       \
    case EMLX_BFLOAT16:                                                                            \
      LOOP(uint16_t,                                                                               \
           o[s] = emlx_cv_f32_to_bf16(emlx_cv_bf16_to_f32(o[s]) + emlx_cv_bf16_to_f32(x)));        \
      break;                                                                                       \
    case EMLX_FLOAT32:                                                                             \
      LOOP(float, o[s] += x);                                                                      \
      break;                                                                                       \
    case EMLX_FLOAT64:                                                                             \
      LOOP(double, o[s] += x);                                                                     \
      break;                                                                                       \
    case EMLX_COMPLEX64:                                                                           \
      LOOP(emlx_c64, (o[s].re += x.re, o[s].im += x.im));                                          \
      break;                                                                                       \
    case EMLX_COMPLEX128:                                                                          \
      LOOP(emlx_c128, (o[s].re += x.re, o[s].im += x.im));                                         \
      break;                                                                                       \
    default:                                                                                       \
      break;                                                                                       \
    }                                                                                              \
  } while (0)

/* Positions from tables: st[j] the output offset, uoff[j] the update's. */
#define TABLE_LOOP(T, BODY)                                                                        \
  do {                                                                                             \
    T *o = (T *)(void *)c->out;                                                                    \
    const T *u = (const T *)(const void *)c->upd;                                                  \
    for (int64_t j = 0; j < len; j++) {                                                            \
      int64_t s = st[j];                                                                           \
      if ((uint64_t)(s - lo) >= (uint64_t)(hi - lo))                                               \
        continue;                                                                                  \
      const T x = u[uoff[j]];                                                                      \
      BODY;                                                                                        \
    }                                                                                              \
  } while (0)

static void apply_single(const scatter_ctx *c, const int64_t *st, const int64_t *uoff, int64_t len,
                         int64_t lo, int64_t hi) {
  APPLY_BY_DTYPE(TABLE_LOOP);
}

/* Fused: one contiguous index array of IT read directly (no offset tables),
 * updates at stride us; the index wraps and clamps in the rare slow branch. */
#define FUSED_LOOP(IT, T, BODY)                                                                    \
  do {                                                                                             \
    T *o = (T *)(void *)c->out;                                                                    \
    const T *u = (const T *)(const void *)c->upd;                                                  \
    const IT *ip = (const IT *)(const void *)c->idx[0].data;                                       \
    const int64_t dim = c->ax[0].dim, mul = c->ax[0].mul, us = c->upd_pos.blk.src[0];              \
    for (int64_t m = 0; m < c->npos; m++) {                                                        \
      int64_t v = (int64_t)ip[m];                                                                  \
      if ((uint64_t)v >= (uint64_t)dim) {                                                          \
        v += (c->ax[0].wrap && v < 0) ? dim : 0;                                                   \
        v = v < 0 ? 0 : (v >= dim ? dim - 1 : v);                                                  \
      }                                                                                            \
      int64_t s = v * mul;                                                                         \
      if ((uint64_t)(s - lo) >= (uint64_t)(hi - lo))                                               \
        continue;                                                                                  \
      const T x = u[m * us];                                                                       \
      BODY;                                                                                        \
    }                                                                                              \
  } while (0)
#define FUSED_LOOP32(T, BODY) FUSED_LOOP(int32_t, T, BODY)
#define FUSED_LOOP64(T, BODY) FUSED_LOOP(int64_t, T, BODY)

static void apply_fused(const scatter_ctx *c, int64_t lo, int64_t hi) {
  if (c->idx[0].dtype == EMLX_INT32)
    APPLY_BY_DTYPE(FUSED_LOOP32);
  else
    APPLY_BY_DTYPE(FUSED_LOOP64);
}

/* Whether apply_fused applies: one contiguous int32/int64 index array,
 * single-element slices, updates along one strided dim. */
static bool can_fuse(const scatter_ctx *c) {
  const emlx_idx_block *ib = &c->idx[0].walk.blk;
  return c->nidx == 1 && c->slice.size == 1 && c->upd_pos.blk.ndim == 1 &&
         (c->idx[0].dtype == EMLX_INT32 || c->idx[0].dtype == EMLX_INT64) && ib->ndim == 1 &&
         (ib->src[0] == 1 || c->npos == 1);
}

/* Applies row r's elements whose output offsets lie in [lo, hi). */
static void apply_row(const scatter_ctx *c, int64_t start, const char *usrc, int64_t lo,
                      int64_t hi) {
  const emlx_idx_block *b = &c->slice;
  int last = b->ndim - 1;
  int64_t inner = b->shape[last], ds = b->dst[last], ss = b->src[last];
  int64_t end = start + (inner - 1) * ds;
  if (end < lo || start >= hi)
    return;
  int64_t j0 = start >= lo ? 0 : (lo - start + ds - 1) / ds;
  int64_t j1 = end < hi ? inner : (hi - start + ds - 1) / ds;
  int64_t es = (int64_t)c->es;
  char *dst = c->out + (start + j0 * ds) * es;
  const char *src = usrc + j0 * ss * es;
  if (c->add)
    add_run(c->dtype, dst, ds, src, ss, j1 - j0);
  else
    emlx_idx_copy_run(dst, ds, src, ss, j1 - j0, c->es, false);
}

/* Slices of several elements: their rows, clipped to [lo, hi). */
static void apply_slices(const scatter_ctx *c, const int64_t *st, const int64_t *uoff, int64_t len,
                         int64_t lo, int64_t hi) {
  const emlx_idx_block *b = &c->slice;
  int last = b->ndim - 1;
  int64_t es = (int64_t)c->es;
  int64_t idx[EMLX_MAX_NDIM];
  for (int64_t j = 0; j < len; j++) {
    int64_t start = st[j];
    if (start + c->span < lo || start >= hi)
      continue;
    const char *usrc = c->upd + uoff[j] * es;
    int64_t doff = 0, soff = 0;
    for (int k = 0; k < last; k++)
      idx[k] = 0;
    for (int64_t r = 0; r < b->rows; r++) {
      apply_row(c, start + doff, usrc + soff * es, lo, hi);
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
}

/* Output ranges [r0, r1) of nranges: every position in order, applied
 * where it falls in the range. */
static void apply_ranges(void *p, int64_t r0, int64_t r1) {
  scatter_ctx *c = p;
  int64_t st[EMLX_IDX_PIECE], uoff[EMLX_IDX_PIECE];
  for (int64_t r = r0; r < r1; r++) {
    int64_t lo = c->out_size * r / c->nranges, hi = c->out_size * (r + 1) / c->nranges;
    if (can_fuse(c)) {
      apply_fused(c, lo, hi);
      continue;
    }
    for (int64_t m0 = 0; m0 < c->npos; m0 += EMLX_IDX_PIECE) {
      int64_t len = c->npos - m0 < EMLX_IDX_PIECE ? c->npos - m0 : EMLX_IDX_PIECE;
      slice_starts(c, m0, len, st); /* already checked: clamps only */
      emlx_idx_walk_offsets(&c->upd_pos, m0, len, uoff);
      if (c->slice.size == 1)
        apply_single(c, st, uoff, len, lo, hi);
      else
        apply_slices(c, st, uoff, len, lo, hi);
    }
  }
}

int emlx_cpu_scatter(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_gather_params *p = emlx__params(node);
  bool add = node->prim == EMLX_PRIM_SCATTER_ADD;
  const char *op = add ? "scatter_add" : "scatter";
  emlx_array *a = in[0];
  const emlx_array *upd = in[1 + p->naxes];
  emlx_array *o = out[0];
  int nd = a->ndim, ni = upd->ndim - nd;
  scatter_ctx *c = calloc(1, sizeof *c);
  if (!c)
    return EMLX_FAIL("%s: out of memory", op);
  int64_t rm[EMLX_MAX_NDIM];
  emlx__row_major_strides(a->shape, nd, rm);
  c->add = add;
  c->dtype = a->dtype;
  c->es = emlx_dtype_size(a->dtype);
  c->npos = 1;
  for (int i = 0; i < ni; i++)
    c->npos *= upd->shape[i];
  c->nidx = p->naxes;
  emlx_idx_block_init(&c->slice, nd, upd->shape + ni, rm, upd->strides + ni);
  /* A one-element slice has no innermost stride of its own. */
  if (c->slice.size == 1)
    c->slice.dst[0] = 1;
  for (int k = 0; k < p->naxes; k++) {
    int ax = p->axes[k];
    int64_t s = upd->shape[ni + ax];
    emlx_idx_src_init(&c->idx[k], in[1 + k]);
    c->ax[k] = (emlx_idx_axis){.dim = a->shape[ax],
                               .hi = a->shape[ax] - s,
                               .mul = rm[ax],
                               .wrap = p->mode.wrap,
                               .check = p->mode.check,
                               .axis = ax,
                               .slice = s};
  }
  atomic_init(&c->err.set, 0);
  bool work = c->slice.size > 0 && c->npos > 0 && a->size > 0;
  /* (1) in CHECK mode, every index before anything is written */
  if (work && p->mode.check && c->nidx > 0) {
    emlx__parallel_for(c->npos, EMLX_IDX_GRAIN, check_range, c);
    if (atomic_load(&c->err.set)) {
      int rc = emlx_idx_error_report(&c->err, op);
      free(c);
      return rc;
    }
    for (int k = 0; k < c->nidx; k++)
      c->ax[k].check = 0;
  }
  /* (2) the output: a's buffer in place, or a copy */
  if (emlx__array_alloc_data_donate(o, a) != 0) {
    free(c);
    return -1;
  }
  if (o->buffer != a->buffer)
    emlx_idx_copy_array(emlx__data(o), a);
  /* (3) the updates, each thread owning a range of the output */
  if (work) {
    c->out = emlx__data(o);
    c->upd = emlx__data(upd);
    c->out_size = o->size;
    c->span = 0;
    for (int k = 0; k < c->slice.ndim; k++)
      c->span += (c->slice.shape[k] - 1) * c->slice.dst[k];
    emlx_idx_walk_init(&c->upd_pos, ni, upd->shape, upd->strides);
    /* Each range re-reads every index, so only slices long enough to
     * outweigh that are split; one-element slices run in one pass. */
    int64_t total = c->npos * c->slice.size;
    bool split = total >= SCATTER_PARALLEL_MIN && c->slice.size >= SCATTER_SPLIT_SLICE;
    c->nranges = split ? 4 * (int64_t)emlx_num_threads() : 1;
    emlx__parallel_for(c->nranges, 1, apply_ranges, c);
  }
  free(c);
  return 0;
}
