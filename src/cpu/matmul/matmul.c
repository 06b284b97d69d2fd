/* matmul.c — the MATMUL and DIAG_VIEW kernels.
 *
 * MATMUL walks the batch and hands each (M x K) . (K x N) product to the
 * GEMM of its dtype (matmul.h) with the operands' own strides, so
 * transposed views and broadcast batches are read in place. Two shapes get
 * special treatment:
 *  - a batch whose B is the same matrix for every element (stride 0) and
 *    whose A rows are evenly spaced across the batch becomes one tall GEMM
 *    (x @ W with x of shape (batch, seq, d));
 *  - a batch of small products (under ~256K multiply-adds each, where
 *    OpenBLAS stays on the calling thread anyway) is split over our pool,
 *    one product per task; larger products run one after the other, each
 *    threaded inside (by OpenBLAS's own threads for f32/f64/c64/c128, by our pool
 *    for the other dtypes). Threads are never nested. Small f32 products
 *    whose operands step evenly through the batch go to the batched small
 *    kernel a chunk at a time, with no per-product dispatch. */
#include <string.h>

#include "isa.h"
#include "kernels.h"
#include "matmul.h"
#include "params_matmul.h"

#define SMALL_GEMM_WORK (INT64_C(1) << 18)

void *emlx_cpu_mm_scratch(size_t nbytes, emlx_buffer **holder) {
  *holder = emlx__buffer_alloc(nbytes, EMLX_CPU);
  return *holder ? (*holder)->ptr : NULL;
}

/* The small-product kernels of this machine's ISA level (NULL: none, BLAS
 * it is), or NULL when g is not small enough for them. */
typedef struct small_kernels {
  void (*one)(const emlx_gemm *g);
  void (*batch)(const emlx_gemm *g, int64_t count, int64_t a_bs, int64_t b_bs);
} small_kernels;

static const small_kernels *small_f32(const emlx_gemm *g) {
  static const small_kernels k512 = {emlx_mm_small_f32_avx512, emlx_mm_small_f32_batch_avx512};
  static const small_kernels k2 = {emlx_mm_small_f32_avx2, emlx_mm_small_f32_batch_avx2};
  static _Atomic int level = -1; /* the ISA level is fixed once chosen: 2, 1 or 0 */
  int v = atomic_load_explicit(&level, memory_order_relaxed);
  if (v < 0) {
    const char *isa = emlx_cpu_isa_get()->name;
    v = strcmp(isa, "avx512") == 0 ? 2 : strcmp(isa, "avx2") == 0 ? 1 : 0;
    atomic_store_explicit(&level, v, memory_order_relaxed);
  }
  if (v == 0 || g->N > 64 || g->b_cs != 1 ||
      (double)g->M * (double)g->N * (double)g->K > EMLX_MM_SMALL_WORK)
    return NULL;
  return v == 2 ? &k512 : &k2;
}

static int run_gemm(const emlx_gemm *g, bool threaded) {
  switch (g->dtype) {
  case EMLX_FLOAT32: {
    const small_kernels *sk = small_f32(g);
    if (sk) {
      sk->one(g);
      return 0;
    }
    return emlx_cpu_gemm_blas(g);
  }
  case EMLX_FLOAT64:
  case EMLX_COMPLEX64:
  case EMLX_COMPLEX128:
    return emlx_cpu_gemm_blas(g);
  case EMLX_FLOAT16:
  case EMLX_BFLOAT16:
    return emlx_cpu_gemm_lowp(g, threaded);
  case EMLX_UINT8:
  case EMLX_UINT16:
  case EMLX_UINT32:
  case EMLX_UINT64:
  case EMLX_INT8:
  case EMLX_INT16:
  case EMLX_INT32:
  case EMLX_INT64:
    return emlx_cpu_gemm_int(g, threaded);
  default:
    return EMLX_FAIL("matmul: dtype %s is not supported", emlx_dtype_name(g->dtype));
  }
}

typedef struct batch_ctx {
  const emlx_array *a, *b, *c;
  int nbatch;
  emlx_gemm base;
  size_t esize;
  _Atomic int failed;
} batch_ctx;

/* The problem of batch element `e` (row-major over the batch axes). */
static void batch_problem(const batch_ctx *x, int64_t e, emlx_gemm *g) {
  *g = x->base;
  int64_t oa = 0, ob = 0;
  for (int d = x->nbatch - 1; d >= 0; d--) {
    int64_t n = x->c->shape[d], i = e % n;
    e /= n;
    oa += i * x->a->strides[d];
    ob += i * x->b->strides[d];
  }
  g->a = (const char *)g->a + oa * (int64_t)x->esize;
  g->b = (const char *)g->b + ob * (int64_t)x->esize;
}

static void batch_range(void *p, int64_t begin, int64_t end) {
  batch_ctx *x = p;
  for (int64_t e = begin; e < end; e++) {
    emlx_gemm g;
    batch_problem(x, e, &g);
    g.c = (char *)g.c + e * g.M * g.N * (int64_t)x->esize;
    if (run_gemm(&g, false) != 0) {
      atomic_store(&x->failed, 1);
      return;
    }
  }
}

/* When the batch axes of `arr` step evenly through its elements, in the
 * row-major order of c's batch shape, the offset of batch element e is
 * e * *stride: sets it and returns true. */
