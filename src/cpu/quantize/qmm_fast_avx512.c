/* quantize/qmm_fast_avx512.c — the AVX-512 unit of the quantized matmul
 * kernels (qmm_fast_body.h): 16 lanes; 4-bit and 2-bit codes go through a
 * 16-entry vpermps table (its index is the low 4 bits of each lane, so a
 * shift alone selects a nibble), 8-bit codes through vpmovzxbd, e4m3 through
 * the f16 bit pattern (MLX's FromFP8). The integer decode path uses
 * AVX-512 VNNI (vpdpbusd) and VBMI (2, 3, 5, 6-bit codes unpacked by
 * vpermb + vpmultishiftqb, e2m1 codes mapped by vpermb), where the CPU has
 * them. */
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define QF_VL 16
#define QF_MR 12
#define QF_NR 32
#define QF_MB 4
#define QF_NR_OF(mb) ((mb) == 1 ? 4 : 2)
#define QF_F4_SMUL 1.0f
#define QF_NAME emlx_qmm_isa_avx512
#define QF_NAME_STR "avx512"

typedef __m512 vf;

static inline vf qf_zero(void) { return _mm512_setzero_ps(); }
static inline vf qf_set1(float f) { return _mm512_set1_ps(f); }
static inline vf qf_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void qf_store(float *p, vf v) { _mm512_storeu_ps(p, v); }
static inline vf qf_fma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
static inline vf qf_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
static inline vf qf_add(vf a, vf b) { return _mm512_add_ps(a, b); }
static inline float qf_hsum(vf v) { return _mm512_reduce_add_ps(v); }
static inline void qf_store_part(float *p, vf v, int n, int add) {
  __mmask16 m = (__mmask16)((1u << n) - 1u);
  if (add)
    v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, p));
  _mm512_mask_storeu_ps(p, m, v);
}

static inline void qf_interleave(vf a, vf b, vf *o0, vf *o1) {
  const __m512i i0 = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i i1 =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  *o0 = _mm512_permutex2var_ps(a, i0, b);
  *o1 = _mm512_permutex2var_ps(a, i1, b);
}

