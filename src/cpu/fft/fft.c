/* fft.c — the FFT kernel: a complex64 transform along one axis of an
 * array of any strides (see fft.h for the layout and the plans).
 *
 * Two ways through:
 *  - tiles: rows go W at a time through the lane layout. When the axis is
 *    not the last one, a tile is W adjacent columns (one vector load per
 *    element); otherwise W rows are gathered side by side. Tiles run in
 *    parallel over the pool; each chunk owns two lane buffers.
 *  - rows: a long row (or a batch too small to fill the lanes) goes through
 *    a row plan, four-step or Bluestein, parallel inside the row.
 * Zero padding, truncation, and the inverse's conjugations and 1/n scale
 * are folded into the copies in and out. */
#include <string.h>

#include "fft.h"
#include "internal.h"
#include "isa.h"
#include "kernels.h"
#include "params_fft.h"

#define ROW_MODE_MIN 1024           /* shorter rows always go through tiles */
#define LANE_MAX ((int64_t)1 << 16) /* longer rows always go through row plans */
#define LANE_BYTES_MAX ((int64_t)1 << 20)
#define POINTWISE_GRAIN 16384

const emlx_cpu_fft_table *emlx__fft_table(void) {
  const char *name = emlx_cpu_isa_get()->name;
  if (!strcmp(name, "avx512"))
    return &emlx_cpu_fft_avx512;
  if (!strcmp(name, "avx2"))
    return &emlx_cpu_fft_avx2;
  return &emlx_cpu_fft_scalar;
}

/* A two-buffer lane workspace from the allocator's cache (no page faults in
 * steady state). */
typedef struct lane_bufs {
  emlx_buffer *mem;
  float *a, *b;
} lane_bufs;

static int lane_bufs_get(lane_bufs *lb, int64_t cap, int w) {
  size_t one = (size_t)cap * 2 * (size_t)w * sizeof(float);
  one = (one + 63) & ~(size_t)63;
  lb->mem = emlx__buffer_alloc(2 * one, EMLX_CPU);
  if (!lb->mem)
    return -1;
  lb->a = lb->mem->ptr;
  lb->b = (float *)((char *)lb->mem->ptr + one);
  return 0;
}

/* ---- tiles ---------------------------------------------------------------------- */

typedef struct tile_job {
  const emlx_cpu_fft_table *T;
  const emlx_fft_plan *plan;
  const emlx_array *x;
  int axis;
  const float *xd;
  float *yd;
  int64_t n, len, sx; /* output length, input entries used, input axis stride */
  int64_t inner, rows, nib;
  int blocked; /* tiles are (outer, block of W inner indices) */
  int conj;
  float scale;
  _Atomic int failed;
} tile_job;

int64_t emlx__fft_line_offset(const emlx_array *x, int axis, int64_t o, int64_t i) {
  int64_t off = 0;
  for (int d = x->ndim - 1; d > axis; d--) {
    off += (i % x->shape[d]) * x->strides[d];
    i /= x->shape[d];
  }
  for (int d = axis - 1; d >= 0; d--) {
    off += (o % x->shape[d]) * x->strides[d];
    o /= x->shape[d];
  }
  return off;
}

static void tile_range(void *ctx, int64_t t0, int64_t t1) {
  tile_job *J = ctx;
  const emlx_cpu_fft_table *T = J->T;
  const int w = T->lanes;
  lane_bufs lb;
  if (lane_bufs_get(&lb, J->plan->cap, w) != 0) {
    atomic_store(&J->failed, 1);
    return;
  }
  const float *src[EMLX_FFT_MAX_LANES];
  float *dst[EMLX_FFT_MAX_LANES];
  int64_t lens[EMLX_FFT_MAX_LANES];
  for (int64_t t = t0; t < t1; t++) {
    int nl;
    int64_t o[EMLX_FFT_MAX_LANES], i[EMLX_FFT_MAX_LANES];
    if (J->blocked) {
      int64_t i0 = (t % J->nib) * w;
      nl = (int)(J->inner - i0 < w ? J->inner - i0 : w);
      for (int l = 0; l < nl; l++) {
        o[l] = t / J->nib;
        i[l] = i0 + l;
      }
    } else {
      int64_t r0 = t * w;
      nl = (int)(J->rows - r0 < w ? J->rows - r0 : w);
      for (int l = 0; l < nl; l++) {
        o[l] = (r0 + l) / J->inner;
        i[l] = (r0 + l) % J->inner;
      }
    }
    bool adjacent = nl == w;
    for (int l = 0; l < nl; l++) {
      src[l] = J->xd + 2 * emlx__fft_line_offset(J->x, J->axis, o[l], i[l]);
      dst[l] = J->yd + 2 * (o[l] * J->n * J->inner + i[l]);
      lens[l] = J->len;
      adjacent = adjacent && src[l] == src[0] + 2 * l;
    }
    if (adjacent)
      T->gather_cols(src[0], J->sx, J->len, J->n, lb.a, J->conj);
    else
      T->gather_lanes(src, lens, nl, J->sx, J->n, lb.a, J->conj);
    float *r = T->lane_exec(J->plan, lb.a, lb.b);
    if (J->blocked && nl == w)
      T->scatter_cols(r, J->n, dst[0], J->inner, J->scale, J->conj);
    else
      T->scatter_lanes(r, nl, J->n, dst, J->inner, J->scale, J->conj);
  }
  emlx__buffer_release(lb.mem);
}

