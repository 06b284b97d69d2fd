/* quantize/qmm_fast_body.h — the in-register kernels of quantized matmul,
 * compiled once per ISA (qmm_fast_avx2.c, qmm_fast_avx512.c). The unit
 * defines, before including this file:
 *   QF_VL                       f32 lanes of vf
 *   QF_MR, QF_NR                the prefill micro-kernel's block (QF_NR % QF_VL == 0)
 *   QF_MB                       most x rows one decode block holds (1, 2 or 4)
 *   QF_NR_OF(mb)                weight rows one decode block holds for mb x rows
 *   QF_F4_SMUL                  the factor qf_dec_f4's codes carry (1 or 0.5)
 *   QF_NAME, QF_NAME_STR        the unit's symbol (emlx_qmm_isa_avx2 ...) and name
 *   vf, qf_zero, qf_set1, qf_load, qf_store, qf_fma, qf_mul, qf_add, qf_hsum
 *   qf_dec_a4(p, lo, hi), qf_dec_f4(p, lo, hi): QF_VL bytes; lane j of lo
 *     is the low nibble of byte j, of hi its high nibble (code values:
 *     integers for affine, e2m1 times 1 / QF_F4_SMUL)
 *   qf_dec_a8(p), qf_dec_f8(p): QF_VL bytes, one code each (e4m3 / 256)
 *   qf_dec_a2(p, out): QF_VL bytes; out[s] lane j is bits 2s .. 2s+1 of byte j
 *   qf_store_part(c, v, n, add): the first n lanes of v to c (or added)
 *   qf_interleave(a, b, o0, o1): o0, o1 = a0 b0 a1 b1 ... (natural order of a split chunk)
 * and, for the integer decode path (optional), QI_VB (bytes of vi), QI_TARGET
 * (the attribute its functions need), QI_A8 (1: 8-bit codes too), QI_WORDS
 * (1: 4-bit and 8-bit codes as 16-bit words times x's 16-bit words 256 h +
 * m, and code bytes or words times its bytes l, qi_dtw_block, with
 * qi_w16(p, lo, hi): the 32 code bytes at p as words, qi_lo16(v) /
 * qi_hi16(v): the even / odd bytes of v as words, qi_dotw(acc, w, x) /
 * qi_dotwb(acc, w, x): acc + per int32 lane the sum of 2 products of words
 * of w and of x's words / sign-extended bytes, qi_dot2(w0, x0, w1, x1): per
 * int32 lane the sum of 4 products of u8 w0 and int8 bytes at x0 and 4 of
 * w1 and x1, qi_load_part(p, left): a row's last chunk; the x the driver
 * lays out per chunk then holds the words, then l; 0: codes as bytes times
 * x's bytes h, m and l, qi_dt_block), qi_ok()
 * (the CPU has what it needs), vi, qi_zero, qi_loadu, qi_and, qi_srli16_4,
 * qi_set1_8, qi_f4_lut() (the e2m1 codes 2 * value + 12 by nibble, a
 * 16-entry byte table per 128 bits), qi_f4_codes(raw, lut, lo, hi) (the
 * codes of the low and the high nibbles of the bytes of raw), qi_slli8,
 * qi_cvt (int32 lanes to vf), qi_dot(acc, w, x): acc + per int32 lane the
 * sum of 4 products of u8 w and int8 x bytes (x from memory), qi_idx(off,
 * sh): lanes (off + 4 * lane) >> sh, qi_perm(idx, v): lanes v[idx],
 * qi_e8m0(s): QI_VB / 4 e8m0 scales to f32 (MLX's: bits s << 23, 0 -> 2^-127);
 * qi_f16(h), qi_bf16(h): QI_VB / 4 f16 / bf16 values to f32 (QI_VB / 4 == QF_VL);
 * qi_amax(v, n): max |v[i]|, i < n (a multiple of QF_VL), NaNs passed by;
 * QI_M1_BLOCK (optional, default 0; 1: one x row and 4-bit codes take
 * qi_dt_m1, with qi_absmax(v, m) (lanes max(|v|, m), NaNs of v passed by)
 * and qi_hmax(m) (the largest lane)); QI_NR_OF(mb) (optional,
 * default QF_NR_OF(mb)): the integer decode path's weight rows a block for
 * mb x rows;
 * QI_TAKES_M(kind, M) (optional, default 1): whether the path takes M rows
 * of x for that kind (0: the f32 decode path or the prefill path runs);
 * QD_DEN (optional): the unit defines qd_decode_t(p, n0, n1), declared
 * before this file, for EMLX_QK_DA4 (affine 4-bit codes, one x row);
 * QI_AB (1: affine 2, 3, 5, 6-bit codes too, where qi_ab_ok()), with
 * qi_unpack_bits(v, perm, shift): byte j = 8 bits of qword j / 8 of the
 * bytes of v picked by perm, from bit shift[j];
 * QI_E8M0_NORM (optional): the unit has qi_u8_minmax(s, n, mn, mx) (the
 * least and largest of n > 0 bytes) and qi_e8m0_shift(s, left, sh) (QF_VL
 * e8m0 bytes, left of them real, to the f32 of bits (byte + sh) << 23, 0
 * past left), for the mxfp4 scales' shortcut (qi_e8m0_norm), and optionally
 * QI_U8_MINMAX4, a count n, with qi_u8_minmax4(s, stride, mn, mx): that of
 * 4 runs of n bytes, stride apart, at once;
 * optionally QF_TR, the unit's emlx_qmm_isa.tr; QF_GACC (default 1), the
 * independent sums the f32 decode path (transpose) keeps per weight row and
 * x row within a group, taken in turn over the parts and chunks (more of
 * them hide the FMA latency); QF_WBLOCK (default 0: none), bytes of W rows
 * per block of that path, which every block of x rows then reads from L2.
 * A chunk is QF_VL bytes of a packed row: QF_VL * ppb codes (ppb codes per
 * byte); the decode path keeps x permuted to the lane order of a chunk
 * (code v of the chunk sits at (v % ppb) * QF_VL + v / ppb). */
#include <string.h>

#include "internal.h"
#include "qmm_fast.h"

#define QF_PPB(kind)                                                                               \
  ((kind) == EMLX_QK_A4 || (kind) == EMLX_QK_F4 ? 2 : (kind) == EMLX_QK_A2 ? 4 : 1)
#define QF_INLINE static inline __attribute__((always_inline))
#ifndef QF_GACC
#define QF_GACC 1 /* decode path, transpose: sums per group and pair of rows */
#endif
#define QF_GB 32 /* groups of scales loaded at a time */

static int qf_pick(emlx_qmm_prob *p) {
  int kind = EMLX_QK_GENERIC;
  p->smul = 1.0f;
  if (p->mode == EMLX_QMM_AFFINE)
    kind = p->bits == 4 ? EMLX_QK_A4 : p->bits == 8 ? EMLX_QK_A8 : p->bits == 2 ? EMLX_QK_A2 : kind;
  else if (p->mode == EMLX_QMM_MXFP8)
    kind = EMLX_QK_F8, p->smul = 256.0f;
  else
    kind = EMLX_QK_F4, p->smul = QF_F4_SMUL;
  if (kind != EMLX_QK_GENERIC && QF_VL * QF_PPB(kind) > p->gs)
    kind = EMLX_QK_GENERIC; /* a chunk would straddle groups */
  if (kind == EMLX_QK_GENERIC)
    p->smul = 1.0f;
  return kind;
}

QF_INLINE void qf_decode(const uint8_t *b, const int kind, vf *w) {
  switch (kind) {
  case EMLX_QK_A4:
    qf_dec_a4(b, &w[0], &w[1]);
    break;
  case EMLX_QK_F4:
    qf_dec_f4(b, &w[0], &w[1]);
    break;
  case EMLX_QK_A8:
    w[0] = qf_dec_a8(b);
    break;
  case EMLX_QK_F8:
    w[0] = qf_dec_f8(b);
    break;
  default:
    qf_dec_a2(b, w);
    break;
  }
}

/* ---- decode path, transpose: NR weight rows from n, MB x rows from m0 ---- */

