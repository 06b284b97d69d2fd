/* sort_body.h — the key loops of sort and argsort (turning a line into
 * order-preserving keys, and sorted keys back into values), compiled per ISA
 * by sort_{scalar,avx2,avx512}.c; keys: sort_keys.h, table: sort.h.
 * The loops are written as selects without branches, with a unit-stride
 * variant, so that GCC vectorises them for the ISA at hand. */
#include "simd/body.h"

#include "sort.h"
#include "sort_keys.h"

/* Keys of x[i * s], i in [i0, i1), complemented when descending, stored as
 * KT, or with pack as (key << 32 | i) uint64 pairs; returns non-zero when a
 * value is -0.0 or NaN (only without pack). */
#define GATHER_FN(NAME, T, KT, KEY, LOSSY)                                                         \
  static int NAME(const void *px, int64_t s, void *keys, int pack, int desc, int64_t i0,           \
                  int64_t i1) {                                                                    \
    const T *x_ = (const T *)px;                                                                   \
    KT flip_ = desc ? (KT) ~(KT)0 : (KT)0;                                                         \
    unsigned lossy = 0; /* an unsigned OR-reduction vectorises, a bool one does not */             \
    if (pack) {                                                                                    \
      uint64_t *k_ = (uint64_t *)keys;                                                             \
      if (s == 1) {                                                                                \
        for (int64_t i = i0; i < i1; i++) {                                                        \
          T v = x_[i];                                                                             \
          k_[i] = (uint64_t)(KT)((KEY) ^ flip_) << 32 | (uint64_t)i;                               \
        }                                                                                          \
      } else {                                                                                     \
        for (int64_t i = i0; i < i1; i++) {                                                        \
          T v = x_[i * s];                                                                         \
          k_[i] = (uint64_t)(KT)((KEY) ^ flip_) << 32 | (uint64_t)i;                               \
        }                                                                                          \
      }                                                                                            \
      return 0;                                                                                    \
    }                                                                                              \
    KT *k_ = (KT *)keys;                                                                           \
    if (s == 1) {                                                                                  \
      for (int64_t i = i0; i < i1; i++) {                                                          \
        T v = x_[i];                                                                               \
        lossy |= (unsigned)(LOSSY);                                                                \
        k_[i] = (KT)((KEY) ^ flip_);                                                               \
      }                                                                                            \
    } else {                                                                                       \
      for (int64_t i = i0; i < i1; i++) {                                                          \
        T v = x_[i * s];                                                                           \
        lossy |= (unsigned)(LOSSY);                                                                \
        k_[i] = (KT)((KEY) ^ flip_);                                                               \
      }                                                                                            \
    }                                                                                              \
    return lossy != 0;                                                                             \
  }
#define F16_LOSSY(v, INF) ((v) == 0x8000u || ((v)&0x7FFFu) > (INF))
#define F32_LOSSY(v) ((v) == 0x80000000u || ((v)&0x7FFFFFFFu) > 0x7F800000u)
#define F64_LOSSY(v)                                                                               \
  ((v) == (UINT64_C(1) << 63) || ((v) & ~(UINT64_C(1) << 63)) > UINT64_C(0x7FF0000000000000))

/* 8-byte keys never pack (their pairs are kept side by side). */
GATHER_FN(gather_u8, uint8_t, uint8_t, v, 0)
GATHER_FN(gather_s8, uint8_t, uint8_t, emlx_key_s8(v), 0)
GATHER_FN(gather_u16, uint16_t, uint16_t, v, 0)
GATHER_FN(gather_s16, uint16_t, uint16_t, emlx_key_s16(v), 0)
GATHER_FN(gather_f16, uint16_t, uint16_t, emlx_key_f16(v), F16_LOSSY(v, 0x7C00u))
GATHER_FN(gather_bf16, uint16_t, uint16_t, emlx_key_bf16(v), F16_LOSSY(v, 0x7F80u))
GATHER_FN(gather_u32, uint32_t, uint32_t, v, 0)
GATHER_FN(gather_s32, uint32_t, uint32_t, emlx_key_s32(v), 0)
GATHER_FN(gather_f32, uint32_t, uint32_t, emlx_key_f32(v), F32_LOSSY(v))
GATHER_FN(gather_u64, uint64_t, uint64_t, v, 0)
GATHER_FN(gather_s64, uint64_t, uint64_t, emlx_key_s64(v), 0)
GATHER_FN(gather_f64, uint64_t, uint64_t, emlx_key_f64(v), F64_LOSSY(v))
GATHER_FN(gather_c64, uint64_t, uint64_t, emlx_key_c64(v),
          F32_LOSSY((uint32_t)v) || F32_LOSSY((uint32_t)(v >> 32)))

/* Sorted keys k[i], i in [i0, i1), back to values y[i * s]. */
#define EMIT_FN(NAME, T, KT, UNKEY)                                                                \
  static void NAME(const void *keys, void *py, int64_t s, int desc, int64_t i0, int64_t i1) {      \
    const KT *k_ = (const KT *)keys;                                                               \
    T *y_ = (T *)py;                                                                               \
    KT flip_ = desc ? (KT) ~(KT)0 : (KT)0;                                                         \
    if (s == 1) {                                                                                  \
      for (int64_t i = i0; i < i1; i++) {                                                          \
        KT k = (KT)(k_[i] ^ flip_);                                                                \
        y_[i] = (T)(UNKEY);                                                                        \
      }                                                                                            \
    } else {                                                                                       \
      for (int64_t i = i0; i < i1; i++) {                                                          \
        KT k = (KT)(k_[i] ^ flip_);                                                                \
        y_[i * s] = (T)(UNKEY);                                                                    \
      }                                                                                            \
    }                                                                                              \
  }
EMIT_FN(emit_u8, uint8_t, uint8_t, k)
EMIT_FN(emit_s8, uint8_t, uint8_t, k ^ 0x80u)
EMIT_FN(emit_u16, uint16_t, uint16_t, k)
EMIT_FN(emit_s16, uint16_t, uint16_t, k ^ 0x8000u)
EMIT_FN(emit_h16, uint16_t, uint16_t, emlx_unkey_h16(k))
EMIT_FN(emit_u32, uint32_t, uint32_t, k)
EMIT_FN(emit_s32, uint32_t, uint32_t, k ^ 0x80000000u)
EMIT_FN(emit_f32, uint32_t, uint32_t, emlx_unkey_f32(k))
EMIT_FN(emit_u64, uint64_t, uint64_t, k)
EMIT_FN(emit_s64, uint64_t, uint64_t, k ^ (UINT64_C(1) << 63))
EMIT_FN(emit_f64, uint64_t, uint64_t, emlx_unkey_f64(k))
EMIT_FN(emit_c64, uint64_t, uint64_t, emlx_unkey_c64(k))

/* ---- the table (dtype order: b u8 u16 u32 u64 s8 s16 s32 s64 f16 f32 f64
 * bf16 c64) ------------------------------------------------------------------ */
const emlx_cpu_sort_table EMLX_ISA_NAME(emlx_cpu_sort) = {
    .gather = {gather_u8, gather_u8, gather_u16, gather_u32, gather_u64, gather_s8, gather_s16,
               gather_s32, gather_s64, gather_f16, gather_f32, gather_f64, gather_bf16, gather_c64},
    .emit = {emit_u8, emit_u8, emit_u16, emit_u32, emit_u64, emit_s8, emit_s16, emit_s32, emit_s64,
             emit_h16, emit_f32, emit_f64, emit_h16, emit_c64},
};