/* ---- rows ----------------------------------------------------------------------- */

typedef struct row_src {
  const float *x;
  int64_t sx, len; /* entries len.. are zero */
  int conj;
} row_src;

typedef struct row_dst {
  float *y;
  int64_t sy;
  float scale;
  int conj;
} row_dst;

typedef struct step_job {
  const emlx_cpu_fft_table *T;
  const emlx_fft_plan *p;
  row_src src;
  row_dst dst;
  float *Y; /* between the steps: column tiles in the lane layout (see row_scratch) */
  _Atomic int failed;
} step_job;

/* Step 1: column tiles of the n1 x n2 matrix, transformed, twiddled, into Y. */
static void step_cols(void *ctx, int64_t t0, int64_t t1) {
  step_job *J = ctx;
  const emlx_cpu_fft_table *T = J->T;
  const emlx_fft_plan *p = J->p;
  const int w = T->lanes;
  const int64_t n1 = p->n1, n2 = p->n2, len = J->src.len, sx = J->src.sx;
  lane_bufs lb;
  if (lane_bufs_get(&lb, p->p1->cap, w) != 0) {
    atomic_store(&J->failed, 1);
    return;
  }
  const float *src[EMLX_FFT_MAX_LANES];
  int64_t lens[EMLX_FFT_MAX_LANES];
  for (int64_t t = t0; t < t1; t++) {
    int64_t c0 = t * w;
    int nl = (int)(n2 - c0 < w ? n2 - c0 : w);
    if (sx == 1 && nl == w && (n1 - 1) * n2 + c0 + w <= len) {
      T->gather_cols(J->src.x + 2 * c0, n2, n1, n1, lb.a, J->src.conj);
    } else {
      for (int l = 0; l < nl; l++) {
        int64_t first = c0 + l; /* column c0 + l holds entries first + i1*n2 */
        src[l] = J->src.x + 2 * first * sx;
        lens[l] = len > first ? (len - first - 1) / n2 + 1 : 0;
        lens[l] = lens[l] < n1 ? lens[l] : n1;
      }
      T->gather_lanes(src, lens, nl, n2 * sx, n1, lb.a, J->src.conj);
    }
    float *r = T->lane_exec(p->p1, lb.a, lb.b);
    T->twiddle_cols(r, J->Y + t * n1 * 2 * w, n1, p->tw_lane, (int)(c0 % 16),
                    p->tw_blk + 2 * (c0 / 16) * n1);
  }
  emlx__buffer_release(lb.mem);
}

/* Step 2: row tiles of Y, transformed, written transposed (k2 * n1 + k1). */
static void step_rows(void *ctx, int64_t t0, int64_t t1) {
  step_job *J = ctx;
  const emlx_cpu_fft_table *T = J->T;
  const emlx_fft_plan *p = J->p;
  const int w = T->lanes;
  const int64_t n1 = p->n1, n2 = p->n2, sy = J->dst.sy;
  lane_bufs lb;
  if (lane_bufs_get(&lb, p->p2->cap, w) != 0) {
    atomic_store(&J->failed, 1);
    return;
  }
  float *dst[EMLX_FFT_MAX_LANES];
  for (int64_t t = t0; t < t1; t++) {
    int64_t r0 = t * w;
    int nl = (int)(n1 - r0 < w ? n1 - r0 : w);
    for (int l = 0; l < nl; l++)
      dst[l] = J->dst.y + 2 * (r0 + l) * sy;
    T->gather_tiles(J->Y, n1, n2, r0, lb.a);
    float *r = T->lane_exec(p->p2, lb.a, lb.b);
    if (sy == 1 && nl == w)
      T->scatter_cols(r, n2, dst[0], n1, J->dst.scale, J->dst.conj);
    else
      T->scatter_lanes(r, nl, n2, dst, n1 * sy, J->dst.scale, J->dst.conj);
  }
  emlx__buffer_release(lb.mem);
}

