/* math_body_bin.h — the binary loops of the math family (part of
 * math_body.h; see there). Defines MB_TABLE_ROWS for the table. */

/* ---- floats: both operands through f32/f64 tiles --------------------------------- */
static inline void mb_run2_f32(mb_tile2_f32 f, const float *a, int64_t sa, const float *b,
                               int64_t sb, float *o, int64_t n) {
  if (sa == 1 && sb == 1) {
    f(a, b, o, n);
    return;
  }
  float ta[MF_TILE], tb[MF_TILE];
  /* A broadcast operand's tile is filled once for every piece. */
  int64_t first = bd_min64(MF_TILE, n);
  if (sa == 0)
    mb_gather_f32(a, 0, first, ta);
  if (sb == 0)
    mb_gather_f32(b, 0, first, tb);
  for (int64_t i0 = 0; i0 < n; i0 += MF_TILE) {
    int64_t len = bd_min64(MF_TILE, n - i0);
    const float *pa = a + i0 * sa, *pb = b + i0 * sb;
    if (sa != 1) {
      if (sa != 0)
        mb_gather_f32(pa, sa, len, ta);
      pa = ta;
    }
    if (sb != 1) {
      if (sb != 0)
        mb_gather_f32(pb, sb, len, tb);
      pb = tb;
    }
    f(pa, pb, o + i0, len);
  }
}
static inline void mb_run2_f64(mb_tile2_f64 f, const double *a, int64_t sa, const double *b,
                               int64_t sb, double *o, int64_t n) {
  if (sa == 1 && sb == 1) {
    f(a, b, o, n);
    return;
  }
  double ta[MF_TILE], tb[MF_TILE];
  /* A broadcast operand's tile is filled once for every piece. */
  int64_t first = bd_min64(MF_TILE, n);
  if (sa == 0)
    mb_gather_f64(a, 0, first, ta);
  if (sb == 0)
    mb_gather_f64(b, 0, first, tb);
  for (int64_t i0 = 0; i0 < n; i0 += MF_TILE) {
    int64_t len = bd_min64(MF_TILE, n - i0);
    const double *pa = a + i0 * sa, *pb = b + i0 * sb;
    if (sa != 1) {
      if (sa != 0)
        mb_gather_f64(pa, sa, len, ta);
      pa = ta;
    }
    if (sb != 1) {
      if (sb != 0)
        mb_gather_f64(pb, sb, len, tb);
      pb = tb;
    }
    f(pa, pb, o + i0, len);
  }
}
static inline void mb_run2_half(mb_tile2_f32 f, emlx_dtype dt, const uint16_t *a, int64_t sa,
                                const uint16_t *b, int64_t sb, uint16_t *o, int64_t n) {
  float ta[MF_TILE], tb[MF_TILE];
  for (int64_t i0 = 0; i0 < n; i0 += MF_TILE) {
    int64_t len = bd_min64(MF_TILE, n - i0);
    mb_load_f32(a + i0 * sa, dt, sa, len, ta);
    mb_load_f32(b + i0 * sb, dt, sb, len, tb);
    f(ta, tb, ta, len);
    mb_store_half(ta, dt, o + i0, len);
  }
}
#define MB_BIN_FLOAT(NAME, T32, T64)                                                               \
  static void NAME##_f32(const void *a, int64_t sa, const void *b, int64_t sb, void *o,            \
                         int64_t n) {                                                              \
    mb_run2_f32(T32, (const float *)a, sa, (const float *)b, sb, (float *)o, n);                   \
  }                                                                                                \
  static void NAME##_f64(const void *a, int64_t sa, const void *b, int64_t sb, void *o,            \
                         int64_t n) {                                                              \
    mb_run2_f64(T64, (const double *)a, sa, (const double *)b, sb, (double *)o, n);                \
  }                                                                                                \
  static void NAME##_f16(const void *a, int64_t sa, const void *b, int64_t sb, void *o,            \
                         int64_t n) {                                                              \
    mb_run2_half(T32, EMLX_FLOAT16, (const uint16_t *)a, sa, (const uint16_t *)b, sb,              \
                 (uint16_t *)o, n);                                                                \
  }                                                                                                \
  static void NAME##_bf16(const void *a, int64_t sa, const void *b, int64_t sb, void *o,           \
                          int64_t n) {                                                             \
    mb_run2_half(T32, EMLX_BFLOAT16, (const uint16_t *)a, sa, (const uint16_t *)b, sb,             \
                 (uint16_t *)o, n);                                                                \
  }
