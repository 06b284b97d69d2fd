/* math_test_util.h — helpers the math family's tests share
 * (test_math_unary.c, test_math_binary.c, test_math_other.c): running an
 * op over the same values laid out contiguously, transposed, sliced with a
 * step, broadcast and empty, against an f64 reference computed here. */
#ifndef EMLX_MATH_TEST_UTIL_H
#define EMLX_MATH_TEST_UTIL_H

#include "test_util.h"

#define MT_R 12 /* rows and columns of the 2-D test inputs */
#define MT_C 37
#define MT_N (MT_R * MT_C)

typedef emlx_array *(*mt_un_fn)(emlx_array *);
typedef emlx_array *(*mt_bin_fn)(emlx_array *, emlx_array *);
typedef double (*mt_ref1)(double);
typedef double (*mt_ref2)(double, double);

/* A [r, c] view with element (i, j) = vals[i * c + j] whose strides are
 * transposed (the transpose of a row-major [c, r] array). */
static inline emlx_array *mt_transposed(emlx_dtype d, const double *vals, int64_t r, int64_t c) {
  double *t = malloc((size_t)(r * c) * sizeof *t);
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < c; j++)
      t[j * r + i] = vals[i * c + j];
  int64_t sh[2] = {c, r};
  emlx_array *base = tu_make(d, sh, 2, t);
  free(t);
  emlx_array *v = emlx_transpose(base, NULL, 0);
  emlx_release(base);
  return v;
}

/* Columns 1, 3, 5, ... of a [r, 2c+1] array: a strided [r, c] view whose
 * element (i, j) is vals[i * c + j]. */
static inline emlx_array *mt_sliced(emlx_dtype d, const double *vals, int64_t r, int64_t c) {
  int64_t w = 2 * c + 1;
  double *t = malloc((size_t)(r * w) * sizeof *t);
  for (int64_t i = 0; i < r * w; i++)
    t[i] = 0.0;
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < c; j++)
      t[i * w + 2 * j + 1] = vals[i * c + j];
  int64_t sh[2] = {r, w};
  emlx_array *base = tu_make(d, sh, 2, t);
  free(t);
  int64_t start[2] = {0, 1}, stop[2] = {r, w}, step[2] = {1, 2};
  emlx_array *v = emlx_slice(base, start, stop, step, 2);
  emlx_release(base);
  return v;
}

/* Checks fn on the values vals[0..MT_N) of dtype d (result dtype od) in four
 * layouts, and on an empty input. ref is applied to the values as stored in
 * d. */
static inline void mt_check_unary_at(const char *what, mt_un_fn fn, mt_ref1 ref, emlx_dtype d,
                                     emlx_dtype od, const double *vals, double ulp,
                                     const char *file, int line) {
  double ref_v[MT_N];
  for (int64_t i = 0; i < MT_N; i++)
    ref_v[i] = ref(tu_quant(d, vals[i]));
  char w[160];
  int64_t sh[2] = {MT_R, MT_C};
  /* contiguous */
  emlx_array *a = tu_make(d, sh, 2, vals), *r = fn(a);
  snprintf(w, sizeof w, "%s contiguous from %s", what, tu_dname(d));
  tu_check_array_at(r, od, sh, 2, ref_v, ulp, w, file, line);
  emlx_release(r);
  emlx_release(a);
  /* transposed strides */
  a = mt_transposed(d, vals, MT_R, MT_C);
  r = fn(a);
  snprintf(w, sizeof w, "%s transposed from %s", what, tu_dname(d));
  tu_check_array_at(r, od, sh, 2, ref_v, ulp, w, file, line);
  emlx_release(r);
  emlx_release(a);
  /* sliced with a step */
  a = mt_sliced(d, vals, MT_R, MT_C);
  r = fn(a);
  snprintf(w, sizeof w, "%s sliced from %s", what, tu_dname(d));
  tu_check_array_at(r, od, sh, 2, ref_v, ulp, w, file, line);
  emlx_release(r);
  emlx_release(a);
  /* broadcast: row 0 stretched to [4, C] */
  int64_t sh1[2] = {1, MT_C}, shb[2] = {4, MT_C};
  emlx_array *row = tu_make(d, sh1, 2, vals);
  a = emlx_broadcast_to(row, shb, 2);
  r = fn(a);
  double ref_b[4 * MT_C];
  for (int64_t i = 0; i < 4 * MT_C; i++)
    ref_b[i] = ref_v[i % MT_C];
  snprintf(w, sizeof w, "%s broadcast from %s", what, tu_dname(d));
  tu_check_array_at(r, od, shb, 2, ref_b, ulp, w, file, line);
  emlx_release(r);
  emlx_release(a);
  emlx_release(row);
  /* empty */
  int64_t she[2] = {0, 3};
  a = tu_make(d, she, 2, NULL);
  r = fn(a);
  snprintf(w, sizeof w, "%s empty from %s", what, tu_dname(d));
  tu_check_array_at(r, od, she, 2, NULL, ulp, w, file, line);
  emlx_release(r);
  emlx_release(a);
}
#define mt_check_unary(what, fn, ref, d, od, vals, ulp)                                            \
  mt_check_unary_at((what), (fn), (ref), (d), (od), (vals), (ulp), __FILE__, __LINE__)

