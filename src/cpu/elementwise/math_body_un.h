/* math_body_un.h — the unary loops of the math family (part of
 * math_body.h; see there). Defines MU_TABLE_ROWS for the table. */

/* ---- float tile functions from expressions ------------------------------------ */
MB_TILE_EXPR(t_abs_f32, float, fabsf(x))
MB_TILE_EXPR(t_abs_f64, double, fabs(x))
/* sign keeps +-0 and NaN (x itself). */
MB_TILE_EXPR(t_sign_f32, float, x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x))
MB_TILE_EXPR(t_sign_f64, double, x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : x))
MB_TILE_EXPR(t_floor_f32, float, floorf(x))
MB_TILE_EXPR(t_floor_f64, double, floor(x))
MB_TILE_EXPR(t_ceil_f32, float, ceilf(x))
MB_TILE_EXPR(t_ceil_f64, double, ceil(x))
/* rint rounds ties to even in the default rounding mode, which the engine
 * never changes. */
MB_TILE_EXPR(t_round_f32, float, rintf(x))
MB_TILE_EXPR(t_round_f64, double, rint(x))
/* Ties away: trunc, then step away from zero when the dropped part is >=
 * 1/2 (x - trunc(x) is exact). */
MB_TILE_EXPR(t_rounda_f32, float,
             fabsf(x - truncf(x)) >= 0.5f ? truncf(x) + copysignf(1.0f, x) : truncf(x))
MB_TILE_EXPR(t_rounda_f64, double,
             fabs(x - trunc(x)) >= 0.5 ? trunc(x) + copysign(1.0, x) : trunc(x))

static void t_rsqrt_f32(const float *in, float *out, int64_t n) {
  mv_sqrt_f32(in, out, n);
  for (int64_t i = 0; i < n; i++)
    out[i] = 1.0f / out[i];
}
static void t_rsqrt_f64(const double *in, double *out, int64_t n) {
  mv_sqrt_f64(in, out, n);
  for (int64_t i = 0; i < n; i++)
    out[i] = 1.0 / out[i];
}
/* f64 sigmoid with SLEEF's exp, tails as in mf_sigmoidf. */
static void t_sigmoid_f64(const double *in, double *out, int64_t n) {
  double e[MF_TILE];
  for (int64_t i0 = 0; i0 < n; i0 += MF_TILE) {
    int64_t len = bd_min64(MF_TILE, n - i0);
    for (int64_t i = 0; i < len; i++)
      e[i] = -fabs(in[i0 + i]);
    mv_exp_f64(e, e, len);
    for (int64_t i = 0; i < len; i++) {
      double x = in[i0 + i], d = 1.0 / (1.0 + e[i]);
      out[i0 + i] = x >= 0.0 ? d : (x < 0.0 ? e[i] * d : x);
    }
  }
}
/* f32 erf_inv through f64 (see math_fn.h). */
static void t_erfinv_f32(const float *in, float *out, int64_t n) {
  double t[MF_TILE];
  for (int64_t i0 = 0; i0 < n; i0 += MF_TILE) {
    int64_t len = bd_min64(MF_TILE, n - i0);
    for (int64_t i = 0; i < len; i++)
      t[i] = (double)in[i0 + i];
    mf_erfinv_tile_f64(t, t, len);
    for (int64_t i = 0; i < len; i++)
      out[i0 + i] = (float)t[i];
  }
}

/* SLEEF's ends of the range, redone lane by lane after the vector pass
 * (the lanes are rare, so plain C, one precision up):
 *  - sinh and cosh compute exp(|x|) before halving, so they overflow ~ln 2
 *    before the true point (f32 at 88.7 instead of 89.4, f64 at 709.8
 *    instead of 710.5): past |x| = 88 / 709 both are exp(|x|) / 2 (the
 *    dropped exp(-|x|) is far below an ulp), in f64 / long double;
 *  - asinh and acosh square x: inf from sqrt(max) on; past 1e18 / 1e150 they
 *    are log(2|x|) = log|x| + ln 2 (the dropped 1/(4x^2) is below an ulp);
 *  - log1p is inf past 1e38 / 1e307: there it is log(x) (1 + x rounds to x).
 * NaN fails every comparison below and keeps SLEEF's NaN. */
