/* test_kv_cache.c — the KV-cache attention functions: a prefill then decode
 * steps in both layouts (kv_cache_attention: {B, T, N, D};
 * kv_cache_sdpa_update: {B, N, T, D}) checked against the f64 reference over
 * the valid prefix and against the expected cache contents (rows outside
 * the update untouched); key masks; the in-place steady state (100 decode
 * steps: the cache buffer never moves, active memory does not grow, no step
 * peaks by a cache's size); the copy when the caller keeps the old cache;
 * and the error cases. */
#include "att_ref.h"

enum { B = 2, NQ = 8, NKV = 2, D = 16, TMAX = 40 };

/* index of (b, n, t, d) in a {B, N, T, D} (btnd false) or {B, T, N, D} array */
static int64_t at(bool btnd, int64_t N, int64_t T, int64_t b, int64_t n, int64_t t, int64_t d) {
  return btnd ? ((b * T + t) * N + n) * D + d : ((b * N + n) * T + t) * D + d;
}

static double *rnd(tu_rng *r, int64_t n, emlx_dtype dt) {
  double *v = malloc((size_t)n * sizeof(double));
  for (int64_t i = 0; i < n; i++)
    v[i] = tu_quant(dt, tu_uniform(r, -2, 2));
  return v;
}

/* An array of the logical {B, N, T, D} values v stored in the given layout. */
static emlx_array *make_layout(emlx_dtype dt, bool btnd, int64_t N, int64_t T, const double *v) {
  double *s = malloc((size_t)(B * N * T * D) * sizeof(double));
  for (int64_t b = 0; b < B; b++)
    for (int64_t n = 0; n < N; n++)
      for (int64_t t = 0; t < T; t++)
        for (int64_t d = 0; d < D; d++)
          s[at(btnd, N, T, b, n, t, d)] = v[at(false, N, T, b, n, t, d)];
  int64_t shape[4] = {B, btnd ? T : N, btnd ? N : T, D};
  emlx_array *a = tu_make(dt, shape, 4, s);
  free(s);
  return a;
}

/* Reads a layout array back as logical {B, N, T, D} values. */
static double *read_layout(emlx_array *a, bool btnd, int64_t N, int64_t T) {
  double *s = tu_read(a);
  if (!s)
    return NULL;
  double *v = malloc((size_t)(B * N * T * D) * sizeof(double));
  for (int64_t b = 0; b < B; b++)
    for (int64_t n = 0; n < N; n++)
      for (int64_t t = 0; t < T; t++)
        for (int64_t d = 0; d < D; d++)
          v[at(false, N, T, b, n, t, d)] = s[at(btnd, N, T, b, n, t, d)];
  free(s);
  return v;
}

