/* test_dtype.c — dtype facts (sizes, names, classes), MLX's promotion table
 * (all 15 x 15 pairs: MLX's 14 x 14, measured, and the complex128 row and
 * column, NumPy's and JAX's: c128 above c64 and f64), and the bit-exact f16/bf16 conversions: exhaustive
 * round trips, round-to-nearest-even at every tie, NaN/Inf/overflow/underflow,
 * the same conversions through astype on arrays, and complex64 as a pair of
 * f32. References are the independent decoders/rounders of test_util.h. */
#include "test_util.h"

enum {
  B = EMLX_BOOL,
  U8 = EMLX_UINT8,
  U16 = EMLX_UINT16,
  U32 = EMLX_UINT32,
  U64 = EMLX_UINT64,
  S8 = EMLX_INT8,
  S16 = EMLX_INT16,
  S32 = EMLX_INT32,
  S64 = EMLX_INT64,
  F16 = EMLX_FLOAT16,
  F32 = EMLX_FLOAT32,
  F64 = EMLX_FLOAT64,
  BF = EMLX_BFLOAT16,
  C64 = EMLX_COMPLEX64,
  C128 = EMLX_COMPLEX128
};

/* Measured with mlx 0.32: row a, column b, both in enum order; complex128
 * (not in MLX) is NumPy's and JAX's: c64 with f64 gives c128 (where MLX,
 * without c128, gives c64), c128 with anything gives c128
 * (np.result_type(np.complex64, np.float64) == complex128). */
static const int promo[15][15] = {
    /* bool */ {B, U8, U16, U32, U64, S8, S16, S32, S64, F16, F32, F64, BF, C64, C128},
    /* u8   */ {U8, U8, U16, U32, U64, S16, S16, S32, S64, F16, F32, F64, BF, C64, C128},
    /* u16  */ {U16, U16, U16, U32, U64, S32, S32, S32, S64, F16, F32, F64, BF, C64, C128},
    /* u32  */ {U32, U32, U32, U32, U64, S64, S64, S64, S64, F16, F32, F64, BF, C64, C128},
    /* u64  */ {U64, U64, U64, U64, U64, F32, F32, F32, F32, F16, F32, F64, BF, C64, C128},
    /* s8   */ {S8, S16, S32, S64, F32, S8, S16, S32, S64, F16, F32, F64, BF, C64, C128},
    /* s16  */ {S16, S16, S32, S64, F32, S16, S16, S32, S64, F16, F32, F64, BF, C64, C128},
    /* s32  */ {S32, S32, S32, S64, F32, S32, S32, S32, S64, F16, F32, F64, BF, C64, C128},
    /* s64  */ {S64, S64, S64, S64, F32, S64, S64, S64, S64, F16, F32, F64, BF, C64, C128},
    /* f16  */ {F16, F16, F16, F16, F16, F16, F16, F16, F16, F16, F32, F64, F32, C64, C128},
    /* f32  */ {F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F64, F32, C64, C128},
    /* f64  */ {F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, C128, C128},
    /* bf16 */ {BF, BF, BF, BF, BF, BF, BF, BF, BF, F32, F32, F64, BF, C64, C128},
    /* c64  */ {C64, C64, C64, C64, C64, C64, C64, C64, C64, C64, C64, C128, C64, C64, C128},
    /* c128 */ {C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128,
                C128},
};

