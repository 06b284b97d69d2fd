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
 * build does not promise them, and qmm_tile.c checks CPUID first.
 *
 * Where AMX-BF16 is usable (emlx_mm_lowp_amx) and groups are 32 codes or
 * more, the same panels feed AMX instead (micro_amx): x is copied once into
 * rows padded to a multiple of 32, and for every 32 rows of it each group
 * runs TDPBF16PS into four 16 x 16 f32 tiles (2 x 2: rows 0-15 and 16-31,
 * columns 0-15 and 16-31; a panel row of 32 code pairs is exactly two rows
 * of B's pair layout), which are stored and folded in with the group's
 * scales and biases times x's group sums, as micro does. The codes and x are
 * exact in bfloat16 and every product is exact in f32, so the two paths
 * differ only in the order of the f32 sums. EMLX_QMM_TILE_KERNEL=avx512-bf16
 * forces the vdpbf16ps micro-kernel where AMX is there (the tests run both). */
#include <immintrin.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"
#include "internal.h"
#include "matmul/matmul.h"
#include "qmm_tile.h"

#define T_MR 6
#define T_NR 32
#define TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,f16c")))
#define AMX_TGT                                                                                    \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,f16c,amx-tile,amx-bf16")))
#define A_MR 32 /* rows of x one AMX micro-kernel call covers: two 16-row tiles */
#define A_NB 4  /* AMX: panels of T_NR columns a unit of the pool holds (1 MiB at K = 4096) */

typedef struct tile_ctx {
  const emlx_qmm_desc *d;
  const uint32_t *xp; /* micro: [mtiles][K / 2][T_MR] bf16 pairs, or NULL */
  const float *xsum;  /* [packed rows][G]: sums of x over each group (affine) */
  int64_t G, kp;      /* groups per row; pairs per row (K / 2) */
  int64_t row_bytes;
  int64_t mtiles;
  const emlx_mm_lowp_kernel *amx; /* AMX's tile set-up and release, or NULL: micro */
  const uint16_t *xa;             /* AMX: x, [ma * A_MR][K] bf16, rows past M zero */
  int64_t ma;                     /* AMX: blocks of A_MR rows */
  int nb;                         /* blocks of T_NR columns a unit: A_NB (AMX) or 1 */
  uint16_t lut[256];              /* code -> bf16 bits of its value (scale aside) */
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

/* AMX: rows m0 .. m0 + 31 of the padded x (xa: row m0) times the 32
 * columns of panel bp, added to tacc, their 32 x 32 sums (rows past mv,
 * which are never stored, left out); cbuf holds the four tiles of one
 * group (both 64-byte aligned). */
static AMX_TGT void micro_amx(const tile_ctx *c, const uint16_t *xa, const uint32_t *bp,
                              const float *sc, const float *bi, const float *xs, int mv,
                              float *tacc, float *cbuf) {
  const emlx_qmm_desc *d = c->d;
  const int64_t G = c->G, K = d->K, gs = d->group_size;
  const bool affine = d->mode == EMLX_QMM_AFFINE;
  const size_t xstride = (size_t)K * 2, bstride = T_NR * 4;
  for (int64_t g = 0; g < G; g++) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (int64_t k = g * gs; k < (g + 1) * gs; k += 32) { /* 32 codes: 16 pairs a tile row */
      _tile_loadd(4, xa + k, xstride);
      _tile_loadd(5, xa + 16 * K + k, xstride);
      _tile_loadd(6, bp + k / 2 * T_NR, bstride);
      _tile_loadd(7, bp + k / 2 * T_NR + 16, bstride);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, cbuf, 64);
    _tile_stored(1, cbuf + 256, 64);
    _tile_stored(2, cbuf + 512, 64);
    _tile_stored(3, cbuf + 768, 64);
    const __m512 s0 = _mm512_loadu_ps(sc + g * T_NR), s1 = _mm512_loadu_ps(sc + g * T_NR + 16);
    const __m512 c0 = affine ? _mm512_loadu_ps(bi + g * T_NR) : _mm512_setzero_ps();
    const __m512 c1 = affine ? _mm512_loadu_ps(bi + g * T_NR + 16) : _mm512_setzero_ps();
    for (int r = 0; r < mv; r++) { /* rows past M are never stored */
      const float *t = cbuf + (r >= 16 ? 512 : 0) + (r & 15) * 16;
      float *acc = tacc + r * T_NR;
      __m512 a0 = _mm512_fmadd_ps(_mm512_load_ps(t), s0, _mm512_load_ps(acc));
      __m512 a1 = _mm512_fmadd_ps(_mm512_load_ps(t + 256), s1, _mm512_load_ps(acc + 16));
      if (affine) {
        __m512 xv = _mm512_set1_ps(xs[r * G + g]);
        a0 = _mm512_fmadd_ps(xv, c0, a0);
        a1 = _mm512_fmadd_ps(xv, c1, a1);
      }
      _mm512_store_ps(acc, a0);
      _mm512_store_ps(acc + 16, a1);
    }
  }
}

/* mv rows of 32 sums (tacc) to out rows o (stride ldo), columns [0, nv). */
static TGT void store_rows(const float *tacc, int mv, int nv, float *o, int64_t ldo) {
  __mmask16 m0 = nv >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nv) - 1u);
  __mmask16 m1 = nv >= 32 ? (__mmask16)0xFFFF : nv <= 16 ? 0 : (__mmask16)((1u << (nv - 16)) - 1u);
  for (int r = 0; r < mv; r++) {
    _mm512_mask_storeu_ps(o + r * ldo, m0, _mm512_load_ps(tacc + r * T_NR));
    _mm512_mask_storeu_ps(o + r * ldo + 16, m1, _mm512_load_ps(tacc + r * T_NR + 16));
  }
}

