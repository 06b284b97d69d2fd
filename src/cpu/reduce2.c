/* reduce2.c — the product, min, all and any kernels.
 *
 * The shape of the work is that of reduce.c (sum/max): the input's dims are
 * split into kept and reduced ones, size-1 dims dropped and neighbours of
 * the same kind that are contiguous merged; then
 *
 *  - row mode (the innermost remaining dim is reduced): each output folds
 *    runs along that dim. Many outputs: parallel over outputs. Few outputs
 *    with long runs: the runs are cut into fixed 64K-element pieces folded
 *    in parallel into partials combined in order;
 *  - column mode (the innermost dim is kept): blocks of output columns fold
 *    whole input rows. Parallel over (outer output index, column block);
 *    with few blocks and many rows, the rows are cut into slices whose
 *    partial blocks are combined in order;
 *  - nothing left to reduce: every output folds its single element.
 *
 * Every split depends on the shape only, never on the thread count, so a
 * result is the same whatever the pool size. Inner loops and accumulator
 * types: reduce2.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "kernels_reduce.h"
#include "reduce2.h"
#include "reduce2_dyn.h"

#define R2_CHUNK 65536 /* elements per piece of a split run */
#define R2_CB 4096     /* output columns per block in column mode (a 16 KB row of f32) */
#define R2_BATCH 256   /* outputs finished together in row mode */
/* Input elements per dynamically scheduled chunk: large enough that each
 * thread streams long contiguous runs (prefetchers), small enough that a
 * descheduled thread delays little on a busy machine. */
#define R2_CHUNK_WORK 131072

typedef struct r2_dim {
  int64_t size, stride;
} r2_dim;

typedef struct r2_plan {
  int op; /* EMLX_R2_* */
  emlx_dtype in_dt, out_dt;
  size_t in_es, out_es, acc_es;
  const char *in;
  char *out;
  int nk, nr;
  int inner_reduced;
  r2_dim kept[EMLX_MAX_NDIM], red[EMLX_MAX_NDIM];
  emlx_cpu_fold_row row;
  emlx_cpu_fold_col col;
} r2_plan;

/* ---- the ISA table -------------------------------------------------------- */
const emlx_cpu_reduce2_table *emlx_cpu_reduce2_get(void) {
  const char *name = emlx_cpu_isa_get()->name;
  if (!strcmp(name, "avx512"))
    return &emlx_cpu_reduce2_avx512;
  if (!strcmp(name, "avx2"))
    return &emlx_cpu_reduce2_avx2;
  return &emlx_cpu_reduce2_scalar;
}

/* ---- accumulators (see reduce2.h) ------------------------------------------ */
static size_t acc_size(int op, emlx_dtype dt) {
  if (op == EMLX_R2_ALL || op == EMLX_R2_ANY)
    return 1;
  if (dt == EMLX_FLOAT16 || dt == EMLX_BFLOAT16)
    return 4;
  return emlx_dtype_size(dt);
}

/* The identity of op in accumulator form (at most 8 bytes). */
static void acc_identity(int op, emlx_dtype dt, unsigned char *id) {
  memset(id, 0, 8);
  if (op == EMLX_R2_ALL || op == EMLX_R2_ANY) {
    id[0] = op == EMLX_R2_ALL;
    return;
  }
  union {
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    int8_t s8;
    int16_t s16;
    int32_t s32;
    int64_t s64;
    float f32;
    double f64;
    emlx_c64 c64;
  } v;
  memset(&v, 0, sizeof v);
  bool prod = op == EMLX_R2_PROD;
  switch (dt) {
  case EMLX_BOOL:
    v.u8 = 1;
    break;
  case EMLX_UINT8:
    v.u8 = prod ? 1 : UINT8_MAX;
    break;
  case EMLX_UINT16:
    v.u16 = prod ? 1 : UINT16_MAX;
    break;
  case EMLX_UINT32:
    v.u32 = prod ? 1 : UINT32_MAX;
    break;
  case EMLX_UINT64:
    v.u64 = prod ? 1 : UINT64_MAX;
    break;
  case EMLX_INT8:
    v.s8 = prod ? 1 : INT8_MAX;
    break;
  case EMLX_INT16:
    v.s16 = prod ? 1 : INT16_MAX;
    break;
  case EMLX_INT32:
    v.s32 = prod ? 1 : INT32_MAX;
    break;
  case EMLX_INT64:
    v.s64 = prod ? 1 : INT64_MAX;
    break;
  case EMLX_FLOAT16:
  case EMLX_BFLOAT16:
  case EMLX_FLOAT32:
    v.f32 = prod ? 1.0f : INFINITY;
    break;
  case EMLX_FLOAT64:
    v.f64 = prod ? 1.0 : (double)INFINITY;
    break;
  case EMLX_COMPLEX64:
    v.c64.re = prod ? 1.0f : INFINITY;
    v.c64.im = prod ? 0.0f : INFINITY;
    break;
  default:
    break;
  }
  memcpy(id, &v, 8);
}

