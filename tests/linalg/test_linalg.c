/* test_linalg.c — the factorisations: QR, SVD, LU (both forms), Cholesky and
 * eigh, checked by reconstruction and structure against naive complex-f64
 * loops (linalg_test_util.h), over float32, float64 and complex64, orders 1
 * to 64, batches, and inputs that are transposed, stepped, reversed and
 * broadcast views. Outputs released before evaluation, empty inputs,
 * non-finite inputs and errors are in test_linalg_edge.c; solves, inverses
 * and pinv in test_linalg_solve.c. */
#include "linalg_test_util.h"

static tu_rng rng = {20241201};

/* ---- inputs in several layouts ---------------------------------------------------------- */

enum { L_CONTIG, L_TRANSPOSED, L_STEPPED, L_REVERSED, L_BROADCAST, L_COUNT };
static const char *layout_name[L_COUNT] = {"contiguous", "transposed", "stepped", "reversed",
                                           "broadcast"};

/* An array whose logical value is the stack v (batch..., m, n), built as the
 * given kind of view. For L_BROADCAST, every matrix of v must equal the
 * first. */
static emlx_array *make_view(emlx_dtype dt, const int64_t *batch, int nb, int64_t m, int64_t n,
                             const lt_c *v, int layout) {
  int64_t count = tu_numel(batch, nb), mn = m * n, shape[EMLX_MAX_NDIM];
  int nd = lt_shape(shape, batch, nb, m, n);
  if (layout == L_CONTIG)
    return lt_make(dt, shape, nd, v);
  if (layout == L_BROADCAST) {
    int64_t one[2] = {m, n};
    emlx_array *s = lt_make(dt, one, 2, v);
    emlx_array *r = emlx_broadcast_to(s, shape, nd);
    emlx_release(s);
    return r;
  }
  if (layout == L_TRANSPOSED) {
    lt_c *t = malloc((size_t)(count * mn + 1) * sizeof *t);
    for (int64_t b = 0; b < count; b++)
      lt_transpose(v + b * mn, t + b * mn, m, n, false);
    int64_t ts[EMLX_MAX_NDIM];
    lt_shape(ts, batch, nb, n, m);
    emlx_array *s = lt_make(dt, ts, nd, t);
    int axes[EMLX_MAX_NDIM];
    for (int i = 0; i < nd; i++)
      axes[i] = i;
    axes[nd - 2] = nd - 1;
    axes[nd - 1] = nd - 2;
    emlx_array *r = emlx_transpose(s, axes, nd);
    emlx_release(s);
    free(t);
    return r;
  }
  /* stepped: every other row and column of a larger blob (junk elsewhere);
   * reversed: the rows stored bottom-up, read with step -1 */
  bool stepped = layout == L_STEPPED;
  int64_t R = stepped ? 2 * m + 1 : m, C = stepped ? 2 * n + 1 : n;
  lt_c *big = malloc((size_t)(count * R * C + 1) * sizeof *big);
  for (int64_t i = 0; i < count * R * C; i++)
    big[i] = CMPLX(77.0, -5.0);
  for (int64_t b = 0; b < count; b++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        int64_t bi = stepped ? 2 * i : m - 1 - i, bj = stepped ? 2 * j : j;
        big[(b * R + bi) * C + bj] = v[b * mn + i * n + j];
      }
  int64_t bs[EMLX_MAX_NDIM], start[EMLX_MAX_NDIM], stop[EMLX_MAX_NDIM], step[EMLX_MAX_NDIM];
  lt_shape(bs, batch, nb, R, C);
  for (int i = 0; i < nd; i++) {
    start[i] = 0;
    stop[i] = bs[i];
    step[i] = 1;
  }
  if (stepped) {
    step[nd - 2] = step[nd - 1] = 2;
    stop[nd - 2] = 2 * m;
    stop[nd - 1] = 2 * n;
  } else {
    start[nd - 2] = m - 1;
    stop[nd - 2] = -m - 1;
    step[nd - 2] = -1;
  }
  emlx_array *s = lt_make(dt, bs, nd, big);
  emlx_array *r = emlx_slice(s, start, stop, step, nd);
  emlx_release(s);
  free(big);
  return r;
}

