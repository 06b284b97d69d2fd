/* reduce_body.h — the fold loops of the six reductions over axes (sum, max,
 * product, min, all, any), compiled per ISA by reduce_{scalar,avx2,avx512}.c
 * (table and accumulator types: reduce_fold.h).
 *
 * row: fold a 1-D run into one accumulator; col: fold one row into a row of
 * accumulators. f16/bf16 go through f32 tiles. Float sums of contiguous runs
 * use explicit lanes (GCC vector extensions: 32 f32 lanes widened to f64, or
 * 32 f64 lanes), products 32 f32 or 16 f64 lanes, combined in a fixed order,
 * so every ISA returns the same bits; strided runs use one plain
 * accumulator. Integer and logical loops are plain (GCC vectorises them) and
 * wrap in unsigned types; their results do not depend on the order. */
#include <math.h>

#include "simd/body.h"

#include "reduce_fold.h"

typedef float rd_v16f __attribute__((vector_size(64)));
typedef float rd_v16f_u __attribute__((vector_size(64), aligned(4), may_alias));
typedef double rd_v8d __attribute__((vector_size(64)));
typedef double rd_v8d_u __attribute__((vector_size(64), aligned(8), may_alias));
typedef int64_t rd_v8l __attribute__((vector_size(64)));

/* Lane-wise min that keeps NaN (see emlx_red_min_f32_into). */
#define RD_MIN_LANES(m, v, VT, IT)                                                                 \
  do {                                                                                             \
    IT k_ = ((v) < (m)) | ((v) != (v));                                                            \
    (m) = (VT)(((IT)(v)&k_) | ((IT)(m) & ~k_));                                                    \
  } while (0)

/* ---- the shapes of loop every op fills in --------------------------------- */
/* A float row: STMT folds the run x[i * s], i < n, into *acc (an AT). */
#define ROW_RUN(NAME, T, AT, STMT)                                                                 \
  static void NAME(const void *px, int64_t s, int64_t n, void *pacc) {                             \
    const T *x = (const T *)px;                                                                    \
    AT *acc = (AT *)pacc;                                                                          \
    STMT;                                                                                          \
  }
/* f16 / bf16 rows: tiles widened to f32, folded as f32 runs into an AT
 * accumulator. */
#define ROW_HALF(NAME, AT, LOAD, BODY)                                                             \
  static void NAME(const void *px, int64_t s, int64_t n, void *pacc) {                             \
    const uint16_t *x = (const uint16_t *)px;                                                      \
    AT *acc = (AT *)pacc;                                                                          \
    float t[EMLX_TILE];                                                                            \
    for (int64_t i0 = 0; i0 < n; i0 += EMLX_TILE) {                                                \
      int64_t len = bd_min64(EMLX_TILE, n - i0);                                                   \
      LOAD(x + i0 * s, s, len, t);                                                                 \
      BODY;                                                                                        \
    }                                                                                              \
  }

/* One row into a row of accumulators (any stride). */
#define COL_LOOP(NAME, T, AT, STEP)                                                                \
  static void NAME(const void *px, int64_t s, int64_t m, void *pacc) {                             \
    const T *x = (const T *)px;                                                                    \
    AT *acc = (AT *)pacc;                                                                          \
    if (s == 1) {                                                                                  \
      for (int64_t j = 0; j < m; j++) {                                                            \
        T v = x[j];                                                                                \
        STEP;                                                                                      \
      }                                                                                            \
    } else {                                                                                       \
      for (int64_t j = 0; j < m; j++) {                                                            \
        T v = x[j * s];                                                                            \
        STEP;                                                                                      \
      }                                                                                            \
    }                                                                                              \
  }

/* f16 / bf16 columns: tiles widened to f32 (v), accumulators of type AT. */
#define COL_HALF(NAME, AT, LOAD, STEP)                                                             \
  static void NAME(const void *px, int64_t s, int64_t m, void *pacc) {                             \
    const uint16_t *x = (const uint16_t *)px;                                                      \
    float t[EMLX_TILE];                                                                            \
    for (int64_t i0 = 0; i0 < m; i0 += EMLX_TILE) {                                                \
      int64_t len = bd_min64(EMLX_TILE, m - i0);                                                   \
      AT *acc = (AT *)pacc + i0;                                                                   \
      LOAD(x + i0 * s, s, len, t);                                                                 \
      for (int64_t j = 0; j < len; j++) {                                                          \
        float v = t[j];                                                                            \
        STEP;                                                                                      \
      }                                                                                            \
    }                                                                                              \
  }

/* ==== sum and max (wide accumulators) ===================================== */
/* ---- float helpers -------------------------------------------------------- */
/* The 32 lanes of vl_sum32_*, folded in a fixed tree order. */
static double lanes32_total(const double *l) {
  double t[16];
  for (int j = 0; j < 16; j++)
    t[j] = l[j] + l[j + 16];
  for (int w = 8; w >= 1; w /= 2)
    for (int j = 0; j < w; j++)
      t[j] = t[j] + t[j + w];
  return t[0];
}

static double sum_f32_run(const float *x, int64_t s, int64_t n) {
  double r = 0;
  int64_t i = 0;
  if (s == 1) {
    double lanes[32] = {0};
    vl_sum32_f32(x, n / 32, lanes);
    r = lanes32_total(lanes);
    i = n / 32 * 32;
  }
  for (; i < n; i++)
    r += (double)x[i * s];
  return r;
}