QF_INLINE void qf_dt_block(const emlx_qmm_prob *p, int64_t n, int64_t m0, const int kind,
                           const int NR, const int MB) {
  const int ppb = QF_PPB(kind), CV = QF_VL * ppb;
  const int64_t gs = p->gs, cg = gs / CV, gbytes = gs * p->bits / 8, G = p->groups;
  const bool affine = p->mode == EMLX_QMM_AFFINE;
  const uint8_t *wr[4];
  const float *xq[4], *xs[4];
  for (int r = 0; r < NR; r++)
    wr[r] = (const uint8_t *)p->w + (n + r) * p->row_bytes;
  for (int i = 0; i < MB; i++) {
    xq[i] = p->xp + (m0 + i) * p->K;
    xs[i] = p->xsum + (m0 + i) * G;
  }
  vf acc[4][4];
  float bacc[4][4];
  for (int r = 0; r < NR; r++)
    for (int i = 0; i < MB; i++) {
      acc[r][i] = qf_zero();
      bacc[r][i] = 0.0f;
    }
  float sc[4][QF_GB], bs[4][QF_GB], xb[4][QF_GB];
  const bool f32s = p->sdt == EMLX_FLOAT32 && p->smul == 1.0f;
  for (int64_t g0 = 0; g0 < G; g0 += QF_GB) {
    int64_t ng = G - g0 < QF_GB ? G - g0 : QF_GB;
    int64_t ngv = (ng + QF_VL - 1) / QF_VL * QF_VL; /* zero-padded to whole vectors */
    if (affine)
      for (int i = 0; i < MB; i++) {
        memcpy(xb[i], xs[i] + g0, (size_t)ng * sizeof(float));
        memset(xb[i] + ng, 0, (size_t)(ngv - ng) * sizeof(float));
      }
    for (int r = 0; r < NR; r++) {
      if (f32s)
        memcpy(sc[r], (const float *)p->scales + (n + r) * G + g0, (size_t)ng * sizeof(float));
      else
        emlx_qmm_load_scales(p, n + r, g0, ng, sc[r]);
      if (affine) { /* bias * sum x over the groups, in vectors */
        if (p->sdt == EMLX_FLOAT32)
          memcpy(bs[r], (const float *)p->biases + (n + r) * G + g0, (size_t)ng * sizeof(float));
        else
          emlx_qmm_load_biases(p, n + r, g0, ng, bs[r]);
        memset(bs[r] + ng, 0, (size_t)(ngv - ng) * sizeof(float));
        for (int i = 0; i < MB; i++) {
          vf b = qf_zero();
          for (int64_t g = 0; g < ngv; g += QF_VL)
            b = qf_fma(qf_load(bs[r] + g), qf_load(xb[i] + g), b);
          bacc[r][i] += qf_hsum(b);
        }
      }
    }
    for (int64_t g = 0; g < ng; g++) {
      /* QF_GACC sums per (weight row, x row) in turn over the chunk's parts
       * and chunks: independent FMA chains, joined at the group's end */
      vf gacc[4][4][QF_GACC];
      for (int r = 0; r < NR; r++)
        for (int i = 0; i < MB; i++)
          for (int a = 0; a < QF_GACC; a++)
            gacc[r][i][a] = qf_zero();
      const int64_t off = (g0 + g) * gbytes, xoff = (g0 + g) * gs;
      for (int64_t c = 0; c < cg; c++) {
        vf wv[4][4];
        for (int r = 0; r < NR; r++)
          qf_decode(wr[r] + off + c * QF_VL, kind, wv[r]);
        for (int i = 0; i < MB; i++)
          for (int s = 0; s < ppb; s++) {
            vf xv = qf_load(xq[i] + xoff + c * CV + s * QF_VL);
            const int a = (int)((c * ppb + s) % QF_GACC);
            for (int r = 0; r < NR; r++)
              gacc[r][i][a] = qf_fma(wv[r][s], xv, gacc[r][i][a]);
          }
      }
      for (int r = 0; r < NR; r++) {
        vf s = qf_set1(sc[r][g]);
        for (int i = 0; i < MB; i++) {
          vf t = gacc[r][i][0];
          for (int a = 1; a < QF_GACC; a++)
            t = qf_add(t, gacc[r][i][a]);
          acc[r][i] = qf_fma(s, t, acc[r][i]);
        }
      }
    }
  }
  for (int r = 0; r < NR; r++)
    for (int i = 0; i < MB; i++)
      p->orow[m0 + i][n + r] = qf_hsum(acc[r][i]) + bacc[r][i];
}

/* One function per block shape, so that each has its own stack frame (six
 * inlined copies in one function add up past the frame limit under ASan). */
#define QF_DT_SHAPE(kind, name, NRv, MBv)                                                          \
  static __attribute__((noinline)) void qf_dt_##kind##_##name(const emlx_qmm_prob *p, int64_t n,   \
                                                              int64_t m0) {                        \
    qf_dt_block(p, n, m0, kind, NRv, MBv);                                                         \
  }
#define QF_DT_KIND(kind)                                                                           \
  QF_DT_SHAPE(kind, w4, QF_NR_OF(4), 4)                                                            \
  QF_DT_SHAPE(kind, n4, 1, 4)                                                                      \
  QF_DT_SHAPE(kind, w2, QF_NR_OF(2), 2)                                                            \
  QF_DT_SHAPE(kind, n2, 1, 2)                                                                      \
  QF_DT_SHAPE(kind, w1, QF_NR_OF(1), 1)                                                            \
  QF_DT_SHAPE(kind, n1, 1, 1)                                                                      \
  static void qf_dt_##kind(const emlx_qmm_prob *p, int64_t n, int64_t m0, int nr, int mb) {        \
    if (mb == 4 && QF_MB >= 4) {                                                                   \
      if (nr == QF_NR_OF(4))                                                                       \
        qf_dt_##kind##_w4(p, n, m0);                                                               \
      else                                                                                         \
        qf_dt_##kind##_n4(p, n, m0);                                                               \
    } else if (mb == 2 && QF_MB >= 2) {                                                            \
      if (nr == QF_NR_OF(2))                                                                       \
        qf_dt_##kind##_w2(p, n, m0);                                                               \
      else                                                                                         \
        qf_dt_##kind##_n2(p, n, m0);                                                               \
    } else {                                                                                       \
      if (nr == QF_NR_OF(1))                                                                       \
        qf_dt_##kind##_w1(p, n, m0);                                                               \
      else                                                                                         \
        qf_dt_##kind##_n1(p, n, m0);                                                               \
    }                                                                                              \
  }
QF_DT_KIND(EMLX_QK_A4)
QF_DT_KIND(EMLX_QK_F4)
QF_DT_KIND(EMLX_QK_A8)
QF_DT_KIND(EMLX_QK_F8)
QF_DT_KIND(EMLX_QK_A2)

#ifndef QF_WBLOCK
#define QF_WBLOCK 0 /* bytes of W rows per block of the decode path; 0: none */
#endif

static void qf_decode_t(const emlx_qmm_prob *p, int64_t n0, int64_t n1) {
  void (*blk)(const emlx_qmm_prob *, int64_t, int64_t, int, int) =
      p->kind == EMLX_QK_A4   ? qf_dt_EMLX_QK_A4
      : p->kind == EMLX_QK_F4 ? qf_dt_EMLX_QK_F4
      : p->kind == EMLX_QK_A8 ? qf_dt_EMLX_QK_A8
      : p->kind == EMLX_QK_F8 ? qf_dt_EMLX_QK_F8
                              : qf_dt_EMLX_QK_A2;
  /* blocks of W rows of QF_WBLOCK bytes, which stay in L2 while every block
   * of x rows runs over them: W streams from memory once for all M rows */
  int64_t nb = QF_WBLOCK ? QF_WBLOCK / p->row_bytes : n1 - n0;
  nb = nb < 4 ? 4 : nb;
  for (int64_t b0 = n0; b0 < n1; b0 += nb) {
    const int64_t b1 = n1 - b0 < nb ? n1 : b0 + nb;
    for (int64_t m0 = 0; m0 < p->M;) {
      int64_t left = p->M - m0;
      int mb = left >= 4 && QF_MB >= 4 ? 4 : left >= 2 && QF_MB >= 2 ? 2 : 1;
      int nrb = QF_NR_OF(mb);
      for (int64_t n = b0; n < b1;) {
        int nr = b1 - n >= nrb ? nrb : 1;
        blk(p, n, m0, nr, mb);
        n += nr;
      }
      m0 += mb;
    }
  }
}

#ifdef QI_VB
/* ---- decode path, transpose, integer dot products ---------------------------
 * Codes as u8 (nibbles, or 2 * e2m1 + 12) times x as 24-bit codes per group,
 * x ~ xsc * (65536 * h + 256 * m + l), h, m, l int8, in int32 lanes: a lane
 * of a chunk covers 4 code bytes of one group, so per chunk each lane's
 * exact integer sum, scaled by its group's scale * xsc, goes into f32 (4-bit
 * codes: |sum| < 2^31 whole; 8-bit: the h part on its own). Biases (affine)
 * and the offset 12 (e2m1) act through the per-group sums of x. A chunk is
 * QI_VB bytes of a packed row; the prepared x holds per chunk h of part 0 ..
 * ppb - 1, then m of each, then l (part s: the codes at s, s + ppb, ...: the
 * low / high nibbles). */

