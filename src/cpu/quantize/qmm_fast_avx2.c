/* quantize/qmm_fast_avx2.c — the AVX2 + FMA unit of the quantized matmul
 * kernels (qmm_fast_body.h): 8 lanes; nibbles and 2-bit codes by mask and
 * shift, e2m1 through a vpshufb table of twice the value (exact int8; the
 * scale carries the 1/2), e4m3 through the f16 bit pattern (MLX's FromFP8).
 * The integer decode path multiplies 4-bit codes with vpmaddubsw, whose
 * int16 pair sums cannot saturate for codes <= 24 and int8 x (2 * 24 *
 * 128), and 8-bit codes, zero-extended to words, with vpmaddwd. */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#define QF_VL 8
#define QF_MR 6
#define QF_NR 16
#define QF_MB 4
#define QF_NR_OF(mb) ((mb) == 4 ? 1 : 2)
#define QF_F4_SMUL 0.5f
#define QF_GACC 2 /* two FMA chains per row pair (latency 5, 2 a cycle); within noise on Zen 2 */
#define QF_WBLOCK (128 * 1024)
#define QF_NAME emlx_qmm_isa_avx2
#define QF_NAME_STR "avx2"

typedef __m256 vf;

static inline vf qf_zero(void) { return _mm256_setzero_ps(); }
static inline vf qf_set1(float f) { return _mm256_set1_ps(f); }
static inline vf qf_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void qf_store(float *p, vf v) { _mm256_storeu_ps(p, v); }
static inline vf qf_fma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline vf qf_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf qf_add(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline float qf_hsum(vf v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
static inline void qf_store_part(float *p, vf v, int n, int add) {
  float t[8];
  _mm256_storeu_ps(t, v);
  for (int i = 0; i < n; i++)
    p[i] = add ? p[i] + t[i] : t[i];
}

static inline void qf_interleave(vf a, vf b, vf *o0, vf *o1) {
  vf lo = _mm256_unpacklo_ps(a, b), hi = _mm256_unpackhi_ps(a, b);
  *o0 = _mm256_permute2f128_ps(lo, hi, 0x20);
  *o1 = _mm256_permute2f128_ps(lo, hi, 0x31);
}

static inline __m256i qf_bytes(const uint8_t *p) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
}
static inline void qf_dec_a4(const uint8_t *p, vf *lo, vf *hi) {
  __m256i d = qf_bytes(p);
  *lo = _mm256_cvtepi32_ps(_mm256_and_si256(d, _mm256_set1_epi32(15)));
  *hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(d, 4));
}
static inline void qf_dec_f4(const uint8_t *p, vf *lo, vf *hi) {
  const __m128i t = _mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
  const __m128i m = _mm_set1_epi8(15);
  __m128i b = _mm_loadl_epi64((const __m128i *)p);
  __m128i l = _mm_shuffle_epi8(t, _mm_and_si128(b, m));
  __m128i h = _mm_shuffle_epi8(t, _mm_and_si128(_mm_srli_epi16(b, 4), m));
  *lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(l));
  *hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(h));
}
static inline vf qf_dec_a8(const uint8_t *p) { return _mm256_cvtepi32_ps(qf_bytes(p)); }
static inline vf qf_dec_f8(const uint8_t *p) {
  __m128i h = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)p));
  __m128i mag = _mm_slli_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7f)), 7);
  __m128i sign = _mm_slli_epi16(_mm_and_si128(h, _mm_set1_epi16(0x80)), 8);
  return _mm256_cvtph_ps(_mm_or_si128(mag, sign));
}
static inline void qf_dec_a2(const uint8_t *p, vf *out) {
  const __m256i m = _mm256_set1_epi32(3);
  __m256i d = qf_bytes(p);
  out[0] = _mm256_cvtepi32_ps(_mm256_and_si256(d, m));
  out[1] = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(d, 2), m));
  out[2] = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(d, 4), m));
  out[3] = _mm256_cvtepi32_ps(_mm256_srli_epi32(d, 6));
}

/* ---- integer decode path: vpmaddubsw + vpmaddwd ---- */
#define QI_VB 32
/* Codes as 16-bit words times x's 16-bit high word (256 h + m) with
 * vpmaddwd, and code bytes (4-bit) or words (8-bit) times its low byte l
 * (qi_dtw_block): 4-bit codes take 7 multiplies per 64 codes, against 12
 * for h, m and l as bytes with vpmaddubsw; 8-bit codes 4 per 32, against 12
 * for vpmaddubsw on their nibbles (255 * 128 * 2 would saturate it on whole
 * bytes). A chunk's integer sums are those of the byte kernel. */