static inline __m512i qf_bytes(const uint8_t *p) {
  return _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p));
}
static inline void qf_dec_a4(const uint8_t *p, vf *lo, vf *hi) {
  const __m512 t = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512i d = qf_bytes(p);
  *lo = _mm512_permutexvar_ps(d, t);
  *hi = _mm512_permutexvar_ps(_mm512_srli_epi32(d, 4), t);
}
static inline void qf_dec_f4(const uint8_t *p, vf *lo, vf *hi) {
  const __m512 t = _mm512_setr_ps(0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f, -0.0f, -0.5f,
                                  -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f);
  __m512i d = qf_bytes(p);
  *lo = _mm512_permutexvar_ps(d, t);
  *hi = _mm512_permutexvar_ps(_mm512_srli_epi32(d, 4), t);
}
static inline vf qf_dec_a8(const uint8_t *p) { return _mm512_cvtepi32_ps(qf_bytes(p)); }
static inline vf qf_dec_f8(const uint8_t *p) {
  __m256i h = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p));
  __m256i mag = _mm256_slli_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7f)), 7);
  __m256i sign = _mm256_slli_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x80)), 8);
  return _mm512_cvtph_ps(_mm256_or_si256(mag, sign));
}
static inline void qf_dec_a2(const uint8_t *p, vf *out) {
  const __m512 t = _mm512_setr_ps(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
  __m512i d = qf_bytes(p);
  out[0] = _mm512_permutexvar_ps(d, t);
  out[1] = _mm512_permutexvar_ps(_mm512_srli_epi32(d, 2), t);
  out[2] = _mm512_permutexvar_ps(_mm512_srli_epi32(d, 4), t);
  out[3] = _mm512_permutexvar_ps(_mm512_srli_epi32(d, 6), t);
}

/* ---- integer decode path: AVX-512 VNNI ---- */
#define QI_VB 64
#define QI_A8 1
#define QI_AB 1
#define QI_M1_BLOCK 1
#define QI_NR_OF(mb) ((mb) == 1 ? 4 : 3)
#define QI_TARGET __attribute__((target("avx512vnni,avx512vbmi")))
typedef __m512i vi;
/* VNNI and VBMI both (Ice Lake, Zen 4 and later; a CPU with VNNI alone takes
 * the f32 path) */
static int qi_ok(void) {
  return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vbmi");
}
static int qi_ab_ok(void) { return 1; }
static inline vi qi_zero(void) { return _mm512_setzero_si512(); }
static inline vi qi_loadu(const void *p) { return _mm512_loadu_si512(p); }
static inline vi qi_and(vi a, vi b) { return _mm512_and_si512(a, b); }
static inline vi qi_srli16_4(vi a) { return _mm512_srli_epi16(a, 4); }
static inline vi qi_set1_8(char c) { return _mm512_set1_epi8(c); }
static inline vi qi_add32(vi a, vi b) { return _mm512_add_epi32(a, b); }
static inline vi qi_slli8(vi a) { return _mm512_slli_epi32(a, 8); }
static inline vf qi_cvt(vi a) { return _mm512_cvtepi32_ps(a); }
static inline vf qi_perm(vi idx, vf v) { return _mm512_permutexvar_ps(idx, v); }
static inline vi qi_idx(int off, int sh) {
  const __m512i l4 = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60);
  return _mm512_srl_epi32(_mm512_add_epi32(l4, _mm512_set1_epi32(off)), _mm_cvtsi32_si128(sh));
}
static inline vi qi_f4_lut(void) { /* 2 * e2m1 + 12 */
  return _mm512_broadcast_i32x4(
      _mm_setr_epi8(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0));
}
/* vpermb (VBMI) reads the low 6 bits of each index byte, and the table
 * repeats every 16 bytes: no masking of the nibbles (vpshufb's way: an AND
 * each) */
static inline QI_TARGET void qi_f4_codes(vi raw, vi lut, vi *lo, vi *hi) {
  *lo = _mm512_permutexvar_epi8(raw, lut);
  *hi = _mm512_permutexvar_epi8(_mm512_srli_epi16(raw, 4), lut);
}
static inline vf qi_e8m0(const uint8_t *s) {
  __m512i e = _mm512_slli_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)s)), 23);
  __mmask16 z = _mm512_cmpeq_epi32_mask(e, _mm512_setzero_si512());
  return _mm512_castsi512_ps(_mm512_mask_mov_epi32(e, z, _mm512_set1_epi32(0x00400000)));
}
/* the e8m0 shortcut of qmm_fast_body.h (qi_e8m0_norm): a row's least and
 * largest scale bytes, then the bytes as exponent fields shifted by sh */
