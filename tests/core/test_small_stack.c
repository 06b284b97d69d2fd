/* test_small_stack.c — every kernel family evaluated on a thread with a
 * 128 KiB stack (as BEAM schedulers and other embedding hosts run): fused
 * elementwise regions, fused reductions (row and column mode), the
 * reductions, scans and sorts, indexing, matmul (f32 and bf16), conv and
 * window reductions, fft, linalg and the math loops. No kernel may keep a
 * large buffer on its stack; a frame that does overflows this thread and
 * the test dies. Each result must equal, bit for bit, the same graph
 * evaluated on the main thread. */
#include <pthread.h>
#include <string.h>

#include "test_util.h"

#define SMALL_STACK (128 * 1024)

static emlx_array *input(emlx_dtype d, const int64_t *shape, int nd, uint64_t seed) {
  int64_t n = tu_numel(shape, nd);
  double *v = malloc((size_t)n * sizeof *v);
  tu_rng r = {seed};
  for (int64_t i = 0; i < n; i++)
    v[i] = tu_uniform(&r, -2, 2);
  emlx_array *a = tu_make(d, shape, nd, v);
  free(v);
  return a;
}

typedef emlx_array *(*build_fn)(void);

static const int64_t S1M[1] = {1 << 20}, SQ[2] = {512, 768};

