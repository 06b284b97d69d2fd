/* math_body_nary.h — the where, clip and isclose loops of the math family
 * (part of math_body.h; see there). Defines MN_WHERE_ROW, MN_CLIP_ROW and
 * MN_ISCLOSE_ROW for the table. */

/* ---- where(cond, x, y): a copy of one of two elements, by element size -------------- */
#define MN_WHERE(NAME, T)                                                                          \
  static void NAME(const void *const *in, const int64_t *s, void *po, int64_t n,                   \
                   const void *ctx) {                                                              \
    const uint8_t *c = (const uint8_t *)in[0];                                                     \
    const T *x = (const T *)in[1], *y = (const T *)in[2];                                          \
    T *o = (T *)po;                                                                                \
    (void)ctx;                                                                                     \
    if (s[0] == 1 && s[1] == 1 && s[2] == 1) {                                                     \
      for (int64_t i = 0; i < n; i++)                                                              \
        o[i] = c[i] ? x[i] : y[i];                                                                 \
    } else {                                                                                       \
      for (int64_t i = 0; i < n; i++)                                                              \
        o[i] = c[i * s[0]] ? x[i * s[1]] : y[i * s[2]];                                            \
    }                                                                                              \
  }
MN_WHERE(n_where_1, uint8_t)
MN_WHERE(n_where_2, uint16_t)
MN_WHERE(n_where_4, uint32_t)
MN_WHERE(n_where_8, uint64_t)
MN_WHERE(n_where_16, emlx_c128)

/* ---- clip(a, lo, hi) = min(max(a, lo), hi) ---------------------------------------------- */
#define MN_CLIP(NAME, T, MAX, MIN)                                                                 \
  static void NAME(const void *const *in, const int64_t *s, void *po, int64_t n,                   \
                   const void *ctx) {                                                              \
    const T *a = (const T *)in[0], *lo = (const T *)in[1], *hi = (const T *)in[2];                 \
    T *o = (T *)po;                                                                                \
    (void)ctx;                                                                                     \
    if (s[0] == 1 && s[1] == 0 && s[2] == 0) {                                                     \
      const T l = lo[0], h = hi[0];                                                                \
      for (int64_t i = 0; i < n; i++)                                                              \
        o[i] = MIN(MAX(a[i], l), h);                                                               \
    } else {                                                                                       \
      for (int64_t i = 0; i < n; i++)                                                              \
        o[i] = MIN(MAX(a[i * s[0]], lo[i * s[1]]), hi[i * s[2]]);                                  \
    }                                                                                              \
  }
#define MN_IMAX(x, y) ((x) > (y) ? (x) : (y))
#define MN_IMIN(x, y) ((x) < (y) ? (x) : (y))
#define MN_BMAX(x, y) ((uint8_t)(((x) != 0) | ((y) != 0)))
#define MN_BMIN(x, y) ((uint8_t)(((x) != 0) & ((y) != 0)))
#define MN_CLIP_INT_GEN(SUF, T, UT, BITS) MN_CLIP(n_clip_##SUF, T, MN_IMAX, MN_IMIN)
MB_FOR_UINTS(MN_CLIP_INT_GEN)
MB_FOR_SINTS(MN_CLIP_INT_GEN)
MN_CLIP(n_clip_b, uint8_t, MN_BMAX, MN_BMIN)
MN_CLIP(n_clip_f32, float, mb_maxf, mb_minf)
MN_CLIP(n_clip_f64, double, mb_max, mb_min)
MN_CLIP(n_clip_c64, emlx_c64, mb_maxc, mb_minc)
MN_CLIP(n_clip_c128, emlx_c128, mb_maxz, mb_minz)
/* f16/bf16: compared in f32; the result is one of the inputs, exact. */
static void n_clip_half(emlx_dtype dt, const void *const *in, const int64_t *s, uint16_t *o,
                        int64_t n) {
  float ta[MF_TILE], tl[MF_TILE], th[MF_TILE];
  for (int64_t i0 = 0; i0 < n; i0 += MF_TILE) {
    int64_t len = bd_min64(MF_TILE, n - i0);
    mb_load_f32((const uint16_t *)in[0] + i0 * s[0], dt, s[0], len, ta);
    mb_load_f32((const uint16_t *)in[1] + i0 * s[1], dt, s[1], len, tl);
    mb_load_f32((const uint16_t *)in[2] + i0 * s[2], dt, s[2], len, th);
    for (int64_t i = 0; i < len; i++)
      ta[i] = mb_minf(mb_maxf(ta[i], tl[i]), th[i]);
    mb_store_half(ta, dt, o + i0, len);
  }
}
static void n_clip_f16(const void *const *in, const int64_t *s, void *po, int64_t n,
                       const void *ctx) {
  (void)ctx;
  n_clip_half(EMLX_FLOAT16, in, s, (uint16_t *)po, n);
}
static void n_clip_bf16(const void *const *in, const int64_t *s, void *po, int64_t n,
                        const void *ctx) {
  (void)ctx;
  n_clip_half(EMLX_BFLOAT16, in, s, (uint16_t *)po, n);
}