#define QI_E8M0_NORM 1
static inline void qi_u8_minmax(const uint8_t *s, int64_t n, int *mn, int *mx) {
  __m512i lo = _mm512_set1_epi8(-1), hi = _mm512_setzero_si512();
  for (int64_t i = 0; i < n; i += 64) {
    const __mmask64 m = n - i >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (n - i)) - 1;
    const __m512i v = _mm512_maskz_loadu_epi8(m, s + i);
    lo = _mm512_min_epu8(lo, _mm512_mask_mov_epi8(_mm512_set1_epi8(-1), m, v));
    hi = _mm512_max_epu8(hi, v);
  }
  __m256i l = _mm256_min_epu8(_mm512_castsi512_si256(lo), _mm512_extracti64x4_epi64(lo, 1));
  __m256i h = _mm256_max_epu8(_mm512_castsi512_si256(hi), _mm512_extracti64x4_epi64(hi, 1));
  __m128i l2 = _mm_min_epu8(_mm256_castsi256_si128(l), _mm256_extracti128_si256(l, 1));
  __m128i h2 = _mm_max_epu8(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
  /* the least byte: minpos over words after widening; the largest: of 255 - byte */
  const __m128i z = _mm_setzero_si128(), f = _mm_set1_epi8(-1);
  __m128i lw = _mm_min_epu16(_mm_unpacklo_epi8(l2, z), _mm_unpackhi_epi8(l2, z));
  __m128i hw = _mm_min_epu16(_mm_unpacklo_epi8(_mm_sub_epi8(f, h2), z),
                             _mm_unpackhi_epi8(_mm_sub_epi8(f, h2), z));
  *mn = _mm_extract_epi16(_mm_minpos_epu16(lw), 0);
  *mx = 255 - _mm_extract_epi16(_mm_minpos_epu16(hw), 0);
}
/* qi_u8_minmax of 4 runs of 128 bytes (s, s + stride, ...) at once: their
 * 8 reductions (the maxima, and the maxima of 255 - byte: the minima)
 * folded together, two vectors into one a step, then within qwords */
#define QI_U8_MINMAX4 128
static inline __m512i qi_fold_pair(__m512i a, __m512i b) { /* lanes 0, 1: a's; 2, 3: b's */
  return _mm512_max_epu8(_mm512_shuffle_i64x2(a, b, 0x88), _mm512_shuffle_i64x2(a, b, 0xdd));
}
static inline void qi_u8_minmax4(const uint8_t *s, int64_t stride, int *mn, int *mx) {
  __m512i v[8];
  for (int r = 0; r < 4; r++) {
    const __m512i a = _mm512_loadu_si512(s + r * stride),
                  b = _mm512_loadu_si512(s + r * stride + 64);
    v[r] = _mm512_max_epu8(a, b);
    v[4 + r] = _mm512_ternarylogic_epi32(_mm512_min_epu8(a, b), a, a, 0x55); /* 255 - min */
  }
  /* 128-bit lanes of reductions 0 0 1 1 | 2 2 3 3 | 4 4 5 5 | 6 6 7 7, then
   * 0 1 2 3 | 4 5 6 7, then qword 2i of lane i: reduction i, 2i + 1: 4 + i */
  const __m512i h0 = qi_fold_pair(qi_fold_pair(v[0], v[1]), qi_fold_pair(v[2], v[3]));
  const __m512i h1 = qi_fold_pair(qi_fold_pair(v[4], v[5]), qi_fold_pair(v[6], v[7]));
  __m512i m = _mm512_max_epu8(_mm512_unpacklo_epi64(h0, h1), _mm512_unpackhi_epi64(h0, h1));
  m = _mm512_max_epu8(m, _mm512_srli_epi64(m, 32));
  m = _mm512_max_epu8(m, _mm512_srli_epi64(m, 16));
  m = _mm512_max_epu8(m, _mm512_srli_epi64(m, 8));
  uint64_t q[8];
  _mm512_storeu_si512(q, m);
  for (int r = 0; r < 4; r++) {
    mx[r] = (int)(q[2 * r] & 0xff);
    mn[r] = 255 - (int)(q[2 * r + 1] & 0xff);
  }
}
static inline vf qi_e8m0_shift(const uint8_t *s, int64_t left, int sh) {
  const __mmask16 m = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1u);
  __m512i e = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, s));
  e = _mm512_maskz_slli_epi32(m, _mm512_add_epi32(e, _mm512_set1_epi32(sh)), 23);
  return _mm512_castsi512_ps(e);
}
static inline vf qi_f16(const uint16_t *h) {
  return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)h));
}
/* max(|v|, m) lane by lane; NaNs of v pass by (max returns its second operand) */
static inline vf qi_absmax(vf v, vf m) { return _mm512_max_ps(_mm512_abs_ps(v), m); }
static inline float qi_hmax(vf m) { return _mm512_reduce_max_ps(m); }
static inline float qi_amax(const float *v, int64_t n) {
  __m512 mx = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16)
    mx = qi_absmax(_mm512_loadu_ps(v + i), mx);
  return qi_hmax(mx);
}
static inline vf qi_bf16(const uint16_t *h) {
  __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)h));
  return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}
