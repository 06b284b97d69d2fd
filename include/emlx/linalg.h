/* emlx/linalg.h — linear algebra: factorisations, solves, inverses.
 *
 * Every function works on the last two axes of its input (matrices) and
 * repeats over the leading axes (the batch); the inputs may be any view
 * (transposed, sliced with steps, broadcast). Computation goes through
 * LAPACKE's column-major entry points and CBLAS (LAPACK and BLAS from
 * OpenBLAS), one matrix at a time.
 *
 * Dtypes: float32, float64 and complex64 (MLX accepts only float32 and
 * float64 for most of these, and complex64 for svd and eigh; we accept
 * complex64 everywhere LAPACK has a routine for it, which is everywhere).
 * Every other dtype is an error, as in MLX: integer, bool, float16 and
 * bfloat16 inputs must be cast first (emlx_astype); solve and
 * solve_triangular promote their two operands with emlx_promote_types()
 * first and fail unless the promoted dtype is one of the three.
 * Real outputs of complex inputs (singular values, eigenvalues) are
 * float32.
 *
 * Errors at construction (NULL result or -1): a NULL input or output
 * pointer, rank < 2, a non-square matrix where one is needed, a bad dtype,
 * shapes that do not match or broadcast, a bad option. Matrices with more
 * than 2^31 - 1 rows, columns or elements, or whose LAPACK workspace does
 * not fit 32-bit indices, fail at evaluation.
 *
 * Numerical failures are errors of the evaluation (emlx_eval returns -1 and
 * the outputs stay unevaluated), never silent garbage. The message names
 * the op and the flat batch index of the first matrix that failed, e.g.
 * "linalg_inv: the matrix at batch index 3 is singular (pivot 2 of its LU
 * factorisation is zero)":
 *   - cholesky: the matrix is not positive definite;
 *   - inv, solve: the matrix is exactly singular (a zero pivot in its LU
 *     factorisation);
 *   - tri_inv, solve_triangular: a zero on the diagonal (unless
 *     unit_diagonal);
 *   - svd, pinv, eigh: the LAPACK iteration did not converge, or the
 *     matrix holds NaN or infinity (see below).
 * lu does not fail on singular matrices (U simply has a zero pivot), as in
 * MLX and LAPACK.
 *
 * Empty matrices (a zero-sized axis) and empty batches give empty results
 * (and identity matrices where a complete Q or full U / Vt is asked for).
 *
 * Threads: up to order 512, LAPACK runs single-threaded (OpenBLAS's own
 * threads are switched off, process-wide, while such a job runs: they cost
 * more than they bring there) and a batch is split over the engine's pool,
 * one matrix per task; larger matrices run one after the other on the
 * calling thread and OpenBLAS threads the work inside LAPACK. The two pools
 * are never nested.
 *
 * Multi-output functions return 0 and write new references into their
 * output pointers, or return -1 (outputs set to NULL) with
 * emlx_last_error(). An output pointer may be NULL when that result is not
 * wanted (at least one must be given). The outputs of one call are computed
 * together, in one evaluation: evaluating any of them computes all;
 * releasing one early is allowed (the others are still computed, and come
 * out the same).
 *
 * Non-finite values: svd, pinv and eigh (in the triangle it reads) fail on
 * NaN or infinity (LAPACK would reject or loop on them), cholesky reports
 * such a matrix as not positive definite; inv, solve, qr, lu, tri_inv and
 * solve_triangular propagate them (IEEE arithmetic, no error). */