static void test_facts(void) {
  static const size_t sizes[15] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 2, 8, 16};
  static const char *names[15] = {"bool",    "uint8",   "uint16",   "uint32",    "uint64",
                                  "int8",    "int16",   "int32",    "int64",     "float16",
                                  "float32", "float64", "bfloat16", "complex64", "complex128"};
  static const int parts[15] = {B, U8, U16, U32, U64, S8,  S16, S32,
                                       S64, F16, F32, F64, BF, F32, F64};
  CHECK_EQ_I64(EMLX_DTYPE_COUNT, 15);
  for (int d = 0; d < 15; d++) {
    CHECK_MSG(emlx_dtype_size((emlx_dtype)d) == sizes[d], "size of %s", names[d]);
    CHECK_EQ_STR(emlx_dtype_name((emlx_dtype)d), names[d]);
    CHECK_MSG(emlx_dtype_is_valid((emlx_dtype)d), "%s is valid", names[d]);
    bool fl = d == F16 || d == F32 || d == F64 || d == BF;
    bool in = d >= U8 && d <= S64;
    CHECK_MSG(emlx_dtype_is_float((emlx_dtype)d) == fl, "is_float(%s)", names[d]);
    CHECK_MSG(emlx_dtype_is_integer((emlx_dtype)d) == in, "is_integer(%s)", names[d]);
    bool cx = d == C64 || d == C128;
    CHECK_MSG(emlx_dtype_is_complex((emlx_dtype)d) == cx, "is_complex(%s)", names[d]);
    CHECK_MSG((int)emlx_dtype_real_part((emlx_dtype)d) == parts[d], "real_part(%s)", names[d]);
    if (cx) {
      CHECK_MSG(emlx_dtype_is_signed((emlx_dtype)d), "is_signed(%s)", names[d]);
    } else {
      bool sg = (d >= S8 && d <= S64) || fl;
      CHECK_MSG(emlx_dtype_is_signed((emlx_dtype)d) == sg, "is_signed(%s)", names[d]);
    }
  }
  CHECK(!emlx_dtype_is_valid(EMLX_DTYPE_COUNT));
  CHECK(!emlx_dtype_is_valid((emlx_dtype)-1));
  CHECK(!emlx_dtype_is_valid((emlx_dtype)1000));
  CHECK(emlx_dtype_size(EMLX_DTYPE_COUNT) == 0);
  CHECK(emlx_dtype_size((emlx_dtype)-1) == 0);
  CHECK_EQ_STR(emlx_dtype_name(EMLX_DTYPE_COUNT), "invalid");
  CHECK_EQ_STR(emlx_dtype_name((emlx_dtype)-3), "invalid");
  CHECK_EQ_STR(emlx_device_name(EMLX_CPU), "cpu");
  CHECK_EQ_STR(emlx_device_name(EMLX_GPU), "gpu");
}

/* The table through emlx_promote_types, and through add/subtract/multiply on
 * real arrays (result dtype and values). */
static void test_promotion(void) {
  int bad = 0;
  for (int a = 0; a < 15; a++)
    for (int b = 0; b < 15; b++) {
      emlx_dtype got = emlx_promote_types((emlx_dtype)a, (emlx_dtype)b);
      if ((int)got != promo[a][b]) {
        bad++;
        fprintf(stderr, "promote(%s, %s) = %s, want %s\n", tu_dname((emlx_dtype)a),
                tu_dname((emlx_dtype)b), tu_dname(got), tu_dname((emlx_dtype)promo[a][b]));
      }
    }
  CHECK_MSG(bad == 0, "promotion table: %d of 225 entries differ", bad);
  /* Symmetry is implied by the table, but check it independently. */
  bool sym = true;
  for (int a = 0; a < 15; a++)
    for (int b = 0; b < 15; b++)
      if (emlx_promote_types((emlx_dtype)a, (emlx_dtype)b) !=
          emlx_promote_types((emlx_dtype)b, (emlx_dtype)a))
        sym = false;
  CHECK(sym);

  static const double va[4] = {0, 1, 2, 3}, vb[4] = {1, 1, 0, 2};
  int64_t n = 4;
  for (int a = 0; a < 15; a++)
    for (int b = 0; b < 15; b++) {
      emlx_array *x = tu_make1((emlx_dtype)a, n, va), *y = tu_make1((emlx_dtype)b, n, vb);
      emlx_array *s = emlx_add(x, y), *m = emlx_multiply(x, y), *d = emlx_subtract(x, y);
      double rs[4], rm[4], rd[4];
      for (int i = 0; i < 4; i++) {
        double p = tu_quant((emlx_dtype)a, va[i]), q = tu_quant((emlx_dtype)b, vb[i]);
        rs[i] = p + q;
        rm[i] = p * q;
        rd[i] = p - q;
        /* unsigned results wrap; bool results are "!= 0" */
        if (promo[a][b] == U8)
          rd[i] = (double)(uint8_t)(int)rd[i];
        if (promo[a][b] == U16)
          rd[i] = (double)(uint16_t)(int)rd[i];
        if (promo[a][b] == U32)
          rd[i] = (double)(uint32_t)(int)rd[i];
        if (promo[a][b] == U64)
          rd[i] = rd[i] < 0 ? 0x1p64 + rd[i] : rd[i];
      }
      char what[64];
      snprintf(what, sizeof what, "add(%s, %s)", tu_dname((emlx_dtype)a), tu_dname((emlx_dtype)b));
      tu_check_array(s, (emlx_dtype)promo[a][b], &n, 1, rs, 0, what);
      snprintf(what, sizeof what, "multiply(%s, %s)", tu_dname((emlx_dtype)a),
               tu_dname((emlx_dtype)b));
      tu_check_array(m, (emlx_dtype)promo[a][b], &n, 1, rm, 0, what);
      if (promo[a][b] != U64) { /* 0 - 1 in u64 is 2^64 - 1: not a double */
        snprintf(what, sizeof what, "subtract(%s, %s)", tu_dname((emlx_dtype)a),
                 tu_dname((emlx_dtype)b));
        tu_check_array(d, (emlx_dtype)promo[a][b], &n, 1, rd, 0, what);
      } else {
        CHECK(d && emlx_array_dtype(d) == EMLX_UINT64);
      }
      emlx_release(x), emlx_release(y), emlx_release(s), emlx_release(m), emlx_release(d);
    }
}