#define QI_VL (QI_VB / 4) /* int32 lanes: also the groups one scale vector holds */
#define QI_GC 128         /* groups of scales converted to f32 at a time */
#define QI_PF_BYTES 16384 /* software prefetch distance (the packed rows ahead) */

#ifndef QI_WORDS
#define QI_WORDS 0 /* codes as bytes against x's bytes h, m and l (qi_dt_block) */
#endif
#if QI_WORDS && QI_AB
#error "qi_dtw_block takes 4-bit and 8-bit codes only"
#endif
#ifndef QI_NR_OF
#define QI_NR_OF(mb) QF_NR_OF(mb) /* weight rows one integer decode block holds for mb x rows */
#endif
#ifndef QI_M1_BLOCK
#define QI_M1_BLOCK 0 /* one x row: one weight row at a time (qi_decode_t) */
#endif
#ifndef QI_TAKES_M
#define QI_TAKES_M(kind, M) 1 /* every M the driver offers */
#endif

static int qi_kind(emlx_qmm_prob *p) {
#ifdef QD_DEN
  if (p->mode == EMLX_QMM_AFFINE && p->bits == 4 && p->M == 1)
    return EMLX_QK_DA4; /* the unit's subnormal-code path (qd_decode_t) */
#endif
  if (p->mode == EMLX_QMM_AFFINE && p->bits == 4)
    return EMLX_QK_IA4;
  if (p->mode == EMLX_QMM_AFFINE && p->bits == 8 && QI_A8)
    return EMLX_QK_IA8;
  if (p->mode == EMLX_QMM_AFFINE &&
      (p->bits == 2 || p->bits == 3 || p->bits == 5 || p->bits == 6) && qi_ab_ok())
    return EMLX_QK_IAB;
  if (p->mode == EMLX_QMM_MXFP4 || p->mode == EMLX_QMM_NVFP4) {
    p->smul = 0.5f;
    return EMLX_QK_IF4;
  }
  return EMLX_QK_GENERIC;
}

static int qi_pick(emlx_qmm_prob *p) {
  p->smul = 1.0f;
  if (!qi_ok() || !p->transpose)
    return EMLX_QK_GENERIC;
  int kind = qi_kind(p);
  if (kind != EMLX_QK_GENERIC && !QI_TAKES_M(kind, p->M))
    kind = EMLX_QK_GENERIC; /* the f32 decode path is faster for these rows */
  if (kind == EMLX_QK_GENERIC)
    p->smul = 1.0f;
  return kind;
}

