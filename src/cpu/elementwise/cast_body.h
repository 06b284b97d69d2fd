/* cast_body.h — astype inner loops for all 15 x 15 dtype pairs, compiled
 * per ISA by cast_{scalar,avx2,avx512}.c.
 *
 * Each pair is one loop: load the source into an intermediate kind (u32,
 * i32, u64, i64, f32, f64, c64, c128) and convert with convert.h's rules, which
 * are exact where the intermediate is exact and round once otherwise. Pairs
 * with f16 on either side stage through f32 tiles so the F16C/AVX-512
 * conversions do the work (except those that need a correctly rounded path
 * from f64 or wide integers, which stay in software: same bits everywhere).
 * The diagonal copies bits (NaN payloads included). */
#include "simd/body.h"

#define LD_B(x) ((int32_t)((x) != 0))
#define LD_U32(x) ((uint32_t)(x))
#define LD_I32(x) ((int32_t)(x))
#define LD_ID(x) (x)
#define LD_F16(x) emlx_cv_f16_to_f32(x)
#define LD_BF16(x) emlx_cv_bf16_to_f32(x)

#define CAST_FN(S, ST, K, LD, D, DT)                                                               \
  __attribute__((unused)) static void cast_##S##_##D(const void *pi, int64_t s, void *po,          \
                                                     int64_t n) {                                  \
    const ST *a = (const ST *)pi;                                                                  \
    DT *o = (DT *)po;                                                                              \
    if (s == 1) {                                                                                  \
      for (int64_t i = 0; i < n; i++)                                                              \
        o[i] = emlx_cv_##K##_##D(LD(a[i]));                                                        \
    } else {                                                                                       \
      for (int64_t i = 0; i < n; i++)                                                              \
        o[i] = emlx_cv_##K##_##D(LD(a[i * s]));                                                    \
    }                                                                                              \
  }

#define CAST_TO_ALL(S, ST, K, LD)                                                                  \
  CAST_FN(S, ST, K, LD, b, uint8_t)                                                                \
  CAST_FN(S, ST, K, LD, u8, uint8_t)                                                               \
  CAST_FN(S, ST, K, LD, u16, uint16_t)                                                             \
  CAST_FN(S, ST, K, LD, u32, uint32_t)                                                             \
  CAST_FN(S, ST, K, LD, u64, uint64_t)                                                             \
  CAST_FN(S, ST, K, LD, s8, int8_t)                                                                \
  CAST_FN(S, ST, K, LD, s16, int16_t)                                                              \
  CAST_FN(S, ST, K, LD, s32, int32_t)                                                              \
  CAST_FN(S, ST, K, LD, s64, int64_t)                                                              \
  CAST_FN(S, ST, K, LD, f16, uint16_t)                                                             \
  CAST_FN(S, ST, K, LD, f32, float)                                                                \
  CAST_FN(S, ST, K, LD, f64, double)                                                               \
  CAST_FN(S, ST, K, LD, bf16, uint16_t)                                                            \
  CAST_FN(S, ST, K, LD, c64, emlx_c64)                                                             \
  CAST_FN(S, ST, K, LD, c128, emlx_c128)

CAST_TO_ALL(b, uint8_t, i32, LD_B)
CAST_TO_ALL(u8, uint8_t, u32, LD_U32)
CAST_TO_ALL(u16, uint16_t, u32, LD_U32)
CAST_TO_ALL(u32, uint32_t, u32, LD_U32)
CAST_TO_ALL(u64, uint64_t, u64, LD_ID)
CAST_TO_ALL(s8, int8_t, i32, LD_I32)
CAST_TO_ALL(s16, int16_t, i32, LD_I32)
CAST_TO_ALL(s32, int32_t, i32, LD_I32)
CAST_TO_ALL(s64, int64_t, i64, LD_ID)
CAST_TO_ALL(f16, uint16_t, f32, LD_F16)
CAST_TO_ALL(f32, float, f32, LD_ID)
CAST_TO_ALL(f64, double, f64, LD_ID)
CAST_TO_ALL(bf16, uint16_t, f32, LD_BF16)
CAST_TO_ALL(c64, emlx_c64, c64, LD_ID)
CAST_TO_ALL(c128, emlx_c128, c128, LD_ID)

/* ---- f16 through f32 tiles ------------------------------------------------ */
/* f16 -> D: widen a tile with the vector layer, then the f32 -> D loop. */
#define CAST_FROM_F16(D, DSIZE)                                                                    \
  static void tcast_f16_##D(const void *pi, int64_t s, void *po, int64_t n) {                      \
    const uint16_t *a = (const uint16_t *)pi;                                                      \
    float t[EMLX_TILE];                                                                            \
    for (int64_t i0 = 0; i0 < n; i0 += EMLX_TILE) {                                                \
      int64_t len = bd_min64(EMLX_TILE, n - i0);                                                   \
      bd_load_f16(a + i0 * s, s, len, t);                                                          \
      cast_f32_##D(t, 1, (char *)po + i0 * (DSIZE), len);                                          \
    }                                                                                              \
  }
CAST_FROM_F16(b, 1)
CAST_FROM_F16(u8, 1)
CAST_FROM_F16(u16, 2)
CAST_FROM_F16(u32, 4)
CAST_FROM_F16(u64, 8)
CAST_FROM_F16(s8, 1)
CAST_FROM_F16(s16, 2)
CAST_FROM_F16(s32, 4)
CAST_FROM_F16(s64, 8)
CAST_FROM_F16(f64, 8)
CAST_FROM_F16(bf16, 2)
CAST_FROM_F16(c64, 8)
CAST_FROM_F16(c128, 16)