static inline __attribute__((target("avx512vbmi"))) vi qi_unpack_bits(vi v, vi perm, vi shift) {
  return _mm512_multishift_epi64_epi8(shift, _mm512_permutexvar_epi8(perm, v));
}
static inline QI_TARGET vi qi_dot(vi acc, vi w, const int8_t *x) {
  return _mm512_dpbusd_epi32(acc, w, _mm512_loadu_si512(x));
}

#define QI_PREP qi_prep
struct emlx_qmm_prob;
static bool qi_prep(const struct emlx_qmm_prob *p, int8_t *xi, float *xsc, float *xs, double *inv,
                    int *xe);

#include "qmm_fast_body.h"

/* ---- the integer decode path's x, in vectors (qmm_fast.c, prep_int) ------
 * The same codes as the driver's loop (x * (QI_C / max|x|) in f64, rounded
 * half away from zero), the same layout, sums and powers of two (xe); 16
 * elements a step (8-bit codes), or 32 split into the even and odd ones
 * (4-bit codes: parts 0 and 1), each half of 8 lanes within one group
 * (groups are 16 or more). */

/* c = 65536 * h + 256 * m + l, l and m the low bytes as signed, to bytes */
static inline void qi_split_store(__m512i c, int8_t *h, int8_t *m, int8_t *l) {
  __m512i lo = _mm512_srai_epi32(_mm512_slli_epi32(c, 24), 24);
  __m512i c1 = _mm512_srai_epi32(_mm512_sub_epi32(c, lo), 8);
  __m512i mi = _mm512_srai_epi32(_mm512_slli_epi32(c1, 24), 24);
  __m512i hi = _mm512_srai_epi32(_mm512_sub_epi32(c1, mi), 8);
  _mm_storeu_si128((__m128i *)h, _mm512_cvtepi32_epi8(hi));
  _mm_storeu_si128((__m128i *)m, _mm512_cvtepi32_epi8(mi));
  _mm_storeu_si128((__m128i *)l, _mm512_cvtepi32_epi8(lo));
}

/* codes of v: lanes 0-7 times inv0, lanes 8-15 times inv1 */
static inline __m512i qi_codes(__m512 v, double inv0, double inv1) {
  const __m512d half = _mm512_set1_pd(0.5), sign = _mm512_set1_pd(-0.0);
  __m512d a = _mm512_mul_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(v)), _mm512_set1_pd(inv0));
  __m512d b = _mm512_mul_pd(
      _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))),
      _mm512_set1_pd(inv1));
  a = _mm512_add_pd(a, _mm512_or_pd(half, _mm512_and_pd(a, sign))); /* +-0.5, then truncate */
  b = _mm512_add_pd(b, _mm512_or_pd(half, _mm512_and_pd(b, sign)));
  __m512i c =
      _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvttpd_epi32(a)), _mm512_cvttpd_epi32(b), 1);
  c = _mm512_min_epi32(c, _mm512_set1_epi32(EMLX_QI_C));
  return _mm512_max_epi32(c, _mm512_set1_epi32(-EMLX_QI_C));
}