/* 2^e as f32 (e in -126 .. 127) and as f64 (e in -1022 .. 1023), from the bits */
static inline float qi_pow2f(int e) {
  const uint32_t b = (uint32_t)(e + 127) << 23;
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}
static inline double qi_pow2d(int e) {
  const uint64_t b = (uint64_t)(e + 1023) << 52;
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

/* The block's power of two: v[0 .. n) (and w[0 .. n), when not NULL; n a
 * multiple of QI_VL) times 2^a, a the one that takes their largest |value|
 * into [2^(top - 1), 2^top), within -126 .. 127 (so 2^a and the normal
 * values times it stay f32); 0 when that value is 0 or Inf (NaNs pass
 * by). Returns a. */
static inline int qi_norm_exp(float mx, int top) { /* qi_normalize's a for the largest |value| */
  if (!(mx > 0.0f && mx <= 3.4028235e38f))
    return 0;
  uint32_t b;
  memcpy(&b, &mx, sizeof b);
  int e = (int)(b >> 23) - 126; /* 2^(e - 1) <= mx < 2^e */
  if (b < 0x00800000u) {        /* subnormal */
    mx *= 0x1p64f;
    memcpy(&b, &mx, sizeof b);
    e = (int)(b >> 23) - 126 - 64;
  }
  return top - e < -126 ? -126 : top - e > 127 ? 127 : top - e;
}
QF_INLINE QI_TARGET int qi_normalize(float *v, float *w, int64_t n, int top) {
  float mx = qi_amax(v, n), mw = w ? qi_amax(w, n) : 0.0f;
  mx = mw > mx ? mw : mx;
  const int a = qi_norm_exp(mx, top);
  if (a == 0) /* (times 1: as they are) */
    return 0;
  const vf f = qf_set1(qi_pow2f(a));
  for (int64_t i = 0; i < n; i += QF_VL) {
    qf_store(v + i, qf_mul(qf_load(v + i), f));
    if (w)
      qf_store(w + i, qf_mul(qf_load(w + i), f));
  }
  return a;
}

/* QI_VL scales or biases from element at of an f32, f16 or bf16 array, to f32 */
QF_INLINE QI_TARGET vf qi_load_sdt(const void *base, emlx_dtype sdt, int64_t at) {
  if (sdt == EMLX_FLOAT32)
    return qf_load((const float *)base + at);
  if (sdt == EMLX_FLOAT16)
    return qi_f16((const uint16_t *)base + at);
  return qi_bf16((const uint16_t *)base + at);
}

/* the row's last, partial chunk, zero-padded (out of line: inlined, its
 * buffer took the whole chunks' loads through the stack too) */
static __attribute__((noinline)) QI_TARGET vi qi_wload_part(const uint8_t *w, int64_t left) {
  uint8_t t[QI_VB] = {0};
  memcpy(t, w, (size_t)left);
  return qi_loadu(t);
}

QF_INLINE QI_TARGET vi qi_wload(const uint8_t *w, int64_t left) {
  return __builtin_expect(left >= QI_VB, 1) ? qi_loadu(w) : qi_wload_part(w, left);
}

/* The scales (and biases) of packed row r + pf_rows, groups [g0, g0 + nc),
 * prefetched, where that row exists. */
QF_INLINE void qi_prefetch_scales(const emlx_qmm_prob *p, int64_t r, int64_t g0, int64_t nc) {
  if (r + p->pf_rows >= p->rows)
    return;
  const int64_t es = p->sdt == EMLX_UINT8 ? 1 : p->sdt == EMLX_FLOAT32 ? 4 : 2;
  const int64_t at = ((r + p->pf_rows) * p->groups + g0) * es;
  for (int64_t o = 0; o < nc * es; o += 64) {
    _mm_prefetch((const char *)p->scales + at + o, _MM_HINT_T0);
    if (p->mode == EMLX_QMM_AFFINE)
      _mm_prefetch((const char *)p->biases + at + o, _MM_HINT_T0);
  }
}

/* The f32 scales (times p->smul) and biases (affine) of packed row r, groups
 * [g0, g0 + QI_GC) or to the row's end, zero-padded to whole vectors, into
 * sb and bb; the same groups of the row pf_rows ahead prefetched. */
QF_INLINE QI_TARGET void qi_row_scales(const emlx_qmm_prob *p, int64_t r, int64_t g0, float *sb,
                                       float *bb) {
  const int64_t G = p->groups;
  const bool affine = p->mode == EMLX_QMM_AFFINE;
  const int64_t nc = G - g0 < QI_GC ? G - g0 : QI_GC, ncp = (nc + QI_VL - 1) / QI_VL * QI_VL;
  qi_prefetch_scales(p, r, g0, nc);
  int64_t done = 0;
  if (p->sdt == EMLX_UINT8 && p->mode == EMLX_QMM_MXFP4) { /* e8m0, in vectors */
    const uint8_t *sc8 = (const uint8_t *)p->scales + r * G + g0;
    for (; done + QI_VL <= nc; done += QI_VL)
      qf_store(sb + done, qf_mul(qi_e8m0(sc8 + done), qf_set1(p->smul)));
  } else if (affine) { /* f32, f16 or bf16 scales and biases (smul 1), in vectors */
    const int64_t at = r * G + g0;
    for (; done + QI_VL <= nc; done += QI_VL) {
      qf_store(sb + done, qi_load_sdt(p->scales, p->sdt, at + done));
      qf_store(bb + done, qi_load_sdt(p->biases, p->sdt, at + done));
    }
  }
  if (done < nc)
    emlx_qmm_load_scales(p, r, g0 + done, nc - done, sb + done);
  memset(sb + nc, 0, (size_t)(ncp - nc) * sizeof(float));
  if (affine) {
    if (done < nc)
      emlx_qmm_load_biases(p, r, g0 + done, nc - done, bb + done);
    memset(bb + nc, 0, (size_t)(ncp - nc) * sizeof(float));
  }
}

#ifdef QI_E8M0_NORM
/* Whether the e8m0 shortcut takes these scales (mxfp4's, with smul 0.5),
 * and a row's, by its least and largest bytes: every scale times 2^(128 -
 * mx) normal (mx - mn <= 126), none 255 (MLX: +Inf) and not all 0. */
static inline bool qi_e8m0_fmt(const emlx_qmm_prob *p) {
  return p->mode == EMLX_QMM_MXFP4 && p->sdt == EMLX_UINT8 && p->smul == 0.5f;
}
static inline bool qi_e8m0_fits(int mn, int mx) { return mx != 0 && mx != 255 && mx - mn <= 126; }

/* The least and the largest e8m0 scale byte (mn, mx) of each of the NR
 * packed rows from n, groups [g0, g0 + nc); 4 rows at once where the unit
 * has QI_U8_MINMAX4 for nc groups. */
QF_INLINE QI_TARGET void qi_e8m0_minmax(const emlx_qmm_prob *p, int64_t n, int64_t g0, int64_t nc,
                                        int NR, int *mn, int *mx) {
  const uint8_t *sc8 = (const uint8_t *)p->scales + n * p->groups + g0;
#ifdef QI_U8_MINMAX4
  if (NR == 4 && nc == QI_U8_MINMAX4) {
    qi_u8_minmax4(sc8, p->groups, mn, mx);
    return;
  }
#endif
  for (int r = 0; r < NR; r++)
    qi_u8_minmax(sc8 + r * p->groups, nc, &mn[r], &mx[r]);
}

/* e8m0 scales (mxfp4, p->smul 0.5) of packed row r, groups [g0, g0 + nc),
 * their least and largest bytes mn and mx, straight to what qi_row_scales
 * then qi_normalize(.., 1) give, and a: every scale is 2^(e - 128) (e the
 * byte, 0 included), so a = 128 - mx and the scale times 2^a has the
 * exponent field 127 - (mx - e). false (nothing written) where that leaves
 * the normal range or a byte is 255 (MLX: +Inf), which qi_row_scales and
 * qi_normalize then take: mx 0 or 255, or mx - mn > 126.
 * The row pf_rows ahead is prefetched (qi_prefetch_scales). */
QF_INLINE QI_TARGET bool qi_e8m0_norm(const emlx_qmm_prob *p, int64_t r, int64_t g0, int64_t nc,
                                      int64_t ncp, int mn, int mx, float *sb, int *a) {
  const uint8_t *sc8 = (const uint8_t *)p->scales + r * p->groups + g0;
  qi_prefetch_scales(p, r, g0, nc);
  if (!qi_e8m0_fits(mn, mx))
    return false;
  const int sh = 127 - mx; /* exponent field = e + sh */
  for (int64_t g = 0; g < ncp; g += QF_VL)
    qf_store(sb + g, qi_e8m0_shift(sc8 + g, nc - g, sh));
  *a = 128 - mx;
  return true;
}
#endif

/* A block's rows: of W (wr; pw, the rows to prefetch, p->pf_rows ahead, or
 * this one at the end) and of the prepared x (codes, sums, code scales). */
typedef struct qi_rows {
  const uint8_t *wr[4], *pw[4];
  const int8_t *xq[4];
  const float *xs[4], *xc[4];
} qi_rows;

QF_INLINE qi_rows qi_rows_of(const emlx_qmm_prob *p, int64_t n, int64_t m0, int NR, int MB) {
  qi_rows t;
  for (int r = 0; r < NR; r++) {
    t.wr[r] = (const uint8_t *)p->w + (n + r) * p->row_bytes;
    t.pw[r] = n + r + p->pf_rows < p->rows ? t.wr[r] + p->pf_rows * p->row_bytes : t.wr[r];
  }
  for (int i = 0; i < MB; i++) {
    t.xq[i] = p->xi + (m0 + i) * p->xi_row;
    t.xs[i] = p->xsum + (m0 + i) * p->xs_row;
    t.xc[i] = p->xsc + (m0 + i) * p->xs_row;
  }
  return t;
}

/* Groups [g0, g0 + QI_VL) (at gc of the scales in sb, bb): cs = each W
 * row's scales times each x row's code scales; bacc += the biases (e2m1:
 * the offset 12 of the codes) times the sums of x. */
QF_INLINE QI_TARGET void qi_group_scales(const emlx_qmm_prob *p, const qi_rows *t, int64_t g0,
                                         int64_t gc, float sb[][QI_GC], float bb[][QI_GC], int NR,
                                         int MB, vf cs[][4], vf bacc[][4]) {
  const bool affine = p->mode == EMLX_QMM_AFFINE;
  vf xc[4], xs[4]; /* e2m1: the sums times -12, once for all the W rows */
  for (int i = 0; i < MB; i++) {
    xc[i] = qf_load(t->xc[i] + g0);
    xs[i] = affine ? qf_load(t->xs[i] + g0) : qf_mul(qf_load(t->xs[i] + g0), qf_set1(-12.0f));
  }
  for (int r = 0; r < NR; r++) {
    const vf vs = qf_load(sb[r] + gc), vb = affine ? qf_load(bb[r] + gc) : vs;
    for (int i = 0; i < MB; i++) {
      cs[r][i] = qf_mul(vs, xc[i]);
      bacc[r][i] = qf_fma(vb, xs[i], bacc[r][i]);
    }
  }
}

/* A block of scales done: tot += (acc + hmul * hacc + bacc), each summed
 * over its lanes, times 2^(xe - a) (x row's and W row's powers of two), in
 * f64; the sums cleared for the next block. */
QF_INLINE QI_TARGET void qi_flush(const emlx_qmm_prob *p, int64_t m0, int NR, int MB, const int *a,
                                  vf acc[][4], double hmul, vf hacc[][4], vf bacc[][4],
                                  double tot[][4]) {
  for (int r = 0; r < NR; r++)
    for (int i = 0; i < MB; i++) {
      double s = (double)qf_hsum(acc[r][i]) + (double)qf_hsum(bacc[r][i]);
      if (hmul != 0.0)
        s += hmul * (double)qf_hsum(hacc[r][i]);
      tot[r][i] += s * qi_pow2d(p->xe[m0 + i] - a[r]);
      acc[r][i] = bacc[r][i] = hacc[r][i] = qf_zero();
    }
}

/* Groups [g0, g0 + QI_GC) of the block's W rows: the rows' scales and
 * biases loaded and scaled by their powers of two (a). */
QF_INLINE QI_TARGET void qi_block_scales(const emlx_qmm_prob *p, int64_t n, int64_t g0, int NR,
                                         float sb[][QI_GC], float bb[][QI_GC], int *a) {
  const int64_t nc = p->groups - g0 < QI_GC ? p->groups - g0 : QI_GC;
  const int64_t ncp = (nc + QI_VL - 1) / QI_VL * QI_VL;
#ifdef QI_E8M0_NORM
  const bool e8 = qi_e8m0_fmt(p);
  int mn[4], mx[4];
  if (e8)
    qi_e8m0_minmax(p, n, g0, nc, NR, mn, mx);
#endif
  for (int r = 0; r < NR; r++) {
#ifdef QI_E8M0_NORM
    if (e8 && qi_e8m0_norm(p, n + r, g0, nc, ncp, mn[r], mx[r], sb[r], &a[r]))
      continue;
#endif
    qi_row_scales(p, n + r, g0, sb[r], bb[r]);
    a[r] = qi_normalize(sb[r], p->mode == EMLX_QMM_AFFINE ? bb[r] : NULL, ncp, 1);
  }
}

/* Groups [g0, g0 + QI_GC) of the block's W rows: the sums of the last block
 * flushed (g0 > 0), then qi_block_scales. */
QF_INLINE QI_TARGET void qi_next_scales(const emlx_qmm_prob *p, int64_t n, int64_t m0, int64_t g0,
                                        int NR, int MB, float sb[][QI_GC], float bb[][QI_GC],
                                        int *a, vf acc[][4], double hmul, vf hacc[][4],
                                        vf bacc[][4], double tot[][4]) {
  if (g0 > 0)
    qi_flush(p, m0, NR, MB, a, acc, hmul, hacc, bacc, tot);
  qi_block_scales(p, n, g0, NR, sb, bb, a);
}

/* The block's outputs: tot after the last block's flush, to f32. */
QF_INLINE QI_TARGET void qi_store_out(const emlx_qmm_prob *p, int64_t n, int64_t m0, int NR, int MB,
                                      const int *a, vf acc[][4], double hmul, vf hacc[][4],
                                      vf bacc[][4], double tot[][4]) {
  qi_flush(p, m0, NR, MB, a, acc, hmul, hacc, bacc, tot);
  for (int r = 0; r < NR; r++)
    for (int i = 0; i < MB; i++)
      p->orow[m0 + i][n + r] = (float)tot[r][i];
}

/* A chunk of 4-bit codes as its two parts' bytes: the low and the high
 * nibbles (EMLX_QK_IA4), or both mapped by the e2m1 table (EMLX_QK_IF4). */
QF_INLINE QI_TARGET void qi_codes4(const int kind, vi raw, vi lut, vi m4, vi *lo, vi *hi) {
  if (kind == EMLX_QK_IF4) {
    qi_f4_codes(raw, lut, lo, hi);
  } else {
    *lo = qi_and(raw, m4);
    *hi = qi_and(qi_srli16_4(raw), m4);
  }
}

#if QI_M1_BLOCK && !QI_WORDS
/* qi_dt_m1's block start, groups [g0, g0 + nc): each W row's scales
 * times x's code scales, into sb, and the products of its biases (e2m1:
 * of its scales and the codes' offset -12) with x's sums, into bacc: the
 * values, and the order, of qi_block_scales then qi_group_scales, with
 * each row's scales (times 2^a) made as they are needed, from the e8m0
 * bytes (mxfp4, every row in range: qi_e8m0_fits) or from the
 * affine scales and biases, where the groups are whole vectors; the sums
 * in a register. */
QF_INLINE QI_TARGET void qi_m1_scales(const emlx_qmm_prob *p, const qi_rows *t, int64_t n,
                                      int64_t g0, int64_t nc, int NR, float sb[][QI_GC],
                                      float bb[][QI_GC], int *a, vf bacc[][4]) {
  const bool affine = p->mode == EMLX_QMM_AFFINE;
  const int64_t G = p->groups;
  bool e8 = false;
  int sh[4] = {0, 0, 0, 0};
#ifdef QI_E8M0_NORM
  if (nc % QI_VL == 0 && qi_e8m0_fmt(p)) {
    int mn[4], mx[4];
    qi_e8m0_minmax(p, n, g0, nc, NR, mn, mx);
    e8 = true;
    for (int r = 0; r < NR; r++) {
      e8 = e8 && qi_e8m0_fits(mn[r], mx[r]);
      sh[r] = 127 - mx[r], a[r] = 128 - mx[r]; /* (qi_block_scales' where !e8) */
    }
  }
#endif
  if (!e8 && !(nc % QI_VL == 0 && affine)) { /* the scales through sb, as qi_dt_block's */
    qi_block_scales(p, n, g0, NR, sb, bb, a);
    for (int64_t k = 0; k < nc; k += QI_VL) {
      vf cs[4][4];
      qi_group_scales(p, t, g0 + k, k, sb, bb, NR, 1, cs, bacc);
      for (int r = 0; r < NR; r++)
        qf_store(sb[r] + k, cs[r][0]);
    }
    return;
  }
  float xs[QI_GC]; /* x's sums (e2m1: times -12), once for all the rows */
  for (int64_t k = 0; k < nc; k += QI_VL) {
    const vf v = qf_load(t->xs[0] + g0 + k);
    qf_store(xs + k, affine ? v : qf_mul(v, qf_set1(-12.0f)));
  }
  for (int r = 0; r < NR; r++) {
    const int64_t at = (n + r) * G + g0;
    const float *xc = t->xc[0] + g0;
    vf b = bacc[r][0];
    qi_prefetch_scales(p, n + r, g0, nc);
    if (affine) { /* a: qi_normalize's, over the scales and the biases */
      vf m = qf_zero();
      for (int64_t k = 0; k < nc; k += QI_VL) {
        m = qi_absmax(qi_load_sdt(p->scales, p->sdt, at + k), m);
        m = qi_absmax(qi_load_sdt(p->biases, p->sdt, at + k), m);
      }
      a[r] = qi_norm_exp(qi_hmax(m), 1);
      const vf f = qf_set1(qi_pow2f(a[r]));
      for (int64_t k = 0; k < nc; k += QI_VL) {
        const vf vs = qf_mul(qi_load_sdt(p->scales, p->sdt, at + k), f);
        qf_store(sb[r] + k, qf_mul(vs, qf_load(xc + k)));
        b = qf_fma(qf_mul(qi_load_sdt(p->biases, p->sdt, at + k), f), qf_load(xs + k), b);
      }
    } else {
#ifdef QI_E8M0_NORM
      for (int64_t k = 0; k < nc; k += QI_VL) {
        const vf vs = qi_e8m0_shift((const uint8_t *)p->scales + at + k, QI_VL, sh[r]);
        qf_store(sb[r] + k, qf_mul(vs, qf_load(xc + k)));
        b = qf_fma(vs, qf_load(xs + k), b);
      }
#endif
    }
    bacc[r][0] = b;
  }
}

/* qi_dt_block for one x row and 4-bit codes (EMLX_QK_IA4, EMLX_QK_IF4),
 * with the work per group out of the chunk loop: per block of QI_GC groups,
 * each W row's scales times x's code scales, in place in sb, and the
 * biases' (e2m1: the codes' offset's) products with x's sums, into bacc,
 * once (qi_m1_scales); a chunk's lanes then take
 * their scales from the row's vector of 16 groups that holds the chunk's
 * (vpermps reads the low 4 bits of idx, which steps on by QI_VB >> sh). The
 * same sums, in the same order, as qi_dt_block's. */
QF_INLINE QI_TARGET void qi_dt_m1(const emlx_qmm_prob *p, int64_t n, int64_t m0, const int kind,
                                  const int NR) {
  const int64_t G = p->groups, rb = p->row_bytes, gbytes = p->gs / 2;
  const int sh = __builtin_ctzll((unsigned long long)gbytes); /* gs 32, 64, 128: 4, 5, 6 */
  qi_rows t = qi_rows_of(p, n, m0, NR, 1);
  const int8_t *xq = t.xq[0];
  const vi m4 = qi_set1_8(0x0f), lut = qi_f4_lut();
  vf acc[4][4], bacc[4][4], hacc[4][4];
  double tot[4][4];
  for (int r = 0; r < NR; r++)
    acc[r][0] = bacc[r][0] = hacc[r][0] = qf_zero(), tot[r][0] = 0.0;
  float sb[4][QI_GC], bb[4][QI_GC];
  int a[4] = {0, 0, 0, 0};
  int32_t st[QI_VL];
  for (int l = 0; l < QI_VL; l++)
    st[l] = QI_VB >> sh;
  const vi idx0 = qi_idx(0, sh), vstep = qi_loadu(st);
  for (int64_t g0 = 0; g0 < G; g0 += QI_GC) {
    if (g0 > 0)
      qi_flush(p, m0, NR, 1, a, acc, 0.0, hacc, bacc, tot);
    const int64_t nc = G - g0 < QI_GC ? G - g0 : QI_GC;
    qi_m1_scales(p, &t, n, g0, nc, NR, sb, bb, a, bacc);
    /* the rows from one pointer (rb apart), the accumulators in locals:
     * fewer registers than a pointer a row, and no accumulator kept in
     * memory over the loop */
    const int64_t u0 = g0 * gbytes, u1 = (g0 + nc) * gbytes;
    const uint8_t *w0 = t.wr[0] + u0; /* prefetch: rows pf_rows ahead, or (the last ones) these */
    const uint8_t *pf0 = (t.pw[NR - 1] != t.wr[NR - 1] ? t.pw[0] : t.wr[0]) + u0;
    const int8_t *x = xq + u0 / QI_VB * (6 * QI_VB);
    vf ac[4];
    for (int r = 0; r < NR; r++)
      ac[r] = acc[r][0];
    vi idx = idx0;
    for (int64_t u = u0; u < u1;
         u += QI_VB, w0 += QI_VB, pf0 += QI_VB, x += 6 * QI_VB, idx = qi_add32(idx, vstep)) {
      vi w[4][2];
      for (int r = 0; r < NR; r++) {
        _mm_prefetch((const char *)pf0 + r * rb, _MM_HINT_T0);
        qi_codes4(kind, qi_wload(w0 + r * rb, rb - u), lut, m4, &w[r][0], &w[r][1]);
      }
      const int64_t gv = ((u - u0) >> sh) & ~(int64_t)(QI_VL - 1); /* the chunk's 16 groups */
      for (int r = 0; r < NR; r++) {
        const vf sc = qi_perm(idx, qf_load(sb[r] + gv));
        /* three chains of two, joined as 256 (256 h + m) + l (two adds more
         * than one chain of six, but a third of its latency, which with one
         * x row bounds the time: ~1.05x) */
        vi h = qi_dot(qi_dot(qi_zero(), w[r][0], x), w[r][1], x + QI_VB);
        vi m = qi_dot(qi_dot(qi_zero(), w[r][0], x + 2 * QI_VB), w[r][1], x + 3 * QI_VB);
        vi ml = qi_dot(qi_dot(qi_zero(), w[r][0], x + 4 * QI_VB), w[r][1], x + 5 * QI_VB);
        ml = qi_add32(ml, qi_slli8(qi_add32(m, qi_slli8(h))));
        ac[r] = qf_fma(qi_cvt(ml), sc, ac[r]);
      }
    }
    for (int r = 0; r < NR; r++)
      acc[r][0] = ac[r];
  }
  qi_store_out(p, n, m0, NR, 1, a, acc, 0.0, hacc, bacc, tot);
}
#endif

QF_INLINE QI_TARGET void qi_dt_block(const emlx_qmm_prob *p, int64_t n, int64_t m0, const int kind,
                                     const int NR, const int MB) {
  const int ppb = kind == EMLX_QK_IA8 || kind == EMLX_QK_IAB ? 1 : 2;
#if QI_M1_BLOCK && !QI_WORDS
  if (MB == 1 && ppb == 2) {
    qi_dt_m1(p, n, m0, kind, NR);
    return;
  }
#endif
  /* a step: QI_VB units; a unit: a code byte (4-bit, 8-bit codes) or a code
   * (EMLX_QK_IAB: 8 codes of b bits are b bytes, unpacked to a byte each) */
  const bool ab = kind == EMLX_QK_IAB;
  const int64_t G = p->groups, rb = p->row_bytes;
  const int64_t gunits = ab ? p->gs : (int64_t)p->gs * p->bits / 8;
  const int sh = __builtin_ctzll((unsigned long long)gunits); /* a power of 2 */
  vi abperm = qi_zero(), abshift = qi_zero();
  if (ab) { /* qword q: bytes q * b .. of the step; byte k of it: the code at bit k * b */
    uint8_t t0[QI_VB], t1[QI_VB];
    for (int j = 0; j < QI_VB; j++) {
      int q = j / 8, k = j % 8;
      t0[j] = (uint8_t)(q * p->bits + (k < p->bits ? k : p->bits - 1));
      t1[j] = (uint8_t)(k * p->bits);
    }
    abperm = qi_loadu(t0);
    abshift = qi_loadu(t1);
  }
  const vi abmask = qi_set1_8((char)((1 << p->bits) - 1));
  qi_rows t = qi_rows_of(p, n, m0, NR, MB);
  const uint8_t *const *wr = t.wr, *const *pw = t.pw;
  const int8_t *const *xq = t.xq;
  const vi m4 = qi_set1_8(0x0f);
  const vi lut = qi_f4_lut();
  /* hacc, 8-bit codes: the h parts of x, / 65536 */
  vf acc[4][4], bacc[4][4], hacc[4][4];
  double tot[4][4];
  const double hmul = ppb == 1 ? 65536.0 : 0.0;
  for (int r = 0; r < NR; r++)
    for (int i = 0; i < MB; i++)
      acc[r][i] = bacc[r][i] = hacc[r][i] = qf_zero(), tot[r][i] = 0.0;
  float sb[4][QI_GC], bb[4][QI_GC]; /* f32 scales (and biases) of QI_GC groups, times 2^a */
  int a[4] = {0, 0, 0, 0};
  /* a step's lanes' groups, qi_idx(u - u0, sh): from the last step's by an
   * add of QI_VB >> sh where 2^sh divides QI_VB, else anew */
  const int istep = (QI_VB >> sh) << sh == QI_VB ? QI_VB >> sh : 0;
  int32_t st[QI_VL];
  for (int l = 0; l < QI_VL; l++)
    st[l] = istep;
  const vi idx0 = qi_idx(0, sh), vstep = qi_loadu(st);
  for (int64_t g0 = 0; g0 < G; g0 += QI_VL) {
    const int ng = (int)(G - g0 < QI_VL ? G - g0 : QI_VL);
    const int64_t gc = g0 % QI_GC;
    if (gc == 0)
      qi_next_scales(p, n, m0, g0, NR, MB, sb, bb, a, acc, hmul, hacc, bacc, tot);
    vf cs[4][4];
    qi_group_scales(p, &t, g0, gc, sb, bb, NR, MB, cs, bacc);
    const int64_t u0 = g0 * gunits, u1 = (g0 + ng) * gunits;
    vi idx = idx0;
    for (int64_t u = u0; u < u1; u += QI_VB, idx = istep ? qi_add32(idx, vstep) : idx) {
      if (!istep)
        idx = qi_idx((int)(u - u0), sh);
      const int64_t b = ab ? u * p->bits / 8 : u; /* byte offset in the row */
      vi w[4][2];
      for (int r = 0; r < NR; r++) {
        _mm_prefetch((const char *)pw[r] + b, _MM_HINT_T0);
        vi raw = qi_wload(wr[r] + b, rb - b);
        if (ab) {
          w[r][0] = qi_and(qi_unpack_bits(raw, abperm, abshift), abmask);
        } else if (ppb == 1) {
          w[r][0] = raw;
        } else {
          qi_codes4(kind, raw, lut, m4, &w[r][0], &w[r][1]);
        }
      }
      const int64_t xo = u / QI_VB * (3 * ppb * QI_VB);
      for (int i = 0; i < MB; i++) {
        const int8_t *x = xq[i] + xo;
        for (int r = 0; r < NR; r++) {
          const vf sc = qi_perm(idx, cs[r][i]);
          vi h = qi_dot(qi_zero(), w[r][0], x), m, ml;
          if (ppb == 2) { /* (one x row: qi_dt_m1, where the unit has it) */
            /* one chain, each part's sums shifted onto the next one's start:
             * 256 (256 h + m) + l, the int32 values of three chains joined
             * by shifts and adds, with no adds or zeroed starts (the rows'
             * chains overlap; M = 8: ~1.14x) */
            h = qi_dot(h, w[r][1], x + QI_VB);
            m = qi_dot(qi_dot(qi_slli8(h), w[r][0], x + 2 * QI_VB), w[r][1], x + 3 * QI_VB);
            ml = qi_dot(qi_dot(qi_slli8(m), w[r][0], x + 4 * QI_VB), w[r][1], x + 5 * QI_VB);
          } else { /* h on its own (hacc); m and l in chains of one */
            m = qi_dot(qi_zero(), w[r][0], x + QI_VB);
            ml = qi_add32(qi_dot(qi_zero(), w[r][0], x + 2 * QI_VB), qi_slli8(m));
          }
          acc[r][i] = qf_fma(qi_cvt(ml), sc, acc[r][i]);
          if (ppb == 1) /* 8-bit codes: h * 65536 would not fit in int32 */
            hacc[r][i] = qf_fma(qi_cvt(h), sc, hacc[r][i]);
        }
      }
    }
  }
  qi_store_out(p, n, m0, NR, MB, a, acc, hmul, hacc, bacc, tot);
}

#if QI_WORDS
/* The same products with the codes as 16-bit words (the AVX2 unit's
 * vpmaddwd): x per chunk as the words 256 h + m, then the bytes l
 * (qmm_fast.c, prep_int), so c = 256 * hw + l. 4-bit codes: each part's code
 * bytes split into the words of bytes 2k and 2k + 1, the words' sum shifted
 * onto l's in int32 (8 codes <= 24 times |hw| <= 32639, times 256, stay
 * under 2^31: the lane sums are those of qi_dt_block); 8-bit codes: hw's sum
 * scaled on its own (hacc). A chunk's scale is one lane of its group's when
 * a group spans whole chunks (a broadcast from memory), else per lane, the
 * vectors made once per QI_VL groups. */
QF_INLINE QI_TARGET void qi_dtw_block(const emlx_qmm_prob *p, int64_t n, int64_t m0, const int kind,
                                      const int NR, const int MB) {
  const int ppb = kind == EMLX_QK_IA8 ? 1 : 2;
  const int64_t G = p->groups, rb = p->row_bytes, gbytes = (int64_t)p->gs * p->bits / 8;
  const int64_t xcb = 3 * ppb * QI_VB; /* bytes of prepared x per chunk */
  const bool whole = gbytes >= QI_VB;  /* each chunk within one group */
  const int csh = whole ? __builtin_ctzll((unsigned long long)(gbytes / QI_VB)) : 0;
  const int sh = __builtin_ctzll((unsigned long long)gbytes);
  qi_rows t = qi_rows_of(p, n, m0, NR, MB);
  const uint8_t *const *wr = t.wr, *const *pw = t.pw;
  const int8_t *const *xq = t.xq;
  const vi m4 = qi_set1_8(0x0f), lut = qi_f4_lut();
  vf acc[4][4], bacc[4][4], hacc[4][4];
  double tot[4][4];
  const double hmul = ppb == 1 ? 256.0 : 0.0;
  for (int r = 0; r < NR; r++)
    for (int i = 0; i < MB; i++)
      acc[r][i] = bacc[r][i] = hacc[r][i] = qf_zero(), tot[r][i] = 0.0;
  float sb[4][QI_GC], bb[4][QI_GC]; /* f32 scales (and biases) of QI_GC groups, times 2^a */
  int a[4] = {0, 0, 0, 0};
  /* the scales of QI_VL groups times x's; a chunk's lanes pick theirs (lane
   * j of chunk c: byte 4 j of it, in group (c QI_VB + 4 j) / gbytes) with
   * qidx[c], or (whole) one, broadcast from csm */
  vf cs[4][4];
  float csm[4][4][QI_VL] __attribute__((aligned(64)));
  vi qidx[QI_VL];
  for (int c = 0; !whole && c < QI_VL; c++)
    qidx[c] = qi_idx(c * QI_VB, sh);
  for (int64_t g0 = 0; g0 < G; g0 += QI_VL) {
    const int64_t ng = G - g0 < QI_VL ? G - g0 : QI_VL, gc = g0 % QI_GC;
    const int64_t b0 = g0 * gbytes, nch = (ng * gbytes + QI_VB - 1) / QI_VB;
    if (gc == 0)
      qi_next_scales(p, n, m0, g0, NR, MB, sb, bb, a, acc, hmul, hacc, bacc, tot);
    qi_group_scales(p, &t, g0, gc, sb, bb, NR, MB, cs, bacc);
    for (int r = 0; whole && r < NR; r++)
      for (int i = 0; i < MB; i++)
        qf_store(csm[r][i], cs[r][i]);
    for (int64_t c = 0; c < nch; c++) {
      const int64_t b = b0 + c * QI_VB, xo = (b0 / QI_VB + c) * xcb; /* bytes in the row, x */
      for (int r = 0; r < NR; r++) { /* a row's code vectors live over the x rows only */
        vi w[6]; /* 8-bit: the words of the chunk's halves; 4-bit: the code bytes of parts 0, 1,
                  * then their words */
        _mm_prefetch((const char *)pw[r] + b, _MM_HINT_T0);
        if (ppb == 1) { /* whole chunks: gs >= QI_VB */
          qi_w16(wr[r] + b, &w[0], &w[1]);
        } else { /* 4-bit rows are whole 8-byte groups */
          vi raw = rb - b >= QI_VB ? qi_loadu(wr[r] + b) : qi_load_part(wr[r] + b, rb - b);
          if (kind == EMLX_QK_IF4) {
            qi_f4_codes(raw, lut, &w[0], &w[1]);
          } else {
            w[0] = qi_and(raw, m4);
            w[1] = qi_and(qi_srli16_4(raw), m4);
          }
          w[2] = qi_lo16(w[0]), w[3] = qi_hi16(w[0]);
          w[4] = qi_lo16(w[1]), w[5] = qi_hi16(w[1]);
        }
        for (int i = 0; i < MB; i++) {
          const int8_t *x = xq[i] + xo;
          const int16_t *xw = (const int16_t *)(const void *)x;
          const vf sc = whole ? qf_set1(csm[r][i][c >> csh]) : qi_perm(qidx[c], cs[r][i]);
          if (ppb == 1) { /* hw and l summed apart, hw's / 256 in hacc */
            vi hw = qi_dotw(qi_dotw(qi_zero(), w[0], xw), w[1], xw + QI_VB / 2);
            vi lo = qi_dotwb(qi_dotwb(qi_zero(), w[0], x + 2 * QI_VB), w[1],
                             x + 2 * QI_VB + QI_VB / 2);
            acc[r][i] = qf_fma(qi_cvt(lo), sc, acc[r][i]);
            hacc[r][i] = qf_fma(qi_cvt(hw), sc, hacc[r][i]);
            continue;
          }
          vi hw = qi_dotw(qi_zero(), w[2], xw);
          hw = qi_dotw(hw, w[3], xw + QI_VB / 2);
          hw = qi_dotw(hw, w[4], xw + QI_VB);
          hw = qi_dotw(hw, w[5], xw + 3 * QI_VB / 2);
          vi ml = qi_dot2(w[0], x + 4 * QI_VB, w[1], x + 5 * QI_VB);
          ml = qi_add32(ml, qi_slli8(hw));
          acc[r][i] = qf_fma(qi_cvt(ml), sc, acc[r][i]);
        }
      }
    }
  }
  qi_store_out(p, n, m0, NR, MB, a, acc, hmul, hacc, bacc, tot);
}
#define QI_BLOCK qi_dtw_block
#else
#define QI_BLOCK qi_dt_block
#endif

#define QI_DT_SHAPE(kind, name, NRv, MBv)                                                          \
  static __attribute__((noinline))                                                                 \
  QI_TARGET void qi_dt_##kind##_##name(const emlx_qmm_prob *p, int64_t n, int64_t m0) {            \
    QI_BLOCK(p, n, m0, kind, NRv, MBv);                                                            \
  }