/* f16: exhaustive decode against the IEEE formula, exhaustive round trip. */
static void test_f16_exhaustive(void) {
  int bad_dec = 0, bad_rt = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    float f = emlx_f16_to_f32((uint16_t)h);
    double ref = tu_f16_decode((uint16_t)h);
    if (isnan(ref) ? !isnan(f) : ((double)f != ref || !signbit(f) != !signbit(ref))) {
      if (bad_dec++ < 5)
        fprintf(stderr, "f16_to_f32(0x%04x) = %a, want %a\n", h, (double)f, ref);
    }
    uint16_t back = emlx_f32_to_f16(f);
    if (tu_f16_is_nan((uint16_t)h) ? !tu_f16_is_nan(back) : back != h) {
      if (bad_rt++ < 5)
        fprintf(stderr, "f16 round trip 0x%04x -> 0x%04x\n", h, back);
    }
  }
  CHECK_MSG(bad_dec == 0, "f16_to_f32 exhaustive: %d wrong", bad_dec);
  CHECK_MSG(bad_rt == 0, "f16 -> f32 -> f16 exhaustive round trip: %d wrong", bad_rt);
}

static int f32_to_f16_mismatch(float x) {
  uint16_t got = emlx_f32_to_f16(x);
  if (isnan(x)) {
    if (tu_f16_is_nan(got))
      return 0;
  } else if (got == tu_round_f16((double)x)) {
    return 0;
  }
  fprintf(stderr, "f32_to_f16(%a [0x%08x]) = 0x%04x, want 0x%04x\n", (double)x, tu_f32_bits(x), got,
          tu_round_f16((double)x));
  return 1;
}

/* f32 -> f16: every tie (midpoint between neighbours), one f32 ulp either
 * side of it, every representable value and its f32 neighbours, both signs;
 * then random bit patterns, NaNs with every payload shape, and golden values. */
