/* fast.c — the FAST_NORM (rms_norm, layer_norm), FAST_ROPE and FAST_SWIGLU
 * kernels.
 *
 * All three work on rows of the last axis. A row is read in float32:
 * straight from the input when it is a contiguous float32 run, otherwise
 * converted (any dtype, any stride) into the task's scratch by the cast
 * table; the result row is written straight into a float32 output or staged
 * in scratch and converted once. Rows are the unit of parallel work, several
 * to a task; a task's rows follow one another, so a row-contiguous input
 * needs no index arithmetic beyond a multiply.
 *   norm    one pass over memory: the row's sum of squares (rms) or its sum
 *           and then its squared deviations (layer: two passes over the row
 *           in cache), then one pass that scales and writes
 *   rope    the angles' cosines and sines are tabulated first, one row per
 *           position (offset + t: T rows; per batch or per token: B * T
 *           rows), then every row of x is turned by its position's row
 *   swiglu  elementwise on tiles: g * u / (1 + exp(-g)); outputs of at
 *           least FAST_NT_BYTES are streamed (non-temporal stores)
 * Outputs reuse the first input's buffer when it can be donated (in place:
 * each loop reads an element, or a pair, before writing it). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "cpu.h"
#include "fast/kernels.h"
#include "fast_isa.h"
#include "params_fast.h"

#define FAST_TASK_WORK 32768 /* elements per parallel task */
#define FAST_SEG 4096        /* swiglu: elements of one piece of a row */
/* swiglu outputs of at least this many bytes (twice a large L3) are
 * written with streaming stores: no read of each output line before it is
 * written, a quarter of the memory traffic of g, u -> y. The environment
 * variable EMLX_FAST_NT_BYTES, read once, replaces it (tests set 0 to run
 * the streaming loops on small arrays). */
#define FAST_NT_BYTES ((size_t)64 << 20)

static size_t fast_nt_bytes(void) {
  static _Atomic long long cached = -1;
  long long v = atomic_load(&cached);
  if (v < 0) {
    const char *e = getenv("EMLX_FAST_NT_BYTES");
    v = e && *e ? atoll(e) : (long long)FAST_NT_BYTES;
    v = v < 0 ? (long long)FAST_NT_BYTES : v;
    atomic_store(&cached, v);
  }
  return (size_t)v;
}

static int64_t fast_min(int64_t a, int64_t b) { return a < b ? a : b; }

static const emlx_cpu_fast_table *fast_table(void) {
  const char *name = emlx_cpu_isa_get()->name;
  if (!strcmp(name, "avx512"))
    return &emlx_cpu_fast_avx512;
  if (!strcmp(name, "avx2"))
    return &emlx_cpu_fast_avx2;
  return &emlx_cpu_fast_scalar;
}

/* ---- rows of an input --------------------------------------------------------- */
/* The rows of the last axis of an array of any strides. */
typedef struct fast_rows {
  const char *base;
  emlx_dtype dt;
  size_t es;
  int nlead;            /* leading axes */
  const int64_t *shape; /* the array's */
  const int64_t *strides;
  int64_t n, s; /* row length and element stride */
  bool contig;  /* row r starts at r * n, stride 1 */
  bool direct;  /* contiguous float32 rows: read in place */
  emlx_cpu_unary_loop to_f32;
  void (*load_bf16)(const uint16_t *p, float *out, int64_t n); /* contiguous bf16 rows */
} fast_rows;

static void fast_rows_init(fast_rows *r, const emlx_array *a) {
  r->dt = a->dtype;
  r->es = emlx_dtype_size(a->dtype);
  r->base = a->size > 0 ? (const char *)emlx__data(a) : NULL;
  r->nlead = a->ndim - 1;
  r->shape = a->shape;
  r->strides = a->strides;
  r->n = a->ndim > 0 ? a->shape[a->ndim - 1] : 1;
  r->s = a->ndim > 0 ? a->strides[a->ndim - 1] : 1;
  r->contig = (a->flags & EMLX_FLAG_ROW_CONTIG) != 0 || a->size <= 1;
  if (r->contig)
    r->s = 1;
  r->direct = r->contig && a->dtype == EMLX_FLOAT32;
  r->to_f32 = emlx_cpu_isa_get()->cast->cast[a->dtype][EMLX_FLOAT32];
  r->load_bf16 = r->contig && a->dtype == EMLX_BFLOAT16 ? fast_table()->load_bf16 : NULL;
}

