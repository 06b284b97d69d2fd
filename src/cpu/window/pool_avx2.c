/* pool_avx2.c — f32 max / min pooling folds, AVX2 (see pool_f32.h): 32
 * channels (4 ymm accumulators) at a time, then 8, then the rest one by
 * one. best(a, v) = v if v is NaN, else max(v, a) (vmaxps returns a on ties
 * and when a is NaN, as the scalar rule does).
 *
 * The 32-channel blocks first fold with max(v, a) alone, which is best(a, v)
 * wherever no operand is NaN, and add the operands up on the side: a lane
 * whose sum is NaN saw a NaN (or both infinities), and then the block is
 * folded again from its start with best(). Two operations a tap instead of
 * best()'s three (max, compare, blend); NaN-free input, the usual case, is
 * folded once. */
#include <immintrin.h>
#include <math.h>

#include "pool_f32.h"

static inline __m256 best(__m256 a, __m256 v, bool is_max) {
  __m256 m = is_max ? _mm256_max_ps(v, a) : _mm256_min_ps(v, a);
  return _mm256_blendv_ps(m, v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}

void emlx_pool_fold_f32_avx2(const float *const *p, int n, int64_t C, float *o, bool first,
                             bool is_max) {
  const __m256 id = _mm256_set1_ps(is_max ? -INFINITY : INFINITY);
  int64_t c = 0;
  const __m256 zero = _mm256_setzero_ps();
  for (; c + 32 <= C; c += 32) {
    __m256 a0 = first ? id : _mm256_loadu_ps(o + c), a1 = first ? id : _mm256_loadu_ps(o + c + 8);
    __m256 a2 = first ? id : _mm256_loadu_ps(o + c + 16),
           a3 = first ? id : _mm256_loadu_ps(o + c + 24);
    __m256 m0 = a0, m1 = a1, m2 = a2, m3 = a3;
    __m256 s0 = first ? zero : a0, s1 = first ? zero : a1;
    __m256 s2 = first ? zero : a2, s3 = first ? zero : a3;
    for (int k = 0; k < n; k++) {
      const float *q = p[k] + c;
      const __m256 v0 = _mm256_loadu_ps(q), v1 = _mm256_loadu_ps(q + 8);
      const __m256 v2 = _mm256_loadu_ps(q + 16), v3 = _mm256_loadu_ps(q + 24);
      m0 = is_max ? _mm256_max_ps(v0, m0) : _mm256_min_ps(v0, m0);
      m1 = is_max ? _mm256_max_ps(v1, m1) : _mm256_min_ps(v1, m1);
      m2 = is_max ? _mm256_max_ps(v2, m2) : _mm256_min_ps(v2, m2);
      m3 = is_max ? _mm256_max_ps(v3, m3) : _mm256_min_ps(v3, m3);
      s0 = _mm256_add_ps(s0, v0);
      s1 = _mm256_add_ps(s1, v1);
      s2 = _mm256_add_ps(s2, v2);
      s3 = _mm256_add_ps(s3, v3);
    }
    const __m256 sum = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    if (!_mm256_movemask_ps(_mm256_cmp_ps(sum, sum, _CMP_UNORD_Q))) {
      _mm256_storeu_ps(o + c, m0);
      _mm256_storeu_ps(o + c + 8, m1);
      _mm256_storeu_ps(o + c + 16, m2);
      _mm256_storeu_ps(o + c + 24, m3);
      continue;
    }
    for (int k = 0; k < n; k++) {
      const float *q = p[k] + c;
      a0 = best(a0, _mm256_loadu_ps(q), is_max);
      a1 = best(a1, _mm256_loadu_ps(q + 8), is_max);
      a2 = best(a2, _mm256_loadu_ps(q + 16), is_max);
      a3 = best(a3, _mm256_loadu_ps(q + 24), is_max);
    }
    _mm256_storeu_ps(o + c, a0);
    _mm256_storeu_ps(o + c + 8, a1);
    _mm256_storeu_ps(o + c + 16, a2);
    _mm256_storeu_ps(o + c + 24, a3);
  }
  for (; c + 8 <= C; c += 8) {
    __m256 a = first ? id : _mm256_loadu_ps(o + c);
    for (int k = 0; k < n; k++)
      a = best(a, _mm256_loadu_ps(p[k] + c), is_max);
    _mm256_storeu_ps(o + c, a);
  }
  for (; c < C; c++) {
    float a = first ? (is_max ? -INFINITY : INFINITY) : o[c];
    for (int k = 0; k < n; k++) {
      float v = p[k][c];
      a = (v != v || (is_max ? v > a : v < a)) ? v : a;
    }
    o[c] = a;
  }
}
