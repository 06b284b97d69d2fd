/* matmul_lowp.c — f16 and bf16 products: the blocked driver and the
 * portable kernel.
 *
 * Never is a whole operand converted to f32. B is packed once per product
 * into panels of NR columns over the whole (zero-padded) K, in the layout the
 * chosen micro-kernel reads; each task then packs a block of MC rows of A
 * (also whole-K micro-panels of MR rows), keeps it in L2 and streams the B
 * panels of its column range past it, one MR x NR micro-kernel call per
 * block of C, accumulating in f32 registers and rounding once on the store.
 * Tasks (row blocks x column ranges) are spread over the pool.
 *
 * Kernel choice, at run time: bf16 uses AMX tiles when the CPU has AMX-BF16
 * and the OS grants the tile state, else AVX-512 BF16 (vdpbf16ps), else the
 * AVX-512 f32 FMA kernel on panels widened while packing; f16 uses the
 * AVX-512 f32 FMA kernel (AVX-512 FP16 arithmetic would accumulate in
 * f16). Below AVX-512 both use the AVX2 + FMA + F16C f32 kernel on widened
 * panels (matmul_lowp_avx2.c); the portable kernel below is for machines
 * without AVX2. EMLX_ISA caps the choice like every other kernel (isa.h).
 * At the AVX2 level, large products go instead to OpenBLAS's sgemm on
 * widened chunks of K (matmul_lowp_blas.c), which beats the AVX2 kernel. */
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "convert.h"
#include "isa.h"
#include "matmul.h"

#define MC_BLOCKS 4 /* A block = MC_BLOCKS * mr rows, whole K */

/* ---- portable kernel: f32 panels, 4 x 16 micro-tile ---------------------- */

#define G_MR 4
#define G_NR 16

static float load_lowp(const void *base, int64_t idx, emlx_dtype dt) {
  uint16_t h;
  memcpy(&h, (const char *)base + idx * 2, 2);
  return dt == EMLX_BFLOAT16 ? emlx_cv_bf16_to_f32(h) : emlx_cv_f16_to_f32(h);
}

static void generic_pack_a(const emlx_gemm *g, int64_t i0, int64_t kpad, void *dst) {
  float *d = dst;
  for (int64_t k = 0; k < kpad; k++)
    for (int r = 0; r < G_MR; r++) {
      int64_t i = i0 + r;
      d[k * G_MR + r] =
          i < g->M && k < g->K ? load_lowp(g->a, i * g->a_rs + k * g->a_cs, g->dtype) : 0.0f;
    }
}

static void generic_pack_b(const emlx_gemm *g, int64_t j0, int64_t k0, int64_t k1, void *dst) {
  float *d = dst;
  for (int64_t k = k0; k < k1; k++)
    for (int c = 0; c < G_NR; c++) {
      int64_t j = j0 + c;
      d[k * G_NR + c] =
          j < g->N && k < g->K ? load_lowp(g->b, k * g->b_rs + j * g->b_cs, g->dtype) : 0.0f;
    }
}

static void generic_micro(int64_t kpad, const void *ap, const void *bp, void *c, int64_t ldc,
                          int mv, int nv, emlx_dtype dt, const void *pf, int64_t pf_bytes) {
  (void)pf;
  (void)pf_bytes;
  const float *a = ap, *b = bp;
  float acc[G_MR][G_NR] = {{0}};
  for (int64_t k = 0; k < kpad; k++)
    for (int r = 0; r < G_MR; r++) {
      float x = a[k * G_MR + r];
      for (int j = 0; j < G_NR; j++)
        acc[r][j] += x * b[k * G_NR + j];
    }
  uint16_t *out = c;
  for (int r = 0; r < mv; r++)
    for (int j = 0; j < nv; j++)
      out[r * ldc + j] =
          dt == EMLX_BFLOAT16 ? emlx_cv_f32_to_bf16(acc[r][j]) : emlx_cv_f32_to_f16(acc[r][j]);
}

static const emlx_mm_lowp_kernel generic_kernel = {.name = "generic",
                                                   .mr = G_MR,
                                                   .nr = G_NR,
                                                   .ku = 1,
                                                   .a_pad = 0,
                                                   .a_panel_elt = 4,
                                                   .b_panel_elt = 4,
                                                   .pack_a = generic_pack_a,
                                                   .pack_b = generic_pack_b,
                                                   .micro = generic_micro};

const emlx_mm_lowp_kernel *emlx_mm_lowp_generic(emlx_dtype dtype) {
  (void)dtype;
  return &generic_kernel;
}

/* ---- CPU features ---------------------------------------------------------- */