/* Element offset of row i's first element. */
static int64_t fast_row_off(const fast_rows *r, int64_t i) {
  if (r->contig)
    return i * r->n;
  int64_t off = 0;
  for (int d = r->nlead - 1; d >= 0; d--) {
    off += (i % r->shape[d]) * r->strides[d];
    i /= r->shape[d];
  }
  return off;
}

/* Elements [lo, lo + m) of row i in float32: a pointer into the input, or
 * tile (m floats) filled here. */
static const float *fast_row_load(const fast_rows *r, int64_t i, int64_t lo, int64_t m,
                                  float *tile) {
  const char *p = r->base + (fast_row_off(r, i) + lo * r->s) * (int64_t)r->es;
  if (r->direct)
    return (const float *)p;
  if (r->load_bf16)
    r->load_bf16((const uint16_t *)p, tile, m);
  else
    r->to_f32(p, r->s, tile, m);
  return tile;
}

/* The output's rows: row-major, written in float32 directly or converted. */
typedef struct fast_out {
  char *base;
  size_t es;
  bool direct;
  emlx_cpu_unary_loop from_f32;
  void (*store_bf16)(const float *in, uint16_t *out, int64_t n); /* bf16 output */
} fast_out;

static void fast_out_init(fast_out *o, emlx_array *a) {
  o->es = emlx_dtype_size(a->dtype);
  o->base = a->size > 0 ? (char *)emlx__data(a) : NULL;
  o->direct = a->dtype == EMLX_FLOAT32;
  o->from_f32 = emlx_cpu_isa_get()->cast->cast[EMLX_FLOAT32][a->dtype];
  o->store_bf16 = a->dtype == EMLX_BFLOAT16 ? fast_table()->store_bf16 : NULL;
}
/* Where to compute elements starting at flat position pos. */
static float *fast_out_ptr(const fast_out *o, int64_t pos, float *tile) {
  return o->direct ? (float *)(o->base + (size_t)pos * o->es) : tile;
}
static void fast_out_store(const fast_out *o, int64_t pos, const float *y, int64_t m) {
  if (o->store_bf16)
    o->store_bf16(y, (uint16_t *)(o->base + (size_t)pos * o->es), m);
  else if (!o->direct)
    o->from_f32(y, 1, o->base + (size_t)pos * o->es, m);
}

/* A rank-1 side input (weight, bias, freqs) as a fresh float32 vector. */
static float *fast_vec_f32(const emlx_array *a) {
  float *v = malloc((size_t)(a->size > 0 ? a->size : 1) * sizeof(float));
  if (v && a->size > 0)
    emlx_cpu_isa_get()->cast->cast[a->dtype][EMLX_FLOAT32](emlx__data(a), a->strides[0], v,
                                                           a->size);
  return v;
}

static int64_t fast_grain(int64_t per_row) {
  int64_t g = FAST_TASK_WORK / (per_row > 0 ? per_row : 1);
  return g > 0 ? g : 1;
}

/* ---- rms_norm, layer_norm ---------------------------------------------------------- */
typedef struct norm_job {
  const emlx_cpu_fast_table *t;
  fast_rows x;
  fast_out y;
  const float *w, *b;
  int op;
  float eps;
  bool bf16; /* contiguous bf16 rows in, bf16 out */
  atomic_int failed;
} norm_job;

static void norm_rows(void *ctx, int64_t r0, int64_t r1) {
  norm_job *j = ctx;
  int64_t n = j->x.n;
  float *scratch = emlx__scratch_get((size_t)(2 * n + 16) * sizeof(float));
  if (!scratch) {
    atomic_store(&j->failed, 1);
    return;
  }
  float *xt = scratch, *yt = scratch + n + 16;
  if (j->bf16) { /* contiguous bf16 in and out: converted in registers */
    const uint16_t *xb = (const uint16_t *)j->x.base;
    uint16_t *yb = (uint16_t *)j->y.base;
    for (int64_t r = r0; r < r1; r++) {
      const uint16_t *x = xb + r * n;
      float m = 0.0f, v;
      if (j->op == EMLX_FAST_RMS_NORM) {
        v = j->t->sumsq_bf16(x, n) / (float)n;
      } else {
        m = j->t->sum_bf16(x, n) / (float)n;
        v = j->t->sqdev_bf16(x, n, m) / (float)n;
      }
      j->t->norm_bf16(x, n, m, 1.0f / sqrtf(v + j->eps), j->w, j->b, yb + r * n);
    }
    r1 = r0; /* done */
  }
  for (int64_t r = r0; r < r1; r++) {
    const float *x = fast_row_load(&j->x, r, 0, n, xt);
    float m = 0.0f, v;
    if (j->op == EMLX_FAST_RMS_NORM) {
      v = j->t->sumsq(x, n) / (float)n;
    } else {
      m = j->t->sum(x, n) / (float)n;
      v = j->t->sqdev(x, n, m) / (float)n;
    }
    float rs = 1.0f / sqrtf(v + j->eps);
    float *y = fast_out_ptr(&j->y, r * n, yt);
    j->t->norm(x, n, m, rs, j->w, j->b, y);
    fast_out_store(&j->y, r * n, y, n);
  }
  emlx__scratch_put(scratch);
}