static void test_steps(emlx_dtype dt, bool btnd, bool masked) {
  char what[96];
  tu_rng r = {btnd * 10 + masked + 100 * (uint64_t)dt};
  double *kc = rnd(&r, B * NKV * TMAX * D, dt), *vc = rnd(&r, B * NKV * TMAX * D, dt);
  emlx_array *kca = make_layout(dt, btnd, NKV, TMAX, kc), *vca = make_layout(dt, btnd, NKV, TMAX, vc);
  int64_t offset = 0;
  const int64_t steps[] = {6, 1, 1, 3, 1, 1};
  for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
    int64_t T = steps[s], valid = offset + T;
    double *q = rnd(&r, B * NQ * T * D, dt), *nk = rnd(&r, B * NKV * T * D, dt),
           *nv = rnd(&r, B * NKV * T * D, dt);
    for (int64_t b = 0; b < B; b++) /* the expected caches */
      for (int64_t n = 0; n < NKV; n++)
        for (int64_t t = 0; t < T; t++)
          for (int64_t d = 0; d < D; d++) {
            kc[at(false, NKV, TMAX, b, n, offset + t, d)] = nk[at(false, NKV, T, b, n, t, d)];
            vc[at(false, NKV, TMAX, b, n, offset + t, d)] = nv[at(false, NKV, T, b, n, t, d)];
          }
    emlx_array *qa = make_layout(dt, btnd, NQ, T, q), *nka = make_layout(dt, btnd, NKV, T, nk),
               *nva = make_layout(dt, btnd, NKV, T, nv);
    double *km = NULL;
    emlx_array *kma = NULL;
    if (masked) { /* batch 0 pads its first two positions; batch 1 attends everywhere */
      km = malloc((size_t)(B * valid) * sizeof(double));
      for (int64_t i = 0; i < B * valid; i++)
        km[i] = i < 2 ? 0 : 1;
      int64_t ks[2] = {B, valid};
      kma = tu_make(EMLX_BOOL, ks, 2, km);
    }
    emlx_array *o = NULL, *kc2 = NULL, *vc2 = NULL;
    float scale = 0.25f;
    int st = btnd ? masked ? emlx_kv_cache_attention_masked(qa, nka, nva, kca, vca, offset, scale,
                                                            kma, &o, &kc2, &vc2)
                           : emlx_kv_cache_attention(qa, nka, nva, kca, vca, offset, scale, &o,
                                                     &kc2, &vc2)
                  : emlx_kv_cache_sdpa_update(qa, nka, nva, kca, vca, offset, scale, &o, &kc2, &vc2);
    snprintf(what, sizeof what, "%s %s%s step %zu (offset %lld, T %lld)", tu_dname(dt),
             btnd ? "kv_cache_attention" : "kv_cache_sdpa_update", masked ? " masked" : "", s,
             (long long)offset, (long long)T);
    if (!CHECK_MSG(st == 0, "%s: returns 0", what))
      break;
    emlx_release(kca), emlx_release(vca);
    kca = kc2, vca = vc2;
    /* reference over the valid prefix */
    double *kp = malloc((size_t)(B * NKV * valid * D) * sizeof(double)),
           *vp = malloc((size_t)(B * NKV * valid * D) * sizeof(double));
    for (int64_t b = 0; b < B; b++)
      for (int64_t n = 0; n < NKV; n++)
        for (int64_t t = 0; t < valid; t++)
          for (int64_t d = 0; d < D; d++) {
            kp[at(false, NKV, valid, b, n, t, d)] = kc[at(false, NKV, TMAX, b, n, t, d)];
            vp[at(false, NKV, valid, b, n, t, d)] = vc[at(false, NKV, TMAX, b, n, t, d)];
          }
    ref_problem rp = {B, NQ, NKV, T, valid, D, D, 0.25, 1, q, kp, vp, 0, NULL, km, NULL};
    double *ref = malloc((size_t)(B * NQ * T * D) * sizeof(double));
    ref_sdpa(&rp, ref);
    double *got = read_layout(o, btnd, NQ, T);
    att_check(got, ref, B * NQ * T * D, dt, what);
    double *gk = read_layout(kca, btnd, NKV, TMAX), *gv = read_layout(vca, btnd, NKV, TMAX);
    bool same = gk && gv;
    for (int64_t i = 0; same && i < B * NKV * TMAX * D; i++)
      same = gk[i] == kc[i] && gv[i] == vc[i];
    CHECK_MSG(same, "%s: the caches hold the new rows and keep every other row", what);
    free(gk), free(gv), free(got), free(ref), free(kp), free(vp), free(q), free(nk), free(nv),
        free(km);
    emlx_release(o), emlx_release(qa), emlx_release(nka), emlx_release(nva), emlx_release(kma);
    offset = valid;
  }
  emlx_release(kca), emlx_release(vca);
  free(kc), free(vc);
}