/* Random stack for a layout (one repeated matrix when broadcast). */
static lt_c *random_stack(int64_t count, int64_t m, int64_t n, bool cplx, int layout) {
  lt_c *v = lt_random(&rng, count * m * n, cplx);
  if (layout == L_BROADCAST)
    for (int64_t b = 1; b < count; b++)
      memcpy(v + b * m * n, v, (size_t)(m * n) * sizeof *v);
  return v;
}

/* The input as the engine sees it (values rounded to the dtype), or NULL. */
static lt_c *seen(emlx_array *a) { return a ? lt_read(a) : NULL; }

/* ---- QR ------------------------------------------------------------------------------------ */

static void check_qr(emlx_dtype dt, const int64_t *batch, int nb, int64_t m, int64_t n,
                     bool complete, int layout) {
  int64_t count = tu_numel(batch, nb), k = m < n ? m : n;
  int64_t qc = complete ? m : k, rr = complete ? m : k;
  lt_c *v = random_stack(count, m, n, dt == EMLX_COMPLEX64, layout);
  emlx_array *a = make_view(dt, batch, nb, m, n, v, layout), *q = NULL, *r = NULL;
  lt_c *A = seen(a);
  CHECK_OK(emlx_linalg_qr(a, complete, &q, &r));
  int64_t qs[EMLX_MAX_NDIM], rs[EMLX_MAX_NDIM];
  int nd = lt_shape(qs, batch, nb, m, qc);
  lt_shape(rs, batch, nb, rr, n);
  char what[128];
  snprintf(what, sizeof what, "qr %s %lldx%lld batch %lld %s %s", tu_dname(dt), (long long)m,
           (long long)n, (long long)count, complete ? "complete" : "reduced", layout_name[layout]);
  lt_check_shape(q, dt, qs, nd, what);
  lt_check_shape(r, dt, rs, nd, what);
  lt_c *Q = q ? lt_read(q) : NULL, *R = r ? lt_read(r) : NULL;
  if (A && Q && R) {
    double recon = 0, orth = 0;
    bool tri = true;
    lt_c *QR = malloc((size_t)(m * n + 1) * sizeof *QR);
    for (int64_t b = 0; b < count; b++) {
      lt_matmul(Q + b * m * qc, R + b * rr * n, QR, m, qc, n);
      double d = lt_rel_diff(QR, A + b * m * n, m * n);
      recon = d > recon ? d : recon;
      double o = lt_orth_cols(Q + b * m * qc, m, qc);
      orth = o > orth ? o : orth;
      tri &= lt_triangle_zero(R + b * rr * n, rr, n, true);
    }
    free(QR);
    double tol = lt_tol(dt, m > n ? m : n);
    CHECK_MSG(recon <= tol, "%s: |QR - A| / |A| = %g > %g", what, recon, tol);
    CHECK_MSG(orth <= tol * (double)(qc > 1 ? qc : 1), "%s: |Q^H Q - I| = %g", what, orth);
    CHECK_MSG(tri, "%s: R is upper triangular", what);
  }
  free(A);
  free(Q);
  free(R);
  free(v);
  emlx_release(a);
  emlx_release(q);
  emlx_release(r);
}