int emlx_cpu_fast_norm(const emlx_node *node, emlx_array *const *inputs,
                       emlx_array *const *outputs) {
  const emlx_fast_norm_params *p = emlx__params(node);
  emlx_array *out = outputs[0];
  if (!out)
    return 0;
  if (emlx__array_alloc_data_donate(out, inputs[0]) != 0)
    return -1;
  if (out->size == 0)
    return 0;
  norm_job j = {.t = fast_table(), .op = p->op, .eps = p->eps};
  fast_rows_init(&j.x, inputs[0]);
  fast_out_init(&j.y, out);
  j.bf16 = j.x.load_bf16 && j.y.store_bf16;
  int k = 1;
  float *w = p->has_weight ? fast_vec_f32(inputs[k++]) : NULL;
  float *b = p->has_bias ? fast_vec_f32(inputs[k++]) : NULL;
  if ((p->has_weight && !w) || (p->has_bias && !b)) {
    free(w);
    free(b);
    return EMLX_FAIL("fast_norm: out of memory");
  }
  j.w = w;
  j.b = b;
  emlx__parallel_for(out->size / j.x.n, fast_grain(j.x.n), norm_rows, &j);
  free(w);
  free(b);
  return atomic_load(&j.failed) ? EMLX_FAIL("fast_norm: out of memory") : 0;
}

/* ---- rope ------------------------------------------------------------------------- */
typedef struct rope_job {
  const emlx_cpu_fast_table *t;
  const emlx_fast_rope_params *p;
  fast_rows x;
  fast_out y;
  int64_t D, half;
  int64_t T, inner_t; /* rows per step of t (the axes after T, D excluded) */
  int64_t inner_b;    /* rows per step of b */
  bool per_batch;     /* the table has B * T rows */
  const int64_t *pos; /* offsets ({B} or one) or positions ({B, T}) as int64 */
  int64_t npos;       /* elements of pos */
  bool bf16;          /* contiguous bf16 rows in, bf16 out */
  const float *inv;   /* inverse frequencies, half */
  float *cs;          /* per table row: half cosines, then half sines */
  atomic_int failed;
} rope_job;

static void rope_table_rows(void *ctx, int64_t q0, int64_t q1) {
  rope_job *j = ctx;
  const emlx_fast_rope_params *p = j->p;
  for (int64_t q = q0; q < q1; q++) {
    int64_t b = q / j->T, t = q % j->T;
    float pos;
    if (p->mode == EMLX_ROPE_POSITIONS)
      pos = (float)j->pos[q] * p->scale;
    else if (p->mode == EMLX_ROPE_OFFSETS)
      pos = ((float)t + (float)j->pos[j->npos == 1 ? 0 : b]) * p->scale;
    else
      pos = ((float)t + (float)p->offset) * p->scale;
    float *c = j->cs + q * 2 * j->half;
    j->t->rope_angles(pos, j->inv, j->half, c, c + j->half);
  }
}

