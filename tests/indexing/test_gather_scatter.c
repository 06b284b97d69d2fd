/* test_gather_scatter.c — the indexed ops of the indexing family: take,
 * take_along_axis, gather, scatter, scatter_add, in every dtype and every
 * integer index dtype, on contiguous, strided and broadcast inputs; negative
 * indices, out-of-range indices in both bounds modes (clamp, and check:
 * eval fails naming the index), duplicate indices, donation, and the error
 * cases. References are computed here with naive loops. */
#include "indexing_test_util.h"

static const emlx_dtype idx_dtypes[8] = {EMLX_UINT8, EMLX_UINT16, EMLX_UINT32, EMLX_UINT64,
                                         EMLX_INT8,  EMLX_INT16,  EMLX_INT32,  EMLX_INT64};

static const emlx_index_options opt_check = {.bounds = EMLX_BOUNDS_CHECK};
static const emlx_index_options opt_clamp = {.bounds = EMLX_BOUNDS_CLAMP};

/* MLX's wrap of a negative index, then the clamp into [0, hi]. */
static int64_t norm(int64_t v, int64_t dim, int64_t hi, bool wrap) {
  if (wrap && v < 0)
    v += dim;
  return v < 0 ? 0 : (v > hi ? hi : v);
}

/* ---- take ------------------------------------------------------------------------------ */

/* out = take(a, idx, axis) over row-major values. */
static double *ref_take(const double *a, const int64_t *shape, int nd, int axis, const int64_t *idx,
                        int64_t m, bool wrap) {
  int64_t outer = 1, inner = 1, dim = shape[axis];
  for (int i = 0; i < axis; i++)
    outer *= shape[i];
  for (int i = axis + 1; i < nd; i++)
    inner *= shape[i];
  double *out = malloc((size_t)(outer * m * inner > 0 ? outer * m * inner : 1) * sizeof *out);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < m; j++)
      for (int64_t i = 0; i < inner; i++)
        out[(o * m + j) * inner + i] = a[(o * dim + norm(idx[j], dim, dim - 1, wrap)) * inner + i];
  return out;
}

static void test_take_dtypes(void) {
  int64_t shape[2] = {3, 4};
  int64_t iv[5] = {0, 11, -1, 5, -12};
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_dtype d = tu_all_dtypes[di];
    double *av;
    emlx_array *a = it_make(d, shape, 2, 1, &av);
    emlx_array *idx = it_index1(EMLX_INT32, 5, iv);
    emlx_array *out = emlx_take(a, idx, EMLX_AXIS_NONE, NULL);
    int64_t flat[1] = {12};
    double *ref = ref_take(av, flat, 1, 0, iv, 5, true);
    tu_check_array(out, d, ((int64_t[]){5}), 1, ref, 0, "take flat");
    free(ref), emlx_release(out);
    /* rows and columns */
    int64_t rv[4] = {2, 0, -1, 1};
    emlx_array *r = it_index1(EMLX_INT64, 4, rv);
    for (int axis = -2; axis < 2; axis++) {
      int ax = axis < 0 ? axis + 2 : axis;
      out = emlx_take(a, r, axis, NULL);
      ref = ref_take(av, shape, 2, ax, rv, 4, true);
      int64_t oshape[2] = {ax == 0 ? 4 : 3, ax == 0 ? 4 : 4};
      tu_check_array(out, d, oshape, 2, ref, 0, "take axis");
      free(ref), emlx_release(out);
    }
    emlx_release(r), emlx_release(idx), emlx_release(a);
    free(av);
  }
}

static void test_take_index_dtypes(void) {
  int64_t shape[3] = {3, 4, 5};
  double *av;
  emlx_array *a = it_make(EMLX_INT16, shape, 3, 2, &av);
  for (int k = 0; k < 8; k++) {
    emlx_dtype it = idx_dtypes[k];
    bool sgn = it >= EMLX_INT8;
    for (int axis = 0; axis < 3; axis++) {
      int64_t dim = shape[axis];
      int64_t iv[6] = {0, dim - 1, sgn ? -1 : 1, 1, sgn ? -dim : 0, dim / 2};
      emlx_array *idx = it_index(it, (int64_t[]){2, 3}, 2, iv);
      emlx_array *out = emlx_take(a, idx, axis, NULL);
      double *ref = ref_take(av, shape, 3, axis, iv, 6, true);
      int64_t oshape[4];
      for (int i = 0, j = 0; i < 3; i++) {
        if (i == axis) {
          oshape[j++] = 2;
          oshape[j++] = 3;
        } else {
          oshape[j++] = shape[i];
        }
      }
      tu_check_array(out, EMLX_INT16, oshape, 4, ref, 0, "take index dtype");
      free(ref), emlx_release(out), emlx_release(idx);
    }
  }
  emlx_release(a);
  free(av);
}