static double sum_f64_run(const double *x, int64_t s, int64_t n) {
  double r = 0;
  int64_t i = 0;
  if (s == 1) {
    double lanes[32] = {0};
    vl_sum32_f64(x, n / 32, lanes);
    r = lanes32_total(lanes);
    i = n / 32 * 32;
  }
  for (; i < n; i++)
    r += x[i * s];
  return r;
}

/* NaN propagates: the first NaN of the run (found by a rescan, so every ISA
 * returns the same one) is folded in. */
static void max_f32_run(const float *x, int64_t s, int64_t n, double *acc) {
  if (s == 1) {
    float m;
    if (vl_max_f32(x, n, &m)) {
      for (int64_t i = 0; i < n; i++)
        if (x[i] != x[i]) {
          emlx_cv_max_f64_into(acc, (double)x[i]);
          return;
        }
    }
    if (n > 0)
      emlx_cv_max_f64_into(acc, (double)m);
    return;
  }
  for (int64_t i = 0; i < n; i++)
    emlx_cv_max_f64_into(acc, (double)x[i * s]);
}

static void max_f64_run(const double *x, int64_t s, int64_t n, double *acc) {
  if (s == 1) {
    double m;
    if (vl_max_f64(x, n, &m)) {
      for (int64_t i = 0; i < n; i++)
        if (x[i] != x[i]) {
          emlx_cv_max_f64_into(acc, x[i]);
          return;
        }
    }
    if (n > 0)
      emlx_cv_max_f64_into(acc, m);
    return;
  }
  for (int64_t i = 0; i < n; i++)
    emlx_cv_max_f64_into(acc, x[i * s]);
}

/* ---- rows: floats --------------------------------------------------------- */
ROW_RUN(row_sum_f32, float, double, *acc += sum_f32_run(x, s, n))
ROW_RUN(row_sum_f64, double, double, *acc += sum_f64_run(x, s, n))
ROW_RUN(row_max_f32, float, double, max_f32_run(x, s, n, acc))
ROW_RUN(row_max_f64, double, double, max_f64_run(x, s, n, acc))
ROW_HALF(row_sum_f16, double, bd_load_f16, *acc += sum_f32_run(t, 1, len))
ROW_HALF(row_sum_bf16, double, bd_load_bf16, *acc += sum_f32_run(t, 1, len))
ROW_HALF(row_max_f16, double, bd_load_f16, max_f32_run(t, 1, len, acc))
ROW_HALF(row_max_bf16, double, bd_load_bf16, max_f32_run(t, 1, len, acc))

static void row_sum_c64(const void *px, int64_t s, int64_t n, void *pacc) {
  const emlx_c64 *x = (const emlx_c64 *)px;
  double re = 0, im = 0, *acc = (double *)pacc;
  for (int64_t i = 0; i < n; i++) {
    re += (double)x[i * s].re;
    im += (double)x[i * s].im;
  }
  acc[0] += re;
  acc[1] += im;
}
static void row_max_c64(const void *px, int64_t s, int64_t n, void *acc) {
  const emlx_c64 *x = (const emlx_c64 *)px;
  for (int64_t i = 0; i < n; i++)
    emlx_cv_max_c64_into((emlx_c64 *)acc, x[i * s]);
}
static void row_sum_c128(const void *px, int64_t s, int64_t n, void *pacc) {
  const emlx_c128 *x = (const emlx_c128 *)px;
  double re = 0, im = 0, *acc = (double *)pacc;
  for (int64_t i = 0; i < n; i++) {
    re += x[i * s].re;
    im += x[i * s].im;
  }
  acc[0] += re;
  acc[1] += im;
}
static void row_max_c128(const void *px, int64_t s, int64_t n, void *acc) {
  const emlx_c128 *x = (const emlx_c128 *)px;
  for (int64_t i = 0; i < n; i++)
    emlx_cv_max_c128_into((emlx_c128 *)acc, x[i * s]);
}

/* ---- rows: integers and bool ---------------------------------------------- */
/* W: the lane type (the output's width), LD: widen one element to W. */
#define ROW_SUM_INT(NAME, T, W, LD)                                                                \
  static void NAME(const void *px, int64_t s, int64_t n, void *acc) {                              \
    const T *x = (const T *)px;                                                                    \
    W r = 0;                                                                                       \
    if (s == 1) {                                                                                  \
      for (int64_t i = 0; i < n; i++)                                                              \
        r += LD(x[i]);                                                                             \
    } else {                                                                                       \
      for (int64_t i = 0; i < n; i++)                                                              \
        r += LD(x[i * s]);                                                                         \
    }                                                                                              \
    *(uint64_t *)acc += r;                                                                         \
  }
#define LDW_B(v) ((uint32_t)((v) != 0))
#define LDW_U32(v) ((uint32_t)(v))
#define LDW_S32(v) ((uint32_t)(int32_t)(v))
#define LDW_64(v) ((uint64_t)(v))
ROW_SUM_INT(row_sum_b, uint8_t, uint32_t, LDW_B)
ROW_SUM_INT(row_sum_u8, uint8_t, uint32_t, LDW_U32)
ROW_SUM_INT(row_sum_u16, uint16_t, uint32_t, LDW_U32)
ROW_SUM_INT(row_sum_u32, uint32_t, uint32_t, LDW_U32)
ROW_SUM_INT(row_sum_s8, int8_t, uint32_t, LDW_S32)
ROW_SUM_INT(row_sum_s16, int16_t, uint32_t, LDW_S32)
ROW_SUM_INT(row_sum_s32, int32_t, uint32_t, LDW_S32)
ROW_SUM_INT(row_sum_64, uint64_t, uint64_t, LDW_64)
/* sum(astype(x, 64-bit integer)) read from x itself (row_sum64): 64-bit lanes. */
#define LDW_B64(v) ((uint64_t)((v) != 0))
#define LDW_S64(v) ((uint64_t)(int64_t)(v))
ROW_SUM_INT(row_sum64_b, uint8_t, uint64_t, LDW_B64)
ROW_SUM_INT(row_sum64_u8, uint8_t, uint64_t, LDW_64)
ROW_SUM_INT(row_sum64_u16, uint16_t, uint64_t, LDW_64)
ROW_SUM_INT(row_sum64_u32, uint32_t, uint64_t, LDW_64)
ROW_SUM_INT(row_sum64_s8, int8_t, uint64_t, LDW_S64)
ROW_SUM_INT(row_sum64_s16, int16_t, uint64_t, LDW_S64)
ROW_SUM_INT(row_sum64_s32, int32_t, uint64_t, LDW_S64)

