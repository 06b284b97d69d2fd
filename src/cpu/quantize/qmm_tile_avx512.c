/* quantize/qmm_tile_avx512.c — the AVX-512 BF16 prefill kernel of quantized
 * matmul for bfloat16 x (qmm_tile.h).
 *
 * x is packed once into panels of T_MR rows, [K / 2][T_MR] pairs of
 * bfloat16 (rows past M zero), with its sums per group. The output columns
 * are split over the pool in blocks of T_NR = 32; a block's 32 rows of W
 * are unpacked once, whole K, into a panel [K / 2][32] of bfloat16 code
 * pairs (4-bit codes through a vpermw table, 8-bit codes converted in
 * registers, other widths one code at a time), with the block's scales and
 * biases transposed to [groups][32]. Then, for every T_MR rows of x, the
 * micro-kernel runs vdpbf16ps over each group (12 accumulators), folds the
 * group in with its scale (and bias times x's group sum) into 12 more, and
 * stores the 6 x 32 tile once. The functions that use AVX-512 BF16
 * instructions carry their own target attribute: the avx512 level of the
 * build does not promise them, and qmm_tile.c checks CPUID first. */
#include <immintrin.h>
#include <stdatomic.h>
#include <string.h>

#include "formats.h"
#include "internal.h"
#include "qmm_tile.h"

#define T_MR 6
#define T_NR 32
#define TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,f16c")))

typedef struct tile_ctx {
  const emlx_qmm_desc *d;
  const uint32_t *xp; /* [mtiles][K / 2][T_MR] bf16 pairs */
  const float *xsum;  /* [mtiles * T_MR][G]: sums of x over each group (affine) */
  int64_t G, kp;      /* groups per row; pairs per row (K / 2) */
  int64_t row_bytes;
  int64_t mtiles;
  uint16_t lut[256]; /* code -> bf16 bits of its value (scale aside) */
  atomic_bool failed;
} tile_ctx;

/* The value of code q: the integer (affine), e2m1, or e4m3 (MLX's FromFP8). */
static void make_lut(int mode, int bits, uint16_t *lut) {
  memset(lut, 0, 256 * sizeof *lut);
  for (int q = 0; q < (1 << bits); q++) {
    float v = mode == EMLX_QMM_AFFINE  ? (float)q
              : mode == EMLX_QMM_MXFP8 ? emlx_qz_from_fp8((uint8_t)q)
                                       : emlx_qz_fp4_lut[q];
    lut[q] = emlx_qz_to_bf16_bits(v); /* exact: at most 8 significant bits */
  }
}

/* 16 byte codes at p as f32: integers (affine) or e4m3 values. */
static inline TGT __m512 value8(const uint8_t *p, bool fp8) {
  __m512i c = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p));
  if (!fp8)
    return _mm512_cvtepi32_ps(c);
  __m256i h =
      _mm512_cvtepi32_epi16(_mm512_slli_epi32(_mm512_and_si512(c, _mm512_set1_epi32(127)), 7));
  __m512 f = _mm512_mul_ps(_mm512_cvtph_ps(h), _mm512_set1_ps(256.0f));
  __m512i s = _mm512_slli_epi32(_mm512_and_si512(c, _mm512_set1_epi32(128)), 24);
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(f), s));
}

/* Row `row` of W (K codes) as bf16 values in natural order. */
static TGT void decode_row(const tile_ctx *c, const uint8_t *row, uint16_t *dst) {
  const int64_t K = c->d->K;
  const int bits = c->d->bits;
  int64_t k = 0;
  if (bits == 4) {
    const __m512i lut = _mm512_loadu_si512(c->lut), lo = _mm512_set1_epi32(15),
                  hi = _mm512_set1_epi32(0xF0);
    for (; k + 32 <= K; k += 32) { /* byte i: codes 2i (low nibble), 2i + 1 */
      __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(row + k / 2)));
      __m512i idx =
          _mm512_or_si512(_mm512_and_si512(v, lo), _mm512_slli_epi32(_mm512_and_si512(v, hi), 12));
      _mm512_storeu_si512(dst + k, _mm512_permutexvar_epi16(idx, lut));
    }
  } else if (bits == 8) {
    const bool fp8 = c->d->mode == EMLX_QMM_MXFP8;
    for (; k + 32 <= K; k += 32) {
      __m512 a = value8(row + k, fp8), b = value8(row + k + 16, fp8);
      _mm512_storeu_si512(dst + k, (__m512i)_mm512_cvtne2ps_pbh(b, a));
    }
  }
  for (; k < K; k++)
    dst[k] = c->lut[emlx_qz_code(row, k, bits)];
}

