/* linalg_lapack.c — LAPACK (through LAPACKE's _work entry points, column
 * major) and CBLAS (row major) for the linalg kernels, dispatched on the
 * dtype: s* for float32, d* for float64, c* for complex64, z* for complex128.
 *
 * The _work entry points with LAPACK_COL_MAJOR call the Fortran routine
 * directly: no hidden transposes, no hidden allocations (workspace comes
 * from the caller, sized by the *_query functions once per kernel call).
 * This is the only file that sees lapacke.h and cblas.h (and complex.h,
 * which they include). */
#include <cblas.h>
#include <lapacke.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>

#include "linalg_cpu.h"

_Static_assert(sizeof(lapack_int) == sizeof(int), "EMLX expects LAPACK with 32-bit integers");
_Static_assert(sizeof(lapack_complex_float) == 8, "complex64 is two floats");

_Static_assert(sizeof(lapack_complex_double) == 16, "complex128 is two doubles");

typedef lapack_complex_float cf;
typedef lapack_complex_double zc;

bool la_fits_int(int64_t rows, int64_t cols) {
  return rows <= INT_MAX && cols <= INT_MAX && (rows == 0 || cols <= INT_MAX / rows);
}

/* A workspace size LAPACK reported as a floating-point value; single
 * precision may round it down, so leave a margin. -1 if it does not fit. */
static int64_t lwork_from(double v) {
  if (!(v >= 0) || v > (double)INT_MAX)
    return -1;
  double padded = ceil(v + v * 0x1p-20) + 64.0;
  return padded > (double)INT_MAX ? (int64_t)INT_MAX : (int64_t)padded;
}

static int lmax1(int v) { return v > 1 ? v : 1; }

int la_potrf(emlx_dtype dt, char uplo, int n, void *a, int lda) {
  switch (dt) {
  case EMLX_FLOAT32:
    return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda);
  case EMLX_FLOAT64:
    return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda);
  case EMLX_COMPLEX128:
    return LAPACKE_zpotrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda);
  default:
    return LAPACKE_cpotrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda);
  }
}

int la_trtri(emlx_dtype dt, char uplo, int n, void *a, int lda) {
  switch (dt) {
  case EMLX_FLOAT32:
    return LAPACKE_strtri_work(LAPACK_COL_MAJOR, uplo, 'N', n, a, lda);
  case EMLX_FLOAT64:
    return LAPACKE_dtrtri_work(LAPACK_COL_MAJOR, uplo, 'N', n, a, lda);
  case EMLX_COMPLEX128:
    return LAPACKE_ztrtri_work(LAPACK_COL_MAJOR, uplo, 'N', n, a, lda);
  default:
    return LAPACKE_ctrtri_work(LAPACK_COL_MAJOR, uplo, 'N', n, a, lda);
  }
}

int la_getrf(emlx_dtype dt, int m, int n, void *a, int lda, int *ipiv) {
  switch (dt) {
  case EMLX_FLOAT32:
    return LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, m, n, a, lda, ipiv);
  case EMLX_FLOAT64:
    return LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, n, a, lda, ipiv);
  case EMLX_COMPLEX128:
    return LAPACKE_zgetrf_work(LAPACK_COL_MAJOR, m, n, a, lda, ipiv);
  default:
    return LAPACKE_cgetrf_work(LAPACK_COL_MAJOR, m, n, a, lda, ipiv);
  }
}

/* ---- workspace queries ------------------------------------------------------------- */

/* Where LAPACK leaves a workspace size (one element of the dtype). */
typedef union la_query {
  float f[4];
  double d[2];
} la_query;

/* Reads the optimal work size LAPACK left in q. */
static double query_value(emlx_dtype dt, const la_query *q) {
  /* complex: the real part */
  return dt == EMLX_FLOAT64 || dt == EMLX_COMPLEX128 ? q->d[0] : (double)q->f[0];
}

static int set_work(la_work *w, double work, double rwork, double iwork) {
  w->work = lwork_from(work);
  w->rwork = lwork_from(rwork);
  w->iwork = lwork_from(iwork);
  return w->work < 0 || w->rwork < 0 || w->iwork < 0 ? -1 : 0;
}

int la_getri_query(emlx_dtype dt, int n, la_work *w) {
  la_query q = {{0}};
  int info, ld = lmax1(n);
  switch (dt) {
  case EMLX_FLOAT32:
    info = LAPACKE_sgetri_work(LAPACK_COL_MAJOR, n, NULL, ld, NULL, q.f, -1);
    break;
  case EMLX_FLOAT64:
    info = LAPACKE_dgetri_work(LAPACK_COL_MAJOR, n, NULL, ld, NULL, q.d, -1);
    break;
  case EMLX_COMPLEX128:
    info = LAPACKE_zgetri_work(LAPACK_COL_MAJOR, n, NULL, ld, NULL, (zc *)q.d, -1);
    break;
  default:
    info = LAPACKE_cgetri_work(LAPACK_COL_MAJOR, n, NULL, ld, NULL, (cf *)q.f, -1);
    break;
  }
  return info != 0 ? -1 : set_work(w, query_value(dt, &q), 0, 0);
}