/* Checks fn(a, b) in five ways: both [R, C] contiguous; both transposed; a
 * [R, C] with b a broadcast row [C]; a 0-d a against [R, C] b; empty. ref
 * sees the values as stored in d. */
static inline void mt_check_binary_at(const char *what, mt_bin_fn fn, mt_ref2 ref, emlx_dtype d,
                                      emlx_dtype od, const double *va, const double *vb, double ulp,
                                      const char *file, int line) {
  double qa[MT_N], qb[MT_N], ref_v[MT_N];
  for (int64_t i = 0; i < MT_N; i++) {
    qa[i] = tu_quant(d, va[i]);
    qb[i] = tu_quant(d, vb[i]);
    ref_v[i] = ref(qa[i], qb[i]);
  }
  char w[160];
  int64_t sh[2] = {MT_R, MT_C};
  emlx_array *a = tu_make(d, sh, 2, va), *b = tu_make(d, sh, 2, vb), *r = fn(a, b);
  snprintf(w, sizeof w, "%s contiguous %s", what, tu_dname(d));
  tu_check_array_at(r, od, sh, 2, ref_v, ulp, w, file, line);
  emlx_release(r);
  emlx_release(a);
  emlx_release(b);
  a = mt_transposed(d, va, MT_R, MT_C);
  b = mt_transposed(d, vb, MT_R, MT_C);
  r = fn(a, b);
  snprintf(w, sizeof w, "%s transposed %s", what, tu_dname(d));
  tu_check_array_at(r, od, sh, 2, ref_v, ulp, w, file, line);
  emlx_release(r);
  emlx_release(a);
  emlx_release(b);
  /* b: the row vb[0..C) broadcast over the rows of a; a strided (sliced) */
  for (int64_t i = 0; i < MT_N; i++)
    ref_v[i] = ref(qa[i], qb[i % MT_C]);
  int64_t shr[1] = {MT_C};
  a = mt_sliced(d, va, MT_R, MT_C);
  b = tu_make(d, shr, 1, vb);
  r = fn(a, b);
  snprintf(w, sizeof w, "%s broadcast row %s", what, tu_dname(d));
  tu_check_array_at(r, od, sh, 2, ref_v, ulp, w, file, line);
  emlx_release(r);
  emlx_release(a);
  emlx_release(b);
  /* a: a 0-d scalar va[5] */
  for (int64_t i = 0; i < MT_N; i++)
    ref_v[i] = ref(qa[5], qb[i]);
  a = tu_make(d, NULL, 0, va + 5);
  b = tu_make(d, sh, 2, vb);
  r = fn(a, b);
  snprintf(w, sizeof w, "%s scalar-array %s", what, tu_dname(d));
  tu_check_array_at(r, od, sh, 2, ref_v, ulp, w, file, line);
  emlx_release(r);
  emlx_release(a);
  emlx_release(b);
  /* empty against a [1] broadcast */
  int64_t she[2] = {0, 3}, sh1[1] = {1};
  a = tu_make(d, she, 2, NULL);
  b = tu_make(d, sh1, 1, vb);
  r = fn(a, b);
  snprintf(w, sizeof w, "%s empty %s", what, tu_dname(d));
  tu_check_array_at(r, od, she, 2, NULL, ulp, w, file, line);
  emlx_release(r);
  emlx_release(a);
  emlx_release(b);
}
#define mt_check_binary(what, fn, ref, d, od, va, vb, ulp)                                         \
  mt_check_binary_at((what), (fn), (ref), (d), (od), (va), (vb), (ulp), __FILE__, __LINE__)

/* The raw bits of element 0 of a 0-d or 1-element f32 result (signed zero
 * and NaN checks). */
static inline uint32_t mt_f32_bits_of(emlx_array *a) {
  float f = 0;
  if (a && emlx_size(a) == 1 && emlx_array_dtype(a) == EMLX_FLOAT32)
    emlx_to_blob(a, &f, sizeof f);
  return tu_f32_bits(f);
}

#endif
