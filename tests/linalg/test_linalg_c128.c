/* test_linalg_c128.c — linalg on complex128 (LAPACKE z-routines): inv,
 * solve, cholesky, eigh, svd and qr of a random well-conditioned matrix,
 * each checked by reconstruction in long double (A inv(A) = I, A x = b,
 * L L^H = A, A V = V diag(w), U diag(s) V^H = A, Q R = A) and by its result
 * dtypes (eigenvalues and singular values float64). */
#include "../c128_test_util.h"

#define N 6

static double g_a[2 * N * N], g_h[2 * N * N]; /* general (diagonally dominant), Hermitian PD */

static void make_inputs(void) {
  tu_rng rng = {8};
  for (int i = 0; i < 2 * N * N; i++)
    g_a[i] = tu_uniform(&rng, -1, 1);
  for (int i = 0; i < N; i++)
    g_a[2 * (i * N + i)] += 4.0;
  /* h = a a^H + I */
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      lz acc = i == j ? 1.0L : 0.0L;
      for (int p = 0; p < N; p++)
        acc += zt_lz(g_a + 2 * (i * N + p)) * conjl(zt_lz(g_a + 2 * (j * N + p)));
      g_h[2 * (i * N + j)] = (double)creall(acc);
      g_h[2 * (i * N + j) + 1] = i == j ? 0.0 : (double)cimagl(acc);
    }
}

/* c (m x n) = x (m x k) y (k x n), optionally conjugate-transposing y. */
static void mm(const double *x, const double *y, int m, int k, int n, bool yh, lz *c) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      lz acc = 0;
      for (int p = 0; p < k; p++)
        acc += zt_lz(x + 2 * (i * k + p)) *
               (yh ? conjl(zt_lz(y + 2 * (j * k + p))) : zt_lz(y + 2 * (p * n + j)));
      c[i * n + j] = acc;
    }
}

static emlx_array *mat(const double *v) { return zt_make(v, (int64_t[]){N, N}, 2); }

static void test_inv_solve(void) {
  emlx_array *a = mat(g_a);
  double *inv = zt_take(emlx_linalg_inv(a), N * N, "inv c128");
  if (inv) {
    lz prod[N * N], eye[N * N];
    mm(g_a, inv, N, N, N, false, prod);
    for (int i = 0; i < N * N; i++)
      eye[i] = i % (N + 1) == 0 ? 1.0L : 0.0L;
    double pd[2 * N * N];
    for (int i = 0; i < N * N; i++)
      pd[2 * i] = (double)creall(prod[i]), pd[2 * i + 1] = (double)cimagl(prod[i]);
    zt_check(pd, eye, N * N, 64, 1.0, "a inv(a) c128");
  }
  free(inv);
  double bv[2 * N];
  for (int i = 0; i < 2 * N; i++)
    bv[i] = 0.25 * i - 1;
  emlx_array *b = zt_make(bv, (int64_t[]){N}, 1);
  double *x = zt_take(emlx_linalg_solve(a, b), N, "solve c128");
  if (x) {
    lz ax[N], bref[N];
    mm(g_a, x, N, N, 1, false, ax);
    double ad[2 * N];
    for (int i = 0; i < N; i++) {
      ad[2 * i] = (double)creall(ax[i]), ad[2 * i + 1] = (double)cimagl(ax[i]);
      bref[i] = zt_lz(bv + 2 * i);
    }
    zt_check(ad, bref, N, 64, 1.0, "a solve(a, b) c128");
  }
  free(x);
  emlx_release(b), emlx_release(a);
}

static void check_recon(const lz *got, const double *want, const char *what, double ulps) {
  lz ref[N * N];
  double gd[2 * N * N];
  for (int i = 0; i < N * N; i++) {
    ref[i] = zt_lz(want + 2 * i);
    gd[2 * i] = (double)creall(got[i]), gd[2 * i + 1] = (double)cimagl(got[i]);
  }
  zt_check(gd, ref, N * N, ulps, 4.0, what);
}

static void test_factorisations(void) {
  emlx_array *h = mat(g_h), *a = mat(g_a);
  lz r[N * N];
  double *l = zt_take(emlx_linalg_cholesky(h, false), N * N, "cholesky c128");
  if (l) {
    mm(l, l, N, N, N, true, r);
    check_recon(r, g_h, "L L^H c128", 128);
  }
  free(l);
  emlx_array *w = NULL, *v = NULL;
  CHECK_OK(emlx_linalg_eigh(h, NULL, &w, &v));
  CHECK(w && emlx_array_dtype(w) == EMLX_FLOAT64);
  double *wd = w ? tu_read(w) : NULL;
  double *vd = zt_take(v, N * N, "eigh vectors c128");
  if (wd && vd) {
    double vw[2 * N * N]; /* V diag(w) */
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) {
        vw[2 * (i * N + j)] = vd[2 * (i * N + j)] * wd[j];
        vw[2 * (i * N + j) + 1] = vd[2 * (i * N + j) + 1] * wd[j];
      }
    lz hv[N * N];
    mm(g_h, vd, N, N, N, false, hv);
    check_recon(hv, vw, "H V = V diag(w) c128", 512);
  }
  free(wd), free(vd), emlx_release(w);
  emlx_array *u = NULL, *s = NULL, *vt = NULL;
  CHECK_OK(emlx_linalg_svd(a, true, true, &u, &s, &vt));
  CHECK(s && emlx_array_dtype(s) == EMLX_FLOAT64);
  double *sd = s ? tu_read(s) : NULL;
  double *ud = zt_take(u, N * N, "svd u c128"), *vtd = zt_take(vt, N * N, "svd vt c128");
  if (sd && ud && vtd) {
    double us[2 * N * N];
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) {
        us[2 * (i * N + j)] = ud[2 * (i * N + j)] * sd[j];
        us[2 * (i * N + j) + 1] = ud[2 * (i * N + j) + 1] * sd[j];
      }
    mm(us, vtd, N, N, N, false, r);
    check_recon(r, g_a, "U S Vt c128", 256);
  }
  free(sd), free(ud), free(vtd), emlx_release(s);
  emlx_array *q = NULL, *rr = NULL;
  CHECK_OK(emlx_linalg_qr(a, false, &q, &rr));
  double *qd = zt_take(q, N * N, "qr q c128"), *rd = zt_take(rr, N * N, "qr r c128");
  if (qd && rd) {
    mm(qd, rd, N, N, N, false, r);
    check_recon(r, g_a, "Q R c128", 128);
  }
  free(qd), free(rd);
  emlx_release(a), emlx_release(h);
}

int main(void) {
  make_inputs();
  test_inv_solve();
  test_factorisations();
  return tu_finish();
}