static void tcast_f16_f32(const void *pi, int64_t s, void *po, int64_t n) {
  const uint16_t *a = (const uint16_t *)pi;
  float *o = (float *)po;
  for (int64_t i0 = 0; i0 < n; i0 += EMLX_TILE)
    bd_load_f16(a + i0 * s, s, bd_min64(EMLX_TILE, n - i0), o + i0);
}

/* S -> f16 for sources whose value is exact in f32: S -> f32 tile, narrow. */
#define CAST_TO_F16(S, SSIZE)                                                                      \
  static void tcast_##S##_f16(const void *pi, int64_t s, void *po, int64_t n) {                    \
    uint16_t *o = (uint16_t *)po;                                                                  \
    float t[EMLX_TILE];                                                                            \
    for (int64_t i0 = 0; i0 < n; i0 += EMLX_TILE) {                                                \
      int64_t len = bd_min64(EMLX_TILE, n - i0);                                                   \
      cast_##S##_f32((const char *)pi + i0 * s * (SSIZE), s, t, len);                              \
      bd_store_f16(t, o + i0, len);                                                                \
    }                                                                                              \
  }
CAST_TO_F16(b, 1)
CAST_TO_F16(u8, 1)
CAST_TO_F16(u16, 2)
CAST_TO_F16(s8, 1)
CAST_TO_F16(s16, 2)
CAST_TO_F16(bf16, 2)
CAST_TO_F16(c64, 8)

static void tcast_f32_f16(const void *pi, int64_t s, void *po, int64_t n) {
  const float *a = (const float *)pi;
  uint16_t *o = (uint16_t *)po;
  if (s == 1) {
    bd_store_f16(a, o, n);
    return;
  }
  float t[EMLX_TILE];
  for (int64_t i0 = 0; i0 < n; i0 += EMLX_TILE) {
    int64_t len = bd_min64(EMLX_TILE, n - i0);
    for (int64_t j = 0; j < len; j++)
      t[j] = a[(i0 + j) * s];
    bd_store_f16(t, o + i0, len);
  }
}

/* ---- bit copies (the diagonal) -------------------------------------------- */
#define CAST_COPY(NAME, SIZE)                                                                      \
  static void NAME(const void *pi, int64_t s, void *po, int64_t n) {                               \
    const char *a = (const char *)pi;                                                              \
    char *o = (char *)po;                                                                          \
    if (s == 1) {                                                                                  \
      if (n > 0 && a != o)                                                                         \
        memmove(o, a, (size_t)n *(SIZE));                                                          \
      return;                                                                                      \
    }                                                                                              \
    for (int64_t i = 0; i < n; i++)                                                                \
      memcpy(o + i * (SIZE), a + i * s * (SIZE), (SIZE));                                          \
  }
CAST_COPY(copy_1, 1)
CAST_COPY(copy_2, 2)
CAST_COPY(copy_4, 4)
CAST_COPY(copy_8, 8)
CAST_COPY(copy_16, 16)

/* ---- the table ------------------------------------------------------------ */
/* Row S, in emlx_dtype order; X is the diagonal (a copy). */
#define CAST_ROW(S, P)                                                                             \
  {                                                                                                \
    P##b, P##u8, P##u16, P##u32, P##u64, P##s8, P##s16, P##s32, P##s64, P##f16, P##f32, P##f64,    \
        P##bf16, P##c64, P##c128                                                                   \
  }

#define cast_b_b copy_1
#define cast_u8_u8 copy_1
#define cast_u16_u16 copy_2
#define cast_u32_u32 copy_4
#define cast_u64_u64 copy_8
#define cast_s8_s8 copy_1
#define cast_s16_s16 copy_2
#define cast_s32_s32 copy_4
#define cast_s64_s64 copy_8
#define tcast_f16_f16 copy_2
#define cast_f32_f32 copy_4
#define cast_f64_f64 copy_8
#define cast_bf16_bf16 copy_2
#define cast_c64_c64 copy_8
#define cast_c128_c128 copy_16
#define cast_b_f16 tcast_b_f16
#define cast_u8_f16 tcast_u8_f16
#define cast_u16_f16 tcast_u16_f16
#define cast_s8_f16 tcast_s8_f16
#define cast_s16_f16 tcast_s16_f16
#define cast_f32_f16 tcast_f32_f16
#define cast_bf16_f16 tcast_bf16_f16
#define cast_c64_f16 tcast_c64_f16

const emlx_cpu_cast_table EMLX_ISA_NAME(emlx_cpu_cast) = {
    .cast =
        {
            [EMLX_BOOL] = CAST_ROW(b, cast_b_),
            [EMLX_UINT8] = CAST_ROW(u8, cast_u8_),
            [EMLX_UINT16] = CAST_ROW(u16, cast_u16_),
            [EMLX_UINT32] = CAST_ROW(u32, cast_u32_),
            [EMLX_UINT64] = CAST_ROW(u64, cast_u64_),
            [EMLX_INT8] = CAST_ROW(s8, cast_s8_),
            [EMLX_INT16] = CAST_ROW(s16, cast_s16_),
            [EMLX_INT32] = CAST_ROW(s32, cast_s32_),
            [EMLX_INT64] = CAST_ROW(s64, cast_s64_),
            [EMLX_FLOAT16] = CAST_ROW(f16, tcast_f16_),
            [EMLX_FLOAT32] = CAST_ROW(f32, cast_f32_),
            [EMLX_FLOAT64] = CAST_ROW(f64, cast_f64_),
            [EMLX_BFLOAT16] = CAST_ROW(bf16, cast_bf16_),
            [EMLX_COMPLEX64] = CAST_ROW(c64, cast_c64_),
            [EMLX_COMPLEX128] = CAST_ROW(c128, cast_c128_),
        },
};