/* Floats of Bluestein's two rows, rounded up to keep what follows aligned
 * to 64 bytes. */
static size_t bluestein_rows(const emlx_fft_plan *p) {
  return (4 * (size_t)p->m + 15) & ~(size_t)15;
}

/* Floats of scratch a row plan needs with w lanes. Four-step: the column
 * tiles of the first step, ceil(n2/w) of n1 elements of 2w floats, plus w
 * elements of slack read (never used) by the last row tile of the second
 * step. Bluestein: two rows of m complex, then its sub-plan's. */
static size_t row_scratch(const emlx_fft_plan *p, int64_t w) {
  if (p->kind == EMLX_FFT_FOURSTEP)
    return (size_t)(((p->n2 + w - 1) / w * p->n1 + w) * 2 * w);
  return bluestein_rows(p) + row_scratch(p->sub, w);
}

static int64_t tiles_grain(int64_t cost_per_tile) {
  int64_t g = 65536 / (cost_per_tile > 0 ? cost_per_tile : 1);
  return g > 0 ? g : 1;
}

static int fourstep(const emlx_cpu_fft_table *T, const emlx_fft_plan *p, row_src src, row_dst dst,
                    float *Y) {
  step_job J = {.T = T, .p = p, .src = src, .dst = dst, .Y = Y};
  atomic_init(&J.failed, 0);
  int64_t w = T->lanes;
  /* The slack is read as garbage lanes: keep it finite. */
  memset(Y + (p->n2 + w - 1) / w * p->n1 * 2 * w, 0, sizeof(float) * 2 * (size_t)(w * w));
  emlx__parallel_for((p->n2 + w - 1) / w, tiles_grain(p->n1 * w), step_cols, &J);
  if (!atomic_load(&J.failed))
    emlx__parallel_for((p->n1 + w - 1) / w, tiles_grain(p->n2 * w), step_rows, &J);
  return atomic_load(&J.failed) ? -1 : 0;
}

/* ---- Bluestein on one long row ------------------------------------------------------- */

/* One pointwise product over a row (fft.h's cmul), in parallel chunks. */
typedef struct pw_job {
  const emlx_cpu_fft_table *T;
  const float *x, *w;
  float *y;
  int64_t sx, sy;
  int conj_x, conj_out;
  float scale;
} pw_job;

static void pointwise_range(void *ctx, int64_t j0, int64_t j1) {
  const pw_job *J = ctx;
  J->T->cmul(J->x + 2 * j0 * J->sx, J->sx, J->w + 2 * j0, J->y + 2 * j0 * J->sy, J->sy, j1 - j0,
             J->conj_x, J->conj_out, J->scale);
}

static void pointwise(pw_job J, int64_t n) {
  emlx__parallel_for(n, POINTWISE_GRAIN, pointwise_range, &J);
}

static int row_exec(const emlx_cpu_fft_table *T, const emlx_fft_plan *p, row_src src, row_dst dst,
                    float *scratch);

/* X = chirp . conj(fft_m(conj(fft_m(x . chirp) . bk))): fft_m(b)/m is bk. */
static int bluestein_row(const emlx_cpu_fft_table *T, const emlx_fft_plan *p, row_src src,
                         row_dst dst, float *scratch) {
  const int64_t m = p->m, used = src.len < p->n ? src.len : p->n;
  float *s = scratch, *t = scratch + 2 * m, *rest = scratch + bluestein_rows(p);
  pointwise((pw_job){T, src.x, p->chirp, s, src.sx, 1, src.conj, 0, 1.0f}, used);
  memset(s + 2 * used, 0, sizeof(float) * 2 * (size_t)(m - used));
  if (row_exec(T, p->sub, (row_src){s, 1, m, 0}, (row_dst){t, 1, 1.0f, 0}, rest) != 0)
    return -1;
  pointwise((pw_job){T, t, p->bk, t, 1, 1, 0, 0, 1.0f}, m);
  if (row_exec(T, p->sub, (row_src){t, 1, m, 1}, (row_dst){s, 1, 1.0f, 0}, rest) != 0)
    return -1;
  pointwise((pw_job){T, s, p->chirp, dst.y, 1, dst.sy, 1, dst.conj, dst.scale}, p->n);
  return 0;
}