int la_getri(emlx_dtype dt, int n, void *a, int lda, const int *ipiv, void *work, int lwork) {
  switch (dt) {
  case EMLX_FLOAT32:
    return LAPACKE_sgetri_work(LAPACK_COL_MAJOR, n, a, lda, ipiv, work, lwork);
  case EMLX_FLOAT64:
    return LAPACKE_dgetri_work(LAPACK_COL_MAJOR, n, a, lda, ipiv, work, lwork);
  case EMLX_COMPLEX128:
    return LAPACKE_zgetri_work(LAPACK_COL_MAJOR, n, a, lda, ipiv, work, lwork);
  default:
    return LAPACKE_cgetri_work(LAPACK_COL_MAJOR, n, a, lda, ipiv, work, lwork);
  }
}

int la_geqrf_query(emlx_dtype dt, int m, int n, la_work *w) {
  la_query q = {{0}};
  int info, ld = lmax1(m);
  switch (dt) {
  case EMLX_FLOAT32:
    info = LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, m, n, NULL, ld, NULL, q.f, -1);
    break;
  case EMLX_FLOAT64:
    info = LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, NULL, ld, NULL, q.d, -1);
    break;
  case EMLX_COMPLEX128:
    info = LAPACKE_zgeqrf_work(LAPACK_COL_MAJOR, m, n, NULL, ld, NULL, (zc *)q.d, -1);
    break;
  default:
    info = LAPACKE_cgeqrf_work(LAPACK_COL_MAJOR, m, n, NULL, ld, NULL, (cf *)q.f, -1);
    break;
  }
  return info != 0 ? -1 : set_work(w, query_value(dt, &q), 0, 0);
}

int la_geqrf(emlx_dtype dt, int m, int n, void *a, int lda, void *tau, void *work, int lwork) {
  switch (dt) {
  case EMLX_FLOAT32:
    return LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, work, lwork);
  case EMLX_FLOAT64:
    return LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, work, lwork);
  case EMLX_COMPLEX128:
    return LAPACKE_zgeqrf_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, work, lwork);
  default:
    return LAPACKE_cgeqrf_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, work, lwork);
  }
}

int la_orgqr_query(emlx_dtype dt, int m, int n, int k, la_work *w) {
  la_query q = {{0}};
  int info, ld = lmax1(m);
  switch (dt) {
  case EMLX_FLOAT32:
    info = LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, m, n, k, NULL, ld, NULL, q.f, -1);
    break;
  case EMLX_FLOAT64:
    info = LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, n, k, NULL, ld, NULL, q.d, -1);
    break;
  case EMLX_COMPLEX128:
    info = LAPACKE_zungqr_work(LAPACK_COL_MAJOR, m, n, k, NULL, ld, NULL, (zc *)q.d, -1);
    break;
  default:
    info = LAPACKE_cungqr_work(LAPACK_COL_MAJOR, m, n, k, NULL, ld, NULL, (cf *)q.f, -1);
    break;
  }
  return info != 0 ? -1 : set_work(w, query_value(dt, &q), 0, 0);
}

int la_orgqr(emlx_dtype dt, int m, int n, int k, void *a, int lda, const void *tau, void *work,
             int lwork) {
  switch (dt) {
  case EMLX_FLOAT32:
    return LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, m, n, k, a, lda, tau, work, lwork);
  case EMLX_FLOAT64:
    return LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, n, k, a, lda, tau, work, lwork);
  case EMLX_COMPLEX128:
    return LAPACKE_zungqr_work(LAPACK_COL_MAJOR, m, n, k, a, lda, tau, work, lwork);
  default:
    return LAPACKE_cungqr_work(LAPACK_COL_MAJOR, m, n, k, a, lda, tau, work, lwork);
  }
}

/* gesdd's leading dimensions for a query: the smallest LAPACK accepts. */
static void gesdd_lds(char jobz, int m, int n, int *ldu, int *ldvt) {
  int mn = m < n ? m : n;
  *ldu = lmax1(m);
  *ldvt = jobz == 'A' ? lmax1(n) : jobz == 'S' ? lmax1(mn) : 1;
}

