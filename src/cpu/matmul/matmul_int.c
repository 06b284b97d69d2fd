/* matmul_int.c — integer products: splits the rows of C over the pool and
 * calls the integer GEMM of the run-time ISA level (simd/matmul_int_*.c). */
#include <string.h>

#include "isa.h"
#include "matmul.h"

typedef struct int_ctx {
  const emlx_gemm *g;
  emlx_mm_int_rows_fn fn;
  _Atomic int failed;
} int_ctx;

static void int_range(void *p, int64_t begin, int64_t end) {
  int_ctx *x = p;
  emlx_buffer *holder;
  void *scratch = emlx_cpu_mm_scratch(EMLX_MM_INT_SCRATCH, &holder);
  if (!scratch) {
    atomic_store(&x->failed, 1);
    return;
  }
  x->fn(x->g, begin, end, scratch);
  emlx__buffer_release(holder);
}

static int log2_size(emlx_dtype dt) {
  switch (emlx_dtype_size(dt)) {
  case 1:
    return 0;
  case 2:
    return 1;
  case 4:
    return 2;
  default:
    return 3;
  }
}

int emlx_cpu_gemm_int(const emlx_gemm *g, bool threaded) {
  const char *level = emlx_cpu_isa_get()->name;
  const emlx_mm_int_rows_fn *table = strcmp(level, "avx512") == 0 ? emlx_mm_int_rows_avx512
                                     : strcmp(level, "avx2") == 0 ? emlx_mm_int_rows_avx2
                                                                  : emlx_mm_int_rows_scalar;
  int_ctx x = {.g = g, .fn = table[log2_size(g->dtype)]};
  atomic_init(&x.failed, 0);
  /* Rows per task: enough multiply-adds (~1M) to pay for a panel copy. */
  int64_t per_row = g->N * g->K;
  int64_t grain = per_row >= (1 << 20) ? 1 : (1 << 20) / (per_row > 0 ? per_row : 1);
  if (threaded)
    emlx__parallel_for(g->M, grain, int_range, &x);
  else
    int_range(&x, 0, g->M);
  return atomic_load(&x.failed) ? EMLX_FAIL("matmul: out of memory for packing buffers") : 0;
}