static void acc_init(const r2_plan *p, void *acc, int64_t count) {
  unsigned char id[8];
  acc_identity(p->op, p->in_dt, id);
  for (int64_t i = 0; i < count; i++)
    memcpy((char *)acc + i * (int64_t)p->acc_es, id, p->acc_es);
}

/* dst = fold(dst, src) for one accumulator: the column loop over one
 * "column" with the partial as the row does exactly that. */
static void acc_combine(const r2_plan *p, void *dst, const void *src) {
  if (p->in_dt == EMLX_FLOAT16 || p->in_dt == EMLX_BFLOAT16) { /* f32 accumulators */
    float s, *d = (float *)dst;
    memcpy(&s, src, sizeof s);
    if (p->op == EMLX_R2_PROD)
      *d *= s;
    else
      emlx_r2_min_f32_into(d, s);
    return;
  }
  if (p->op == EMLX_R2_ALL) {
    *(uint8_t *)dst &= *(const uint8_t *)src;
    return;
  }
  if (p->op == EMLX_R2_ANY) {
    *(uint8_t *)dst |= *(const uint8_t *)src;
    return;
  }
  /* product and min accumulate in the input's own type: its column loop. */
  p->col(src, 1, 1, dst);
}

/* count accumulators -> count output elements. */
static void acc_finish(const r2_plan *p, const void *acc, char *out, int64_t count) {
  if (p->out_dt == EMLX_FLOAT16 || p->out_dt == EMLX_BFLOAT16) {
    const float *a = (const float *)acc;
    uint16_t *o = (uint16_t *)(void *)out;
    for (int64_t i = 0; i < count; i++)
      o[i] = p->out_dt == EMLX_FLOAT16 ? emlx_cv_f32_to_f16(a[i]) : emlx_cv_f32_to_bf16(a[i]);
    return;
  }
  memcpy(out, acc, (size_t)count * p->out_es); /* same type and size */
}

/* ---- index arithmetic --------------------------------------------------------- */
static int64_t kept_offset(const r2_plan *p, int nk, int64_t o) {
  int64_t off = 0;
  for (int k = nk - 1; k >= 0; k--) {
    off += (o % p->kept[k].size) * p->kept[k].stride;
    o /= p->kept[k].size;
  }
  return off;
}

static int64_t red_offset(const r2_plan *p, int nr, int64_t r, int64_t *idx) {
  int64_t off = 0;
  for (int k = nr - 1; k >= 0; k--) {
    idx[k] = r % p->red[k].size;
    off += idx[k] * p->red[k].stride;
    r /= p->red[k].size;
  }
  return off;
}