#define MB_TILE2_EXPR(NAME, T, EXPR)                                                               \
  static void NAME(const T *a, const T *b, T *out, int64_t n) {                                    \
    for (int64_t i = 0; i < n; i++) {                                                              \
      T x = a[i], y = b[i];                                                                        \
      out[i] = (EXPR);                                                                             \
    }                                                                                              \
  }

static inline float mb_remf(float x, float y) { /* sign of the divisor; zero takes y's sign */
  float r = fmodf(x, y);
  r = (r != 0.0f && ((r < 0.0f) != (y < 0.0f))) ? r + y : r;
  return r == 0.0f ? copysignf(0.0f, y) : r;
}
static inline double mb_rem(double x, double y) {
  double r = fmod(x, y);
  r = (r != 0.0 && ((r < 0.0) != (y < 0.0))) ? r + y : r;
  return r == 0.0 ? copysign(0.0, y) : r;
}
MB_TILE2_EXPR(t_qtrunc_f32, float, truncf(x / y))
MB_TILE2_EXPR(t_qtrunc_f64, double, trunc(x / y))
MB_TILE2_EXPR(t_qfloor_f32, float, floorf(x / y))
MB_TILE2_EXPR(t_qfloor_f64, double, floor(x / y))
MB_TILE2_EXPR(t_rtrunc_f32, float, fmodf(x, y))
MB_TILE2_EXPR(t_rtrunc_f64, double, fmod(x, y))
MB_TILE2_EXPR(t_rfloor_f32, float, mb_remf(x, y))
MB_TILE2_EXPR(t_rfloor_f64, double, mb_rem(x, y))
MB_TILE2_EXPR(t_max_f32, float, mb_maxf(x, y))
MB_TILE2_EXPR(t_max_f64, double, mb_max(x, y))
MB_TILE2_EXPR(t_min_f32, float, mb_minf(x, y))
MB_TILE2_EXPR(t_min_f64, double, mb_min(x, y))

MB_BIN_FLOAT(b_qtrunc, t_qtrunc_f32, t_qtrunc_f64)
MB_BIN_FLOAT(b_qfloor, t_qfloor_f32, t_qfloor_f64)
MB_BIN_FLOAT(b_rtrunc, t_rtrunc_f32, t_rtrunc_f64)
MB_BIN_FLOAT(b_rfloor, t_rfloor_f32, t_rfloor_f64)
MB_BIN_FLOAT(b_pow, mv_pow_f32, mv_pow_f64)
MB_BIN_FLOAT(b_atan2, mv_atan2_f32, mv_atan2_f64)
MB_BIN_FLOAT(b_max, t_max_f32, t_max_f64)
MB_BIN_FLOAT(b_min, t_min_f32, t_min_f64)

/* ---- comparisons (bool out) ----------------------------------------------------------- */
#define MB_CMP_OPS(GEN) GEN(eq, ==) GEN(ne, !=) GEN(gt, >) GEN(ge, >=)
#define MB_CMP_FLOATS(OP, CMP)                                                                     \
  MB_BIN(b_##OP##_f32, float, uint8_t, (uint8_t)(x CMP y))                                         \
  MB_BIN(b_##OP##_f64, double, uint8_t, (uint8_t)(x CMP y))                                        \
  static void b_##OP##_half(emlx_dtype dt, const uint16_t *a, int64_t sa, const uint16_t *b,       \
                            int64_t sb, uint8_t *o, int64_t n) {                                   \
    float ta[MF_TILE], tb[MF_TILE];                                                                \
    for (int64_t i0 = 0; i0 < n; i0 += MF_TILE) {                                                  \
      int64_t len = bd_min64(MF_TILE, n - i0);                                                     \
      mb_load_f32(a + i0 * sa, dt, sa, len, ta);                                                   \
      mb_load_f32(b + i0 * sb, dt, sb, len, tb);                                                   \
      for (int64_t i = 0; i < len; i++)                                                            \
        o[i0 + i] = (uint8_t)(ta[i] CMP tb[i]);                                                    \
    }                                                                                              \
  }                                                                                                \
  static void b_##OP##_f16(const void *a, int64_t sa, const void *b, int64_t sb, void *o,          \
                           int64_t n) {                                                            \
    b_##OP##_half(EMLX_FLOAT16, (const uint16_t *)a, sa, (const uint16_t *)b, sb, (uint8_t *)o,    \
                  n);                                                                              \
  }                                                                                                \
  static void b_##OP##_bf16(const void *a, int64_t sa, const void *b, int64_t sb, void *o,         \
                            int64_t n) {                                                           \
    b_##OP##_half(EMLX_BFLOAT16, (const uint16_t *)a, sa, (const uint16_t *)b, sb, (uint8_t *)o,   \
                  n);                                                                              \
  }