static void rope_rows(void *ctx, int64_t r0, int64_t r1) {
  rope_job *j = ctx;
  int64_t D = j->D, dims = 2 * j->half;
  float *scratch = emlx__scratch_get((size_t)(2 * D + 16) * sizeof(float));
  if (!scratch) {
    atomic_store(&j->failed, 1);
    return;
  }
  float *xt = scratch, *yt = scratch + D + 16;
  /* row r's position t = (r / inner_t) % T and batch b = r / inner_b,
   * stepped along with r (it, ib: r % inner_t, r % inner_b) */
  int64_t t = (r0 / j->inner_t) % j->T, b = r0 / j->inner_b;
  int64_t it = r0 % j->inner_t, ib = r0 % j->inner_b;
  for (int64_t r = r0; r < r1; r++, it++, ib++) {
    if (it == j->inner_t) {
      it = 0;
      t = t + 1 == j->T ? 0 : t + 1;
    }
    if (ib == j->inner_b) {
      ib = 0;
      b++;
    }
    const float *c = j->cs + (j->per_batch ? b * j->T + t : t) * 2 * j->half, *s = c + j->half;
    if (j->bf16) { /* contiguous bf16 in and out: converted in registers */
      const uint16_t *x = (const uint16_t *)j->x.base + r * D;
      uint16_t *y = (uint16_t *)j->y.base + r * D;
      if (j->p->traditional)
        j->t->rope_inter_bf16(x, j->half, c, s, y);
      else
        j->t->rope_half_bf16(x, j->half, c, s, y);
      for (int64_t d = dims; d < D; d++) /* through float32, as the staged path */
        y[d] = emlx_cv_f32_to_bf16(emlx_cv_bf16_to_f32(x[d]));
      continue;
    }
    const float *x = fast_row_load(&j->x, r, 0, D, xt);
    float *y = fast_out_ptr(&j->y, r * D, yt);
    if (j->p->traditional)
      j->t->rope_inter(x, j->half, c, s, y);
    else
      j->t->rope_half(x, j->half, c, s, y);
    if (dims < D && x != y)
      memcpy(y + dims, x + dims, (size_t)(D - dims) * sizeof(float));
    fast_out_store(&j->y, r * D, y, D);
  }
  emlx__scratch_put(scratch);
}

int emlx_cpu_fast_rope(const emlx_node *node, emlx_array *const *inputs,
                       emlx_array *const *outputs) {
  const emlx_fast_rope_params *p = emlx__params(node);
  emlx_array *out = outputs[0];
  const emlx_array *x = inputs[0];
  if (!out)
    return 0;
  if (emlx__array_alloc_data_donate(out, inputs[0]) != 0)
    return -1;
  if (out->size == 0)
    return 0;
  rope_job j = {.t = fast_table(), .p = p, .D = x->shape[x->ndim - 1], .half = p->dims / 2};
  fast_rows_init(&j.x, x);
  fast_out_init(&j.y, out);
  j.bf16 = j.x.load_bf16 && j.y.store_bf16;
  int sa = p->seq_axis;
  j.T = x->shape[sa];
  j.inner_t = 1;
  for (int d = sa + 1; d < x->ndim - 1; d++)
    j.inner_t *= x->shape[d];
  j.inner_b = 1;
  for (int d = 1; d < x->ndim - 1; d++)
    j.inner_b *= x->shape[d];
  j.per_batch = p->mode != EMLX_ROPE_SCALAR;
  int64_t B = x->shape[0], nq = j.per_batch ? B * j.T : j.T;
  int64_t *pos = NULL;
  float *inv = malloc((size_t)j.half * sizeof(float));
  float *cs = malloc((size_t)(nq * 2 * j.half) * sizeof(float));
  int rc = inv && cs ? 0 : EMLX_FAIL("fast_rope: out of memory");
  if (rc == 0 && p->mode != EMLX_ROPE_SCALAR) {
    const emlx_array *pa = inputs[1];
    j.npos = pa->size;
    pos = malloc((size_t)pa->size * sizeof(int64_t));
    if (!pos) {
      rc = EMLX_FAIL("fast_rope: out of memory");
    } else {
      /* row-major read of any strides (offsets are rank <= 1, positions rank 2) */
      size_t es = emlx_dtype_size(pa->dtype);
      const char *base = emlx__data(pa);
      int64_t cols = pa->ndim == 2 ? pa->shape[1] : 1;
      for (int64_t i = 0; i < pa->size; i++) {
        int64_t off = pa->ndim == 2   ? (i / cols) * pa->strides[0] + (i % cols) * pa->strides[1]
                      : pa->ndim == 1 ? i * pa->strides[0]
                                      : 0;
        pos[i] = emlx__load_i64(base + off * (int64_t)es, pa->dtype);
      }
    }
  }
  if (rc == 0) {
    if (p->has_freqs) {
      const emlx_array *f = inputs[p->mode != EMLX_ROPE_SCALAR ? 2 : 1];
      const float *fv = emlx__data(f);
      for (int64_t i = 0; i < j.half; i++)
        inv[i] = 1.0f / fv[i * f->strides[0]];
    } else {
      /* MLX: exp(-i * (log(base) / half)), in float32 */
      float k = logf(p->base) / (float)j.half;
      for (int64_t i = 0; i < j.half; i++)
        inv[i] = expf(-(float)i * k);
    }
    j.pos = pos;
    j.inv = inv;
    j.cs = cs;
    emlx__parallel_for(nq, fast_grain(8 * j.half), rope_table_rows, &j);
    emlx__parallel_for(out->size / j.D, fast_grain(j.D), rope_rows, &j);
    if (atomic_load(&j.failed))
      rc = EMLX_FAIL("fast_rope: out of memory");
  }
  free(pos);
  free(inv);
  free(cs);
  return rc;
}

