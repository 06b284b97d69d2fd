/* test_memory.c — the allocator seen through the public API: the active /
 * peak / cache counters, cache reuse, the cache limit (lowering it evicts at
 * once), clear_cache, reset_peak_memory, the memory limit (both setters
 * return the previous limit; going over it makes eval fail with a message,
 * evicts the cache first, and leaves every existing array intact; a cached
 * buffer of the right size does not let it pass), and that
 * active memory returns to where it started once every array is released. */
#include <ctype.h>

#include "test_util.h"

#define MiB ((size_t)1 << 20)

static emlx_memory_stats info(void) { return emlx_memory_info(); }

static emlx_array *make_f32(int64_t n, float start) {
  float *b = malloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++)
    b[i] = start + (float)(i % 4096) * 0.25f;
  emlx_array *a = emlx_from_blob(b, EMLX_FLOAT32, &n, 1, EMLX_CPU);
  free(b);
  return a;
}

static bool contains_ci(const char *s, const char *w) {
  for (; *s; s++) {
    size_t i = 0;
    while (w[i] && s[i] && tolower((unsigned char)s[i]) == tolower((unsigned char)w[i]))
      i++;
    if (!w[i])
      return true;
  }
  return false;
}

static void test_limits_roundtrip(void) {
  size_t cl = emlx_get_cache_limit(), ml = emlx_get_memory_limit();
  CHECK(cl > 0 && ml > 0);
  CHECK_EQ_U64(emlx_set_cache_limit(123 * MiB), cl);
  CHECK_EQ_U64(emlx_get_cache_limit(), 123 * MiB);
  CHECK_EQ_U64(emlx_set_cache_limit(cl), 123 * MiB);
  CHECK_EQ_U64(emlx_get_cache_limit(), cl);
  CHECK_EQ_U64(emlx_set_memory_limit(ml / 2 + 7), ml);
  CHECK_EQ_U64(emlx_get_memory_limit(), ml / 2 + 7);
  CHECK_EQ_U64(emlx_set_memory_limit(ml), ml / 2 + 7);
  CHECK_EQ_U64(emlx_get_memory_limit(), ml);
}

static void test_counters_and_cache(void) {
  size_t cl = emlx_set_cache_limit((size_t)1 << 30);
  emlx_clear_cache();
  emlx_memory_stats s0 = info();
  CHECK(s0.cache_memory == 0);
  CHECK(s0.peak_memory >= s0.active_memory);

  emlx_array *a = make_f32(INT64_C(1) << 20, 0); /* 4 MiB */
  emlx_memory_stats s1 = info();
  CHECK_MSG(s1.active_memory >= s0.active_memory + 4 * MiB &&
                s1.active_memory <= s0.active_memory + 5 * MiB,
            "a 4 MiB array adds 4 MiB to active (%zu -> %zu)", s0.active_memory, s1.active_memory);
  CHECK(s1.peak_memory >= s1.active_memory);
  emlx_release(a);
  emlx_memory_stats s2 = info();
  CHECK_EQ_U64(s2.active_memory, s0.active_memory);
  CHECK_MSG(s2.cache_memory >= 4 * MiB, "the freed buffer is cached (%zu)", s2.cache_memory);
  CHECK(s2.peak_memory >= s1.active_memory);

  /* the same size again comes from the cache */
  a = make_f32(INT64_C(1) << 20, 1);
  emlx_memory_stats s3 = info();
  CHECK_MSG(s3.cache_memory + 4 * MiB <= s2.cache_memory,
            "re-allocating 4 MiB reuses the cached buffer (cache %zu -> %zu)", s2.cache_memory,
            s3.cache_memory);
  emlx_release(a);

  /* clear_cache empties it without touching active */
  emlx_clear_cache();
  emlx_memory_stats s4 = info();
  CHECK(s4.cache_memory == 0);
  CHECK_EQ_U64(s4.active_memory, s0.active_memory);

  /* lowering the cache limit evicts at once; with limit 0 nothing is kept */
  emlx_array *b1 = make_f32(INT64_C(1) << 20, 0), *b2 = make_f32(INT64_C(1) << 18, 0);
  emlx_release(b1), emlx_release(b2);
  CHECK(info().cache_memory >= 5 * MiB);
  CHECK_EQ_U64(emlx_set_cache_limit(2 * MiB), (size_t)1 << 30);
  CHECK_MSG(info().cache_memory <= 2 * MiB, "cache evicted down to its limit (%zu)",
            info().cache_memory);
  CHECK_EQ_U64(emlx_set_cache_limit(0), 2 * MiB);
  CHECK(info().cache_memory == 0);
  b1 = make_f32(INT64_C(1) << 20, 0);
  emlx_release(b1);
  CHECK_MSG(info().cache_memory == 0, "cache limit 0: freed buffers are not kept (%zu)",
            info().cache_memory);
  CHECK_EQ_U64(info().active_memory, s0.active_memory);
  emlx_set_cache_limit(cl);
}

