/* reduce.c — the sum and max kernels.
 *
 * The input's dims are split into kept and reduced ones; size-1 dims are
 * dropped and neighbours of the same kind that are contiguous are merged.
 * Then one of three shapes of work runs, all on the ISA table's loops:
 *
 *  - identity (nothing left to reduce): an astype into the output dtype;
 *  - row mode (the innermost dim is reduced and at least 16 long): each
 *    output folds runs along that dim (fold_row). Many outputs: parallel
 *    over outputs. Few outputs with long runs (the whole-array sum is one):
 *    the runs are cut into fixed 64K-element pieces folded in parallel into
 *    partials that are combined in order;
 *  - column mode (the innermost dim is kept, or the reduced one is shorter
 *    than 16): blocks of output columns along the innermost kept dim (32 KB
 *    of accumulators: 4096 columns, 2048 for complex sums) accumulate one
 *    input row per reduced position (fold_col, any stride). Parallel over
 *    (outer output index, column block); when there are few blocks and many
 *    rows, the rows are cut into slices with partial blocks combined in
 *    order.
 *
 * Any strides work (that is the generic path: the same loops with a stride).
 * Every split depends on the shape only, never on the thread count, so a
 * result is the same whatever the pool size. Accumulator types: isa.h.
 *
 * The input may also be virtual (emlx_cpu_reduce_source): a dense row-major
 * array whose values a fused elementwise region produces on demand. Each
 * fold then first has the region write exactly the elements it would have
 * read into scratch, so the folds, their order and the result are those of
 * the materialised input, without it ever reaching memory. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "cpu.h"

#define RED_CHUNK 65536    /* elements per piece of a split run */
#define RED_CB_BYTES 32768 /* accumulators per column block in column mode */
#define RED_BATCH 256      /* outputs finished together in row mode */

typedef enum { ACC_F64, ACC_C128, ACC_U64, ACC_I64, ACC_C64, ACC_BOOL } acc_kind;

typedef struct red_dim {
  int64_t size, stride;
} red_dim;

typedef struct red_plan {
  int op; /* EMLX_CPU_SUM / EMLX_CPU_MAX */
  emlx_dtype in_dt, out_dt;
  acc_kind kind;
  size_t in_es, out_es, acc_es;
  const char *in;
  const emlx_cpu_source *src; /* virtual input (in is NULL), or NULL */
  char *out;
  int nk, nr;
  int inner_reduced; /* the innermost remaining dim is reduced: row mode */
  red_dim kept[EMLX_MAX_NDIM], red[EMLX_MAX_NDIM];
  emlx_cpu_fold_row row;
  emlx_cpu_fold_col col;
  emlx_cpu_unary_loop f64_to_out; /* finishes ACC_F64 */
} red_plan;

/* ---- accumulators --------------------------------------------------------- */
static acc_kind acc_kind_of(int op, emlx_dtype dt) {
  if (emlx_dtype_is_float(dt))
    return ACC_F64;
  if (dt == EMLX_COMPLEX64)
    return op == EMLX_CPU_SUM ? ACC_C128 : ACC_C64;
  if (op == EMLX_CPU_SUM)
    return ACC_U64;
  if (dt == EMLX_BOOL)
    return ACC_BOOL;
  return emlx_dtype_is_signed(dt) ? ACC_I64 : ACC_U64;
}

static void acc_init(const red_plan *p, void *acc, int64_t count) {
  if (p->op == EMLX_CPU_SUM || p->kind == ACC_U64 || p->kind == ACC_BOOL) {
    memset(acc, 0, (size_t)count * p->acc_es);
    return;
  }
  for (int64_t i = 0; i < count; i++) {
    if (p->kind == ACC_F64) {
      ((double *)acc)[i] = -(double)INFINITY;
    } else if (p->kind == ACC_I64) {
      ((int64_t *)acc)[i] = INT64_MIN;
    } else {
      emlx_c64 lo = {-INFINITY, -INFINITY};
      ((emlx_c64 *)acc)[i] = lo;
    }
  }
}