#define QI_DT_KIND(kind)                                                                           \
  QI_DT_SHAPE(kind, w4, QI_NR_OF(4), 4)                                                            \
  QI_DT_SHAPE(kind, n4, 1, 4)                                                                      \
  QI_DT_SHAPE(kind, w2, QI_NR_OF(2), 2)                                                            \
  QI_DT_SHAPE(kind, n2, 1, 2)                                                                      \
  QI_DT_SHAPE(kind, w1, QI_NR_OF(1), 1)                                                            \
  QI_DT_SHAPE(kind, n1, 1, 1)                                                                      \
  static void qi_dt_##kind(const emlx_qmm_prob *p, int64_t n, int64_t m0, int nr, int mb) {        \
    if (mb == 4) {                                                                                 \
      if (nr == QI_NR_OF(4))                                                                       \
        qi_dt_##kind##_w4(p, n, m0);                                                               \
      else                                                                                         \
        qi_dt_##kind##_n4(p, n, m0);                                                               \
    } else if (mb == 2) {                                                                          \
      if (nr == QI_NR_OF(2))                                                                       \
        qi_dt_##kind##_w2(p, n, m0);                                                               \
      else                                                                                         \
        qi_dt_##kind##_n2(p, n, m0);                                                               \
    } else {                                                                                       \
      if (nr == QI_NR_OF(1))                                                                       \
        qi_dt_##kind##_w1(p, n, m0);                                                               \
      else                                                                                         \
        qi_dt_##kind##_n1(p, n, m0);                                                               \
    }                                                                                              \
  }
