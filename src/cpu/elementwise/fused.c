/* fused.c — the CPU backend's tile interpreter for fused elementwise regions.
 *
 * Compiling a region description (src/core/fuse.h) resolves each op to the
 * inner loop its own kernel would run (emlx_cpu_ew_resolve: the same loop,
 * the same dtypes, so fused values are bit-identical to unfused ones) and
 * gives every intermediate value a scratch tile, reusing a tile once its
 * value is dead. Values that leave the region are written straight into
 * their output arrays.
 *
 * Running walks the region's shape like the elementwise drivers do (dims
 * merged where every input is contiguous, the flat range split over the
 * pool) and cuts each run of the innermost dim into tiles of TILE elements.
 * Per tile, each op's loop reads its arguments (an input at its own strides,
 * broadcast included, or a tile) and writes its result tile: a whole chain
 * touches memory once per input and once per output, and the tiles stay in
 * L1. Outputs are written in place, or, when they total STREAM_MIN_BYTES or
 * more, finished in their tiles and copied out with non-temporal stores
 * (no read for ownership of lines that will not stay in cache anyway). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "fuse.h"
#include "indexing/indexing_util.h"
#include "kernels_fused.h"

#define TILE 1024                 /* elements per tile, at most */
#define SCRATCH_BYTES (64 * 1024) /* the tiles of one thread, from its scratch (not the stack) */
/* Outputs of at least this many bytes in all are written with non-temporal
 * stores (well past the L2 of both cores). */
#define STREAM_MIN_BYTES (16 << 20)

bool emlx_cpu_fuse_supports(emlx_prim prim, const void *params, size_t params_size,
                            const emlx_dtype *in, int nin, emlx_dtype out) {
  if ((unsigned)prim >= EMLX_PRIM_COUNT)
    return false;
  emlx_prim_class k = emlx_prim_table[prim].klass;
  if (k != EMLX_CLASS_UNARY && k != EMLX_CLASS_BINARY && k != EMLX_CLASS_TERNARY)
    return false;
  emlx_cpu_ew_loop loop;
  if (emlx_cpu_ew_resolve(prim, params, params_size, in, nin, out, &loop) != 0) {
    emlx_clear_error();
    return false;
  }
  return true;
}

/* ---- plans ------------------------------------------------------------------------ */

typedef struct fused_op {
  emlx_cpu_ew_loop loop;
  int nargs;
  int32_t args[3]; /* value ids, in the loop's order (a swap already applied) */
  int out;         /* output index when the result leaves the region, else -1 */
  int slot;        /* scratch tile of the result (outputs: used when streaming) */
  int esize;       /* bytes per result element */
} fused_op;

typedef struct fused_plan {
  int ninputs, nops, noutputs, nslots;
  int ninner;            /* tiles of the values that stay inside (outputs' tiles come after) */
  bool lone_cast;        /* the region is astype(input 0): a reduction may fold input 0 itself */
  int64_t tile[2];       /* elements per tile, [streaming]: the tiles in use fit SCRATCH_BYTES */
  int64_t slot_bytes[2]; /* tile * 16 (complex64) */
  int64_t grain;
  int in_esize[EMLX_FUSE_MAX_INPUTS];
  int in_last_read[EMLX_FUSE_MAX_INPUTS]; /* last op reading the input, -1 none */
  int out_op[EMLX_FUSE_MAX_OUTPUTS];      /* the op each output comes from */
  unsigned char *params;                  /* the description's params (ctx points here) */
  fused_op ops[EMLX_FUSE_MAX_OPS];
} fused_plan;

void emlx_cpu_fuse_free(void *plan) {
  fused_plan *p = (fused_plan *)plan;
  if (p)
    free(p->params);
  free(p);
}

