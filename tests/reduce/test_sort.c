/* test_sort.c — sort and argsort against a stable merge sort written here
 * with the order of emlx/reduce.h (NaN largest, -0.0 == +0.0, complex
 * lexicographic): every dtype, ascending and descending (both stable),
 * every axis, contiguous / strided / reversed / broadcast inputs, ties and
 * special values, the small (insertion), radix, counting and parallel
 * paths, index dtypes, and errors. Sort must keep each element's bits. */
#include "reduce_family_util.h"

/* ---- the reference ----------------------------------------------------------- */
typedef struct ref_ctx {
  emlx_dtype d;
  const rf_val *v;
  int64_t base, stride;
  bool desc;
} ref_ctx;

/* a goes before b (strictly): the stable merge keeps ties in index order. */
static bool before(const ref_ctx *c, int64_t a, int64_t b) {
  int r = rf_cmp(c->d, c->v[c->base + a * c->stride], c->v[c->base + b * c->stride]);
  return c->desc ? r > 0 : r < 0;
}

static void merge_sort(const ref_ctx *c, int64_t *ix, int64_t *tmp, int64_t n) {
  if (n < 2)
    return;
  int64_t h = n / 2;
  merge_sort(c, ix, tmp, h);
  merge_sort(c, ix + h, tmp, n - h);
  int64_t i = 0, j = h, k = 0;
  while (i < h && j < n)
    tmp[k++] = before(c, ix[j], ix[i]) ? ix[j++] : ix[i++];
  while (i < h)
    tmp[k++] = ix[i++];
  while (j < n)
    tmp[k++] = ix[j++];
  memcpy(ix, tmp, (size_t)n * sizeof *ix);
}

/* Sorts (arg = false) or argsorts a along axis and checks against the reference. */
static void check_sort(emlx_array *a, emlx_dtype d, const int64_t *shape, int nd, const rf_val *v,
                       int axis, bool arg, const emlx_sort_options *o, const char *what) {
  emlx_dtype od = arg ? (o && o->index_dtype != EMLX_BOOL ? o->index_dtype : EMLX_UINT32) : d;
  emlx_array *r = arg ? emlx_argsort(a, axis, o) : emlx_sort(a, axis, o);
  rf_val *got = rf_result(r, od, shape, nd, what);
  if (got) {
    int ax = axis < 0 ? axis + nd : axis;
    int64_t n = shape[ax], inner = 1, total = tu_numel(shape, nd), bad = 0;
    for (int k = ax + 1; k < nd; k++)
      inner *= shape[k];
    int64_t lines = n > 0 ? total / n : 0;
    int64_t *ix = malloc((size_t)(n > 0 ? n : 1) * sizeof *ix);
    int64_t *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
    for (int64_t l = 0; l < lines; l++) {
      ref_ctx c = {d, v, (l / inner) * n * inner + l % inner, inner, o && o->descending};
      for (int64_t i = 0; i < n; i++)
        ix[i] = i;
      merge_sort(&c, ix, tmp, n);
      for (int64_t i = 0; i < n; i++) {
        rf_val g = got[c.base + i * inner];
        rf_val want = arg ? (rf_val)ix[i] : v[c.base + ix[i] * inner];
        if (g != want && bad++ < 3)
          fprintf(stderr, "  %s: line %lld position %lld: got %llx want %llx\n", what, (long long)l,
                  (long long)i, (unsigned long long)g, (unsigned long long)want);
      }
    }
    CHECK_MSG(bad == 0, "%s: %lld elements differ", what, (long long)bad);
    free(ix);
    free(tmp);
  }
  free(got);
  emlx_release(r);
}

static void check_both(emlx_array *a, emlx_dtype d, const int64_t *shape, int nd, const rf_val *v,
                       int axis, const char *what) {
  char w[200];
  for (int k = 0; k < 4; k++) {
    emlx_sort_options o = {.descending = (k & 2) != 0};
    snprintf(w, sizeof w, "%s %s %s", what, k & 1 ? "argsort" : "sort",
             o.descending ? "desc" : "asc");
    check_sort(a, d, shape, nd, v, axis, k & 1, &o, w);
  }
}