static void test_f32_to_f16(void) {
  int bad = 0;
  for (uint32_t p = 0; p < 0x7C00; p++) {
    double lo = tu_f16_decode((uint16_t)p),
           hi = p + 1 == 0x7C00 ? 65536.0 : tu_f16_decode((uint16_t)(p + 1));
    float mid = (float)((lo + hi) / 2); /* exact: 12 significant bits */
    float vals[6] = {mid,
                     nextafterf(mid, 0),
                     nextafterf(mid, INFINITY),
                     (float)lo,
                     nextafterf((float)lo, INFINITY),
                     nextafterf((float)lo, 0)};
    for (int k = 0; k < 6; k++)
      if (bad < 20)
        bad += f32_to_f16_mismatch(vals[k]) + f32_to_f16_mismatch(-vals[k]);
  }
  tu_rng r = {42};
  for (int i = 0; i < 1000000 && bad < 20; i++)
    bad += f32_to_f16_mismatch(tu_bits_f32((uint32_t)tu_next(&r)));
  /* the whole f32 subnormal and tiny-normal range maps to +-0 or the first subnormals */
  for (uint32_t u = 0; u < 0x34000000u && bad < 20; u += 0x00012345u) {
    bad += f32_to_f16_mismatch(tu_bits_f32(u)) + f32_to_f16_mismatch(tu_bits_f32(u | 0x80000000u));
  }
  static const uint32_t nans[] = {0x7F800001u, 0x7FC00000u, 0x7FFFFFFFu, 0xFF800001u,
                                  0xFFC00000u, 0xFFFFFFFFu, 0x7F802000u, 0x7FBFFFFFu};
  for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++)
    bad += f32_to_f16_mismatch(tu_bits_f32(nans[i]));
  CHECK_MSG(bad == 0, "f32_to_f16 against the nearest-even reference: %d wrong", bad);

  /* Golden values (numpy.float16 agrees). */
  CHECK_EQ_U64(emlx_f32_to_f16(1.0f + 0x1p-11f), 0x3C00);     /* tie -> even (down) */
  CHECK_EQ_U64(emlx_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3C02); /* tie -> even (up) */
  CHECK_EQ_U64(emlx_f32_to_f16(1.0f + 0x1p-11f + 0x1p-23f), 0x3C01);
  CHECK_EQ_U64(emlx_f32_to_f16(65504.0f), 0x7BFF);
  CHECK_EQ_U64(emlx_f32_to_f16(65519.0f), 0x7BFF);
  CHECK_EQ_U64(emlx_f32_to_f16(65520.0f), 0x7C00); /* tie with 65536 -> inf */
  CHECK_EQ_U64(emlx_f32_to_f16(-1e6f), 0xFC00);
  CHECK_EQ_U64(emlx_f32_to_f16(INFINITY), 0x7C00);
  CHECK_EQ_U64(emlx_f32_to_f16(-INFINITY), 0xFC00);
  CHECK_EQ_U64(emlx_f32_to_f16(0x1p-25f), 0x0000); /* tie with 0 -> 0 */
  CHECK_EQ_U64(emlx_f32_to_f16(0x1p-25f * 1.0000001f), 0x0001);
  CHECK_EQ_U64(emlx_f32_to_f16(3 * 0x1p-25f), 0x0002); /* tie 1|2 -> 2 */
  CHECK_EQ_U64(emlx_f32_to_f16(-0.0f), 0x8000);
  CHECK_EQ_U64(emlx_f32_to_f16(-0x1p-30f), 0x8000);
  CHECK_EQ_U64(emlx_f32_to_f16(0x1p-14f), 0x0400);
  CHECK_EQ_U64(emlx_f32_to_f16(0x1p-14f - 0x1p-25f), 0x0400); /* tie 0x3ff|0x400 -> even */
  CHECK_EQ_U64(emlx_f32_to_f16(0.1f), 0x2E66);
}

/* bf16: exhaustive decode and round trip; f32 -> bf16 on every high half with
 * the low halves around the tie, random patterns, NaN payloads, golden values. */
static int f32_to_bf16_mismatch(float x) {
  uint16_t got = emlx_f32_to_bf16(x);
  if (isnan(x)) {
    if (tu_bf16_is_nan(got))
      return 0;
  } else if (got == tu_round_bf16((double)x)) {
    return 0;
  }
  fprintf(stderr, "f32_to_bf16(%a [0x%08x]) = 0x%04x, want 0x%04x\n", (double)x, tu_f32_bits(x),
          got, tu_round_bf16((double)x));
  return 1;
}