QI_DT_KIND(EMLX_QK_IA4)
QI_DT_KIND(EMLX_QK_IF4)
#if QI_A8
QI_DT_KIND(EMLX_QK_IA8)
#endif
#if QI_AB
QI_DT_KIND(EMLX_QK_IAB)
#endif

/* Bytes of W rows per block: a block of W rows stays in L2 while every
 * block of (up to 4) x rows runs over it. */
#define QI_WBLOCK (128 * 1024)

static void qi_decode_t(const emlx_qmm_prob *p, int64_t n0, int64_t n1) {
#ifdef QD_DEN
  if (p->kind == EMLX_QK_DA4) {
    qd_decode_t(p, n0, n1);
    return;
  }
#endif
  void (*blk)(const emlx_qmm_prob *, int64_t, int64_t, int, int) = qi_dt_EMLX_QK_IA4;
  if (p->kind == EMLX_QK_IF4)
    blk = qi_dt_EMLX_QK_IF4;
#if QI_A8
  if (p->kind == EMLX_QK_IA8)
    blk = qi_dt_EMLX_QK_IA8;
#endif
#if QI_AB
  if (p->kind == EMLX_QK_IAB)
    blk = qi_dt_EMLX_QK_IAB;
#endif
  emlx_qmm_prob pp = *p; /* prefetch QI_PF_BYTES ahead, in whole rows */
  pp.pf_rows = (QI_PF_BYTES + p->row_bytes - 1) / p->row_bytes;
  p = &pp;
  /* one weight row at a time for 8-bit codes (whose blocks of several rows
   * spill registers), and for one x row unless QI_M1_BLOCK: a single stream
   * of W, which reads it from memory faster than interleaved rows do
   * (AVX2, measured: 10-20% at K = 4096); blocks of rows otherwise, which
   * reuse each x vector over them (AVX-512, one x row, 4-bit codes, W in
   * L2: about 20% less time a row, which there decides the time from
   * memory) */
  const int nrb = (p->M == 1 && !QI_M1_BLOCK) || p->kind == EMLX_QK_IA8 ? 1
                                                                        : QI_NR_OF(p->M >= 4   ? 4
                                                                                   : p->M >= 2 ? 2
                                                                                               : 1);
  int64_t nb = QI_WBLOCK / p->row_bytes / nrb * nrb;
  nb = nb < nrb ? nrb : nb;
  for (int64_t b0 = n0; b0 < n1; b0 += nb) {
    const int64_t b1 = n1 - b0 < nb ? n1 : b0 + nb;
    for (int64_t m0 = 0; m0 < p->M;) {
      const int64_t left = p->M - m0;
      const int mb = left >= 4 ? 4 : left >= 2 ? 2 : 1;
      for (int64_t n = b0; n < b1;) {
        const int nr = b1 - n >= nrb ? nrb : 1;
        if (nr == 1 || nr == QI_NR_OF(mb))
          blk(p, n, m0, nr, mb);
        else
          for (int j = 0; j < nr; j++)
            blk(p, n + j, m0, 1, mb);
        n += nr;
      }
      m0 += mb;
    }
  }
}
#define QI_FIELDS qi_pick, QI_VB, qi_decode_t
#else
#define QI_FIELDS NULL, 0, NULL
#endif

