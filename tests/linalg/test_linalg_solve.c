/* test_linalg_solve.c — inv, tri_inv, solve, solve_triangular and pinv,
 * checked against naive complex-f64 loops (linalg_test_util.h): A inv(A) =
 * I, A x = b, every triangular variant (upper / lower, left / right side,
 * a / a^T / a^H, unit diagonal), the Moore-Penrose conditions, over float32,
 * float64 and complex64, orders 1 to 64, broadcast batches, vector
 * right-hand sides, promotion, views, empty inputs, and the errors
 * (singular matrices reported with their batch index, bad shapes and
 * dtypes). */
#include "linalg_test_util.h"

static tu_rng rng = {77031};

/* A transposed view of the stack v (count matrices r x c) as (.., r, c). */
static emlx_array *make_transposed(emlx_dtype dt, const int64_t *shape, int nd, const lt_c *v) {
  int64_t r = shape[nd - 2], c = shape[nd - 1], count = tu_numel(shape, nd - 2);
  lt_c *t = malloc((size_t)(count * r * c + 1) * sizeof *t);
  for (int64_t b = 0; b < count; b++)
    lt_transpose(v + b * r * c, t + b * r * c, r, c, false);
  int64_t ts[EMLX_MAX_NDIM];
  memcpy(ts, shape, (size_t)nd * sizeof *ts);
  ts[nd - 2] = c;
  ts[nd - 1] = r;
  emlx_array *s = lt_make(dt, ts, nd, t);
  int axes[EMLX_MAX_NDIM];
  for (int i = 0; i < nd; i++)
    axes[i] = i;
  axes[nd - 2] = nd - 1;
  axes[nd - 1] = nd - 2;
  emlx_array *out = emlx_transpose(s, axes, nd);
  emlx_release(s);
  free(t);
  return out;
}

/* Index of the matrix of an operand with batch shape ib (rank ni) that
 * broadcasts to output batch position e of shape ob (rank no). */
static int64_t bcast_index(int64_t e, const int64_t *ob, int no, const int64_t *ib, int ni) {
  int64_t idx[EMLX_MAX_NDIM], i = 0;
  tu_unravel(e, ob, no, idx);
  for (int k = 0; k < ni; k++)
    i = i * ib[k] + (ib[k] == 1 ? 0 : idx[no - ni + k]);
  return i;
}

/* ---- inv and tri_inv ------------------------------------------------------------------------ */

static void check_inv(emlx_dtype dt, int64_t count, int64_t n, bool transposed) {
  int64_t shape[3] = {count, n, n};
  lt_c *v = lt_well_conditioned(&rng, count, n, dt == EMLX_COMPLEX64);
  emlx_array *a = transposed ? make_transposed(dt, shape, 3, v) : lt_make(dt, shape, 3, v);
  emlx_array *x = emlx_linalg_inv(a);
  char what[96];
  snprintf(what, sizeof what, "inv %s n=%lld batch %lld%s", tu_dname(dt), (long long)n,
           (long long)count, transposed ? " transposed" : "");
  lt_check_shape(x, dt, shape, 3, what);
  lt_c *A = lt_read(a), *X = x ? lt_read(x) : NULL;
  if (A && X) {
    double err = 0;
    lt_c *P = malloc((size_t)(n * n) * sizeof *P);
    for (int64_t b = 0; b < count; b++) {
      lt_matmul(A + b * n * n, X + b * n * n, P, n, n, n);
      for (int64_t i = 0; i < n; i++)
        P[i * n + i] -= 1.0;
      double e = lt_norm(P, n * n);
      err = e > err ? e : err;
    }
    free(P);
    CHECK_MSG(err <= lt_tol(dt, n), "%s: |A inv(A) - I| = %g", what, err);
  }
  free(A);
  free(X);
  free(v);
  emlx_release(a);
  emlx_release(x);
}

