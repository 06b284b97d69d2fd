/* test_bits.c — count_leading_zeros and population_count (emlx/bits.h)
 * against a bit-by-bit reference written here, on every integer dtype, with
 * edge values (0, -1 / all ones, min, max, powers of two) and random bits;
 * contiguous, strided, broadcast, 0-d and empty inputs; long inputs that run
 * the vector loops with tails; fused chains; and the dtype errors. Runs at
 * every SIMD level (tu_run_isa_variants). */
#include "test_util.h"

static const emlx_dtype int_dtypes[] = {EMLX_UINT8, EMLX_UINT16, EMLX_UINT32, EMLX_UINT64,
                                        EMLX_INT8,  EMLX_INT16,  EMLX_INT32,  EMLX_INT64};

/* The reference: walk the bits of the width from the top. */
static uint64_t ref_clz(uint64_t v, int bits) {
  int n = 0;
  for (int b = bits - 1; b >= 0 && !((v >> b) & 1); b--)
    n++;
  return (uint64_t)n;
}
static uint64_t ref_pop(uint64_t v, int bits) {
  uint64_t n = 0;
  for (int b = 0; b < bits; b++)
    n += (v >> b) & 1;
  return n;
}

static uint64_t get_bits(const unsigned char *p, size_t esize) {
  uint64_t v = 0;
  for (size_t k = 0; k < esize && k < 8; k++) /* little-endian */
    v |= (uint64_t)p[k] << (8 * k);
  return v;
}

static emlx_array *from_bits(emlx_dtype d, const uint64_t *vals, const int64_t *shape, int ndim) {
  size_t es = emlx_dtype_size(d);
  int64_t n = tu_numel(shape, ndim);
  unsigned char *buf = calloc((size_t)(n ? n : 1), es);
  for (int64_t i = 0; i < n; i++)
    memcpy(buf + (size_t)i * es, &vals[i], es);
  emlx_array *a = emlx_from_blob(buf, d, shape, ndim, EMLX_CPU);
  free(buf);
  return a;
}

typedef emlx_array *(*bit_op)(emlx_array *);

/* Checks op(a) == ref over the n values `in` (the elements of a in row-major order). */
static void check_op(const char *what, bit_op op, bool clz, emlx_array *a, const uint64_t *in,
                     int64_t n) {
  emlx_dtype d = emlx_array_dtype(a);
  size_t es = emlx_dtype_size(d);
  int bits = (int)es * 8;
  uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  emlx_array *r = op(a);
  if (!CHECK_MSG(r != NULL, "%s %s: op returns an array", what, tu_dname(d)))
    return;
  CHECK_MSG(emlx_array_dtype(r) == d, "%s %s: output keeps the dtype", what, tu_dname(d));
  CHECK_EQ_I64(emlx_size(r), n);
  unsigned char *raw = tu_read_raw(r);
  if (raw) {
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < n; i++) {
      uint64_t v = in[i] & mask;
      uint64_t want = clz ? ref_clz(v, bits) : ref_pop(v, bits);
      if (get_bits(raw + (size_t)i * es, es) != want) {
        if (first < 0)
          first = i;
        bad++;
      }
    }
    CHECK_MSG(bad == 0, "%s %s %s: %lld of %lld wrong (first at %lld, input 0x%llx)", what,
              clz ? "clz" : "popcount", tu_dname(d), (long long)bad, (long long)n, (long long)first,
              first >= 0 ? (unsigned long long)(in[first] & mask) : 0ull);
  }
  free(raw);
  emlx_release(r);
}

static void check_both(const char *what, emlx_array *a, const uint64_t *in, int64_t n) {
  check_op(what, emlx_count_leading_zeros, true, a, in, n);
  check_op(what, emlx_population_count, false, a, in, n);
}

/* Edge values of a width: 0, 1, all ones (-1), min, max, each power of two
 * and each power of two minus one, then random bits. */
static int64_t edge_values(int bits, uint64_t *out, int64_t n, tu_rng *rng) {
  uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  int64_t k = 0;
  out[k++] = 0;
  out[k++] = 1;
  out[k++] = mask;               /* -1 */
  out[k++] = 1ull << (bits - 1); /* signed min */
  out[k++] = mask >> 1;          /* signed max */
  for (int b = 0; b < bits; b++) {
    out[k++] = 1ull << b;
    out[k++] = (1ull << b) - 1;
    out[k++] = mask << b & mask; /* negative powers of two */
  }
  while (k < n)
    out[k++] = tu_next(rng) >> (tu_next(rng) % 64); /* varied leading zeros */
  return k;
}

static void test_values(void) {
  tu_rng rng = {42};
  for (size_t t = 0; t < sizeof int_dtypes / sizeof int_dtypes[0]; t++) {
    emlx_dtype d = int_dtypes[t];
    int bits = (int)emlx_dtype_size(d) * 8;
    /* 1000 values: the edges, then random; odd sizes exercise vector tails. */
    int64_t sizes[] = {1000, 7, 64 + 3, 100003};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      int64_t n = sizes[s];
      uint64_t *vals = malloc((size_t)(n + 3 * 64 + 8) * sizeof *vals);
      edge_values(bits, vals, n + 3 * 64 + 8, &rng);
      emlx_array *a = from_bits(d, vals, &n, 1);
      check_both("contiguous", a, vals, n);
      emlx_release(a);
      free(vals);
    }
  }
}