#define ROW_MAX_INT(NAME, T, AT)                                                                   \
  static void NAME(const void *px, int64_t s, int64_t n, void *acc) {                              \
    const T *x = (const T *)px;                                                                    \
    if (n <= 0)                                                                                    \
      return;                                                                                      \
    T r = x[0];                                                                                    \
    if (s == 1) {                                                                                  \
      for (int64_t i = 1; i < n; i++)                                                              \
        r = x[i] > r ? x[i] : r;                                                                   \
    } else {                                                                                       \
      for (int64_t i = 1; i < n; i++)                                                              \
        r = x[i * s] > r ? x[i * s] : r;                                                           \
    }                                                                                              \
    if ((AT)r > *(AT *)acc)                                                                        \
      *(AT *)acc = (AT)r;                                                                          \
  }
ROW_MAX_INT(row_max_u8, uint8_t, uint64_t)
ROW_MAX_INT(row_max_u16, uint16_t, uint64_t)
ROW_MAX_INT(row_max_u32, uint32_t, uint64_t)
ROW_MAX_INT(row_max_u64, uint64_t, uint64_t)
ROW_MAX_INT(row_max_s8, int8_t, int64_t)
ROW_MAX_INT(row_max_s16, int16_t, int64_t)
ROW_MAX_INT(row_max_s32, int32_t, int64_t)
ROW_MAX_INT(row_max_s64, int64_t, int64_t)

static void row_max_b(const void *px, int64_t s, int64_t n, void *acc) {
  const uint8_t *x = (const uint8_t *)px;
  uint8_t any = 0;
  for (int64_t i = 0; i < n; i++)
    any |= x[i * s];
  if (any)
    *(uint64_t *)acc = 1;
}

/* ---- columns -------------------------------------------------------------- */
#define STEP_SUM(W) acc[j] += (W)v
#define STEP_MAX acc[j] = v > acc[j] ? v : acc[j]
#define STEP_FMAX                                                                                  \
  {                                                                                                \
    double d_ = (double)v, a_ = acc[j];                                                            \
    acc[j] = (a_ == a_ && (d_ > a_ || d_ != d_)) ? d_ : a_;                                        \
  }

COL_LOOP(col_sum_f32, float, double, acc[j] += (double)v)
COL_LOOP(col_sum_f64, double, double, acc[j] += v)
COL_LOOP(col_max_f32, float, double, STEP_FMAX)
COL_LOOP(col_max_f64, double, double, STEP_FMAX)
COL_LOOP(col_sum_b, uint8_t, uint64_t, acc[j] += (uint64_t)(v != 0))
COL_LOOP(col_sum_u8, uint8_t, uint64_t, STEP_SUM(uint64_t))
COL_LOOP(col_sum_u16, uint16_t, uint64_t, STEP_SUM(uint64_t))
COL_LOOP(col_sum_u32, uint32_t, uint64_t, STEP_SUM(uint64_t))
COL_LOOP(col_sum_u64, uint64_t, uint64_t, STEP_SUM(uint64_t))
COL_LOOP(col_sum_s8, int8_t, uint64_t, acc[j] += (uint64_t)(int64_t)v)
COL_LOOP(col_sum_s16, int16_t, uint64_t, acc[j] += (uint64_t)(int64_t)v)
COL_LOOP(col_sum_s32, int32_t, uint64_t, acc[j] += (uint64_t)(int64_t)v)
COL_LOOP(col_max_b, uint8_t, uint64_t, acc[j] |= (uint64_t)(v != 0))
COL_LOOP(col_max_u8, uint8_t, uint64_t, STEP_MAX)
COL_LOOP(col_max_u16, uint16_t, uint64_t, STEP_MAX)
COL_LOOP(col_max_u32, uint32_t, uint64_t, STEP_MAX)
COL_LOOP(col_max_u64, uint64_t, uint64_t, STEP_MAX)
COL_LOOP(col_max_s8, int8_t, int64_t, STEP_MAX)
COL_LOOP(col_max_s16, int16_t, int64_t, STEP_MAX)
COL_LOOP(col_max_s32, int32_t, int64_t, STEP_MAX)
COL_LOOP(col_max_s64, int64_t, int64_t, STEP_MAX)
COL_LOOP(col_sum_c64, emlx_c64, double, {
  acc[2 * j] += (double)v.re;
  acc[2 * j + 1] += (double)v.im;
})
COL_LOOP(col_max_c64, emlx_c64, emlx_c64, emlx_cv_max_c64_into(&acc[j], v))
COL_LOOP(col_sum_c128, emlx_c128, double, {
  acc[2 * j] += v.re;
  acc[2 * j + 1] += v.im;
})
COL_LOOP(col_max_c128, emlx_c128, emlx_c128, emlx_cv_max_c128_into(&acc[j], v))