#define MU_LN2L 0.693147180559945309417232121458176568L
/* Tiles may be computed in place (in == out), so each run of MU_RUN
 * elements keeps its inputs while the vector pass overwrites them. */
#define MU_RUN 64
#define MU_FIX_ENDS(NAME, T, MV, COND, FIX)                                                        \
  static void NAME(const T *in, T *out, int64_t n) {                                               \
    for (int64_t i0 = 0; i0 < n; i0 += MU_RUN) {                                                   \
      int64_t len = n - i0 < MU_RUN ? n - i0 : MU_RUN;                                             \
      T keep[MU_RUN];                                                                              \
      memcpy(keep, in + i0, (size_t)len * sizeof(T));                                              \
      MV(in + i0, out + i0, len);                                                                  \
      for (int64_t i = 0; i < len; i++) {                                                          \
        T x = keep[i];                                                                             \
        if (COND)                                                                                  \
          out[i0 + i] = (FIX);                                                                     \
      }                                                                                            \
    }                                                                                              \
  }
static inline float mu_halfexp_f32(float x) { return (float)(0.5 * exp(fabs((double)x))); }
static inline double mu_halfexp_f64(double x) {
  return (double)(0.5L * expl(fabsl((long double)x)));
}
static inline float mu_log2x_f32(float x) {
  return (float)(log(fabs((double)x)) + (double)MU_LN2L);
}
static inline double mu_log2x_f64(double x) {
  return (double)(logl(fabsl((long double)x)) + MU_LN2L);
}
MU_FIX_ENDS(t_sinh_f32, float, mv_sinh_f32, fabsf(x) > 88.0f, copysignf(mu_halfexp_f32(x), x))
MU_FIX_ENDS(t_cosh_f32, float, mv_cosh_f32, fabsf(x) > 88.0f, mu_halfexp_f32(x))
MU_FIX_ENDS(t_sinh_f64, double, mv_sinh_f64, fabs(x) > 709.0, copysign(mu_halfexp_f64(x), x))
MU_FIX_ENDS(t_cosh_f64, double, mv_cosh_f64, fabs(x) > 709.0, mu_halfexp_f64(x))
MU_FIX_ENDS(t_asinh_f32, float, mv_asinh_f32, fabsf(x) > 1e18f, copysignf(mu_log2x_f32(x), x))
MU_FIX_ENDS(t_acosh_f32, float, mv_acosh_f32, x > 1e18f, mu_log2x_f32(x))
MU_FIX_ENDS(t_asinh_f64, double, mv_asinh_f64, fabs(x) > 1e150, copysign(mu_log2x_f64(x), x))
MU_FIX_ENDS(t_acosh_f64, double, mv_acosh_f64, x > 1e150, mu_log2x_f64(x))
MU_FIX_ENDS(t_log1p_f32, float, mv_log1p_f32, x > 1e38f, (float)log((double)x))
MU_FIX_ENDS(t_log1p_f64, double, mv_log1p_f64, x > 1e307, (double)logl((long double)x))