void *emlx_cpu_fuse_compile(const emlx_fuse_desc *d) {
  int nin = d->ninputs, nops = d->nops;
  if (nin < 0 || nin > EMLX_FUSE_MAX_INPUTS || nops < 1 || nops > EMLX_FUSE_MAX_OPS ||
      d->noutputs < 1 || d->noutputs > EMLX_FUSE_MAX_OUTPUTS)
    return EMLX_FAIL_NULL("fusion: region description out of bounds");
  fused_plan *p = calloc(1, sizeof *p);
  if (!p)
    return EMLX_FAIL_NULL("fusion: out of memory");
  p->params = malloc(d->params_len ? d->params_len : 1);
  if (!p->params) {
    free(p);
    return EMLX_FAIL_NULL("fusion: out of memory");
  }
  memcpy(p->params, d->params, d->params_len);
  p->ninputs = nin;
  p->nops = nops;
  p->noutputs = d->noutputs;
  p->grain = EMLX_CPU_GRAIN;
  emlx_dtype value_dtype[EMLX_FUSE_MAX_INPUTS + EMLX_FUSE_MAX_OPS];
  int last_use[EMLX_FUSE_MAX_INPUTS + EMLX_FUSE_MAX_OPS];
  for (int k = 0; k < nin; k++) {
    value_dtype[k] = (emlx_dtype)d->in_dtype[k];
    p->in_esize[k] = (int)emlx_dtype_size(value_dtype[k]);
    if (p->in_esize[k] == 0)
      goto bad;
  }
  for (int v = 0; v < nin + nops; v++)
    last_use[v] = -1;
  for (int k = 0; k < nops; k++) {
    const emlx_fuse_op *op = &d->ops[k];
    fused_op *f = &p->ops[k];
    if (op->nargs < 1 || op->nargs > 3 || op->params_offset + op->params_size > d->params_len)
      goto bad;
    emlx_dtype in[3];
    for (int a = 0; a < op->nargs; a++) {
      if (op->args[a] < 0 || op->args[a] >= nin + k)
        goto bad; /* only earlier values */
      in[a] = value_dtype[op->args[a]];
      last_use[op->args[a]] = k;
    }
    const void *params = op->params_size ? p->params + op->params_offset : NULL;
    if (emlx_cpu_ew_resolve((emlx_prim)op->prim, params, op->params_size, in, op->nargs,
                            (emlx_dtype)op->dtype, &f->loop) != 0) {
      emlx_cpu_fuse_free(p);
      return NULL;
    }
    f->nargs = op->nargs;
    for (int a = 0; a < op->nargs; a++)
      f->args[a] = op->args[a];
    if (f->loop.bin && f->loop.swap) {
      f->args[0] = op->args[1];
      f->args[1] = op->args[0];
    }
    f->out = -1;
    f->esize = (int)emlx_dtype_size((emlx_dtype)op->dtype);
    value_dtype[nin + k] = (emlx_dtype)op->dtype;
    if (f->loop.grain < p->grain)
      p->grain = f->loop.grain;
  }
  for (int j = 0; j < d->noutputs; j++) {
    int k = d->out_value[j] - nin;
    if (k < 0 || k >= nops || p->ops[k].out >= 0)
      goto bad;
    p->ops[k].out = j;
    p->out_op[j] = k;
  }
  for (int k = 0; k < nin; k++)
    p->in_last_read[k] = last_use[k];
  p->lone_cast = nin == 1 && nops == 1 && d->ops[0].prim == EMLX_PRIM_ASTYPE;
  /* Scratch tiles: a result takes a free tile; a tile frees after the last
   * read of its value (after the result is placed, so no op writes over
   * its own arguments). An output has a tile of its own for the whole
   * tile run: large outputs are written there and streamed out. */
  int free_slots[EMLX_FUSE_MAX_OPS], nfree = 0;
  int slot_of[EMLX_FUSE_MAX_OPS];
  for (int k = 0; k < nops; k++) {
    fused_op *f = &p->ops[k];
    slot_of[k] = -1;
    if (f->out < 0) {
      f->slot = nfree > 0 ? free_slots[--nfree] : p->nslots++;
      slot_of[k] = f->slot;
      if (last_use[nin + k] < 0) /* dead value: its tile is free again at once */
        free_slots[nfree++] = f->slot;
    }
    for (int a = 0; a < f->nargs; a++) {
      int v = f->args[a] - nin;
      int dup = 0;
      for (int b = 0; b < a; b++)
        dup |= f->args[b] == f->args[a];
      if (v >= 0 && !dup && last_use[nin + v] == k && slot_of[v] >= 0)
        free_slots[nfree++] = slot_of[v];
    }
  }
  p->ninner = p->nslots;
  for (int j = 0; j < p->noutputs; j++) /* kept to the end of the tile: streamed out then */
    p->ops[p->out_op[j]].slot = p->nslots++;
  for (int m = 0; m < 2; m++) { /* nslots <= 2 * EMLX_FUSE_MAX_OPS: a tile >= 32 */
    int used = m ? p->nslots : p->ninner;
    int64_t t = used ? SCRATCH_BYTES / (16 * used) : TILE;
    p->tile[m] = t > TILE ? TILE : t & ~(int64_t)15;
    p->slot_bytes[m] = p->tile[m] * 16;
  }
  /* A region of cheap ops splits in big chunks; transcendental ones smaller. */
  int64_t g = p->grain * 4 / (nops < 4 ? 4 : nops);
  p->grain = g < 2 * TILE ? 2 * TILE : g;
  return p;
bad:
  emlx_cpu_fuse_free(p);
  return EMLX_FAIL_NULL("fusion: malformed region description");
}

/* ---- running --------------------------------------------------------------------- */