static void test_take_layouts(void) {
  /* transposed a, transposed (strided) and broadcast index arrays, 0-d index */
  double *bv;
  emlx_array *b = it_make(EMLX_FLOAT32, (int64_t[]){5, 3}, 2, 3, &bv);
  emlx_array *a = emlx_transpose(b, NULL, 0); /* [3, 5] */
  double *av = it_transpose2(bv, 5, 3);
  int64_t shape[2] = {3, 5};
  int64_t ib[6] = {4, 0, -2, 1, 3, 2};
  emlx_array *ibase = it_index(EMLX_INT32, (int64_t[]){2, 3}, 2, ib);
  emlx_array *it = emlx_transpose(ibase, NULL, 0); /* [3, 2]: 4, 1, 0, 3, -2, 2 */
  int64_t itv[6] = {4, 1, 0, 3, -2, 2};
  emlx_array *out = emlx_take(a, it, 1, NULL);
  double *ref = ref_take(av, shape, 2, 1, itv, 6, true);
  tu_check_array(out, EMLX_FLOAT32, ((int64_t[]){3, 3, 2}), 3, ref, 0, "take strided");
  free(ref), emlx_release(out);
  int64_t one = 2;
  emlx_array *i1 = it_index1(EMLX_INT8, 1, &one);
  emlx_array *ibc = emlx_broadcast_to(i1, (int64_t[]){4}, 1);
  int64_t bcv[4] = {2, 2, 2, 2};
  out = emlx_take(a, ibc, 0, NULL);
  ref = ref_take(av, shape, 2, 0, bcv, 4, true);
  tu_check_array(out, EMLX_FLOAT32, ((int64_t[]){4, 5}), 2, ref, 0, "take broadcast index");
  free(ref), emlx_release(out);
  emlx_array *i0 = it_index(EMLX_UINT8, NULL, 0, &one);
  out = emlx_take(a, i0, 1, NULL);
  ref = ref_take(av, shape, 2, 1, &one, 1, true);
  tu_check_array(out, EMLX_FLOAT32, ((int64_t[]){3}), 1, ref, 0, "take 0-d index");
  free(ref), emlx_release(out);
  out = emlx_take(a, i0, EMLX_AXIS_NONE, NULL);
  tu_check_array(out, EMLX_FLOAT32, NULL, 0, &av[2], 0, "take 0-d index flat");
  emlx_release(out);
  /* empty index arrays; an empty a with empty indices */
  emlx_array *ie = emlx_zeros((int64_t[]){0}, 1, EMLX_INT32, EMLX_CPU);
  out = emlx_take(a, ie, 1, NULL);
  CHECK(out && emlx_ndim(out) == 2 && emlx_shape(out)[0] == 3 && emlx_shape(out)[1] == 0 &&
        emlx_eval(&out, 1) == 0);
  emlx_release(out);
  emlx_array *ea = emlx_zeros((int64_t[]){0, 3}, 2, EMLX_FLOAT16, EMLX_CPU);
  out = emlx_take(ea, ie, 0, NULL);
  CHECK(out && emlx_size(out) == 0 && emlx_eval(&out, 1) == 0);
  emlx_release(out);
  out = emlx_take(ea, i1, 1, NULL);
  CHECK(out && emlx_ndim(out) == 2 && emlx_shape(out)[0] == 0 && emlx_eval(&out, 1) == 0);
  emlx_release(out);

  /* large: over the pool, element and row paths */
  int64_t n = 100000, m = 300000;
  double *lv;
  emlx_array *l = it_make(EMLX_FLOAT32, &n, 1, 4, &lv);
  int64_t *li = malloc((size_t)m * sizeof *li);
  tu_rng rng = {7};
  for (int64_t i = 0; i < m; i++)
    li[i] = tu_randint(&rng, -n, n - 1);
  emlx_array *lidx = it_index1(EMLX_INT64, m, li);
  out = emlx_take(l, lidx, 0, NULL);
  ref = ref_take(lv, &n, 1, 0, li, m, true);
  tu_check_array(out, EMLX_FLOAT32, &m, 1, ref, 0, "take large");
  free(ref), emlx_release(out);
  emlx_array *rows = emlx_reshape(l, (int64_t[]){1000, 100}, 2);
  for (int64_t i = 0; i < 5000; i++)
    li[i] = tu_randint(&rng, -1000, 999);
  emlx_array *ridx = it_index1(EMLX_INT16, 5000, li);
  out = emlx_take(rows, ridx, 0, NULL);
  ref = ref_take(lv, (int64_t[]){1000, 100}, 2, 0, li, 5000, true);
  tu_check_array(out, EMLX_FLOAT32, ((int64_t[]){5000, 100}), 2, ref, 0, "take large rows");
  free(ref), emlx_release(out);
  emlx_release(ridx), emlx_release(rows), emlx_release(lidx), emlx_release(l);
  free(li), free(lv);

  /* errors */
  emlx_array *fi = emlx_zeros((int64_t[]){2}, 1, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *bi = emlx_zeros((int64_t[]){2}, 1, EMLX_BOOL, EMLX_CPU);
  emlx_array *s = emlx_scalar_tensor(1, EMLX_FLOAT32, EMLX_CPU);
  emlx_index_options bad = {.bounds = (emlx_bounds_mode)7};
  CHECK_NULL_ERR(emlx_take(NULL, i1, 0, NULL));
  CHECK_NULL_ERR(emlx_take(a, NULL, 0, NULL));
  CHECK_NULL_ERR(emlx_take(a, fi, 0, NULL));
  CHECK_NULL_ERR(emlx_take(a, bi, 0, NULL));
  CHECK_NULL_ERR(emlx_take(a, i1, 2, NULL));
  CHECK_NULL_ERR(emlx_take(a, i1, -3, NULL));
  CHECK_NULL_ERR(emlx_take(s, i1, 0, NULL));
  CHECK_NULL_ERR(emlx_take(ea, i1, 0, NULL)); /* non-empty take from an empty axis */
  CHECK_NULL_ERR(emlx_take(a, i1, 0, &bad));
  emlx_release(fi), emlx_release(bi), emlx_release(s);
  emlx_release(ea), emlx_release(ie), emlx_release(i0), emlx_release(ibc), emlx_release(i1);
  emlx_release(it), emlx_release(ibase), emlx_release(a), emlx_release(b);
  free(av), free(bv);
}

static void test_take_bounds(void) {
  double *av;
  emlx_array *a = it_make(EMLX_INT32, (int64_t[]){4}, 1, 5, &av);
  int64_t iv[5] = {100, -100, 3, -5, 1};
  emlx_array *idx = it_index1(EMLX_INT64, 5, iv);
  /* clamp (the default): 100 -> 3, -100 -> 0, -5 -> -1 -> 0 */
  emlx_array *out = emlx_take(a, idx, 0, NULL);
  double ref[5] = {av[3], av[0], av[3], av[0], av[1]};
  tu_check_array(out, EMLX_INT32, ((int64_t[]){5}), 1, ref, 0, "take clamps");
  emlx_release(out);
  /* a u64 index beyond INT64_MAX clamps high */
  int64_t huge = INT64_MIN + 5; /* as u64: 2^63 + 5 */
  emlx_array *hu = it_index1(EMLX_UINT64, 1, &huge);
  out = emlx_take(a, hu, 0, NULL);
  tu_check_array(out, EMLX_INT32, ((int64_t[]){1}), 1, &av[3], 0, "take u64 huge clamps");
  emlx_release(out);
  out = emlx_take(a, hu, 0, &opt_check);
  IT_EVAL_FAILS(out, "take", "9223372036854775813", "size 4");
  emlx_release(out);
  /* check per call: the eval fails with the op, the index and the axis */
  out = emlx_take(a, idx, 0, &opt_check);
  IT_EVAL_FAILS(out, "take", "out of range", "size 4");
  emlx_release(out);
  int64_t one_bad[3] = {0, -7, 1};
  emlx_array *ob = it_index1(EMLX_INT8, 3, one_bad);
  out = emlx_take(a, ob, 0, &opt_check);
  IT_EVAL_FAILS(out, "take", "index -7", "axis 0");
  emlx_release(out);
  /* check through the process-wide switch; captured when the op is built */
  CHECK(emlx_set_bounds_check(true) == false);
  CHECK(emlx_get_bounds_check());
  emlx_array *checked = emlx_take(a, idx, 0, NULL);
  emlx_array *clamped = emlx_take(a, idx, 0, &opt_clamp);
  CHECK(emlx_set_bounds_check(false) == true);
  emlx_array *later = emlx_take(a, idx, 0, NULL);
  IT_EVAL_FAILS(checked, "take", "100");
  tu_check_array(clamped, EMLX_INT32, ((int64_t[]){5}), 1, ref, 0, "take clamp option");
  tu_check_array(later, EMLX_INT32, ((int64_t[]){5}), 1, ref, 0, "take after switching off");
  /* a failed eval can be retried and fails the same way */
  IT_EVAL_FAILS(checked, "take", "100");
  emlx_release(checked), emlx_release(clamped), emlx_release(later);
  /* in-range negative indices pass the check */
  int64_t okv[3] = {-4, -1, 3};
  emlx_array *ok = it_index1(EMLX_INT16, 3, okv);
  out = emlx_take(a, ok, 0, &opt_check);
  tu_check_array(out, EMLX_INT32, ((int64_t[]){3}), 1, ((double[]){av[0], av[3], av[3]}), 0,
                 "take check passes");
  emlx_release(out);
  /* no_negative_wrap (Nx): a negative index is out of range */
  emlx_index_options nx = {.no_negative_wrap = true};
  out = emlx_take(a, ok, 0, &nx);
  tu_check_array(out, EMLX_INT32, ((int64_t[]){3}), 1, ((double[]){av[0], av[0], av[3]}), 0,
                 "take no wrap clamps");
  emlx_release(out);
  nx.bounds = EMLX_BOUNDS_CHECK;
  out = emlx_take(a, ok, 0, &nx);
  IT_EVAL_FAILS(out, "take", "-4");
  emlx_release(out);
  /* a large array with one bad index among many, over the pool */
  int64_t n = 200000;
  int64_t *lv = malloc((size_t)n * sizeof *lv);
  for (int64_t i = 0; i < n; i++)
    lv[i] = i % 4;
  lv[123457] = 4;
  emlx_array *lidx = it_index1(EMLX_INT32, n, lv);
  out = emlx_take(a, lidx, 0, &opt_check);
  IT_EVAL_FAILS(out, "take", "index 4 ");
  emlx_release(out), emlx_release(lidx);
  free(lv);
  emlx_release(ok), emlx_release(ob), emlx_release(hu), emlx_release(idx), emlx_release(a);
  free(av);
}

/* ---- take_along_axis --------------------------------------------------------------------- */

static void test_take_along_axis(void) {
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_dtype d = tu_all_dtypes[di];
    double *av;
    emlx_array *a = it_make(d, (int64_t[]){3, 4}, 2, 6, &av);
    /* axis 1: idx [3, 2]; axis 0: idx [2, 4] */
    int64_t i1[6] = {0, 3, -1, 1, 2, 2};
    emlx_array *x1 = it_index(EMLX_INT32, (int64_t[]){3, 2}, 2, i1);
    emlx_array *out = emlx_take_along_axis(a, x1, 1, NULL);
    double ref[8];
    for (int r = 0; r < 3; r++)
      for (int j = 0; j < 2; j++)
        ref[r * 2 + j] = av[r * 4 + norm(i1[r * 2 + j], 4, 3, true)];
    tu_check_array(out, d, ((int64_t[]){3, 2}), 2, ref, 0, "take_along_axis 1");
    emlx_release(out);
    int64_t i0[8] = {2, 0, 1, -1, 0, 0, 2, 1};
    emlx_array *x0 = it_index(EMLX_UINT8 + (di % 2) * 5, (int64_t[]){2, 4}, 2, i0);
    bool wrap_ok = emlx_array_dtype(x0) == EMLX_INT8;
    out = emlx_take_along_axis(a, x0, -2, NULL);
    for (int r = 0; r < 2; r++)
      for (int c = 0; c < 4; c++) {
        int64_t v = i0[r * 4 + c];
        if (!wrap_ok && v < 0)
          v = (int64_t)(uint8_t)v; /* 255 as u8: clamps to 2 */
        ref[r * 4 + c] = av[norm(v, 3, 2, true) * 4 + c];
      }
    tu_check_array(out, d, ((int64_t[]){2, 4}), 2, ref, 0, "take_along_axis 0");
    emlx_release(out), emlx_release(x0), emlx_release(x1), emlx_release(a);
    free(av);
  }
  /* broadcasting: a [1, 4] with idx [3, 2]; a [3, 4] with idx [1, 2] */
  double *av;
  emlx_array *a = it_make(EMLX_FLOAT64, (int64_t[]){3, 4}, 2, 7, &av);
  emlx_array *a1 = emlx_slice(a, (int64_t[]){1, 0}, (int64_t[]){2, 4}, NULL, 2);
  int64_t iv[6] = {0, 1, 2, 3, 3, 0};
  emlx_array *x = it_index(EMLX_INT64, (int64_t[]){3, 2}, 2, iv);
  emlx_array *out = emlx_take_along_axis(a1, x, 1, NULL);
  double ref[12];
  for (int i = 0; i < 6; i++)
    ref[i] = av[4 + iv[i]];
  tu_check_array(out, EMLX_FLOAT64, ((int64_t[]){3, 2}), 2, ref, 0, "take_along_axis bcast a");
  emlx_release(out);
  emlx_array *xr = it_index(EMLX_INT64, (int64_t[]){1, 2}, 2, iv + 2);
  out = emlx_take_along_axis(a, xr, 1, NULL);
  for (int r = 0; r < 3; r++)
    for (int j = 0; j < 2; j++)
      ref[r * 2 + j] = av[r * 4 + iv[2 + j]];
  tu_check_array(out, EMLX_FLOAT64, ((int64_t[]){3, 2}), 2, ref, 0, "take_along_axis bcast idx");
  emlx_release(out);
  /* no axis: flattened */
  int64_t fv[4] = {11, 0, -1, 5};
  emlx_array *xf = it_index1(EMLX_INT16, 4, fv);
  out = emlx_take_along_axis(a, xf, EMLX_AXIS_NONE, NULL);
  tu_check_array(out, EMLX_FLOAT64, ((int64_t[]){4}), 1, ((double[]){av[11], av[0], av[11], av[5]}),
                 0, "take_along_axis flat");
  emlx_release(out);
  /* 3-d, middle axis, transposed a and strided idx */
  double *bv;
  emlx_array *b = it_make(EMLX_UINT16, (int64_t[]){4, 5, 2}, 3, 8, &bv);
  emlx_array *bt = emlx_transpose(b, (int[]){2, 1, 0}, 3); /* [2, 5, 4] */
  int64_t jv[24];
  for (int i = 0; i < 24; i++)
    jv[i] = (i * 7) % 5 - 2;
  emlx_array *jb = it_index(EMLX_INT32, (int64_t[]){4, 3, 2}, 3, jv);
  emlx_array *jt = emlx_transpose(jb, (int[]){2, 1, 0}, 3); /* [2, 3, 4] */
  out = emlx_take_along_axis(bt, jt, 1, NULL);
  double r3[24];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++) {
        int64_t q = norm(jv[(k * 3 + j) * 2 + i], 5, 4, true);
        r3[(i * 3 + j) * 4 + k] = bv[(k * 5 + q) * 2 + i];
      }
  tu_check_array(out, EMLX_UINT16, ((int64_t[]){2, 3, 4}), 3, r3, 0, "take_along_axis 3-d");
  emlx_release(out);
  /* bounds */
  int64_t bad[2] = {0, 4};
  emlx_array *xb = it_index(EMLX_INT32, (int64_t[]){1, 2}, 2, bad);
  out = emlx_take_along_axis(a, xb, 1, &opt_check);
  IT_EVAL_FAILS(out, "take_along_axis", "index 4", "axis 1");
  emlx_release(out);
  out = emlx_take_along_axis(a, xb, 1, NULL);
  for (int r = 0; r < 3; r++)
    ref[r * 2] = av[r * 4], ref[r * 2 + 1] = av[r * 4 + 3];
  tu_check_array(out, EMLX_FLOAT64, ((int64_t[]){3, 2}), 2, ref, 0, "take_along_axis clamps");
  emlx_release(out);
  /* errors */
  emlx_array *x3 = it_index(EMLX_INT32, (int64_t[]){2, 2}, 2, iv);
  emlx_array *fl = emlx_zeros((int64_t[]){3, 2}, 2, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *e = emlx_zeros((int64_t[]){3, 0}, 2, EMLX_INT32, EMLX_CPU);
  CHECK_NULL_ERR(emlx_take_along_axis(NULL, x, 1, NULL));
  CHECK_NULL_ERR(emlx_take_along_axis(a, NULL, 1, NULL));
  CHECK_NULL_ERR(emlx_take_along_axis(a, xf, 1, NULL)); /* rank */
  CHECK_NULL_ERR(emlx_take_along_axis(a, x3, 1, NULL)); /* 3 vs 2 rows */
  CHECK_NULL_ERR(emlx_take_along_axis(a, x, 2, NULL));
  CHECK_NULL_ERR(emlx_take_along_axis(a, fl, 1, NULL));
  CHECK_NULL_ERR(emlx_take_along_axis(a, x, EMLX_AXIS_NONE, NULL));
  CHECK_NULL_ERR(emlx_take_along_axis(e, x, 1, NULL)); /* empty axis */
  emlx_release(x3), emlx_release(fl), emlx_release(e), emlx_release(xb);
  emlx_release(jt), emlx_release(jb), emlx_release(bt), emlx_release(b);
  emlx_release(xf), emlx_release(xr), emlx_release(x), emlx_release(a1), emlx_release(a);
  free(av), free(bv);
}

