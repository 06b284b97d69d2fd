/* iter.c — walking up to three strided inputs over a row-major output.
 *
 * After init, the shape is as short as it can be: size-1 dims are gone and
 * neighbouring dims that are contiguous in every operand are merged (a dense
 * array of any rank becomes one dim; a broadcast row stays one dim with
 * stride 0). The run functions split the flat output range over the thread
 * pool; each chunk rebuilds its multi-index once, then calls the ISA's 1-D
 * loop on the innermost dim (or the part of it inside the chunk).
 *
 * A unary loop over a transposed input (innermost output dim strided in the
 * input, the next one contiguous) runs in 64 x 64 tiles instead, so each
 * input cache line is read once rather than once per output row. */
#include "cpu.h"

int emlx_cpu_merge_dims(int ndim, const int64_t *shape, int nin, const int64_t *const *strides,
                        int64_t *mshape, int64_t *const *mstrides, int64_t *size) {
  int64_t total = 1;
  int d = 0;
  for (int i = 0; i < ndim; i++) {
    total *= shape[i];
    if (shape[i] == 1)
      continue;
    if (d > 0) { /* merge into the previous kept dim when contiguous everywhere */
      int ok = 1;
      for (int k = 0; k < nin; k++)
        ok &= strides[k][i] * shape[i] == mstrides[k][d - 1];
      if (ok) {
        mshape[d - 1] *= shape[i];
        for (int k = 0; k < nin; k++)
          mstrides[k][d - 1] = strides[k][i];
        continue;
      }
    }
    mshape[d] = shape[i];
    for (int k = 0; k < nin; k++)
      mstrides[k][d] = strides[k][i];
    d++;
  }
  if (d == 0) { /* a single element (or rank 0) */
    mshape[0] = 1;
    for (int k = 0; k < nin; k++)
      mstrides[k][0] = 0;
    d = 1;
  }
  *size = total;
  return d;
}

void emlx_cpu_iter_init(emlx_cpu_iter *it, int ndim, const int64_t *shape, int nin,
                        const int64_t *const *strides) {
  int64_t *ms[3] = {it->stride[0], it->stride[1], it->stride[2]};
  it->nin = nin;
  for (int k = nin; k < 3; k++)
    it->stride[k][0] = 0;
  it->ndim = emlx_cpu_merge_dims(ndim, shape, nin, strides, it->shape, ms, &it->size);
}

int64_t emlx_cpu_walk_start(int ndim, const int64_t *shape, int nin,
                            const int64_t (*strides)[EMLX_MAX_NDIM], int64_t begin, int64_t *idx,
                            int64_t *base) {
  int last = ndim - 1;
  int64_t rem = begin / shape[last];
  for (int j = 0; j < nin; j++)
    base[j] = 0;
  for (int k = last - 1; k >= 0; k--) {
    idx[k] = rem % shape[k];
    rem /= shape[k];
    for (int j = 0; j < nin; j++)
      base[j] += idx[k] * strides[j][k];
  }
  return begin % shape[last];
}

void emlx_cpu_walk_next(int ndim, const int64_t *shape, int nin,
                        const int64_t (*strides)[EMLX_MAX_NDIM], int64_t *idx, int64_t *base) {
  for (int k = ndim - 2; k >= 0; k--) {
    idx[k]++;
    for (int j = 0; j < nin; j++)
      base[j] += strides[j][k];
    if (idx[k] < shape[k])
      return;
    for (int j = 0; j < nin; j++)
      base[j] -= strides[j][k] * shape[k];
    idx[k] = 0;
  }
}

typedef struct iter_job {
  const emlx_cpu_iter *it;
  emlx_cpu_unary_loop un; /* one of un / bin / nary */
  emlx_cpu_binary_loop bin;
  emlx_cpu_nary_loop nary;
  const void *ctx; /* nary's */
} iter_job;

static void iter_range(void *ctx, int64_t begin, int64_t end) {
  const iter_job *job = (const iter_job *)ctx;
  const emlx_cpu_iter *it = job->it;
  int d = it->ndim, last = d - 1;
  int64_t inner_n = it->shape[last];
  int64_t idx[EMLX_MAX_NDIM];
  int64_t base[3]; /* offset of the current inner row, per input */
  int64_t inner = emlx_cpu_walk_start(d, it->shape, it->nin, it->stride, begin, idx, base);
  int64_t s[3] = {it->stride[0][last], it->stride[1][last], it->stride[2][last]};
  int64_t pos = begin;
  while (pos < end) {
    int64_t len = inner_n - inner < end - pos ? inner_n - inner : end - pos;
    const void *ptr[3] = {NULL, NULL, NULL};
    for (int j = 0; j < it->nin; j++)
      ptr[j] = it->in[j] + (base[j] + inner * s[j]) * (int64_t)it->in_esize[j];
    char *o = it->out + pos * (int64_t)it->out_esize;
    if (job->un)
      job->un(ptr[0], s[0], o, len);
    else if (job->bin)
      job->bin(ptr[0], s[0], ptr[1], s[1], o, len);
    else
      job->nary(ptr, s, o, len, job->ctx);
    pos += len;
    inner = 0;
    if (pos < end)
      emlx_cpu_walk_next(d, it->shape, it->nin, it->stride, idx, base);
  }
}

