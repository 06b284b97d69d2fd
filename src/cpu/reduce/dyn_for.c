/* dyn_for.c — dynamic chunk scheduling (see dyn_for.h). */
#include <stdatomic.h>

#include "dyn_for.h"

typedef struct dyn_job {
  emlx_range_fn fn;
  void *ctx;
  int64_t n, chunk;
  _Atomic int64_t next;
} dyn_job;

static void dyn_worker(void *p, int tid, int nthreads) {
  (void)tid;
  (void)nthreads;
  dyn_job *j = (dyn_job *)p;
  for (;;) {
    int64_t b = atomic_fetch_add_explicit(&j->next, j->chunk, memory_order_relaxed);
    if (b >= j->n)
      return;
    j->fn(j->ctx, b, j->n - b < j->chunk ? j->n : b + j->chunk);
  }
}

void emlx_cpu_dyn_for(int64_t n, int64_t chunk, emlx_range_fn fn, void *ctx) {
  if (n <= 0)
    return;
  if (chunk < 1)
    chunk = 1;
  int nt = emlx_num_threads();
  if (nt <= 1 || n <= chunk) {
    fn(ctx, 0, n);
    return;
  }
  int64_t nchunks = (n + chunk - 1) / chunk;
  dyn_job j = {fn, ctx, n, chunk, 0};
  atomic_init(&j.next, 0);
  emlx__parallel_run(nchunks < nt ? (int)nchunks : nt, dyn_worker, &j);
}