static bool batch_stride(const emlx_array *arr, const emlx_array *c, int nbatch, int64_t *stride) {
  int64_t s = 0, span = 1;
  bool have = false;
  for (int d = nbatch - 1; d >= 0; d--) {
    int64_t n = c->shape[d];
    if (n == 1)
      continue;
    if (!have) {
      s = arr->strides[d];
      have = true;
    } else if (arr->strides[d] != s * span) {
      return false;
    }
    span *= n;
  }
  *stride = s;
  return true;
}

typedef struct small_batch_ctx {
  emlx_gemm base;
  int64_t a_bs, b_bs;
  const small_kernels *k;
} small_batch_ctx;

static void small_batch_range(void *p, int64_t begin, int64_t end) {
  const small_batch_ctx *x = p;
  emlx_gemm g = x->base;
  g.a = (const float *)g.a + begin * x->a_bs;
  g.b = (const float *)g.b + begin * x->b_bs;
  g.c = (float *)g.c + begin * g.M * g.ldc;
  x->k->batch(&g, end - begin, x->a_bs, x->b_bs);
}

/* When B does not move across the batch and A's batch axes step evenly
 * through its rows, the whole batch is one GEMM with M * batch rows: sets
 * *row_stride and returns true. */
static bool foldable(const emlx_array *a, const emlx_array *b, int nbatch, int64_t M,
                     int64_t *row_stride) {
  for (int d = 0; d < nbatch; d++)
    if (b->shape[d] != 1 && b->strides[d] != 0)
      return false;
  /* Axes 0..nbatch (the last being M) must form one arithmetic run. */
  int64_t stride = 0, span = 1;
  bool have = false;
  for (int d = nbatch; d >= 0; d--) {
    int64_t n = d == nbatch ? M : a->shape[d];
    if (n == 1)
      continue;
    if (!have) {
      stride = a->strides[d];
      have = true;
    } else if (a->strides[d] != stride * span) {
      return false;
    }
    span *= n;
  }
  *row_stride = have ? stride : 1;
  return true;
}

int emlx_cpu_matmul(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  (void)node;
  const emlx_array *a = in[0], *b = in[1];
  emlx_array *c = out[0];
  if (emlx__array_alloc_data(c) != 0)
    return -1;
  if (c->size == 0)
    return 0;
  int nd = c->ndim, nbatch = nd - 2;
  int64_t M = c->shape[nd - 2], N = c->shape[nd - 1], K = a->shape[nd - 1];
  size_t esize = emlx_dtype_size(c->dtype);
  if (K == 0) {
    memset(emlx__data(c), 0, (size_t)c->size * esize);
    return 0;
  }
  batch_ctx x = {.a = a, .b = b, .c = c, .nbatch = nbatch, .esize = esize};
  x.base = (emlx_gemm){.dtype = c->dtype,
                       .M = M,
                       .N = N,
                       .K = K,
                       .a = emlx__data(a),
                       .a_rs = a->strides[nd - 2],
                       .a_cs = a->strides[nd - 1],
                       .b = emlx__data(b),
                       .b_rs = b->strides[nd - 2],
                       .b_cs = b->strides[nd - 1],
                       .c = emlx__data(c),
                       .ldc = N};
  atomic_init(&x.failed, 0);
  int64_t batch = c->size / (M * N);
  int64_t row_stride;
  if (batch > 1 && foldable(a, b, nbatch, M, &row_stride)) {
    emlx_gemm g = x.base;
    g.M = M * batch;
    g.a_rs = row_stride;
    return run_gemm(&g, true);
  }
  if (batch == 1)
    return run_gemm(&x.base, true);
  double work = (double)M * (double)N * (double)K;
  if (work < (double)SMALL_GEMM_WORK) {
    int64_t grain = (int64_t)(SMALL_GEMM_WORK / (work + 1.0)) + 1;
    small_batch_ctx sx = {.base = x.base,
                          .k = c->dtype == EMLX_FLOAT32 ? small_f32(&x.base) : NULL};
    if (sx.k && batch_stride(a, c, nbatch, &sx.a_bs) && batch_stride(b, c, nbatch, &sx.b_bs)) {
      /* Evenly spaced f32 products: one kernel call per chunk of them. */
      emlx__parallel_for(batch, grain, small_batch_range, &sx);
      return 0;
    }
    emlx__parallel_for(batch, grain, batch_range, &x);
    /* A worker's message stays on its thread: say it again here. */
    return atomic_load(&x.failed) ? EMLX_FAIL("matmul: out of memory for a batch of products") : 0;
  }
  for (int64_t e = 0; e < batch; e++) {
    emlx_gemm g;
    batch_problem(&x, e, &g);
    g.c = (char *)g.c + e * M * N * (int64_t)esize;
    if (run_gemm(&g, true) != 0)
      return -1;
  }
  return 0;
}

int emlx_cpu_diag_view(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_diag_view_params *p = emlx__params(node);
  const emlx_array *a = in[0];
  emlx_array *o = out[0];
  int64_t strides[EMLX_MAX_NDIM] = {0};
  for (int j = 0; j < p->ndim_in; j++)
    strides[p->group[j]] += a->strides[j];
  emlx__array_set_view(o, a, a->offset, strides);
  return 0;
}
