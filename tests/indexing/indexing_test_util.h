/* indexing_test_util.h — helpers shared by the indexing family's tests
 * (test_indexing.c, test_gather_scatter.c): patterned inputs exact in every
 * dtype, broadcast lookups for references, and views built from blobs. */
#ifndef EMLX_INDEXING_TEST_UTIL_H
#define EMLX_INDEXING_TEST_UTIL_H

#include "test_util.h"

/* Value i of a pattern exact in every dtype (small integers; 0/1 for bool,
 * non-negative for unsigned). */
static inline double it_pat(emlx_dtype d, int64_t i, int seed) {
  uint64_t h = (uint64_t)i * 37u + (uint64_t)seed * 11u + 5u;
  if (d == EMLX_BOOL)
    return (double)(h % 3 == 0);
  double v = (double)(h % 101);
  return d >= EMLX_UINT8 && d <= EMLX_UINT64 ? v : v - 50.0;
}

/* A row-major array of the pattern; *vals (malloc'd) receives its values. */
static inline emlx_array *it_make(emlx_dtype d, const int64_t *shape, int nd, int seed,
                                  double **vals) {
  int64_t n = tu_numel(shape, nd);
  double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  for (int64_t i = 0; i < n; i++)
    v[i] = it_pat(d, i, seed);
  emlx_array *a = tu_make(d, shape, nd, v);
  if (vals)
    *vals = v;
  else
    free(v);
  return a;
}

/* An index array of dtype d from int64 values (exact for every integer dtype). */
static inline emlx_array *it_index(emlx_dtype d, const int64_t *shape, int nd,
                                   const int64_t *vals) {
  int64_t n = tu_numel(shape, nd);
  size_t es = tu_dsize(d);
  unsigned char *buf = malloc((size_t)(n > 0 ? n : 1) * es);
  for (int64_t i = 0; i < n; i++) {
    uint64_t u = (uint64_t)vals[i];
    memcpy(buf + (size_t)i * es, &u, es); /* little-endian: the low bytes */
  }
  emlx_array *a = emlx_from_blob(buf, d, shape, nd, EMLX_CPU);
  free(buf);
  return a;
}
static inline emlx_array *it_index1(emlx_dtype d, int64_t n, const int64_t *vals) {
  return it_index(d, &n, 1, vals);
}

/* Value of v (shape vshape, rank vnd) at position q of a broadcast shape of
 * rank qnd (trailing axes aligned, size-1 axes stretched). */
static inline double it_bval(const double *v, const int64_t *vshape, int vnd, const int64_t *q,
                             int qnd) {
  int64_t i = 0;
  for (int k = 0; k < vnd; k++) {
    int64_t c = vshape[k] == 1 ? 0 : q[qnd - vnd + k];
    i = i * vshape[k] + c;
  }
  return v[i];
}

/* The transpose (reversed axes) of row-major values of a 2-d shape. */
static inline double *it_transpose2(const double *v, int64_t r, int64_t c) {
  double *t = malloc((size_t)(r * c > 0 ? r * c : 1) * sizeof *t);
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < c; j++)
      t[j * r + i] = v[i * c + j];
  return t;
}

/* Evaluates a and expects failure with a message containing each of the
 * given words (NULL-terminated). */
static inline bool it_eval_fails_at(emlx_array *a, const char *const *words, const char *file,
                                    int line) {
  emlx_clear_error();
  int rc = a ? emlx_eval(&a, 1) : 0;
  const char *e = emlx_last_error();
  bool ok = a && rc != 0 && e && e[0];
  for (int i = 0; ok && words[i]; i++)
    ok = strstr(e, words[i]) != NULL;
  return tu_record(ok, file, line, "eval fails with a message naming the index (rc %d, \"%s\")", rc,
                   e ? e : "(null)");
}
#define IT_EVAL_FAILS(a, ...)                                                                      \
  it_eval_fails_at((a), (const char *const[]){__VA_ARGS__, NULL}, __FILE__, __LINE__)

#endif
