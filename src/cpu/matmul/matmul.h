/* matmul.h — the GEMM interface behind the MATMUL kernel (src/cpu/matmul*.c,
 * src/cpu/simd/matmul_*.c).
 *
 * One problem is C (M x N, row stride ldc, unit column stride, the output's
 * dtype) = A (M x K) . B (K x N), with A and B read through element strides
 * (any sign, 0 allowed) so transposed and broadcast operands are used in
 * place. M, N, K >= 1. `threaded` says whether the call may use the pool
 * (false when the caller already splits a batch over it). Each returns 0, or
 * -1 after emlx__set_error(). */
#ifndef EMLX_CPU_MATMUL_H
#define EMLX_CPU_MATMUL_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

typedef struct emlx_gemm {
  emlx_dtype dtype;
  int64_t M, N, K;
  const void *a;
  int64_t a_rs, a_cs; /* element (i, k) at a + i * a_rs + k * a_cs */
  const void *b;
  int64_t b_rs, b_cs; /* element (k, j) at b + k * b_rs + j * b_cs */
  void *c;
  int64_t ldc;
} emlx_gemm;

/* f32, f64, c64 through CBLAS (matmul_blas.c). */
int emlx_cpu_gemm_blas(const emlx_gemm *g);
/* f16, bf16: our packed kernels accumulating in f32 (matmul_lowp.c). */
int emlx_cpu_gemm_lowp(const emlx_gemm *g, bool threaded);
/* Integers: wrapping, accumulated in the output type (matmul_int.c). */
int emlx_cpu_gemm_int(const emlx_gemm *g, bool threaded);

/* Scratch memory from the engine's allocator (cached, huge pages for large
 * sizes), so that packing buffers cost no page faults in steady state. */
void *emlx_cpu_mm_scratch(size_t nbytes, emlx_buffer **holder);

/* ---- per-ISA pieces ------------------------------------------------------- */

/* f32 products small enough that a BLAS call's set-up dominates: N <= 64,
 * B with unit column stride (simd/matmul_small_avx512.c). */
#define EMLX_MM_SMALL_WORK 32768
void emlx_mm_small_f32_avx512(const emlx_gemm *g);
/* `count` such products, element e at g->a + e * a_bs, g->b + e * b_bs
 * (element strides) and g->c + e * M * ldc. */
void emlx_mm_small_f32_batch_avx512(const emlx_gemm *g, int64_t count, int64_t a_bs, int64_t b_bs);
/* The same on AVX2 + FMA (simd/matmul_small_avx2.c). */
void emlx_mm_small_f32_avx2(const emlx_gemm *g);
void emlx_mm_small_f32_batch_avx2(const emlx_gemm *g, int64_t count, int64_t a_bs, int64_t b_bs);

/* Integer GEMM over a range of C rows [i0, i1), all of N and K; elements
 * are treated as unsigned of their width (wrapping arithmetic). */
typedef void (*emlx_mm_int_rows_fn)(const emlx_gemm *g, int64_t i0, int64_t i1, void *scratch);
extern const emlx_mm_int_rows_fn emlx_mm_int_rows_scalar[4], emlx_mm_int_rows_avx2[4],
    emlx_mm_int_rows_avx512[4]; /* by log2 of the element size */
/* Bytes of scratch one call of an int_rows function needs. */
#define EMLX_MM_INT_KC 256
#define EMLX_MM_INT_NC 1024
#define EMLX_MM_INT_SCRATCH (EMLX_MM_INT_KC * EMLX_MM_INT_NC * 8)

/* A low-precision (f16/bf16) kernel: packs whole-K panels of A (MR rows) and
 * B (NR columns), K padded with zeros to a multiple of KU, and a micro-kernel
 * that computes one MR x NR block of C over the padded K in f32 and writes
 * the valid mv x nv corner of it, rounded to the output dtype. The driver
 * also names pf_bytes at pf (pf may be NULL) that it will read soon (a slice
 * of the next B panel): a kernel may prefetch them into L2 as it goes. */