static void test_qr(void) {
  static const int64_t sizes[][2] = {{1, 1}, {3, 3}, {5, 3}, {3, 5}, {17, 17}, {40, 13}, {64, 64}};
  const int64_t b3[1] = {3}, b22[2] = {2, 2};
  for (int d = 0; d < 3; d++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int c = 0; c < 2; c++) {
        check_qr(lt_dtypes[d], NULL, 0, sizes[s][0], sizes[s][1], c,
                 (int)(s % L_COUNT) == L_BROADCAST ? L_CONTIG : (int)(s % L_COUNT));
        check_qr(lt_dtypes[d], b3, 1, sizes[s][0], sizes[s][1], c, (int)((s + 2) % L_COUNT));
      }
  for (int l = 0; l < L_COUNT; l++)
    check_qr(EMLX_FLOAT64, b22, 2, 6, 4, l & 1, l);
  /* MLX's example (its documented values: Householder signs as LAPACK's) */
  lt_c v[4] = {2, 3, 1, 2};
  int64_t shape[2] = {2, 2};
  emlx_array *a = lt_make(EMLX_FLOAT32, shape, 2, v), *q = NULL, *r = NULL;
  CHECK_OK(emlx_linalg_qr(a, false, &q, &r));
  double wq[4] = {-0.8944271909999159, -0.4472135954999579, -0.4472135954999579,
                  0.8944271909999159};
  double wr[4] = {-2.23606797749979, -3.577708763999664, 0, 0.4472135954999579};
  tu_check_array(q, EMLX_FLOAT32, shape, 2, wq, 8, "Q of MLX's example");
  tu_check_array(r, EMLX_FLOAT32, shape, 2, wr, 8, "R of MLX's example");
  emlx_release(q);
  emlx_release(r);
  emlx_release(a);
}

/* ---- SVD ----------------------------------------------------------------------------------- */

static void check_svd(emlx_dtype dt, const int64_t *batch, int nb, int64_t m, int64_t n, bool full,
                      int layout) {
  int64_t count = tu_numel(batch, nb), k = m < n ? m : n;
  int64_t uc = full ? m : k, vr = full ? n : k;
  emlx_dtype rdt = dt == EMLX_COMPLEX64 ? EMLX_FLOAT32 : dt;
  lt_c *v = random_stack(count, m, n, dt == EMLX_COMPLEX64, layout);
  emlx_array *a = make_view(dt, batch, nb, m, n, v, layout), *u = NULL, *s = NULL, *vt = NULL,
             *s2 = NULL;
  lt_c *A = seen(a);
  CHECK_OK(emlx_linalg_svd(a, true, full, &u, &s, &vt));
  CHECK_OK(emlx_linalg_svd(a, false, false, NULL, &s2, NULL));
  char what[128];
  snprintf(what, sizeof what, "svd %s %lldx%lld batch %lld %s %s", tu_dname(dt), (long long)m,
           (long long)n, (long long)count, full ? "full" : "reduced", layout_name[layout]);
  int64_t us[EMLX_MAX_NDIM], ss[EMLX_MAX_NDIM], vs[EMLX_MAX_NDIM];
  int nd = lt_shape(us, batch, nb, m, uc);
  lt_shape(vs, batch, nb, vr, n);
  lt_shape(ss, batch, nb, k, 0);
  lt_check_shape(u, dt, us, nd, what);
  lt_check_shape(vt, dt, vs, nd, what);
  lt_check_shape(s, rdt, ss, nd - 1, what);
  lt_check_shape(s2, rdt, ss, nd - 1, what);
  lt_c *U = u ? lt_read(u) : NULL, *S = s ? lt_read(s) : NULL, *V = vt ? lt_read(vt) : NULL,
       *S2 = s2 ? lt_read(s2) : NULL;
  if (A && U && S && V && S2) {
    double recon = 0, orth = 0, sdiff = 0;
    bool order = true;
    lt_c *US = malloc((size_t)(m * k + 1) * sizeof *US),
         *USV = malloc((size_t)(m * n + 1) * sizeof *USV);
    lt_c *Vk = malloc((size_t)(k * n + 1) * sizeof *Vk);
    for (int64_t b = 0; b < count; b++) {
      const lt_c *Ub = U + b * m * uc, *Sb = S + b * k, *Vb = V + b * vr * n;
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < k; j++)
          US[i * k + j] = Ub[i * uc + j] * Sb[j];
      memcpy(Vk, Vb, (size_t)(k * n) * sizeof *Vk); /* the first k rows */
      lt_matmul(US, Vk, USV, m, k, n);
      double d = lt_rel_diff(USV, A + b * m * n, m * n);
      recon = d > recon ? d : recon;
      double o = lt_orth_cols(Ub, m, uc) + lt_orth_rows(Vb, vr, n);
      orth = o > orth ? o : orth;
      for (int64_t j = 0; j < k; j++) {
        order &=
            cimag(Sb[j]) == 0 && creal(Sb[j]) >= 0 && (j == 0 || creal(Sb[j]) <= creal(Sb[j - 1]));
        double e =
            fabs(creal(Sb[j]) - creal(S2[b * k + j])) / (creal(Sb[0]) > 0 ? creal(Sb[0]) : 1);
        sdiff = e > sdiff ? e : sdiff;
      }
    }
    free(US);
    free(USV);
    free(Vk);
    double tol = lt_tol(dt, m > n ? m : n);
    CHECK_MSG(recon <= tol, "%s: |U S Vt - A| / |A| = %g > %g", what, recon, tol);
    CHECK_MSG(orth <= tol * (double)(m > n ? m : n), "%s: orthogonality error %g", what, orth);
    CHECK_MSG(order, "%s: S is real, non-negative, descending", what);
    CHECK_MSG(sdiff <= tol, "%s: S without U/V differs by %g", what, sdiff);
  }
  free(A);
  free(U);
  free(S);
  free(V);
  free(S2);
  free(v);
  emlx_release(a);
  emlx_release(u);
  emlx_release(s);
  emlx_release(vt);
  emlx_release(s2);
}

