/* matmul_blas.c — f32, f64, c64 and c128 products through CBLAS (OpenBLAS):
 * sgemm, dgemm, cgemm, zgemm (and their GEMV).
 *
 * An operand whose strides BLAS can express (unit stride along one of its
 * two axes, a leading dimension at least the other extent) is passed in
 * place with the matching transpose flag; any other view (negative or
 * doubly strided) is first copied into a row-major scratch buffer. A
 * product with one row or one column goes to GEMV, which OpenBLAS runs far
 * faster than a degenerate GEMM.
 *
 * Threads: OpenBLAS (Debian's pthreads build) threads a product itself when
 * it is large enough and stays on the calling thread otherwise; matmul.c
 * therefore splits batches of small products over our pool and leaves big
 * ones to OpenBLAS, so the two pools never run nested. */
#include <cblas.h>
#include <limits.h>
#include <string.h>

#include "matmul.h"

typedef struct blas_operand {
  const void *p;
  enum CBLAS_TRANSPOSE trans;
  int64_t ld;
} blas_operand;

/* Fills op for a rows x cols view with strides (rs, cs); false when BLAS
 * cannot read it in place. */
static bool blas_view(const void *p, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                      blas_operand *op) {
  op->p = p;
  int64_t min_rows = rows > 1 ? rows : 1, min_cols = cols > 1 ? cols : 1;
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= min_cols)) {
    op->trans = CblasNoTrans;
    op->ld = rows == 1 ? min_cols : rs;
  } else if ((rs == 1 || rows == 1) && (cols == 1 || cs >= min_rows)) {
    op->trans = CblasTrans;
    op->ld = cols == 1 ? min_rows : cs;
  } else {
    return false;
  }
  return op->ld <= INT_MAX;
}

/* Copies a rows x cols strided view into dst (row-major). */
static void copy_rows(const void *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                      size_t esize, void *dst) {
  const char *s = src;
  char *d = dst;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      memcpy(d + (i * cols + j) * (int64_t)esize, s + (i * rs + j * cs) * (int64_t)esize, esize);
}

/* An operand as BLAS wants it, copying into scratch if needed. */
static int prepare(const void *p, int64_t rows, int64_t cols, int64_t rs, int64_t cs, size_t esize,
                   blas_operand *op, emlx_buffer **scratch) {
  *scratch = NULL;
  if (blas_view(p, rows, cols, rs, cs, op))
    return 0;
  void *tmp = emlx_cpu_mm_scratch((size_t)(rows * cols) * esize, scratch);
  if (!tmp)
    return -1;
  copy_rows(p, rows, cols, rs, cs, esize, tmp);
  op->p = tmp;
  op->trans = CblasNoTrans;
  op->ld = cols > 1 ? cols : 1;
  return op->ld <= INT_MAX ? 0 : EMLX_FAIL("matmul: dimension too large for BLAS");
}

/* y = op(mat) x through GEMV, when one side of the product is a vector. */
static void gemv(emlx_dtype dt, const blas_operand *mat, int64_t rows, int64_t cols, const void *x,
                 int64_t incx, void *y, int64_t incy) {
  /* mat holds a rows x cols matrix (as viewed by trans); row-major GEMV
   * wants the stored matrix's extents. */
  int sr = (int)(mat->trans == CblasNoTrans ? rows : cols);
  int sc = (int)(mat->trans == CblasNoTrans ? cols : rows);
  int ld = (int)mat->ld;
  switch (dt) {
  case EMLX_FLOAT32:
    cblas_sgemv(CblasRowMajor, mat->trans, sr, sc, 1.0f, mat->p, ld, x, (int)incx, 0.0f, y,
                (int)incy);
    break;
  case EMLX_FLOAT64:
    cblas_dgemv(CblasRowMajor, mat->trans, sr, sc, 1.0, mat->p, ld, x, (int)incx, 0.0, y,
                (int)incy);
    break;
  case EMLX_COMPLEX128: {
    const double one[2] = {1.0, 0.0}, zero[2] = {0.0, 0.0};
    cblas_zgemv(CblasRowMajor, mat->trans, sr, sc, one, mat->p, ld, x, (int)incx, zero, y,
                (int)incy);
    break;
  }
  default: {
    const float one[2] = {1.0f, 0.0f}, zero[2] = {0.0f, 0.0f};
    cblas_cgemv(CblasRowMajor, mat->trans, sr, sc, one, mat->p, ld, x, (int)incx, zero, y,
                (int)incy);
    break;
  }
  }
}