static void test_bf16(void) {
  int bad_dec = 0, bad_rt = 0, bad = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    float f = emlx_bf16_to_f32((uint16_t)h);
    double ref = tu_bf16_decode((uint16_t)h);
    if (isnan(ref) ? !isnan(f) : ((double)f != ref || !signbit(f) != !signbit(ref)))
      if (bad_dec++ < 5)
        fprintf(stderr, "bf16_to_f32(0x%04x) = %a, want %a\n", h, (double)f, ref);
    uint16_t back = emlx_f32_to_bf16(f);
    if (tu_bf16_is_nan((uint16_t)h) ? !tu_bf16_is_nan(back) : back != h)
      if (bad_rt++ < 5)
        fprintf(stderr, "bf16 round trip 0x%04x -> 0x%04x\n", h, back);
  }
  CHECK_MSG(bad_dec == 0, "bf16_to_f32 exhaustive: %d wrong", bad_dec);
  CHECK_MSG(bad_rt == 0, "bf16 -> f32 -> bf16 exhaustive round trip: %d wrong", bad_rt);

  static const uint32_t lows[] = {0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x4000, 0xC000};
  for (uint32_t hi = 0; hi < 65536 && bad < 20; hi++)
    for (size_t k = 0; k < sizeof lows / sizeof lows[0]; k++)
      bad += f32_to_bf16_mismatch(tu_bits_f32(hi << 16 | lows[k]));
  tu_rng r = {7};
  for (int i = 0; i < 1000000 && bad < 20; i++)
    bad += f32_to_bf16_mismatch(tu_bits_f32((uint32_t)tu_next(&r)));
  CHECK_MSG(bad == 0, "f32_to_bf16 against the nearest-even reference: %d wrong", bad);

  /* NaNs whose payload lives only in the low half must stay NaN (a naive
   * rounding bias turns 0x7F800001 into inf and 0xFFFFFFFF into -0). */
  static const uint32_t nans[] = {0x7F800001u, 0x7F807FFFu, 0x7F808000u, 0x7FFFFFFFu,
                                  0xFF800001u, 0xFFFFFFFFu, 0x7FC00000u};
  for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++)
    CHECK_MSG(tu_bf16_is_nan(emlx_f32_to_bf16(tu_bits_f32(nans[i]))),
              "bf16(NaN 0x%08x) is NaN -> 0x%04x", nans[i], emlx_f32_to_bf16(tu_bits_f32(nans[i])));
  CHECK_EQ_U64(emlx_f32_to_bf16(1.0f + 0x1p-8f), 0x3F80);     /* tie -> even (down) */
  CHECK_EQ_U64(emlx_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82); /* tie -> even (up) */
  CHECK_EQ_U64(emlx_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-23f), 0x3F81);
  CHECK_EQ_U64(emlx_f32_to_bf16(INFINITY), 0x7F80);
  CHECK_EQ_U64(emlx_f32_to_bf16(-INFINITY), 0xFF80);
  CHECK_EQ_U64(emlx_f32_to_bf16(tu_bits_f32(0x7F7F0000u)), 0x7F7F);
  CHECK_EQ_U64(emlx_f32_to_bf16(FLT_MAX), 0x7F80); /* rounds up to inf */
  CHECK_EQ_U64(emlx_f32_to_bf16(-0.0f), 0x8000);
  CHECK_EQ_U64(emlx_f32_to_bf16(tu_bits_f32(0x00008000u)), 0x0000); /* subnormal tie -> even */
  CHECK_EQ_U64(emlx_f32_to_bf16(tu_bits_f32(0x00018000u)), 0x0002);
}

/* The same conversions on arrays (astype and from_blob/to_blob), plus ints to
 * f16/bf16 and f16/bf16 to wider floats. */