static void test_svd(void) {
  static const int64_t sizes[][2] = {{1, 1}, {2, 2}, {5, 3}, {3, 5}, {16, 16}, {33, 20}, {64, 64}};
  const int64_t b3[1] = {3}, b22[2] = {2, 2};
  for (int d = 0; d < 3; d++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int f = 0; f < 2; f++) {
        check_svd(lt_dtypes[d], NULL, 0, sizes[s][0], sizes[s][1], f, L_CONTIG);
        check_svd(lt_dtypes[d], b3, 1, sizes[s][0], sizes[s][1], f, (int)(s % L_COUNT));
      }
  for (int l = 0; l < L_COUNT; l++)
    check_svd(EMLX_COMPLEX64, b22, 2, 4, 7, l & 1, l);
  /* a rank-deficient matrix: trailing singular values ~ 0 */
  lt_c v[12];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++)
      v[i * 3 + j] = (double)(i + 1) * (double)(j + 2);
  int64_t shape[2] = {4, 3};
  emlx_array *a = lt_make(EMLX_FLOAT64, shape, 2, v), *s = NULL;
  CHECK_OK(emlx_linalg_svd(a, false, true, NULL, &s, NULL));
  lt_c *S = s ? lt_read(s) : NULL;
  if (S)
    CHECK_MSG(creal(S[1]) < 1e-12 * creal(S[0]) && creal(S[2]) < 1e-12 * creal(S[0]),
              "rank-1 svd: s = %g %g %g", creal(S[0]), creal(S[1]), creal(S[2]));
  free(S);
  emlx_release(a);
  emlx_release(s);
}

/* ---- LU ------------------------------------------------------------------------------------ */

