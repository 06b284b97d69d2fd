/* scan_body.h — inner loops of the scans (cumulative sum, product, max,
 * min), compiled per ISA by scan_{scalar,avx2,avx512}.c; table and
 * accumulator types: scan.h.
 *
 * A scan is a chain (each output needs the one before), so lines run
 * sequentially in their natural order on every ISA; what vectorises is the
 * column form (many independent chains side by side) and the folds that
 * compute chunk totals for the two-pass parallel scan. Contiguous f32/f64
 * folds use explicit lanes combined in a fixed order, so every ISA returns
 * the same bits. */
#include "simd/body.h"

#include "reduce_fold.h"
#include "scan.h"

typedef float sc_v16f __attribute__((vector_size(64)));
typedef float sc_v16f_u __attribute__((vector_size(64), aligned(4), may_alias));
typedef int32_t sc_v16i __attribute__((vector_size(64)));
typedef double sc_v8d __attribute__((vector_size(64)));
typedef double sc_v8d_u __attribute__((vector_size(64), aligned(8), may_alias));
typedef int64_t sc_v8l __attribute__((vector_size(64)));

/* ---- the binary ops, on accumulators ---------------------------------------- */
#define ID(v) (v)
/* Floats: NaN sticks in max/min (a NaN accumulator stays, a NaN value wins). */
#define F_MAX(a, b) ((a) != (a) ? (a) : ((b) > (a) || (b) != (b)) ? (b) : (a))
#define F_MIN(a, b) ((a) != (a) ? (a) : ((b) < (a) || (b) != (b)) ? (b) : (a))
#define I_MAX(a, b) ((b) > (a) ? (b) : (a))
#define I_MIN(a, b) ((b) < (a) ? (b) : (a))

static inline emlx_c64 c_add(emlx_c64 a, emlx_c64 b) {
  emlx_c64 r = {a.re + b.re, a.im + b.im};
  return r;
}
static inline emlx_c64 c_max(emlx_c64 a, emlx_c64 b) {
  emlx_cv_max_c64_into(&a, b);
  return a;
}
static inline emlx_c64 c_min(emlx_c64 a, emlx_c64 b) {
  emlx_red_min_c64_into(&a, b);
  return a;
}
static inline emlx_c128 z_add(emlx_c128 a, emlx_c128 b) {
  emlx_c128 r = {a.re + b.re, a.im + b.im};
  return r;
}
static inline emlx_c128 z_max(emlx_c128 a, emlx_c128 b) {
  emlx_cv_max_c128_into(&a, b);
  return a;
}
static inline emlx_c128 z_min(emlx_c128 a, emlx_c128 b) {
  emlx_red_min_c128_into(&a, b);
  return a;
}

/* SUF: name suffix; T: element type; AT: accumulator; LD/ST: element <->
 * accumulator; OP(a, b): the fold. */
