/* test_reduce_cast.c — reductions of a widening integer cast: sum, product,
 * max and min of astype(x, as) for x of every integer dtype narrower than
 * as and bool, as of 32 and 64 bits (the fused region is the cast alone,
 * and the reduction folds x itself, each element extended in the loop).
 * Whole arrays long enough to be cut into pieces folded in parallel, short
 * ones (vector tails), the last axis, the first axis, a middle axis and a
 * transposed view; values that overflow 32 bits, negative ones and the
 * whole unsigned range. References: C loops over the same values here,
 * each element converted as C converts it (for a widening cast, what
 * astype does), folded modulo 2^bits(as). Casts that do not keep every
 * value (signed to unsigned, bool) under max and min take the general
 * path; they are checked the same way. */
#include "test_util.h"

enum { OP_SUM, OP_PROD, OP_MAX, OP_MIN, OP_COUNT };
static const char *const op_name[OP_COUNT] = {"sum", "product", "max", "min"};

static uint64_t mask_of(emlx_dtype d) {
  return tu_dsize(d) == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * tu_dsize(d))) - 1;
}

/* v (a value of x's dtype) converted to as: its bits, zero-padded to 64. */
static uint64_t conv(int64_t v, emlx_dtype as) { return (uint64_t)v & mask_of(as); }

/* The signed value of as-bits b (for comparisons in a signed as). */
static int64_t as_signed(uint64_t b, emlx_dtype as) {
  int sh = 64 - 8 * (int)tu_dsize(as);
  return (int64_t)(b << sh) >> sh;
}

static bool less(uint64_t a, uint64_t b, emlx_dtype as) {
  return emlx_dtype_is_signed(as) ? as_signed(a, as) < as_signed(b, as) : a < b;
}

static uint64_t fold(int op, uint64_t acc, uint64_t e, emlx_dtype as) {
  switch (op) {
  case OP_SUM:
    return (acc + e) & mask_of(as);
  case OP_PROD:
    return (acc * e) & mask_of(as);
  case OP_MAX:
    return less(acc, e, as) ? e : acc;
  default:
    return less(e, acc, as) ? e : acc;
  }
}

static uint64_t identity(int op, emlx_dtype as) {
  if (op == OP_SUM)
    return 0;
  if (op == OP_PROD)
    return 1;
  uint64_t hi = emlx_dtype_is_signed(as) ? mask_of(as) >> 1 : mask_of(as);
  uint64_t lo = emlx_dtype_is_signed(as) ? (hi + 1) & mask_of(as) : 0;
  return op == OP_MAX ? lo : hi;
}

/* Values of x's dtype, as int64: the dtype's whole range (or [lo, hi] when
 * lo < hi), odd when `odd` (products that do not vanish modulo 2^64). */
static int64_t *values(emlx_dtype x, int64_t n, uint64_t seed, int64_t lo, int64_t hi, bool odd) {
  int64_t *v = malloc((size_t)n * sizeof *v);
  tu_rng r = {seed};
  if (lo >= hi) {
    int bits = x == EMLX_BOOL ? 1 : 8 * (int)tu_dsize(x);
    lo = x == EMLX_BOOL || !emlx_dtype_is_signed(x) ? 0 : -(INT64_C(1) << (bits - 1));
    hi = x == EMLX_BOOL || !emlx_dtype_is_signed(x) ? (INT64_C(1) << bits) - 1
                                                    : (INT64_C(1) << (bits - 1)) - 1;
  }
  for (int64_t i = 0; i < n; i++) {
    v[i] = tu_randint(&r, lo, hi);
    if (odd && x != EMLX_BOOL)
      v[i] |= 1;
  }
  return v;
}

static emlx_array *array_of(emlx_dtype x, const int64_t *v, const int64_t *shape, int nd) {
  int64_t n = tu_numel(shape, nd);
  size_t es = tu_dsize(x);
  unsigned char *raw = malloc((size_t)n * es + 1);
  for (int64_t i = 0; i < n; i++)
    memcpy(raw + i * (int64_t)es, &v[i], es); /* little-endian: the low bytes */
  emlx_array *a = emlx_from_blob(raw, x, shape, nd, EMLX_CPU);
  free(raw);
  return a;
}