#define QI_A8 1
#define QI_WORDS 1
#define QI_AB 0
/* Rows of x the integer path takes. Affine codes, 4-bit and 8-bit, at every
 * M: with the codes as words (7 multiplies per 64 4-bit codes and x row, 4
 * per 32 8-bit ones) it beats the f32 decode path, which decodes each chunk
 * once for all the rows, at M = 4 and 8 too (bench_quant --threads 1, M = 8,
 * medians of 3 alternated runs each: affine4 16.2-18.8 ms against
 * 19.6-21.0 ms with the f32 path; affine8 31.6 against 46.0 ms). e2m1
 * codes (their vpshufb table per chunk) only for M < 4 and past 8, where
 * the alternative is the prefill path's unpacking: between, the f32 path
 * is as fast or faster (thread CPU time of one thread, M = 4 and 8). */
#define QI_TAKES_M(kind, M) ((kind) != EMLX_QK_IF4 || (M) < 4 || (M) > EMLX_QMM_DECODE_MAX_M)
static int qi_ab_ok(void) { return 0; }
static inline __m256i qi_unpack_bits(__m256i v, __m256i perm, __m256i shift) {
  (void)perm, (void)shift;
  return v;
}
#define QI_TARGET
typedef __m256i vi;
static int qi_ok(void) { return 1; }
static inline vi qi_zero(void) { return _mm256_setzero_si256(); }
static inline vi qi_loadu(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }
static inline vi qi_and(vi a, vi b) { return _mm256_and_si256(a, b); }
static inline vi qi_srli16_4(vi a) { return _mm256_srli_epi16(a, 4); }
static inline vi qi_set1_8(char c) { return _mm256_set1_epi8(c); }
static inline vi qi_add32(vi a, vi b) { return _mm256_add_epi32(a, b); }
static inline vi qi_slli8(vi a) { return _mm256_slli_epi32(a, 8); }
static inline vf qi_cvt(vi a) { return _mm256_cvtepi32_ps(a); }
static inline vf qi_perm(vi idx, vf v) { return _mm256_permutevar8x32_ps(v, idx); }
static inline vi qi_idx(int off, int sh) {
  const __m256i l4 = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
  return _mm256_srl_epi32(_mm256_add_epi32(l4, _mm256_set1_epi32(off)), _mm_cvtsi32_si128(sh));
}
static inline vi qi_f4_lut(void) { /* 2 * e2m1 + 12 */
  return _mm256_setr_epi8(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0, 12, 13, 14, 15,
                          16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0);
}
static inline void qi_f4_codes(vi raw, vi lut, vi *lo, vi *hi) {
  const vi m4 = _mm256_set1_epi8(0x0f);
  *lo = _mm256_shuffle_epi8(lut, _mm256_and_si256(raw, m4));
  *hi = _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4));
}
static inline vf qi_e8m0(const uint8_t *s) {
  __m256i e = _mm256_slli_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)s)), 23);
  __m256i z = _mm256_cmpeq_epi32(e, _mm256_setzero_si256());
  return _mm256_castsi256_ps(_mm256_blendv_epi8(e, _mm256_set1_epi32(0x00400000), z));
}
static inline vf qi_f16(const uint16_t *h) {
  return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)h));
}
static inline vf qi_bf16(const uint16_t *h) {
  __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)h));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
static inline float qi_amax(const float *v, int64_t n) {
  const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 mx = _mm256_setzero_ps();
  for (int64_t i = 0; i < n; i += 8) /* NaNs pass by: max returns its second operand */
    mx = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(v + i), absm), mx);
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  return _mm_cvtss_f32(_mm_max_ss(m4, _mm_movehdup_ps(m4)));
}
static inline vi qi_dot(vi acc, vi w, const int8_t *x) {
  __m256i pr = _mm256_maddubs_epi16(w, _mm256_loadu_si256((const __m256i *)x));
  return _mm256_add_epi32(acc, _mm256_madd_epi16(pr, _mm256_set1_epi16(1)));
}

/* per int32 lane the sum of 4 products of u8 w0 with the int8 bytes at x0
 * and 4 of w1 with x1 (codes <= 24: the int16 sums stay under 2^14) */