int emlx_cpu_gemm_blas(const emlx_gemm *g) {
  if (g->M > INT_MAX || g->N > INT_MAX || g->K > INT_MAX)
    return EMLX_FAIL("matmul: dimension too large for BLAS (%lld x %lld x %lld)", (long long)g->M,
                     (long long)g->N, (long long)g->K);
  size_t esize = emlx_dtype_size(g->dtype);
  /* Vector cases: the vector needs a positive stride (BLAS reads a negative
   * increment from the far end). */
  if (g->M == 1 && (g->a_cs > 0 || g->K == 1)) {
    blas_operand bt;
    emlx_buffer *sb;
    if (prepare(g->b, g->K, g->N, g->b_rs, g->b_cs, esize, &bt, &sb) != 0)
      return -1;
    /* c (1 x N) = a (1 x K) B: y = B^T x. */
    bt.trans = bt.trans == CblasNoTrans ? CblasTrans : CblasNoTrans;
    gemv(g->dtype, &bt, g->N, g->K, g->a, g->K == 1 ? 1 : g->a_cs, g->c, 1);
    emlx__buffer_release(sb);
    return 0;
  }
  if (g->N == 1 && (g->b_rs > 0 || g->K == 1)) {
    blas_operand at;
    emlx_buffer *sa;
    if (prepare(g->a, g->M, g->K, g->a_rs, g->a_cs, esize, &at, &sa) != 0)
      return -1;
    gemv(g->dtype, &at, g->M, g->K, g->b, g->K == 1 ? 1 : g->b_rs, g->c, g->ldc);
    emlx__buffer_release(sa);
    return 0;
  }
  blas_operand A, B;
  emlx_buffer *sa = NULL, *sb = NULL;
  if (prepare(g->a, g->M, g->K, g->a_rs, g->a_cs, esize, &A, &sa) != 0 ||
      prepare(g->b, g->K, g->N, g->b_rs, g->b_cs, esize, &B, &sb) != 0) {
    emlx__buffer_release(sa);
    return -1;
  }
  int M = (int)g->M, N = (int)g->N, K = (int)g->K, lda = (int)A.ld, ldb = (int)B.ld,
      ldc = (int)g->ldc;
  switch (g->dtype) {
  case EMLX_FLOAT32:
    cblas_sgemm(CblasRowMajor, A.trans, B.trans, M, N, K, 1.0f, A.p, lda, B.p, ldb, 0.0f, g->c,
                ldc);
    break;
  case EMLX_FLOAT64:
    cblas_dgemm(CblasRowMajor, A.trans, B.trans, M, N, K, 1.0, A.p, lda, B.p, ldb, 0.0, g->c, ldc);
    break;
  case EMLX_COMPLEX128: {
    const double one[2] = {1.0, 0.0}, zero[2] = {0.0, 0.0};
    cblas_zgemm(CblasRowMajor, A.trans, B.trans, M, N, K, one, A.p, lda, B.p, ldb, zero, g->c, ldc);
    break;
  }
  default: {
    const float one[2] = {1.0f, 0.0f}, zero[2] = {0.0f, 0.0f};
    cblas_cgemm(CblasRowMajor, A.trans, B.trans, M, N, K, one, A.p, lda, B.p, ldb, zero, g->c, ldc);
    break;
  }
  }
  emlx__buffer_release(sa);
  emlx__buffer_release(sb);
  return 0;
}