/* Scale (and bias) of row r, group g, as f32. */
static float scale_of(const emlx_qmm_desc *d, int64_t at) {
  if (d->mode == EMLX_QMM_AFFINE)
    return emlx_qz_load(d->scales, at, d->scale_dtype);
  uint8_t s = ((const uint8_t *)d->scales)[at];
  return d->mode == EMLX_QMM_NVFP4 ? emlx_qz_from_fp8(s) : emlx_qz_e8m0(s);
}

/* 6 rows of x (panel ap) times the 32 columns of panel bp: out rows
 * o[0 .. mv), columns [0, nv). */
static TGT void micro(const tile_ctx *c, const uint32_t *ap, const uint32_t *bp, const float *sc,
                      const float *bi, const float *xs, float *o, int mv, int nv) {
  const emlx_qmm_desc *d = c->d;
  const int64_t G = c->G, kpg = d->group_size / 2, ldo = d->ldo;
  const bool affine = d->mode == EMLX_QMM_AFFINE;
  __m512 t[T_MR][2];
#pragma GCC unroll 6
  for (int r = 0; r < T_MR; r++)
    t[r][0] = t[r][1] = _mm512_setzero_ps();
  for (int64_t g = 0; g < G; g++) {
    __m512 a[T_MR][2];
#pragma GCC unroll 6
    for (int r = 0; r < T_MR; r++)
      a[r][0] = a[r][1] = _mm512_setzero_ps();
    const uint32_t *apg = ap + g * kpg * T_MR, *bpg = bp + g * kpg * T_NR;
    for (int64_t k = 0; k < kpg; k++) {
      __m512bh b0 = (__m512bh)_mm512_loadu_si512(bpg + k * T_NR);
      __m512bh b1 = (__m512bh)_mm512_loadu_si512(bpg + k * T_NR + 16);
#pragma GCC unroll 6
      for (int r = 0; r < T_MR; r++) {
        __m512bh x = (__m512bh)_mm512_set1_epi32((int)apg[k * T_MR + r]);
        a[r][0] = _mm512_dpbf16_ps(a[r][0], x, b0);
        a[r][1] = _mm512_dpbf16_ps(a[r][1], x, b1);
      }
    }
    __m512 s0 = _mm512_loadu_ps(sc + g * T_NR), s1 = _mm512_loadu_ps(sc + g * T_NR + 16);
#pragma GCC unroll 6
    for (int r = 0; r < T_MR; r++) {
      t[r][0] = _mm512_fmadd_ps(a[r][0], s0, t[r][0]);
      t[r][1] = _mm512_fmadd_ps(a[r][1], s1, t[r][1]);
    }
    if (affine) {
      __m512 c0 = _mm512_loadu_ps(bi + g * T_NR), c1 = _mm512_loadu_ps(bi + g * T_NR + 16);
#pragma GCC unroll 6
      for (int r = 0; r < T_MR; r++) {
        __m512 xv = _mm512_set1_ps(xs[r * G + g]);
        t[r][0] = _mm512_fmadd_ps(xv, c0, t[r][0]);
        t[r][1] = _mm512_fmadd_ps(xv, c1, t[r][1]);
      }
    }
  }
  __mmask16 m0 = nv >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nv) - 1u);
  __mmask16 m1 = nv >= 32 ? (__mmask16)0xFFFF : nv <= 16 ? 0 : (__mmask16)((1u << (nv - 16)) - 1u);
  for (int r = 0; r < mv; r++) {
    _mm512_mask_storeu_ps(o + r * ldo, m0, t[r][0]);
    _mm512_mask_storeu_ps(o + r * ldo + 16, m1, t[r][1]);
  }
}