static void check_tri_inv(emlx_dtype dt, int64_t count, int64_t n, bool upper) {
  int64_t shape[3] = {count, n, n};
  lt_c *v = lt_well_conditioned(&rng, count, n, dt == EMLX_COMPLEX64);
  emlx_array *a = lt_make(dt, shape, 3, v), *x = emlx_tri_inv(a, upper);
  char what[96];
  snprintf(what, sizeof what, "tri_inv %s n=%lld batch %lld %s", tu_dname(dt), (long long)n,
           (long long)count, upper ? "upper" : "lower");
  lt_check_shape(x, dt, shape, 3, what);
  lt_c *A = lt_read(a), *X = x ? lt_read(x) : NULL;
  if (A && X) {
    double err = 0;
    bool tri = true;
    lt_c *T = malloc((size_t)(n * n) * sizeof *T), *P = malloc((size_t)(n * n) * sizeof *P);
    for (int64_t b = 0; b < count; b++) {
      for (int64_t i = 0; i < n; i++) /* only the chosen triangle of A counts */
        for (int64_t j = 0; j < n; j++)
          T[i * n + j] = (upper ? j >= i : j <= i) ? A[(b * n + i) * n + j] : 0;
      lt_matmul(T, X + b * n * n, P, n, n, n);
      for (int64_t i = 0; i < n; i++)
        P[i * n + i] -= 1.0;
      double e = lt_norm(P, n * n);
      err = e > err ? e : err;
      tri &= lt_triangle_zero(X + b * n * n, n, n, upper);
    }
    free(T);
    free(P);
    CHECK_MSG(err <= lt_tol(dt, n), "%s: |T inv(T) - I| = %g", what, err);
    CHECK_MSG(tri, "%s: the other triangle is zero", what);
  }
  free(A);
  free(X);
  free(v);
  emlx_release(a);
  emlx_release(x);
}

static void test_inverses(void) {
  static const int64_t sizes[] = {1, 2, 3, 8, 31, 64};
  for (int d = 0; d < 3; d++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      check_inv(lt_dtypes[d], 1, sizes[s], false);
      check_inv(lt_dtypes[d], 5, sizes[s], s % 2 == 1);
      check_tri_inv(lt_dtypes[d], 3, sizes[s], false);
      check_tri_inv(lt_dtypes[d], 2, sizes[s], true);
    }
  /* MLX's example of tri_inv */
  lt_c v[4] = {4, 1, 1, 3};
  int64_t shape[2] = {2, 2};
  emlx_array *a = lt_make(EMLX_FLOAT64, shape, 2, v), *x = emlx_tri_inv(a, false);
  double want[4] = {0.25, 0, -1.0 / 12.0, 1.0 / 3.0};
  tu_check_array(x, EMLX_FLOAT64, shape, 2, want, 2, "tri_inv of MLX's example");
  emlx_release(x);
  x = emlx_linalg_inv(a);
  double winv[4] = {3.0 / 11.0, -1.0 / 11.0, -1.0 / 11.0, 4.0 / 11.0};
  tu_check_array(x, EMLX_FLOAT64, shape, 2, winv, 4, "inv of a 2x2");
  emlx_release(x);
  emlx_release(a);
}

/* ---- solve ------------------------------------------------------------------------------------
 */

/* a (abatch..., n, n) and b (bbatch..., n, r), or b (n,) when r == 0. */
static void check_solve(emlx_dtype adt, emlx_dtype bdt, const int64_t *ab, int na,
                        const int64_t *bb, int nbb, int64_t n, int64_t r, bool transposed) {
  emlx_dtype dt = emlx_promote_types(adt, bdt);
  int64_t ac = tu_numel(ab, na), bc = r ? tu_numel(bb, nbb) : 1, rr = r ? r : 1;
  int64_t as[EMLX_MAX_NDIM], bs[EMLX_MAX_NDIM], ob[EMLX_MAX_NDIM];
  int and_ = lt_shape(as, ab, na, n, n), bnd = r ? lt_shape(bs, bb, nbb, n, r) : 1;
  if (!r)
    bs[0] = n;
  lt_c *va = lt_well_conditioned(&rng, ac, n, adt == EMLX_COMPLEX64);
  lt_c *vb = lt_random(&rng, bc * n * rr, bdt == EMLX_COMPLEX64);
  if (tu_is_int(bdt))
    for (int64_t i = 0; i < bc * n * rr; i++)
      vb[i] = round(creal(vb[i]) * 9.0);
  emlx_array *a = transposed ? make_transposed(adt, as, and_, va) : lt_make(adt, as, and_, va);
  emlx_array *b = lt_make(bdt, bs, bnd, vb), *x = emlx_linalg_solve(a, b);
  char what[128];
  snprintf(what, sizeof what, "solve %s/%s n=%lld r=%lld batches %lld/%lld%s", tu_dname(adt),
           tu_dname(bdt), (long long)n, (long long)r, (long long)ac, (long long)bc,
           transposed ? " transposed" : "");
  int no = r && nbb > na ? nbb : na;
  for (int i = 0; i < no; i++) {
    int ia = na - no + i, ib = nbb - no + i;
    int64_t da = ia >= 0 ? ab[ia] : 1, db = r && ib >= 0 ? bb[ib] : 1;
    ob[i] = da == 1 ? db : da;
  }
  int64_t xs[EMLX_MAX_NDIM];
  int xnd = r ? lt_shape(xs, ob, no, n, r) : no + 1;
  if (!r) {
    memcpy(xs, ob, (size_t)no * sizeof *xs);
    xs[no] = n;
  }
  lt_check_shape(x, dt, xs, xnd, what);
  lt_c *A = lt_read(a), *B = lt_read(b), *X = x ? lt_read(x) : NULL;
  if (A && B && X) {
    int64_t oc = tu_numel(ob, no);
    double err = 0;
    lt_c *AX = malloc((size_t)(n * rr + 1) * sizeof *AX);
    for (int64_t e = 0; e < oc; e++) {
      int64_t ia = bcast_index(e, ob, no, ab, na), ib = r ? bcast_index(e, ob, no, bb, nbb) : 0;
      lt_matmul(A + ia * n * n, X + e * n * rr, AX, n, n, rr);
      double d = lt_rel_diff(AX, B + ib * n * rr, n * rr);
      err = d > err ? d : err;
    }
    free(AX);
    CHECK_MSG(err <= lt_tol(dt, n), "%s: |A x - b| / |b| = %g", what, err);
  }
  free(A);
  free(B);
  free(X);
  free(va);
  free(vb);
  emlx_release(a);
  emlx_release(b);
  emlx_release(x);
}