int la_gesdd_query(emlx_dtype dt, char jobz, int m, int n, la_work *w) {
  la_query q = {{0}};
  int ldu, ldvt, info, lda = lmax1(m);
  int64_t mn = m < n ? m : n, mx = m > n ? m : n;
  gesdd_lds(jobz, m, n, &ldu, &ldvt);
  double rwork = 0;
  switch (dt) {
  case EMLX_FLOAT32:
    info = LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, NULL, lda, NULL, NULL, ldu, NULL, ldvt,
                               q.f, -1, NULL);
    break;
  case EMLX_FLOAT64:
    info = LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, NULL, lda, NULL, NULL, ldu, NULL, ldvt,
                               q.d, -1, NULL);
    break;
  default:
    if (dt == EMLX_COMPLEX128)
      info = LAPACKE_zgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, NULL, lda, NULL, NULL, ldu, NULL,
                                 ldvt, (zc *)q.d, -1, NULL, NULL);
    else
      info = LAPACKE_cgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, NULL, lda, NULL, NULL, ldu, NULL,
                                 ldvt, (cf *)q.f, -1, NULL, NULL);
    /* LAPACK's documented bound (3.7+; the larger of the historical ones). */
    rwork = jobz == 'N'
                ? 7.0 * (double)mn
                : (double)mn *
                      (double)(5 * mn + 7 > 2 * mx + 2 * mn + 1 ? 5 * mn + 7 : 2 * mx + 2 * mn + 1);
    break;
  }
  return info != 0 ? -1 : set_work(w, query_value(dt, &q), rwork, 8.0 * (double)mn);
}

int la_gesdd(emlx_dtype dt, char jobz, int m, int n, void *a, int lda, void *s, void *u, int ldu,
             void *vt, int ldvt, const la_work *w, void *work, void *rwork, int *iwork) {
  int lwork = (int)w->work;
  switch (dt) {
  case EMLX_FLOAT32:
    return LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work,
                               lwork, iwork);
  case EMLX_FLOAT64:
    return LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work,
                               lwork, iwork);
  case EMLX_COMPLEX128:
    return LAPACKE_zgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work,
                               lwork, rwork, iwork);
  default:
    return LAPACKE_cgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work,
                               lwork, rwork, iwork);
  }
}

int la_syevd_query(emlx_dtype dt, char jobz, int n, la_work *w) {
  la_query q = {{0}}, rq = {{0}};
  int iq = 0, info, lda = lmax1(n);
  switch (dt) {
  case EMLX_FLOAT32:
    info = LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, jobz, 'L', n, NULL, lda, NULL, q.f, -1, &iq, -1);
    break;
  case EMLX_FLOAT64:
    info = LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, jobz, 'L', n, NULL, lda, NULL, q.d, -1, &iq, -1);
    break;
  case EMLX_COMPLEX128:
    info = LAPACKE_zheevd_work(LAPACK_COL_MAJOR, jobz, 'L', n, NULL, lda, NULL, (zc *)q.d, -1, rq.d,
                               -1, &iq, -1);
    break;
  default:
    info = LAPACKE_cheevd_work(LAPACK_COL_MAJOR, jobz, 'L', n, NULL, lda, NULL, (cf *)q.f, -1, rq.f,
                               -1, &iq, -1);
    break;
  }
  double rwork = dt == EMLX_COMPLEX64 ? (double)rq.f[0] : dt == EMLX_COMPLEX128 ? rq.d[0] : 0.0;
  return info != 0 ? -1 : set_work(w, query_value(dt, &q), rwork, (double)iq);
}

int la_syevd(emlx_dtype dt, char jobz, char uplo, int n, void *a, int lda, void *eig,
             const la_work *w, void *work, void *rwork, int *iwork) {
  int lwork = (int)w->work, lrwork = (int)w->rwork, liwork = (int)w->iwork;
  switch (dt) {
  case EMLX_FLOAT32:
    return LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, eig, work, lwork, iwork,
                               liwork);
  case EMLX_FLOAT64:
    return LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, eig, work, lwork, iwork,
                               liwork);
  case EMLX_COMPLEX128:
    return LAPACKE_zheevd_work(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, eig, work, lwork, rwork,
                               lrwork, iwork, liwork);
  default:
    return LAPACKE_cheevd_work(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, eig, work, lwork, rwork,
                               lrwork, iwork, liwork);
  }
}

/* ---- CBLAS, row-major ------------------------------------------------------------- */

static enum CBLAS_TRANSPOSE cb_trans(char t) {
  return t == 'N' ? CblasNoTrans : t == 'T' ? CblasTrans : CblasConjTrans;
}