static emlx_array *reduce(int op, emlx_array *a, const int *axes, int naxes) {
  switch (op) {
  case OP_SUM:
    return emlx_sum(a, axes, naxes, false);
  case OP_PROD:
    return emlx_product(a, axes, naxes, false);
  case OP_MAX:
    return emlx_max(a, axes, naxes, false);
  default:
    return emlx_min(a, axes, naxes, false);
  }
}

/* op(astype(x, as), axes) of x = v shaped `shape` (transposed by perm when
 * perm is set: the cast then reads a view), against the reference. */
static void check(int op, emlx_dtype xd, emlx_dtype as, const int64_t *v, const int64_t *shape,
                  int nd, const int *perm, const int *axes, int naxes, const char *what) {
  emlx_array *x0 = array_of(xd, v, shape, nd);
  emlx_array *x = perm ? emlx_transpose(x0, perm, nd) : emlx_retain(x0);
  int64_t vs[3]; /* the view's shape */
  for (int d = 0; d < nd; d++)
    vs[d] = perm ? shape[perm[d]] : shape[d];
  bool red[3] = {naxes == 0, naxes == 0, naxes == 0};
  for (int k = 0; k < naxes; k++)
    red[axes[k]] = true;
  int64_t oshape[3], on = 1, os[3];
  int ond = 0;
  for (int d = 0; d < nd; d++)
    if (!red[d])
      on *= oshape[ond++] = vs[d];
  for (int d = ond - 1, st = 1; d >= 0; st *= (int)oshape[d], d--)
    os[d] = st;
  uint64_t *want = malloc((size_t)on * sizeof *want);
  for (int64_t o = 0; o < on; o++)
    want[o] = identity(op, as);
  int64_t n = tu_numel(shape, nd), idx[3], src[3];
  for (int64_t i = 0; i < n; i++) { /* i: flat position in the view */
    tu_unravel(i, vs, nd, idx);
    int64_t o = 0;
    for (int d = 0, k = 0; d < nd; d++) {
      src[perm ? perm[d] : d] = idx[d];
      if (!red[d])
        o += idx[d] * os[k++];
    }
    want[o] = fold(op, want[o], conv(v[tu_ravel(src, shape, nd)], as), as);
  }
  emlx_array *w = emlx_astype(x, as);
  emlx_array *r = reduce(op, w, axes, naxes);
  emlx_release(w); /* the reduction is the cast's only reader: fused */
  size_t es = tu_dsize(as);
  unsigned char *got = malloc((size_t)on * es);
  bool ok = r && emlx_array_dtype(r) == as && emlx_to_blob(r, got, (size_t)on * es) == 0;
  CHECK_MSG(ok, "%s(astype(%s, %s)) %s: %s", op_name[op], tu_dname(xd), tu_dname(as), what,
            ok ? "" : emlx_last_error());
  int64_t bad = 0, first = -1;
  for (int64_t o = 0; ok && o < on; o++) {
    uint64_t g = 0;
    memcpy(&g, got + o * (int64_t)es, es);
    if (g != want[o] && bad++ == 0)
      first = o;
  }
  if (ok) {
    uint64_t g = 0;
    if (first >= 0)
      memcpy(&g, got + first * (int64_t)es, es);
    CHECK_MSG(bad == 0, "%s(astype(%s, %s)) %s: %lld of %lld off, first [%lld] %llx want %llx",
              op_name[op], tu_dname(xd), tu_dname(as), what, (long long)bad, (long long)on,
              (long long)first, (unsigned long long)g,
              (unsigned long long)(first >= 0 ? want[first] : 0));
  }
  free(got), free(want);
  emlx_release(r), emlx_release(x), emlx_release(x0);
}

static const emlx_dtype sources[] = {EMLX_BOOL, EMLX_UINT8, EMLX_UINT16, EMLX_UINT32,
                                     EMLX_INT8, EMLX_INT16, EMLX_INT32};