/* dst = fold(dst, src) for one accumulator. */
static void acc_combine(const red_plan *p, void *dst, const void *src) {
  switch (p->kind) {
  case ACC_F64: {
    double s;
    memcpy(&s, src, sizeof s);
    if (p->op == EMLX_CPU_SUM)
      *(double *)dst += s;
    else
      emlx_cv_max_f64_into((double *)dst, s);
    break;
  }
  case ACC_C128:
    ((double *)dst)[0] += ((const double *)src)[0];
    ((double *)dst)[1] += ((const double *)src)[1];
    break;
  case ACC_U64:
  case ACC_BOOL: {
    uint64_t s = *(const uint64_t *)src, *d = (uint64_t *)dst;
    if (p->op == EMLX_CPU_SUM)
      *d += s;
    else if (s > *d)
      *d = s;
    break;
  }
  case ACC_I64: {
    int64_t s = *(const int64_t *)src;
    if (s > *(int64_t *)dst)
      *(int64_t *)dst = s;
    break;
  }
  case ACC_C64:
    emlx_cv_max_c64_into((emlx_c64 *)dst, *(const emlx_c64 *)src);
    break;
  }
}

/* count accumulators -> count output elements. */
static void acc_finish(const red_plan *p, const void *acc, char *out, int64_t count) {
  switch (p->kind) {
  case ACC_F64:
    p->f64_to_out(acc, 1, out, count);
    break;
  case ACC_C128:
    for (int64_t i = 0; i < count; i++) {
      emlx_c64 v = {(float)((const double *)acc)[2 * i], (float)((const double *)acc)[2 * i + 1]};
      memcpy(out + i * 8, &v, 8);
    }
    break;
  case ACC_U64:
  case ACC_I64: /* wrap: keep the low bytes (little-endian) */
    for (int64_t i = 0; i < count; i++)
      memcpy(out + i * (int64_t)p->out_es, (const char *)acc + i * 8, p->out_es);
    break;
  case ACC_BOOL:
    for (int64_t i = 0; i < count; i++)
      out[i] = (char)(((const uint64_t *)acc)[i] != 0);
    break;
  case ACC_C64:
    memcpy(out, acc, (size_t)count * 8);
    break;
  }
}

/* Start of part k when `total` items are cut into `parts` nearly equal
 * parts (no overflow however large total is). */
static int64_t split_point(int64_t total, int64_t parts, int64_t k) {
  int64_t q = total / parts, r = total % parts;
  return q * k + (k < r ? k : r);
}

/* Input offset of kept multi-index number o over dims kept[0..nk). */
static int64_t kept_offset(const red_plan *p, int nk, int64_t o) {
  int64_t off = 0;
  for (int k = nk - 1; k >= 0; k--) {
    off += (o % p->kept[k].size) * p->kept[k].stride;
    o /= p->kept[k].size;
  }
  return off;
}

/* Offset of reduced multi-index number r over dims red[0..nr), with its
 * digits in idx (for an odometer that continues from there). */
static int64_t red_offset(const red_plan *p, int nr, int64_t r, int64_t *idx) {
  int64_t off = 0;
  for (int k = nr - 1; k >= 0; k--) {
    idx[k] = r % p->red[k].size;
    off += idx[k] * p->red[k].stride;
    r /= p->red[k].size;
  }
  return off;
}

/* Advances the odometer over red[0..nr); returns the offset change. */
static int64_t red_next(const red_plan *p, int nr, int64_t *idx) {
  int64_t delta = 0;
  for (int k = nr - 1; k >= 0; k--) {
    delta += p->red[k].stride;
    if (++idx[k] < p->red[k].size)
      break;
    delta -= p->red[k].stride * p->red[k].size;
    idx[k] = 0;
  }
  return delta;
}

/* ---- reading the input ------------------------------------------------------ */
/* Scratch for a virtual input's elements: the stack for small runs, else
 * the allocator (whose cache makes a repeated size cheap). */
#define SRC_STACK_BYTES 16384