static void test_solve(void) {
  static const int64_t sizes[] = {1, 2, 5, 16, 64};
  const int64_t b3[1] = {3}, b31[2] = {3, 1}, b4[1] = {4}, b1[1] = {1};
  for (int d = 0; d < 3; d++) {
    emlx_dtype dt = lt_dtypes[d];
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      int64_t n = sizes[s];
      check_solve(dt, dt, NULL, 0, NULL, 0, n, 0, false);   /* vector */
      check_solve(dt, dt, NULL, 0, NULL, 0, n, 3, s % 2);   /* matrix */
      check_solve(dt, dt, b3, 1, b3, 1, n, 1, false);       /* batched, one column */
      check_solve(dt, dt, b31, 2, b4, 1, n, 2, s % 2 == 0); /* broadcast (3,1) x (4) */
      check_solve(dt, dt, b3, 1, NULL, 0, n, 0, false);     /* batched a, vector b */
      check_solve(dt, dt, b1, 1, b3, 1, n, 7, false);       /* broadcast a */
    }
  }
  /* promotion */
  check_solve(EMLX_FLOAT32, EMLX_INT32, NULL, 0, NULL, 0, 6, 2, false);
  check_solve(EMLX_FLOAT32, EMLX_FLOAT64, b3, 1, NULL, 0, 6, 0, false);
  check_solve(EMLX_COMPLEX64, EMLX_FLOAT32, NULL, 0, b3, 1, 6, 2, false);
  check_solve(EMLX_INT64, EMLX_FLOAT64, NULL, 0, NULL, 0, 4, 1, false);
  /* a broadcast view, and a stepped vector b */
  int64_t s22[2] = {2, 2}, s322[3] = {3, 2, 2}, s6[1] = {6}, s32[2] = {3, 2};
  lt_c av[4] = {4, 1, 1, 3}, bv[6] = {1, -7, 9, -7, 5, -7};
  emlx_array *a = lt_make(EMLX_FLOAT64, s22, 2, av), *ab = emlx_broadcast_to(a, s322, 3);
  emlx_array *b6 = lt_make(EMLX_FLOAT64, s6, 1, bv);
  int64_t st = 0, sp = 4, step = 2;
  emlx_array *b = emlx_slice(b6, &st, &sp, &step, 1), *x = emlx_linalg_solve(ab, b);
  /* [[4,1],[1,3]] x = [1, 9]: x = [(3 - 9) / 11, (36 - 1) / 11] */
  double want[6] = {-6.0 / 11, 35.0 / 11, -6.0 / 11, 35.0 / 11, -6.0 / 11, 35.0 / 11};
  tu_check_array(x, EMLX_FLOAT64, s32, 2, want, 8, "solve with a broadcast a and a stepped b");
  emlx_release(x);
  emlx_release(b);
  CHECK_NULL_ERR(emlx_linalg_solve(ab, b6)); /* 6 != 2 */
  emlx_release(b6);
  emlx_release(ab);
  emlx_release(a);
}

/* ---- solve_triangular
 * ---------------------------------------------------------------------------- */

