/* reduce_driver.c — the folds of the reductions over axes (see
 * reduce_driver.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "reduce_driver.h"

#define RED_CHUNK 65536    /* elements per piece of a split run */
#define RED_CB_BYTES 32768 /* accumulators per column block in column mode */
#define RED_BATCH 256      /* outputs finished together in row mode */

int64_t emlx_cpu_red_dims(emlx_red_plan *p, const emlx_array *in, const unsigned char *reduced) {
  int last = -1; /* kind of the last dim pushed: 0 kept, 1 reduced */
  int64_t nout = 1;
  p->nk = p->nr = 0;
  for (int i = 0; i < in->ndim; i++) {
    int64_t size = in->shape[i], stride = in->strides[i];
    if (!reduced[i])
      nout *= size;
    if (size == 1)
      continue;
    emlx_red_dim *list = reduced[i] ? p->red : p->kept;
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

/* Start of part k when `total` items are cut into `parts` nearly equal
 * parts (no overflow however large total is). */
static int64_t split_point(int64_t total, int64_t parts, int64_t k) {
  int64_t q = total / parts, r = total % parts;
  return q * k + (k < r ? k : r);
}

/* Input offset of kept multi-index number o over dims kept[0..nk). */
static int64_t kept_offset(const emlx_red_plan *p, int nk, int64_t o) {
  int64_t off = 0;
  for (int k = nk - 1; k >= 0; k--) {
    off += (o % p->kept[k].size) * p->kept[k].stride;
    o /= p->kept[k].size;
  }
  return off;
}

/* Offset of reduced multi-index number r over dims red[0..nr), with its
 * digits in idx (for an odometer that continues from there). */
static int64_t red_offset(const emlx_red_plan *p, int nr, int64_t r, int64_t *idx) {
  int64_t off = 0;
  for (int k = nr - 1; k >= 0; k--) {
    idx[k] = r % p->red[k].size;
    off += idx[k] * p->red[k].stride;
    r /= p->red[k].size;
  }
  return off;
}

/* Advances the odometer over red[0..nr); returns the offset change. */
static int64_t red_next(const emlx_red_plan *p, int nr, int64_t *idx) {
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
/* Scratch for a virtual input's elements: the thread's scratch for runs up
 * to SRC_SCRATCH_BYTES, the allocator (whose cache makes a repeated size
 * cheap) beyond; never the stack, which may be small. */
#define SRC_SCRATCH_BYTES ((size_t)1 << 20)
#define SRC_PIECE_BYTES 2048 /* the no-memory fallback's pieces, on the stack */
#define SRC_L1_BYTES 16384   /* an order-free fold's pieces: produced, folded, still in L1 */

static void fold_row_at(const emlx_red_plan *p, int64_t off, int64_t s, int64_t len, void *acc) {
  if (!p->src) {
    p->row(p->in + off * (int64_t)p->in_es, s, len, acc);
    return;
  }
  size_t bytes = (size_t)len * p->in_es;
  if (p->order_free && bytes > SRC_L1_BYTES) {
    /* A long run through one buffer would write it to L2 and read it back;
     * pieces that stay in L1 give the same result here. */
    void *tmp = emlx__scratch_get(SRC_L1_BYTES);
    if (tmp) {
      int64_t piece = (int64_t)(SRC_L1_BYTES / p->in_es);
      for (int64_t i = 0; i < len; i += piece) {
        int64_t n = len - i < piece ? len - i : piece;
        p->src->produce(p->src->ctx, off + i, n, tmp);
        p->row(tmp, 1, n, acc);
      }
      emlx__scratch_put(tmp);
      return;
    }
  }
  emlx_buffer *b = bytes > SRC_SCRATCH_BYTES ? emlx__buffer_alloc(bytes, EMLX_CPU) : NULL;
  void *tmp = b ? b->ptr : bytes <= SRC_SCRATCH_BYTES ? emlx__scratch_get(bytes) : NULL;
  if (!tmp) {
    /* No memory for scratch (the memory limit): fold in pieces that fit the
     * stack instead of failing mid-run. The folds are then shorter, so a
     * float result may differ from the unfused one in its last bits. */
    emlx_clear_error();
    _Alignas(64) unsigned char local[SRC_PIECE_BYTES];
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
  if (b)
    emlx__buffer_release(b);
  else
    emlx__scratch_put(tmp);
}

/* ---- row mode ------------------------------------------------------------- */
typedef struct row_job {
  const emlx_red_plan *p;
  int64_t n, s;    /* the innermost (reduced) run */
  int64_t nouter;  /* runs per output (product of the other reduced dims) */
  int64_t nchunks; /* pieces per run (split mode) */
  int64_t npieces; /* partials per output (split mode) */
  char *partials;
} row_job;

/* Folds items [i0, i1) of one output, item = (run r, chunk c), into acc. */
static void row_fold_items(const row_job *j, int64_t base, int64_t i0, int64_t i1, void *acc) {
  const emlx_red_plan *p = j->p;
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
  const emlx_red_plan *p = j->p;
  _Alignas(16) unsigned char acc[RED_BATCH * EMLX_RED_ACC_MAX];
  for (int64_t b0 = begin; b0 < end; b0 += RED_BATCH) {
    int64_t cnt = end - b0 < RED_BATCH ? end - b0 : RED_BATCH;
    p->init(p, acc, cnt);
    for (int64_t i = 0; i < cnt; i++)
      row_fold_items(j, kept_offset(p, p->nk, b0 + i), 0, j->nouter, acc + i * (int64_t)p->acc_es);
    p->finish(p, acc, p->out + b0 * (int64_t)p->out_es, cnt);
  }
}

static void row_pieces(void *ctx, int64_t begin, int64_t end) {
  const row_job *j = (const row_job *)ctx;
  const emlx_red_plan *p = j->p;
  int64_t items = j->nouter * j->nchunks;
  for (int64_t u = begin; u < end; u++) {
    int64_t o = u / j->npieces, k = u % j->npieces;
    void *acc = j->partials + u * (int64_t)p->acc_es;
    p->init(p, acc, 1);
    row_fold_items(j, kept_offset(p, p->nk, o), split_point(items, j->npieces, k),
                   split_point(items, j->npieces, k + 1), acc);
  }
}

static int run_rows(const emlx_red_plan *p, int64_t nout) {
  row_job j = {p, p->red[p->nr - 1].size, p->red[p->nr - 1].stride, 1, 1, 1, NULL};
  for (int k = 0; k < p->nr - 1; k++)
    j.nouter *= p->red[k].size;
  int64_t per_out = j.n * j.nouter;
  if (nout >= 64 || per_out < 2 * RED_CHUNK) {
    int64_t grain = p->task_work / (per_out > 0 ? per_out : 1);
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
      p->combine(p, first, first + k * (int64_t)p->acc_es);
    p->finish(p, first, p->out + o * (int64_t)p->out_es, 1);
  }
  emlx__buffer_release(scratch);
  return 0;
}

/* ---- column mode ---------------------------------------------------------- */
typedef struct col_job {
  const emlx_red_plan *p;
  int64_t m, s;    /* the innermost (kept) dim */
  int64_t cb;      /* columns per block */
  int64_t nblocks; /* column blocks per outer output index */
  int64_t nred;    /* reduced positions (all reduced dims) */
  int64_t nslices;
  char *partials;     /* nslices > 1: a block of accumulators per (column block, slice) */
  atomic_int *failed; /* set when a thread found no scratch */
} col_job;

/* local: RED_CB_BYTES of scratch for a virtual input's rows. */
static void col_fold(const col_job *j, int64_t unit, int64_t slice, void *acc, int64_t *cols,
                     unsigned char *local) {
  const emlx_red_plan *p = j->p;
  int64_t o = unit / j->nblocks, blk = unit % j->nblocks;
  int64_t c0 = blk * j->cb, len = j->m - c0 < j->cb ? j->m - c0 : j->cb;
  int64_t r0 = split_point(j->nred, j->nslices, slice);
  int64_t r1 = split_point(j->nred, j->nslices, slice + 1);
  int64_t idx[EMLX_MAX_NDIM];
  int64_t base = kept_offset(p, p->nk - 1, o) + c0 * j->s;
  int64_t off = base + red_offset(p, p->nr, r0, idx);
  p->init(p, acc, len);
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

/* nslices > 1: one slice of rows of outer index o into the partials of all
 * its column blocks, row by row, so that each row is read once from start
 * to end (the input streams in memory order; the partials, fewer than 16
 * blocks, stay in L2). Each accumulator folds the same rows in the same
 * order as col_fold would. */
static void col_slice(const col_job *j, int64_t o, int64_t slice, unsigned char *local) {
  const emlx_red_plan *p = j->p;
  int64_t es = (int64_t)p->acc_es;
  /* block 0's partials, and the step to the next block's */
  char *part = j->partials + o * j->nblocks * j->nslices * j->cb * es;
  int64_t bstep = j->nslices * j->cb * es;
  part += slice * j->cb * es;
  int64_t r0 = split_point(j->nred, j->nslices, slice);
  int64_t r1 = split_point(j->nred, j->nslices, slice + 1);
  for (int64_t b = 0; b < j->nblocks; b++)
    p->init(p, part + b * bstep, j->m - b * j->cb < j->cb ? j->m - b * j->cb : j->cb);
  int64_t idx[EMLX_MAX_NDIM];
  int64_t off = kept_offset(p, p->nk - 1, o) + red_offset(p, p->nr, r0, idx);
  for (int64_t r = r0; r < r1; r++) {
    for (int64_t b = 0; b < j->nblocks; b++) {
      int64_t c0 = b * j->cb, len = j->m - c0 < j->cb ? j->m - c0 : j->cb;
      if (p->src) { /* virtual input: stride 1 here (see emlx_cpu_reduce_source) */
        p->src->produce(p->src->ctx, off + c0, len, local);
        p->col(local, 1, len, part + b * bstep);
      } else {
        p->col(p->in + (off + c0 * j->s) * (int64_t)p->in_es, j->s, len, part + b * bstep);
      }
    }
    off += red_next(p, p->nr, idx);
  }
}

static void col_tasks(void *ctx, int64_t begin, int64_t end) {
  const col_job *j = (const col_job *)ctx;
  const emlx_red_plan *p = j->p;
  /* a block of accumulators and a block of a virtual input's row */
  unsigned char *acc = emlx__scratch_get(2 * RED_CB_BYTES), *local = acc + RED_CB_BYTES;
  if (!acc) {
    atomic_store_explicit(j->failed, 1, memory_order_relaxed);
    return;
  }
  for (int64_t t = begin; t < end; t++) {
    if (j->nslices == 1) {
      int64_t len;
      col_fold(j, t, 0, acc, &len, local);
      int64_t o = t / j->nblocks, c0 = (t % j->nblocks) * j->cb;
      p->finish(p, acc, p->out + (o * j->m + c0) * (int64_t)p->out_es, len);
    } else { /* task t: (outer index, slice of rows) */
      col_slice(j, t / j->nslices, t % j->nslices, local);
    }
  }
  emlx__scratch_put(acc);
}

static int run_cols(const emlx_red_plan *p) {
  atomic_int failed;
  atomic_init(&failed, 0);
  col_job j = {p, p->kept[p->nk - 1].size, p->kept[p->nk - 1].stride, 0, 0, 1, 1, NULL, &failed};
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
  /* tasks: column blocks, or (nslices > 1) slices of rows over every block */
  int64_t ntasks = j.nslices > 1 ? nouter * j.nslices : units;
  emlx_buffer *scratch = NULL; /* from the allocator: its cache makes reuse cheap */
  if (j.nslices > 1) {
    /* a block of partials per (column block, slice) */
    scratch = emlx__buffer_alloc((size_t)(units * j.nslices * j.cb) * p->acc_es, EMLX_CPU);
    if (!scratch)
      return -1;
    j.partials = (char *)scratch->ptr;
  }
  int64_t work = (j.nred / j.nslices) * (j.nslices > 1 ? j.m : j.m < j.cb ? j.m : j.cb);
  int64_t grain = p->task_work / (work > 0 ? work : 1);
  if (grain < 1)
    grain = 1;
  if (ntasks <= grain)
    col_tasks(&j, 0, ntasks);
  else
    emlx__parallel_for(ntasks, grain, col_tasks, &j);
  if (atomic_load(&failed)) {
    emlx__buffer_release(scratch);
    return EMLX_FAIL("reduce: out of memory for a thread's accumulators");
  }
  if (j.nslices > 1) {
    for (int64_t u = 0; u < units; u++) {
      int64_t o = u / j.nblocks, c0 = (u % j.nblocks) * j.cb;
      int64_t len = j.m - c0 < j.cb ? j.m - c0 : j.cb;
      char *first = j.partials + u * j.nslices * j.cb * (int64_t)p->acc_es;
      for (int64_t sl = 1; sl < j.nslices; sl++) {
        const char *part = first + sl * j.cb * (int64_t)p->acc_es;
        for (int64_t c = 0; c < len; c++)
          p->combine(p, first + c * (int64_t)p->acc_es, part + c * (int64_t)p->acc_es);
      }
      p->finish(p, first, p->out + (o * j.m + c0) * (int64_t)p->out_es, len);
    }
    emlx__buffer_release(scratch);
  }
  return 0;
}

/* ---- entry points ------------------------------------------------------------- */

static bool row_mode(const emlx_red_plan *p) {
  return p->inner_reduced && (p->nk == 0 || p->red[p->nr - 1].size >= 16);
}

bool emlx_cpu_red_source_ok(const emlx_red_plan *p) {
  if (p->nr == 0)
    return false;
  if (row_mode(p))
    return p->red[p->nr - 1].stride == 1;
  int64_t cb = RED_CB_BYTES / (int64_t)p->acc_es;
  return p->kept[p->nk - 1].stride == 1 && cb * (int64_t)p->in_es <= RED_CB_BYTES;
}

int emlx_cpu_red_run(const emlx_red_plan *p, int64_t nout) {
  return row_mode(p) ? run_rows(p, nout) : run_cols(p);
}

void emlx_cpu_red_stand_in(emlx_array *v, int64_t *st, const emlx_array *like) {
  *v = *like;
  emlx__row_major_strides(like->shape, like->ndim, st);
  v->strides = st;
  v->offset = 0;
  v->buffer = NULL;
}