/* ---- gather ------------------------------------------------------------------------------ */

/* MLX gather over row-major values: out[m, s] = a[start(m) + s]. idx[k]
 * holds the broadcast index values of axis axes[k] (m positions). */
static double *ref_gather(const double *a, const int64_t *shape, int nd, const int64_t *const *idx,
                          const int *axes, int nidx, int64_t npos, const int64_t *slice,
                          bool wrap) {
  int64_t S = tu_numel(slice, nd);
  double *out = malloc((size_t)(npos * S > 0 ? npos * S : 1) * sizeof *out);
  int64_t s[EMLX_MAX_NDIM], p[EMLX_MAX_NDIM];
  for (int64_t m = 0; m < npos; m++)
    for (int64_t j = 0; j < S; j++) {
      tu_unravel(j, slice, nd, s);
      for (int k = 0; k < nd; k++)
        p[k] = s[k];
      for (int k = 0; k < nidx; k++) {
        int ax = axes[k];
        p[ax] += norm(idx[k][m], shape[ax], shape[ax] - slice[ax], wrap);
      }
      out[m * S + j] = a[tu_ravel(p, shape, nd)];
    }
  return out;
}

static void test_gather(void) {
  /* all dtypes: rows of a [5, 3] */
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_dtype d = tu_all_dtypes[di];
    double *av;
    emlx_array *a = it_make(d, (int64_t[]){5, 3}, 2, 9, &av);
    int64_t iv[4] = {4, -1, 0, 2};
    emlx_array *idx = it_index1(EMLX_INT32, 4, iv);
    int axis = 0;
    int64_t slice[2] = {1, 3};
    emlx_array *out = emlx_gather(a, &idx, 1, &axis, slice, 2, NULL);
    const int64_t *ivp[1] = {iv};
    double *ref = ref_gather(av, (int64_t[]){5, 3}, 2, ivp, &axis, 1, 4, slice, true);
    tu_check_array(out, d, ((int64_t[]){4, 1, 3}), 3, ref, 0, "gather rows");
    free(ref), emlx_release(out), emlx_release(idx), emlx_release(a);
    free(av);
  }
  /* two broadcast index arrays on a transposed 3-d a, slices wider than 1 */
  double *bv;
  emlx_array *b = it_make(EMLX_FLOAT32, (int64_t[]){6, 5, 4}, 3, 10, &bv);
  emlx_array *a = emlx_transpose(b, (int[]){2, 1, 0}, 3); /* [4, 5, 6] */
  int64_t shape[3] = {4, 5, 6};
  double *av = malloc(120 * sizeof *av);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 5; j++)
      for (int k = 0; k < 6; k++)
        av[(i * 5 + j) * 6 + k] = bv[(k * 5 + j) * 4 + i];
  int64_t i0v[3] = {3, 0, -2}, i1v[2] = {5, 1}; /* 3 on axis 0 (slice 1), 5 on axis 2 (slice 2) */
  emlx_array *i0 = it_index1(EMLX_INT64, 3, i0v);
  emlx_array *i1 = it_index(EMLX_UINT8, (int64_t[]){2, 1}, 2, i1v);
  emlx_array *ids[2] = {i0, i1};
  int axes[2] = {0, -1};
  int64_t slice[3] = {1, 5, 2};
  emlx_array *out = emlx_gather(a, ids, 2, axes, slice, 3, NULL);
  int64_t b0[6], b1[6];
  for (int m = 0; m < 6; m++)
    b0[m] = i0v[m % 3], b1[m] = i1v[m / 3];
  const int64_t *bp[2] = {b0, b1};
  int raxes[2] = {0, 2};
  double *ref = ref_gather(av, shape, 3, bp, raxes, 2, 6, slice, true);
  tu_check_array(out, EMLX_FLOAT32, ((int64_t[]){2, 3, 1, 5, 2}), 5, ref, 0,
                 "gather 2 indices (slice start 5 clamps to 4)");
  free(ref), emlx_release(out);
  /* the same in CHECK mode: 5 + 2 does not fit in 6 */
  out = emlx_gather(a, ids, 2, axes, slice, 3, &opt_check);
  IT_EVAL_FAILS(out, "gather", "index 5", "axis 2", "slice of size 2");
  emlx_release(out);
  /* no indices: one slice at the origin */
  int64_t s2[3] = {2, 3, 1};
  out = emlx_gather(a, NULL, 0, NULL, s2, 3, NULL);
  ref = ref_gather(av, shape, 3, NULL, NULL, 0, 1, s2, true);
  tu_check_array(out, EMLX_FLOAT32, s2, 3, ref, 0, "gather no indices");
  free(ref), emlx_release(out);
  /* a large gather of single elements */
  int64_t n = 50000;
  int64_t *li = malloc(2 * (size_t)n * sizeof *li);
  tu_rng rng = {11};
  for (int64_t i = 0; i < 2 * n; i++)
    li[i] = tu_randint(&rng, -4, 5);
  emlx_array *l0 = it_index1(EMLX_INT16, n, li), *l1 = it_index1(EMLX_INT32, n, li + n);
  emlx_array *lids[2] = {l0, l1};
  int laxes[2] = {0, 1};
  int64_t ls[3] = {1, 1, 6};
  out = emlx_gather(a, lids, 2, laxes, ls, 3, NULL);
  const int64_t *lp[2] = {li, li + n};
  ref = ref_gather(av, shape, 3, lp, laxes, 2, n, ls, true);
  tu_check_array(out, EMLX_FLOAT32, ((int64_t[]){n, 1, 1, 6}), 4, ref, 0, "gather large");
  free(ref), emlx_release(out), emlx_release(l0), emlx_release(l1);
  free(li);
  /* errors */
  emlx_array *fi = emlx_zeros((int64_t[]){2}, 1, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *i4 = emlx_zeros((int64_t[]){4}, 1, EMLX_INT32, EMLX_CPU);
  CHECK_NULL_ERR(emlx_gather(NULL, ids, 2, axes, slice, 3, NULL));
  CHECK_NULL_ERR(emlx_gather(a, ids, 2, axes, slice, 2, NULL));
  CHECK_NULL_ERR(emlx_gather(a, ids, 2, axes, (int64_t[]){1, 6, 1}, 3, NULL));
  CHECK_NULL_ERR(emlx_gather(a, ids, 2, axes, (int64_t[]){1, -1, 1}, 3, NULL));
  CHECK_NULL_ERR(emlx_gather(a, ids, 2, (int[]){0, 0}, slice, 3, NULL));
  CHECK_NULL_ERR(emlx_gather(a, ids, 2, (int[]){0, 3}, slice, 3, NULL));
  CHECK_NULL_ERR(emlx_gather(a, (emlx_array *[]){i0, fi}, 2, axes, slice, 3, NULL));
  CHECK_NULL_ERR(emlx_gather(a, (emlx_array *[]){i0, i4}, 2, axes, slice, 3, NULL));
  CHECK_NULL_ERR(emlx_gather(a, (emlx_array *[]){i0, NULL}, 2, axes, slice, 3, NULL));
  CHECK_NULL_ERR(emlx_gather(a, ids, 4, (int[]){0, 1, 2, 0}, slice, 3, NULL));
  CHECK_NULL_ERR(emlx_gather(a, ids, 2, NULL, slice, 3, NULL));
  emlx_release(fi), emlx_release(i4);
  emlx_release(i0), emlx_release(i1), emlx_release(a), emlx_release(b);
  free(av), free(bv);
}

