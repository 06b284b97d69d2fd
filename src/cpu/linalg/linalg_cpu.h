/* linalg_cpu.h — what the linalg kernels (src/cpu/linalg_*.c) share.
 *
 * Three layers:
 *   - la_* LAPACK / CBLAS calls dispatched on the dtype (f32, f64, c64, c128), in
 *     linalg_lapack.c, the only file that includes lapacke.h and cblas.h
 *     (and with them complex.h). LAPACK calls are column-major; CBLAS calls
 *     here are row-major.
 *   - the batch driver la_run: one callback per matrix, over the pool when
 *     the matrices are small, with per-worker scratch and failures reported
 *     from the lowest failing batch index (linalg_util.c);
 *   - copies between strided views and dense row- or column-major scratch.
 *
 * Layout trick used throughout: a dense row-major m x n matrix is, read as
 * column-major, its transpose (n x m, leading dimension n). Kernels factor
 * that transpose whenever the result is as useful (inv, solve, cholesky,
 * tri_inv, svd, eigh), which saves the transposing copies LAPACK wrappers
 * usually make.
 *
 * Outputs never take over an input's buffer (no donation): a kernel that
 * fails half-way (a singular matrix at batch index 17) must leave its inputs
 * intact, since the node stays lazy and may be evaluated again. */
#ifndef EMLX_CPU_LINALG_CPU_H
#define EMLX_CPU_LINALG_CPU_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "kernels.h"
#include "params_linalg.h"

/* ---- dtype facts ----------------------------------------------------------- */

static inline size_t la_esize(emlx_dtype dt) {
  return dt == EMLX_FLOAT32 ? 4 : dt == EMLX_COMPLEX128 ? 16 : 8;
}
/* Singular values and eigenvalues: float32 for complex64, float64 for
 * complex128. */
static inline emlx_dtype la_real_dtype(emlx_dtype dt) { return emlx_dtype_real_part(dt); }
static inline bool la_is_complex(emlx_dtype dt) {
  return dt == EMLX_COMPLEX64 || dt == EMLX_COMPLEX128;
}
/* Machine epsilon of the dtype's real part. */
static inline double la_eps(emlx_dtype dt) {
  return dt == EMLX_FLOAT64 || dt == EMLX_COMPLEX128 ? 0x1p-52 : 0x1p-23;
}

/* Scratch carving: sizes rounded up to 64 bytes. */
static inline size_t la_align(size_t bytes) { return (bytes + 63) & ~(size_t)63; }

/* ---- LAPACK / CBLAS by dtype (linalg_lapack.c) ------------------------------
 * Sizes are int (LAPACK's 32-bit lapack_int); callers check the bounds with
 * la_fits_int first. LAPACK routines return their INFO. Workspace counts are
 * in elements: work of the dtype, rwork of its real type, iwork of int. */

typedef struct la_work {
  int64_t work, rwork, iwork;
} la_work;

/* True when every extent and the element count of rows x cols fit an int. */
bool la_fits_int(int64_t rows, int64_t cols);

int la_potrf(emlx_dtype dt, char uplo, int n, void *a, int lda);
int la_trtri(emlx_dtype dt, char uplo, int n, void *a, int lda);
int la_getrf(emlx_dtype dt, int m, int n, void *a, int lda, int *ipiv);
/* Workspace queries return 0, or -1 when LAPACK's answer does not fit. */
int la_getri_query(emlx_dtype dt, int n, la_work *w);
int la_getri(emlx_dtype dt, int n, void *a, int lda, const int *ipiv, void *work, int lwork);
int la_geqrf_query(emlx_dtype dt, int m, int n, la_work *w);
int la_geqrf(emlx_dtype dt, int m, int n, void *a, int lda, void *tau, void *work, int lwork);
/* orgqr for real dtypes, ungqr for complex. */
int la_orgqr_query(emlx_dtype dt, int m, int n, int k, la_work *w);
int la_orgqr(emlx_dtype dt, int m, int n, int k, void *a, int lda, const void *tau, void *work,
             int lwork);
/* gesdd; s is of the real dtype; rwork only for complex. */
int la_gesdd_query(emlx_dtype dt, char jobz, int m, int n, la_work *w);
int la_gesdd(emlx_dtype dt, char jobz, int m, int n, void *a, int lda, void *s, void *u, int ldu,
             void *vt, int ldvt, const la_work *w, void *work, void *rwork, int *iwork);
/* syevd for real dtypes, heevd for complex; w of the real dtype. */
int la_syevd_query(emlx_dtype dt, char jobz, int n, la_work *w);
int la_syevd(emlx_dtype dt, char jobz, char uplo, int n, void *a, int lda, void *eig,
             const la_work *w, void *work, void *rwork, int *iwork);