static void check_lu(emlx_dtype dt, const int64_t *batch, int nb, int64_t m, int64_t n, int layout,
                     bool singular) {
  int64_t count = tu_numel(batch, nb), k = m < n ? m : n;
  lt_c *v = random_stack(count, m, n, dt == EMLX_COMPLEX64, layout);
  if (singular) /* column 0 duplicated into the last column: exactly singular when square */
    for (int64_t b = 0; b < count; b++)
      for (int64_t i = 0; i < m; i++)
        v[(b * m + i) * n + n - 1] = v[(b * m + i) * n];
  emlx_array *a = make_view(dt, batch, nb, m, n, v, layout), *p = NULL, *l = NULL, *u = NULL,
             *lu = NULL, *piv = NULL;
  lt_c *A = seen(a);
  CHECK_OK(emlx_linalg_lu(a, &p, &l, &u));
  CHECK_OK(emlx_linalg_lu_factor(a, &lu, &piv));
  char what[128];
  snprintf(what, sizeof what, "lu %s %lldx%lld batch %lld %s%s", tu_dname(dt), (long long)m,
           (long long)n, (long long)count, layout_name[layout], singular ? " singular" : "");
  int64_t ps[EMLX_MAX_NDIM], ls[EMLX_MAX_NDIM], us[EMLX_MAX_NDIM], fs[EMLX_MAX_NDIM],
      vs[EMLX_MAX_NDIM];
  int nd = lt_shape(ls, batch, nb, m, k);
  lt_shape(us, batch, nb, k, n);
  lt_shape(fs, batch, nb, m, n);
  lt_shape(ps, batch, nb, m, 0);
  lt_shape(vs, batch, nb, k, 0);
  lt_check_shape(p, EMLX_UINT32, ps, nd - 1, what);
  lt_check_shape(l, dt, ls, nd, what);
  lt_check_shape(u, dt, us, nd, what);
  lt_check_shape(lu, dt, fs, nd, what);
  lt_check_shape(piv, EMLX_UINT32, vs, nd - 1, what);
  lt_c *P = p ? lt_read(p) : NULL, *L = l ? lt_read(l) : NULL, *U = u ? lt_read(u) : NULL,
       *F = lu ? lt_read(lu) : NULL, *V = piv ? lt_read(piv) : NULL;
  if (A && P && L && U && F && V) {
    double recon = 0, recon2 = 0;
    bool perm_ok = true, shape_ok = true, same = true;
    /* complex pivoting compares |re| + |im|, so |l| may reach sqrt(2) */
    double lmax = (dt == EMLX_COMPLEX64 ? sqrt(2.0) : 1.0) + 1e-6;
    lt_c *LU = malloc((size_t)(m * n + 1) * sizeof *LU);
    int64_t *perm = malloc((size_t)(m + 1) * sizeof *perm);
    for (int64_t b = 0; b < count; b++) {
      const lt_c *Pb = P + b * m, *Lb = L + b * m * k, *Ub = U + b * k * n, *Fb = F + b * m * n,
                 *Vb = V + b * k, *Ab = A + b * m * n;
      /* p is a permutation and A[i] = (L U)[p[i]] */
      bool *hit = calloc((size_t)(m + 1), 1);
      for (int64_t i = 0; i < m; i++) {
        int64_t pi = (int64_t)creal(Pb[i]);
        if (pi < 0 || pi >= m || hit[pi])
          perm_ok = false;
        else
          hit[pi] = true;
      }
      free(hit);
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < k; j++) {
          lt_c x = Lb[i * k + j];
          shape_ok &= j > i ? x == 0 : j == i ? x == 1 : cabs(x) <= lmax;
        }
      shape_ok &= lt_triangle_zero(Ub, k, n, true);
      lt_matmul(Lb, Ub, LU, m, k, n);
      if (perm_ok) {
        double s = 0, t = 0;
        for (int64_t i = 0; i < m; i++)
          for (int64_t j = 0; j < n; j++) {
            lt_c d = Ab[i * n + j] - LU[(int64_t)creal(Pb[i]) * n + j];
            s += creal(d * conj(d));
          }
        t = lt_norm(Ab, m * n);
        double r = sqrt(s) / (t > 0 ? t : 1);
        recon = r > recon ? r : recon;
      }
      /* the compact form holds the same L and U; pivots reproduce p */
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
          lt_c want = j < i ? (j < k ? Lb[i * k + j] : 0) : (i < k ? Ub[i * n + j] : 0);
          if (j < k || i < k)
            same &= Fb[i * n + j] == want;
        }
      for (int64_t i = 0; i < m; i++)
        perm[i] = i;
      for (int64_t i = 0; i < k; i++) {
        int64_t t2 = (int64_t)creal(Vb[i]);
        if (t2 < i || t2 >= m) {
          same = false;
          continue;
        }
        int64_t x = perm[i];
        perm[i] = perm[t2];
        perm[t2] = x;
      }
      for (int64_t j = 0; j < m; j++)
        same &= (int64_t)creal(Pb[perm[j]]) == j;
      (void)recon2;
    }
    free(LU);
    free(perm);
    double tol = lt_tol(dt, m > n ? m : n);
    CHECK_MSG(perm_ok, "%s: p is a permutation", what);
    CHECK_MSG(shape_ok, "%s: L unit lower with bounded entries, U upper", what);
    CHECK_MSG(recon <= tol, "%s: |A - L[p] U| / |A| = %g > %g", what, recon, tol);
    CHECK_MSG(same, "%s: lu_factor matches lu (L, U and pivots)", what);
  }
  free(A);
  free(P);
  free(L);
  free(U);
  free(F);
  free(V);
  free(v);
  emlx_release(a);
  emlx_release(p);
  emlx_release(l);
  emlx_release(u);
  emlx_release(lu);
  emlx_release(piv);
}