/* 100 decode steps in the steady state: the cache buffers are reused. */
static void test_in_place(emlx_dtype dt) {
  enum { N = 8, T = 512, DD = 64, G = 4 };
  const int64_t cs[4] = {1, N, T, DD}, qs[4] = {1, N * G, 1, DD}, ns[4] = {1, N, 1, DD};
  size_t esz = emlx_dtype_size(dt), cache_bytes = (size_t)(N * T * DD) * esz;
  emlx_array *kc = emlx_zeros(cs, 4, dt, EMLX_CPU), *vc = emlx_zeros(cs, 4, dt, EMLX_CPU);
  CHECK(emlx_eval(&kc, 1) == 0 && emlx_eval(&vc, 1) == 0);
  tu_rng r = {5};
  double *host_k = calloc((size_t)(N * T * DD), sizeof(double)),
         *host_v = calloc((size_t)(N * T * DD), sizeof(double));
  const void *kbuf = NULL, *vbuf = NULL;
  size_t active_warm = 0, worst_peak = 0;
  bool moved = false, grew = false;
  double *last_q = NULL;
  emlx_array *last_o = NULL;
  for (int step = 0; step < 100; step++) {
    double *q = rnd(&r, N * G * DD, dt), *nk = rnd(&r, N * DD, dt), *nv = rnd(&r, N * DD, dt);
    for (int64_t n = 0; n < N; n++)
      for (int64_t d = 0; d < DD; d++) {
        host_k[(n * T + step) * DD + d] = nk[n * DD + d];
        host_v[(n * T + step) * DD + d] = nv[n * DD + d];
      }
    emlx_array *qa = tu_make(dt, qs, 4, q), *nka = tu_make(dt, ns, 4, nk), *nva = tu_make(dt, ns, 4, nv);
    size_t before = emlx_memory_info().active_memory;
    emlx_reset_peak_memory();
    emlx_array *o, *kc2, *vc2;
    if (emlx_kv_cache_sdpa_update(qa, nka, nva, kc, vc, step, 0.125f, &o, &kc2, &vc2) != 0) {
      CHECK_MSG(false, "step %d: kv_cache_sdpa_update", step);
      break;
    }
    emlx_release(kc), emlx_release(vc), emlx_release(qa), emlx_release(nka), emlx_release(nva);
    kc = kc2, vc = vc2;
    emlx_array *all[3] = {o, kc, vc};
    CHECK(emlx_eval(all, 3) == 0);
    size_t peak = emlx_memory_info().peak_memory - before;
    if (step == 0) {
      kbuf = emlx_data(kc), vbuf = emlx_data(vc);
    } else {
      moved = moved || emlx_data(kc) != kbuf || emlx_data(vc) != vbuf;
      worst_peak = peak > worst_peak ? peak : worst_peak;
    }
    emlx_release(last_o);
    free(last_q);
    last_o = o, last_q = q;
    size_t active = emlx_memory_info().active_memory;
    if (step == 1)
      active_warm = active;
    else if (step > 1 && active > active_warm)
      grew = true;
    free(nk), free(nv);
  }
  CHECK_MSG(!moved, "%s: the caches keep their buffers over 100 steps", tu_dname(dt));
  CHECK_MSG(!grew, "%s: active memory does not grow after the first steps", tu_dname(dt));
  CHECK_MSG(worst_peak < cache_bytes / 2,
            "%s: no step allocates a cache (worst peak over the start %zu bytes, a cache is %zu)",
            tu_dname(dt), worst_peak, cache_bytes);
  /* the last step's attention over the 100 valid rows */
  ref_problem rp = {1, N * G, N, 1, 100, DD, DD, 0.125, 1, last_q, NULL, NULL, 0, NULL, NULL, NULL};
  double *kp = malloc((size_t)(N * 100 * DD) * sizeof(double)), *vp = malloc((size_t)(N * 100 * DD) * sizeof(double));
  for (int64_t n = 0; n < N; n++)
    for (int64_t t = 0; t < 100; t++)
      for (int64_t d = 0; d < DD; d++) {
        kp[(n * 100 + t) * DD + d] = host_k[(n * T + t) * DD + d];
        vp[(n * 100 + t) * DD + d] = host_v[(n * T + t) * DD + d];
      }
  rp.k = kp, rp.v = vp;
  double *ref = malloc((size_t)(N * G * DD) * sizeof(double));
  ref_sdpa(&rp, ref);
  double *got = tu_read(last_o);
  att_check(got, ref, N * G * DD, dt, "step 99 attention");
  free(got), free(ref), free(kp), free(vp), free(last_q), free(host_k), free(host_v);
  emlx_release(last_o), emlx_release(kc), emlx_release(vc);
}

