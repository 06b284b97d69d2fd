/* bits_body.h — the portable bit-counting loops, compiled once per ISA unit
 * (bits_scalar.c, bits_avx2.c, bits_avx512.c); the table is named
 * BITS_TABLE unless BITS_NO_TABLE is defined.
 * __builtin_clzll / __builtin_popcountll become LZCNT/POPCNT where the
 * unit's flags allow, a short sequence otherwise. */
#include <stdint.h>

#include "bits.h"

#define BITS_LOOPS(W, T)                                                                           \
  static void clz_##W(const void *in, int64_t s, void *out, int64_t n) {                           \
    const T *x = (const T *)in;                                                                    \
    T *y = (T *)out;                                                                               \
    for (int64_t i = 0; i < n; i++) {                                                              \
      unsigned long long v = x[i * s];                                                             \
      y[i] = (T)(v ? __builtin_clzll(v) - (64 - W) : W);                                           \
    }                                                                                              \
  }                                                                                                \
  static void pop_##W(const void *in, int64_t s, void *out, int64_t n) {                           \
    const T *x = (const T *)in;                                                                    \
    T *y = (T *)out;                                                                               \
    for (int64_t i = 0; i < n; i++)                                                                \
      y[i] = (T)__builtin_popcountll(x[i * s]);                                                    \
  }

BITS_LOOPS(8, uint8_t)
BITS_LOOPS(16, uint16_t)
BITS_LOOPS(32, uint32_t)
BITS_LOOPS(64, uint64_t)

#ifndef BITS_NO_TABLE /* bits_avx512.c builds its own table on these loops */
const emlx_cpu_bits_table BITS_TABLE = {
    .loop = {[EMLX_BITS_CLZ] = {clz_8, clz_16, clz_32, clz_64},
             [EMLX_BITS_POPCOUNT] = {pop_8, pop_16, pop_32, pop_64}}};
#endif
