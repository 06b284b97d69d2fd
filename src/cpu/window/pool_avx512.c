/* pool_avx512.c — f32 max / min pooling folds, AVX-512 (see pool_f32.h):
 * 64 channels (4 zmm accumulators) at a time, then 16, then a masked rest.
 * best(a, v) = v if v is NaN, else max(v, a) (vmaxps returns a on ties and
 * when a is NaN, as the scalar rule does). */
#include <immintrin.h>
#include <math.h>

#include "pool_f32.h"

static inline __m512 best(__m512 a, __m512 v, bool is_max) {
  __m512 m = is_max ? _mm512_max_ps(v, a) : _mm512_min_ps(v, a);
  return _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v);
}

void emlx_pool_fold_f32_avx512(const float *const *p, int n, int64_t C, float *o, bool first,
                               bool is_max) {
  const __m512 id = _mm512_set1_ps(is_max ? -INFINITY : INFINITY);
  int64_t c = 0;
  for (; c + 64 <= C; c += 64) {
    __m512 a0 = first ? id : _mm512_loadu_ps(o + c), a1 = first ? id : _mm512_loadu_ps(o + c + 16);
    __m512 a2 = first ? id : _mm512_loadu_ps(o + c + 32),
           a3 = first ? id : _mm512_loadu_ps(o + c + 48);
    for (int k = 0; k < n; k++) {
      const float *q = p[k] + c;
      a0 = best(a0, _mm512_loadu_ps(q), is_max);
      a1 = best(a1, _mm512_loadu_ps(q + 16), is_max);
      a2 = best(a2, _mm512_loadu_ps(q + 32), is_max);
      a3 = best(a3, _mm512_loadu_ps(q + 48), is_max);
    }
    _mm512_storeu_ps(o + c, a0);
    _mm512_storeu_ps(o + c + 16, a1);
    _mm512_storeu_ps(o + c + 32, a2);
    _mm512_storeu_ps(o + c + 48, a3);
  }
  for (; c < C; c += 16) {
    __mmask16 m = C - c >= 16 ? 0xFFFF : (__mmask16)((1u << (C - c)) - 1u);
    __m512 a = first ? id : _mm512_maskz_loadu_ps(m, o + c);
    for (int k = 0; k < n; k++)
      a = best(a, _mm512_maskz_loadu_ps(m, p[k] + c), is_max);
    _mm512_mask_storeu_ps(o + c, m, a);
  }
}
