/* math_iter.c — walking up to three strided inputs over a row-major output
 * for the math family's n-ary loops (where, clip, isclose).
 *
 * The same scheme as iter.c (which serves one and two inputs with loops
 * that take no context): init merges dims with iter.c's
 * emlx_cpu_merge_dims; run splits the flat output range over
 * the pool, each chunk rebuilds its multi-index once and calls the 1-D loop
 * on runs of the innermost dim. */
#include "cpu.h"
#include "math_isa.h"

void emlx_math_iter_init(emlx_math_iter *it, int ndim, const int64_t *shape, int nin,
                         const int64_t *const *strides) {
  int64_t *ms[3] = {it->stride[0], it->stride[1], it->stride[2]};
  it->nin = nin;
  for (int k = nin; k < 3; k++)
    it->stride[k][0] = 0;
  it->ndim = emlx_cpu_merge_dims(ndim, shape, nin, strides, it->shape, ms, &it->size);
}

typedef struct math_job {
  const emlx_math_iter *it;
  emlx_math_nary_loop fn;
  const void *ctx;
} math_job;

static void math_range(void *ctx, int64_t begin, int64_t end) {
  const math_job *job = (const math_job *)ctx;
  const emlx_math_iter *it = job->it;
  int last = it->ndim - 1, nin = it->nin;
  int64_t inner_n = it->shape[last];
  int64_t idx[EMLX_MAX_NDIM];
  int64_t base[3];
  int64_t inner = emlx_cpu_walk_start(it->ndim, it->shape, nin, it->stride, begin, idx, base);
  int64_t s[3] = {it->stride[0][last], it->stride[1][last], it->stride[2][last]};
  int64_t pos = begin;
  while (pos < end) {
    int64_t len = inner_n - inner < end - pos ? inner_n - inner : end - pos;
    const void *ptr[3] = {NULL, NULL, NULL};
    for (int j = 0; j < nin; j++)
      ptr[j] = it->in[j] + (base[j] + inner * s[j]) * (int64_t)it->in_esize[j];
    job->fn(ptr, s, it->out + pos * (int64_t)it->out_esize, len, job->ctx);
    pos += len;
    inner = 0;
    if (pos < end)
      emlx_cpu_walk_next(it->ndim, it->shape, nin, it->stride, idx, base);
  }
}

void emlx_math_iter_run(const emlx_math_iter *it, emlx_math_nary_loop fn, const void *ctx,
                        int64_t grain) {
  if (it->size <= 0)
    return;
  math_job job = {it, fn, ctx};
  if (grain < 1)
    grain = 1;
  if (it->size <= grain)
    math_range(&job, 0, it->size);
  else
    emlx__parallel_for(it->size, grain, math_range, &job);
}
