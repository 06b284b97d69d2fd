/* att_kt8.h — the attention units' K tile transpose in 8 x 8 blocks of
 * ymm registers, shared by the avx2 unit and the avx512 unit (whose
 * 16-lane micro-tiles read the same KT layout). */
#ifndef EMLX_ATT_KT8_H
#define EMLX_ATT_KT8_H

#include <immintrin.h>
#include <stdint.h>

#include "simd/transpose_avx2.h"

/* KT (D rows of ldkt) <- the nk rows of K (ld ldk, f32), columns nk .. nkp
 * zeroed (nkp a multiple of 8): 8 x 8 blocks transposed in registers, the
 * rows past nk read as zeros. */
static inline void av_kt_pack(const float *K, int64_t ldk, int64_t nk, int64_t nkp, int64_t D,
                              float *KT, int64_t ldkt) {
  int64_t D8 = D / 8 * 8;
  for (int64_t j0 = 0; j0 < nkp; j0 += 8) {
    int64_t n = nk - j0 < 8 ? nk - j0 : 8; /* rows present, 0 .. 8 */
    const float *kr = K + j0 * ldk;
    for (int64_t d = 0; d < D8; d += 8) {
      __m256 r[8];
      if (n == 8) /* (whole blocks without the per-row tests) */
        for (int x = 0; x < 8; x++)
          r[x] = _mm256_loadu_ps(kr + x * ldk + d);
      else
        for (int x = 0; x < 8; x++)
          r[x] = x < n ? _mm256_loadu_ps(kr + x * ldk + d) : _mm256_setzero_ps();
      vl_transpose8_ps(r);
      float *o = KT + d * ldkt + j0;
      for (int x = 0; x < 8; x++)
        _mm256_storeu_ps(o + x * ldkt, r[x]);
    }
    for (int64_t d = D8; d < D; d++)
      for (int x = 0; x < 8; x++)
        KT[d * ldkt + j0 + x] = x < n ? kr[x * ldk + d] : 0.0f;
  }
}

#endif