/* ---- scatter / scatter_add ----------------------------------------------------------------- */

/* Sequential reference: for each position m in order, each slice element
 * s, out[start(m) + s] = upd (or +=, with add(dtype, old, u)). */
typedef double (*combine_fn)(emlx_dtype d, double old, double u);
static double comb_set(emlx_dtype d, double old, double u) {
  (void)d, (void)old;
  return u;
}
/* Addition as the dtype does it: rounding after each step for floats,
 * wrapping for integers, "or" for bool. */
static double comb_add(emlx_dtype d, double old, double u) {
  if (d == EMLX_BOOL)
    return (old != 0 || u != 0) ? 1 : 0;
  if (d == EMLX_FLOAT32 || d == EMLX_COMPLEX64)
    return (double)((float)old + (float)u);
  if (tu_is_float(d))
    return tu_quant(d, old + u); /* f16/bf16 via f32: exact for these */
  return tu_quant(d, old + u);   /* integers: wrap on store */
}

static double *ref_scatter(const double *a, const int64_t *shape, int nd, const int64_t *const *idx,
                           const int *axes, int nidx, int64_t npos, const double *upd,
                           const int64_t *slice, emlx_dtype d, combine_fn f, bool wrap) {
  int64_t n = tu_numel(shape, nd), S = tu_numel(slice, nd);
  double *out = malloc((size_t)(n > 0 ? n : 1) * sizeof *out);
  for (int64_t i = 0; i < n; i++)
    out[i] = tu_quant(d, a[i]);
  int64_t s[EMLX_MAX_NDIM], p[EMLX_MAX_NDIM];
  for (int64_t m = 0; m < npos; m++)
    for (int64_t j = 0; j < S; j++) {
      tu_unravel(j, slice, nd, s);
      for (int k = 0; k < nd; k++)
        p[k] = s[k];
      for (int k = 0; k < nidx; k++)
        p[axes[k]] += norm(idx[k][m], shape[axes[k]], shape[axes[k]] - slice[axes[k]], wrap);
      int64_t o = tu_ravel(p, shape, nd);
      out[o] = f(d, out[o], tu_quant(d, upd[m * S + j]));
    }
  return out;
}