COL_HALF(col_sum_f16, double, bd_load_f16, acc[j] += (double)v)
COL_HALF(col_sum_bf16, double, bd_load_bf16, acc[j] += (double)v)
COL_HALF(col_max_f16, double, bd_load_f16, STEP_FMAX)
COL_HALF(col_max_bf16, double, bd_load_bf16, STEP_FMAX)

/* ==== product, min, all and any (accumulators of the input's own type) ==== */
/* ---- float runs ----------------------------------------------------------- */
static float prod_f32_run(const float *x, int64_t s, int64_t n) {
  float r = 1.0f;
  int64_t i = 0;
  if (s == 1 && n >= 32) {
    rd_v16f a0 = *(const rd_v16f_u *)x, a1 = *(const rd_v16f_u *)(x + 16);
    for (i = 32; i + 32 <= n; i += 32) {
      a0 *= *(const rd_v16f_u *)(x + i);
      a1 *= *(const rd_v16f_u *)(x + i + 16);
    }
    rd_v16f t = a0 * a1;
    for (int w = 8; w >= 1; w /= 2) /* a fixed tree over the lanes */
      for (int j = 0; j < w; j++)
        t[j] *= t[j + w];
    r = t[0];
  }
  for (; i < n; i++)
    r *= x[i * s];
  return r;
}

static double prod_f64_run(const double *x, int64_t s, int64_t n) {
  double r = 1.0;
  int64_t i = 0;
  if (s == 1 && n >= 16) {
    rd_v8d a0 = *(const rd_v8d_u *)x, a1 = *(const rd_v8d_u *)(x + 8);
    for (i = 16; i + 16 <= n; i += 16) {
      a0 *= *(const rd_v8d_u *)(x + i);
      a1 *= *(const rd_v8d_u *)(x + i + 8);
    }
    rd_v8d t = a0 * a1;
    for (int w = 4; w >= 1; w /= 2)
      for (int j = 0; j < w; j++)
        t[j] *= t[j + w];
    r = t[0];
  }
  for (; i < n; i++)
    r *= x[i * s];
  return r;
}

/* Contiguous runs: 64 lanes of plain min (a NaN value is ignored, as MINPS
 * does; GCC turns the select into MINPS) and, on the side, an OR of "is
 * NaN" per lane; a NaN anywhere makes the run's result NaN. Fewer
 * operations per vector than a NaN-keeping select, which matters when the
 * run streams from memory on a busy core. */
#define RD_MIN_W 64
static void min_f32_run(const float *x, int64_t s, int64_t n, float *acc) {
  int64_t i = 0;
  if (s == 1 && n >= RD_MIN_W) {
    float m[RD_MIN_W];
    int32_t nan[RD_MIN_W];
    for (int j = 0; j < RD_MIN_W; j++) {
      m[j] = x[j];
      nan[j] = x[j] != x[j];
    }
    for (i = RD_MIN_W; i + RD_MIN_W <= n; i += RD_MIN_W) {
      const float *xi = x + i;
      for (int j = 0; j < RD_MIN_W; j++) {
        float v = xi[j];
        m[j] = v < m[j] ? v : m[j];
        nan[j] |= v != v;
      }
    }
    int any_nan = 0;
    for (int w = RD_MIN_W / 2; w >= 1; w /= 2) /* a fixed tree over the lanes */
      for (int j = 0; j < w; j++)
        m[j] = m[j + w] < m[j] ? m[j + w] : m[j];
    for (int j = 0; j < RD_MIN_W; j++)
      any_nan |= nan[j];
    emlx_red_min_f32_into(acc, any_nan ? NAN : m[0]);
  }
  for (; i < n; i++)
    emlx_red_min_f32_into(acc, x[i * s]);
}

static void min_f64_run(const double *x, int64_t s, int64_t n, double *acc) {
  int64_t i = 0;
  if (s == 1 && n >= 16) {
    rd_v8d m0 = *(const rd_v8d_u *)x, m1 = *(const rd_v8d_u *)(x + 8);
    for (i = 16; i + 16 <= n; i += 16) {
      rd_v8d v0 = *(const rd_v8d_u *)(x + i), v1 = *(const rd_v8d_u *)(x + i + 8);
      RD_MIN_LANES(m0, v0, rd_v8d, rd_v8l);
      RD_MIN_LANES(m1, v1, rd_v8d, rd_v8l);
    }
    for (int j = 0; j < 8; j++) {
      emlx_red_min_f64_into(acc, m0[j]);
      emlx_red_min_f64_into(acc, m1[j]);
    }
  }
  for (; i < n; i++)
    emlx_red_min_f64_into(acc, x[i * s]);
}

/* ---- rows: floats and complex --------------------------------------------- */
ROW_RUN(row_prod_f32, float, float, *acc *= prod_f32_run(x, s, n))
ROW_RUN(row_prod_f64, double, double, *acc *= prod_f64_run(x, s, n))
ROW_RUN(row_min_f32, float, float, min_f32_run(x, s, n, acc))
ROW_RUN(row_min_f64, double, double, min_f64_run(x, s, n, acc))
/* f16 / bf16: tiles widened to f32, folded as f32 runs. */
ROW_HALF(row_prod_f16, float, bd_load_f16, *acc *= prod_f32_run(t, 1, len))
ROW_HALF(row_prod_bf16, float, bd_load_bf16, *acc *= prod_f32_run(t, 1, len))
ROW_HALF(row_min_f16, float, bd_load_f16, min_f32_run(t, 1, len, acc))
ROW_HALF(row_min_bf16, float, bd_load_bf16, min_f32_run(t, 1, len, acc))