static int row_exec(const emlx_cpu_fft_table *T, const emlx_fft_plan *p, row_src src, row_dst dst,
                    float *scratch) {
  if (p->kind == EMLX_FFT_FOURSTEP)
    return fourstep(T, p, src, dst, scratch);
  return bluestein_row(T, p, src, dst, scratch);
}

/* ---- the kernel -------------------------------------------------------------------------- */

static int run_rows(const emlx_cpu_fft_table *T, const emlx_array *x, emlx_array *y,
                    const emlx_fft_params *P, int64_t len, int64_t inner, int64_t rows) {
  emlx_fft_plan *p = emlx__fft_plan_get(P->n, 1);
  if (!p)
    return -1;
  emlx_buffer *scratch = emlx__buffer_alloc(row_scratch(p, T->lanes) * sizeof(float), EMLX_CPU);
  if (!scratch) {
    emlx__fft_plan_put(p);
    return -1;
  }
  const float *xd = emlx__data(x);
  float *yd = emlx__data(y);
  int rc = 0;
  for (int64_t r = 0; r < rows && rc == 0; r++) {
    int64_t o = r / inner, i = r % inner;
    row_src src = {xd + 2 * emlx__fft_line_offset(x, P->axis, o, i), x->strides[P->axis], len, P->inverse};
    row_dst dst = {yd + 2 * (o * P->n * inner + i), inner,
                   P->inverse ? (float)(1.0 / (double)P->n) : 1.0f, P->inverse};
    rc = row_exec(T, p, src, dst, scratch->ptr);
  }
  emlx__buffer_release(scratch);
  emlx__fft_plan_put(p);
  return rc ? EMLX_FAIL("fft: out of memory for the transform's scratch") : 0;
}

int emlx_cpu_fft(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs) {
  const emlx_fft_params *P = emlx__params(node);
  const emlx_array *x = inputs[0];
  emlx_array *y = outputs[0];
  if (!y)
    return 0;
  if (x->dtype == EMLX_COMPLEX128)
    return emlx_cpu_fft_c128(node, inputs, outputs);
  if (emlx__array_alloc_data(y) != 0)
    return -1;
  if (y->size == 0)
    return 0;
  const int64_t n = P->n;
  int64_t len = x->shape[P->axis] < n ? x->shape[P->axis] : n;
  if (len == 0) { /* the transform of zeros */
    memset(emlx__data(y), 0, (size_t)y->size * 2 * sizeof(float));
    return 0;
  }
  int64_t inner = 1;
  for (int d = P->axis + 1; d < y->ndim; d++)
    inner *= y->shape[d];
  const int64_t rows = y->size / n;
  const emlx_cpu_fft_table *T = emlx__fft_table();
  const int w = T->lanes;

  /* Rows when they are long and too few to fill the lanes, or when the lane
   * buffers would outgrow the caches. */
  emlx_fft_plan *lane = NULL;
  bool by_rows = n > LANE_MAX || (n >= ROW_MODE_MIN && rows < 2 * w);
  if (!by_rows) {
    lane = emlx__fft_plan_get(n, 0);
    if (!lane)
      return -1;
    by_rows = n >= ROW_MODE_MIN && lane->cap * 2 * w * (int64_t)sizeof(float) > LANE_BYTES_MAX;
  }
  if (by_rows) {
    emlx__fft_plan_put(lane);
    return run_rows(T, x, y, P, len, inner, rows);
  }
  tile_job J = {
      .T = T,
      .plan = lane,
      .x = x,
      .axis = P->axis,
      .xd = emlx__data(x),
      .yd = emlx__data(y),
      .n = n,
      .len = len,
      .sx = x->strides[P->axis],
      .inner = inner,
      .rows = rows,
      .blocked = inner >= w,
      .conj = P->inverse,
      .scale = P->inverse ? (float)(1.0 / (double)n) : 1.0f,
  };
  atomic_init(&J.failed, 0);
  J.nib = (inner + w - 1) / w;
  int64_t ntiles = J.blocked ? (rows / inner) * J.nib : (rows + w - 1) / w;
  emlx__parallel_for(ntiles, tiles_grain(lane->cap * w), tile_range, &J);
  emlx__fft_plan_put(lane);
  return atomic_load(&J.failed) ? EMLX_FAIL("fft: out of memory for the transform's scratch") : 0;
}