static inline vi qi_dot2(vi w0, const int8_t *x0, vi w1, const int8_t *x1) {
  __m256i pr = _mm256_add_epi16(_mm256_maddubs_epi16(w0, _mm256_loadu_si256((const __m256i *)x0)),
                                _mm256_maddubs_epi16(w1, _mm256_loadu_si256((const __m256i *)x1)));
  return _mm256_madd_epi16(pr, _mm256_set1_epi16(1));
}
/* the first left (< 32, a multiple of 4) bytes at p, zeros after: a row's
 * last, partial chunk, read without a call in the loop */
static inline vi qi_load_part(const uint8_t *p, int64_t left) {
  const __m256i at = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
  __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)left), at);
  return _mm256_maskload_epi32((const int *)(const void *)p, m);
}
/* the even / odd bytes of v (codes < 256) as 16-bit words */
static inline vi qi_lo16(vi v) { return _mm256_and_si256(v, _mm256_set1_epi16(0xff)); }
static inline vi qi_hi16(vi v) { return _mm256_srli_epi16(v, 8); }

/* 8-bit codes: the 32 bytes at p as 16-bit words, bytes 0 .. 15 to lo, 16 .. 31 to hi */
static inline void qi_w16(const uint8_t *p, vi *lo, vi *hi) {
  *lo = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)p));
  *hi = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(p + 16)));
}
/* acc + per int32 lane the sum of 2 products of 16-bit words of w and of x
 * (16 words from memory), or of x's 16 bytes sign-extended (qi_dotwb) */
static inline vi qi_dotw(vi acc, vi w, const int16_t *x) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(w, _mm256_loadu_si256((const __m256i *)x)));
}
static inline vi qi_dotwb(vi acc, vi w, const int8_t *x) {
  __m256i xw = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)x));
  return _mm256_add_epi32(acc, _mm256_madd_epi16(w, xw));
}

/* the subnormal-code decode path (qmm_fast.h), after the body */
#define QD_DEN 1
struct emlx_qmm_prob;
static void qd_decode_t(const struct emlx_qmm_prob *p, int64_t n0, int64_t n1);

#include "qmm_fast_body.h"

/* ---- subnormal-code decode path: affine 4-bit, one row of x (EMLX_QK_DA4) ----
 * A chunk is 32 bytes of a packed row, 8 lanes of 8 codes; x comes prepared
 * (qmm_fast.c, prep_den) as 8 vectors a chunk, vector k matching the codes
 * masked out of nibble k (k <= 4 in place, k > 4 after a shift by 12), each
 * the f32 subnormal q 16^pos 2^-149. */
#define QD_MXCSR_FLUSH 0x8040u /* flush-to-zero and denormals-are-zero */

/* acc + sc times the sum of the chunk's 64 products (two FMA chains). */
static inline vf qd_chunk(vi v, const float *X, vf sc, vf acc) {
  const vi m0 = _mm256_set1_epi32(0xf), m1 = _mm256_set1_epi32(0xf0), m2 = _mm256_set1_epi32(0xf00),
           m3 = _mm256_set1_epi32(0xf000), m4 = _mm256_set1_epi32(0xf0000);
  const vi v12 = _mm256_srli_epi32(v, 12);
#define QD_C(a, m) _mm256_castsi256_ps(_mm256_and_si256(a, m))
  vf p0 = _mm256_mul_ps(QD_C(v, m0), qf_load(X));
  vf p1 = _mm256_mul_ps(QD_C(v, m1), qf_load(X + 8));
  p0 = qf_fma(QD_C(v, m2), qf_load(X + 16), p0);
  p1 = qf_fma(QD_C(v, m3), qf_load(X + 24), p1);
  p0 = qf_fma(QD_C(v, m4), qf_load(X + 32), p0);
  p1 = qf_fma(QD_C(v12, m2), qf_load(X + 40), p1);
  p0 = qf_fma(QD_C(v12, m3), qf_load(X + 48), p0);
  p1 = qf_fma(QD_C(v12, m4), qf_load(X + 56), p1);
#undef QD_C
  return qf_fma(qf_add(p0, p1), sc, acc);
}

/* The scale vector of chunk j of a block (its groups' scales at sb): one
 * group per chunk (gs 64), half a group (128), or two (32: lanes 0 .. 3 the
 * first, 4 .. 7 the second). */
static inline vf qd_scale(const float *sb, int64_t j, const int gs) {
  if (gs == 64)
    return _mm256_broadcast_ss(sb + j);
  if (gs == 128)
    return _mm256_broadcast_ss(sb + (j >> 1));
  const __m256i idx = _mm256_add_epi32(_mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1),
                                       _mm256_set1_epi32((int)((2 * j) & 7)));
  return _mm256_permutevar8x32_ps(qf_load(sb + ((2 * j) & ~(int64_t)7)), idx);
}