static void fold_row_at(const red_plan *p, int64_t off, int64_t s, int64_t len, void *acc) {
  if (!p->src) {
    p->row(p->in + off * (int64_t)p->in_es, s, len, acc);
    return;
  }
  _Alignas(64) unsigned char local[SRC_STACK_BYTES];
  size_t bytes = (size_t)len * p->in_es;
  emlx_buffer *b = bytes > sizeof local ? emlx__buffer_alloc(bytes, EMLX_CPU) : NULL;
  void *tmp = b ? b->ptr : (void *)local;
  if (bytes > sizeof local && !b) { /* no memory for scratch: fold in small pieces */
    int64_t piece = (int64_t)(sizeof local / p->in_es);
    for (int64_t i = 0; i < len; i += piece) {
      int64_t n = len - i < piece ? len - i : piece;
      p->src->produce(p->src->ctx, off + i, n, local);
      p->row(local, 1, n, acc);
    }
    return;
  }
  p->src->produce(p->src->ctx, off, len, tmp);
  p->row(tmp, 1, len, acc);
  emlx__buffer_release(b);
}

/* ---- row mode ------------------------------------------------------------- */
typedef struct row_job {
  const red_plan *p;
  int64_t n, s;    /* the innermost (reduced) run */
  int64_t nouter;  /* runs per output (product of the other reduced dims) */
  int64_t nchunks; /* pieces per run (split mode) */
  int64_t npieces; /* partials per output (split mode) */
  char *partials;
} row_job;

/* Folds items [i0, i1) of one output, item = (run r, chunk c), into acc. */
static void row_fold_items(const row_job *j, int64_t base, int64_t i0, int64_t i1, void *acc) {
  const red_plan *p = j->p;
  int64_t idx[EMLX_MAX_NDIM];
  int64_t r = i0 / j->nchunks, c = i0 % j->nchunks;
  int64_t off = base + red_offset(p, p->nr - 1, r, idx);
  for (int64_t i = i0; i < i1; i++) {
    int64_t start = c * RED_CHUNK, len = j->n - start < RED_CHUNK ? j->n - start : RED_CHUNK;
    if (j->nchunks == 1)
      len = j->n;
    fold_row_at(p, off + start * j->s, j->s, len, acc);
    if (++c == j->nchunks) {
      c = 0;
      off += red_next(p, p->nr - 1, idx);
    }
  }
}

static void row_outputs(void *ctx, int64_t begin, int64_t end) {
  const row_job *j = (const row_job *)ctx;
  const red_plan *p = j->p;
  _Alignas(16) unsigned char acc[RED_BATCH * 16];
  for (int64_t b0 = begin; b0 < end; b0 += RED_BATCH) {
    int64_t cnt = end - b0 < RED_BATCH ? end - b0 : RED_BATCH;
    acc_init(p, acc, cnt);
    for (int64_t i = 0; i < cnt; i++)
      row_fold_items(j, kept_offset(p, p->nk, b0 + i), 0, j->nouter, acc + i * (int64_t)p->acc_es);
    acc_finish(p, acc, p->out + b0 * (int64_t)p->out_es, cnt);
  }
}

static void row_pieces(void *ctx, int64_t begin, int64_t end) {
  const row_job *j = (const row_job *)ctx;
  const red_plan *p = j->p;
  int64_t items = j->nouter * j->nchunks;
  for (int64_t u = begin; u < end; u++) {
    int64_t o = u / j->npieces, k = u % j->npieces;
    void *acc = j->partials + u * (int64_t)p->acc_es;
    acc_init(p, acc, 1);
    row_fold_items(j, kept_offset(p, p->nk, o), split_point(items, j->npieces, k),
                   split_point(items, j->npieces, k + 1), acc);
  }
}