/* ---- the grid ------------------------------------------------------------------- */
static void test_grid(void) {
  static const struct {
    int nd;
    int64_t shape[3];
    int axis;
  } cases[] = {{2, {6, 9}, 0},    {2, {6, 9}, 1},    {2, {6, 9}, -1}, {3, {3, 4, 5}, 0},
               {3, {3, 4, 5}, 1}, {3, {3, 4, 5}, 2}, {1, {70}, 0},    {2, {300, 3}, 0},
               {2, {0, 3}, 0},    {2, {3, 0}, 1},    {1, {1}, 0}};
  tu_rng rng = {31337};
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_dtype d = tu_all_dtypes[di];
    if (rf_skip_c128(d))
      continue;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
      for (int lay = 0; lay < RF_LAYOUT_COUNT; lay++) {
        for (int prof = 0; prof < 2; prof++) {
          rf_val *v;
          emlx_array *a = rf_input(d, cases[ci].shape, cases[ci].nd, (rf_layout)lay, &rng,
                                   prof ? RF_WIDE : RF_DUPS, &v);
          char what[160];
          snprintf(what, sizeof what, "%s case %zu %s %s", tu_dname(d), ci, rf_layout_name[lay],
                   prof ? "wide" : "dups");
          if (a)
            check_both(a, d, cases[ci].shape, cases[ci].nd, v, cases[ci].axis, what);
          emlx_release(a);
          free(v);
        }
      }
    }
  }
}

/* NaN placement, signed zeros, stability among NaNs, bits kept. */
static void test_specials(void) {
  const double f[9] = {3, NAN, -0.0, 0.0, 1, -NAN, -1, INFINITY, -INFINITY};
  const emlx_dtype fl[] = {EMLX_FLOAT16, EMLX_BFLOAT16, EMLX_FLOAT32, EMLX_FLOAT64};
  const uint64_t asc[9] = {8, 6, 2, 3, 4, 0, 7, 1, 5}, desc[9] = {1, 5, 7, 0, 4, 2, 3, 6, 8};
  for (size_t k = 0; k < sizeof fl / sizeof fl[0]; k++) {
    emlx_dtype d = fl[k];
    int64_t n = 9;
    rf_val v[9];
    for (int i = 0; i < 9; i++)
      v[i] = rf_from_f64(d, f[i]);
    emlx_array *a = rf_make(d, &n, 1, v);
    emlx_sort_options od = {.descending = true};
    emlx_array *r = emlx_argsort(a, 0, NULL), *rd = emlx_argsort(a, 0, &od);
    rf_val *g = rf_result(r, EMLX_UINT32, &n, 1, "argsort specials"),
           *gd = rf_result(rd, EMLX_UINT32, &n, 1, "argsort specials desc");
    if (g)
      CHECK_MSG(memcmp(g, asc, sizeof asc) == 0, "ascending order of specials (%s)", tu_dname(d));
    if (gd)
      CHECK_MSG(memcmp(gd, desc, sizeof desc) == 0, "descending order of specials (%s)",
                tu_dname(d));
    free(g);
    free(gd);
    emlx_release(r);
    emlx_release(rd);
    check_both(a, d, &n, 1, v, 0, "specials");
    emlx_release(a);
  }
  /* 1-byte keys take the counting path; 2-byte ones the 16-bit radix. */
  tu_rng rng = {1};
  const emlx_dtype narrow[] = {EMLX_BOOL, EMLX_UINT8, EMLX_INT8, EMLX_INT16, EMLX_UINT16};
  for (size_t k = 0; k < sizeof narrow / sizeof narrow[0]; k++) {
    int64_t shape[2] = {3, 5000};
    rf_val *v;
    emlx_array *a = rf_input(narrow[k], shape, 2, RF_CONTIG, &rng, RF_WIDE, &v);
    check_both(a, narrow[k], shape, 2, v, 1, "narrow keys");
    emlx_release(a);
    free(v);
  }
}

