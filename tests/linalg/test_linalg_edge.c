/* test_linalg_edge.c — the factorisations' edge cases: outputs released
 * before evaluation (computed into scratch, siblings unchanged), empty
 * matrices and batches (identities where a complete Q or a full U / Vt is
 * asked for), NaN and infinity (an error for svd, pinv, eigh and cholesky;
 * propagated by inv, solve, qr, lu), and the constructors' and kernels'
 * errors. References as in test_linalg.c (linalg_test_util.h). */
#include "linalg_test_util.h"

static tu_rng rng = {99173};

/* ---- outputs released before evaluation ---------------------------------------------------- */

static void test_released_outputs(void) {
  int64_t shape[3] = {3, 9, 6};
  lt_c *v = lt_random(&rng, 3 * 9 * 6, false);
  emlx_array *a = lt_make(EMLX_FLOAT64, shape, 3, v);
  /* QR: R alone (Q never formed) equals R of the full call */
  emlx_array *q = NULL, *r = NULL, *r_only = NULL;
  CHECK_OK(emlx_linalg_qr(a, false, &q, &r));
  CHECK_OK(emlx_linalg_qr(a, false, NULL, &r_only));
  lt_c *R1 = r ? lt_read(r) : NULL, *R2 = r_only ? lt_read(r_only) : NULL;
  if (R1 && R2)
    CHECK(memcmp(R1, R2, 3 * 6 * 6 * sizeof *R1) == 0);
  free(R1);
  free(R2);
  /* SVD: release S and Vt, keep U: computed into scratch, U unchanged */
  emlx_array *u = NULL, *s = NULL, *vt = NULL, *u2 = NULL, *s2 = NULL, *vt2 = NULL;
  CHECK_OK(emlx_linalg_svd(a, true, true, &u, &s, &vt));
  CHECK_OK(emlx_linalg_svd(a, true, true, &u2, &s2, &vt2));
  emlx_release(s2);
  emlx_release(vt2);
  lt_c *U1 = u ? lt_read(u) : NULL, *U2 = u2 ? lt_read(u2) : NULL;
  if (U1 && U2)
    CHECK(memcmp(U1, U2, 3 * 9 * 9 * sizeof *U1) == 0);
  free(U1);
  free(U2);
  /* evaluating one output computes its siblings too */
  CHECK(emlx_is_evaluated(s) && emlx_is_evaluated(vt));
  /* eigh: release the eigenvalues, keep the vectors */
  int64_t sq[2] = {5, 5};
  lt_c *h = lt_hpd(&rng, 1, 5, false);
  emlx_array *hs = lt_make(EMLX_FLOAT32, sq, 2, h), *w = NULL, *ev = NULL;
  CHECK_OK(emlx_linalg_eigh(hs, "L", &w, &ev));
  emlx_release(w);
  lt_c *EV = ev ? lt_read(ev) : NULL;
  if (EV)
    CHECK_MSG(lt_orth_cols(EV, 5, 5) < 1e-5, "eigh vectors without values");
  free(EV);
  /* LU: only L */
  emlx_array *l = NULL;
  CHECK_OK(emlx_linalg_lu(a, NULL, &l, NULL));
  lt_c *L = l ? lt_read(l) : NULL;
  if (L)
    CHECK(L[0] == 1.0);
  free(L);
  emlx_release(l);
  emlx_release(hs);
  emlx_release(ev);
  free(h);
  emlx_release(u);
  emlx_release(s);
  emlx_release(vt);
  emlx_release(u2);
  emlx_release(q);
  emlx_release(r);
  emlx_release(r_only);
  emlx_release(a);
  free(v);
}

/* ---- empty inputs -----------------------------------------------------------------------------
 */