static int run_rows(const red_plan *p, int64_t nout) {
  row_job j = {p, p->red[p->nr - 1].size, p->red[p->nr - 1].stride, 1, 1, 1, NULL};
  for (int k = 0; k < p->nr - 1; k++)
    j.nouter *= p->red[k].size;
  int64_t per_out = j.n * j.nouter;
  if (nout >= 64 || per_out < 2 * RED_CHUNK) {
    int64_t grain = EMLX_CPU_GRAIN / (per_out > 0 ? per_out : 1);
    if (grain < 1)
      grain = 1;
    if (nout <= grain)
      row_outputs(&j, 0, nout);
    else
      emlx__parallel_for(nout, grain, row_outputs, &j);
    return 0;
  }
  /* Few outputs, long runs: pieces of fixed size, partials combined in order. */
  j.nchunks = (j.n + RED_CHUNK - 1) / RED_CHUNK;
  int64_t items = j.nouter * j.nchunks;
  j.npieces = items < 256 ? items : 256;
  emlx_buffer *scratch = emlx__buffer_alloc((size_t)(nout * j.npieces) * p->acc_es, EMLX_CPU);
  if (!scratch)
    return -1;
  j.partials = (char *)scratch->ptr;
  emlx__parallel_for(nout * j.npieces, 1, row_pieces, &j);
  for (int64_t o = 0; o < nout; o++) {
    char *first = j.partials + o * j.npieces * (int64_t)p->acc_es;
    for (int64_t k = 1; k < j.npieces; k++)
      acc_combine(p, first, first + k * (int64_t)p->acc_es);
    acc_finish(p, first, p->out + o * (int64_t)p->out_es, 1);
  }
  emlx__buffer_release(scratch);
  return 0;
}

/* ---- column mode ---------------------------------------------------------- */
typedef struct col_job {
  const red_plan *p;
  int64_t m, s;    /* the innermost (kept) dim */
  int64_t cb;      /* columns per block */
  int64_t nblocks; /* column blocks per outer output index */
  int64_t nred;    /* reduced positions (all reduced dims) */
  int64_t nslices;
  char *partials; /* nslices > 1: one block of accumulators per task */
} col_job;

static void col_fold(const col_job *j, int64_t unit, int64_t slice, void *acc, int64_t *cols) {
  const red_plan *p = j->p;
  int64_t o = unit / j->nblocks, blk = unit % j->nblocks;
  int64_t c0 = blk * j->cb, len = j->m - c0 < j->cb ? j->m - c0 : j->cb;
  int64_t r0 = split_point(j->nred, j->nslices, slice);
  int64_t r1 = split_point(j->nred, j->nslices, slice + 1);
  int64_t idx[EMLX_MAX_NDIM];
  int64_t base = kept_offset(p, p->nk - 1, o) + c0 * j->s;
  int64_t off = base + red_offset(p, p->nr, r0, idx);
  acc_init(p, acc, len);
  _Alignas(64) unsigned char local[RED_CB_BYTES];
  for (int64_t r = r0; r < r1; r++) {
    if (p->src) { /* virtual input: stride 1 here (see emlx_cpu_reduce_source) */
      p->src->produce(p->src->ctx, off, len, local);
      p->col(local, 1, len, acc);
    } else {
      p->col(p->in + off * (int64_t)p->in_es, j->s, len, acc);
    }
    off += red_next(p, p->nr, idx);
  }
  *cols = len;
}

static void col_tasks(void *ctx, int64_t begin, int64_t end) {
  const col_job *j = (const col_job *)ctx;
  const red_plan *p = j->p;
  double acc_d[RED_CB_BYTES / sizeof(double)];
  unsigned char *acc = (unsigned char *)acc_d;
  for (int64_t t = begin; t < end; t++) {
    int64_t unit = t / j->nslices, slice = t % j->nslices, len;
    if (j->nslices == 1) {
      col_fold(j, unit, 0, acc, &len);
      int64_t o = unit / j->nblocks, c0 = (unit % j->nblocks) * j->cb;
      acc_finish(p, acc, p->out + (o * j->m + c0) * (int64_t)p->out_es, len);
    } else {
      col_fold(j, unit, slice, j->partials + t * j->cb * (int64_t)p->acc_es, &len);
    }
  }
}