static void test_lu(void) {
  static const int64_t sizes[][2] = {{1, 1}, {3, 3}, {6, 4}, {4, 6}, {21, 21}, {64, 64}};
  const int64_t b4[1] = {4};
  for (int d = 0; d < 3; d++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      check_lu(lt_dtypes[d], NULL, 0, sizes[s][0], sizes[s][1],
               (int)(s % L_COUNT) == L_BROADCAST ? L_CONTIG : (int)(s % L_COUNT), false);
      check_lu(lt_dtypes[d], b4, 1, sizes[s][0], sizes[s][1], (int)((s + 1) % L_COUNT), false);
    }
  check_lu(EMLX_FLOAT64, b4, 1, 5, 5, L_CONTIG, true); /* singular: no error */
  check_lu(EMLX_FLOAT32, NULL, 0, 7, 7, L_TRANSPOSED, true);
  /* MLX's example: p = [2, 0, 1] */
  lt_c v[9] = {2, 5, 7, 3, 4, 6, 1, 8, 9};
  int64_t shape[2] = {3, 3};
  emlx_array *a = lt_make(EMLX_FLOAT32, shape, 2, v), *p = NULL, *l = NULL, *u = NULL;
  CHECK_OK(emlx_linalg_lu(a, &p, NULL, NULL));
  double want[3] = {2, 0, 1};
  int64_t three = 3;
  tu_check_array(p, EMLX_UINT32, &three, 1, want, 0, "lu p of MLX's example");
  emlx_release(p);
  CHECK_OK(emlx_linalg_lu_factor(a, NULL, &p));
  double wpiv[3] = {1, 2, 2};
  tu_check_array(p, EMLX_UINT32, &three, 1, wpiv, 0, "lu_factor pivots of MLX's example");
  emlx_release(p);
  emlx_release(a);
  emlx_release(l);
  emlx_release(u);
}

/* ---- Cholesky ------------------------------------------------------------------------------ */

/* The Hermitian matrix made from the lower (or upper) triangle of x; the
 * other triangle of x gets junk (which the op must not read). */
static void spoil_other_triangle(lt_c *x, lt_c *ref, int64_t count, int64_t n, bool upper) {
  for (int64_t b = 0; b < count; b++)
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        bool keep = upper ? j >= i : j <= i;
        lt_c *xb = x + b * n * n, *rb = ref + b * n * n;
        if (keep) {
          rb[i * n + j] = i == j ? creal(xb[i * n + j]) : xb[i * n + j];
          rb[j * n + i] = conj(rb[i * n + j]);
        }
      }
  for (int64_t b = 0; b < count; b++)
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++)
        if (upper ? j < i : j > i)
          x[(b * n + i) * n + j] = CMPLX(1000.0, 3.0);
}