static TGT void tile_range(void *vctx, int64_t b0, int64_t b1) {
  tile_ctx *c = vctx;
  const emlx_qmm_desc *d = c->d;
  const int64_t K = d->K, G = c->G, kp = c->kp;
  size_t panel_n = (size_t)(kp * T_NR), sg = (size_t)(G * T_NR);
  uint32_t *panel = emlx__scratch_get(panel_n * 4 + (size_t)K * 2 + 64 + sg * 8);
  if (!panel) {
    atomic_store(&c->failed, true);
    return;
  }
  float *sc = (float *)(panel + panel_n), *bi = sc + sg;
  uint16_t *rowbuf = (uint16_t *)(bi + sg);
  const bool affine = d->mode == EMLX_QMM_AFFINE;
  for (int64_t b = b0; b < b1; b++) {
    int64_t n0 = b * T_NR;
    int nv = (int)(d->N - n0 < T_NR ? d->N - n0 : T_NR);
    if (nv < T_NR) {
      memset(panel, 0, panel_n * 4);
      memset(sc, 0, sg * 8);
    }
    for (int j = 0; j < nv; j++) {
      int64_t n = n0 + j;
      decode_row(c, (const uint8_t *)d->w + n * c->row_bytes, rowbuf);
      const uint32_t *pairs = (const uint32_t *)rowbuf;
      for (int64_t k = 0; k < kp; k++)
        panel[k * T_NR + j] = pairs[k];
      for (int64_t g = 0; g < G; g++) {
        sc[g * T_NR + j] = scale_of(d, n * G + g);
        bi[g * T_NR + j] = affine ? emlx_qz_load(d->biases, n * G + g, d->scale_dtype) : 0.0f;
      }
    }
    for (int64_t t = 0; t < c->mtiles; t++) {
      int64_t m0 = t * T_MR;
      int mv = (int)(d->M - m0 < T_MR ? d->M - m0 : T_MR);
      micro(c, c->xp + t * kp * T_MR, panel, sc, bi, c->xsum + m0 * G, d->out + m0 * d->ldo + n0,
            mv, nv);
    }
  }
  emlx__scratch_put(panel);
}

/* Packs x; false when it holds a value vdpbf16ps would not multiply as the
 * f32 path does (non-finite, or non-zero below 2^-60). */
static bool pack_x(const tile_ctx *c, const uint16_t *xb, uint32_t *xp, float *xsum) {
  const emlx_qmm_desc *d = c->d;
  const int64_t K = d->K, G = c->G, kp = c->kp, gs = d->group_size;
  for (int64_t t = 0; t < c->mtiles; t++)
    for (int r = 0; r < T_MR; r++) {
      int64_t m = t * T_MR + r;
      uint32_t *dst = xp + t * kp * T_MR + r;
      float *su = xsum + m * G;
      if (m >= d->M) {
        for (int64_t k = 0; k < kp; k++)
          dst[k * T_MR] = 0;
        for (int64_t g = 0; g < G; g++)
          su[g] = 0.0f;
        continue;
      }
      const uint16_t *x = xb + m * d->ldx;
      for (int64_t k = 0; k < K; k++) {
        unsigned e = (x[k] >> 7) & 0xFFu;
        if (e == 0xFFu || (e < 127u - 60u && (x[k] & 0x7FFFu)))
          return false;
      }
      for (int64_t k = 0; k < kp; k++)
        dst[k * T_MR] = (uint32_t)x[2 * k] | (uint32_t)x[2 * k + 1] << 16;
      for (int64_t g = 0; g < G; g++) {
        double s = 0;
        for (int64_t k = g * gs; k < (g + 1) * gs; k++)
          s += (double)emlx_cv_bf16_to_f32(x[k]);
        su[g] = (float)s;
      }
    }
  return true;
}

bool emlx_qmm_tile_bf16_avx512(const emlx_qmm_desc *d, const uint16_t *xb) {
  tile_ctx *c = emlx__scratch_get(sizeof *c);
  if (!c)
    return false;
  c->d = d;
  c->G = d->K / d->group_size;
  c->kp = d->K / 2;
  c->row_bytes = d->K * d->bits / 8;
  c->mtiles = (d->M + T_MR - 1) / T_MR;
  make_lut(d->mode, d->bits, c->lut);
  atomic_init(&c->failed, false);
  size_t nxp = (size_t)(c->mtiles * c->kp * T_MR), nxs = (size_t)(c->mtiles * T_MR * c->G);
  uint32_t *xp = emlx__scratch_get(nxp * 4 + nxs * 4);
  bool ok = xp != NULL;
  if (ok) {
    float *xsum = (float *)(xp + nxp);
    ok = pack_x(c, xb, xp, xsum);
    c->xp = xp;
    c->xsum = xsum;
  }
  if (ok) {
    int64_t blocks = (d->N + T_NR - 1) / T_NR;
    if (d->threaded)
      emlx__parallel_for(blocks, 1, tile_range, c);
    else
      tile_range(c, 0, blocks);
    ok = !atomic_load(&c->failed);
  }
  emlx__scratch_put(xp);
  emlx__scratch_put(c);
  return ok;
}