#ifndef EMLX_LINALG_H
#define EMLX_LINALG_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Cholesky factor of a Hermitian positive-definite a (..., n, n): lower L
 * with L L^H = a (upper false; reads only a's lower triangle), or upper U
 * with U^H U = a (upper true; reads only the upper triangle). The other
 * triangle of the result is zero. Fails when a matrix is not positive
 * definite (MLX returns garbage there). */
EMLX_API emlx_array *emlx_linalg_cholesky(emlx_array *a, bool upper);

/* Eigenvalues (ascending, real: (..., n)) and eigenvectors ((..., n, n),
 * column v[:, i] belongs to eigenvalue i, unit norm) of a Hermitian / real
 * symmetric a (..., n, n). uplo "L" (or NULL: the default) reads only the
 * lower triangle, "U" only the upper ("l" and "u" too); anything else is an
 * error. Pass eigenvectors == NULL to compute the eigenvalues alone
 * (cheaper; MLX's eigvalsh); eigenvalues may be NULL too (not both).
 * Eigenvectors are unique only up to sign (phase); they are LAPACK's
 * (syevd / heevd). */
EMLX_API int emlx_linalg_eigh(emlx_array *a, const char *uplo, emlx_array **eigenvalues,
                              emlx_array **eigenvectors);
/* The eigenvalues alone (same as emlx_linalg_eigh with eigenvectors NULL). */
EMLX_API emlx_array *emlx_linalg_eigvalsh(emlx_array *a, const char *uplo);

/* Inverse of a square a (..., n, n). Fails on singular matrices. */
EMLX_API emlx_array *emlx_linalg_inv(emlx_array *a);

/* Inverse of a triangular a (..., n, n): reads only the lower (upper false)
 * or upper (upper true) triangle; the other triangle of the result is zero.
 * Fails when a diagonal element is zero. */
EMLX_API emlx_array *emlx_tri_inv(emlx_array *a, bool upper);

/* LU factorisation with partial pivoting of a (..., M, N), K = min(M, N),
 * as MLX's lu: p uint32 (..., M), L (..., M, K) unit lower triangular, U
 * (..., K, N) upper triangular, with a[i, :] = (L @ U)[p[i], :], i.e.
 * a = L[p, :] @ U. The permutation matrix P with a = P @ L @ U (Nx, scipy)
 * is P[i, j] = (p[i] == j). Singular matrices are not an error. */
EMLX_API int emlx_linalg_lu(emlx_array *a, emlx_array **p, emlx_array **l, emlx_array **u);

/* The compact form, as MLX's lu_factor and LAPACK's getrf: lu (..., M, N)
 * holds L below the diagonal (its unit diagonal implied) and U on and above
 * it; pivots uint32 (..., K) are LAPACK's row interchanges, 0-based: row i
 * was swapped with row pivots[i], for i = 0, 1, ... in turn. */
EMLX_API int emlx_linalg_lu_factor(emlx_array *a, emlx_array **lu, emlx_array **pivots);

/* Options of emlx_linalg_pinv (NULL or zero-initialised: MLX's default). */
typedef struct emlx_pinv_options {
  /* Singular values s <= max(atol, rtol * max(s)) are treated as zero.
   * rtol <= 0 means MLX's default, 10 * max(M, N) * eps of the dtype
   * (float32's eps for complex64); atol <= 0 means 0 (Nx's pinv eps maps
   * to atol). */
  double rtol;
  double atol;
} emlx_pinv_options;

/* Moore-Penrose pseudo-inverse of a (..., M, N): (..., N, M), computed from
 * the reduced SVD as V diag(1/s) U^H over the singular values kept. Fails
 * when the SVD does not converge. */
EMLX_API emlx_array *emlx_linalg_pinv(emlx_array *a, const emlx_pinv_options *opts);

/* QR factorisation of a (..., M, N), K = min(M, N), by Householder
 * reflections (LAPACK geqrf + orgqr / ungqr, as MLX and numpy, so signs
 * agree with them: R's diagonal may be negative). complete false (MLX's
 * only mode, Nx's :reduced): q (..., M, K) with orthonormal columns, r (...,
 * K, N) upper triangular. complete true (Nx's :complete): q (..., M, M)
 * unitary, r (..., M, N). Without q (NULL, or released before
 * evaluation), Q is never formed. */
EMLX_API int emlx_linalg_qr(emlx_array *a, bool complete, emlx_array **q, emlx_array **r);

/* Solution x of a @ x = b: a (..., N, N) and b (..., N, R) (x like b), or b
 * (N,)-shaped, a vector (numpy 2's rule: b is a vector exactly when it is
 * 1-D; x is then (..., N)). The batch axes of a and b broadcast against each
 * other (MLX 0.32 fails to broadcast them; numpy does). Partial-pivoting LU
 * (getrf) then two triangular solves. Fails on exactly singular a. */
EMLX_API emlx_array *emlx_linalg_solve(emlx_array *a, emlx_array *b);

/* Which form of a emlx_linalg_solve_triangular applies. */
typedef enum emlx_linalg_transpose {
  EMLX_LINALG_NO_TRANSPOSE = 0, /* a */
  EMLX_LINALG_TRANSPOSE = 1,    /* a^T */
  EMLX_LINALG_ADJOINT = 2       /* a^H (the conjugate transpose; a^T for real dtypes) */
} emlx_linalg_transpose;

/* Options of emlx_linalg_solve_triangular (NULL or zero-initialised: MLX's
 * behaviour, solving op(a) @ x = b with op(a) = a). */
typedef struct emlx_solve_triangular_options {
  /* Solve x @ op(a) = b instead (Nx's left_side: false): b is (..., R, N)
   * (or (N,), a row vector). */
  bool right_side;
  emlx_linalg_transpose transpose; /* op(a); Nx's transform_a */
  /* Take a's diagonal as all ones (it is not read). */
  bool unit_diagonal;
} emlx_solve_triangular_options;

/* Solution x of op(a) @ x = b (or x @ op(a) = b with right_side) for a
 * triangular a (..., N, N): only its lower (upper false) or upper (upper
 * true) triangle is read. b is (..., N, R) or a vector (N,) as in
 * emlx_linalg_solve; batch axes broadcast. Fails when a diagonal element
 * is zero (MLX fails there too). */
EMLX_API emlx_array *emlx_linalg_solve_triangular(emlx_array *a, emlx_array *b, bool upper,
                                                  const emlx_solve_triangular_options *opts);

/* Singular value decomposition a = U @ diag(S) @ Vt of a (..., M, N), K =
 * min(M, N), by LAPACK's gesdd (divide and conquer, as MLX and numpy). S is
 * (..., K), descending, real. With compute_uv: u and vt receive U and Vt,
 * (..., M, M) and (..., N, N) when full_matrices (MLX's only mode, Nx's
 * default) or (..., M, K) and (..., K, N) otherwise; singular vectors are
 * unique only up to sign (phase). Without compute_uv only S is computed
 * (cheaper), s must be given and u and vt are ignored (set to NULL when
 * given). Fails when gesdd does not converge. */
EMLX_API int emlx_linalg_svd(emlx_array *a, bool compute_uv, bool full_matrices, emlx_array **u,
                             emlx_array **s, emlx_array **vt);

#ifdef __cplusplus
}
#endif
#endif