/* A caller that keeps the old cache gets a copy; the old one is untouched. */
static void test_copy_when_shared(void) {
  const int64_t cs[4] = {1, 2, 8, 16}, qs[4] = {1, 4, 1, 16}, ns[4] = {1, 2, 1, 16};
  double ones[256], q[64], n1[32];
  for (int i = 0; i < 256; i++)
    ones[i] = 1;
  for (int i = 0; i < 64; i++)
    q[i] = 0.5;
  for (int i = 0; i < 32; i++)
    n1[i] = 7;
  emlx_array *kc = tu_make(EMLX_FLOAT32, cs, 4, ones), *vc = tu_make(EMLX_FLOAT32, cs, 4, ones),
             *qa = tu_make(EMLX_FLOAT32, qs, 4, q), *na = tu_make(EMLX_FLOAT32, ns, 4, n1);
  emlx_array *o, *kc2, *vc2;
  CHECK_OK(emlx_kv_cache_sdpa_update(qa, na, na, kc, vc, 3, 0.25f, &o, &kc2, &vc2));
  emlx_array *all[3] = {o, kc2, vc2};
  CHECK(emlx_eval(all, 3) == 0);
  CHECK(!emlx_shares_buffer(kc, kc2));
  double *old = tu_read(kc), *upd = tu_read(kc2), *att = tu_read(o);
  bool old_ok = old != NULL, upd_ok = upd != NULL;
  for (int i = 0; old && i < 256; i++)
    old_ok = old_ok && old[i] == 1;
  for (int i = 0; upd && i < 256; i++)
    upd_ok = upd_ok && upd[i] == ((i / 16) % 8 == 3 ? 7 : 1);
  CHECK_MSG(old_ok, "the kept cache is unchanged");
  CHECK_MSG(upd_ok, "the new cache has row 3 updated");
  /* rows 0..3 of V: 1, 1, 1, 7; scores q.k = 8 (rows of ones) vs 56: softmax weights */
  double w1 = exp(0.25 * 8), w7 = exp(0.25 * 56), want = (3 * w1 + 7 * w7) / (3 * w1 + w7);
  CHECK_MSG(att && fabs(att[0] - want) < 1e-5 * want, "attention over rows 0..3: %g vs %g",
            att ? att[0] : 0.0, want);
  free(old), free(upd), free(att);
  emlx_release(o), emlx_release(kc2), emlx_release(vc2);
  /* outputs released before eval: the attention alone still sees the update */
  CHECK_OK(emlx_kv_cache_sdpa_update(qa, na, na, kc, vc, 3, 0.25f, &o, &kc2, &vc2));
  emlx_release(kc2), emlx_release(vc2);
  att = tu_read(o);
  CHECK_MSG(att && fabs(att[0] - want) < 1e-5 * want, "attention with the caches released: %g",
            att ? att[0] : 0.0);
  free(att);
  emlx_release(o), emlx_release(kc), emlx_release(vc), emlx_release(qa), emlx_release(na);
}