#if defined(__x86_64__)
static bool cpuid_bit(unsigned leaf, unsigned sub, int reg, int bit) {
  unsigned r[4];
  if (!__get_cpuid_count(leaf, sub, &r[0], &r[1], &r[2], &r[3]))
    return false;
  return (r[reg] >> bit) & 1u;
}
#endif

bool emlx_mm_cpu_has_avx512bf16(void) {
#if defined(__x86_64__)
  return cpuid_bit(7, 1, 0, 5); /* CPUID.(7,1):EAX.AVX512_BF16 */
#else
  return false;
#endif
}

static _Atomic int amx_state; /* 0 unknown, 1 usable, 2 not */

bool emlx_mm_amx_usable(void) {
  int s = atomic_load_explicit(&amx_state, memory_order_acquire);
  if (s == 0) {
    bool ok = false;
#if defined(__x86_64__) && defined(SYS_arch_prctl)
    /* CPUID.(7,0):EDX.AMX-BF16 (22) and AMX-TILE (24), then ask Linux for
     * the tile data state (ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA). */
    if (cpuid_bit(7, 0, 3, 22) && cpuid_bit(7, 0, 3, 24))
      ok = syscall(SYS_arch_prctl, 0x1023, 18) == 0;
#endif
    s = ok ? 1 : 2;
    atomic_store_explicit(&amx_state, s, memory_order_release);
  }
  return s == 1;
}

/* EMLX_MATMUL_KERNEL=generic|avx2-fma|avx512-fma|avx512-bf16|amx-bf16
 * forces one kernel (when this machine has it): the reference mode the
 * tests use to check every kernel against the same references. */
static const emlx_mm_lowp_kernel *choose(emlx_dtype dt) {
  const emlx_cpu_isa *isa = emlx_cpu_isa_get();
  bool avx512 = strcmp(isa->name, "avx512") == 0;
  bool avx2 = avx512 || strcmp(isa->name, "avx2") == 0;
  const emlx_mm_lowp_kernel *amx = avx512 && dt == EMLX_BFLOAT16 ? emlx_mm_lowp_amx() : NULL;
  const emlx_mm_lowp_kernel *dp = avx512 && dt == EMLX_BFLOAT16 ? emlx_mm_lowp_avx512bf16() : NULL;
  const emlx_mm_lowp_kernel *fma = avx512 ? emlx_mm_lowp_avx512(dt) : NULL;
  const emlx_mm_lowp_kernel *fma2 = avx2 ? emlx_mm_lowp_avx2(dt) : NULL;
  const char *force = getenv("EMLX_MATMUL_KERNEL");
  if (force) {
    const emlx_mm_lowp_kernel *all[4] = {amx, dp, fma, fma2};
    for (int i = 0; i < 4; i++)
      if (all[i] && strcmp(all[i]->name, force) == 0)
        return all[i];
    if (strcmp(force, "generic") == 0)
      return &generic_kernel;
  }
  return amx ? amx : dp ? dp : fma ? fma : fma2 ? fma2 : &generic_kernel;
}

/* ---- the driver ------------------------------------------------------------ */

typedef struct lowp_ctx {
  const emlx_gemm *g;
  const emlx_mm_lowp_kernel *k;
  int64_t kpad, npanels, mblocks, nsplit, mc;
  size_t a_panel_bytes, b_panel_bytes;
  const char *bpack;
  _Atomic int failed;
} lowp_ctx;

/* Panels [begin, end) of B, a chunk of k at a time across all of them:
 * consecutive reads then walk along B's rows instead of down 32 columns. */
static void pack_b_range(void *p, int64_t begin, int64_t end) {
  lowp_ctx *x = p;
  int64_t chunk = 32; /* a multiple of every kernel's ku */
  for (int64_t k0 = 0; k0 < x->kpad; k0 += chunk) {
    int64_t k1 = k0 + chunk < x->kpad ? k0 + chunk : x->kpad;
    for (int64_t q = begin; q < end; q++)
      x->k->pack_b(x->g, q * x->k->nr, k0, k1, (char *)x->bpack + q * (int64_t)x->b_panel_bytes);
  }
}

/* The MR x NR blocks of C of rows [i0, i0 + nsub * mr) and panel q, the A
 * panels packed at apack. A B panel comes from L3 (B is packed once for all
 * row blocks), so each micro call also asks for a 1/nsub slice of the next
 * panel of the task (q_end: its end) to be prefetched into L2. */