static const emlx_dtype targets[] = {EMLX_INT32, EMLX_UINT32, EMLX_INT64, EMLX_UINT64};
#define NSRC (int)(sizeof sources / sizeof sources[0])
#define NTGT (int)(sizeof targets / sizeof targets[0])

/* Every source and target, every op: one long whole-array reduction (runs
 * cut into 64K pieces, folded in parallel), short ones (every tail of the
 * vector loops) and the three axes of a [7, 50, 33] and its transpose. */
static void test_all_pairs(void) {
  const int64_t nlong = 3 * 65536 + 4099;
  uint64_t seed = 1;
  for (int s = 0; s < NSRC; s++)
    for (int t = 0; t < NTGT; t++) {
      emlx_dtype xd = sources[s], as = targets[t];
      if (tu_dsize(as) <= tu_dsize(xd))
        continue;
      for (int op = 0; op < OP_COUNT; op++) {
        int64_t *v = values(xd, nlong, seed++, 0, 0, op == OP_PROD);
        check(op, xd, as, v, &nlong, 1, NULL, NULL, 0, "whole, long");
        for (int64_t n = 1; n <= 70; n += 3) {
          char what[32];
          snprintf(what, sizeof what, "whole, n %lld", (long long)n);
          check(op, xd, as, v + 11, &n, 1, NULL, NULL, 0, what);
        }
        const int64_t sh[3] = {7, 50, 33};
        const int perm[3] = {2, 0, 1};
        for (int ax = 0; ax < 3; ax++) {
          char what[32];
          snprintf(what, sizeof what, "axis %d", ax);
          check(op, xd, as, v, sh, 3, NULL, &ax, 1, what);
          snprintf(what, sizeof what, "transposed, axis %d", ax);
          check(op, xd, as, v, sh, 3, perm, &ax, 1, what);
        }
        const int two[2] = {0, 2};
        check(op, xd, as, v, sh, 3, NULL, two, 2, "axes 0 and 2");
        free(v);
      }
    }
}

/* int32 -> int64 and uint32 -> int64 sums whose 32-bit wrap is wrong: the
 * total is far outside 32 bits (one sign, then the other), with rows long
 * enough for the last-axis and the first-axis modes to split their work. */
static void test_beyond_32_bits(void) {
  const int64_t sh[2] = {2049, 333}, n = sh[0] * sh[1]; /* 10 pieces of 64K and a ragged end */
  const int ax0 = 0, ax1 = 1;
  int64_t *hi = values(EMLX_INT32, n, 101, INT64_C(1) << 30, INT32_MAX, false);
  int64_t *neg = values(EMLX_INT32, n, 102, INT32_MIN, -(INT64_C(1) << 30), false);
  int64_t *u = values(EMLX_UINT32, n, 103, INT64_C(3) << 30, UINT32_MAX, false);
  int64_t sum_hi = 0;
  for (int64_t i = 0; i < n; i++)
    sum_hi += hi[i];
  CHECK_MSG(sum_hi != (int64_t)(int32_t)(uint32_t)sum_hi, "the sum must not fit 32 bits");
  int64_t *sets[3] = {hi, neg, u};
  const emlx_dtype xds[3] = {EMLX_INT32, EMLX_INT32, EMLX_UINT32};
  for (int k = 0; k < 3; k++)
    for (int t = 2; t < NTGT; t++) {
      check(OP_SUM, xds[k], targets[t], sets[k], &n, 1, NULL, NULL, 0, "whole, beyond 32 bits");
      check(OP_SUM, xds[k], targets[t], sets[k], sh, 2, NULL, &ax1, 1, "last axis, beyond 32 bits");
      check(OP_SUM, xds[k], targets[t], sets[k], sh, 2, NULL, &ax0, 1,
            "first axis, beyond 32 bits");
      check(OP_MAX, xds[k], targets[t], sets[k], &n, 1, NULL, NULL, 0, "whole");
      check(OP_MIN, xds[k], targets[t], sets[k], sh, 2, NULL, &ax1, 1, "last axis");
    }
  /* products whose slices of rows combine (first axis), then pieces of a run */
  int64_t *odd = values(EMLX_INT16, n, 104, 0, 0, true);
  check(OP_PROD, EMLX_INT16, EMLX_INT64, odd, sh, 2, NULL, &ax0, 1, "first axis, row slices");
  check(OP_PROD, EMLX_INT16, EMLX_UINT32, odd, sh, 2, NULL, &ax0, 1, "first axis, row slices");
  check(OP_PROD, EMLX_INT16, EMLX_INT64, odd, &n, 1, NULL, NULL, 0, "whole, pieces");
  free(odd);
  /* the first axis of [2048, 9001]: several column blocks whose rows are cut
   * into slices, each task folding whole rows into every block's partials */
  const int64_t wide[2] = {2048, 9001};
  const emlx_dtype wx[3] = {EMLX_INT32, EMLX_INT16, EMLX_UINT8};
  const emlx_dtype was[3] = {EMLX_INT64, EMLX_INT32, EMLX_UINT64};
  const int wop[3] = {OP_SUM, OP_MIN, OP_MAX};
  for (int k = 0; k < 3; k++) {
    int64_t *w = values(wx[k], wide[0] * wide[1], 105 + (uint64_t)k, 0, 0, false);
    check(wop[k], wx[k], was[k], w, wide, 2, NULL, &ax0, 1, "first axis, blocks x slices");
    free(w);
  }
  free(hi), free(neg), free(u);
}