void la_trsm(emlx_dtype dt, char side, char uplo, char trans, char diag, int m, int n,
             const void *a, int lda, void *b, int ldb) {
  enum CBLAS_SIDE s = side == 'L' ? CblasLeft : CblasRight;
  enum CBLAS_UPLO u = uplo == 'L' ? CblasLower : CblasUpper;
  enum CBLAS_DIAG d = diag == 'U' ? CblasUnit : CblasNonUnit;
  enum CBLAS_TRANSPOSE t = cb_trans(trans);
  switch (dt) {
  case EMLX_FLOAT32:
    cblas_strsm(CblasRowMajor, s, u, t, d, m, n, 1.0f, a, lda, b, ldb);
    break;
  case EMLX_FLOAT64:
    cblas_dtrsm(CblasRowMajor, s, u, t, d, m, n, 1.0, a, lda, b, ldb);
    break;
  case EMLX_COMPLEX128: {
    const double one[2] = {1.0, 0.0};
    cblas_ztrsm(CblasRowMajor, s, u, t, d, m, n, one, a, lda, b, ldb);
    break;
  }
  default: {
    const float one[2] = {1.0f, 0.0f};
    cblas_ctrsm(CblasRowMajor, s, u, t, d, m, n, one, a, lda, b, ldb);
    break;
  }
  }
}

void la_trsv(emlx_dtype dt, char uplo, char trans, char diag, int n, const void *a, int lda,
             void *x, int incx) {
  enum CBLAS_UPLO u = uplo == 'L' ? CblasLower : CblasUpper;
  enum CBLAS_DIAG d = diag == 'U' ? CblasUnit : CblasNonUnit;
  enum CBLAS_TRANSPOSE t = cb_trans(trans);
  switch (dt) {
  case EMLX_FLOAT32:
    cblas_strsv(CblasRowMajor, u, t, d, n, a, lda, x, incx);
    break;
  case EMLX_FLOAT64:
    cblas_dtrsv(CblasRowMajor, u, t, d, n, a, lda, x, incx);
    break;
  case EMLX_COMPLEX128:
    cblas_ztrsv(CblasRowMajor, u, t, d, n, a, lda, x, incx);
    break;
  default:
    cblas_ctrsv(CblasRowMajor, u, t, d, n, a, lda, x, incx);
    break;
  }
}

void la_gemm(emlx_dtype dt, char ta, char tb, int m, int n, int k, const void *a, int lda,
             const void *b, int ldb, void *c, int ldc) {
  enum CBLAS_TRANSPOSE at = cb_trans(ta), bt = cb_trans(tb);
  switch (dt) {
  case EMLX_FLOAT32:
    cblas_sgemm(CblasRowMajor, at, bt, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
    break;
  case EMLX_FLOAT64:
    cblas_dgemm(CblasRowMajor, at, bt, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
    break;
  case EMLX_COMPLEX128: {
    const double one[2] = {1.0, 0.0}, zero[2] = {0.0, 0.0};
    cblas_zgemm(CblasRowMajor, at, bt, m, n, k, one, a, lda, b, ldb, zero, c, ldc);
    break;
  }
  default: {
    const float one[2] = {1.0f, 0.0f}, zero[2] = {0.0f, 0.0f};
    cblas_cgemm(CblasRowMajor, at, bt, m, n, k, one, a, lda, b, ldb, zero, c, ldc);
    break;
  }
  }
}

/* ---- OpenBLAS's own threads ------------------------------------------------------- */

/* OpenBLAS (the pthreads build) threads many BLAS-2 calls whatever their
 * size (symv, trmv, ...: all over syevd, gesdd, geqrf), and LAPACK on small
 * and medium matrices makes thousands of them: its thread hand-offs then
 * cost more than the work (measured: syevd of 16 x 16 twice as slow, of
 * 512 x 512 no faster on two cores, several times slower on a loaded
 * machine). OpenBLAS 0.3.21 has no per-call or per-thread switch, so the
 * process-wide thread count drops to one while any such job runs (counted,
 * so concurrent jobs nest) and comes back after the last one. A product
 * running meanwhile on another thread runs single-threaded too. */
static pthread_mutex_t g_single_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_single_users, g_single_saved;

void la_blas_single_begin(void) {
  pthread_mutex_lock(&g_single_mu);
  if (g_single_users++ == 0) {
    g_single_saved = openblas_get_num_threads();
    if (g_single_saved > 1)
      openblas_set_num_threads(1);
  }
  pthread_mutex_unlock(&g_single_mu);
}

void la_blas_single_end(void) {
  pthread_mutex_lock(&g_single_mu);
  if (--g_single_users == 0 && g_single_saved > 1)
    openblas_set_num_threads(g_single_saved);
  pthread_mutex_unlock(&g_single_mu);
}