/* ---- decode path, !transpose: out columns [c0, c1), KB rows of W a step -- */

#define QF_CW 1024 /* output columns accumulated at a time */

QF_INLINE void qf_dn_step(const emlx_qmm_prob *p, int64_t k, int64_t c0, int64_t cw, float *acc,
                          const int kind, const int KB) {
  const int ppb = QF_PPB(kind), CV = QF_VL * ppb;
  const int64_t gs = p->gs, cg = gs / CV, gbytes = gs * p->bits / 8;
  const bool affine = p->mode == EMLX_QMM_AFFINE;
  const int64_t g0 = c0 / gs, ng = cw / gs;
  float sc[4][QF_CW / 16], bs[4][QF_CW / 16];
  const uint8_t *wr[4];
  for (int kk = 0; kk < KB; kk++) {
    wr[kk] = (const uint8_t *)p->w + (k + kk) * p->row_bytes + g0 * gbytes;
    emlx_qmm_load_scales(p, k + kk, g0, ng, sc[kk]);
    if (affine)
      emlx_qmm_load_biases(p, k + kk, g0, ng, bs[kk]);
  }
  for (int64_t g = 0; g < ng; g++) {
    vf vs[4], vb[4];
    for (int kk = 0; kk < KB; kk++) {
      vs[kk] = qf_set1(sc[kk][g]);
      vb[kk] = qf_set1(affine ? bs[kk][g] : 0.0f);
    }
    for (int64_t c = 0; c < cg; c++) {
      vf wv[4][4];
      for (int kk = 0; kk < KB; kk++) {
        qf_decode(wr[kk] + g * gbytes + c * QF_VL, kind, wv[kk]);
        for (int s = 0; s < ppb; s++)
          wv[kk][s] = affine ? qf_fma(wv[kk][s], vs[kk], vb[kk]) : qf_mul(wv[kk][s], vs[kk]);
      }
      const int64_t pos = g * gs + c * CV;
      for (int64_t m = 0; m < p->M; m++) {
        const float *x = p->xr[m] + k;
        float *a = acc + m * QF_CW + pos;
        for (int s = 0; s < ppb; s++) {
          vf v = qf_load(a + s * QF_VL);
          for (int kk = 0; kk < KB; kk++)
            v = qf_fma(qf_set1(x[kk]), wv[kk][s], v);
          qf_store(a + s * QF_VL, v);
        }
      }
    }
  }
}