typedef struct emlx_mm_lowp_kernel {
  const char *name;
  int mr, nr, ku;
  int a_pad;                       /* extra elements per packed A row (breaks 4K aliasing) */
  size_t a_panel_elt, b_panel_elt; /* bytes per packed element */
  /* Rows [i0, i0 + mr) of A (rows past M are zero) into dst. */
  void (*pack_a)(const emlx_gemm *g, int64_t i0, int64_t kpad, void *dst);
  /* Columns [j0, j0 + nr) of B (columns past N are zero), rows [k0, k1) of
   * the padded K (multiples of ku), into the panel at dst. The driver packs
   * a chunk of k for many panels in turn, so B is read row by row. */
  void (*pack_b)(const emlx_gemm *g, int64_t j0, int64_t k0, int64_t k1, void *dst);
  void (*micro)(int64_t kpad, const void *ap, const void *bp, void *c, int64_t ldc, int mv, int nv,
                emlx_dtype dtype, const void *pf, int64_t pf_bytes);
  /* Optional: the same over steps [k0, k1) of the padded K only,
   * accumulating in the f32 MR x NR block acc (zeroed first when first;
   * rounded into c instead of stored to acc when last). The driver then
   * walks K in chunks of kc, so a chunk of the B panel stays in L1 while
   * every A micro-panel of the block passes it. */
  void (*micro_part)(int64_t k0, int64_t k1, const void *ap, const void *bp, float *acc, bool first,
                     bool last, void *c, int64_t ldc, int mv, int nv, emlx_dtype dtype,
                     const void *pf, int64_t pf_bytes);
  int64_t kc;
  /* Per-thread set-up and tear-down around a run of micro calls (AMX tile
   * configuration); NULL when not needed. */
  void (*begin)(void);
  void (*end)(void);
} emlx_mm_lowp_kernel;

/* The kernels compiled for this machine (NULL when the ISA or the OS lacks
 * what they need). */
const emlx_mm_lowp_kernel *emlx_mm_lowp_generic(emlx_dtype dtype);
const emlx_mm_lowp_kernel *emlx_mm_lowp_avx2(emlx_dtype dtype); /* f32 FMA, AVX2 */

/* f16/bf16 products large enough for sgemm on widened chunks
 * (matmul_lowp_blas.c, AVX2 level only): returns 1 when it ran the
 * product, 0 when it does not apply, -1 on error. */
int emlx_cpu_gemm_lowp_blas(const emlx_gemm *g, bool threaded);
/* n f16/bf16 values at src, element stride `stride` (any sign), to f32 at
 * dst; and n floats rounded to nearest even (NaN stays NaN) into the 16-bit
 * type at dst (AVX2 + F16C). */
void emlx_mm_widen_avx2(const void *src, int64_t n, int64_t stride, float *dst, emlx_dtype dt);
void emlx_mm_narrow_avx2(const float *src, int64_t n, void *dst, emlx_dtype dt);

/* f16/bf16 products of at most EMLX_MM_GEMV_MAX_M rows, straight from B
 * (matmul_gemv_body.h; AVX2's b_cs == 1 walk in matmul_gemv_avx2.c):
 * columns [j0, j1) of C. gemv: B's columns contiguous
 * (b_cs == 1); gemv_t: B's rows contiguous (b_rs == 1), with A's rows
 * widened to f32 in af (M x K, contiguous). */
#define EMLX_MM_GEMV_MAX_M 4
void emlx_mm_gemv_lowp_avx2(const emlx_gemm *g, int64_t j0, int64_t j1);
void emlx_mm_gemv_lowp_avx512(const emlx_gemm *g, int64_t j0, int64_t j1);
void emlx_mm_gemv_t_lowp_avx2(const emlx_gemm *g, const float *af, int64_t j0, int64_t j1);
void emlx_mm_gemv_t_lowp_avx512(const emlx_gemm *g, const float *af, int64_t j0, int64_t j1);
const emlx_mm_lowp_kernel *emlx_mm_lowp_avx512(emlx_dtype dtype); /* f32 FMA */
const emlx_mm_lowp_kernel *emlx_mm_lowp_avx512bf16(void);         /* vdpbf16ps */
const emlx_mm_lowp_kernel *emlx_mm_lowp_amx(void);                /* AMX-BF16 */
/* True when this CPU has AVX-512 BF16 / AMX-BF16 and (for AMX) the OS
 * granted this process the tile state (asked once). */
bool emlx_mm_cpu_has_avx512bf16(void);
bool emlx_mm_amx_usable(void);

#endif