static void test_scatter_dtypes(void) {
  /* a [6, 4]; rows 1, 4, -1 (= 5), 1 again: duplicates */
  int64_t shape[2] = {6, 4};
  int64_t iv[4] = {1, 4, -1, 1};
  int axis = 0;
  int64_t slice[2] = {1, 4};
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++) {
    emlx_dtype d = tu_all_dtypes[di];
    double *av, *uv;
    emlx_array *a = it_make(d, shape, 2, 12, &av);
    emlx_array *u = it_make(d, (int64_t[]){4, 1, 4}, 3, 13, &uv);
    emlx_array *idx = it_index1(idx_dtypes[4 + di % 4], 4, iv);
    const int64_t *ip[1] = {iv};
    for (int add = 0; add < 2; add++) {
      emlx_array *out = add ? emlx_scatter_add(a, &idx, 1, u, &axis, NULL)
                            : emlx_scatter(a, &idx, 1, u, &axis, NULL);
      double *ref =
          ref_scatter(av, shape, 2, ip, &axis, 1, 4, uv, slice, d, add ? comb_add : comb_set, true);
      tu_check_array(out, d, shape, 2, ref, 0, add ? "scatter_add rows" : "scatter rows");
      free(ref), emlx_release(out);
    }
    tu_check_array(a, d, shape, 2, av, 0, "scatter leaves a held input intact");
    emlx_release(idx), emlx_release(u), emlx_release(a);
    free(av), free(uv);
  }
}