/* Exact figures from Nx's documentation (Nx.count_leading_zeros and
 * Nx.population_count examples), independent of the bit-loop reference. */
static void test_nx_examples(void) {
  int64_t n = 4;
  uint64_t v32[] = {0, 0xF, 0xFF, 0xFFFF};
  emlx_array *a = from_bits(EMLX_INT32, v32, &n, 1), *r = emlx_count_leading_zeros(a);
  double *got = tu_read(r);
  double want[] = {32, 28, 24, 16};
  CHECK(got && tu_check_values_at(got, want, 4, EMLX_INT32, 0, "clz s32", __FILE__, __LINE__));
  free(got);
  emlx_release(r);
  emlx_release(a);
  int64_t m = 7;
  uint64_t v8[] = {0, 1, 126, 127, (uint64_t)-1, (uint64_t)-127, (uint64_t)-128};
  a = from_bits(EMLX_INT8, v8, &m, 1);
  r = emlx_population_count(a);
  got = tu_read(r);
  double want8[] = {0, 1, 6, 7, 8, 2, 1};
  CHECK(got && tu_check_values_at(got, want8, 7, EMLX_INT8, 0, "popcount s8", __FILE__, __LINE__));
  free(got);
  emlx_release(r);
  emlx_release(a);
  /* s32 -1 has no leading zeros; -128 has 25 set bits. */
  emlx_array *s = emlx_scalar_tensor_int(-1, EMLX_INT32, EMLX_CPU);
  r = emlx_count_leading_zeros(s);
  got = tu_read(r);
  CHECK(got && got[0] == 0.0);
  free(got);
  emlx_release(r);
  emlx_release(s);
  s = emlx_scalar_tensor_int(-128, EMLX_INT32, EMLX_CPU);
  r = emlx_population_count(s);
  got = tu_read(r);
  CHECK(got && got[0] == 25.0);
  free(got);
  emlx_release(r);
  emlx_release(s);
}

static void test_layouts(void) {
  tu_rng rng = {7};
  for (size_t t = 0; t < sizeof int_dtypes / sizeof int_dtypes[0]; t++) {
    emlx_dtype d = int_dtypes[t];
    int bits = (int)emlx_dtype_size(d) * 8;
    int64_t shape[2] = {37, 41}, n = 37 * 41;
    uint64_t *vals = malloc((size_t)(n + 3 * 64 + 8) * sizeof *vals);
    edge_values(bits, vals, n + 3 * 64 + 8, &rng);
    emlx_array *a = from_bits(d, vals, shape, 2);

    /* transposed: element (i, j) of the result is vals[j * 41 + i] */
    int axes[2] = {1, 0};
    emlx_array *tr = emlx_transpose(a, axes, 2);
    uint64_t *tv = malloc((size_t)n * sizeof *tv);
    for (int64_t i = 0; i < 41; i++)
      for (int64_t j = 0; j < 37; j++)
        tv[i * 37 + j] = vals[j * 41 + i];
    check_both("transposed", tr, tv, n);
    emlx_release(tr);

    /* sliced with steps: rows 1, 4, ..., columns 2, 5, ... */
    int64_t start[2] = {1, 2}, stop[2] = {37, 41}, step[2] = {3, 3};
    emlx_array *sl = emlx_slice(a, start, stop, step, 2);
    int64_t k = 0;
    for (int64_t i = 1; i < 37; i += 3)
      for (int64_t j = 2; j < 41; j += 3)
        tv[k++] = vals[i * 41 + j];
    check_both("sliced", sl, tv, k);
    emlx_release(sl);

    /* broadcast: one row of 41 to 5 x 41 */
    int64_t row = 41, bshape[2] = {5, 41};
    emlx_array *r1 = from_bits(d, vals, &row, 1), *br = emlx_broadcast_to(r1, bshape, 2);
    for (int64_t i = 0; i < 5 * 41; i++)
      tv[i] = vals[i % 41];
    check_both("broadcast", br, tv, 5 * 41);
    emlx_release(br);
    emlx_release(r1);

    /* 0-d and empty */
    emlx_array *z = from_bits(d, &vals[2], NULL, 0);
    check_both("0-d", z, &vals[2], 1);
    emlx_release(z);
    int64_t eshape[2] = {3, 0};
    emlx_array *e = from_bits(d, vals, eshape, 2);
    check_both("empty", e, vals, 0);
    emlx_release(e);

    emlx_release(a);
    free(tv);
    free(vals);
  }
}

/* popcount(a ^ b) + clz(a): the chain fuses into one region (the fusion
 * counters move) and gives the reference's values. */