static emlx_array *fused_chain(void) { /* exp(x) * 2 + sinh(x), one region */
  emlx_array *x = input(EMLX_FLOAT32, S1M, 1, 1), *two = emlx_scalar_tensor(2, EMLX_FLOAT32, 0);
  emlx_array *e = emlx_exp(x), *m = emlx_multiply(e, two), *s = emlx_sinh(x);
  emlx_array *r = emlx_add(m, s);
  emlx_release(s), emlx_release(m), emlx_release(e), emlx_release(two), emlx_release(x);
  return r;
}
static emlx_array *fused_sum_rows(void) { /* sum(exp(x)) over all: row mode */
  emlx_array *x = input(EMLX_FLOAT32, S1M, 1, 2), *e = emlx_exp(x);
  emlx_array *r = emlx_sum(e, NULL, 0, false);
  emlx_release(e), emlx_release(x);
  return r;
}
static emlx_array *fused_sum_cols(void) { /* sum(x * x, axis 0): column mode */
  emlx_array *x = input(EMLX_FLOAT32, SQ, 2, 3), *q = emlx_multiply(x, x);
  const int ax = 0;
  emlx_array *r = emlx_sum(q, &ax, 1, false);
  emlx_release(q), emlx_release(x);
  return r;
}
static emlx_array *fused_astype_sum(void) { /* sum(astype(x_i32, int64)) */
  emlx_array *x = input(EMLX_INT32, S1M, 1, 4), *w = emlx_astype(x, EMLX_INT64);
  emlx_array *r = emlx_sum(w, NULL, 0, false);
  emlx_release(w), emlx_release(x);
  return r;
}
static emlx_array *fused_min_cols(void) { /* min(abs(x), axis 0): the other reduce driver */
  emlx_array *x = input(EMLX_FLOAT64, SQ, 2, 5), *a = emlx_abs(x);
  const int ax = 0;
  emlx_array *r = emlx_min(a, &ax, 1, false);
  emlx_release(a), emlx_release(x);
  return r;
}
static emlx_array *reduce_plain(void) {
  emlx_array *x = input(EMLX_FLOAT32, SQ, 2, 6);
  const int ax = 1;
  emlx_array *r = emlx_product(x, &ax, 1, false);
  emlx_release(x);
  return r;
}
static emlx_array *argmax(void) {
  emlx_array *x = input(EMLX_FLOAT32, SQ, 2, 7);
  emlx_array *r = emlx_argmax(x, 0, false, NULL);
  emlx_release(x);
  return r;
}
static emlx_array *scan(void) {
  emlx_array *x = input(EMLX_FLOAT32, SQ, 2, 8);
  emlx_array *r = emlx_cumulative_sum(x, 0, false, true);
  emlx_release(x);
  return r;
}
static emlx_array *sort(void) {
  emlx_array *x = input(EMLX_FLOAT32, S1M, 1, 9);
  emlx_array *r = emlx_argsort(x, 0, NULL);
  emlx_release(x);
  return r;
}
static emlx_array *math_loops(void) { /* f64 erf_inv and sigmoid, f16 tanh */
  emlx_array *x = input(EMLX_FLOAT64, SQ, 2, 10), *h = emlx_astype(x, EMLX_FLOAT16);
  emlx_array *half = emlx_scalar_tensor(0.4, EMLX_FLOAT64, 0), *y = emlx_multiply(x, half);
  emlx_array *ei = emlx_erf_inv(y), *sg = emlx_sigmoid(x), *t = emlx_tanh(h);
  emlx_array *t64 = emlx_astype(t, EMLX_FLOAT64), *a = emlx_add(ei, sg), *r = emlx_add(a, t64);
  emlx_release(a), emlx_release(t64), emlx_release(t), emlx_release(sg), emlx_release(ei);
  emlx_release(y), emlx_release(half), emlx_release(h), emlx_release(x);
  return r;
}
static emlx_array *indexing(void) { /* pad, transpose copy, take, slice_update */
  emlx_array *x = input(EMLX_FLOAT32, SQ, 2, 11);
  int64_t lo[2] = {3, 1}, hi[2] = {2, 5}, in[2] = {1, 0};
  emlx_array *p = emlx_pad(x, lo, hi, in, 2, 0.5);
  emlx_array *t = emlx_transpose(p, NULL, 0), *c = emlx_copy(t);
  int64_t ni = 300;
  double *iv = malloc((size_t)ni * sizeof *iv);
  for (int64_t i = 0; i < ni; i++)
    iv[i] = (double)((i * 37) % 512);
  emlx_array *idx = tu_make1(EMLX_INT32, ni, iv);
  free(iv);
  emlx_array *tk = emlx_take(c, idx, 1, NULL);
  int64_t st[2] = {10, 20}, sp[2] = {40, 100}, stp[2] = {3, 7};
  emlx_array *u = emlx_scalar_tensor(-1, EMLX_FLOAT32, 0);
  emlx_array *r = emlx_slice_update(tk, u, st, sp, stp, 2);
  emlx_release(u), emlx_release(tk), emlx_release(idx), emlx_release(c), emlx_release(t);
  emlx_release(p), emlx_release(x);
  return r;
}
static emlx_array *matmul_f32(void) {
  int64_t sa[2] = {200, 300}, sb[2] = {300, 250};
  emlx_array *a = input(EMLX_FLOAT32, sa, 2, 12), *b = input(EMLX_FLOAT32, sb, 2, 13);
  emlx_array *r = emlx_matmul(a, b);
  emlx_release(a), emlx_release(b);
  return r;
}
static emlx_array *matmul_bf16(void) {
  int64_t sa[3] = {3, 130, 96}, sb[2] = {96, 70};
  emlx_array *a = input(EMLX_BFLOAT16, sa, 3, 14), *b = input(EMLX_BFLOAT16, sb, 2, 15);
  emlx_array *r = emlx_matmul(a, b);
  emlx_release(a), emlx_release(b);
  return r;
}
static emlx_array *conv(void) {
  int64_t sx[4] = {2, 24, 24, 16}, sw[4] = {8, 3, 3, 16};
  emlx_array *x = input(EMLX_FLOAT32, sx, 4, 16), *w = input(EMLX_FLOAT32, sw, 4, 17);
  emlx_array *r = emlx_conv_general(x, w, NULL);
  emlx_release(x), emlx_release(w);
  return r;
}
static emlx_array *window(void) {
  int64_t sx[4] = {2, 40, 40, 8}, win[4] = {1, 3, 3, 1};
  emlx_array *x = input(EMLX_FLOAT32, sx, 4, 18);
  emlx_array *m = emlx_window_max(x, win, 4, NULL), *r = emlx_window_sum(m, win, 4, NULL);
  emlx_release(m), emlx_release(x);
  return r;
}
static emlx_array *fft(void) {
  int64_t s[2] = {64, 1000};
  emlx_array *x = input(EMLX_FLOAT32, s, 2, 19), *c = emlx_astype(x, EMLX_COMPLEX64);
  emlx_array *r = emlx_fft(c, 1000, 1);
  emlx_release(c), emlx_release(x);
  return r;
}
static emlx_array *linalg(void) { /* inv of a well-conditioned batch */
  int64_t s[3] = {4, 48, 48};
  emlx_array *x = input(EMLX_FLOAT32, s, 3, 20);
  int64_t e = 48;
  emlx_array *eye = emlx_eye(e, e, 0, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *k = emlx_scalar_tensor(20, EMLX_FLOAT32, 0), *d = emlx_multiply(eye, k);
  emlx_array *a = emlx_add(x, d), *r = emlx_linalg_inv(a);
  emlx_release(a), emlx_release(d), emlx_release(k), emlx_release(eye), emlx_release(x);
  return r;
}

static const struct {
  const char *name;
  build_fn build;
} families[] = {
    {"fused chain", fused_chain},
    {"fused sum (rows)", fused_sum_rows},
    {"fused sum (cols)", fused_sum_cols},
    {"fused astype sum", fused_astype_sum},
    {"fused min (cols)", fused_min_cols},
    {"product", reduce_plain},
    {"argmax", argmax},
    {"cumulative_sum", scan},
    {"argsort", sort},
    {"math loops", math_loops},
    {"indexing", indexing},
    {"matmul f32", matmul_f32},
    {"matmul bf16", matmul_bf16},
    {"conv", conv},
    {"window", window},
    {"fft", fft},
    {"linalg", linalg},
};
#define NFAM (sizeof families / sizeof families[0])

typedef struct result {
  unsigned char *bytes;
  size_t n;
  char err[256];
} result;

static void evaluate(build_fn build, result *out) {
  emlx_array *a = build();
  out->bytes = NULL;
  out->n = a ? emlx_nbytes(a) : 0;
  out->err[0] = '\0';
  if (a) {
    out->bytes = malloc(out->n ? out->n : 1);
    if (emlx_to_blob(a, out->bytes, out->n) != 0) {
      free(out->bytes);
      out->bytes = NULL;
    }
  }
  if (!out->bytes)
    snprintf(out->err, sizeof out->err, "%s", emlx_last_error());
  emlx_release(a);
}

static result on_small[NFAM];

static void *small_thread(void *arg) {
  (void)arg;
  for (size_t k = 0; k < NFAM; k++)
    evaluate(families[k].build, &on_small[k]);
  return NULL;
}

static void test_small_stack(void) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  CHECK(pthread_attr_setstacksize(&attr, SMALL_STACK) == 0);
  pthread_t th;
  CHECK(pthread_create(&th, &attr, small_thread, NULL) == 0);
  pthread_join(th, NULL);
  pthread_attr_destroy(&attr);
  for (size_t k = 0; k < NFAM; k++) {
    result ref;
    evaluate(families[k].build, &ref);
    CHECK_MSG(ref.bytes && on_small[k].bytes && ref.n == on_small[k].n &&
                  memcmp(ref.bytes, on_small[k].bytes, ref.n) == 0,
              "%s on a 128 KiB stack equals the main thread's (%s%s)", families[k].name,
              on_small[k].err, ref.err);
    free(ref.bytes);
    free(on_small[k].bytes);
  }
}

int main(void) {
  test_small_stack();
  /* Once more with one pool thread: every chunk then runs on the small
   * stack itself, none on a worker's. */
  emlx_set_num_threads(1);
  test_small_stack();
  return tu_finish();
}
