/* test_math_f32_libm.c — float32 exp, sin and cos are the C library's
 * double result rounded once, (float)f((double)x), bit for bit: what
 * Nx.BinaryBackend computes for f32 (math_cr_body.h). Run at every SIMD
 * level (CTest registers the program once per level).
 *
 * The sample, per function: every f32 in runs of consecutive bit patterns
 * around 0 (subnormals of both signs), 1, 2^-12, the overflow and
 * underflow thresholds of exp and the subnormal results below them, the
 * multiples k pi/2 of sin and cos (k = 1..64 and 32 k up to 2^20, where
 * the fast reduction stops, and that bound itself), 2^22 random bit
 * patterns (every exponent, inf and NaN included), 2^20 uniform draws over
 * exp's non-trivial range [-104, 89] and 2^20 log-uniform magnitudes in
 * [2^-30, 2^21] (sin's and cos's). Through the standalone
 * op on a contiguous array, on a strided view (every second element) and
 * inside a fused chain (f(x * 1)).
 *
 * Mismatches allowed: none. The engine takes libm's own value wherever the
 * double it computed is within MCR_BAND units of its last place of an f32
 * rounding boundary (math_cr_body.h), so even
 * where libm's double rounds to f32 differently from the exact value (a
 * double-rounding hard case) the results agree; a hard-case count on this
 * sample is printed for the record (lanes that took libm's path because of
 * the boundary band, which the ulp error of the double result decides). NaN
 * results compare as NaN (payloads are not part of the contract). */
#include <math.h>
#include <string.h>

#include "test_util.h"

typedef struct fcase {
  const char *name;
  emlx_array *(*fn)(emlx_array *);
  double (*ref)(double);
} fcase;

static double r_exp(double x) { return exp(x); }
static double r_sin(double x) { return sin(x); }
static double r_cos(double x) { return cos(x); }

static const fcase cases[] = {
    {"exp", emlx_exp, r_exp},
    {"sin", emlx_sin, r_sin},
    {"cos", emlx_cos, r_cos},
};

#define RUN 2048          /* consecutive f32 on each side of an anchor */
#define NRANDOM (1 << 22) /* random bit patterns */
#define NDENSE (1 << 20)  /* uniform and log-uniform draws, each */

typedef struct sample {
  float *x;
  int64_t n, cap;
} sample;

static void push(sample *s, float v) {
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 1 << 16;
    s->x = realloc(s->x, (size_t)s->cap * sizeof *s->x);
  }
  s->x[s->n++] = v;
}
/* The RUN f32 below a and the RUN from a up, for a and -a. */
static void push_around(sample *s, float a) {
  for (int sign = 0; sign < 2; sign++) {
    uint32_t u = tu_f32_bits(sign ? -a : a);
    uint32_t mag = u & 0x7FFFFFFFu, sb = u & 0x80000000u;
    for (int64_t d = -RUN; d < RUN; d++) {
      int64_t m = (int64_t)mag + d;
      if (m >= 0 && m <= 0x7FFFFFFF)
        push(s, tu_bits_f32(sb | (uint32_t)m));
    }
  }
}

static sample make_sample(void) {
  sample s = {0};
  static const float anchors[] = {
      0.0f,
      1.0f,
      0x1p-12f,
      0x1p-126f,
      88.72283935546875f,  /* exp: last finite f32 result */
      -87.33654022216797f, /* exp: results turn subnormal */
      -103.97207641601562f /* exp: last non-zero result */
  };
  for (size_t i = 0; i < sizeof anchors / sizeof anchors[0]; i++)
    push_around(&s, anchors[i]);
  for (int k = 1; k <= 64; k++)
    push_around(&s, (float)(k * M_PI_2));
  for (int j = 1; j <= 32; j++) /* k = 2^20 j / 32 * (2 / pi): up to |x| = 2^20 */
    push_around(&s, (float)(rint(j * (0x1p20 / 32) / M_PI_2) * M_PI_2));
  push_around(&s, 0x1p20f);
  tu_rng r = {0xf32cafe5u};
  for (int64_t i = 0; i < NRANDOM; i++)
    push(&s, tu_bits_f32((uint32_t)tu_next(&r)));
  /* Where the functions are neither flat nor saturated (most random bit
   * patterns are not): uniform over exp's finite, non-zero range, and
   * log-uniform magnitudes up to the end of sin's and cos's fast path. */
  for (int64_t i = 0; i < NDENSE; i++) {
    push(&s, (float)tu_uniform(&r, -104.0, 89.0));
    double m = exp2(tu_uniform(&r, -30.0, 21.0));
    push(&s, (float)(i % 2 ? m : -m));
  }
  return s;
}