#define QF_DN_KIND(kind)                                                                           \
  static void qf_dn_##kind(const emlx_qmm_prob *p, int64_t k, int64_t c0, int64_t cw, float *acc,  \
                           int kb) {                                                               \
    if (kb == 4)                                                                                   \
      qf_dn_step(p, k, c0, cw, acc, kind, 4);                                                      \
    else                                                                                           \
      qf_dn_step(p, k, c0, cw, acc, kind, 1);                                                      \
  }
QF_DN_KIND(EMLX_QK_A4)
QF_DN_KIND(EMLX_QK_F4)
QF_DN_KIND(EMLX_QK_A8)
QF_DN_KIND(EMLX_QK_F8)
QF_DN_KIND(EMLX_QK_A2)

static bool qf_decode_n(const emlx_qmm_prob *p, int64_t c0, int64_t c1) {
  void (*step)(const emlx_qmm_prob *, int64_t, int64_t, int64_t, float *, int) =
      p->kind == EMLX_QK_A4   ? qf_dn_EMLX_QK_A4
      : p->kind == EMLX_QK_F4 ? qf_dn_EMLX_QK_F4
      : p->kind == EMLX_QK_A8 ? qf_dn_EMLX_QK_A8
      : p->kind == EMLX_QK_F8 ? qf_dn_EMLX_QK_F8
                              : qf_dn_EMLX_QK_A2;
  const int ppb = QF_PPB(p->kind), CV = QF_VL * ppb;
  float *acc = emlx__scratch_get((size_t)p->M * QF_CW * sizeof(float));
  if (!acc)
    return false;
  for (int64_t b0 = c0; b0 < c1; b0 += QF_CW) {
    int64_t cw = c1 - b0 < QF_CW ? c1 - b0 : QF_CW;
    memset(acc, 0, (size_t)p->M * QF_CW * sizeof(float));
    int64_t k = 0;
    for (; k + 4 <= p->K; k += 4)
      step(p, k, b0, cw, acc, 4);
    for (; k < p->K; k++)
      step(p, k, b0, cw, acc, 1);
    for (int64_t m = 0; m < p->M; m++) { /* undo the lane order of each chunk */
      const float *a = acc + m * QF_CW;
      float *o = p->orow[m] + b0;
      for (int64_t c = 0; c < cw; c += CV)
        for (int s = 0; s < ppb; s++)
          for (int j = 0; j < QF_VL; j++)
            o[c + j * ppb + s] = a[c + s * QF_VL + j];
    }
  }
  emlx__scratch_put(acc);
  return true;
}

/* ---- prefill panels: dequantized elements [e0, e1) of packed row r -------- */

static void qf_dequant(const emlx_qmm_prob *p, int64_t r, int64_t e0, int64_t e1, float *dst) {
  const int kind = p->kind, ppb = QF_PPB(kind), CV = QF_VL * ppb;
  if (!(kind == EMLX_QK_A4 || kind == EMLX_QK_F4 || kind == EMLX_QK_A8 || kind == EMLX_QK_F8) ||
      e0 % CV || e1 % CV) {
    emlx_qmm_dequant_row(p, r, e0, e1, dst);
    return;
  }
  const uint8_t *row = (const uint8_t *)p->w + r * p->row_bytes;
  const bool affine = p->mode == EMLX_QMM_AFFINE;
  const int64_t gs = p->gs;
  int64_t cur = -1;
  vf vs = qf_zero(), vb = qf_zero();
  for (int64_t e = e0; e < e1; e += CV, dst += CV) {
    int64_t g = e / gs;
    if (g != cur) {
      float sv, bv = 0.0f;
      emlx_qmm_load_scales(p, r, g, 1, &sv);
      if (affine)
        emlx_qmm_load_biases(p, r, g, 1, &bv);
      vs = qf_set1(sv), vb = qf_set1(bv);
      cur = g;
    }
    vf w[4];
    qf_decode(row + e / ppb, kind, w);
    for (int i = 0; i < ppb; i++)
      w[i] = affine ? qf_fma(w[i], vs, vb) : qf_mul(w[i], vs);
    if (ppb == 1) {
      qf_store(dst, w[0]);
    } else {
      vf o0, o1;
      qf_interleave(w[0], w[1], &o0, &o1);
      qf_store(dst, o0);
      qf_store(dst + QF_VL, o1);
    }
  }
}

/* ---- prefill micro-kernel ------------------------------------------------- */

static void qf_micro(int64_t kc, const float *ap, const float *bp, float *const *c, int64_t j0,
                     int mv, int nv, bool first) {
  enum { NV = QF_NR / QF_VL };
  vf acc[QF_MR][NV];
  for (int i = 0; i < QF_MR; i++)
    for (int v = 0; v < NV; v++)
      acc[i][v] = qf_zero();
  for (int64_t k = 0; k < kc; k++) {
    vf b[NV];
    for (int v = 0; v < NV; v++)
      b[v] = qf_load(bp + k * QF_NR + v * QF_VL);
    for (int i = 0; i < QF_MR; i++) {
      vf a = qf_set1(ap[k * QF_MR + i]);
      for (int v = 0; v < NV; v++)
        acc[i][v] = qf_fma(a, b[v], acc[i][v]);
    }
  }
  for (int i = 0; i < mv; i++) {
    float *o = c[i] + j0;
    for (int v = 0; v < NV; v++) {
      int left = nv - v * QF_VL;
      if (left <= 0)
        break;
      if (left >= QF_VL)
        qf_store(o + v * QF_VL, first ? acc[i][v] : qf_add(acc[i][v], qf_load(o + v * QF_VL)));
      else
        qf_store_part(o + v * QF_VL, acc[i][v], left, !first);
    }
  }
}

#ifndef QF_TR
#define QF_TR NULL
#endif
#ifndef QI_PREP
#define QI_PREP NULL
#endif
const emlx_qmm_isa QF_NAME = {QF_NAME_STR, QF_VL,    QF_MR,      QF_NR,     qf_pick, qf_decode_t,
                              qf_decode_n, qf_micro, qf_dequant, QI_FIELDS, QF_TR,   QI_PREP};