/* Packed row n: out = sum over blocks of QI_GC groups of 2^(xd_e - a) times
 * the block's sums with its scales times 2^a (a from its largest scale, so
 * no product of a tiny or huge scale leaves f32's normal range), in f64,
 * plus the biases times the sums of x. */
QF_INLINE void qd_row(const emlx_qmm_prob *p, int64_t n, const int gs) {
  const int64_t G = p->groups, rb = p->row_bytes, gbytes = gs / 2;
  const uint8_t *w = (const uint8_t *)p->w + n * rb;
  const uint8_t *pw = n + p->pf_rows < p->rows ? w + p->pf_rows * rb : w;
  float sb[QI_GC] __attribute__((aligned(32))), bb[QI_GC] __attribute__((aligned(32)));
  double sum = 0.0;
  vf bacc = qf_zero();
  for (int64_t g0 = 0; g0 < G; g0 += QI_GC) {
    const int64_t nc = G - g0 < QI_GC ? G - g0 : QI_GC, ncp = (nc + 7) / 8 * 8;
    qi_row_scales(p, n, g0, sb, bb);
    for (int64_t g = 0; g < ncp; g += 8)
      bacc = qf_fma(qf_load(bb + g), qf_load(p->xsum + g0 + g), bacc);
    const int a = qi_normalize(sb, NULL, ncp, 64); /* the largest scale to [2^63, 2^64) */
    const int64_t b0 = g0 * gbytes, b1 = (g0 + nc) * gbytes < rb ? (g0 + nc) * gbytes : rb;
    const float *X = p->xd + b0 * 2; /* 64 floats a 32-byte chunk */
    vf acc0 = qf_zero(), acc1 = qf_zero();
    int64_t b = b0;
    for (; b + 64 <= b1; b += 64, X += 128) {
      _mm_prefetch((const char *)pw + b, _MM_HINT_T0);
      const int64_t j = (b - b0) >> 5;
      acc0 = qd_chunk(qi_loadu(w + b), X, qd_scale(sb, j, gs), acc0);
      acc1 = qd_chunk(qi_loadu(w + b + 32), X + 64, qd_scale(sb, j + 1, gs), acc1);
    }
    for (; b < b1; b += 32, X += 64) { /* a last chunk or two, whole or (the row's end) half */
      _mm_prefetch((const char *)pw + b, _MM_HINT_T0);
      vi v = b1 - b >= 32 ? qi_loadu(w + b) : qi_load_part(w + b, b1 - b);
      acc0 = qd_chunk(v, X, qd_scale(sb, (b - b0) >> 5, gs), acc0);
    }
    sum += (double)qf_hsum(qf_add(acc0, acc1)) * qi_pow2d(p->xd_e - a);
  }
  p->orow[0][n] = (float)(sum + (double)qf_hsum(bacc));
}

/* the row loop, one instance per group size (gs a constant in qd_row) */
#define QD_ROWS(gs)                                                                                \
  static __attribute__((noinline)) void qd_rows_g##gs(const emlx_qmm_prob *p, int64_t n0,          \
                                                      int64_t n1) {                                \
    for (int64_t n = n0; n < n1; n++)                                                              \
      qd_row(p, n, gs);                                                                            \
  }
QD_ROWS(32)
QD_ROWS(64)
QD_ROWS(128)

/* Rows [n0, n1) of W, with MXCSR's flush bits clear (a subnormal code read
 * as zero would drop it) and put back after. */
static void qd_decode_t(const emlx_qmm_prob *p, int64_t n0, int64_t n1) {
  const unsigned csr = _mm_getcsr();
  if (csr & QD_MXCSR_FLUSH)
    _mm_setcsr(csr & ~QD_MXCSR_FLUSH);
  emlx_qmm_prob pp = *p; /* prefetch QI_PF_BYTES ahead, in whole rows */
  pp.pf_rows = (QI_PF_BYTES + p->row_bytes - 1) / p->row_bytes;
  if (p->gs == 32)
    qd_rows_g32(&pp, n0, n1);
  else if (p->gs == 64)
    qd_rows_g64(&pp, n0, n1);
  else
    qd_rows_g128(&pp, n0, n1);
  if (csr & QD_MXCSR_FLUSH)
    _mm_setcsr(csr);
}