MB_CMP_OPS(MB_CMP_FLOATS)
#define MB_CMP_INT_GEN(SUF, T, UT, BITS)                                                           \
  MB_BIN(b_eq_##SUF, T, uint8_t, (uint8_t)(x == y))                                                \
  MB_BIN(b_ne_##SUF, T, uint8_t, (uint8_t)(x != y))                                                \
  MB_BIN(b_gt_##SUF, T, uint8_t, (uint8_t)(x > y))                                                 \
  MB_BIN(b_ge_##SUF, T, uint8_t, (uint8_t)(x >= y))
MB_FOR_UINTS(MB_CMP_INT_GEN)
MB_FOR_SINTS(MB_CMP_INT_GEN)
MB_BIN(b_eq_b, uint8_t, uint8_t, (uint8_t)((x != 0) == (y != 0)))
MB_BIN(b_ne_b, uint8_t, uint8_t, (uint8_t)((x != 0) != (y != 0)))
MB_BIN(b_gt_b, uint8_t, uint8_t, (uint8_t)((x != 0) > (y != 0)))
MB_BIN(b_ge_b, uint8_t, uint8_t, (uint8_t)((x != 0) >= (y != 0)))
MB_BIN(b_eq_c64, emlx_c64, uint8_t, (uint8_t)(x.re == y.re && x.im == y.im))
MB_BIN(b_ne_c64, emlx_c64, uint8_t, (uint8_t) !(x.re == y.re && x.im == y.im))
MB_BIN(b_gt_c64, emlx_c64, uint8_t, (uint8_t)mc_gt(x, y))
MB_BIN(b_ge_c64, emlx_c64, uint8_t, (uint8_t)mc_ge(x, y))
MB_BIN(b_eq_c128, emlx_c128, uint8_t, (uint8_t)(x.re == y.re && x.im == y.im))
MB_BIN(b_ne_c128, emlx_c128, uint8_t, (uint8_t) !(x.re == y.re && x.im == y.im))
MB_BIN(b_gt_c128, emlx_c128, uint8_t, (uint8_t)mz_gt(x, y))
MB_BIN(b_ge_c128, emlx_c128, uint8_t, (uint8_t)mz_ge(x, y))

/* ---- logical and bitwise ------------------------------------------------------------------ */
MB_BIN(b_land_b, uint8_t, uint8_t, (uint8_t)((x != 0) & (y != 0)))
MB_BIN(b_lor_b, uint8_t, uint8_t, (uint8_t)((x != 0) | (y != 0)))
MB_BIN(b_lxor_b, uint8_t, uint8_t, (uint8_t)((x != 0) ^ (y != 0)))
#define MB_BITS_GEN(SUF, T, UT, BITS)                                                              \
  MB_BIN(b_band_##SUF, T, T, (T)(x & y))                                                           \
  MB_BIN(b_bor_##SUF, T, T, (T)(x | y))                                                            \
  MB_BIN(b_bxor_##SUF, T, T, (T)(x ^ y))                                                           \
  MB_BIN(b_shl_##SUF, T, T, (T)((UT)y >= BITS ? (UT)0 : (UT)((UT)x << (UT)y)))
MB_FOR_UINTS(MB_BITS_GEN)
MB_FOR_SINTS(MB_BITS_GEN)
/* Right shifts: counts read as unsigned; >= width saturates. The signed
 * shift is written without shifting a negative value (implementation
 * defined in C): ~(~x >> c) is the arithmetic shift. */
#define MB_SHR_U_GEN(SUF, T, UT, BITS)                                                             \
  MB_BIN(b_shr_##SUF, T, T, (T)((UT)y >= BITS ? (UT)0 : (UT)(x >> (UT)y)))
#define MB_SHR_S_GEN(SUF, T, UT, BITS)                                                             \
  MB_BIN(b_shr_##SUF, T, T,                                                                        \
         (T)((UT)y >= BITS ? (x < 0 ? (UT) ~(UT)0 : (UT)0)                                         \
                           : (x < 0 ? (UT) ~((UT) ~(UT)x >> (UT)y) : (UT)((UT)x >> (UT)y))))
MB_FOR_UINTS(MB_SHR_U_GEN)
MB_FOR_SINTS(MB_SHR_S_GEN)
MB_BIN(b_band_b, uint8_t, uint8_t, (uint8_t)((x != 0) & (y != 0)))
MB_BIN(b_bor_b, uint8_t, uint8_t, (uint8_t)((x != 0) | (y != 0)))
MB_BIN(b_bxor_b, uint8_t, uint8_t, (uint8_t)((x != 0) ^ (y != 0)))

/* ---- integer max/min, division, remainder, pow -------------------------------------------- */
#define MB_MAXMIN_GEN(SUF, T, UT, BITS)                                                            \
  MB_BIN(b_max_##SUF, T, T, x > y ? x : y)                                                         \
  MB_BIN(b_min_##SUF, T, T, x < y ? x : y)
MB_FOR_UINTS(MB_MAXMIN_GEN)
MB_FOR_SINTS(MB_MAXMIN_GEN)
MB_BIN(b_max_b, uint8_t, uint8_t, (uint8_t)((x != 0) | (y != 0)))
MB_BIN(b_min_b, uint8_t, uint8_t, (uint8_t)((x != 0) & (y != 0)))
MB_BIN(b_max_c64, emlx_c64, emlx_c64, mb_maxc(x, y))
MB_BIN(b_min_c64, emlx_c64, emlx_c64, mb_minc(x, y))
MB_BIN(b_max_c128, emlx_c128, emlx_c128, mb_maxz(x, y))
MB_BIN(b_min_c128, emlx_c128, emlx_c128, mb_minz(x, y))

/* Unsigned: x / 0 == 0, x % 0 == 0; floor and trunc agree. */
#define MB_DIV_U_GEN(SUF, T, UT, BITS)                                                             \
  MB_BIN(b_qtrunc_##SUF, T, T, (T)(y == 0 ? 0 : x / y))                                            \
  MB_BIN(b_rtrunc_##SUF, T, T, (T)(y == 0 ? 0 : x % y))
MB_FOR_UINTS(MB_DIV_U_GEN)
#define b_qfloor_u8 b_qtrunc_u8
#define b_qfloor_u16 b_qtrunc_u16
#define b_qfloor_u32 b_qtrunc_u32
#define b_qfloor_u64 b_qtrunc_u64
#define b_rfloor_u8 b_rtrunc_u8
#define b_rfloor_u16 b_rtrunc_u16
#define b_rfloor_u32 b_rtrunc_u32
#define b_rfloor_u64 b_rtrunc_u64
/* Signed: y == 0 gives 0; y == -1 is negation (wrapping INT_MIN / -1 to
 * INT_MIN, remainder 0) and never reaches the trapping instruction. */
#define MB_DIV_S_GEN(SUF, T, UT, BITS)                                                             \
  static inline T mb_qt_##SUF(T x, T y) {                                                          \
    return y == 0 ? (T)0 : y == -1 ? (T)(UT)(0u - (UT)x) : (T)(x / y);                             \
  }                                                                                                \
  static inline T mb_rt_##SUF(T x, T y) { return y == 0 || y == -1 ? (T)0 : (T)(x % y); }          \
  static inline T mb_qf_##SUF(T x, T y) {                                                          \
    T q = mb_qt_##SUF(x, y);                                                                       \
    return (T)(y != 0 && mb_rt_##SUF(x, y) != 0 && ((x < 0) != (y < 0)) ? q - 1 : q);              \
  }                                                                                                \
  static inline T mb_rf_##SUF(T x, T y) {                                                          \
    T r = mb_rt_##SUF(x, y);                                                                       \
    return (T)(r != 0 && ((r < 0) != (y < 0)) ? r + y : r);                                        \
  }                                                                                                \
  MB_BIN(b_qtrunc_##SUF, T, T, mb_qt_##SUF(x, y))                                                  \
  MB_BIN(b_rtrunc_##SUF, T, T, mb_rt_##SUF(x, y))                                                  \
  MB_BIN(b_qfloor_##SUF, T, T, mb_qf_##SUF(x, y))                                                  \
  MB_BIN(b_rfloor_##SUF, T, T, mb_rf_##SUF(x, y))
MB_FOR_SINTS(MB_DIV_S_GEN)
MB_BIN(b_qtrunc_b, uint8_t, uint8_t, (uint8_t)((x != 0) & (y != 0)))
MB_BIN(b_rtrunc_b, uint8_t, uint8_t, (uint8_t)(x &y & 0))
#define b_qfloor_b b_qtrunc_b
#define b_rfloor_b b_rtrunc_b

/* Integer pow by squaring on the unsigned type (wrapping); a negative
 * exponent: 1 for base 1, +-1 for base -1, else 0. WT is at least 32 bits
 * so that products of small types do not overflow int. */
#define MB_POW_U_GEN(SUF, T, UT, BITS)                                                             \
  static inline T mb_pow_##SUF(T x, T y) {                                                         \
    uint64_t r = 1, b = x, e = y;                                                                  \
    while (e) {                                                                                    \
      if (e & 1u)                                                                                  \
        r = (UT)(r * b);                                                                           \
      b = (UT)(b * b);                                                                             \
      e >>= 1;                                                                                     \
    }                                                                                              \
    return (T)r;                                                                                   \
  }                                                                                                \
  MB_BIN(b_pow_##SUF, T, T, mb_pow_##SUF(x, y))
#define MB_POW_S_GEN(SUF, T, UT, BITS)                                                             \
  static inline T mb_pow_##SUF(T x, T y) {                                                         \
    if (y < 0)                                                                                     \
      return (T)(x == 1 ? 1 : x == -1 ? ((y & 1) ? -1 : 1) : 0);                                   \
    uint64_t r = 1, b = (uint64_t)(int64_t)x, e = (uint64_t)(int64_t)y;                            \
    while (e) {                                                                                    \
      if (e & 1u)                                                                                  \
        r *= b;                                                                                    \
      b *= b;                                                                                      \
      e >>= 1;                                                                                     \
    }                                                                                              \
    return (T)(UT)r;                                                                               \
  }                                                                                                \
  MB_BIN(b_pow_##SUF, T, T, mb_pow_##SUF(x, y))
MB_FOR_UINTS(MB_POW_U_GEN)
MB_FOR_SINTS(MB_POW_S_GEN)
MB_BIN(b_pow_b, uint8_t, uint8_t, (uint8_t)((x != 0) | (y == 0)))
MB_BIN(b_pow_c64, emlx_c64, emlx_c64, mc_of(cpow(mc_wide(x), mc_wide(y))))
MB_BIN(b_pow_c128, emlx_c128, emlx_c128, mz_of(cpow(mz_z(x), mz_z(y))))

#define MB_ALLI(OP) MB_INTS(OP), [EMLX_BOOL] = OP##_b
#define MB_ALL(OP)                                                                                 \
  MB_ALLI(OP), MB_FLOATS(OP), [EMLX_COMPLEX64] = OP##_c64, [EMLX_COMPLEX128] = OP##_c128
#define MB_TABLE_ROWS                                                                              \
  {                                                                                                \
    [EMLX_MB_QUOT_FLOOR] = {MB_ALLI(b_qfloor), MB_FLOATS(b_qfloor)},                               \
    [EMLX_MB_QUOT_TRUNC] = {MB_ALLI(b_qtrunc), MB_FLOATS(b_qtrunc)},                               \
    [EMLX_MB_REM_FLOOR] = {MB_ALLI(b_rfloor), MB_FLOATS(b_rfloor)},                                \
    [EMLX_MB_REM_TRUNC] = {MB_ALLI(b_rtrunc), MB_FLOATS(b_rtrunc)},                                \
    [EMLX_MB_POW] = {MB_ALL(b_pow)}, [EMLX_MB_ATAN2] = {MB_FLOATS(b_atan2)},                       \
    [EMLX_MB_MAX] = {MB_ALL(b_max)}, [EMLX_MB_MIN] = {MB_ALL(b_min)},                              \
    [EMLX_MB_EQ] = {MB_ALL(b_eq)}, [EMLX_MB_NE] = {MB_ALL(b_ne)}, [EMLX_MB_GT] = {MB_ALL(b_gt)},   \
    [EMLX_MB_GE] = {MB_ALL(b_ge)}, [EMLX_MB_LAND] = {[EMLX_BOOL] = b_land_b},                      \
    [EMLX_MB_LOR] = {[EMLX_BOOL] = b_lor_b}, [EMLX_MB_LXOR] = {[EMLX_BOOL] = b_lxor_b},            \
    [EMLX_MB_BAND] = {MB_ALLI(b_band)}, [EMLX_MB_BOR] = {MB_ALLI(b_bor)},                          \
    [EMLX_MB_BXOR] = {MB_ALLI(b_bxor)}, [EMLX_MB_SHL] = {MB_INTS(b_shl)},                          \
    [EMLX_MB_SHR] = {MB_INTS(b_shr)},                                                              \
  }