static void test_peak(void) {
  emlx_reset_peak_memory();
  emlx_memory_stats s0 = info();
  CHECK_EQ_U64(s0.peak_memory, s0.active_memory);
  emlx_array *a = make_f32(INT64_C(1) << 21, 0); /* 8 MiB */
  emlx_array *e = emlx_exp(a);
  CHECK_OK(emlx_eval(&e, 1));
  emlx_memory_stats s1 = info();
  CHECK(s1.peak_memory >= s0.active_memory + 16 * MiB);
  CHECK(s1.peak_memory >= s1.active_memory);
  emlx_release(a), emlx_release(e);
  emlx_memory_stats s2 = info();
  CHECK_EQ_U64(s2.active_memory, s0.active_memory);
  CHECK_MSG(s2.peak_memory == s1.peak_memory, "peak kept after release (%zu vs %zu)",
            s2.peak_memory, s1.peak_memory);
  emlx_reset_peak_memory();
  CHECK_EQ_U64(info().peak_memory, info().active_memory);
}

static void test_memory_limit(void) {
  size_t ml = emlx_get_memory_limit();
  emlx_clear_cache();
  size_t base = info().active_memory;
  const int64_t n = INT64_C(1) << 18; /* 1 MiB of f32 */
  emlx_array *x = make_f32(n, -2);
  float *snap = malloc((size_t)n * 4);
  memcpy(snap, emlx_data(x), (size_t)n * 4);
  emlx_array *y = emlx_exp(x), *z = emlx_add(x, x);
  CHECK_OK(emlx_eval(&z, 1));
  emlx_array *w = emlx_multiply(z, x);
  emlx_clear_cache();

  size_t lim = info().active_memory + 64 * 1024;
  CHECK_EQ_U64(emlx_set_memory_limit(lim), ml);
  emlx_clear_error();
  emlx_array *list[2] = {y, w};
  int rc = emlx_eval(list, 2);
  const char *msg = emlx_last_error();
  CHECK_MSG(rc != 0, "eval over the memory limit fails (rc %d)", rc);
  CHECK_MSG(contains_ci(msg, "memory") || contains_ci(msg, "limit"),
            "the message says what happened: \"%s\"", msg);
  CHECK(!emlx_is_evaluated(y) && !emlx_is_evaluated(w));
  CHECK(emlx_is_evaluated(x) && emlx_is_evaluated(z));
  CHECK_MSG(memcmp(emlx_data(x), snap, (size_t)n * 4) == 0, "x intact after the failure");
  bool z_ok = true;
  const float *zd = emlx_data(z);
  for (int64_t i = 0; zd && i < n; i++)
    z_ok &= zd[i] == 2 * snap[i];
  CHECK_MSG(zd && z_ok, "z intact after the failure");
  CHECK(info().active_memory <= lim);
  /* from_blob allocates at once, so it also fails over the limit */
  CHECK_NULL_ERR(make_f32(n, 0));
  /* a second try still fails the same way; nothing leaked in between */
  size_t act = info().active_memory;
  CHECK_FAILS(emlx_eval(&y, 1));
  CHECK_EQ_U64(info().active_memory, act);

  /* cached buffers are evicted before an allocation fails */
  CHECK_EQ_U64(emlx_set_memory_limit(ml), lim);
  emlx_array *junk = make_f32(INT64_C(1) << 19, 0); /* 2 MiB */
  emlx_release(junk);
  size_t cache_before = info().cache_memory;
  CHECK(cache_before >= 2 * MiB);
  emlx_set_memory_limit(info().active_memory + n * 4 + 256 * 1024);
  CHECK_MSG(emlx_eval(&y, 1) == 0, "eval fits once the cache is evicted");
  CHECK_MSG(info().cache_memory < cache_before, "cache evicted (%zu -> %zu)", cache_before,
            info().cache_memory);
  emlx_set_memory_limit(ml);

  /* lifted limit: the failed array evaluates now */
  CHECK_OK(emlx_eval(&w, 1));
  double *gy = tu_read(y), *gw = tu_read(w);
  if (gy && gw) {
    double *ry = malloc((size_t)n * sizeof(double)), *rw = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
      ry[i] = exp((double)snap[i]);
      rw[i] = 2.0 * (double)snap[i] * (double)snap[i];
    }
    tu_check_values(gy, ry, n, EMLX_FLOAT32, 2, "exp after the limit was lifted");
    tu_check_values(gw, rw, n, EMLX_FLOAT32, 0.5, "z * x after the limit was lifted");
    free(ry), free(rw);
  }
  free(gy), free(gw), free(snap);
  emlx_release(x), emlx_release(y), emlx_release(z), emlx_release(w);
  CHECK_MSG(info().active_memory == base, "active back to %zu (is %zu)", base,
            info().active_memory);
  CHECK_EQ_U64(emlx_get_memory_limit(), ml);
}