typedef struct fused_job {
  const fused_plan *p;
  int ndim;
  int64_t shape[EMLX_MAX_NDIM];
  const char *src[EMLX_FUSE_MAX_INPUTS];
  char *dst[EMLX_FUSE_MAX_OUTPUTS]; /* where flat position `origin` of each output goes */
  int64_t origin;
  bool stream;                      /* outputs go through their tiles, then non-temporal stores */
  int64_t (*stride)[EMLX_MAX_NDIM]; /* [input][dim] */
  atomic_int *failed;               /* set when a thread found no scratch for its tiles */
} fused_job;

/* Runs every op over one tile of n elements; in[k] points at input k's
 * first element of the tile, out_pos is the tile's flat position. */
static void run_tile(const fused_plan *p, const fused_job *job, const char *const *in,
                     const int64_t *s, int64_t out_pos, int64_t n, char *scratch) {
  int nin = p->ninputs;
  for (int k = 0; k < p->nops; k++) {
    const fused_op *f = &p->ops[k];
    const void *arg[3];
    int64_t st[3];
    for (int a = 0; a < f->nargs; a++) {
      int v = f->args[a];
      if (v < nin) {
        arg[a] = in[v];
        st[a] = s[v];
      } else {
        const fused_op *src = &p->ops[v - nin];
        arg[a] = src->out >= 0 && !job->stream
                     ? job->dst[src->out] + (out_pos - job->origin) * src->esize
                     : scratch + src->slot * p->slot_bytes[job->stream];
        st[a] = 1;
      }
    }
    void *res = f->out >= 0 && !job->stream ? job->dst[f->out] + (out_pos - job->origin) * f->esize
                                            : scratch + f->slot * p->slot_bytes[job->stream];
    if (f->loop.un)
      f->loop.un(arg[0], st[0], res, n);
    else if (f->loop.bin)
      f->loop.bin(arg[0], st[0], arg[1], st[1], res, n);
    else
      f->loop.nary(arg, st, res, n, f->loop.ctx);
  }
  if (job->stream)
    for (int j = 0; j < p->noutputs; j++) {
      const fused_op *f = &p->ops[p->out_op[j]];
      emlx_idx_stream_bytes(job->dst[j] + (out_pos - job->origin) * f->esize,
                            scratch + f->slot * p->slot_bytes[1], (size_t)(n * f->esize));
    }
}

static void fused_range(void *ctx, int64_t begin, int64_t end) {
  const fused_job *job = (const fused_job *)ctx;
  const fused_plan *p = job->p;
  int nin = p->ninputs, last = job->ndim - 1;
  char *scratch = emlx__scratch_get(SCRATCH_BYTES);
  if (!scratch) {
    atomic_store_explicit(job->failed, 1, memory_order_relaxed);
    return;
  }
  int64_t tile = p->tile[job->stream];
  int64_t inner_n = job->shape[last];
  int64_t idx[EMLX_MAX_NDIM];
  int64_t base[EMLX_FUSE_MAX_INPUTS];
  int64_t s[EMLX_FUSE_MAX_INPUTS];
  for (int k = 0; k < nin; k++)
    s[k] = job->stride[k][last];
  int64_t inner = emlx_cpu_walk_start(
      job->ndim, job->shape, nin, (const int64_t(*)[EMLX_MAX_NDIM])job->stride, begin, idx, base);
  const char *in[EMLX_FUSE_MAX_INPUTS];
  int64_t pos = begin;
  while (pos < end) {
    int64_t len = inner_n - inner < end - pos ? inner_n - inner : end - pos;
    for (int64_t t = 0; t < len; t += tile) {
      int64_t n = len - t < tile ? len - t : tile;
      for (int k = 0; k < nin; k++)
        in[k] = job->src[k] + (base[k] + (inner + t) * s[k]) * (int64_t)p->in_esize[k];
      run_tile(p, job, in, s, pos + t, n, scratch);
    }
    pos += len;
    inner = 0;
    if (pos < end)
      emlx_cpu_walk_next(job->ndim, job->shape, nin, (const int64_t(*)[EMLX_MAX_NDIM])job->stride,
                         idx, base);
  }
  if (job->stream)
    emlx_idx_stream_fence(); /* the streamed stores are seen before the pool's join */
  emlx__scratch_put(scratch);
}

/* Strides of every input over the region's shape (that of `like`), merged
 * into job->stride (a block job_release frees). 0, or -1 with an error. */