/* Row-major CBLAS. side 'L' / 'R', uplo 'L' / 'U', trans 'N' / 'T' / 'C',
 * diag 'N' / 'U'; alpha is one. */
void la_trsm(emlx_dtype dt, char side, char uplo, char trans, char diag, int m, int n,
             const void *a, int lda, void *b, int ldb);
void la_trsv(emlx_dtype dt, char uplo, char trans, char diag, int n, const void *a, int lda,
             void *x, int incx);
/* c (m x n) = op(a) op(b), alpha one, beta zero; op 'N' / 'T' / 'C'. */
void la_gemm(emlx_dtype dt, char ta, char tb, int m, int n, int k, const void *a, int lda,
             const void *b, int ldb, void *c, int ldc);

/* OpenBLAS single-threaded between begin and end (process-wide, nesting
 * counted; see linalg_lapack.c). */
void la_blas_single_begin(void);
void la_blas_single_end(void);

/* ---- the batch driver (linalg_util.c) ------------------------------------------ */

typedef struct la_job la_job;
/* Computes matrix b with `scratch` (job->scratch_bytes, 64-byte aligned,
 * private to the calling thread). Returns 0, or -1 after la_fail(). */
typedef int (*la_matrix_fn)(la_job *job, int64_t b, void *scratch);

struct la_job {
  const char *op;       /* for messages: the primitive's name */
  int64_t nbatch;       /* matrices */
  int64_t n;            /* largest matrix extent: decides the threading */
  size_t scratch_bytes; /* per worker */
  la_matrix_fn fn;
  void *ctx;
  /* failure of the lowest batch index (filled by la_fail) */
  atomic_flag lock;
  _Atomic int64_t fail_batch;
  char msg[256];
};

/* Sets up a job (no failure recorded yet). */
void la_job_init(la_job *job, const char *op, int64_t nbatch, int64_t n, size_t scratch_bytes,
                 la_matrix_fn fn, void *ctx);
/* Runs fn over every matrix; 0, or -1 with the error of the lowest failing
 * batch index set on the calling thread. Matrices past a failure may be
 * skipped. */
int la_run(la_job *job);
/* Records the failure of matrix b: "<op>: the matrix at batch index <b>
 * <what>" (what is printf-style). Returns -1. */
int la_fail(la_job *job, int64_t b, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* -1 with "<op>: r x c matrices are too large for LAPACK (32-bit indices)". */
int la_too_large(const char *op, int64_t rows, int64_t cols);
/* Gives each non-NULL output of the first count a dense row-major buffer. */
int la_alloc_outputs(emlx_array *const *out, int count);

/* ---- matrices of arrays ----------------------------------------------------------- */

/* Matrix b of a READY array (batch = the axes before the last two): its
 * first element, and its row and column strides in elements. */
const void *la_matrix(const emlx_array *a, int64_t b, int64_t *rs, int64_t *cs);
/* Number of matrices (product of the batch axes). */
int64_t la_batch_count(const emlx_array *a);
/* Pointer to matrix b (rows x cols) of a dense row-major output, or NULL
 * when the output was released (out NULL). */
static inline void *la_out_matrix(emlx_array *out, int64_t b, int64_t elems) {
  if (!out)
    return NULL;
  return (char *)emlx__data(out) + (size_t)b * (size_t)elems * emlx_dtype_size(out->dtype);
}

/* Copies a rows x cols matrix, element (i, j) at src + i*rs + j*cs, to
 * dst + i*drs + j*dcs (strides in elements of esize bytes: 4, 8 or 16). No-op
 * when src and dst are the same dense matrix. */
void la_copy(size_t esize, const void *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
             void *dst, int64_t drs, int64_t dcs);
/* True when every element of the dense row-major rows x cols matrix at p
 * is finite; tri > 0 looks only at the upper triangle (diagonal included),
 * tri < 0 only at the lower one. */
bool la_finite(emlx_dtype dt, const void *p, int64_t rows, int64_t cols, int tri);
/* Negates the imaginary parts of count complex values of dt. */
void la_conj(emlx_dtype dt, void *p, int64_t count);
/* Zeroes the strict lower (lower true) or strict upper triangle of a dense
 * row-major rows x cols matrix with row stride ld. */
void la_zero_triangle(size_t esize, void *p, int64_t rows, int64_t cols, int64_t ld, bool lower);
/* Writes the identity into a dense row-major n x n matrix. */
void la_identity(emlx_dtype dt, void *p, int64_t n);
/* Stores one (1 + 0i) at p. */
void la_store_one(emlx_dtype dt, void *p);

#endif