/* The 16 x 16 dwords of r (row i: r[i]) transposed in place. */
static inline TGT void transpose16(__m512i r[16]) {
  __m512i t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
    r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
    r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  /* each 128-bit lane now holds one 4 x 4 block transposed: two rounds of
   * lane shuffles put the blocks in place */
  for (int i = 0; i < 4; i++) {
    t[i] = _mm512_shuffle_i32x4(r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_i32x4(r[i], r[i + 4], 0xDD);
    t[i + 8] = _mm512_shuffle_i32x4(r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_i32x4(r[i + 8], r[i + 12], 0xDD);
  }
  for (int i = 0; i < 4; i++) {
    r[i] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0xDD);
    r[i + 4] = _mm512_shuffle_i32x4(t[i + 4], t[i + 12], 0x88);
    r[i + 12] = _mm512_shuffle_i32x4(t[i + 4], t[i + 12], 0xDD);
  }
}

/* Panel of the T_NR rows of W from n0 (nv of them; zeros past), with their
 * scales and biases transposed to [groups][T_NR]. Rows are decoded 16 at a
 * time into rowbuf ([16][K] bf16) and written to the panel by 16 x 16
 * transposes of their code pairs. */
static TGT void build_panel(const tile_ctx *c, int64_t n0, int nv, uint32_t *panel, float *sc,
                            float *bi, uint16_t *rowbuf) {
  const emlx_qmm_desc *d = c->d;
  const int64_t G = c->G, kp = c->kp, K = d->K;
  const bool affine = d->mode == EMLX_QMM_AFFINE;
  const int64_t kp16 = kp / 16 * 16;
  for (int j0 = 0; j0 < T_NR; j0 += 16) {
    for (int j = 0; j < 16; j++) {
      if (j0 + j < nv)
        decode_row(c, (const uint8_t *)d->w + (n0 + j0 + j) * c->row_bytes, rowbuf + j * K);
      else
        memset(rowbuf + j * K, 0, (size_t)K * 2);
    }
    const uint32_t *pairs = (const uint32_t *)rowbuf; /* row j: pairs + j * kp */
    for (int64_t k = 0; k < kp16; k += 16) {
      __m512i r[16];
      for (int j = 0; j < 16; j++)
        r[j] = _mm512_loadu_si512(pairs + j * kp + k);
      transpose16(r);
      for (int i = 0; i < 16; i++)
        _mm512_storeu_si512(panel + (k + i) * T_NR + j0, r[i]);
    }
    for (int64_t k = kp16; k < kp; k++)
      for (int j = 0; j < 16; j++)
        panel[k * T_NR + j0 + j] = pairs[j * kp + k];
  }
  for (int j = 0; j < T_NR; j++) {
    int64_t n = n0 + j;
    for (int64_t g = 0; g < G; g++) {
      sc[g * T_NR + j] = j < nv ? scale_of(d, n * G + g) : 0.0f;
      bi[g * T_NR + j] =
          j < nv && affine ? emlx_qz_load(d->biases, n * G + g, d->scale_dtype) : 0.0f;
    }
  }
}

/* Units [b0, b1) of c->nb blocks of T_NR columns each: their panels built,
 * then every row tile of x run over them (AMX: each 32 rows of x over the
 * unit's A_NB panels in turn, so those rows come from L2, not L3, after the
 * first; the 32 x 32 sums stay in L1 over the whole of K). */
static TGT void tile_range(void *vctx, int64_t b0, int64_t b1) {
  tile_ctx *c = vctx;
  const emlx_qmm_desc *d = c->d;
  const int64_t K = d->K, G = c->G, kp = c->kp;
  const int nb = c->nb;
  const size_t panel_n = (size_t)(kp * T_NR), sg = (size_t)(G * T_NR);
  const size_t per = panel_n + 2 * sg; /* 4-byte words of a panel, its scales and biases */
  const size_t amx_n = c->amx ? (size_t)(A_MR * T_NR + 4 * 256) : 0; /* tacc, cbuf */
  uint32_t *panel = emlx__scratch_get(per * 4 * (size_t)nb + (size_t)K * 32 + 64 + amx_n * 4 + 64);
  if (!panel) {
    atomic_store(&c->failed, true);
    return;
  }
  uint16_t *rowbuf = (uint16_t *)(panel + per * (size_t)nb);
  float *tacc = (float *)(((uintptr_t)(rowbuf + 16 * K) + 127) & ~(uintptr_t)63);
  float *cbuf = tacc + A_MR * T_NR;
  if (c->amx)
    c->amx->begin();
  for (int64_t b = b0; b < b1; b++) {
    int nvs[A_NB];
    int np = 0; /* panels of this unit */
    for (; np < nb && (b * nb + np) * T_NR < d->N; np++) {
      int64_t n0 = (b * nb + np) * T_NR;
      nvs[np] = (int)(d->N - n0 < T_NR ? d->N - n0 : T_NR);
      uint32_t *pj = panel + per * (size_t)np;
      build_panel(c, n0, nvs[np], pj, (float *)(pj + panel_n), (float *)(pj + panel_n + sg),
                  rowbuf);
    }
    for (int64_t t = 0; c->amx && t < c->ma; t++) {
      int64_t m0 = t * A_MR;
      int mv = (int)(d->M - m0 < A_MR ? d->M - m0 : A_MR);
      for (int j = 0; j < np; j++) {
        uint32_t *pj = panel + per * (size_t)j;
        const float *sc = (const float *)(pj + panel_n), *bi = sc + sg;
        memset(tacc, 0, (size_t)(A_MR * T_NR) * sizeof(float));
        micro_amx(c, c->xa + m0 * K, pj, sc, bi, c->xsum + m0 * G, mv, tacc, cbuf);
        store_rows(tacc, mv, nvs[j], d->out + m0 * d->ldo + (b * nb + j) * T_NR, d->ldo);
      }
    }
    for (int j = 0; !c->amx && j < np; j++) {
      uint32_t *pj = panel + per * (size_t)j;
      for (int64_t t = 0; t < c->mtiles; t++) {
        int64_t m0 = t * T_MR;
        int mv = (int)(d->M - m0 < T_MR ? d->M - m0 : T_MR);
        micro(c, c->xp + t * kp * T_MR, pj, (float *)(pj + panel_n), (float *)(pj + panel_n + sg),
              c->xsum + m0 * G, d->out + m0 * d->ldo + (b * nb + j) * T_NR, mv, nvs[j]);
      }
    }
  }
  if (c->amx)
    c->amx->end();
  emlx__scratch_put(panel);
}

/* Packs x, into the 6-row panels of micro (xp) or, for micro_amx, into
 * rows of K padded with zero rows to c->ma * A_MR (xa; exactly one of the
 * two is not NULL), with its sums per group (xsum, one row of G per packed
 * row); false when x holds a value vdpbf16ps or TDPBF16PS would not
 * multiply as the f32 path does (non-finite, or non-zero below 2^-60). */
static bool pack_x(const tile_ctx *c, const uint16_t *xb, uint32_t *xp, uint16_t *xa, float *xsum) {
  const emlx_qmm_desc *d = c->d;
  const int64_t K = d->K, G = c->G, kp = c->kp, gs = d->group_size;
  const int64_t rows = xp ? c->mtiles * T_MR : c->ma * A_MR;
  for (int64_t m = 0; m < rows; m++) {
    uint32_t *dst = xp ? xp + m / T_MR * kp * T_MR + m % T_MR : NULL;
    uint16_t *row = xa ? xa + m * K : NULL;
    float *su = xsum + m * G;
    if (m >= d->M) {
      for (int64_t k = 0; dst && k < kp; k++)
        dst[k * T_MR] = 0;
      if (row)
        memset(row, 0, (size_t)K * 2);
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
    for (int64_t k = 0; dst && k < kp; k++)
      dst[k * T_MR] = (uint32_t)x[2 * k] | (uint32_t)x[2 * k + 1] << 16;
    if (row)
      memcpy(row, x, (size_t)K * 2);
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
  c->amx = d->group_size >= 32 ? emlx_mm_lowp_amx() : NULL;
  const char *force = getenv("EMLX_QMM_TILE_KERNEL");
  if (force && !strcmp(force, "avx512-bf16"))
    c->amx = NULL;
  c->ma = (d->M + A_MR - 1) / A_MR;
  /* x packed for the micro-kernel that runs: 4-byte pairs (micro) or bf16
   * rows (micro_amx), then its group sums */
  const int64_t rows = c->amx ? c->ma * A_MR : c->mtiles * T_MR;
  size_t nx = (size_t)(rows * c->kp), nxs = (size_t)(rows * c->G);
  uint32_t *xp = emlx__scratch_get(nx * 4 + nxs * 4);
  bool ok = xp != NULL;
  if (ok) {
    float *xsum = (float *)(xp + nx);
    c->xp = c->amx ? NULL : xp;
    c->xa = c->amx ? (const uint16_t *)xp : NULL;
    c->xsum = xsum;
    ok = pack_x(c, xb, c->amx ? NULL : xp, c->amx ? (uint16_t *)xp : NULL, xsum);
  }
  if (ok) {
    c->nb = c->amx ? A_NB : 1;
    int64_t blocks = (d->N + T_NR * c->nb - 1) / (T_NR * c->nb);
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