MB_UN_FLOAT(u_abs, t_abs_f32, t_abs_f64)
MB_UN_FLOAT(u_sign, t_sign_f32, t_sign_f64)
MB_UN_FLOAT(u_floor, t_floor_f32, t_floor_f64)
MB_UN_FLOAT(u_ceil, t_ceil_f32, t_ceil_f64)
MB_UN_FLOAT(u_round, t_round_f32, t_round_f64)
MB_UN_FLOAT(u_rounda, t_rounda_f32, t_rounda_f64)
MB_UN_FLOAT(u_sqrt, mv_sqrt_f32, mv_sqrt_f64)
MB_UN_FLOAT(u_rsqrt, t_rsqrt_f32, t_rsqrt_f64)
MB_UN_FLOAT(u_log, mv_log_f32, mv_log_f64)
MB_UN_FLOAT(u_log1p, t_log1p_f32, t_log1p_f64)
MB_UN_FLOAT(u_expm1, mv_expm1_f32, mv_expm1_f64)
MB_UN_FLOAT(u_sin, mcr_sin_f32, mv_sin_f64)
MB_UN_FLOAT(u_cos, mcr_cos_f32, mv_cos_f64)
MB_UN_FLOAT(u_tan, mv_tan_f32, mv_tan_f64)
MB_UN_FLOAT(u_asin, mv_asin_f32, mv_asin_f64)
MB_UN_FLOAT(u_acos, mv_acos_f32, mv_acos_f64)
MB_UN_FLOAT(u_atan, mv_atan_f32, mv_atan_f64)
MB_UN_FLOAT(u_sinh, t_sinh_f32, t_sinh_f64)
MB_UN_FLOAT(u_cosh, t_cosh_f32, t_cosh_f64)
#ifdef MV_HAS_TANH_F32
MB_UN_FLOAT(u_tanh, mv_tanh_fast_f32, mv_tanh_f64)
#else
MB_UN_FLOAT(u_tanh, mf_tanh_tile_f32, mv_tanh_f64)
#endif
MB_UN_FLOAT(u_asinh, t_asinh_f32, t_asinh_f64)
MB_UN_FLOAT(u_acosh, t_acosh_f32, t_acosh_f64)
MB_UN_FLOAT(u_atanh, mv_atanh_f32, mv_atanh_f64)
#ifdef MV_HAS_ERF_F32
MB_UN_FLOAT(u_erf, mv_erf_fast_f32, mv_erf_f64)
#else
MB_UN_FLOAT(u_erf, mv_erf_f32, mv_erf_f64)
#endif
MB_UN_FLOAT(u_erfinv, t_erfinv_f32, mf_erfinv_tile_f64)
MB_UN_FLOAT(u_erfc, mv_erfc_f32, mv_erfc_f64)
#ifdef MV_HAS_SIGMOID_F32
MB_UN_FLOAT(u_sigmoid, mv_sigmoid_fast_f32, t_sigmoid_f64)
#else
MB_UN_FLOAT(u_sigmoid, mf_sigmoid_tile_f32, t_sigmoid_f64)
#endif