static void check_solve_tri(emlx_dtype dt, int64_t count, int64_t n, int64_t r, bool upper,
                            const emlx_solve_triangular_options *o) {
  bool right = o && o->right_side, unit = o && o->unit_diagonal;
  int tr = o ? (int)o->transpose : 0;
  if (!r)
    count = 1; /* a vector b goes with a single a (n, n) */
  int64_t rr = r ? r : 1, as[3] = {count, n, n}, bs[3] = {count, right ? rr : n, right ? n : rr};
  lt_c *va = lt_well_conditioned(&rng, count, n, dt == EMLX_COMPLEX64);
  if (unit) /* off-diagonal entries O(1/n) keep it well conditioned; the
             * diagonal is junk, which must not be read */
    for (int64_t b = 0; b < count; b++)
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++)
          va[(b * n + i) * n + j] = i == j ? 0.0 : va[(b * n + i) * n + j] / (double)n;
  lt_c *vb = lt_random(&rng, count * n * rr, dt == EMLX_COMPLEX64);
  emlx_array *a = r ? lt_make(dt, as, 3, va) : lt_make(dt, as + 1, 2, va), *b, *x;
  int64_t vs[1] = {n};
  b = r ? lt_make(dt, bs, 3, vb) : lt_make(dt, vs, 1, vb);
  x = emlx_linalg_solve_triangular(a, b, upper, o);
  char what[128];
  snprintf(what, sizeof what, "solve_triangular %s n=%lld r=%lld %s %s op%d%s", tu_dname(dt),
           (long long)n, (long long)r, upper ? "upper" : "lower", right ? "right" : "left", tr,
           unit ? " unit" : "");
  if (r)
    lt_check_shape(x, dt, bs, 3, what);
  else
    lt_check_shape(x, dt, vs, 1, what);
  lt_c *A = lt_read(a), *B = lt_read(b), *X = x ? lt_read(x) : NULL;
  if (A && B && X) {
    double err = 0;
    lt_c *T = malloc((size_t)(n * n + 1) * sizeof *T),
         *OT = malloc((size_t)(n * n + 1) * sizeof *OT);
    lt_c *P = malloc((size_t)(n * rr + 1) * sizeof *P);
    for (int64_t e = 0; e < count; e++) {
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
          lt_c t = (upper ? j >= i : j <= i) ? A[(e * n + i) * n + j] : 0;
          T[i * n + j] = i == j && unit ? 1.0 : t;
        }
      if (tr)
        lt_transpose(T, OT, n, n, tr == 2);
      else
        memcpy(OT, T, (size_t)(n * n) * sizeof *OT);
      if (right)
        lt_matmul(X + e * n * rr, OT, P, rr, n, n);
      else
        lt_matmul(OT, X + e * n * rr, P, n, n, rr);
      double d = lt_rel_diff(P, B + e * n * rr, n * rr);
      err = d > err ? d : err;
    }
    free(T);
    free(OT);
    free(P);
    CHECK_MSG(err <= lt_tol(dt, n) * (unit ? 10.0 : 1.0), "%s: residual %g", what, err);
  }
  free(A);
  free(B);
  free(X);
  free(va);
  free(vb);
  emlx_release(a);
  emlx_release(b);
  emlx_release(x);
}

static void test_solve_triangular(void) {
  static const int64_t sizes[] = {1, 3, 17, 64};
  for (int d = 0; d < 3; d++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int up = 0; up < 2; up++)
        for (int side = 0; side < 2; side++)
          for (int tr = 0; tr < 3; tr++) {
            emlx_solve_triangular_options o = {.right_side = side,
                                               .transpose = (emlx_linalg_transpose)tr,
                                               .unit_diagonal = (s + (size_t)tr) % 3 == 0};
            check_solve_tri(lt_dtypes[d], 2, sizes[s], 4, up, &o);
            check_solve_tri(lt_dtypes[d], 1, sizes[s], 0, up, &o); /* vector b */
          }
  check_solve_tri(EMLX_FLOAT32, 3, 9, 2, false, NULL);
  check_solve_tri(EMLX_FLOAT64, 3, 9, 0, true, NULL);
  /* MLX's examples: [[2,5,7],[3,4,6],[1,8,9]], lower, b = ones */
  lt_c v[9] = {2, 5, 7, 3, 4, 6, 1, 8, 9}, one[3] = {1, 1, 1};
  int64_t s33[2] = {3, 3}, three = 3;
  emlx_array *a = lt_make(EMLX_FLOAT32, s33, 2, v), *b = lt_make(EMLX_FLOAT32, &three, 1, one);
  emlx_array *x = emlx_linalg_solve_triangular(a, b, false, NULL);
  double want[3] = {0.5, -0.125, 1.0 / 6.0};
  tu_check_array(x, EMLX_FLOAT32, &three, 1, want, 4, "solve_triangular of MLX's example");
  emlx_release(x);
  /* a transposed view of a is read in place or copied: same answer */
  emlx_array *at = emlx_transpose(a, NULL, 2), *att = emlx_transpose(at, NULL, 2);
  emlx_solve_triangular_options tr = {.transpose = EMLX_LINALG_TRANSPOSE};
  x = emlx_linalg_solve_triangular(at, b, true, &tr); /* (a^T)^T = a, upper of a^T */
  tu_check_array(x, EMLX_FLOAT32, &three, 1, want, 4, "solve_triangular of a transposed view");
  emlx_release(x);
  x = emlx_linalg_solve_triangular(att, b, false, NULL);
  tu_check_array(x, EMLX_FLOAT32, &three, 1, want, 4,
                 "solve_triangular of a twice-transposed view");
  emlx_release(att);
  emlx_release(x);
  emlx_release(at);
  emlx_release(a);
  emlx_release(b);
}