static int run_cols(const red_plan *p) {
  col_job j = {p, p->kept[p->nk - 1].size, p->kept[p->nk - 1].stride, 0, 0, 1, 1, NULL};
  j.cb = RED_CB_BYTES / (int64_t)p->acc_es;
  j.nblocks = (j.m + j.cb - 1) / j.cb;
  int64_t nouter = 1;
  for (int k = 0; k < p->nk - 1; k++)
    nouter *= p->kept[k].size;
  for (int k = 0; k < p->nr; k++)
    j.nred *= p->red[k].size;
  int64_t units = nouter * j.nblocks;
  if (units < 16 && j.nred >= 2048)
    j.nslices = j.nred / 512 < 16 ? j.nred / 512 : 16;
  int64_t ntasks = units * j.nslices;
  emlx_buffer *scratch = NULL; /* from the allocator: its cache makes reuse cheap */
  if (j.nslices > 1) {
    scratch = emlx__buffer_alloc((size_t)(ntasks * j.cb) * p->acc_es, EMLX_CPU);
    if (!scratch)
      return -1;
    j.partials = (char *)scratch->ptr;
  }
  int64_t work = (j.nred / j.nslices) * (j.m < j.cb ? j.m : j.cb);
  int64_t grain = EMLX_CPU_GRAIN / (work > 0 ? work : 1);
  if (grain < 1)
    grain = 1;
  if (ntasks <= grain)
    col_tasks(&j, 0, ntasks);
  else
    emlx__parallel_for(ntasks, grain, col_tasks, &j);
  if (j.nslices > 1) {
    for (int64_t u = 0; u < units; u++) {
      int64_t o = u / j.nblocks, c0 = (u % j.nblocks) * j.cb;
      int64_t len = j.m - c0 < j.cb ? j.m - c0 : j.cb;
      char *first = j.partials + u * j.nslices * j.cb * (int64_t)p->acc_es;
      for (int64_t sl = 1; sl < j.nslices; sl++) {
        const char *part = first + sl * j.cb * (int64_t)p->acc_es;
        for (int64_t c = 0; c < len; c++)
          acc_combine(p, first + c * (int64_t)p->acc_es, part + c * (int64_t)p->acc_es);
      }
      acc_finish(p, first, p->out + (o * j.m + c0) * (int64_t)p->out_es, len);
    }
    emlx__buffer_release(scratch);
  }
  return 0;
}

/* ---- the kernel ----------------------------------------------------------- */
/* Splits, drops and merges the input's dims into p->kept / p->red; returns
 * the number of output elements the kept dims describe. */
static int64_t plan_dims(red_plan *p, const emlx_array *in, const unsigned char *reduced) {
  int last = -1; /* kind of the last dim pushed: 0 kept, 1 reduced */
  int64_t nout = 1;
  p->nk = p->nr = 0;
  for (int i = 0; i < in->ndim; i++) {
    int64_t size = in->shape[i], stride = in->strides[i];
    if (!reduced[i])
      nout *= size;
    if (size == 1)
      continue;
    red_dim *list = reduced[i] ? p->red : p->kept;
    int *cnt = reduced[i] ? &p->nr : &p->nk;
    if (last == reduced[i] && list[*cnt - 1].stride == stride * size) {
      list[*cnt - 1].size *= size;
      list[*cnt - 1].stride = stride;
    } else {
      list[*cnt].size = size;
      list[*cnt].stride = stride;
      ++*cnt;
    }
    last = reduced[i];
  }
  p->inner_reduced = last == 1;
  return nout;
}

/* The kernel on a real input, or (src non-NULL) on a virtual dense one of
 * in's shape and dtype; returns 1 when a virtual input cannot be read the
 * way this reduction would need (nothing done). */