static void test_scatter_add_arith(void) {
  /* u8 wraps, bool ors, f16 rounds after each addition, complex adds both parts */
  int64_t iv[3] = {0, 0, 0};
  emlx_array *idx = it_index1(EMLX_INT32, 3, iv);
  int axis = 0;
  double u8u[3] = {250, 10, 1};
  emlx_array *a = tu_make1(EMLX_UINT8, 1, (double[]){3});
  emlx_array *u = tu_make(EMLX_UINT8, (int64_t[]){3, 1}, 2, u8u);
  emlx_array *out = emlx_scatter_add(a, &idx, 1, u, &axis, NULL);
  tu_check_array(out, EMLX_UINT8, ((int64_t[]){1}), 1, ((double[]){8}), 0, "u8 wraps");
  emlx_release(out), emlx_release(u), emlx_release(a);

  a = tu_make1(EMLX_FLOAT16, 1, (double[]){2048});
  u = tu_make(EMLX_FLOAT16, (int64_t[]){3, 1}, 2, ((double[]){1, 1, 1}));
  out = emlx_scatter_add(a, &idx, 1, u, &axis, NULL);
  /* 2048 + 1 rounds to 2048 (ties to even) each time */
  tu_check_array(out, EMLX_FLOAT16, ((int64_t[]){1}), 1, ((double[]){2048}), 0,
                 "f16 rounds per addition");
  emlx_release(out), emlx_release(u), emlx_release(a);

  a = tu_make1(EMLX_BOOL, 1, (double[]){0});
  u = tu_make(EMLX_BOOL, (int64_t[]){3, 1}, 2, ((double[]){1, 1, 0}));
  out = emlx_scatter_add(a, &idx, 1, u, &axis, NULL);
  tu_check_array(out, EMLX_BOOL, ((int64_t[]){1}), 1, ((double[]){1}), 0, "bool ors");
  emlx_release(out), emlx_release(u), emlx_release(a);

  float cz[2] = {1.0f, -1.0f}, cu[6] = {0.5f, 2.0f, 1.0f, 1.0f, -3.0f, 0.25f};
  a = emlx_from_blob(cz, EMLX_COMPLEX64, (int64_t[]){1}, 1, EMLX_CPU);
  u = emlx_from_blob(cu, EMLX_COMPLEX64, (int64_t[]){3, 1}, 2, EMLX_CPU);
  out = emlx_scatter_add(a, &idx, 1, u, &axis, NULL);
  unsigned char *raw = tu_read_raw(out);
  float got[2] = {0};
  if (raw)
    memcpy(got, raw, sizeof got);
  CHECK(raw && got[0] == -0.5f && got[1] == 2.25f);
  free(raw), emlx_release(out), emlx_release(u), emlx_release(a);

  /* updates of another dtype are cast to a's (as astype): 2.9 -> 2 */
  a = tu_make1(EMLX_INT32, 2, (double[]){5, 6});
  u = tu_make(EMLX_FLOAT64, (int64_t[]){3, 1}, 2, ((double[]){2.9, -1.5, 1}));
  out = emlx_scatter_add(a, &idx, 1, u, &axis, NULL);
  tu_check_array(out, EMLX_INT32, ((int64_t[]){2}), 1, ((double[]){7, 6}), 0, "updates cast");
  emlx_release(out), emlx_release(u), emlx_release(a), emlx_release(idx);
}

