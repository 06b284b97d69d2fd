/* fft_avx512.c — the FFT machinery (fft_body.h) for the avx512 level
 * (compiled with -mavx512f ... -mfma): 16 lanes per __m512. See fft.h. */
#include <immintrin.h>
#include <stdint.h>

#define FV_W 16
typedef __m512 fv;

static inline fv fv_ld(const float *p) { return _mm512_load_ps(p); }
static inline fv fv_ldu(const float *p) { return _mm512_loadu_ps(p); }
static inline void fv_st(float *p, fv v) { _mm512_store_ps(p, v); }
static inline fv fv_set1(float x) { return _mm512_set1_ps(x); }
static inline fv fv_zero(void) { return _mm512_setzero_ps(); }
static inline fv fv_add(fv a, fv b) { return _mm512_add_ps(a, b); }
static inline fv fv_sub(fv a, fv b) { return _mm512_sub_ps(a, b); }
static inline fv fv_mul(fv a, fv b) { return _mm512_mul_ps(a, b); }
static inline fv fv_neg(fv a) {
  return _mm512_castsi512_ps(
      _mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32((int)0x80000000u)));
}
static inline fv fv_fmadd(fv a, fv b, fv c) { return _mm512_fmadd_ps(a, b, c); }
static inline fv fv_fmsub(fv a, fv b, fv c) { return _mm512_fmsub_ps(a, b, c); }
/* 16 interleaved complex (32 floats) -> 16 real parts, 16 imaginary parts. */
static inline void fv_ld_cplx(const float *p, fv *re, fv *im) {
  const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i od = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  __m512 a = _mm512_loadu_ps(p), b = _mm512_loadu_ps(p + 16);
  *re = _mm512_permutex2var_ps(a, ev, b);
  *im = _mm512_permutex2var_ps(a, od, b);
}
static inline void fv_st_cplx(float *p, fv re, fv im) {
  const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  _mm512_storeu_ps(p, _mm512_permutex2var_ps(re, lo, im));
  _mm512_storeu_ps(p + 16, _mm512_permutex2var_ps(re, hi, im));
}

/* m[r][c] -> m[c][r] for the 16 x 16 block: four rounds that swap the
 * off-diagonal s x s sub-blocks (s = 8, 4, 2, 1) of rows i and i + s, two
 * two-source permutes per pair of rows. */
static const int32_t fv_transpose_idx[4][2][16] __attribute__((aligned(64))) = {
    {{0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23},
     {8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31}},
    {{0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27},
     {4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31}},
    {{0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29},
     {2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31}},
    {{0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30},
     {1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31}},
};
static inline void fv_transpose(fv *m) {
  for (int r = 0, s = 8; r < 4; r++, s >>= 1) {
    const __m512i lo = _mm512_load_si512(fv_transpose_idx[r][0]);
    const __m512i hi = _mm512_load_si512(fv_transpose_idx[r][1]);
    for (int i = 0; i < 16; i++)
      if (!(i & s)) {
        __m512 a = m[i], b = m[i + s];
        m[i] = _mm512_permutex2var_ps(a, lo, b);
        m[i + s] = _mm512_permutex2var_ps(a, hi, b);
      }
  }
}

#define FFT_SUFFIX avx512
#include "fft_body.h"