/* ---- integers ------------------------------------------------------------------- */
#define MU_SINT_GEN(SUF, T, UT, BITS)                                                              \
  MB_UN(u_abs_##SUF, T, T, (T)(x < 0 ? (UT)(0u - (UT)x) : (UT)x))                                  \
  MB_UN(u_sign_##SUF, T, T, (T)((x > 0) - (x < 0)))                                                \
  MB_UN(u_bnot_##SUF, T, T, (T)(UT) ~(UT)x)
#define MU_UINT_GEN(SUF, T, UT, BITS)                                                              \
  MB_UN(u_sign_##SUF, T, T, (T)(x != 0))                                                           \
  MB_UN(u_bnot_##SUF, T, T, (T)~x)
MB_FOR_SINTS(MU_SINT_GEN)
MB_FOR_UINTS(MU_UINT_GEN)
MB_UN(u_bnot_b, uint8_t, uint8_t, (uint8_t)(x == 0))
MB_UN(u_lnot_b, uint8_t, uint8_t, (uint8_t)(x == 0))

/* ---- predicates on floats (bool out) --------------------------------------------- */
MB_UN(u_isnan_f32, float, uint8_t, (uint8_t)(x != x))
MB_UN(u_isnan_f64, double, uint8_t, (uint8_t)(x != x))
MB_UN(u_isnan_f16, uint16_t, uint8_t, (uint8_t)((x & 0x7FFFu) > 0x7C00u))
MB_UN(u_isnan_bf16, uint16_t, uint8_t, (uint8_t)((x & 0x7FFFu) > 0x7F80u))
MB_UN(u_isnan_c64, emlx_c64, uint8_t, (uint8_t)mc_isnan(x))
MB_UN(u_isinf_f32, float, uint8_t, (uint8_t)(fabsf(x) == (float)INFINITY))
MB_UN(u_isinf_f64, double, uint8_t, (uint8_t)(fabs(x) == (double)INFINITY))
MB_UN(u_isinf_f16, uint16_t, uint8_t, (uint8_t)((x & 0x7FFFu) == 0x7C00u))
MB_UN(u_isinf_bf16, uint16_t, uint8_t, (uint8_t)((x & 0x7FFFu) == 0x7F80u))
MB_UN(u_isinf_c64, emlx_c64, uint8_t,
      (uint8_t)(fabsf(x.re) == (float)INFINITY || fabsf(x.im) == (float)INFINITY))
MB_UN(u_isnan_c128, emlx_c128, uint8_t, (uint8_t)mz_isnan(x))
MB_UN(u_isinf_c128, emlx_c128, uint8_t,
      (uint8_t)(fabs(x.re) == (double)INFINITY || fabs(x.im) == (double)INFINITY))

/* ---- complex64 ------------------------------------------------------------------- */
/* z / |z|; an infinite part gives the unit on its axis and two give NaN
 * (NumPy: sign(1 + inf j) == 1j, sign(inf + 1j) == 1 + 0j). */
static inline emlx_c64 mc_sign(emlx_c64 x) {
  if (x.re == 0.0f && x.im == 0.0f)
    return x;
  bool inf_re = isinf(x.re), inf_im = isinf(x.im);
  if (inf_re || inf_im) {
    emlx_c64 r = {inf_im ? (inf_re ? NAN : 0.0f) : copysignf(1.0f, x.re),
                  inf_re ? (inf_im ? NAN : 0.0f) : copysignf(1.0f, x.im)};
    return r;
  }
  double m = hypot((double)x.re, (double)x.im);
  emlx_c64 r = {(float)((double)x.re / m), (float)((double)x.im / m)};
  return r;
}
static inline emlx_c64 mc_round(emlx_c64 x) {
  emlx_c64 r = {rintf(x.re), rintf(x.im)};
  return r;
}
static inline emlx_c64 mc_rounda(emlx_c64 x) {
  float re = x.re, im = x.im, r[2];
  t_rounda_f32(&re, &r[0], 1);
  t_rounda_f32(&im, &r[1], 1);
  emlx_c64 o = {r[0], r[1]};
  return o;
}
static inline emlx_c64 mc_conj(emlx_c64 x) {
  emlx_c64 r = {x.re, -x.im};
  return r;
}
MB_UN(u_abs_c64, emlx_c64, float, (float)hypot((double)x.re, (double)x.im))
MB_UN(u_sign_c64, emlx_c64, emlx_c64, mc_sign(x))
MB_UN(u_round_c64, emlx_c64, emlx_c64, mc_round(x))
MB_UN(u_rounda_c64, emlx_c64, emlx_c64, mc_rounda(x))
MB_UN(u_conj_c64, emlx_c64, emlx_c64, mc_conj(x))
MB_UN(u_real_c64, emlx_c64, float, x.re)
MB_UN(u_imag_c64, emlx_c64, float, x.im)
/* log(1 + z): near 0, log|1 + z| as log1p(2x + x^2 + y^2) / 2 (computed in
 * double: no cancellation in 1 + z), the argument as atan2(y, 1 + x). */
static inline double _Complex mc_log1p(emlx_c64 z) {
  double x = (double)z.re, y = (double)z.im;
  if (fabs(x) < 0.5 && fabs(y) < 0.5)
    return CMPLX(0.5 * log1p(2.0 * x + x * x + y * y), atan2(y, 1.0 + x));
  return clog(1.0 + mc_wide(z));
}
#define MU_C64(NAME, EXPR) MB_UN(NAME##_c64, emlx_c64, emlx_c64, mc_of(EXPR))
MU_C64(u_sqrt, csqrt(mc_wide(x)))
MU_C64(u_rsqrt, 1.0 / csqrt(mc_wide(x)))
MU_C64(u_log, clog(mc_wide(x)))
MU_C64(u_log1p, mc_log1p(x))
MU_C64(u_sin, csin(mc_wide(x)))
MU_C64(u_cos, ccos(mc_wide(x)))
MU_C64(u_tan, ctan(mc_wide(x)))
MU_C64(u_asin, casin(mc_wide(x)))
MU_C64(u_acos, cacos(mc_wide(x)))
MU_C64(u_atan, catan(mc_wide(x)))
MU_C64(u_sinh, csinh(mc_wide(x)))
MU_C64(u_cosh, ccosh(mc_wide(x)))
MU_C64(u_tanh, ctanh(mc_wide(x)))
MU_C64(u_asinh, casinh(mc_wide(x)))
MU_C64(u_acosh, cacosh(mc_wide(x)))
MU_C64(u_atanh, catanh(mc_wide(x)))

/* ---- complex128: the same functions in double _Complex ------------------------- */
static inline emlx_c128 mz_sign(emlx_c128 x) {
  if (x.re == 0.0 && x.im == 0.0)
    return x;
  bool inf_re = isinf(x.re), inf_im = isinf(x.im);
  if (inf_re || inf_im) {
    emlx_c128 r = {inf_im ? (inf_re ? (double)NAN : 0.0) : copysign(1.0, x.re),
                   inf_re ? (inf_im ? (double)NAN : 0.0) : copysign(1.0, x.im)};
    return r;
  }
  double m = hypot(x.re, x.im);
  emlx_c128 r = {x.re / m, x.im / m};
  return r;
}
static inline emlx_c128 mz_round(emlx_c128 x) {
  emlx_c128 r = {rint(x.re), rint(x.im)};
  return r;
}
static inline emlx_c128 mz_rounda(emlx_c128 x) {
  double re = x.re, im = x.im, r[2];
  t_rounda_f64(&re, &r[0], 1);
  t_rounda_f64(&im, &r[1], 1);
  emlx_c128 o = {r[0], r[1]};
  return o;
}
static inline emlx_c128 mz_conj(emlx_c128 x) {
  emlx_c128 r = {x.re, -x.im};
  return r;
}
/* log(1 + z) without cancellation near 0 (see mc_log1p). For |z| < 0.5,
 * 2x + x^2 + y^2 loses bits only when x ~ -y^2/2, as log1p itself would. */
static inline double _Complex mz_log1p(emlx_c128 z) {
  double x = z.re, y = z.im;
  if (fabs(x) < 0.5 && fabs(y) < 0.5)
    return CMPLX(0.5 * log1p(2.0 * x + x * x + y * y), atan2(y, 1.0 + x));
  return clog(1.0 + mz_z(z));
}
MB_UN(u_abs_c128, emlx_c128, double, hypot(x.re, x.im))
MB_UN(u_sign_c128, emlx_c128, emlx_c128, mz_sign(x))
MB_UN(u_round_c128, emlx_c128, emlx_c128, mz_round(x))
MB_UN(u_rounda_c128, emlx_c128, emlx_c128, mz_rounda(x))
MB_UN(u_conj_c128, emlx_c128, emlx_c128, mz_conj(x))
MB_UN(u_real_c128, emlx_c128, double, x.re)
MB_UN(u_imag_c128, emlx_c128, double, x.im)
#define MU_C128(NAME, EXPR) MB_UN(NAME##_c128, emlx_c128, emlx_c128, mz_of(EXPR))
MU_C128(u_sqrt, csqrt(mz_z(x)))
MU_C128(u_rsqrt, 1.0 / csqrt(mz_z(x)))
MU_C128(u_log, clog(mz_z(x)))
MU_C128(u_log1p, mz_log1p(x))
MU_C128(u_sin, csin(mz_z(x)))
MU_C128(u_cos, ccos(mz_z(x)))
MU_C128(u_tan, ctan(mz_z(x)))
MU_C128(u_asin, casin(mz_z(x)))
MU_C128(u_acos, cacos(mz_z(x)))
MU_C128(u_atan, catan(mz_z(x)))
MU_C128(u_sinh, csinh(mz_z(x)))
MU_C128(u_cosh, ccosh(mz_z(x)))
MU_C128(u_tanh, ctanh(mz_z(x)))
MU_C128(u_asinh, casinh(mz_z(x)))
MU_C128(u_acosh, cacosh(mz_z(x)))
MU_C128(u_atanh, catanh(mz_z(x)))

#define MU_FC(OP) MB_FLOATS(OP), [EMLX_COMPLEX64] = OP##_c64, [EMLX_COMPLEX128] = OP##_c128
#define MU_TABLE_ROWS                                                                              \
  {                                                                                                \
    [EMLX_MU_ABS] = {MB_SINTS(u_abs), MU_FC(u_abs)},                                               \
    [EMLX_MU_SIGN] = {MB_INTS(u_sign), MU_FC(u_sign)}, [EMLX_MU_FLOOR] = {MB_FLOATS(u_floor)},     \
    [EMLX_MU_CEIL] = {MB_FLOATS(u_ceil)}, [EMLX_MU_ROUND] = {MU_FC(u_round)},                      \
    [EMLX_MU_ROUND_AWAY] = {MU_FC(u_rounda)}, [EMLX_MU_CONJ] = {[EMLX_COMPLEX64] = u_conj_c64,     \
                                                [EMLX_COMPLEX128] = u_conj_c128},                  \
    [EMLX_MU_REAL] = {[EMLX_COMPLEX64] = u_real_c64, [EMLX_COMPLEX128] = u_real_c128},             \
    [EMLX_MU_IMAG] = {[EMLX_COMPLEX64] = u_imag_c64, [EMLX_COMPLEX128] = u_imag_c128},             \
    [EMLX_MU_BNOT] = {MB_INTS(u_bnot), [EMLX_BOOL] = u_bnot_b}, [EMLX_MU_SQRT] = {MU_FC(u_sqrt)},  \
    [EMLX_MU_RSQRT] = {MU_FC(u_rsqrt)}, [EMLX_MU_LOG] = {MU_FC(u_log)},                            \
    [EMLX_MU_LOG1P] = {MU_FC(u_log1p)}, [EMLX_MU_EXPM1] = {MB_FLOATS(u_expm1)},                    \
    [EMLX_MU_SIN] = {MU_FC(u_sin)}, [EMLX_MU_COS] = {MU_FC(u_cos)},                                \
    [EMLX_MU_TAN] = {MU_FC(u_tan)}, [EMLX_MU_ASIN] = {MU_FC(u_asin)},                              \
    [EMLX_MU_ACOS] = {MU_FC(u_acos)}, [EMLX_MU_ATAN] = {MU_FC(u_atan)},                            \
    [EMLX_MU_SINH] = {MU_FC(u_sinh)}, [EMLX_MU_COSH] = {MU_FC(u_cosh)},                            \
    [EMLX_MU_TANH] = {MU_FC(u_tanh)}, [EMLX_MU_ASINH] = {MU_FC(u_asinh)},                          \
    [EMLX_MU_ACOSH] = {MU_FC(u_acosh)}, [EMLX_MU_ATANH] = {MU_FC(u_atanh)},                        \
    [EMLX_MU_ERF] = {MB_FLOATS(u_erf)}, [EMLX_MU_ERF_INV] = {MB_FLOATS(u_erfinv)},                 \
    [EMLX_MU_ERFC] = {MB_FLOATS(u_erfc)},                                                          \
    [EMLX_MU_SIGMOID] = {MB_FLOATS(u_sigmoid)}, [EMLX_MU_ISNAN] = {MU_FC(u_isnan)},                \
    [EMLX_MU_ISINF] = {MU_FC(u_isinf)}, [EMLX_MU_LNOT] = {[EMLX_BOOL] = u_lnot_b},                 \
  }