/* ---- pinv ---------------------------------------------------------------------------------------
 */

/* A random m x n matrix of rank `rank` (products of m x rank and rank x n). */
static lt_c *low_rank(int64_t count, int64_t m, int64_t n, int64_t rank, bool cplx) {
  lt_c *v = malloc((size_t)(count * m * n + 1) * sizeof *v);
  for (int64_t b = 0; b < count; b++) {
    lt_c *l = lt_random(&rng, m * rank, cplx), *r = lt_random(&rng, rank * n, cplx);
    lt_matmul(l, r, v + b * m * n, m, rank, n);
    free(l);
    free(r);
  }
  return v;
}

static void check_pinv(emlx_dtype dt, int64_t count, int64_t m, int64_t n, int64_t rank) {
  int64_t shape[3] = {count, m, n}, xs[3] = {count, n, m};
  lt_c *v = low_rank(count, m, n, rank, dt == EMLX_COMPLEX64);
  emlx_array *a = lt_make(dt, shape, 3, v), *x = emlx_linalg_pinv(a, NULL);
  char what[96];
  snprintf(what, sizeof what, "pinv %s %lldx%lld rank %lld batch %lld", tu_dname(dt), (long long)m,
           (long long)n, (long long)rank, (long long)count);
  lt_check_shape(x, dt, xs, 3, what);
  lt_c *A = lt_read(a), *X = x ? lt_read(x) : NULL;
  if (A && X) {
    double e1 = 0, e2 = 0, e3 = 0, e4 = 0;
    lt_c *AX = malloc((size_t)(m * m) * sizeof *AX), *XA = malloc((size_t)(n * n) * sizeof *XA);
    lt_c *AXA = malloc((size_t)(m * n) * sizeof *AXA), *XAX = malloc((size_t)(n * m) * sizeof *XAX);
    lt_c *H = malloc((size_t)((m > n ? m : n) * (m > n ? m : n)) * sizeof *H);
    for (int64_t b = 0; b < count; b++) {
      const lt_c *Ab = A + b * m * n, *Xb = X + b * n * m;
      lt_matmul(Ab, Xb, AX, m, n, m);
      lt_matmul(Xb, Ab, XA, n, m, n);
      lt_matmul(AX, Ab, AXA, m, m, n);
      lt_matmul(XA, Xb, XAX, n, n, m);
      double d1 = lt_rel_diff(AXA, Ab, m * n), d2 = lt_rel_diff(XAX, Xb, n * m);
      lt_transpose(AX, H, m, m, true);
      double d3 = lt_rel_diff(H, AX, m * m);
      lt_transpose(XA, H, n, n, true);
      double d4 = lt_rel_diff(H, XA, n * n);
      e1 = d1 > e1 ? d1 : e1;
      e2 = d2 > e2 ? d2 : e2;
      e3 = d3 > e3 ? d3 : e3;
      e4 = d4 > e4 ? d4 : e4;
    }
    free(AX);
    free(XA);
    free(AXA);
    free(XAX);
    free(H);
    /* well-separated singular values: the conditions hold to a few hundred eps */
    double tol = lt_tol(dt, m > n ? m : n) * 20.0;
    CHECK_MSG(e1 <= tol && e2 <= tol && e3 <= tol && e4 <= tol,
              "%s: Penrose residuals %g %g %g %g > %g", what, e1, e2, e3, e4, tol);
  }
  free(A);
  free(X);
  free(v);
  emlx_release(a);
  emlx_release(x);
}