/* ---- swiglu ---------------------------------------------------------------------- */
typedef struct swiglu_job {
  const emlx_cpu_fast_table *t;
  fast_rows g, u;
  fast_out y;
  int64_t nseg; /* pieces per row */
  bool bf16;    /* contiguous bfloat16 inputs */
  bool nt;      /* output far larger than the caches: streaming stores */
  atomic_int failed;
} swiglu_job;

static bool fast_aligned(const void *p) { return ((uintptr_t)p & 63) == 0; }

static void swiglu_pieces(void *ctx, int64_t k0, int64_t k1) {
  swiglu_job *j = ctx;
  int64_t n = j->g.n;
  float *scratch = emlx__scratch_get((size_t)(3 * FAST_SEG) * sizeof(float));
  if (!scratch) {
    atomic_store(&j->failed, 1);
    return;
  }
  for (int64_t k = k0; k < k1; k++) {
    int64_t r = k / j->nseg, lo = (k % j->nseg) * FAST_SEG, m = fast_min(FAST_SEG, n - lo);
    if (j->bf16) { /* contiguous bf16 in and out: converted in registers */
      const uint16_t *gb = (const uint16_t *)j->g.base + r * n + lo;
      const uint16_t *ub = (const uint16_t *)j->u.base + r * n + lo;
      uint16_t *yb = (uint16_t *)j->y.base + r * n + lo;
      (j->nt && fast_aligned(yb) ? j->t->swiglu_bf16_nt : j->t->swiglu_bf16)(gb, ub, m, yb);
      continue;
    }
    const float *g = fast_row_load(&j->g, r, lo, m, scratch);
    const float *u = fast_row_load(&j->u, r, lo, m, scratch + FAST_SEG);
    float *y = fast_out_ptr(&j->y, r * n + lo, scratch + 2 * FAST_SEG);
    if (j->y.store_bf16)
      j->t->swiglu_lp(g, u, m, y);
    else if (j->nt && j->y.direct && fast_aligned(y))
      j->t->swiglu_nt(g, u, m, y);
    else
      j->t->swiglu(g, u, m, y);
    fast_out_store(&j->y, r * n + lo, y, m);
  }
  emlx__scratch_put(scratch);
}

int emlx_cpu_fast_swiglu(const emlx_node *node, emlx_array *const *inputs,
                         emlx_array *const *outputs) {
  (void)node;
  emlx_array *out = outputs[0];
  if (!out)
    return 0;
  if (emlx__array_alloc_data_donate(out, inputs[0]) != 0)
    return -1;
  if (out->size == 0)
    return 0;
  swiglu_job j = {.t = fast_table()};
  fast_rows_init(&j.g, inputs[0]);
  fast_rows_init(&j.u, inputs[1]);
  if (j.g.contig && j.u.contig) { /* one long row */
    j.g.n = j.u.n = out->size;
    j.g.nlead = j.u.nlead = 0;
  }
  fast_out_init(&j.y, out);
  j.bf16 = j.g.load_bf16 && j.u.load_bf16; /* both contiguous bf16 (so is the output) */
  j.nseg = (j.g.n + FAST_SEG - 1) / FAST_SEG;
  j.nt = (size_t)out->size * j.y.es >= fast_nt_bytes();
  int64_t rows = out->size / j.g.n;
  emlx__parallel_for(rows * j.nseg, fast_grain(fast_min(FAST_SEG, j.g.n)), swiglu_pieces, &j);
  return atomic_load(&j.failed) ? EMLX_FAIL("fast_swiglu: out of memory") : 0;
}
