/* fft_avx2.c — the FFT machinery (fft_body.h) for the avx2 level (compiled
 * with -mavx2 -mfma): 8 lanes per __m256. See fft.h. */
#include <immintrin.h>

#include "simd/transpose_avx2.h"

#define FV_W 8
typedef __m256 fv;

static inline fv fv_ld(const float *p) { return _mm256_load_ps(p); }
static inline fv fv_ldu(const float *p) { return _mm256_loadu_ps(p); }
static inline void fv_st(float *p, fv v) { _mm256_store_ps(p, v); }
static inline fv fv_set1(float x) { return _mm256_set1_ps(x); }
static inline fv fv_zero(void) { return _mm256_setzero_ps(); }
static inline fv fv_add(fv a, fv b) { return _mm256_add_ps(a, b); }
static inline fv fv_sub(fv a, fv b) { return _mm256_sub_ps(a, b); }
static inline fv fv_mul(fv a, fv b) { return _mm256_mul_ps(a, b); }
static inline fv fv_neg(fv a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
static inline fv fv_fmadd(fv a, fv b, fv c) { return _mm256_fmadd_ps(a, b, c); }
static inline fv fv_fmsub(fv a, fv b, fv c) { return _mm256_fmsub_ps(a, b, c); }
/* 8 interleaved complex (16 floats) -> 8 real parts, 8 imaginary parts. */
static inline void fv_ld_cplx(const float *p, fv *re, fv *im) {
  __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
  __m256 lo = _mm256_permute2f128_ps(a, b, 0x20), hi = _mm256_permute2f128_ps(a, b, 0x31);
  *re = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
  *im = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
}
static inline void fv_st_cplx(float *p, fv re, fv im) {
  __m256 lo = _mm256_unpacklo_ps(re, im), hi = _mm256_unpackhi_ps(re, im);
  _mm256_storeu_ps(p, _mm256_permute2f128_ps(lo, hi, 0x20));
  _mm256_storeu_ps(p + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
}

/* m[r][c] -> m[c][r] for the 8 x 8 block */
static inline void fv_transpose(fv *m) { vl_transpose8_ps(m); }

#define FFT_SUFFIX avx2
#include "fft_body.h"