#define SCAN_FUNCS(SUF, T, AT, LD, ST, OP)                                                         \
  static inline AT op_##SUF(AT a, AT b) { return OP(a, b); }                                       \
  static void line_##SUF(const void *px, int64_t sx, void *py, int64_t sy, int64_t n,              \
                         int inclusive, void *pacc) {                                              \
    const T *x = (const T *)px;                                                                    \
    T *y = (T *)py;                                                                                \
    AT a = *(AT *)pacc;                                                                            \
    if (inclusive && sx == 1 && sy == 1) {                                                         \
      for (int64_t i = 0; i < n; i++) {                                                            \
        a = op_##SUF(a, LD(x[i]));                                                                 \
        y[i] = ST(a);                                                                              \
      }                                                                                            \
    } else if (inclusive) {                                                                        \
      for (int64_t i = 0; i < n; i++) {                                                            \
        a = op_##SUF(a, LD(x[i * sx]));                                                            \
        y[i * sy] = ST(a);                                                                         \
      }                                                                                            \
    } else {                                                                                       \
      for (int64_t i = 0; i < n; i++) {                                                            \
        AT v = LD(x[i * sx]);                                                                      \
        y[i * sy] = ST(a);                                                                         \
        a = op_##SUF(a, v);                                                                        \
      }                                                                                            \
    }                                                                                              \
    *(AT *)pacc = a;                                                                               \
  }                                                                                                \
  static void cols_##SUF(const void *px, int64_t sx, void *py, int64_t sy, int64_t n, int64_t m,   \
                         int inclusive, void *pacc) {                                              \
    AT *acc = (AT *)pacc;                                                                          \
    for (int64_t i = 0; i < n; i++) {                                                              \
      const T *xr = (const T *)px + i * sx;                                                        \
      T *yr = (T *)py + i * sy;                                                                    \
      if (inclusive) {                                                                             \
        for (int64_t j = 0; j < m; j++) {                                                          \
          AT a = op_##SUF(acc[j], LD(xr[j]));                                                      \
          acc[j] = a;                                                                              \
          yr[j] = ST(a);                                                                           \
        }                                                                                          \
      } else {                                                                                     \
        for (int64_t j = 0; j < m; j++) {                                                          \
          AT a = acc[j], v = LD(xr[j]);                                                            \
          yr[j] = ST(a);                                                                           \
          acc[j] = op_##SUF(a, v);                                                                 \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
  static void fold_##SUF(const void *px, int64_t sx, int64_t n, int64_t m, void *pacc) {           \
    AT *acc = (AT *)pacc;                                                                          \
    for (int64_t i = 0; i < n; i++) {                                                              \
      const T *xr = (const T *)px + i * sx;                                                        \
      for (int64_t j = 0; j < m; j++)                                                              \
        acc[j] = op_##SUF(acc[j], LD(xr[j]));                                                      \
    }                                                                                              \
  }                                                                                                \
  static void comb_##SUF(void *pacc, const void *pv, int64_t m) {                                  \
    AT *acc = (AT *)pacc;                                                                          \
    const AT *v = (const AT *)pv;                                                                  \
    for (int64_t j = 0; j < m; j++)                                                                \
      acc[j] = op_##SUF(acc[j], v[j]);                                                             \
  }

#define ADD(a, b) ((a) + (b))
#define MUL(a, b) ((a) * (b))
/* Narrow unsigned products go through uint32_t (int promotion would overflow). */
#define MUL32(a, b) ((uint32_t)(a) * (uint32_t)(b))
#define F16_LD emlx_cv_f16_to_f32
#define F16_ST emlx_cv_f32_to_f16
#define BF16_LD emlx_cv_bf16_to_f32
#define BF16_ST emlx_cv_f32_to_bf16

#define INT_SET(W, UT, ST_)                                                                        \
  SCAN_FUNCS(sum_u##W, UT, UT, ID, ID, ADD)                                                        \
  SCAN_FUNCS(prod_u##W, UT, UT, ID, ID, MUL32)                                                     \
  SCAN_FUNCS(max_u##W, UT, UT, ID, ID, I_MAX)                                                      \
  SCAN_FUNCS(min_u##W, UT, UT, ID, ID, I_MIN)                                                      \
  SCAN_FUNCS(max_s##W, ST_, ST_, ID, ID, I_MAX)                                                    \
  SCAN_FUNCS(min_s##W, ST_, ST_, ID, ID, I_MIN)
INT_SET(8, uint8_t, int8_t)
INT_SET(16, uint16_t, int16_t)
INT_SET(32, uint32_t, int32_t)
SCAN_FUNCS(sum_u64, uint64_t, uint64_t, ID, ID, ADD)
SCAN_FUNCS(prod_u64, uint64_t, uint64_t, ID, ID, MUL)
SCAN_FUNCS(max_u64, uint64_t, uint64_t, ID, ID, I_MAX)
SCAN_FUNCS(min_u64, uint64_t, uint64_t, ID, ID, I_MIN)
SCAN_FUNCS(max_s64, int64_t, int64_t, ID, ID, I_MAX)
SCAN_FUNCS(min_s64, int64_t, int64_t, ID, ID, I_MIN)

#define FLOAT_SET(SUF, T, AT, LD, ST)                                                              \
  SCAN_FUNCS(sum_##SUF, T, AT, LD, ST, ADD)                                                        \
  SCAN_FUNCS(prod_##SUF, T, AT, LD, ST, MUL)                                                       \
  SCAN_FUNCS(max_##SUF, T, AT, LD, ST, F_MAX)                                                      \
  SCAN_FUNCS(min_##SUF, T, AT, LD, ST, F_MIN)
FLOAT_SET(f16, uint16_t, float, F16_LD, F16_ST)
FLOAT_SET(bf16, uint16_t, float, BF16_LD, BF16_ST)
FLOAT_SET(f32x, float, float, ID, ID)
FLOAT_SET(f64x, double, double, ID, ID)

SCAN_FUNCS(sum_c64, emlx_c64, emlx_c64, ID, ID, c_add)
SCAN_FUNCS(prod_c64, emlx_c64, emlx_c64, ID, ID, emlx_red_cmul)
SCAN_FUNCS(max_c64, emlx_c64, emlx_c64, ID, ID, c_max)
SCAN_FUNCS(min_c64, emlx_c64, emlx_c64, ID, ID, c_min)
SCAN_FUNCS(sum_c128, emlx_c128, emlx_c128, ID, ID, z_add)
SCAN_FUNCS(prod_c128, emlx_c128, emlx_c128, ID, ID, emlx_red_zmul)
SCAN_FUNCS(max_c128, emlx_c128, emlx_c128, ID, ID, z_max)
SCAN_FUNCS(min_c128, emlx_c128, emlx_c128, ID, ID, z_min)

/* ---- lane folds of contiguous f32 / f64 lines ---------------------------------- */
/* Lane-wise NaN-keeping max / min (take v where it wins or is NaN, unless m
 * is NaN already). */
#define LANES_SEL(m, v, CMP, VT, IT)                                                               \
  do {                                                                                             \
    IT k_ = (((v)CMP(m)) | ((v) != (v))) & ((m) == (m));                                           \
    (m) = (VT)(((IT)(v)&k_) | ((IT)(m) & ~k_));                                                    \
  } while (0)

#define LANE_FOLD(SUF, T, VT, VT_U, IT, W, STEP, FINAL)                                            \
  static void fold_##SUF(const void *px, int64_t sx, int64_t n, int64_t m, void *pacc) {           \
    const T *x = (const T *)px;                                                                    \
    if (m != 1 || n < 4 * W || (sx != 1 && sx != -1)) {                                            \
      fold_##SUF##x(px, sx, n, m, pacc);                                                           \
      return;                                                                                      \
    }                                                                                              \
    if (sx == -1) /* a reverse line: fold the same elements forwards */                            \
      x -= n - 1;                                                                                  \
    VT a0 = *(const VT_U *)x, a1 = *(const VT_U *)(x + W);                                         \
    int64_t i = 2 * W;                                                                             \
    for (; i + 2 * W <= n; i += 2 * W) {                                                           \
      VT v0 = *(const VT_U *)(x + i), v1 = *(const VT_U *)(x + i + W);                             \
      STEP(a0, v0);                                                                                \
      STEP(a1, v1);                                                                                \
    }                                                                                              \
    STEP(a0, a1);                                                                                  \
    T r = a0[0];                                                                                   \
    for (int j = 1; j < W; j++)                                                                    \
      r = FINAL(r, a0[j]);                                                                         \
    for (; i < n; i++)                                                                             \
      r = FINAL(r, x[i]);                                                                          \
    *(T *)pacc = FINAL(*(T *)pacc, r);                                                             \
  }
#define V_ADD(a, v) ((a) += (v))
#define V_MUL(a, v) ((a) *= (v))
#define V_MAXF(a, v) LANES_SEL(a, v, >, sc_v16f, sc_v16i)
#define V_MINF(a, v) LANES_SEL(a, v, <, sc_v16f, sc_v16i)
#define V_MAXD(a, v) LANES_SEL(a, v, >, sc_v8d, sc_v8l)
#define V_MIND(a, v) LANES_SEL(a, v, <, sc_v8d, sc_v8l)
LANE_FOLD(sum_f32, float, sc_v16f, sc_v16f_u, sc_v16i, 16, V_ADD, ADD)
LANE_FOLD(prod_f32, float, sc_v16f, sc_v16f_u, sc_v16i, 16, V_MUL, MUL)
LANE_FOLD(max_f32, float, sc_v16f, sc_v16f_u, sc_v16i, 16, V_MAXF, F_MAX)
LANE_FOLD(min_f32, float, sc_v16f, sc_v16f_u, sc_v16i, 16, V_MINF, F_MIN)
LANE_FOLD(sum_f64, double, sc_v8d, sc_v8d_u, sc_v8l, 8, V_ADD, ADD)
LANE_FOLD(prod_f64, double, sc_v8d, sc_v8d_u, sc_v8l, 8, V_MUL, MUL)
LANE_FOLD(max_f64, double, sc_v8d, sc_v8d_u, sc_v8l, 8, V_MAXD, F_MAX)
LANE_FOLD(min_f64, double, sc_v8d, sc_v8d_u, sc_v8l, 8, V_MIND, F_MIN)

/* ---- the table (dtype order: b u8 u16 u32 u64 s8 s16 s32 s64 f16 f32 f64
 * bf16 c64 c128) ------------------------------------------------------------- */
#define ROW_OF(K, P)                                                                               \
  [EMLX_SCAN_SUM] = {NULL,          K##sum_u8,     K##sum_u16,  K##sum_u32, K##sum_u64,            \
                     K##sum_u8,     K##sum_u16,    K##sum_u32,  K##sum_u64, K##sum_f16,            \
                     K##sum_f32##P, K##sum_f64##P, K##sum_bf16, K##sum_c64, K##sum_c128},                       \
  [EMLX_SCAN_PROD] = {K##prod_u8,     K##prod_u8,     K##prod_u16,  K##prod_u32, K##prod_u64,      \
                      K##prod_u8,     K##prod_u16,    K##prod_u32,  K##prod_u64, K##prod_f16,      \
                      K##prod_f32##P, K##prod_f64##P, K##prod_bf16, K##prod_c64, K##prod_c128},                  \
  [EMLX_SCAN_MAX] = {K##max_u8,     K##max_u8,     K##max_u16,  K##max_u32, K##max_u64,            \
                     K##max_s8,     K##max_s16,    K##max_s32,  K##max_s64, K##max_f16,            \
                     K##max_f32##P, K##max_f64##P, K##max_bf16, K##max_c64, K##max_c128},                       \
  [EMLX_SCAN_MIN] = {K##min_u8,     K##min_u8,     K##min_u16,  K##min_u32, K##min_u64,            \
                     K##min_s8,     K##min_s16,    K##min_s32,  K##min_s64, K##min_f16,            \
                     K##min_f32##P, K##min_f64##P, K##min_bf16, K##min_c64, K##min_c128}

const emlx_cpu_scan_table EMLX_ISA_NAME(emlx_cpu_scan) = {
    .line = {ROW_OF(line_, x)},
    .cols = {ROW_OF(cols_, x)},
    .fold = {ROW_OF(fold_, )},
    .combine = {ROW_OF(comb_, x)},
};