static int prepare_job(fused_job *job, const fused_plan *p, emlx_array *const *inputs,
                       const emlx_array *like, atomic_int *failed) {
  int nin = p->ninputs;
  atomic_init(failed, 0);
  job->failed = failed;
  /* rows [0, nin): the merged strides the job keeps; [nin, 2 nin): the raw ones */
  int64_t(*rows)[EMLX_MAX_NDIM] = malloc(sizeof(*rows) * (size_t)(nin ? 2 * nin : 1));
  job->stride = rows;
  if (!rows)
    return EMLX_FAIL("fusion: out of memory");
  const int64_t *sp[EMLX_FUSE_MAX_INPUTS];
  int64_t *mp[EMLX_FUSE_MAX_INPUTS];
  job->p = p;
  job->origin = 0;
  job->stream = false;
  for (int k = 0; k < nin; k++) {
    if (emlx_cpu_broadcast_strides(inputs[k], like, rows[nin + k]) != 0)
      return -1;
    job->src[k] = (const char *)emlx__data(inputs[k]);
    sp[k] = rows[nin + k];
    mp[k] = rows[k];
  }
  int64_t size;
  job->ndim = emlx_cpu_merge_dims(like->ndim, like->shape, nin, sp, job->shape, mp, &size);
  return 0;
}

static void job_release(fused_job *job) { free(job->stride); }

int emlx_cpu_fuse_run(const void *plan, emlx_array *const *inputs, emlx_array *const *outputs,
                      const long *donor_refs) {
  const fused_plan *p = (const fused_plan *)plan;
  emlx_array *out0 = outputs[0];
  int nin = p->ninputs;
  fused_job job;
  atomic_int failed;
  int rc = -1;
  if (prepare_job(&job, p, inputs, out0, &failed) != 0)
    goto out;
  /* Output buffers: an input dying with the region may lend its buffer to an
   * output of its dtype and shape, provided no op reads that input after the
   * output's op has written it. */
  bool donated[EMLX_FUSE_MAX_INPUTS] = {false};
  for (int j = 0; j < p->noutputs; j++) {
    emlx_array *o = outputs[j];
    int lent = 0;
    for (int k = 0; k < nin && !lent; k++) {
      emlx_array *in = inputs[k];
      if (!donor_refs || donor_refs[k] <= 0 || donated[k] || in->dtype != o->dtype ||
          !emlx__same_shape(in, o) || p->in_last_read[k] > p->out_op[j])
        continue;
      if (emlx__array_alloc_data_donate_refs(o, in, donor_refs[k]) != 0)
        goto fail_outputs;
      lent = 1;
      if (o->buffer == in->buffer)
        donated[k] = true;
    }
    if (!lent && emlx__array_alloc_data(o) != 0)
      goto fail_outputs;
    job.dst[j] = (char *)emlx__data(o);
  }
  /* Outputs much larger than the caches skip them (no read for ownership). */
  int64_t out_bytes = 0;
  for (int j = 0; j < p->noutputs; j++)
    out_bytes += outputs[j]->size * (int64_t)emlx_dtype_size(outputs[j]->dtype);
  job.stream = out_bytes >= STREAM_MIN_BYTES;
  if (out0->size > 0) {
    if (out0->size <= p->grain)
      fused_range(&job, 0, out0->size);
    else
      emlx__parallel_for(out0->size, p->grain, fused_range, &job);
  }
  if (atomic_load(&failed)) {
    emlx__set_error("fusion: out of memory for the tiles of a fused region");
    goto fail_outputs;
  }
  rc = 0;
  goto out;
fail_outputs:
  for (int j = 0; j < p->noutputs; j++) {
    emlx__buffer_release(outputs[j]->buffer);
    outputs[j]->buffer = NULL;
  }
out:
  job_release(&job);
  return rc;
}

/* A virtual input's producer: the region's one output at [pos, pos + n). */
static void produce(const void *ctx, int64_t pos, int64_t n, void *dst) {
  fused_job job = *(const fused_job *)ctx;
  job.dst[0] = (char *)dst;
  job.origin = pos;
  fused_range(&job, pos, pos + n);
}

int emlx_cpu_fuse_reduce(const void *plan, emlx_array *const *inputs, const emlx_node *reduce,
                         const emlx_array *like, emlx_array *out) {
  const fused_plan *p = (const fused_plan *)plan;
  if (p->noutputs != 1 || !emlx__fuse_is_reduction(reduce->prim))
    return 1;
  if (p->lone_cast) { /* a widening integer cast: the reduction reads its source */
    int rc = emlx_cpu_reduce_cast(reduce, inputs[0], like, out);
    if (rc != 1)
      return rc;
  }
  fused_job job;
  atomic_int failed;
  int rc = prepare_job(&job, p, inputs, like, &failed);
  if (rc == 0) {
    emlx_cpu_source src = {produce, &job};
    rc = emlx_cpu_reduce_source(reduce, like, &src, out);
  }
  if (rc == 0 && atomic_load(&failed)) {
    rc = EMLX_FAIL("fusion: out of memory for the tiles of a fused region");
    emlx__buffer_release(out->buffer);
    out->buffer = NULL;
  }
  job_release(&job);
  return rc;
}