static void iter_run(const iter_job *job, int64_t grain) {
  if (job->it->size <= 0)
    return;
  if (grain < 1)
    grain = 1;
  if (job->it->size <= grain)
    iter_range((void *)job, 0, job->it->size);
  else
    emlx__parallel_for(job->it->size, grain, iter_range, (void *)job);
}

#define TILE_T 64

typedef struct tile_job {
  const emlx_cpu_iter *it;
  emlx_cpu_unary_loop fn;
  int64_t row_blocks; /* per batch */
} tile_job;

static void tile_range(void *ctx, int64_t begin, int64_t end) {
  const tile_job *job = (const tile_job *)ctx;
  const emlx_cpu_iter *it = job->it;
  int last = it->ndim - 1;
  int64_t rows = it->shape[last - 1], cols = it->shape[last];
  int64_t sr = it->stride[0][last - 1], sc = it->stride[0][last];
  int64_t ies = (int64_t)it->in_esize[0], oes = (int64_t)it->out_esize;
  for (int64_t u = begin; u < end; u++) {
    int64_t b = u / job->row_blocks, r0 = (u % job->row_blocks) * TILE_T;
    int64_t r1 = r0 + TILE_T < rows ? r0 + TILE_T : rows;
    int64_t base = 0, rem = b;
    for (int k = last - 2; k >= 0; k--) {
      base += (rem % it->shape[k]) * it->stride[0][k];
      rem /= it->shape[k];
    }
    for (int64_t c0 = 0; c0 < cols; c0 += TILE_T) {
      int64_t len = cols - c0 < TILE_T ? cols - c0 : TILE_T;
      for (int64_t r = r0; r < r1; r++)
        job->fn(it->in[0] + (base + r * sr + c0 * sc) * ies, sc,
                it->out + ((b * rows + r) * cols + c0) * oes, len);
    }
  }
}

void emlx_cpu_iter_run_unary(const emlx_cpu_iter *it, emlx_cpu_unary_loop fn, int64_t grain) {
  int last = it->ndim - 1;
  if (it->ndim >= 2 && it->stride[0][last] != 1 && it->stride[0][last - 1] == 1 &&
      it->shape[last] >= 16 && it->shape[last - 1] >= 16) {
    tile_job job = {it, fn, (it->shape[last - 1] + TILE_T - 1) / TILE_T};
    int64_t units = it->size / (it->shape[last - 1] * it->shape[last]) * job.row_blocks;
    int64_t g = grain / (TILE_T * it->shape[last]);
    if (g < 1)
      g = 1;
    if (units <= g)
      tile_range(&job, 0, units);
    else
      emlx__parallel_for(units, g, tile_range, &job);
    return;
  }
  iter_job job = {it, fn, NULL, NULL, NULL};
  iter_run(&job, grain);
}

void emlx_cpu_iter_run_binary(const emlx_cpu_iter *it, emlx_cpu_binary_loop fn, int64_t grain) {
  iter_job job = {it, NULL, fn, NULL, NULL};
  iter_run(&job, grain);
}

void emlx_cpu_iter_run_nary(const emlx_cpu_iter *it, emlx_cpu_nary_loop fn, const void *ctx,
                            int64_t grain) {
  iter_job job = {it, NULL, NULL, fn, ctx};
  iter_run(&job, grain);
}

emlx_array *emlx_cpu_donor(emlx_array *in, const emlx_array *out) {
  return in && in->dtype == out->dtype && emlx__same_shape(in, out) ? in : NULL;
}

int emlx_cpu_broadcast_strides(const emlx_array *a, const emlx_array *out, int64_t *st) {
  int off = out->ndim - a->ndim;
  if (off < 0)
    return EMLX_FAIL("cpu: input of rank %d does not broadcast to rank %d", a->ndim, out->ndim);
  for (int i = 0; i < out->ndim; i++) {
    int ai = i - off;
    if (ai < 0 || a->shape[ai] == 1)
      st[i] = 0;
    else if (a->shape[ai] == out->shape[i])
      st[i] = a->strides[ai];
    else
      return EMLX_FAIL("cpu: input dim %lld does not broadcast to %lld", (long long)a->shape[ai],
                       (long long)out->shape[i]);
  }
  return 0;
}
