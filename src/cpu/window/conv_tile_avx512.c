/* conv_tile_avx512.c — the AVX-512 f32 convolution micro-kernel (see
 * conv_tile.h): 14 output positions x 32 output channels, 28 accumulators,
 * each input value broadcast from memory once per tap and channel. The 14
 * rows are addressed from five base pointers plus the row stride scaled by
 * 1, 2, 4 or 8, so the loop needs few registers. */
#include <immintrin.h>

#include "conv_tile.h"

#define MR 14
#define NR 32

#define BC(p) _mm512_set1_ps(*(const float *)(p))
#define FMA2(i, p)                                                                                 \
  do {                                                                                             \
    __m512 x_ = BC(p);                                                                             \
    lo##i = _mm512_fmadd_ps(x_, b0, lo##i);                                                        \
    hi##i = _mm512_fmadd_ps(x_, b1, hi##i);                                                        \
  } while (0)

static void tile14x32(const float *const *ta, const int64_t *trs, const int64_t *tb, int64_t taps,
                      int64_t cg, const float *b, float *c, int64_t ldc, int mv, int nv) {
  __m512 lo0 = _mm512_setzero_ps(), hi0 = lo0, lo1 = lo0, hi1 = lo0, lo2 = lo0, hi2 = lo0,
         lo3 = lo0, hi3 = lo0, lo4 = lo0, hi4 = lo0, lo5 = lo0, hi5 = lo0, lo6 = lo0, hi6 = lo0,
         lo7 = lo0, hi7 = lo0, lo8 = lo0, hi8 = lo0, lo9 = lo0, hi9 = lo0, lo10 = lo0, hi10 = lo0,
         lo11 = lo0, hi11 = lo0, lo12 = lo0, hi12 = lo0, lo13 = lo0, hi13 = lo0;
  for (int64_t t = 0; t < taps; t++) {
    const char *q0 = (const char *)ta[t];
    const int64_t s = trs[t] * (int64_t)sizeof(float);
    const char *q3 = q0 + 3 * s, *q6 = q0 + 6 * s, *q9 = q0 + 9 * s, *q12 = q0 + 12 * s;
    const float *bp = b + tb[t];
    for (int64_t ci = 0; ci < cg; ci++) {
      __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
      FMA2(0, q0);
      FMA2(1, q0 + s);
      FMA2(2, q0 + 2 * s);
      FMA2(4, q0 + 4 * s);
      FMA2(8, q0 + 8 * s);
      FMA2(3, q3);
      FMA2(5, q3 + 2 * s);
      FMA2(7, q3 + 4 * s);
      FMA2(11, q3 + 8 * s);
      FMA2(6, q6);
      FMA2(10, q6 + 4 * s);
      FMA2(9, q9);
      FMA2(13, q9 + 4 * s);
      FMA2(12, q12);
      q0 += 4, q3 += 4, q6 += 4, q9 += 4, q12 += 4;
      bp += NR;
    }
  }
  __m512 lo[MR] = {lo0, lo1, lo2, lo3, lo4, lo5, lo6, lo7, lo8, lo9, lo10, lo11, lo12, lo13};
  __m512 hi[MR] = {hi0, hi1, hi2, hi3, hi4, hi5, hi6, hi7, hi8, hi9, hi10, hi11, hi12, hi13};
  __mmask16 m0 = nv >= 16 ? 0xFFFF : (__mmask16)((1u << nv) - 1u);
  __mmask16 m1 = nv <= 16 ? 0 : nv >= 32 ? 0xFFFF : (__mmask16)((1u << (nv - 16)) - 1u);
  for (int r = 0; r < mv; r++) {
    _mm512_mask_storeu_ps(c + r * ldc, m0, lo[r]);
    _mm512_mask_storeu_ps(c + r * ldc + 16, m1, hi[r]);
  }
}

const emlx_conv_tile_kernel emlx_conv_tile_avx512 = {.mr = MR, .nr = NR, .tile = tile14x32};