static bool qi_prep(const struct emlx_qmm_prob *p, int8_t *xi, float *xsc, float *xs, double *inv,
                    int *xe) {
  const int vb = QI_VB, ppb = p->kind == EMLX_QK_IA8 || p->kind == EMLX_QK_IAB ? 1 : 2;
  const int64_t K = p->K, gs = p->gs, G = p->groups, ce = (int64_t)vb * ppb;
  const int64_t cb = 3 * (int64_t)ppb * vb; /* bytes of xi per chunk */
  const bool affine = p->mode == EMLX_QMM_AFFINE;
  const __m512 big = _mm512_set1_ps(3.0e38f);
  const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
  for (int64_t m = 0; m < p->M; m++) {
    const float *x = p->xr[m];
    int8_t *d = xi + m * p->xi_row;
    float *sc = xsc + m * p->xs_row, *su = xs + m * p->xs_row;
    const int64_t full = K / ce * cb; /* past it: the last, partial chunk, zero past K */
    memset(d + full, 0, (size_t)(p->xi_row - full));
    for (int64_t g = 0; g < G; g++) { /* the scales, and the sums of x */
      const float *xg = x + g * gs;
      __m512 mx = _mm512_setzero_ps();
      __m512d s0 = _mm512_setzero_pd(), s1 = s0;
      for (int64_t k = 0; k < gs; k += 16) {
        __m512 a = _mm512_abs_ps(_mm512_loadu_ps(xg + k));
        if (_mm512_cmp_ps_mask(a, big, _CMP_LE_OQ) != 0xffff)
          return false; /* NaN or Inf */
        mx = _mm512_max_ps(mx, a);
        __m512 v = _mm512_loadu_ps(xg + k);
        s0 = _mm512_add_pd(s0, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
        s1 = _mm512_add_pd(
            s1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
      }
      sc[g] = _mm512_reduce_max_ps(mx); /* max|x| until the scales replace it */
      su[g] = (float)_mm512_reduce_add_pd(_mm512_add_pd(s0, s1));
    }
    xe[m] = emlx_qmm_int_row_scales(sc, su, inv, G, affine);
    int64_t cur = -1, csum = 0; /* e2m1: the sum of the coded x of group cur */
    for (int64_t e = 0; e < K; e += 16 * ppb) {
      int8_t *ch = d + e / ce * cb;
      const int64_t j = e % ce / ppb, g0 = e / gs, g1 = (e + 8 * ppb) / gs;
      __m512i c0, c1 = _mm512_setzero_si512();
      if (ppb == 1) {
        c0 = qi_codes(_mm512_loadu_ps(x + e), inv[g0], inv[g1]);
        qi_split_store(c0, ch + j, ch + vb + j, ch + 2 * vb + j);
      } else { /* K is whole groups of 16: the second half may be past it */
        __m512 v0 = _mm512_loadu_ps(x + e);
        __m512 v1 = e + 32 <= K ? _mm512_loadu_ps(x + e + 16) : _mm512_setzero_ps();
        double i1 = e + 32 <= K ? inv[g1] : 0.0;
        c0 = qi_codes(_mm512_permutex2var_ps(v0, ev, v1), inv[g0], i1);
        c1 = qi_codes(_mm512_permutex2var_ps(v0, od, v1), inv[g0], i1);
        qi_split_store(c0, ch + j, ch + 2 * vb + j, ch + 4 * vb + j);
        qi_split_store(c1, ch + vb + j, ch + 3 * vb + j, ch + 5 * vb + j);
      }
      if (!affine) {
        __m512i t = _mm512_add_epi32(c0, c1);
        int64_t h0 = _mm512_mask_reduce_add_epi32(0x00ff, t);
        int64_t h1 = _mm512_mask_reduce_add_epi32(0xff00, t);
        for (int half = 0; half < 2; half++) {
          int64_t g = half ? g1 : g0;
          if (g != cur) {
            if (cur >= 0)
              su[cur] = (float)((double)sc[cur] * (double)csum);
            cur = g, csum = 0;
          }
          csum += half ? h1 : h0;
        }
      }
    }
    if (!affine && cur >= 0 && cur < G)
      su[cur] = (float)((double)sc[cur] * (double)csum);
    for (int64_t g = G; g < p->xs_row; g++)
      sc[g] = su[g] = 0.0f;
  }
  return true;
}