static void test_scatter_general(void) {
  /* overlapping slices of 3 along a 1-d array: 0, 1, 7 (clamps to 7: 7 + 3 = 10 fits) */
  int64_t iv[4] = {0, 1, 8, -2};
  double *av, *uv;
  emlx_array *a = it_make(EMLX_INT64, (int64_t[]){10}, 1, 14, &av);
  emlx_array *u = it_make(EMLX_INT64, (int64_t[]){4, 3}, 2, 15, &uv);
  emlx_array *idx = it_index1(EMLX_INT8, 4, iv);
  int axis = 0;
  const int64_t *ip[1] = {iv};
  int64_t s3[1] = {3};
  for (int add = 0; add < 2; add++) {
    emlx_array *out = add ? emlx_scatter_add(a, &idx, 1, u, &axis, NULL)
                          : emlx_scatter(a, &idx, 1, u, &axis, NULL);
    double *ref = ref_scatter(av, (int64_t[]){10}, 1, ip, &axis, 1, 4, uv, s3, EMLX_INT64,
                              add ? comb_add : comb_set, true);
    tu_check_array(out, EMLX_INT64, ((int64_t[]){10}), 1, ref, 0, "scatter overlapping slices");
    free(ref), emlx_release(out);
  }
  /* CHECK: 8 + 3 does not fit in 10; a held input stays intact */
  emlx_array *bad = emlx_scatter(a, &idx, 1, u, &axis, &opt_check);
  IT_EVAL_FAILS(bad, "scatter", "index 8", "slice of size 3");
  emlx_release(bad);
  tu_check_array(a, EMLX_INT64, ((int64_t[]){10}), 1, av, 0, "a intact after a failed scatter");
  emlx_release(idx), emlx_release(u), emlx_release(a);
  free(av), free(uv);

  /* two broadcast index arrays on a transposed a, transposed updates */
  double *bv;
  emlx_array *b = it_make(EMLX_FLOAT32, (int64_t[]){6, 5}, 2, 16, &bv);
  emlx_array *at = emlx_transpose(b, NULL, 0); /* [5, 6] */
  double *atv = it_transpose2(bv, 6, 5);
  int64_t i0v[2] = {4, 0}, i1v[3] = {5, 2, -6};
  emlx_array *i0 = it_index(EMLX_INT32, (int64_t[]){2, 1}, 2, i0v);
  emlx_array *i1 = it_index1(EMLX_INT64, 3, i1v);
  double *ubv;
  emlx_array *ub = it_make(EMLX_FLOAT32, (int64_t[]){1, 1, 3, 2}, 4, 17, &ubv);
  emlx_array *ut = emlx_transpose(ub, (int[]){3, 2, 1, 0}, 4); /* [2, 3, 1, 1] */
  double utv[6];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      utv[i * 3 + j] = ubv[j * 2 + i];
  int64_t b0[6], b1[6];
  for (int m = 0; m < 6; m++)
    b0[m] = i0v[m / 3], b1[m] = i1v[m % 3];
  const int64_t *bp[2] = {b0, b1};
  int axes[2] = {0, 1};
  emlx_array *ids[2] = {i0, i1};
  int64_t s11[2] = {1, 1};
  emlx_array *out = emlx_scatter_add(at, ids, 2, ut, axes, NULL);
  double *ref = ref_scatter(atv, (int64_t[]){5, 6}, 2, bp, axes, 2, 6, utv, s11, EMLX_FLOAT32,
                            comb_add, true);
  tu_check_array(out, EMLX_FLOAT32, ((int64_t[]){5, 6}), 2, ref, 0, "scatter_add 2 indices");
  free(ref), emlx_release(out);
  /* no indices: the update goes to the origin */
  double *zv;
  emlx_array *z = it_make(EMLX_FLOAT32, (int64_t[]){2, 3}, 2, 18, &zv);
  out = emlx_scatter(at, NULL, 0, z, NULL, NULL);
  const int64_t *none[1] = {NULL};
  ref = ref_scatter(atv, (int64_t[]){5, 6}, 2, none, NULL, 0, 1, zv, (int64_t[]){2, 3},
                    EMLX_FLOAT32, comb_set, true);
  tu_check_array(out, EMLX_FLOAT32, ((int64_t[]){5, 6}), 2, ref, 0, "scatter no indices");
  free(ref), emlx_release(out);
  /* single elements from strided and broadcast updates, int64 indices */
  int64_t sv[5] = {2, -1, 2, 0, 7};
  emlx_array *si = it_index1(EMLX_INT64, 5, sv);
  double *wv;
  emlx_array *wide = it_make(EMLX_INT16, (int64_t[]){10, 1}, 2, 19, &wv);
  emlx_array *step = emlx_slice(wide, (int64_t[]){0, 0}, (int64_t[]){10, 1}, (int64_t[]){2, 1}, 2);
  emlx_array *one = emlx_scalar_tensor(3, EMLX_INT16, EMLX_CPU);
  emlx_array *bc = emlx_broadcast_to(one, (int64_t[]){5, 1}, 2);
  double *ev;
  emlx_array *e8 = it_make(EMLX_INT16, (int64_t[]){8}, 1, 20, &ev);
  double stv[5], bcv[5] = {3, 3, 3, 3, 3};
  for (int i = 0; i < 5; i++)
    stv[i] = wv[2 * i];
  const int64_t *sp[1] = {sv};
  int64_t s1[1] = {1};
  for (int add = 0; add < 2; add++) {
    emlx_array *o1 = add ? emlx_scatter_add(e8, &si, 1, step, &axis, NULL)
                         : emlx_scatter(e8, &si, 1, step, &axis, NULL);
    double *r1 = ref_scatter(ev, (int64_t[]){8}, 1, sp, &axis, 1, 5, stv, s1, EMLX_INT16,
                             add ? comb_add : comb_set, true);
    tu_check_array(o1, EMLX_INT16, ((int64_t[]){8}), 1, r1, 0, "scatter strided updates");
    free(r1), emlx_release(o1);
    o1 = add ? emlx_scatter_add(e8, &si, 1, bc, &axis, NULL)
             : emlx_scatter(e8, &si, 1, bc, &axis, NULL);
    r1 = ref_scatter(ev, (int64_t[]){8}, 1, sp, &axis, 1, 5, bcv, s1, EMLX_INT16,
                     add ? comb_add : comb_set, true);
    tu_check_array(o1, EMLX_INT16, ((int64_t[]){8}), 1, r1, 0, "scatter broadcast updates");
    free(r1), emlx_release(o1);
  }
  emlx_release(si), emlx_release(wide), emlx_release(step), emlx_release(one), emlx_release(bc);
  emlx_release(e8);
  free(wv), free(ev);
  /* errors */
  emlx_array *u3 = emlx_zeros((int64_t[]){2, 3, 1}, 3, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *uw = emlx_zeros((int64_t[]){2, 2, 1, 1}, 4, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *ul = emlx_zeros((int64_t[]){2, 3, 6, 1}, 4, EMLX_FLOAT32, EMLX_CPU);
  emlx_array *fi = emlx_zeros((int64_t[]){3}, 1, EMLX_FLOAT64, EMLX_CPU);
  CHECK_NULL_ERR(emlx_scatter(NULL, ids, 2, ut, axes, NULL));
  CHECK_NULL_ERR(emlx_scatter(at, ids, 2, NULL, axes, NULL));
  CHECK_NULL_ERR(emlx_scatter(at, ids, 2, u3, axes, NULL)); /* rank */
  CHECK_NULL_ERR(emlx_scatter(at, ids, 2, uw, axes, NULL)); /* leading dims */
  CHECK_NULL_ERR(emlx_scatter(at, ids, 2, ul, axes, NULL)); /* slice too large */
  CHECK_NULL_ERR(emlx_scatter_add(at, (emlx_array *[]){i0, fi}, 2, ut, axes, NULL));
  CHECK_NULL_ERR(emlx_scatter_add(at, ids, 2, ut, (int[]){1, 1}, NULL));
  CHECK_NULL_ERR(emlx_scatter_add(at, ids, 3, ut, (int[]){0, 1, 2}, NULL));
  emlx_release(u3), emlx_release(uw), emlx_release(ul), emlx_release(fi), emlx_release(z);
  emlx_release(ut), emlx_release(ub), emlx_release(i0), emlx_release(i1), emlx_release(at);
  emlx_release(b);
  free(bv), free(atv), free(ubv), free(zv);
}

/* Large scatters over the pool: duplicates resolve in index order, exactly. */
static void test_scatter_large(void) {
  int64_t bins = 1000, m = 200000;
  int64_t *iv = malloc((size_t)m * sizeof *iv);
  double *uv = malloc((size_t)m * sizeof *uv);
  tu_rng rng = {21};
  for (int64_t i = 0; i < m; i++) {
    iv[i] = tu_randint(&rng, -bins, bins - 1);
    uv[i] = (double)(float)tu_uniform(&rng, 0, 1);
  }
  emlx_array *idx = it_index1(EMLX_INT32, m, iv);
  emlx_array *u = tu_make(EMLX_FLOAT32, (int64_t[]){m, 1}, 2, uv);
  emlx_array *a = emlx_zeros(&bins, 1, EMLX_FLOAT32, EMLX_CPU);
  int axis = 0;
  const int64_t *ip[1] = {iv};
  double *zero = calloc((size_t)bins, sizeof *zero);
  int64_t s1[1] = {1};
  for (int add = 0; add < 2; add++) {
    emlx_array *out = add ? emlx_scatter_add(a, &idx, 1, u, &axis, NULL)
                          : emlx_scatter(a, &idx, 1, u, &axis, NULL);
    double *ref = ref_scatter(zero, &bins, 1, ip, &axis, 1, m, uv, s1, EMLX_FLOAT32,
                              add ? comb_add : comb_set, true);
    tu_check_array(out, EMLX_FLOAT32, &bins, 1, ref, 0, "scatter large, in index order");
    free(ref), emlx_release(out);
  }
  /* rows of 64 into [1000, 64], donated: the result reuses a's buffer */
  int64_t rshape[2] = {1000, 64}, nr = 3000;
  double *rv;
  emlx_array *r = it_make(EMLX_INT32, rshape, 2, 22, &rv);
  double *ruv;
  emlx_array *ru = it_make(EMLX_INT32, (int64_t[]){nr, 1, 64}, 3, 23, &ruv);
  emlx_array *ridx = it_index1(EMLX_INT32, nr, iv);
  CHECK_OK(emlx_eval(&r, 1));
  const void *buf = emlx_data(r);
  emlx_array *out = emlx_scatter_add(r, &ridx, 1, ru, &axis, NULL);
  emlx_release(r);
  CHECK(out && emlx_eval(&out, 1) == 0 && emlx_data(out) == buf);
  double *ref = ref_scatter(rv, rshape, 2, ip, &axis, 1, nr, ruv, (int64_t[]){1, 64}, EMLX_INT32,
                            comb_add, true);
  tu_check_array(out, EMLX_INT32, rshape, 2, ref, 0, "scatter_add rows in place");
  free(ref), emlx_release(out);
  emlx_release(ridx), emlx_release(ru), emlx_release(a), emlx_release(u), emlx_release(idx);
  free(iv), free(uv), free(zero), free(rv), free(ruv);
}

/* An output of 32 MiB takes the streaming-store path. */
static void test_take_large_output(void) {
  int64_t rows = 2048, cols = 16384;
  unsigned char *x = malloc((size_t)(rows * cols));
  for (int64_t i = 0; i < rows * cols; i++)
    x[i] = (unsigned char)(i * 11 + 3);
  emlx_array *a = emlx_from_blob(x, EMLX_UINT8, (int64_t[]){rows, cols}, 2, EMLX_CPU);
  int64_t *iv = malloc((size_t)rows * sizeof *iv);
  for (int64_t i = 0; i < rows; i++)
    iv[i] = (i * 37) % rows;
  emlx_array *idx = it_index1(EMLX_INT32, rows, iv);
  emlx_array *out = emlx_take(a, idx, 0, NULL);
  unsigned char *got = tu_read_raw(out);
  bool ok = got != NULL;
  for (int64_t i = 0; ok && i < rows; i++)
    ok = memcmp(got + i * cols, x + iv[i] * cols, (size_t)cols) == 0;
  CHECK_MSG(ok, "take of 32 MiB of rows");
  free(got), emlx_release(out), emlx_release(idx), emlx_release(a);
  free(iv), free(x);
}

int main(void) {
  test_take_dtypes();
  test_take_index_dtypes();
  test_take_layouts();
  test_take_bounds();
  test_take_along_axis();
  test_gather();
  test_scatter_dtypes();
  test_scatter_add_arith();
  test_scatter_general();
  test_scatter_large();
  test_take_large_output();
  return tu_finish();
}