static void test_pinv(void) {
  for (int d = 0; d < 3; d++) {
    check_pinv(lt_dtypes[d], 1, 1, 1, 1);
    check_pinv(lt_dtypes[d], 3, 6, 4, 4);
    check_pinv(lt_dtypes[d], 2, 4, 6, 4);
    check_pinv(lt_dtypes[d], 2, 8, 5, 2); /* rank-deficient */
    check_pinv(lt_dtypes[d], 1, 33, 47, 7);
    check_pinv(lt_dtypes[d], 1, 64, 64, 64);
  }
  /* ones (4, 3): pinv is 1/12 everywhere (MLX's example) */
  lt_c ones[12];
  for (int i = 0; i < 12; i++)
    ones[i] = 1.0;
  int64_t s43[2] = {4, 3}, s34[2] = {3, 4};
  emlx_array *a = lt_make(EMLX_FLOAT64, s43, 2, ones), *x = emlx_linalg_pinv(a, NULL);
  double want[12];
  for (int i = 0; i < 12; i++)
    want[i] = 1.0 / 12.0;
  tu_check_array(x, EMLX_FLOAT64, s34, 2, want, 64, "pinv of ones(4, 3)");
  emlx_release(x);
  /* an absolute tolerance above every singular value gives zeros */
  emlx_pinv_options o = {.atol = 100.0};
  x = emlx_linalg_pinv(a, &o);
  double zeros[12] = {0};
  tu_check_array(x, EMLX_FLOAT64, s34, 2, zeros, 0, "pinv with a large atol");
  emlx_release(x);
  emlx_release(a);
}

/* ---- empty inputs and errors
 * --------------------------------------------------------------------- */

static void test_empty(void) {
  int64_t s00[2] = {0, 0}, s033[3] = {0, 3, 3}, s30[2] = {3, 0}, s03[2] = {0, 3}, zero = 0,
          s20[2] = {2, 0}, s22[2] = {2, 2};
  emlx_array *a00 = lt_make(EMLX_FLOAT32, s00, 2, NULL),
             *a033 = lt_make(EMLX_FLOAT64, s033, 3, NULL),
             *a30 = lt_make(EMLX_COMPLEX64, s30, 2, NULL),
             *b0 = lt_make(EMLX_FLOAT32, &zero, 1, NULL);
  lt_c iv[4] = {1, 0, 0, 1};
  emlx_array *eye = lt_make(EMLX_FLOAT32, s22, 2, iv), *b20 = lt_make(EMLX_FLOAT32, s20, 2, NULL);
  emlx_array *x = emlx_linalg_inv(a00);
  tu_check_array(x, EMLX_FLOAT32, s00, 2, NULL, 0, "inv of 0x0");
  emlx_release(x);
  x = emlx_linalg_inv(a033);
  tu_check_array(x, EMLX_FLOAT64, s033, 3, NULL, 0, "inv of an empty batch");
  emlx_release(x);
  x = emlx_tri_inv(a033, true);
  tu_check_array(x, EMLX_FLOAT64, s033, 3, NULL, 0, "tri_inv of an empty batch");
  emlx_release(x);
  x = emlx_linalg_pinv(a30, NULL);
  tu_check_array(x, EMLX_COMPLEX64, s03, 2, NULL, 0, "pinv of 3x0");
  emlx_release(x);
  x = emlx_linalg_solve(a00, b0);
  tu_check_array(x, EMLX_FLOAT32, &zero, 1, NULL, 0, "solve of order 0");
  emlx_release(x);
  x = emlx_linalg_solve(eye, b20);
  tu_check_array(x, EMLX_FLOAT32, s20, 2, NULL, 0, "solve with no right-hand sides");
  emlx_release(x);
  x = emlx_linalg_solve_triangular(eye, b20, false, NULL);
  tu_check_array(x, EMLX_FLOAT32, s20, 2, NULL, 0, "solve_triangular with no right-hand sides");
  emlx_release(x);
  emlx_release(a00);
  emlx_release(a033);
  emlx_release(a30);
  emlx_release(b0);
  emlx_release(eye);
  emlx_release(b20);
}

/* A failed eval leaves the node lazy and its input intact: evaluating it
 * again fails the same way. Each input here is computed by the first eval
 * (emlx_copy) and then held by the failing node alone, so a kernel allowed
 * to give its output the input's buffer could; and the values such a kernel
 * would leave behind change the outcome of the second eval, so it cannot
 * pass by failing on untouched data:
 *  - inv: [[1, 2], [2, 4]] is exactly singular, but its LU factors written
 *    in place ([[2, 0.5], [4, 0]] in the transposed layout LAPACK sees) are
 *    not, nor are the inverses of the matrices before it;
 *  - cholesky: [[1, 0.9], [0.9, 1]] at index 0 is positive definite, but
 *    its factor, read back through the same triangle, is not (0.9^2 > 0.19),
 *    so a second eval over a written input would fail at index 0. */