static int64_t red_next(const r2_plan *p, int nr, int64_t *idx) {
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

/* ---- row mode ----------------------------------------------------------------- */
typedef struct row_job {
  const r2_plan *p;
  int64_t n, s;    /* the innermost (reduced) run */
  int64_t nouter;  /* runs per output */
  int64_t nchunks; /* pieces per run (split mode) */
  int64_t npieces; /* partials per output (split mode) */
  char *partials;
} row_job;

/* Folds items [i0, i1) of one output (item = run r, chunk c) into acc. */
static void row_fold_items(const row_job *j, int64_t base, int64_t i0, int64_t i1, void *acc) {
  const r2_plan *p = j->p;
  int64_t idx[EMLX_MAX_NDIM];
  int64_t r = i0 / j->nchunks, c = i0 % j->nchunks;
  int64_t off = base + red_offset(p, p->nr - 1, r, idx);
  for (int64_t i = i0; i < i1; i++) {
    int64_t start = c * R2_CHUNK, len = j->n - start < R2_CHUNK ? j->n - start : R2_CHUNK;
    if (j->nchunks == 1)
      len = j->n;
    p->row(p->in + (off + start * j->s) * (int64_t)p->in_es, j->s, len, acc);
    if (++c == j->nchunks) {
      c = 0;
      off += red_next(p, p->nr - 1, idx);
    }
  }
}

static void row_outputs(void *ctx, int64_t begin, int64_t end) {
  const row_job *j = (const row_job *)ctx;
  const r2_plan *p = j->p;
  _Alignas(16) unsigned char acc[R2_BATCH * 8];
  for (int64_t b0 = begin; b0 < end; b0 += R2_BATCH) {
    int64_t cnt = end - b0 < R2_BATCH ? end - b0 : R2_BATCH;
    acc_init(p, acc, cnt);
    for (int64_t i = 0; i < cnt; i++)
      row_fold_items(j, kept_offset(p, p->nk, b0 + i), 0, j->nouter, acc + i * (int64_t)p->acc_es);
    acc_finish(p, acc, p->out + b0 * (int64_t)p->out_es, cnt);
  }
}

static void row_pieces(void *ctx, int64_t begin, int64_t end) {
  const row_job *j = (const row_job *)ctx;
  const r2_plan *p = j->p;
  int64_t items = j->nouter * j->nchunks;
  for (int64_t u = begin; u < end; u++) {
    int64_t o = u / j->npieces, k = u % j->npieces;
    void *acc = j->partials + u * (int64_t)p->acc_es;
    acc_init(p, acc, 1);
    row_fold_items(j, kept_offset(p, p->nk, o), items * k / j->npieces,
                   items * (k + 1) / j->npieces, acc);
  }
}

static int run_rows(const r2_plan *p, int64_t nout) {
  row_job j = {p, p->red[p->nr - 1].size, p->red[p->nr - 1].stride, 1, 1, 1, NULL};
  for (int k = 0; k < p->nr - 1; k++)
    j.nouter *= p->red[k].size;
  int64_t per_out = j.n * j.nouter;
  if (nout >= 64 || per_out < 2 * R2_CHUNK) {
    int64_t grain = R2_CHUNK_WORK / (per_out > 0 ? per_out : 1);
    if (grain < 1)
      grain = 1;
    emlx_cpu_dyn_for(nout, grain, row_outputs, &j);
    return 0;
  }
  j.nchunks = (j.n + R2_CHUNK - 1) / R2_CHUNK;
  int64_t items = j.nouter * j.nchunks;
  j.npieces = items < 256 ? items : 256;
  j.partials = malloc((size_t)(nout * j.npieces) * p->acc_es);
  if (!j.partials)
    return EMLX_FAIL("cpu: %s: out of memory for partial results", "reduce");
  emlx_cpu_dyn_for(nout * j.npieces, 1, row_pieces, &j);
  for (int64_t o = 0; o < nout; o++) {
    char *first = j.partials + o * j.npieces * (int64_t)p->acc_es;
    for (int64_t k = 1; k < j.npieces; k++)
      acc_combine(p, first, first + k * (int64_t)p->acc_es);
    acc_finish(p, first, p->out + o * (int64_t)p->out_es, 1);
  }
  free(j.partials);
  return 0;
}

/* ---- column mode -------------------------------------------------------------- */
typedef struct col_job {
  const r2_plan *p;
  int64_t m, s;    /* the innermost (kept) dim */
  int64_t nblocks; /* column blocks per outer output index */
  int64_t nred;    /* reduced positions */
  int64_t nslices;
  char *partials; /* nslices > 1: one block of accumulators per task */
} col_job;

static void col_fold(const col_job *j, int64_t unit, int64_t slice, void *acc, int64_t *cols) {
  const r2_plan *p = j->p;
  int64_t o = unit / j->nblocks, blk = unit % j->nblocks;
  int64_t c0 = blk * R2_CB, len = j->m - c0 < R2_CB ? j->m - c0 : R2_CB;
  int64_t r0 = j->nred * slice / j->nslices, r1 = j->nred * (slice + 1) / j->nslices;
  int64_t idx[EMLX_MAX_NDIM];
  int64_t off = kept_offset(p, p->nk - 1, o) + c0 * j->s + red_offset(p, p->nr, r0, idx);
  acc_init(p, acc, len);
  for (int64_t r = r0; r < r1; r++) {
    p->col(p->in + off * (int64_t)p->in_es, j->s, len, acc);
    off += red_next(p, p->nr, idx);
  }
  *cols = len;
}

static void col_tasks(void *ctx, int64_t begin, int64_t end) {
  const col_job *j = (const col_job *)ctx;
  const r2_plan *p = j->p;
  _Alignas(16) unsigned char acc[R2_CB * 8];
  for (int64_t t = begin; t < end; t++) {
    int64_t unit = t / j->nslices, slice = t % j->nslices, len;
    if (j->nslices == 1) {
      col_fold(j, unit, 0, acc, &len);
      int64_t o = unit / j->nblocks, c0 = (unit % j->nblocks) * R2_CB;
      acc_finish(p, acc, p->out + (o * j->m + c0) * (int64_t)p->out_es, len);
    } else {
      col_fold(j, unit, slice, j->partials + t * R2_CB * (int64_t)p->acc_es, &len);
    }
  }
}

static int run_cols(const r2_plan *p) {
  col_job j = {p, p->kept[p->nk - 1].size, p->kept[p->nk - 1].stride, 0, 1, 1, NULL};
  j.nblocks = (j.m + R2_CB - 1) / R2_CB;
  int64_t nouter = 1;
  for (int k = 0; k < p->nk - 1; k++)
    nouter *= p->kept[k].size;
  for (int k = 0; k < p->nr; k++)
    j.nred *= p->red[k].size;
  int64_t units = nouter * j.nblocks;
  if (units < 16 && j.nred >= 2048)
    j.nslices = j.nred / 512 < 16 ? j.nred / 512 : 16;
  int64_t ntasks = units * j.nslices;
  if (j.nslices > 1) {
    j.partials = malloc((size_t)(ntasks * R2_CB) * p->acc_es);
    if (!j.partials)
      return EMLX_FAIL("cpu: %s: out of memory for partial results", "reduce");
  }
  int64_t work = (j.nred / j.nslices) * (j.m < R2_CB ? j.m : R2_CB);
  int64_t grain = R2_CHUNK_WORK / (work > 0 ? work : 1);
  if (grain < 1)
    grain = 1;
  emlx_cpu_dyn_for(ntasks, grain, col_tasks, &j);
  if (j.nslices > 1) {
    for (int64_t u = 0; u < units; u++) {
      int64_t o = u / j.nblocks, c0 = (u % j.nblocks) * R2_CB;
      int64_t len = j.m - c0 < R2_CB ? j.m - c0 : R2_CB;
      char *first = j.partials + u * j.nslices * R2_CB * (int64_t)p->acc_es;
      for (int64_t sl = 1; sl < j.nslices; sl++) {
        const char *part = first + sl * R2_CB * (int64_t)p->acc_es;
        for (int64_t c = 0; c < len; c++)
          acc_combine(p, first + c * (int64_t)p->acc_es, part + c * (int64_t)p->acc_es);
      }
      acc_finish(p, first, p->out + (o * j.m + c0) * (int64_t)p->out_es, len);
    }
    free(j.partials);
  }
  return 0;
}

/* ---- the kernel ---------------------------------------------------------------- */
static int64_t plan_dims(r2_plan *p, const emlx_array *in, const unsigned char *reduced) {
  int last = -1; /* kind of the last dim pushed: 0 kept, 1 reduced */
  int64_t nout = 1;
  p->nk = p->nr = 0;
  for (int i = 0; i < in->ndim; i++) {
    int64_t size = in->shape[i], stride = in->strides[i];
    if (!reduced[i])
      nout *= size;
    if (size == 1)
      continue;
    r2_dim *list = reduced[i] ? p->red : p->kept;
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

static int r2_op_of(emlx_prim prim) {
  switch (prim) {
  case EMLX_PRIM_PRODUCT:
    return EMLX_R2_PROD;
  case EMLX_PRIM_MIN:
    return EMLX_R2_MIN;
  case EMLX_PRIM_ALL:
    return EMLX_R2_ALL;
  case EMLX_PRIM_ANY:
    return EMLX_R2_ANY;
  default:
    return -1;
  }
}

int emlx_cpu_reduce2(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs) {
  emlx_array *in = inputs[0], *out = outputs[0];
  const char *name = emlx_prim_table[node->prim].name;
  if (!out)
    return 0;
  int op = r2_op_of(node->prim);
  if (op < 0)
    return EMLX_FAIL("cpu: %s is not a product/min/all/any reduction", name);
  const emlx_reduce_params *rp = (const emlx_reduce_params *)emlx__params(node);
  if (node->params_size < sizeof *rp ||
      node->params_size < sizeof *rp + (size_t)(rp->naxes > 0 ? rp->naxes : 0) * sizeof(int32_t))
    return EMLX_FAIL("cpu: %s: malformed params", name);
  unsigned char reduced[EMLX_MAX_NDIM] = {0};
  for (int k = 0; k < rp->naxes; k++) {
    int ax = rp->axes[k];
    if (ax < 0 || ax >= in->ndim || reduced[ax])
      return EMLX_FAIL("cpu: %s: bad axis %d for rank %d", name, ax, in->ndim);
    reduced[ax] = 1;
  }
  bool logic = op == EMLX_R2_ALL || op == EMLX_R2_ANY;
  if (logic ? out->dtype != EMLX_BOOL : out->dtype != in->dtype)
    return EMLX_FAIL("cpu: %s: unexpected dtypes %s -> %s", name, emlx_dtype_name(in->dtype),
                     emlx_dtype_name(out->dtype));
  const emlx_cpu_reduce2_table *tab = emlx_cpu_reduce2_get();
  r2_plan *p = malloc(sizeof *p);
  if (!p)
    return EMLX_FAIL("cpu: %s: out of memory", name);
  p->op = op;
  p->in_dt = in->dtype;
  p->out_dt = out->dtype;
  p->in_es = emlx_dtype_size(in->dtype);
  p->out_es = emlx_dtype_size(out->dtype);
  p->acc_es = acc_size(op, in->dtype);
  p->row = tab->row[op][in->dtype];
  p->col = tab->col[op][in->dtype];
  int rc = 0;
  int64_t nout = plan_dims(p, in, reduced);
  if (!p->row || !p->col) {
    rc = EMLX_FAIL("cpu: %s: dtype %s is not supported", name, emlx_dtype_name(in->dtype));
    goto done;
  }
  if (nout != out->size) {
    rc = EMLX_FAIL("cpu: %s: output has %lld elements, expected %lld", name, (long long)out->size,
                   (long long)nout);
    goto done;
  }
  p->in = (const char *)emlx__data(in);
  if ((rc = emlx__array_alloc_data(out)) != 0)
    goto done;
  p->out = (char *)emlx__data(out);
  if (out->size == 0)
    goto done;
  if (in->size == 0) { /* an empty reduction: the identity (min never gets here) */
    if (op == EMLX_R2_MIN) {
      rc = EMLX_FAIL("cpu: min of an empty reduction");
      goto done;
    }
    char *acc = malloc((size_t)out->size * p->acc_es);
    if (!acc) {
      rc = EMLX_FAIL("cpu: %s: out of memory", name);
      goto done;
    }
    acc_init(p, acc, out->size);
    acc_finish(p, acc, p->out, out->size);
    free(acc);
  } else if (p->nr == 0) { /* nothing left to reduce: one element per output */
    p->red[0].size = 1;
    p->red[0].stride = 0;
    p->nr = 1;
    rc = run_rows(p, nout);
  } else if (p->inner_reduced) {
    rc = run_rows(p, nout);
  } else {
    rc = run_cols(p);
  }
done:
  free(p);
  return rc;
}