static void test_empty(void) {
  int64_t s30[2] = {3, 0}, s04[2] = {0, 4}, s00[2] = {0, 0}, s033[3] = {0, 3, 3};
  emlx_array *a30 = lt_make(EMLX_FLOAT32, s30, 2, NULL), *a04 = lt_make(EMLX_FLOAT64, s04, 2, NULL),
             *a00 = lt_make(EMLX_COMPLEX64, s00, 2, NULL),
             *b0 = lt_make(EMLX_FLOAT32, s033, 3, NULL);
  emlx_array *q = NULL, *r = NULL;
  CHECK_OK(emlx_linalg_qr(a30, true, &q, &r));
  double eye3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  int64_t s33[2] = {3, 3};
  tu_check_array(q, EMLX_FLOAT32, s33, 2, eye3, 0, "complete Q of a 3x0 matrix");
  tu_check_array(r, EMLX_FLOAT32, s30, 2, NULL, 0, "R of a 3x0 matrix");
  emlx_release(q);
  emlx_release(r);
  CHECK_OK(emlx_linalg_qr(a30, false, &q, &r));
  tu_check_array(q, EMLX_FLOAT32, s30, 2, NULL, 0, "reduced Q of a 3x0 matrix");
  emlx_release(q);
  emlx_release(r);
  emlx_array *u = NULL, *s = NULL, *vt = NULL;
  CHECK_OK(emlx_linalg_svd(a04, true, true, &u, &s, &vt));
  double eye4[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  int64_t s44[2] = {4, 4}, zero = 0;
  tu_check_array(vt, EMLX_FLOAT64, s44, 2, eye4, 0, "full Vt of a 0x4 matrix");
  tu_check_array(s, EMLX_FLOAT64, &zero, 1, NULL, 0, "S of a 0x4 matrix");
  tu_check_array(u, EMLX_FLOAT64, s00, 2, NULL, 0, "U of a 0x4 matrix");
  emlx_release(u);
  emlx_release(s);
  emlx_release(vt);
  CHECK_OK(emlx_linalg_svd(a30, false, false, NULL, &s, NULL));
  tu_check_array(s, EMLX_FLOAT32, &zero, 1, NULL, 0, "S alone of a 3x0 matrix");
  emlx_release(s);
  CHECK_OK(emlx_linalg_svd(a30, true, false, &u, &s, &vt));
  tu_check_array(u, EMLX_FLOAT32, s30, 2, NULL, 0, "reduced U of a 3x0 matrix");
  emlx_release(u);
  emlx_release(s);
  emlx_release(vt);
  emlx_array *p = NULL, *l = NULL, *uu = NULL;
  CHECK_OK(emlx_linalg_lu(a30, &p, &l, &uu));
  double iota3[3] = {0, 1, 2};
  int64_t three = 3;
  tu_check_array(p, EMLX_UINT32, &three, 1, iota3, 0, "p of a 3x0 matrix");
  tu_check_array(l, EMLX_FLOAT32, s30, 2, NULL, 0, "L of a 3x0 matrix");
  tu_check_array(uu, EMLX_FLOAT32, s00, 2, NULL, 0, "U of a 3x0 matrix");
  emlx_release(p);
  emlx_release(l);
  emlx_release(uu);
  emlx_array *c = emlx_linalg_cholesky(a00, false);
  tu_check_array(c, EMLX_COMPLEX64, s00, 2, NULL, 0, "cholesky of a 0x0 matrix");
  emlx_release(c);
  emlx_array *w = NULL, *ev = NULL;
  CHECK_OK(emlx_linalg_eigh(a00, NULL, &w, &ev));
  tu_check_array(w, EMLX_FLOAT32, &zero, 1, NULL, 0, "eigenvalues of a 0x0 matrix");
  emlx_release(w);
  emlx_release(ev);
  c = emlx_linalg_cholesky(b0, true);
  tu_check_array(c, EMLX_FLOAT32, s033, 3, NULL, 0, "cholesky of an empty batch");
  emlx_release(c);
  CHECK_OK(emlx_linalg_svd(b0, true, false, &u, &s, &vt));
  tu_check_array(vt, EMLX_FLOAT32, s033, 3, NULL, 0, "svd of an empty batch");
  emlx_release(u);
  emlx_release(s);
  emlx_release(vt);
  emlx_release(a30);
  emlx_release(a04);
  emlx_release(a00);
  emlx_release(b0);
}

/* ---- errors ------------------------------------------------------------------------------------
 */

static void test_errors(void) {
  int64_t s23[2] = {2, 3}, s3[1] = {3}, s22[2] = {2, 2}, s322[3] = {3, 2, 2};
  lt_c vals[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  emlx_array *rect = lt_make(EMLX_FLOAT32, s23, 2, vals), *vec = lt_make(EMLX_FLOAT32, s3, 1, vals),
             *ints = lt_make(EMLX_INT32, s22, 2, vals), *half = lt_make(EMLX_FLOAT16, s22, 2, vals),
             *sq = lt_make(EMLX_FLOAT64, s22, 2, vals);
  emlx_array *x = NULL, *y = NULL, *z = NULL;
  /* NULL inputs and outputs */
  CHECK_NULL_ERR(emlx_linalg_cholesky(NULL, false));
  CHECK_FAILS(emlx_linalg_qr(NULL, false, &x, &y));
  CHECK_FAILS(emlx_linalg_qr(sq, false, NULL, NULL));
  CHECK_FAILS(emlx_linalg_svd(NULL, true, true, &x, &y, &z));
  CHECK_FAILS(emlx_linalg_svd(sq, false, true, &x, NULL, &z));
  CHECK(x == NULL && z == NULL);
  CHECK_FAILS(emlx_linalg_svd(sq, true, true, NULL, NULL, NULL));
  CHECK_FAILS(emlx_linalg_lu(NULL, &x, &y, &z));
  CHECK_FAILS(emlx_linalg_lu(sq, NULL, NULL, NULL));
  CHECK_FAILS(emlx_linalg_lu_factor(sq, NULL, NULL));
  CHECK_FAILS(emlx_linalg_eigh(NULL, NULL, &x, &y));
  CHECK_FAILS(emlx_linalg_eigh(sq, NULL, NULL, NULL));
  CHECK_OK(emlx_linalg_eigh(sq, NULL, NULL, &y)); /* vectors alone */
  CHECK(y != NULL && emlx_ndim(y) == 2);
  emlx_release(y);
  y = NULL;
  CHECK_NULL_ERR(emlx_linalg_eigvalsh(NULL, NULL));
  /* ranks, squareness, dtypes, options */
  CHECK_NULL_ERR(emlx_linalg_cholesky(vec, false));
  CHECK_NULL_ERR(emlx_linalg_cholesky(rect, false));
  CHECK_NULL_ERR(emlx_linalg_cholesky(ints, false));
  CHECK_NULL_ERR(emlx_linalg_cholesky(half, false));
  CHECK_FAILS(emlx_linalg_eigh(rect, NULL, &x, &y));
  CHECK_FAILS(emlx_linalg_eigh(ints, NULL, &x, &y));
  CHECK_FAILS(emlx_linalg_eigh(sq, "X", &x, &y));
  CHECK_FAILS(emlx_linalg_eigh(sq, "LU", &x, NULL));
  CHECK(x == NULL && y == NULL);
  CHECK_FAILS(emlx_linalg_qr(vec, false, &x, &y));
  CHECK_FAILS(emlx_linalg_qr(ints, true, &x, &y));
  CHECK_FAILS(emlx_linalg_svd(vec, true, true, &x, &y, &z));
  CHECK_FAILS(emlx_linalg_svd(half, false, true, NULL, &y, NULL));
  CHECK_FAILS(emlx_linalg_lu(vec, &x, &y, &z));
  CHECK_FAILS(emlx_linalg_lu_factor(ints, &x, &y));
  /* error messages say what is wrong */
  emlx_clear_error();
  CHECK(emlx_linalg_cholesky(rect, false) == NULL && strstr(emlx_last_error(), "square") != NULL);
  CHECK(emlx_linalg_cholesky(ints, false) == NULL && strstr(emlx_last_error(), "int32") != NULL);
  emlx_clear_error();
  /* not positive definite: the second matrix of the batch */
  lt_c pd[12] = {4, 1, 1, 3, 1, 2, 2, 1, 2, 0, 0, 2};
  emlx_array *batch = lt_make(EMLX_FLOAT32, s322, 3, pd);
  emlx_array *ch = emlx_linalg_cholesky(batch, false);
  LT_EVAL_FAILS(ch, "linalg_cholesky: the matrix at batch index 1 is not positive definite");
  CHECK(!emlx_is_evaluated(ch));
  emlx_release(ch);
  ch = emlx_linalg_cholesky(batch, true);
  LT_EVAL_FAILS(ch, "batch index 1");
  emlx_release(ch);
  /* a NaN makes potrf fail too */
  lt_c nanm[4] = {NAN, 0, 0, 1};
  emlx_array *nanarr = lt_make(EMLX_FLOAT64, s22, 2, nanm);
  ch = emlx_linalg_cholesky(nanarr, false);
  LT_EVAL_FAILS(ch, "not positive definite");
  emlx_release(ch);
  emlx_release(nanarr);
  emlx_release(batch);
  emlx_release(rect);
  emlx_release(vec);
  emlx_release(ints);
  emlx_release(half);
  emlx_release(sq);
}

/* ---- non-finite inputs -------------------------------------------------------------------------
 */

static void test_non_finite(void) {
  int64_t s33[2] = {3, 3}, s233[3] = {2, 3, 3};
  lt_c v[18] = {4, 1, 0, 1, 3, 1, 0, 1, 2, 4, 1, 0, 1, NAN, 1, 0, 1, 2};
  emlx_array *a = lt_make(EMLX_FLOAT32, s233, 3, v), *u = NULL, *s = NULL, *vt = NULL, *w = NULL,
             *ev = NULL;
  CHECK_OK(emlx_linalg_svd(a, true, false, &u, &s, &vt));
  LT_EVAL_FAILS(s, "linalg_svd: the matrix at batch index 1 contains NaN or infinity");
  emlx_release(u);
  emlx_release(s);
  emlx_release(vt);
  emlx_array *p = emlx_linalg_pinv(a, NULL);
  LT_EVAL_FAILS(p, "linalg_pinv: the matrix at batch index 1 contains NaN");
  emlx_release(p);
  /* the NaN is at (1, 1) of matrix 1: in both triangles */
  CHECK_OK(emlx_linalg_eigh(a, "U", &w, &ev));
  LT_EVAL_FAILS(ev, "linalg_eigh: the matrix at batch index 1 contains NaN or infinity");
  emlx_release(w);
  emlx_release(ev);
  emlx_array *c = emlx_linalg_cholesky(a, false);
  LT_EVAL_FAILS(c, "batch index 1 is not positive definite");
  emlx_release(c);
  /* a NaN in the triangle eigh does not read is harmless */
  lt_c h[9] = {2, INFINITY, NAN, 1, 2, NAN, 0, 1, 2};
  emlx_array *hm = lt_make(EMLX_FLOAT64, s33, 2, h);
  w = emlx_linalg_eigvalsh(hm, "L");
  lt_c *W = w ? lt_read(w) : NULL;
  if (W)
    CHECK_MSG(
        fabs(creal(W[0]) - (2 - sqrt(2.0))) < 1e-12 && fabs(creal(W[2]) - (2 + sqrt(2.0))) < 1e-12,
        "eigvalsh ignores the other triangle: %g %g %g", creal(W[0]), creal(W[1]), creal(W[2]));
  free(W);
  emlx_release(w);
  emlx_release(hm);
  /* inv and qr propagate NaN without failing */
  emlx_array *x = emlx_linalg_inv(a), *q = NULL, *r = NULL;
  lt_c *X = x ? lt_read(x) : NULL;
  if (X) {
    bool nan1 = false, fin0 = true;
    for (int i = 0; i < 9; i++) {
      fin0 &= isfinite(creal(X[i]));
      nan1 |= isnan(creal(X[9 + i]));
    }
    CHECK_MSG(fin0 && nan1, "inv: matrix 0 finite, matrix 1 NaN");
  }
  free(X);
  emlx_release(x);
  CHECK_OK(emlx_linalg_qr(a, false, &q, &r));
  CHECK_OK(emlx_eval(&r, 1));
  emlx_release(q);
  emlx_release(r);
  emlx_release(a);
}

int main(void) {
  test_released_outputs();
  test_empty();
  test_non_finite();
  test_errors();
  return tu_finish();
}
