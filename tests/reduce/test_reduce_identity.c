/* test_reduce_identity.c — the starting values of min and max.
 *
 * A min or max reduction starts every accumulator at its identity (the
 * dtype's largest value for min, its smallest for max, ±inf for floats)
 * and folds the inputs into it; the partial results of the threaded and
 * column paths start there too. An input whose every element is that
 * extreme value gives back exactly the extreme only if the identity is
 * right: one step off (INT32_MIN + 1, -FLT_MAX instead of -inf) shows in
 * the result. Each integer and float dtype, each layout the reduce driver
 * picks a different path for (all axes, the last axis, the first axis, a
 * transposed input), and sizes from one element to past the thread split. */
#include "test_util.h"

#include <float.h>

/* The extreme element of dtype d, as bytes: the smallest value when low,
 * else the largest. Returns false for dtypes without an order tested here. */
static bool extreme_bytes(emlx_dtype d, bool low, unsigned char out[8]) {
  union {
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    int8_t s8;
    int16_t s16;
    int32_t s32;
    int64_t s64;
    float f32;
    double f64;
  } v;
  memset(&v, 0, sizeof v);
  switch (d) {
  case EMLX_UINT8:
    v.u8 = low ? 0 : UINT8_MAX;
    break;
  case EMLX_UINT16:
    v.u16 = low ? 0 : UINT16_MAX;
    break;
  case EMLX_UINT32:
    v.u32 = low ? 0 : UINT32_MAX;
    break;
  case EMLX_UINT64:
    v.u64 = low ? 0 : UINT64_MAX;
    break;
  case EMLX_INT8:
    v.s8 = low ? INT8_MIN : INT8_MAX;
    break;
  case EMLX_INT16:
    v.s16 = low ? INT16_MIN : INT16_MAX;
    break;
  case EMLX_INT32:
    v.s32 = low ? INT32_MIN : INT32_MAX;
    break;
  case EMLX_INT64:
    v.s64 = low ? INT64_MIN : INT64_MAX;
    break;
  case EMLX_FLOAT16:
    v.u16 = low ? 0xFC00 : 0x7C00; /* ∓inf */
    break;
  case EMLX_BFLOAT16:
    v.u16 = low ? 0xFF80 : 0x7F80;
    break;
  case EMLX_FLOAT32:
    v.f32 = low ? -INFINITY : INFINITY;
    break;
  case EMLX_FLOAT64:
    v.f64 = low ? -(double)INFINITY : (double)INFINITY;
    break;
  default:
    return false;
  }
  memcpy(out, &v, 8);
  return true;
}

enum { LAYOUT_ALL, LAYOUT_LAST, LAYOUT_FIRST, LAYOUT_TRANSPOSED, LAYOUT_COUNT };
static const char *const layout_name[LAYOUT_COUNT] = {"all axes", "last axis", "first axis",
                                                      "transposed, last axis"};

/* Reduces a {rows, cols} array filled with one extreme value and checks that
 * every output element is that value, bit for bit. */
static void check_case(emlx_dtype d, bool is_max, int64_t rows, int64_t cols, int layout) {
  unsigned char ext[8];
  if (!extreme_bytes(d, is_max, ext))
    return;
  size_t es = tu_dsize(d);
  int64_t n = rows * cols;
  unsigned char *buf = malloc((size_t)n * es);
  for (int64_t i = 0; i < n; i++)
    memcpy(buf + (size_t)i * es, ext, es);
  int64_t shape[2] = {rows, cols};
  emlx_array *a = emlx_from_blob(buf, d, shape, 2, EMLX_CPU);
  free(buf);
  CHECK_MSG(a != NULL, "from_blob %s {%lld, %lld}", tu_dname(d), (long long)rows, (long long)cols);
  if (!a)
    return;
  emlx_array *in = a;
  int axes[2] = {0, 1};
  int naxes = 2;
  int64_t expect_n = 1;
  if (layout == LAYOUT_LAST) {
    axes[0] = 1, naxes = 1, expect_n = rows;
  } else if (layout == LAYOUT_FIRST) {
    axes[0] = 0, naxes = 1, expect_n = cols;
  } else if (layout == LAYOUT_TRANSPOSED) {
    int perm[2] = {1, 0};
    in = emlx_transpose(a, perm, 2);
    axes[0] = 1, naxes = 1, expect_n = cols;
  }
  emlx_array *r = is_max ? emlx_max(in, axes, naxes, false) : emlx_min(in, axes, naxes, false);
  CHECK_MSG(r != NULL, "%s %s over %s: %s", is_max ? "max" : "min", tu_dname(d),
           layout_name[layout], r ? "ok" : emlx_last_error());
  if (r) {
    unsigned char *got = tu_read_raw(r);
    if (got) {
      CHECK_MSG(emlx_size(r) == expect_n, "%lld outputs", (long long)expect_n);
      int64_t bad = -1;
      for (int64_t i = 0; i < emlx_size(r) && bad < 0; i++)
        if (memcmp(got + (size_t)i * es, ext, es) != 0)
          bad = i;
      CHECK_MSG(bad < 0, "%s %s {%lld, %lld} over %s: every output is the %s value (first bad %lld)",
               is_max ? "max" : "min", tu_dname(d), (long long)rows, (long long)cols,
               layout_name[layout], is_max ? "smallest" : "largest", (long long)bad);
      free(got);
    }
    emlx_release(r);
  }
  if (in != a)
    emlx_release(in);
  emlx_release(a);
}

int main(void) {
  static const int64_t sizes[][2] = {{1, 1}, {3, 5}, {7, 33}, {64, 1000}, {3, 100003}, {100003, 3}};
  for (int di = 0; di < EMLX_DTYPE_COUNT; di++)
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
      for (int layout = 0; layout < LAYOUT_COUNT; layout++)
        for (int is_max = 0; is_max < 2; is_max++)
          check_case(tu_all_dtypes[di], is_max, sizes[si][0], sizes[si][1], layout);
  return tu_finish();
}