static void test_array_conversions(void) {
  enum { N = 4096 };
  float *src = malloc(N * sizeof(float));
  tu_rng r = {99};
  for (int i = 0; i < N; i++) {
    switch (i % 4) {
    case 0:
      src[i] = tu_bits_f32((uint32_t)tu_next(&r));
      break;
    case 1:
      src[i] = (float)tu_uniform(&r, -70000, 70000);
      break;
    case 2: { /* an f16 tie */
      uint16_t p = (uint16_t)tu_randint(&r, 0, 0x7BFE);
      src[i] = (float)((tu_f16_decode(p) + tu_f16_decode((uint16_t)(p + 1))) / 2);
      break;
    }
    default:
      src[i] = tu_bits_f32((uint32_t)tu_randint(&r, 0, 0xFFFF) << 16 | 0x8000);
      break;
    }
  }
  src[0] = NAN, src[1] = INFINITY, src[2] = -INFINITY, src[3] = -0.0f,
  src[4] = tu_bits_f32(0x7F800001u);
  int64_t n = N;
  emlx_array *a = emlx_from_blob(src, EMLX_FLOAT32, &n, 1, EMLX_CPU);
  emlx_array *h = emlx_astype(a, EMLX_FLOAT16), *b = emlx_astype(a, EMLX_BFLOAT16);
  unsigned char *hr = tu_read_raw(h), *br = tu_read_raw(b);
  if (hr && br) {
    int bad_h = 0, bad_b = 0;
    for (int i = 0; i < N; i++) {
      uint16_t gh, gb;
      memcpy(&gh, hr + 2 * i, 2);
      memcpy(&gb, br + 2 * i, 2);
      bool okh = isnan(src[i]) ? tu_f16_is_nan(gh) : gh == tu_round_f16((double)src[i]);
      bool okb = isnan(src[i]) ? tu_bf16_is_nan(gb) : gb == tu_round_bf16((double)src[i]);
      if (!okh && bad_h++ < 5)
        fprintf(stderr, "astype f16 of %a: 0x%04x\n", (double)src[i], gh);
      if (!okb && bad_b++ < 5)
        fprintf(stderr, "astype bf16 of %a: 0x%04x\n", (double)src[i], gb);
    }
    CHECK_MSG(bad_h == 0, "astype(f32 -> f16) bit-exact: %d wrong", bad_h);
    CHECK_MSG(bad_b == 0, "astype(f32 -> bf16) bit-exact: %d wrong", bad_b);
  }
  /* back up to f32 and f64: exact */
  emlx_array *h32 = emlx_astype(h, EMLX_FLOAT32), *h64 = emlx_astype(h, EMLX_FLOAT64);
  emlx_array *b32 = emlx_astype(b, EMLX_FLOAT32), *b64 = emlx_astype(b, EMLX_FLOAT64);
  double *vh32 = tu_read(h32), *vh64 = tu_read(h64), *vb32 = tu_read(b32), *vb64 = tu_read(b64);
  if (hr && br && vh32 && vh64 && vb32 && vb64) {
    int bad = 0;
    for (int i = 0; i < N; i++) {
      uint16_t gh, gb;
      memcpy(&gh, hr + 2 * i, 2);
      memcpy(&gb, br + 2 * i, 2);
      double rh = tu_f16_decode(gh), rb = tu_bf16_decode(gb);
      if (isnan(rh) ? !(isnan(vh32[i]) && isnan(vh64[i])) : (vh32[i] != rh || vh64[i] != rh))
        bad++;
      if (isnan(rb) ? !(isnan(vb32[i]) && isnan(vb64[i])) : (vb32[i] != rb || vb64[i] != rb))
        bad++;
    }
    CHECK_MSG(bad == 0, "astype f16/bf16 -> f32/f64 exact: %d wrong", bad);
  }
  free(hr), free(br), free(vh32), free(vh64), free(vb32), free(vb64);
  emlx_release(h32), emlx_release(h64), emlx_release(b32), emlx_release(b64);
  emlx_release(a), emlx_release(h), emlx_release(b);
  free(src);

  /* integers to f16 / bf16 round to nearest even and overflow to inf */
  static const double iv[] = {2049, 2051, 65519, 65520, 70000, -2049, 257, 259, 1, 0};
  int64_t ni = 10;
  emlx_array *ia = tu_make1(EMLX_INT32, ni, iv);
  emlx_array *ih = emlx_astype(ia, EMLX_FLOAT16), *ib = emlx_astype(ia, EMLX_BFLOAT16);
  static const double want_h[] = {2048, 2052, 65504, INFINITY, INFINITY, -2048, 257, 259, 1, 0};
  static const double want_b[] = {2048, 2048, 65536, 65536, 70144, -2048, 256, 260, 1, 0};
  tu_check_array(ih, EMLX_FLOAT16, &ni, 1, want_h, 0, "astype(int32 -> f16)");
  tu_check_array(ib, EMLX_BFLOAT16, &ni, 1, want_b, 0, "astype(int32 -> bf16)");
  emlx_release(ia), emlx_release(ih), emlx_release(ib);

  /* f16 <-> bf16 directly: through the exact f32 value */
  static const double hv[] = {65504, 0x1p-24, 1.0 + 0x1p-10, -3.140625, 0.0};
  int64_t nh = 5;
  emlx_array *ha = tu_make1(EMLX_FLOAT16, nh, hv);
  emlx_array *hb = emlx_astype(ha, EMLX_BFLOAT16);
  double want_hb[5];
  for (int i = 0; i < 5; i++)
    want_hb[i] = tu_bf16_decode(tu_round_bf16(hv[i]));
  tu_check_array(hb, EMLX_BFLOAT16, &nh, 1, want_hb, 0, "astype(f16 -> bf16)");
  emlx_release(ha), emlx_release(hb);
}

