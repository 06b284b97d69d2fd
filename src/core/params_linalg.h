/* params_linalg.h — the parameter struct of the linalg family's primitives.
 *
 * One struct serves every primitive of the family (CHOLESKY, EIGH, INV, LU,
 * QR, SOLVE, SOLVE_TRIANGULAR, SVD, TRI_INV, PINV); the fields an op does not
 * use stay zero, so equal parameters are equal bytes. Matrices are always
 * the last two axes of each input; the batch axes of two-input ops (SOLVE,
 * SOLVE_TRIANGULAR) are already broadcast to the output's by the
 * constructor (views), and a vector right-hand side has been made a
 * one-column (or one-row) matrix. */
#ifndef EMLX_PARAMS_LINALG_H
#define EMLX_PARAMS_LINALG_H

#include <stdint.h>

typedef struct emlx_linalg_params {
  int32_t upper;         /* CHOLESKY, TRI_INV, SOLVE_TRIANGULAR: the triangle; EIGH: UPLO "U" */
  int32_t vectors;       /* EIGH: eigenvectors too (2 outputs); SVD: U and Vt (3 outputs) */
  int32_t full;          /* QR: complete mode; SVD: full_matrices */
  int32_t compact;       /* LU: outputs (lu, pivots) instead of (p, L, U) */
  int32_t right_side;    /* SOLVE_TRIANGULAR: x @ op(a) = b */
  int32_t transpose;     /* SOLVE_TRIANGULAR: emlx_linalg_transpose */
  int32_t unit_diagonal; /* SOLVE_TRIANGULAR */
  int32_t reserved;      /* zero (keeps the doubles aligned without padding) */
  double rtol, atol;     /* PINV: resolved thresholds (rtol > 0 always) */
} emlx_linalg_params;

#endif