static int reduce_impl(const emlx_node *node, const emlx_array *in, const emlx_cpu_source *src,
                       emlx_array *out) {
  int op = node->prim == EMLX_PRIM_SUM ? EMLX_CPU_SUM : EMLX_CPU_MAX;
  if (node->prim != EMLX_PRIM_SUM && node->prim != EMLX_PRIM_MAX)
    return EMLX_FAIL("cpu: %s is not a reduction", emlx_prim_table[node->prim].name);
  const emlx_reduce_params *rp = (const emlx_reduce_params *)emlx__params(node);
  if (node->params_size < sizeof *rp ||
      node->params_size < sizeof *rp + (size_t)(rp->naxes > 0 ? rp->naxes : 0) * sizeof(int32_t))
    return EMLX_FAIL("cpu: reduce: malformed params");
  unsigned char reduced[EMLX_MAX_NDIM] = {0};
  for (int k = 0; k < rp->naxes; k++) {
    int ax = rp->axes[k];
    if (ax < 0 || ax >= in->ndim || reduced[ax])
      return EMLX_FAIL("cpu: reduce: bad axis %d for rank %d", ax, in->ndim);
    reduced[ax] = 1;
  }
  const emlx_cpu_isa *isa = emlx_cpu_isa_get();
  red_plan *p = malloc(sizeof *p);
  if (!p)
    return EMLX_FAIL("cpu: reduce: out of memory");
  p->op = op;
  p->in_dt = in->dtype;
  p->out_dt = out->dtype;
  p->kind = acc_kind_of(op, in->dtype);
  p->in_es = emlx_dtype_size(in->dtype);
  p->out_es = emlx_dtype_size(out->dtype);
  p->acc_es = p->kind == ACC_C128 ? 16 : 8;
  p->src = src;
  int64_t nout = plan_dims(p, in, reduced);
  int rc = 0;
  if (nout != out->size) {
    rc = EMLX_FAIL("cpu: reduce: output has %lld elements, expected %lld", (long long)out->size,
                   (long long)nout);
    goto done;
  }
  bool rows = p->inner_reduced && (p->nk == 0 || p->red[p->nr - 1].size >= 16);
  if (src && in->size > 0 &&
      (p->nr == 0 || (rows ? p->red[p->nr - 1].stride : p->kept[p->nk - 1].stride) != 1 ||
       (!rows && (int64_t)p->in_es * (RED_CB_BYTES / (int64_t)p->acc_es) > RED_CB_BYTES))) {
    rc = 1; /* the virtual input would be read strided: not this way */
    goto done;
  }
  p->row = isa->reduce->row[op][in->dtype];
  p->col = isa->reduce->col[op][in->dtype];
  p->f64_to_out = isa->cast->cast[EMLX_FLOAT64][out->dtype];
  p->in = src ? NULL : (const char *)emlx__data(in);
  if ((rc = emlx__array_alloc_data(out)) != 0)
    goto done;
  p->out = (char *)emlx__data(out);
  if (out->size == 0)
    goto done;

  if (p->nr == 0) { /* nothing to reduce (or only size-1 axes): astype */
    int64_t shape[EMLX_MAX_NDIM], st[EMLX_MAX_NDIM];
    for (int k = 0; k < p->nk; k++) {
      shape[k] = p->kept[k].size;
      st[k] = p->kept[k].stride;
    }
    const int64_t *sts[1] = {st};
    emlx_cpu_iter it;
    emlx_cpu_iter_init(&it, p->nk, shape, 1, sts);
    it.in[0] = p->in;
    it.in_esize[0] = p->in_es;
    it.out = p->out;
    it.out_esize = p->out_es;
    emlx_cpu_iter_run_unary(&it, isa->cast->cast[in->dtype][out->dtype], EMLX_CPU_GRAIN);
  } else if (in->size == 0) { /* an empty reduction */
    if (op == EMLX_CPU_MAX) {
      rc = EMLX_FAIL("cpu: max of an empty reduction");
      goto done;
    }
    memset(p->out, 0, (size_t)out->size * p->out_es);
  } else if (rows) {
    rc = run_rows(p, nout);
  } else {
    rc = run_cols(p);
  }
done:
  if (rc < 0 && out->buffer) {
    emlx__buffer_release(out->buffer);
    out->buffer = NULL;
  }
  free(p);
  return rc;
}

int emlx_cpu_reduce(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs) {
  if (!outputs[0])
    return 0;
  return reduce_impl(node, inputs[0], NULL, outputs[0]);
}

int emlx_cpu_reduce_source(const emlx_node *node, const emlx_array *like,
                           const emlx_cpu_source *src, emlx_array *out) {
  /* A stand-in for the virtual input: like's shape and dtype, dense
   * row-major strides. */
  emlx_array v = *like;
  int64_t st[EMLX_MAX_NDIM];
  emlx__row_major_strides(like->shape, like->ndim, st);
  v.strides = st;
  v.offset = 0;
  v.buffer = NULL;
  return reduce_impl(node, &v, src, out);
}