/* complex64 is a pair of f32 (real, imaginary). */
static void test_complex(void) {
  float v[6] = {1.5f, -2.0f, 0.0f, 3.25f, -0.0f, 1e30f};
  int64_t n = 3;
  emlx_array *c = emlx_from_blob(v, EMLX_COMPLEX64, &n, 1, EMLX_CPU);
  CHECK_NOT_NULL(c);
  CHECK(emlx_nbytes(c) == 24);
  unsigned char *raw = tu_read_raw(c);
  CHECK(raw && memcmp(raw, v, 24) == 0);
  free(raw);
  emlx_array *re = emlx_astype(c, EMLX_FLOAT32);
  static const double want_re[] = {1.5, 0.0, -0.0};
  tu_check_array(re, EMLX_FLOAT32, &n, 1, want_re, 0, "astype(c64 -> f32) keeps the real part");
  emlx_array *r64 = emlx_astype(c, EMLX_FLOAT64);
  tu_check_array(r64, EMLX_FLOAT64, &n, 1, want_re, 0, "astype(c64 -> f64)");
  double f[3] = {2.5, -1.0, 7.0};
  emlx_array *fa = tu_make1(EMLX_FLOAT64, n, f);
  emlx_array *fc = emlx_astype(fa, EMLX_COMPLEX64);
  raw = tu_read_raw(fc);
  float want[6] = {2.5f, 0.0f, -1.0f, 0.0f, 7.0f, 0.0f};
  CHECK(raw && emlx_array_dtype(fc) == EMLX_COMPLEX64 && memcmp(raw, want, 24) == 0);
  free(raw);
  emlx_array *s = emlx_scalar_tensor_complex(-4.0f, 0.5f, EMLX_CPU);
  double item = 0;
  CHECK_OK(emlx_item_f64(s, &item));
  CHECK(item == -4.0);
  raw = tu_read_raw(s);
  float want_s[2] = {-4.0f, 0.5f};
  CHECK(raw && memcmp(raw, want_s, 8) == 0);
  free(raw);
  emlx_release(c), emlx_release(re), emlx_release(r64), emlx_release(fa), emlx_release(fc);
  emlx_release(s);
}

int main(void) {
  test_facts();
  test_promotion();
  test_f16_exhaustive();
  test_f32_to_f16();
  test_bf16();
  test_array_conversions();
  test_complex();
  return tu_finish();
}
