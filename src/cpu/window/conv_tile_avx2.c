/* conv_tile_avx2.c — the AVX2 + FMA f32 convolution micro-kernel (see
 * conv_tile.h): 6 output positions x 16 output channels, 12 accumulators,
 * each input value broadcast from memory once per tap and channel. */
#include <immintrin.h>

#include "conv_tile.h"

#define MR 6
#define NR 16

#define BC(p) _mm256_broadcast_ss((const float *)(p))
#define FMA2(i, p)                                                                                 \
  do {                                                                                             \
    __m256 x_ = BC(p);                                                                             \
    lo##i = _mm256_fmadd_ps(x_, b0, lo##i);                                                        \
    hi##i = _mm256_fmadd_ps(x_, b1, hi##i);                                                        \
  } while (0)

static __m256i lane_mask(int n) { /* the first n of 8 lanes (n may be <= 0 or >= 8) */
  __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx);
}

static void tile6x16(const float *const *ta, const int64_t *trs, const int64_t *tb, int64_t taps,
                     int64_t cg, const float *b, float *c, int64_t ldc, int mv, int nv) {
  __m256 lo0 = _mm256_setzero_ps(), hi0 = lo0, lo1 = lo0, hi1 = lo0, lo2 = lo0, hi2 = lo0,
         lo3 = lo0, hi3 = lo0, lo4 = lo0, hi4 = lo0, lo5 = lo0, hi5 = lo0;
  for (int64_t t = 0; t < taps; t++) {
    const char *q0 = (const char *)ta[t];
    const int64_t s = trs[t] * (int64_t)sizeof(float);
    const char *q3 = q0 + 3 * s;
    const float *bp = b + tb[t];
    for (int64_t ci = 0; ci < cg; ci++) {
      __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
      FMA2(0, q0);
      FMA2(1, q0 + s);
      FMA2(2, q0 + 2 * s);
      FMA2(4, q0 + 4 * s);
      FMA2(3, q3);
      FMA2(5, q3 + 2 * s);
      q0 += 4, q3 += 4;
      bp += NR;
    }
  }
  __m256 lo[MR] = {lo0, lo1, lo2, lo3, lo4, lo5}, hi[MR] = {hi0, hi1, hi2, hi3, hi4, hi5};
  if (nv >= NR) {
    for (int r = 0; r < mv; r++) {
      _mm256_storeu_ps(c + r * ldc, lo[r]);
      _mm256_storeu_ps(c + r * ldc + 8, hi[r]);
    }
    return;
  }
  __m256i m0 = lane_mask(nv), m1 = lane_mask(nv - 8);
  for (int r = 0; r < mv; r++) {
    _mm256_maskstore_ps(c + r * ldc, m0, lo[r]);
    _mm256_maskstore_ps(c + r * ldc + 8, m1, hi[r]);
  }
}

const emlx_conv_tile_kernel emlx_conv_tile_avx2 = {.mr = MR, .nr = NR, .tile = tile6x16};