static emlx_array *f32_array(const float *x, int64_t n) {
  return emlx_from_blob(x, EMLX_FLOAT32, &n, 1, EMLX_CPU);
}

/* got[i] == want[i * wstride], libm's (float)ref((double)x[i * wstride]), bit for
 * bit (NaN as NaN), for i < n; reports the count and the first difference. */
static void check_exact(const fcase *c, const char *how, const float *x, const float *want,
                        int64_t wstride, const float *got, int64_t n) {
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < n; i++) {
    float w = want[i * wstride];
    bool ok = isnan(w) ? isnan(got[i]) : tu_f32_bits(got[i]) == tu_f32_bits(w);
    if (!ok) {
      if (first < 0)
        first = i;
      bad++;
    }
  }
  if (first >= 0)
    CHECK_MSG(false,
              "%s f32 %s: %lld of %lld differ from (float)%s((double)x), first x = %a: %a, "
              "libm %a",
              c->name, how, (long long)bad, (long long)n, c->name, (double)x[first * wstride],
              (double)got[first], (double)want[first * wstride]);
  else
    CHECK_MSG(true, "%s f32 %s: %lld inputs", c->name, how, (long long)n);
}

static float *read_f32(emlx_array *a) {
  return (float *)tu_read_raw(a); /* NULL (a failed check) on error */
}

/* Inputs whose libm double lies within 2^-45 (relative) of an f32 rounding
 * boundary: where a double result of the engine's accuracy could round the
 * other way, so the engine takes libm's value. */
static int64_t near_boundary(const fcase *c, const float *x, int64_t n) {
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) {
    double y = c->ref((double)x[i]);
    if (isfinite(y) && (float)(y - y * 0x1p-45) != (float)(y + y * 0x1p-45))
      k++;
  }
  return k;
}

static void test_bit_exact(const sample *s) {
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const fcase *c = &cases[k];
    emlx_array *a = f32_array(s->x, s->n);
    float *want = malloc((size_t)s->n * sizeof *want);
    for (int64_t i = 0; i < s->n; i++)
      want[i] = (float)c->ref((double)s->x[i]);

    emlx_array *r = c->fn(a);
    float *got = read_f32(r);
    if (got)
      check_exact(c, "contiguous", s->x, want, 1, got, s->n);
    free(got);
    emlx_release(r);

    /* strided: every second element, gathered into tiles */
    int64_t start = 1, stop = s->n, stride = 2, m = s->n / 2;
    emlx_array *v = emlx_slice(a, &start, &stop, &stride, 1);
    r = c->fn(v);
    got = read_f32(r);
    if (got)
      check_exact(c, "strided", s->x + 1, want + 1, 2, got, m);
    free(got);
    emlx_release(r);
    emlx_release(v);

    /* fused: f(x * 1) runs in the fused interpreter (x * 1 is x, -0 and
     * NaN included) */
    emlx_array *one = emlx_full(NULL, 0, 1.0, EMLX_FLOAT32, EMLX_CPU);
    emlx_array *t = emlx_multiply(a, one);
    r = c->fn(t);
    got = read_f32(r);
    if (got)
      check_exact(c, "fused", s->x, want, 1, got, s->n);
    free(got);
    emlx_release(r);
    emlx_release(t);
    emlx_release(one);

    printf("# %s: %lld of %lld sample inputs have libm's double within 2^-45 of an f32 "
           "rounding boundary\n",
           c->name, (long long)near_boundary(c, s->x, s->n), (long long)s->n);
    free(want);
    emlx_release(a);
  }
}

/* Short arrays: every length up to three vectors of the widest level, so
 * the tails (shorter than two vectors) are covered at each offset. */
static void test_short_lengths(const sample *s) {
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const fcase *c = &cases[k];
    int64_t bad = 0;
    for (int64_t n = 1; n <= 48; n++) {
      const float *x = s->x + 977 * n; /* somewhere in the sample */
      emlx_array *a = f32_array(x, n);
      emlx_array *r = c->fn(a);
      float *got = read_f32(r);
      for (int64_t i = 0; got && i < n; i++) {
        float want = (float)c->ref((double)x[i]);
        bad += isnan(want) ? !isnan(got[i]) : tu_f32_bits(got[i]) != tu_f32_bits(want);
      }
      bad += got == NULL;
      free(got);
      emlx_release(r);
      emlx_release(a);
    }
    CHECK_MSG(bad == 0, "%s f32 lengths 1..48: %lld differ from libm", c->name, (long long)bad);
  }
}

int main(void) {
  sample s = make_sample();
  test_bit_exact(&s);
  test_short_lengths(&s);
  free(s.x);
  return tu_finish();
}