static void check_cholesky(emlx_dtype dt, const int64_t *batch, int nb, int64_t n, bool upper,
                           int layout) {
  int64_t count = tu_numel(batch, nb);
  bool cplx = dt == EMLX_COMPLEX64;
  lt_c *v = lt_hpd(&rng, count, n, cplx);
  if (layout == L_BROADCAST)
    for (int64_t b = 1; b < count; b++)
      memcpy(v + b * n * n, v, (size_t)(n * n) * sizeof *v);
  lt_c *ref = calloc((size_t)(count * n * n + 1), sizeof *ref);
  spoil_other_triangle(v, ref, count, n, upper);
  emlx_array *a = make_view(dt, batch, nb, n, n, v, layout);
  lt_c *A = seen(a); /* rounded to the dtype: rebuild the reference from it */
  if (A)
    spoil_other_triangle(A, ref, count, n, upper);
  emlx_array *c = emlx_linalg_cholesky(a, upper);
  int64_t shape[EMLX_MAX_NDIM];
  int nd = lt_shape(shape, batch, nb, n, n);
  char what[128];
  snprintf(what, sizeof what, "cholesky %s n=%lld batch %lld %s %s", tu_dname(dt), (long long)n,
           (long long)count, upper ? "upper" : "lower", layout_name[layout]);
  lt_check_shape(c, dt, shape, nd, what);
  lt_c *C = c ? lt_read(c) : NULL;
  if (A && C) {
    double recon = 0;
    bool tri = true, diag = true;
    lt_c *H = malloc((size_t)(n * n + 1) * sizeof *H), *P = malloc((size_t)(n * n + 1) * sizeof *P);
    for (int64_t b = 0; b < count; b++) {
      const lt_c *Cb = C + b * n * n;
      lt_transpose(Cb, H, n, n, true); /* C^H */
      if (upper)
        lt_matmul(H, Cb, P, n, n, n); /* U^H U */
      else
        lt_matmul(Cb, H, P, n, n, n); /* L L^H */
      double d = lt_rel_diff(P, ref + b * n * n, n * n);
      recon = d > recon ? d : recon;
      tri &= lt_triangle_zero(Cb, n, n, upper);
      for (int64_t i = 0; i < n; i++)
        diag &= creal(Cb[i * n + i]) > 0 && cimag(Cb[i * n + i]) == 0;
    }
    free(H);
    free(P);
    double tol = lt_tol(dt, n);
    CHECK_MSG(recon <= tol, "%s: |L L^H - A| / |A| = %g > %g", what, recon, tol);
    CHECK_MSG(tri, "%s: the other triangle is zero", what);
    CHECK_MSG(diag, "%s: the diagonal is real and positive", what);
  }
  free(A);
  free(C);
  free(v);
  free(ref);
  emlx_release(c);
  emlx_release(a);
}

static void test_cholesky(void) {
  static const int64_t sizes[] = {1, 2, 5, 16, 33, 64};
  const int64_t b3[1] = {3}, b21[2] = {2, 1};
  for (int d = 0; d < 3; d++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int up = 0; up < 2; up++) {
        check_cholesky(lt_dtypes[d], NULL, 0, sizes[s], up, L_CONTIG);
        check_cholesky(lt_dtypes[d], b3, 1, sizes[s], up, (int)((s + (size_t)up) % L_COUNT));
      }
  for (int l = 0; l < L_COUNT; l++)
    check_cholesky(EMLX_FLOAT64, b21, 2, 6, l & 1, l);
}

/* ---- eigh ---------------------------------------------------------------------------------- */