static void run_panel(const lowp_ctx *x, const char *apack, int64_t i0, int64_t nsub, int64_t q,
                      int64_t q_end) {
  const emlx_gemm *g = x->g;
  const emlx_mm_lowp_kernel *k = x->k;
  int64_t j0 = q * k->nr;
  int nv = (int)(g->N - j0 < k->nr ? g->N - j0 : k->nr);
  const char *bp = x->bpack + q * (int64_t)x->b_panel_bytes;
  int64_t pf_total = q + 1 < q_end ? (int64_t)x->b_panel_bytes : 0;
  if (k->micro_part && x->kpad > k->kc && nsub <= MC_BLOCKS) {
    _Alignas(64) float acc[MC_BLOCKS][32 * 32];
    int64_t nchunks = (x->kpad + k->kc - 1) / k->kc, ncalls = nchunks * nsub, call = 0;
    for (int64_t k0 = 0; k0 < x->kpad; k0 += k->kc) {
      int64_t k1 = k0 + k->kc < x->kpad ? k0 + k->kc : x->kpad;
      for (int64_t s = 0; s < nsub; s++, call++) {
        int64_t r0 = i0 + s * k->mr;
        int mv = (int)(g->M - r0 < k->mr ? g->M - r0 : k->mr);
        char *c = (char *)g->c + (r0 * g->ldc + j0) * 2;
        int64_t p0 = pf_total * call / ncalls / 64 * 64;
        int64_t p1 = pf_total * (call + 1) / ncalls / 64 * 64;
        k->micro_part(k0, k1, apack + s * (int64_t)x->a_panel_bytes, bp, acc[s], k0 == 0,
                      k1 == x->kpad, c, g->ldc, mv, nv, g->dtype,
                      p1 > p0 ? bp + x->b_panel_bytes + p0 : NULL, p1 - p0);
      }
    }
    return;
  }
  for (int64_t s = 0; s < nsub; s++) {
    int64_t r0 = i0 + s * k->mr;
    int mv = (int)(g->M - r0 < k->mr ? g->M - r0 : k->mr);
    char *c = (char *)g->c + (r0 * g->ldc + j0) * 2;
    int64_t p0 = pf_total * s / nsub / 64 * 64, p1 = pf_total * (s + 1) / nsub / 64 * 64;
    k->micro(x->kpad, apack + s * (int64_t)x->a_panel_bytes, bp, c, g->ldc, mv, nv, g->dtype,
             p1 > p0 ? bp + x->b_panel_bytes + p0 : NULL, p1 - p0);
  }
}

/* Tasks: row block t / nsplit, column range t % nsplit. */
static void run_tasks(void *p, int64_t begin, int64_t end) {
  lowp_ctx *x = p;
  const emlx_gemm *g = x->g;
  const emlx_mm_lowp_kernel *k = x->k;
  emlx_buffer *holder;
  char *apack = emlx_cpu_mm_scratch((size_t)MC_BLOCKS * x->a_panel_bytes, &holder);
  if (!apack) {
    atomic_store(&x->failed, 1);
    return;
  }
  if (k->begin)
    k->begin();
  for (int64_t t = begin; t < end; t++) {
    int64_t mb = t / x->nsplit, ns = t % x->nsplit;
    int64_t i0 = mb * x->mc;
    int64_t rows = g->M - i0 < x->mc ? g->M - i0 : x->mc;
    int64_t nsub = (rows + k->mr - 1) / k->mr;
    for (int64_t s = 0; s < nsub; s++)
      k->pack_a(g, i0 + s * k->mr, x->kpad, apack + s * (int64_t)x->a_panel_bytes);
    int64_t q0 = x->npanels * ns / x->nsplit, q1 = x->npanels * (ns + 1) / x->nsplit;
    for (int64_t q = q0; q < q1; q++)
      run_panel(x, apack, i0, nsub, q, q1);
  }
  if (k->end)
    k->end();
  emlx__buffer_release(holder);
}

/* ---- few rows: straight from B ---------------------------------------------- */

typedef void (*gemv_fn)(const emlx_gemm *g, int64_t j0, int64_t j1);
typedef void (*gemv_t_fn)(const emlx_gemm *g, const float *af, int64_t j0, int64_t j1);
typedef struct gemv_ctx {
  const emlx_gemm *g;
  gemv_fn fn;    /* B's columns contiguous, or */
  gemv_t_fn tfn; /* B's rows contiguous, A widened into af */
  const float *af;
  int64_t cols; /* per task */
} gemv_ctx;

static void gemv_range(void *p, int64_t begin, int64_t end) {
  const gemv_ctx *x = p;
  int64_t j0 = begin * x->cols, j1 = end * x->cols;
  j1 = j1 < x->g->N ? j1 : x->g->N;
  if (x->fn)
    x->fn(x->g, j0, j1);
  else
    x->tfn(x->g, x->af, j0, j1);
}