static void row_prod_c64(const void *px, int64_t s, int64_t n, void *pacc) {
  const emlx_c64 *x = (const emlx_c64 *)px;
  emlx_c64 *acc = (emlx_c64 *)pacc;
  for (int64_t i = 0; i < n; i++)
    *acc = emlx_red_cmul(*acc, x[i * s]);
}
static void row_min_c64(const void *px, int64_t s, int64_t n, void *acc) {
  const emlx_c64 *x = (const emlx_c64 *)px;
  for (int64_t i = 0; i < n; i++)
    emlx_red_min_c64_into((emlx_c64 *)acc, x[i * s]);
}
static void row_prod_c128(const void *px, int64_t s, int64_t n, void *pacc) {
  const emlx_c128 *x = (const emlx_c128 *)px;
  emlx_c128 *acc = (emlx_c128 *)pacc;
  for (int64_t i = 0; i < n; i++)
    *acc = emlx_red_zmul(*acc, x[i * s]);
}
static void row_min_c128(const void *px, int64_t s, int64_t n, void *acc) {
  const emlx_c128 *x = (const emlx_c128 *)px;
  for (int64_t i = 0; i < n; i++)
    emlx_red_min_c128_into((emlx_c128 *)acc, x[i * s]);
}

/* ---- rows: integers and logic --------------------------------------------- */
/* Signed inputs are read through the unsigned type (same bits, wrapping). */
#define ROW_INT(NAME, T, STEP)                                                                     \
  static void NAME(const void *px, int64_t s, int64_t n, void *acc) {                              \
    const T *x = (const T *)px;                                                                    \
    T r = *(T *)acc;                                                                               \
    if (s == 1) {                                                                                  \
      for (int64_t i = 0; i < n; i++) {                                                            \
        T v = x[i];                                                                                \
        STEP;                                                                                      \
      }                                                                                            \
    } else {                                                                                       \
      for (int64_t i = 0; i < n; i++) {                                                            \
        T v = x[i * s];                                                                            \
        STEP;                                                                                      \
      }                                                                                            \
    }                                                                                              \
    *(T *)acc = r;                                                                                 \
  }
#define STEP_PROD r *= v
#define STEP_MIN r = v < r ? v : r
ROW_INT(row_prod_u32, uint32_t, STEP_PROD)
ROW_INT(row_prod_u64, uint64_t, STEP_PROD)
ROW_INT(row_min_u8, uint8_t, STEP_MIN)
ROW_INT(row_min_u16, uint16_t, STEP_MIN)
ROW_INT(row_min_u32, uint32_t, STEP_MIN)
ROW_INT(row_min_u64, uint64_t, STEP_MIN)
ROW_INT(row_min_s8, int8_t, STEP_MIN)
ROW_INT(row_min_s16, int16_t, STEP_MIN)
ROW_INT(row_min_s32, int32_t, STEP_MIN)
ROW_INT(row_min_s64, int64_t, STEP_MIN)

/* product(astype(x, wider integer)) read from x itself (row_prodw,
 * col_prodw): each element extended by LD into the accumulator's type W. */
#define ROW_PROD_WIDE(NAME, T, W, LD)                                                              \
  static void NAME(const void *px, int64_t s, int64_t n, void *acc) {                              \
    const T *x = (const T *)px;                                                                    \
    W r = *(W *)acc;                                                                               \
    if (s == 1) {                                                                                  \
      for (int64_t i = 0; i < n; i++)                                                              \
        r *= LD(x[i]);                                                                             \
    } else {                                                                                       \
      for (int64_t i = 0; i < n; i++)                                                              \
        r *= LD(x[i * s]);                                                                         \
    }                                                                                              \
    *(W *)acc = r;                                                                                 \
  }
ROW_PROD_WIDE(row_prod32_b, uint8_t, uint32_t, LDW_B)
ROW_PROD_WIDE(row_prod32_u8, uint8_t, uint32_t, LDW_U32)
ROW_PROD_WIDE(row_prod32_u16, uint16_t, uint32_t, LDW_U32)
ROW_PROD_WIDE(row_prod32_s8, int8_t, uint32_t, LDW_S32)
ROW_PROD_WIDE(row_prod32_s16, int16_t, uint32_t, LDW_S32)
ROW_PROD_WIDE(row_prod64_b, uint8_t, uint64_t, LDW_B64)
ROW_PROD_WIDE(row_prod64_u8, uint8_t, uint64_t, LDW_64)
ROW_PROD_WIDE(row_prod64_u16, uint16_t, uint64_t, LDW_64)
ROW_PROD_WIDE(row_prod64_u32, uint32_t, uint64_t, LDW_64)
ROW_PROD_WIDE(row_prod64_s8, int8_t, uint64_t, LDW_S64)
ROW_PROD_WIDE(row_prod64_s16, int16_t, uint64_t, LDW_S64)
ROW_PROD_WIDE(row_prod64_s32, int32_t, uint64_t, LDW_S64)

/* all / any: an element is true when its value bits (MASK drops the sign
 * of floats) are not all zero. Runs stop early, block by block, once the
 * answer is known. */