/* Long lines: the parallel radix (pairs and keys), 8-byte keys, many lines. */
static void test_large(void) {
  tu_rng rng = {2024};
  static const struct {
    int nd;
    int64_t shape[2];
    int axis;
    emlx_dtype d;
    rf_profile p;
  } cfg[] = {{1, {200000}, 0, EMLX_FLOAT32, RF_WIDE},     {1, {200000}, 0, EMLX_FLOAT32, RF_DUPS},
             {1, {150000}, 0, EMLX_FLOAT64, RF_WIDE},     {2, {3, 150000}, 1, EMLX_INT32, RF_WIDE},
             {2, {150000, 2}, 0, EMLX_BFLOAT16, RF_WIDE}, {2, {8, 70000}, 1, EMLX_UINT16, RF_WIDE},
             {1, {140000}, 0, EMLX_COMPLEX64, RF_DUPS},   {1, {140000}, 0, EMLX_INT64, RF_WIDE}};
  for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
    rf_val *v;
    emlx_array *a = rf_input(cfg[c].d, cfg[c].shape, cfg[c].nd, RF_CONTIG, &rng, cfg[c].p, &v);
    char what[96];
    snprintf(what, sizeof what, "large %s config %zu", tu_dname(cfg[c].d), c);
    if (a)
      check_both(a, cfg[c].d, cfg[c].shape, cfg[c].nd, v, cfg[c].axis, what);
    emlx_release(a);
    free(v);
  }
  /* One -0.0 in a long f32 line: the values come from the pairs. */
  int64_t n = 200000;
  rf_val *v = malloc((size_t)n * sizeof *v);
  for (int64_t i = 0; i < n; i++)
    v[i] = rf_random(&rng, EMLX_FLOAT32, RF_GENERAL);
  v[12345] = rf_from_f64(EMLX_FLOAT32, -0.0);
  emlx_array *a = rf_make(EMLX_FLOAT32, &n, 1, v);
  check_both(a, EMLX_FLOAT32, &n, 1, v, 0, "long line with -0.0");
  emlx_release(a);
  free(v);
}

static void test_index_dtypes_and_errors(void) {
  int64_t n = 200;
  emlx_array *a = emlx_arange(200, 0, -1, EMLX_FLOAT32, EMLX_CPU);
  emlx_sort_options o64 = {.index_dtype = EMLX_INT64}, o16 = {.index_dtype = EMLX_INT16},
                    o8 = {.index_dtype = EMLX_INT8}, ou8 = {.index_dtype = EMLX_UINT8},
                    of = {.index_dtype = EMLX_FLOAT32};
  emlx_array *r = emlx_argsort(a, 0, &o64);
  rf_val *g = rf_result(r, EMLX_INT64, &n, 1, "argsort int64");
  if (g)
    CHECK(g[0] == 199 && g[199] == 0);
  free(g);
  emlx_release(r);
  r = emlx_argsort(a, -1, &o16);
  g = rf_result(r, EMLX_INT16, &n, 1, "argsort int16");
  if (g)
    CHECK(g[0] == 199 && g[199] == 0);
  free(g);
  emlx_release(r);
  r = emlx_argsort(a, 0, &ou8); /* 200 elements: indices up to 199 fit uint8 */
  g = rf_result(r, EMLX_UINT8, &n, 1, "argsort uint8");
  if (g)
    CHECK(g[0] == 199 && g[199] == 0);
  free(g);
  emlx_release(r);
  CHECK_NULL_ERR(emlx_argsort(a, 0, &o8)); /* 199 does not fit int8 */
  CHECK_NULL_ERR(emlx_argsort(a, 0, &of));
  CHECK_NULL_ERR(emlx_sort(a, 1, NULL));
  CHECK_NULL_ERR(emlx_argsort(a, -2, NULL));
  CHECK_NULL_ERR(emlx_sort(NULL, 0, NULL));
  CHECK_NULL_ERR(emlx_argsort(NULL, 0, NULL));
  emlx_release(a);
  emlx_array *s = emlx_scalar_tensor(1.0, EMLX_FLOAT32, EMLX_CPU);
  CHECK_NULL_ERR(emlx_sort(s, 0, NULL));
  CHECK_NULL_ERR(emlx_argsort(s, -1, NULL));
  emlx_release(s);
}

int main(void) {
  test_grid();
  test_specials();
  test_large();
  test_index_dtypes_and_errors();
  return tu_finish();
}