/* A decode step's products (M <= 4, B with contiguous columns or rows) read
 * B once instead of packing it first, which would cross the weights three
 * times. EMLX_MATMUL_KERNEL (which forces a packed kernel) turns it off.
 * Returns 1 when it ran the product, 0 when it does not apply, -1 on error. */
static int try_gemv(const emlx_gemm *g, bool threaded) {
  if (g->M > EMLX_MM_GEMV_MAX_M || getenv("EMLX_MATMUL_KERNEL"))
    return 0;
  const char *isa = emlx_cpu_isa_get()->name;
  bool avx512 = strcmp(isa, "avx512") == 0;
  if (!avx512 && strcmp(isa, "avx2") != 0)
    return 0;
  gemv_ctx gx = {.g = g, .cols = 512};
  /* AVX2: one column range a thread (multiples of 16 columns), so B's rows
   * are read in strips as long as the split allows and a 512-column B is
   * not left to one thread; the AVX2 walks chunk their range themselves. */
  if (!avx512) {
    int64_t nt = threaded ? emlx_num_threads() : 1;
    gx.cols = ((g->N + nt - 1) / nt + 15) / 16 * 16;
  }
  emlx_buffer *holder = NULL;
  if (g->b_cs == 1) {
    gx.fn = avx512 ? emlx_mm_gemv_lowp_avx512 : emlx_mm_gemv_lowp_avx2;
  } else if (g->b_rs == 1) {
    gx.tfn = avx512 ? emlx_mm_gemv_t_lowp_avx512 : emlx_mm_gemv_t_lowp_avx2;
    float *af = emlx_cpu_mm_scratch((size_t)(g->M * g->K) * sizeof(float), &holder);
    if (!af)
      return EMLX_FAIL("matmul: out of memory for packing buffers");
    for (int64_t m = 0; m < g->M; m++)
      for (int64_t k = 0; k < g->K; k++)
        af[m * g->K + k] = load_lowp(g->a, m * g->a_rs + k * g->a_cs, g->dtype);
    gx.af = af;
  } else {
    return 0;
  }
  int64_t tasks = (g->N + gx.cols - 1) / gx.cols;
  double work = (double)g->M * (double)g->N * (double)g->K;
  if (threaded && work > 1e6)
    emlx__parallel_for(tasks, 1, gemv_range, &gx);
  else
    gemv_range(&gx, 0, tasks);
  emlx__buffer_release(holder);
  return 1;
}

int emlx_cpu_gemm_lowp(const emlx_gemm *g, bool threaded) {
  int gv = try_gemv(g, threaded);
  if (gv != 0)
    return gv < 0 ? -1 : 0;
  int bl = emlx_cpu_gemm_lowp_blas(g, threaded);
  if (bl != 0)
    return bl < 0 ? -1 : 0;
  lowp_ctx x = {.g = g, .k = choose(g->dtype)};
  const emlx_mm_lowp_kernel *k = x.k;
  x.kpad = (g->K + k->ku - 1) / k->ku * k->ku;
  x.npanels = (g->N + k->nr - 1) / k->nr;
  x.a_panel_bytes = (size_t)((x.kpad + k->a_pad) * k->mr) * k->a_panel_elt;
  x.b_panel_bytes = (size_t)(x.kpad * k->nr) * k->b_panel_elt;
  x.mc = (int64_t)MC_BLOCKS * k->mr;
  x.mblocks = (g->M + x.mc - 1) / x.mc;
  atomic_init(&x.failed, 0);
  int nt = threaded ? emlx_num_threads() : 1;
  /* Enough tasks for every thread (a few each) without cutting the column
   * ranges below a couple of panels. */
  x.nsplit = 1;
  while (x.mblocks * x.nsplit < 4 * nt && x.npanels / (x.nsplit * 2) >= 2)
    x.nsplit *= 2;
  if (!threaded)
    x.nsplit = 1;
  emlx_buffer *bholder;
  x.bpack = emlx_cpu_mm_scratch((size_t)x.npanels * x.b_panel_bytes, &bholder);
  if (!x.bpack)
    return -1;
  double work = (double)g->M * (double)g->N * (double)g->K;
  if (threaded && work > 1e6) {
    emlx__parallel_for(x.npanels, 4, pack_b_range, &x);
    emlx__parallel_for(x.mblocks * x.nsplit, 1, run_tasks, &x);
  } else {
    pack_b_range(&x, 0, x.npanels);
    run_tasks(&x, 0, x.mblocks * x.nsplit);
  }
  emlx__buffer_release(bholder);
  return atomic_load(&x.failed) ? EMLX_FAIL("matmul: out of memory for packing buffers") : 0;
}