/* Regions that are more than the cast, with the cast's source as their one
 * input (-astype(x, int64), and astype(x, int64) * 3 - 5), fold what the
 * whole region produces. */
static void test_cast_then_more(void) {
  const int64_t n = 3 * 65536 + 5;
  int64_t *v = values(EMLX_INT32, n, 201, 0, 0, false);
  uint64_t want_sum = 0;
  int64_t want_max = INT64_MIN;
  for (int64_t i = 0; i < n; i++) {
    want_sum -= (uint64_t)v[i];
    int64_t t = v[i] * 3 - 5;
    want_max = t > want_max ? t : want_max;
  }
  emlx_array *x = array_of(EMLX_INT32, v, &n, 1);
  emlx_array *w = emlx_astype(x, EMLX_INT64), *m = emlx_negate(w);
  emlx_array *s = emlx_sum(m, NULL, 0, false);
  emlx_release(w), emlx_release(m);
  emlx_array *three = emlx_scalar_tensor_int(3, EMLX_INT64, EMLX_CPU);
  emlx_array *five = emlx_scalar_tensor_int(5, EMLX_INT64, EMLX_CPU);
  w = emlx_astype(x, EMLX_INT64);
  emlx_array *t3 = emlx_multiply(w, three);
  m = emlx_subtract(t3, five);
  emlx_array *mx = emlx_max(m, NULL, 0, false);
  emlx_release(w), emlx_release(t3), emlx_release(m);
  int64_t gs = 0, gm = 0;
  CHECK(s && emlx_item_i64(s, &gs) == 0);
  CHECK(mx && emlx_item_i64(mx, &gm) == 0);
  CHECK_MSG((uint64_t)gs == want_sum, "sum(-astype(x, int64)) = %lld, want %lld", (long long)gs,
            (long long)want_sum);
  CHECK_MSG(gm == want_max, "max(astype(x, int64) * 3 - 5) = %lld, want %lld", (long long)gm,
            (long long)want_max);
  emlx_release(s), emlx_release(mx), emlx_release(three), emlx_release(five), emlx_release(x);
  free(v);
}

/* An empty reduction: the identity in the cast's dtype. */
static void test_empty(void) {
  const int64_t sh[2] = {0, 5};
  const int ax = 0;
  check(OP_SUM, EMLX_INT32, EMLX_INT64, NULL, sh, 2, NULL, &ax, 1, "empty");
  check(OP_PROD, EMLX_INT16, EMLX_INT64, NULL, sh, 2, NULL, &ax, 1, "empty");
}

int main(void) {
  test_all_pairs();
  test_beyond_32_bits();
  test_cast_then_more();
  test_empty();
  return tu_finish();
}