static void test_fused(void) {
  tu_rng rng = {99};
  int64_t n = 5000;
  uint64_t *va = malloc((size_t)n * sizeof *va), *vb = malloc((size_t)n * sizeof *vb);
  for (int64_t i = 0; i < n; i++) {
    va[i] = tu_next(&rng) >> (tu_next(&rng) % 32);
    vb[i] = tu_next(&rng);
  }
  emlx_array *a = from_bits(EMLX_UINT32, va, &n, 1), *b = from_bits(EMLX_UINT32, vb, &n, 1);
  emlx_fusion_stats before = emlx_fusion_stats_get();
  emlx_array *x = emlx_bitwise_xor(a, b), *p = emlx_population_count(x),
             *c = emlx_count_leading_zeros(a), *s = emlx_add(p, c);
  unsigned char *raw = tu_read_raw(s);
  emlx_fusion_stats after = emlx_fusion_stats_get();
  if (emlx_fusion_enabled())
    CHECK_MSG(after.fused_ops >= before.fused_ops + 3, "the bit ops fused (%llu -> %llu ops)",
              (unsigned long long)before.fused_ops, (unsigned long long)after.fused_ops);
  if (raw) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
      uint32_t got;
      memcpy(&got, raw + 4 * i, 4);
      uint64_t want = ref_pop((va[i] ^ vb[i]) & 0xFFFFFFFFu, 32) + ref_clz(va[i] & 0xFFFFFFFFu, 32);
      bad += got != want;
    }
    CHECK_MSG(bad == 0, "fused popcount(a ^ b) + clz(a): %lld wrong", (long long)bad);
  }
  free(raw);
  emlx_release(s);
  emlx_release(c);
  emlx_release(p);
  emlx_release(x);
  emlx_release(b);
  emlx_release(a);
  free(va);
  free(vb);
}

/* A compiled program: clz(popcount(x) ^ x) replayed on two inputs. */
static int trace_bits(void *ctx, emlx_array *const *in, size_t nin, emlx_array **out, size_t nout) {
  (void)ctx;
  (void)nin;
  (void)nout;
  emlx_array *p = emlx_population_count(in[0]), *x = emlx_bitwise_xor(p, in[0]);
  out[0] = emlx_count_leading_zeros(x);
  emlx_release(x);
  emlx_release(p);
  return out[0] ? 0 : -1;
}

static void test_compiled(void) {
  int64_t n = 777;
  emlx_template tpl = {EMLX_INT16, 1, &n};
  emlx_program *prog = emlx_compile(trace_bits, NULL, &tpl, 1, 1);
  if (!CHECK_NOT_NULL(prog))
    return;
  tu_rng rng = {5};
  for (int run = 0; run < 2; run++) {
    uint64_t *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++)
      v[i] = tu_next(&rng) >> (tu_next(&rng) % 64);
    emlx_array *a = from_bits(EMLX_INT16, v, &n, 1), *r = NULL;
    CHECK_OK(emlx_program_run(prog, &a, 1, &r, 1));
    unsigned char *raw = r ? tu_read_raw(r) : NULL;
    if (raw) {
      int64_t bad = 0;
      for (int64_t i = 0; i < n; i++) {
        uint64_t x = v[i] & 0xFFFF;
        uint64_t want = ref_clz((ref_pop(x, 16) ^ x) & 0xFFFF, 16);
        bad += get_bits(raw + 2 * i, 2) != want;
      }
      CHECK_MSG(bad == 0, "compiled clz(popcount(x) ^ x), run %d: %lld wrong", run, (long long)bad);
    }
    free(raw);
    emlx_release(r);
    emlx_release(a);
    free(v);
  }
  emlx_program_release(prog);
}

static void test_errors(void) {
  const emlx_dtype bad[] = {EMLX_BOOL,    EMLX_FLOAT16, EMLX_BFLOAT16,
                            EMLX_FLOAT32, EMLX_FLOAT64, EMLX_COMPLEX64};
  for (size_t t = 0; t < sizeof bad / sizeof bad[0]; t++) {
    int64_t n = 3;
    double v[3] = {0, 1, 2};
    emlx_array *a = tu_make1(bad[t], n, v);
    CHECK_NULL_ERR(emlx_count_leading_zeros(a));
    CHECK_NULL_ERR(emlx_population_count(a));
    emlx_release(a);
  }
  CHECK_NULL_ERR(emlx_count_leading_zeros(NULL));
  CHECK_NULL_ERR(emlx_population_count(NULL));
  /* the message names the op and the dtype */
  double v = 1.0;
  emlx_array *f = tu_make1(EMLX_FLOAT32, 1, &v);
  emlx_clear_error();
  emlx_array *r = emlx_count_leading_zeros(f);
  CHECK(r == NULL && strstr(emlx_last_error(), "count_leading_zeros") &&
        strstr(emlx_last_error(), "float32"));
  emlx_release(r);
  emlx_release(f);
}

int main(void) {
  tu_run_isa_variants();
  test_values();
  test_nx_examples();
  test_layouts();
  test_fused();
  test_compiled();
  test_errors();
  return tu_finish();
}