static void check_eigh(emlx_dtype dt, const int64_t *batch, int nb, int64_t n, bool upper,
                       int layout) {
  int64_t count = tu_numel(batch, nb);
  bool cplx = dt == EMLX_COMPLEX64;
  emlx_dtype rdt = cplx ? EMLX_FLOAT32 : dt;
  lt_c *v = random_stack(count, n, n, cplx, layout);
  lt_c *ref = calloc((size_t)(count * n * n + 1), sizeof *ref);
  spoil_other_triangle(v, ref, count, n, upper);
  emlx_array *a = make_view(dt, batch, nb, n, n, v, layout), *w = NULL, *vec = NULL;
  lt_c *A = seen(a);
  if (A)
    spoil_other_triangle(A, ref, count, n, upper);
  CHECK_OK(emlx_linalg_eigh(a, upper ? "U" : NULL, &w, &vec));
  emlx_array *w2 = emlx_linalg_eigvalsh(a, upper ? "U" : "L");
  int64_t vs[EMLX_MAX_NDIM], ws[EMLX_MAX_NDIM];
  int nd = lt_shape(vs, batch, nb, n, n);
  lt_shape(ws, batch, nb, n, 0);
  char what[128];
  snprintf(what, sizeof what, "eigh %s n=%lld batch %lld %s %s", tu_dname(dt), (long long)n,
           (long long)count, upper ? "U" : "L", layout_name[layout]);
  lt_check_shape(w, rdt, ws, nd - 1, what);
  lt_check_shape(w2, rdt, ws, nd - 1, what);
  lt_check_shape(vec, dt, vs, nd, what);
  lt_c *W = w ? lt_read(w) : NULL, *W2 = w2 ? lt_read(w2) : NULL, *V = vec ? lt_read(vec) : NULL;
  if (A && W && W2 && V) {
    double resid = 0, orth = 0, wdiff = 0;
    bool asc = true;
    lt_c *AV = malloc((size_t)(n * n + 1) * sizeof *AV);
    for (int64_t b = 0; b < count; b++) {
      const lt_c *Vb = V + b * n * n, *Wb = W + b * n;
      lt_matmul(ref + b * n * n, Vb, AV, n, n, n);
      double s = 0;
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
          lt_c d = AV[i * n + j] - Vb[i * n + j] * Wb[j];
          s += creal(d * conj(d));
        }
      double an = lt_norm(ref + b * n * n, n * n);
      double r = sqrt(s) / (an > 0 ? an : 1);
      resid = r > resid ? r : resid;
      double o = lt_orth_cols(Vb, n, n);
      orth = o > orth ? o : orth;
      for (int64_t j = 0; j < n; j++) {
        asc &= cimag(Wb[j]) == 0 && (j == 0 || creal(Wb[j]) >= creal(Wb[j - 1]));
        double e = fabs(creal(Wb[j]) - creal(W2[b * n + j])) / (an > 0 ? an : 1);
        wdiff = e > wdiff ? e : wdiff;
      }
    }
    free(AV);
    double tol = lt_tol(dt, n);
    CHECK_MSG(resid <= tol, "%s: |A V - V diag(w)| / |A| = %g > %g", what, resid, tol);
    CHECK_MSG(orth <= tol * (double)n, "%s: |V^H V - I| = %g", what, orth);
    CHECK_MSG(asc, "%s: eigenvalues real and ascending", what);
    CHECK_MSG(wdiff <= tol, "%s: eigvalsh differs by %g", what, wdiff);
  }
  free(A);
  free(W);
  free(W2);
  free(V);
  free(v);
  free(ref);
  emlx_release(a);
  emlx_release(w);
  emlx_release(w2);
  emlx_release(vec);
}

static void test_eigh(void) {
  static const int64_t sizes[] = {1, 2, 7, 16, 40, 64};
  const int64_t b3[1] = {3}, b12[2] = {1, 2};
  for (int d = 0; d < 3; d++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int up = 0; up < 2; up++) {
        check_eigh(lt_dtypes[d], NULL, 0, sizes[s], up, L_CONTIG);
        check_eigh(lt_dtypes[d], b3, 1, sizes[s], up, (int)((s + 3 * (size_t)up) % L_COUNT));
      }
  for (int l = 0; l < L_COUNT; l++)
    check_eigh(EMLX_COMPLEX64, b12, 2, 5, l & 1, l);
  /* MLX's example */
  lt_c v[4] = {1, -2, -2, 1};
  int64_t shape[2] = {2, 2}, two = 2;
  emlx_array *a = lt_make(EMLX_FLOAT32, shape, 2, v);
  emlx_array *w = emlx_linalg_eigvalsh(a, NULL);
  double want[2] = {-1, 3};
  tu_check_array(w, EMLX_FLOAT32, &two, 1, want, 4, "eigvalsh of MLX's example");
  emlx_release(w);
  emlx_release(a);
}

int main(void) {
  test_qr();
  test_svd();
  test_lu();
  test_cholesky();
  test_eigh();
  return tu_finish();
}