/* ---- isclose(a, b): in double ------------------------------------------------------------ */
static inline uint8_t mn_close(double a, double b, const emlx_isclose_params *p) {
  if (a != a || b != b)
    return (uint8_t)(p->equal_nan && a != a && b != b);
  if (fabs(a) == (double)INFINITY || fabs(b) == (double)INFINITY)
    return (uint8_t)(a == b);
  return (uint8_t)(fabs(a - b) <= p->atol + p->rtol * fabs(b));
}
static inline uint8_t mn_close_c(emlx_c64 a, emlx_c64 b, const emlx_isclose_params *p) {
  if (mc_isnan(a) || mc_isnan(b))
    return (uint8_t)(p->equal_nan && mc_isnan(a) && mc_isnan(b));
  if (isinf(a.re) || isinf(a.im) || isinf(b.re) || isinf(b.im))
    return (uint8_t)(a.re == b.re && a.im == b.im);
  double d = hypot((double)a.re - (double)b.re, (double)a.im - (double)b.im);
  return (uint8_t)(d <= p->atol + p->rtol * hypot((double)b.re, (double)b.im));
}
static inline uint8_t mn_close_z(emlx_c128 a, emlx_c128 b, const emlx_isclose_params *p) {
  if (mz_isnan(a) || mz_isnan(b))
    return (uint8_t)(p->equal_nan && mz_isnan(a) && mz_isnan(b));
  if (isinf(a.re) || isinf(a.im) || isinf(b.re) || isinf(b.im))
    return (uint8_t)(a.re == b.re && a.im == b.im);
  double d = hypot(a.re - b.re, a.im - b.im);
  return (uint8_t)(d <= p->atol + p->rtol * hypot(b.re, b.im));
}
#define MN_ISCLOSE(NAME, T, TOD)                                                                   \
  static void NAME(const void *const *in, const int64_t *s, void *po, int64_t n,                   \
                   const void *ctx) {                                                              \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                                          \
    uint8_t *o = (uint8_t *)po;                                                                    \
    const emlx_isclose_params *p = (const emlx_isclose_params *)ctx;                               \
    for (int64_t i = 0; i < n; i++)                                                                \
      o[i] = mn_close(TOD(a[i * s[0]]), TOD(b[i * s[1]]), p);                                      \
  }
#define MN_TOD(x) ((double)(x))
#define MN_ISCLOSE_INT_GEN(SUF, T, UT, BITS) MN_ISCLOSE(n_isclose_##SUF, T, MN_TOD)
MB_FOR_UINTS(MN_ISCLOSE_INT_GEN)
MB_FOR_SINTS(MN_ISCLOSE_INT_GEN)
MN_ISCLOSE(n_isclose_b, uint8_t, MN_TOD)
MN_ISCLOSE(n_isclose_f32, float, MN_TOD)
MN_ISCLOSE(n_isclose_f64, double, MN_TOD)
#define MN_F16D(x) ((double)emlx_cv_f16_to_f32(x))
#define MN_BF16D(x) ((double)emlx_cv_bf16_to_f32(x))
MN_ISCLOSE(n_isclose_f16, uint16_t, MN_F16D)
MN_ISCLOSE(n_isclose_bf16, uint16_t, MN_BF16D)
static void n_isclose_c64(const void *const *in, const int64_t *s, void *po, int64_t n,
                          const void *ctx) {
  const emlx_c64 *a = (const emlx_c64 *)in[0], *b = (const emlx_c64 *)in[1];
  uint8_t *o = (uint8_t *)po;
  for (int64_t i = 0; i < n; i++)
    o[i] = mn_close_c(a[i * s[0]], b[i * s[1]], (const emlx_isclose_params *)ctx);
}
static void n_isclose_c128(const void *const *in, const int64_t *s, void *po, int64_t n,
                           const void *ctx) {
  const emlx_c128 *a = (const emlx_c128 *)in[0], *b = (const emlx_c128 *)in[1];
  uint8_t *o = (uint8_t *)po;
  for (int64_t i = 0; i < n; i++)
    o[i] = mn_close_z(a[i * s[0]], b[i * s[1]], (const emlx_isclose_params *)ctx);
}

#define MN_WHERE_ROW                                                                               \
  {                                                                                                \
    [EMLX_BOOL] = n_where_1, [EMLX_UINT8] = n_where_1, [EMLX_INT8] = n_where_1,                    \
    [EMLX_UINT16] = n_where_2, [EMLX_INT16] = n_where_2, [EMLX_FLOAT16] = n_where_2,               \
    [EMLX_BFLOAT16] = n_where_2, [EMLX_UINT32] = n_where_4, [EMLX_INT32] = n_where_4,              \
    [EMLX_FLOAT32] = n_where_4, [EMLX_UINT64] = n_where_8, [EMLX_INT64] = n_where_8,               \
    [EMLX_FLOAT64] = n_where_8, [EMLX_COMPLEX64] = n_where_8, [EMLX_COMPLEX128] = n_where_16,      \
  }
#define MN_CLIP_ROW                                                                                \
  {                                                                                                \
    MB_INTS(n_clip), MB_FLOATS(n_clip), [EMLX_BOOL] = n_clip_b, [EMLX_COMPLEX64] = n_clip_c64,     \
    [EMLX_COMPLEX128] = n_clip_c128                                                                \
  }
#define MN_ISCLOSE_ROW                                                                             \
  {                                                                                                \
    MB_INTS(n_isclose),                                                                            \
        MB_FLOATS(n_isclose), [EMLX_BOOL] = n_isclose_b, [EMLX_COMPLEX64] = n_isclose_c64,         \
        [EMLX_COMPLEX128] = n_isclose_c128                                                         \
  }