/* An allocation far beyond the machine fails as an error, not an OOM kill. */
static void test_impossible(void) {
  int64_t s[1] = {INT64_C(1) << 40}; /* 4 TiB of f32 */
  if (emlx_get_memory_limit() >= (size_t)1 << 42) {
    fprintf(stderr, "memory limit >= 4 TiB: skipping the impossible allocation\n");
    return;
  }
  size_t before = info().active_memory;
  emlx_array *z = emlx_zeros(s, 1, EMLX_FLOAT32, EMLX_CPU);
  /* Ops are lazy (ops.h): the array builds, and the failure comes at eval. */
  if (CHECK_MSG(z != NULL, "emlx_zeros of 4 TiB builds a lazy array")) {
    emlx_array *e = emlx_exp(z);
    CHECK_NOT_NULL(e);
    CHECK_FAILS(emlx_eval(&e, 1));
    CHECK(e && !emlx_is_evaluated(e));
    emlx_release(e);
  }
  emlx_release(z);
  CHECK_EQ_U64(info().active_memory, before);
}

/* A cached buffer of the right size does not let active memory pass the
 * limit: the allocation is refused and the cache keeps the buffer. */
static void test_limit_with_cached_buffer(void) {
  size_t ml = emlx_get_memory_limit();
  emlx_clear_cache();
  int64_t n = INT64_C(1) << 20; /* 4 MiB */
  emlx_array *junk = make_f32(n, 0);
  CHECK_OK(emlx_eval(&junk, 1));
  emlx_release(junk);
  size_t cached = info().cache_memory;
  CHECK_MSG(cached >= 4 * MiB, "the 4 MiB buffer is cached (%zu bytes)", cached);

  emlx_array *x = make_f32(1, 1.0f);
  emlx_array *y = emlx_broadcast_to(x, &n, 1);
  emlx_array *z = y ? emlx_add(y, y) : NULL;
  CHECK(z != NULL);
  emlx_set_memory_limit(info().active_memory + MiB);
  emlx_clear_error();
  CHECK_MSG(z && emlx_eval(&z, 1) != 0, "a 4 MiB eval 1 MiB under the limit fails");
  CHECK_MSG(contains_ci(emlx_last_error(), "memory"), "the message says why: \"%s\"",
            emlx_last_error());
  CHECK_MSG(info().cache_memory == cached, "the cache is left as it was (%zu -> %zu)", cached,
            info().cache_memory);
  emlx_set_memory_limit(ml);
  CHECK_OK(emlx_eval(&z, 1));
  const float *d = z ? emlx_data(z) : NULL;
  CHECK(d && d[0] == 2.0f && d[n - 1] == 2.0f);
  emlx_release(z);
  emlx_release(y);
  emlx_release(x);
}

int main(void) {
  size_t start = info().active_memory;
  test_limits_roundtrip();
  test_counters_and_cache();
  test_peak();
  test_memory_limit();
  test_limit_with_cached_buffer();
  test_impossible();
  emlx_clear_cache();
  CHECK_MSG(info().active_memory == start, "active memory back to the start (%zu vs %zu)",
            info().active_memory, start);
  CHECK(info().cache_memory == 0);
  return tu_finish();
}