static void reeval_fails(emlx_array *arr, emlx_array *(*op)(emlx_array *, bool), bool flag,
                         const char *needle) {
  emlx_array *held = emlx_copy(arr);
  emlx_array *x = op(held, flag);
  emlx_release(held);
  LT_EVAL_FAILS(x, needle);
  CHECK(x && !emlx_is_evaluated(x));
  LT_EVAL_FAILS(x, needle); /* the same input, hence the same failure */
  CHECK(x && !emlx_is_evaluated(x));
  emlx_release(x);
}

static emlx_array *inv_op(emlx_array *a, bool unused) {
  (void)unused;
  return emlx_linalg_inv(a);
}

static void check_reeval_after_failure(void) {
  enum { COUNT = 12 };
  int64_t shape[3] = {COUNT, 2, 2};
  lt_c v[COUNT * 4];
  for (int b = 0; b < COUNT; b++) { /* nonsingular, positive definite */
    v[4 * b] = 3 + b % 4;
    v[4 * b + 1] = v[4 * b + 2] = 1;
    v[4 * b + 3] = 2 + b % 3;
  }
  lt_c sing[4] = {1, 2, 2, 4}, pd[4] = {1, 0.9, 0.9, 1}, notpd[4] = {1, 2, 2, 1};
  for (int e = 0; e < 2; e++) {
    emlx_dtype dt = e ? EMLX_FLOAT32 : EMLX_FLOAT64;
    lt_c w[COUNT * 4];
    memcpy(w, v, sizeof w);
    memcpy(w + 4 * 5, sing, sizeof sing);
    memcpy(w + 4 * 9, sing, sizeof sing);
    emlx_array *a = lt_make(dt, shape, 3, w);
    reeval_fails(a, inv_op, false, "linalg_inv: the matrix at batch index 5 is singular");
    emlx_release(a);
    memcpy(w, v, sizeof w);
    memcpy(w, pd, sizeof pd);
    memcpy(w + 4 * 3, notpd, sizeof notpd);
    a = lt_make(dt, shape, 3, w);
    for (int up = 0; up < 2; up++)
      reeval_fails(a, emlx_linalg_cholesky, up,
                   "linalg_cholesky: the matrix at batch index 3 is not positive definite");
    emlx_release(a);
  }
}