#define RD_LOGIC_BLOCK 1024
#define ROW_LOGIC(NAME, T, MASK, IS_ALL)                                                           \
  static void NAME(const void *px, int64_t s, int64_t n, void *pacc) {                             \
    const T *x = (const T *)px;                                                                    \
    uint8_t *acc = (uint8_t *)pacc;                                                                \
    unsigned r = *acc;                                                                             \
    for (int64_t i0 = 0; i0 < n && r == (IS_ALL ? 1u : 0u); i0 += RD_LOGIC_BLOCK) {                \
      int64_t i1 = bd_min64(n, i0 + RD_LOGIC_BLOCK);                                               \
      if (s == 1) {                                                                                \
        for (int64_t i = i0; i < i1; i++) {                                                        \
          if (IS_ALL)                                                                              \
            r &= (x[i] & (T)(MASK)) != 0;                                                          \
          else                                                                                     \
            r |= (x[i] & (T)(MASK)) != 0;                                                          \
        }                                                                                          \
      } else {                                                                                     \
        for (int64_t i = i0; i < i1; i++) {                                                        \
          if (IS_ALL)                                                                              \
            r &= (x[i * s] & (T)(MASK)) != 0;                                                      \
          else                                                                                     \
            r |= (x[i * s] & (T)(MASK)) != 0;                                                      \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
    *acc = (uint8_t)r;                                                                             \
  }
#define M8 0xFFu
#define M16 0xFFFFu
#define M16F 0x7FFFu
#define M32 0xFFFFFFFFu
#define M32F 0x7FFFFFFFu
#define M64 UINT64_C(0xFFFFFFFFFFFFFFFF)
#define M64F UINT64_C(0x7FFFFFFFFFFFFFFF)
#define M64C UINT64_C(0x7FFFFFFF7FFFFFFF) /* complex: both parts without sign */
ROW_LOGIC(row_all_8, uint8_t, M8, 1)
ROW_LOGIC(row_all_16, uint16_t, M16, 1)
ROW_LOGIC(row_all_16f, uint16_t, M16F, 1)
ROW_LOGIC(row_all_32, uint32_t, M32, 1)
ROW_LOGIC(row_all_32f, uint32_t, M32F, 1)
ROW_LOGIC(row_all_64, uint64_t, M64, 1)
ROW_LOGIC(row_all_64f, uint64_t, M64F, 1)
ROW_LOGIC(row_all_64c, uint64_t, M64C, 1)
ROW_LOGIC(row_any_8, uint8_t, M8, 0)
ROW_LOGIC(row_any_16, uint16_t, M16, 0)
ROW_LOGIC(row_any_16f, uint16_t, M16F, 0)
ROW_LOGIC(row_any_32, uint32_t, M32, 0)
ROW_LOGIC(row_any_32f, uint32_t, M32F, 0)
ROW_LOGIC(row_any_64, uint64_t, M64, 0)
ROW_LOGIC(row_any_64f, uint64_t, M64F, 0)
ROW_LOGIC(row_any_64c, uint64_t, M64C, 0)
/* complex128: true when either part is non-zero (the sign bits dropped). */
static inline unsigned nz_c128(emlx_b16 v) { return ((v.w[0] | v.w[1]) & M64F) != 0; }
static void row_all_128c(const void *px, int64_t s, int64_t n, void *pacc) {
  const emlx_b16 *x = (const emlx_b16 *)px;
  uint8_t *acc = (uint8_t *)pacc;
  for (int64_t i = 0; i < n && *acc; i++)
    *acc = (uint8_t)(*acc & nz_c128(x[i * s]));
}
static void row_any_128c(const void *px, int64_t s, int64_t n, void *pacc) {
  const emlx_b16 *x = (const emlx_b16 *)px;
  uint8_t *acc = (uint8_t *)pacc;
  for (int64_t i = 0; i < n && !*acc; i++)
    *acc = (uint8_t)(*acc | nz_c128(x[i * s]));
}

/* ---- columns -------------------------------------------------------------- */
#define CSTEP_PROD acc[j] *= v
#define CSTEP_MIN acc[j] = v < acc[j] ? v : acc[j]
/* keeps NaN: a NaN accumulator fails both tests; a NaN value passes */
#define CSTEP_FMIN acc[j] = (v < acc[j] || v != v) ? v : acc[j]
#define CSTEP_ALL(MASK) acc[j] &= (uint8_t)((v & (MASK)) != 0)
#define CSTEP_ANY(MASK) acc[j] |= (uint8_t)((v & (MASK)) != 0)

COL_LOOP(col_prod_u32, uint32_t, uint32_t, CSTEP_PROD)
COL_LOOP(col_prod_u64, uint64_t, uint64_t, CSTEP_PROD)
COL_LOOP(col_prod_f32, float, float, CSTEP_PROD)
COL_LOOP(col_prod_f64, double, double, CSTEP_PROD)
COL_LOOP(col_prod_c64, emlx_c64, emlx_c64, acc[j] = emlx_red_cmul(acc[j], v))
COL_LOOP(col_min_u8, uint8_t, uint8_t, CSTEP_MIN)
COL_LOOP(col_min_u16, uint16_t, uint16_t, CSTEP_MIN)
COL_LOOP(col_min_u32, uint32_t, uint32_t, CSTEP_MIN)
COL_LOOP(col_min_u64, uint64_t, uint64_t, CSTEP_MIN)
COL_LOOP(col_min_s8, int8_t, int8_t, CSTEP_MIN)
COL_LOOP(col_min_s16, int16_t, int16_t, CSTEP_MIN)
COL_LOOP(col_min_s32, int32_t, int32_t, CSTEP_MIN)
COL_LOOP(col_min_s64, int64_t, int64_t, CSTEP_MIN)
COL_LOOP(col_min_f32, float, float, CSTEP_FMIN)
COL_LOOP(col_min_f64, double, double, CSTEP_FMIN)
COL_LOOP(col_min_c64, emlx_c64, emlx_c64, emlx_red_min_c64_into(&acc[j], v))
COL_LOOP(col_prod_c128, emlx_c128, emlx_c128, acc[j] = emlx_red_zmul(acc[j], v))
COL_LOOP(col_min_c128, emlx_c128, emlx_c128, emlx_red_min_c128_into(&acc[j], v))
COL_LOOP(col_all_8, uint8_t, uint8_t, CSTEP_ALL(M8))
COL_LOOP(col_all_16, uint16_t, uint8_t, CSTEP_ALL(M16))
COL_LOOP(col_all_16f, uint16_t, uint8_t, CSTEP_ALL(M16F))
COL_LOOP(col_all_32, uint32_t, uint8_t, CSTEP_ALL(M32))
COL_LOOP(col_all_32f, uint32_t, uint8_t, CSTEP_ALL(M32F))
COL_LOOP(col_all_64, uint64_t, uint8_t, CSTEP_ALL(M64))
COL_LOOP(col_all_64f, uint64_t, uint8_t, CSTEP_ALL(M64F))
COL_LOOP(col_all_64c, uint64_t, uint8_t, CSTEP_ALL(M64C))
COL_LOOP(col_any_8, uint8_t, uint8_t, CSTEP_ANY(M8))
COL_LOOP(col_any_16, uint16_t, uint8_t, CSTEP_ANY(M16))
COL_LOOP(col_any_16f, uint16_t, uint8_t, CSTEP_ANY(M16F))
COL_LOOP(col_any_32, uint32_t, uint8_t, CSTEP_ANY(M32))
COL_LOOP(col_any_32f, uint32_t, uint8_t, CSTEP_ANY(M32F))
COL_LOOP(col_any_64, uint64_t, uint8_t, CSTEP_ANY(M64))
COL_LOOP(col_any_64f, uint64_t, uint8_t, CSTEP_ANY(M64F))
COL_LOOP(col_any_64c, uint64_t, uint8_t, CSTEP_ANY(M64C))
COL_LOOP(col_all_128c, emlx_b16, uint8_t, acc[j] &= (uint8_t)nz_c128(v))
COL_LOOP(col_any_128c, emlx_b16, uint8_t, acc[j] |= (uint8_t)nz_c128(v))

COL_LOOP(col_prod32_b, uint8_t, uint32_t, acc[j] *= LDW_B(v))
COL_LOOP(col_prod32_u8, uint8_t, uint32_t, acc[j] *= LDW_U32(v))
COL_LOOP(col_prod32_u16, uint16_t, uint32_t, acc[j] *= LDW_U32(v))
COL_LOOP(col_prod32_s8, int8_t, uint32_t, acc[j] *= LDW_S32(v))
COL_LOOP(col_prod32_s16, int16_t, uint32_t, acc[j] *= LDW_S32(v))
COL_LOOP(col_prod64_b, uint8_t, uint64_t, acc[j] *= LDW_B64(v))
COL_LOOP(col_prod64_u8, uint8_t, uint64_t, acc[j] *= LDW_64(v))
COL_LOOP(col_prod64_u16, uint16_t, uint64_t, acc[j] *= LDW_64(v))
COL_LOOP(col_prod64_u32, uint32_t, uint64_t, acc[j] *= LDW_64(v))
COL_LOOP(col_prod64_s8, int8_t, uint64_t, acc[j] *= LDW_S64(v))
COL_LOOP(col_prod64_s16, int16_t, uint64_t, acc[j] *= LDW_S64(v))
COL_LOOP(col_prod64_s32, int32_t, uint64_t, acc[j] *= LDW_S64(v))

COL_HALF(col_prod_f16, float, bd_load_f16, CSTEP_PROD)
COL_HALF(col_prod_bf16, float, bd_load_bf16, CSTEP_PROD)
COL_HALF(col_min_f16, float, bd_load_f16, CSTEP_FMIN)
COL_HALF(col_min_bf16, float, bd_load_bf16, CSTEP_FMIN)

/* ---- the table (dtype order: b u8 u16 u32 u64 s8 s16 s32 s64 f16 f32 f64
 * bf16 c64 c128) ------------------------------------------------------------- */
const emlx_cpu_reduce_table
    EMLX_ISA_NAME(emlx_cpu_reduce) =
        {
            .row =
                {
                    [EMLX_RED_SUM] = {row_sum_b, row_sum_u8, row_sum_u16, row_sum_u32, row_sum_64,
                                      row_sum_s8, row_sum_s16, row_sum_s32, row_sum_64, row_sum_f16,
                                      row_sum_f32, row_sum_f64, row_sum_bf16, row_sum_c64,
                                      row_sum_c128},
                    [EMLX_RED_MAX] = {row_max_b, row_max_u8, row_max_u16, row_max_u32, row_max_u64,
                                      row_max_s8, row_max_s16, row_max_s32, row_max_s64,
                                      row_max_f16, row_max_f32, row_max_f64, row_max_bf16,
                                      row_max_c64, row_max_c128},
                    [EMLX_RED_PROD] = {[EMLX_UINT32] = row_prod_u32,
                                       [EMLX_INT32] = row_prod_u32,
                                       [EMLX_UINT64] = row_prod_u64,
                                       [EMLX_INT64] = row_prod_u64,
                                       [EMLX_FLOAT16] = row_prod_f16,
                                       [EMLX_FLOAT32] = row_prod_f32,
                                       [EMLX_FLOAT64] = row_prod_f64,
                                       [EMLX_BFLOAT16] = row_prod_bf16,
                                       [EMLX_COMPLEX64] = row_prod_c64,
                                       [EMLX_COMPLEX128] = row_prod_c128},
                    [EMLX_RED_MIN] = {row_min_u8, row_min_u8, row_min_u16, row_min_u32, row_min_u64,
                                      row_min_s8, row_min_s16, row_min_s32, row_min_s64,
                                      row_min_f16, row_min_f32, row_min_f64, row_min_bf16,
                                      row_min_c64, row_min_c128},
                    [EMLX_RED_ALL] =
                        {row_all_8, row_all_8, row_all_16, row_all_32, row_all_64, row_all_8,
                         row_all_16, row_all_32, row_all_64, row_all_16f, row_all_32f, row_all_64f, row_all_16f, row_all_64c,
                         row_all_128c},
                    [EMLX_RED_ANY] =
                        {row_any_8, row_any_8, row_any_16, row_any_32, row_any_64, row_any_8,
                         row_any_16, row_any_32, row_any_64, row_any_16f, row_any_32f, row_any_64f, row_any_16f, row_any_64c,
                         row_any_128c},
                },
            .col =
                {
                    [EMLX_RED_SUM] = {col_sum_b, col_sum_u8, col_sum_u16, col_sum_u32, col_sum_u64,
                                      col_sum_s8, col_sum_s16, col_sum_s32, col_sum_u64,
                                      col_sum_f16, col_sum_f32, col_sum_f64, col_sum_bf16,
                                      col_sum_c64, col_sum_c128},
                    [EMLX_RED_MAX] = {col_max_b, col_max_u8, col_max_u16, col_max_u32, col_max_u64,
                                      col_max_s8, col_max_s16, col_max_s32, col_max_s64,
                                      col_max_f16, col_max_f32, col_max_f64, col_max_bf16,
                                      col_max_c64, col_max_c128},
                    [EMLX_RED_PROD] = {[EMLX_UINT32] = col_prod_u32,
                                       [EMLX_INT32] = col_prod_u32,
                                       [EMLX_UINT64] = col_prod_u64,
                                       [EMLX_INT64] = col_prod_u64,
                                       [EMLX_FLOAT16] = col_prod_f16,
                                       [EMLX_FLOAT32] = col_prod_f32,
                                       [EMLX_FLOAT64] = col_prod_f64,
                                       [EMLX_BFLOAT16] = col_prod_bf16,
                                       [EMLX_COMPLEX64] = col_prod_c64,
                                       [EMLX_COMPLEX128] = col_prod_c128},
                    [EMLX_RED_MIN] = {col_min_u8, col_min_u8, col_min_u16, col_min_u32, col_min_u64,
                                      col_min_s8, col_min_s16, col_min_s32, col_min_s64,
                                      col_min_f16, col_min_f32, col_min_f64,
                                      col_min_bf16, col_min_c64, col_min_c128},
                    [EMLX_RED_ALL] = {col_all_8, col_all_8, col_all_16, col_all_32, col_all_64,
                                      col_all_8, col_all_16, col_all_32, col_all_64, col_all_16f,
                                      col_all_32f, col_all_64f, col_all_16f, col_all_64c,
                                      col_all_128c},
                    [EMLX_RED_ANY] = {col_any_8, col_any_8, col_any_16, col_any_32, col_any_64,
                                      col_any_8, col_any_16, col_any_32, col_any_64, col_any_16f,
                                      col_any_32f, col_any_64f, col_any_16f, col_any_64c,
                                      col_any_128c},
                },
            .row_sum64 = {[EMLX_BOOL] = row_sum64_b,
                          [EMLX_UINT8] = row_sum64_u8,
                          [EMLX_UINT16] = row_sum64_u16,
                          [EMLX_UINT32] = row_sum64_u32,
                          [EMLX_INT8] = row_sum64_s8,
                          [EMLX_INT16] = row_sum64_s16,
                          [EMLX_INT32] = row_sum64_s32},
            .row_prodw = {{[EMLX_BOOL] = row_prod32_b,
                           [EMLX_UINT8] = row_prod32_u8,
                           [EMLX_UINT16] = row_prod32_u16,
                           [EMLX_INT8] = row_prod32_s8,
                           [EMLX_INT16] = row_prod32_s16},
                          {[EMLX_BOOL] = row_prod64_b,
                           [EMLX_UINT8] = row_prod64_u8,
                           [EMLX_UINT16] = row_prod64_u16,
                           [EMLX_UINT32] = row_prod64_u32,
                           [EMLX_INT8] = row_prod64_s8,
                           [EMLX_INT16] = row_prod64_s16,
                           [EMLX_INT32] = row_prod64_s32}},
            .col_prodw = {{[EMLX_BOOL] = col_prod32_b,
                           [EMLX_UINT8] = col_prod32_u8,
                           [EMLX_UINT16] = col_prod32_u16,
                           [EMLX_INT8] = col_prod32_s8,
                           [EMLX_INT16] = col_prod32_s16},
                          {[EMLX_BOOL] = col_prod64_b,
                           [EMLX_UINT8] = col_prod64_u8,
                           [EMLX_UINT16] = col_prod64_u16,
                           [EMLX_UINT32] = col_prod64_u32,
                           [EMLX_INT8] = col_prod64_s8,
                           [EMLX_INT16] = col_prod64_s16,
                           [EMLX_INT32] = col_prod64_s32}},
};
