/* reduce_body.h — inner loops of sum and max, compiled per ISA by
 * reduce_{scalar,avx2,avx512}.c.
 *
 * row: fold a 1-D run into one accumulator; col: fold one row into a row of
 * accumulators (accumulator types in isa.h). Float sums of contiguous runs
 * use explicit lanes (GCC vector extensions: 32 f32 lanes widened to f64, or
 * 32 f64 lanes) combined in a fixed order, so every ISA returns the same
 * bits; strided runs use one plain accumulator. Integer loops are plain
 * (GCC vectorises them) and wrap in unsigned types. */
#include "simd/body.h"

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
static void row_sum_f32(const void *x, int64_t s, int64_t n, void *acc) {
  *(double *)acc += sum_f32_run((const float *)x, s, n);
}
static void row_sum_f64(const void *x, int64_t s, int64_t n, void *acc) {
  *(double *)acc += sum_f64_run((const double *)x, s, n);
}
static void row_max_f32(const void *x, int64_t s, int64_t n, void *acc) {
  max_f32_run((const float *)x, s, n, (double *)acc);
}
static void row_max_f64(const void *x, int64_t s, int64_t n, void *acc) {
  max_f64_run((const double *)x, s, n, (double *)acc);
}
#define ROW_HALF(NAME, LOAD, BODY)                                                                 \
  static void NAME(const void *px, int64_t s, int64_t n, void *pacc) {                             \
    const uint16_t *x = (const uint16_t *)px;                                                      \
    double *acc = (double *)pacc;                                                                  \
    float t[EMLX_TILE];                                                                            \
    for (int64_t i0 = 0; i0 < n; i0 += EMLX_TILE) {                                                \
      int64_t len = bd_min64(EMLX_TILE, n - i0);                                                   \
      LOAD(x + i0 * s, s, len, t);                                                                 \
      BODY;                                                                                        \
    }                                                                                              \
  }
ROW_HALF(row_sum_f16, bd_load_f16, *acc += sum_f32_run(t, 1, len))
ROW_HALF(row_sum_bf16, bd_load_bf16, *acc += sum_f32_run(t, 1, len))
ROW_HALF(row_max_f16, bd_load_f16, max_f32_run(t, 1, len, acc))
ROW_HALF(row_max_bf16, bd_load_bf16, max_f32_run(t, 1, len, acc))

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

#define COL_HALF(NAME, LOAD, BODY)                                                                 \
  static void NAME(const void *px, int64_t s, int64_t m, void *pacc) {                             \
    const uint16_t *x = (const uint16_t *)px;                                                      \
    float t[EMLX_TILE];                                                                            \
    for (int64_t i0 = 0; i0 < m; i0 += EMLX_TILE) {                                                \
      int64_t len = bd_min64(EMLX_TILE, m - i0);                                                   \
      double *acc = (double *)pacc + i0;                                                           \
      LOAD(x + i0 * s, s, len, t);                                                                 \
      for (int64_t j = 0; j < len; j++) {                                                          \
        float v = t[j];                                                                            \
        BODY;                                                                                      \
      }                                                                                            \
    }                                                                                              \
  }
COL_HALF(col_sum_f16, bd_load_f16, acc[j] += (double)v)
COL_HALF(col_sum_bf16, bd_load_bf16, acc[j] += (double)v)
COL_HALF(col_max_f16, bd_load_f16, STEP_FMAX)
COL_HALF(col_max_bf16, bd_load_bf16, STEP_FMAX)

/* ---- the table ------------------------------------------------------------ */
const emlx_cpu_reduce_table EMLX_ISA_NAME(emlx_cpu_reduce) = {
    .row =
        {
            [EMLX_CPU_SUM] = {row_sum_b, row_sum_u8, row_sum_u16, row_sum_u32, row_sum_64,
                              row_sum_s8, row_sum_s16, row_sum_s32, row_sum_64, row_sum_f16,
                              row_sum_f32, row_sum_f64, row_sum_bf16, row_sum_c64},
            [EMLX_CPU_MAX] = {row_max_b, row_max_u8, row_max_u16, row_max_u32, row_max_u64,
                              row_max_s8, row_max_s16, row_max_s32, row_max_s64, row_max_f16,
                              row_max_f32, row_max_f64, row_max_bf16, row_max_c64},
        },
    .col =
        {
            [EMLX_CPU_SUM] = {col_sum_b, col_sum_u8, col_sum_u16, col_sum_u32, col_sum_u64,
                              col_sum_s8, col_sum_s16, col_sum_s32, col_sum_u64, col_sum_f16,
                              col_sum_f32, col_sum_f64, col_sum_bf16, col_sum_c64},
            [EMLX_CPU_MAX] = {col_max_b, col_max_u8, col_max_u16, col_max_u32, col_max_u64,
                              col_max_s8, col_max_s16, col_max_s32, col_max_s64, col_max_f16,
                              col_max_f32, col_max_f64, col_max_bf16, col_max_c64},
        },
};