static void test_errors(void) {
  /* singular matrices: the lowest failing index of a pool-split batch */
  int64_t count = 50, n = 6, shape[3] = {50, 6, 6}, bshape[3] = {50, 6, 1};
  lt_c *v = lt_well_conditioned(&rng, count, n, false);
  for (int64_t b = 17; b < count; b += 16) /* 17, 33, 49: a zero row */
    for (int64_t j = 0; j < n; j++)
      v[(b * n + 2) * n + j] = 0.0;
  emlx_array *a = lt_make(EMLX_FLOAT64, shape, 3, v);
  lt_c *bv = lt_random(&rng, count * n, false);
  emlx_array *b = lt_make(EMLX_FLOAT64, bshape, 3, bv);
  emlx_array *x = emlx_linalg_inv(a);
  LT_EVAL_FAILS(x, "linalg_inv: the matrix at batch index 17 is singular");
  emlx_release(x);
  x = emlx_linalg_solve(a, b);
  LT_EVAL_FAILS(x, "linalg_solve: the matrix at batch index 17 is singular");
  emlx_release(x);
  /* zero diagonals */
  x = emlx_tri_inv(a, false);
  LT_EVAL_FAILS(x, "tri_inv: the matrix at batch index 17 is singular (diagonal element 2");
  emlx_release(x);
  x = emlx_linalg_solve_triangular(a, b, true, NULL);
  LT_EVAL_FAILS(x, "linalg_solve_triangular: the matrix at batch index 17 is singular");
  emlx_release(x);
  emlx_solve_triangular_options unit = {.unit_diagonal = true};
  x = emlx_linalg_solve_triangular(a, b, true, &unit);
  CHECK_OK(emlx_eval(&x, 1));
  emlx_release(x);
  check_reeval_after_failure();
  free(v);
  free(bv);
  emlx_release(a);
  emlx_release(b);

  int64_t s23[2] = {2, 3}, s22[2] = {2, 2}, s3[1] = {3}, s2[1] = {2}, s322[3] = {3, 2, 2},
          s422[3] = {4, 2, 2}, s42[2] = {4, 2};
  lt_c vals[16] = {4, 1, 1, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  emlx_array *rect = lt_make(EMLX_FLOAT32, s23, 2, vals), *sq = lt_make(EMLX_FLOAT32, s22, 2, vals),
             *v3 = lt_make(EMLX_FLOAT32, s3, 1, vals), *v2 = lt_make(EMLX_FLOAT32, s2, 1, vals),
             *ints = lt_make(EMLX_INT32, s22, 2, vals), *iv2 = lt_make(EMLX_INT32, s2, 1, vals),
             *bf = lt_make(EMLX_BFLOAT16, s22, 2, vals), *b3 = lt_make(EMLX_FLOAT32, s322, 3, vals),
             *b4 = lt_make(EMLX_FLOAT32, s422, 3, vals), *m42 = lt_make(EMLX_FLOAT32, s42, 2, vals);
  int64_t s0[1] = {0};
  emlx_array *scalar = lt_make(EMLX_FLOAT32, s0, 0, vals);
  CHECK_NULL_ERR(emlx_linalg_inv(NULL));
  CHECK_NULL_ERR(emlx_linalg_inv(rect));
  CHECK_NULL_ERR(emlx_linalg_inv(v3));
  CHECK_NULL_ERR(emlx_linalg_inv(ints));
  CHECK_NULL_ERR(emlx_linalg_inv(bf));
  CHECK_NULL_ERR(emlx_tri_inv(NULL, false));
  CHECK_NULL_ERR(emlx_tri_inv(rect, true));
  CHECK_NULL_ERR(emlx_tri_inv(ints, true));
  CHECK_NULL_ERR(emlx_linalg_pinv(NULL, NULL));
  CHECK_NULL_ERR(emlx_linalg_pinv(v3, NULL));
  CHECK_NULL_ERR(emlx_linalg_pinv(ints, NULL));
  CHECK_NULL_ERR(emlx_linalg_solve(NULL, v2));
  CHECK_NULL_ERR(emlx_linalg_solve(sq, NULL));
  CHECK_NULL_ERR(emlx_linalg_solve(rect, v2));   /* a not square */
  CHECK_NULL_ERR(emlx_linalg_solve(v2, v2));     /* a 1-D */
  CHECK_NULL_ERR(emlx_linalg_solve(sq, v3));     /* length mismatch */
  CHECK_NULL_ERR(emlx_linalg_solve(sq, scalar)); /* 0-d b */
  CHECK_NULL_ERR(emlx_linalg_solve(ints, iv2));  /* no float dtype */
  CHECK_NULL_ERR(emlx_linalg_solve(b3, b4));     /* batches 3 and 4 */
  CHECK_NULL_ERR(emlx_linalg_solve(b3, m42));    /* b (4,2): 4 rows */
  CHECK_NULL_ERR(emlx_linalg_solve_triangular(NULL, v2, false, NULL));
  CHECK_NULL_ERR(emlx_linalg_solve_triangular(rect, v2, false, NULL));
  CHECK_NULL_ERR(emlx_linalg_solve_triangular(sq, v3, false, NULL));
  CHECK_NULL_ERR(emlx_linalg_solve_triangular(ints, iv2, true, NULL));
  emlx_solve_triangular_options bad = {.transpose = (emlx_linalg_transpose)7};
  CHECK_NULL_ERR(emlx_linalg_solve_triangular(sq, v2, false, &bad));
  emlx_solve_triangular_options right = {.right_side = true};
  x = emlx_linalg_solve_triangular(sq, m42, false, &right); /* (4,2) @ (2,2): fine */
  CHECK_NOT_NULL(x);
  emlx_release(x);
  emlx_array *m24 = emlx_transpose(m42, NULL, 2);
  CHECK_NULL_ERR(emlx_linalg_solve_triangular(sq, m24, false, &right)); /* (2,4): 4 != 2 */
  emlx_release(m24);
  /* the message says what is wrong */
  emlx_clear_error();
  CHECK(emlx_linalg_solve(sq, v3) == NULL && strstr(emlx_last_error(), "linalg_solve") != NULL);
  CHECK(emlx_linalg_inv(ints) == NULL &&
        strstr(emlx_last_error(), "float32, float64, complex64 or complex128") != NULL);
  emlx_clear_error();
  emlx_release(rect);
  emlx_release(sq);
  emlx_release(v3);
  emlx_release(v2);
  emlx_release(ints);
  emlx_release(iv2);
  emlx_release(bf);
  emlx_release(b3);
  emlx_release(b4);
  emlx_release(m42);
  emlx_release(scalar);
}

int main(void) {
  test_inverses();
  test_solve();
  test_solve_triangular();
  test_pinv();
  test_empty();
  test_errors();
  return tu_finish();
}