static void test_errors(void) {
  const int64_t cs[4] = {1, 2, 8, 16}, qs[4] = {1, 4, 1, 16}, ns[4] = {1, 2, 1, 16},
                q3s[4] = {1, 3, 1, 16}, c3[3] = {2, 8, 16}, cd[4] = {1, 2, 8, 8};
  emlx_array *kc = emlx_zeros(cs, 4, EMLX_FLOAT32, EMLX_CPU), *q = emlx_zeros(qs, 4, EMLX_FLOAT32, EMLX_CPU),
             *n = emlx_zeros(ns, 4, EMLX_FLOAT32, EMLX_CPU), *q3 = emlx_zeros(q3s, 4, EMLX_FLOAT32, EMLX_CPU),
             *r3 = emlx_zeros(c3, 3, EMLX_FLOAT32, EMLX_CPU), *kch = emlx_zeros(cs, 4, EMLX_FLOAT16, EMLX_CPU),
             *kcd = emlx_zeros(cd, 4, EMLX_FLOAT32, EMLX_CPU);
  const int64_t kms[2] = {1, 5};
  emlx_array *km = emlx_zeros(kms, 2, EMLX_BOOL, EMLX_CPU);
  emlx_array *o = q, *k2 = q, *v2 = q;
  CHECK_FAILS(emlx_kv_cache_sdpa_update(q, n, n, kc, kc, 8, 1.0f, &o, &k2, &v2)); /* 8 + 1 > 8 */
  CHECK(o == NULL && k2 == NULL && v2 == NULL);
  CHECK_FAILS(emlx_kv_cache_sdpa_update(q, n, n, kc, kc, -1, 1.0f, &o, &k2, &v2));
  CHECK_FAILS(emlx_kv_cache_sdpa_update(q3, n, n, kc, kc, 0, 1.0f, &o, &k2, &v2)); /* 3 over 2 */
  CHECK_FAILS(emlx_kv_cache_sdpa_update(q, n, n, kch, kch, 0, 1.0f, &o, &k2, &v2)); /* dtypes */
  CHECK_FAILS(emlx_kv_cache_sdpa_update(q, n, n, kc, kcd, 0, 1.0f, &o, &k2, &v2)); /* shapes */
  CHECK_FAILS(emlx_kv_cache_sdpa_update(q, n, n, r3, r3, 0, 1.0f, &o, &k2, &v2)); /* rank 3 */
  CHECK_FAILS(emlx_kv_cache_sdpa_update(q, n, n, kc, NULL, 0, 1.0f, &o, &k2, &v2));
  CHECK_FAILS(emlx_kv_cache_sdpa_update(q, n, n, kc, kc, 0, 1.0f, NULL, &k2, &v2));
  CHECK_FAILS(emlx_kv_cache_attention_masked(q, n, n, kc, kc, 0, 1.0f, NULL, &o, &k2, &v2));
  /* BTND: {1, 1, 4, 16} etc.; key_mask must cover offset + T_new = 2 */
  const int64_t qb[4] = {1, 1, 4, 16}, nb[4] = {1, 1, 2, 16}, cb[4] = {1, 8, 2, 16};
  emlx_array *qbt = emlx_zeros(qb, 4, EMLX_FLOAT32, EMLX_CPU), *nbt = emlx_zeros(nb, 4, EMLX_FLOAT32, EMLX_CPU),
             *cbt = emlx_zeros(cb, 4, EMLX_FLOAT32, EMLX_CPU);
  CHECK_FAILS(emlx_kv_cache_attention_masked(qbt, nbt, nbt, cbt, cbt, 1, 1.0f, km, &o, &k2, &v2));
  CHECK_FAILS(emlx_causal_kv_attention(qbt, nbt, nbt, cbt, cbt, 1, 1.0f, km, &o, &k2, &v2));
  CHECK_FAILS(emlx_kv_cache_attention(qbt, nbt, nbt, cbt, cbt, 8, 1.0f, &o, &k2, &v2));
  CHECK_OK(emlx_causal_kv_attention(qbt, nbt, nbt, cbt, cbt, 1, 1.0f, NULL, &o, &k2, &v2));
  emlx_release(o), emlx_release(k2), emlx_release(v2);
  emlx_array *all[] = {kc, q, n, q3, r3, kch, kcd, km, qbt, nbt, cbt};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    emlx_release(all[i]);
}

int main(void) {
  const emlx_dtype dts[3] = {EMLX_FLOAT32, EMLX_FLOAT16, EMLX_BFLOAT16};
  for (int i = 0; i < 3; i++) {
    test_steps(dts[i], false, false);
    test_steps(dts[i], true, false);
    test_steps(dts[i], true, true);
  }
  test_in_place(EMLX_FLOAT32);
  test_in_place(EMLX_BFLOAT16);
  test_copy_when_shared();
  test_errors();
  return tu_finish();
}
