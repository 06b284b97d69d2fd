/* attention_body.h — the per-ISA tile loop of the attention kernels (see
 * attention.h), compiled once per level by attention_{scalar,avx2,avx512}.c
 * after their att_vec_<isa>.h (AV_W lanes, AV_NV vectors per micro-tile
 * row, av_* operations; optionally AV_RB, the rows of a micro-tile, 4 by
 * default, AV_KT_PACK, the tile transpose, att_kt_pack by default, and
 * AV_EXP_SUM, a score row's exp and sum, att_exp_sum by default; AV_ROW_MAX,
 * a score row's max, att_row_max by default; and
 * AV_PV_STREAM, a row count below which P V runs by rows of V, pv_rows,
 * undefined by default; AV_BF16_PAIRS, the pairs-order bf16 loads of the
 * decode path qk_pairs / pv_pairs, undefined by default).
 *
 * One unit: pack its R query vectors (times the scale, f32, rows padded with
 * zeros to Dp), then for each tile of up to EMLX_ATT_BK keys:
 *   S = Q K^T      (R < 8: one dot per (row, key); else K is transposed once
 *                   per tile and AV_RB-row x AV_NV-vector micro-tiles run
 *                   over it)
 *   mask S         (hidden keys score -FLT_MAX, additive masks add)
 *   online softmax (m, l, acc rescaled by exp(m_old - m_new); S becomes P)
 *   acc += P V     (AV_RB-row x AV_NV-vector micro-tiles; or, units of fewer
 *                   than AV_PV_STREAM rows, V row by row into acc in L1)
 * f32 K/V rows with unit stride and D a multiple of AV_W are read in place
 * (and prefetched ATT_PF_BYTES ahead); other dtypes and layouts are
 * converted tile by tile into scratch. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "attention.h"
#include "internal.h"
#include "simd/body.h"

#define ATT_ALWAYS_INLINE static inline __attribute__((always_inline))

#ifndef AV_RB
#define AV_RB 4
#endif

static int64_t att_roundup(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* nrows rows of D elements (row stride rs, element stride ds, in elements)
 * -> f32 rows of ld, zero-padded to ld. */
static void att_rows(const char *src, emlx_dtype dt, int64_t rs, int64_t ds, int64_t nrows,
                     int64_t D, float *dst, int64_t ld) {
  size_t es = emlx_dtype_size(dt);
  for (int64_t r = 0; r < nrows; r++) {
    const char *row = src + (size_t)(r * rs) * es;
    float *d = dst + r * ld;
    if (ds == 1 && dt == EMLX_FLOAT32) {
      memcpy(d, row, (size_t)D * sizeof(float));
    } else if (ds == 1 && dt == EMLX_BFLOAT16) {
      const uint16_t *p = (const uint16_t *)row;
      int64_t j = 0;
      for (; j + AV_W <= D; j += AV_W)
        av_store(d + j, av_load_bf16(p + j));
      for (; j < D; j++)
        d[j] = emlx_cv_bf16_to_f32(p[j]);
    } else if (ds == 1 && dt == EMLX_FLOAT16) {
      vl_f16_to_f32((const uint16_t *)row, d, D);
    } else {
      for (int64_t j = 0; j < D; j++) {
        const char *e = row + (size_t)(j * ds) * es;
        float x;
        if (dt == EMLX_FLOAT32)
          memcpy(&x, e, sizeof x);
        else {
          uint16_t h;
          memcpy(&h, e, sizeof h);
          x = dt == EMLX_BFLOAT16 ? emlx_cv_bf16_to_f32(h) : emlx_cv_f16_to_f32(h);
        }
        d[j] = x;
      }
    }
    if (ld > D)
      memset(d + D, 0, (size_t)(ld - D) * sizeof(float));
  }
}

/* ---- S = Q K^T ------------------------------------------------------------ */

/* AV_W values of a K/V row: f32, or bf16 widened in registers (BF). */
ATT_ALWAYS_INLINE av_f att_load_row(const int BF, const void *row, int64_t d) {
  return BF ? av_load_bf16((const uint16_t *)row + d) : av_load((const float *)row + d);
}
static inline const void *att_row(const int BF, const void *base, int64_t j, int64_t ld) {
  return BF ? (const void *)((const uint16_t *)base + j * ld)
            : (const void *)((const float *)base + j * ld);
}

/* Software prefetch of the K/V rows pf rows ahead (0: none), one per cache
 * line of the row: element d of a row starts a line when (d * es) % 64 == 0
 * (rows are 64-byte aligned when their length is). ATT_PF_BYTES: the
 * distance, in bytes of each stream (bench_attention's cold decode: 4-16 KiB
 * alike, none ~1.5x slower). */
#define ATT_LINE 64
#define ATT_PF_BYTES 8192
ATT_ALWAYS_INLINE void att_prefetch(const int BF, const void *row, int64_t d) {
  if (((d * (BF ? 2 : 4)) & (ATT_LINE - 1)) == 0)
    __builtin_prefetch((const char *)row + d * (BF ? 2 : 4), 0, 3);
}

#define ATT_QK_KB 3 /* keys of one qk_dot_keys block */

/* RB rows of Q (ld ldq) against KB keys from row j of K (ld ldk; f32, or
 * bf16 when BF), dl a multiple of AV_W; rows pf ahead are prefetched. */
ATT_ALWAYS_INLINE void qk_dot_keys(const int RB, const int KB, const int BF, const float *Q,
                                   int64_t ldq, const void *K, int64_t ldk, int64_t j, int64_t dl,
                                   float *S, int64_t lds, int64_t pf) {
  av_f a[4][ATT_QK_KB];
  for (int x = 0; x < RB; x++)
    for (int y = 0; y < KB; y++)
      a[x][y] = av_zero();
  for (int64_t d = 0; d < dl; d += AV_W) {
    av_f kv[ATT_QK_KB];
    for (int y = 0; y < KB; y++) {
      if (pf)
        att_prefetch(BF, att_row(BF, K, j + y + pf, ldk), d);
      kv[y] = att_load_row(BF, att_row(BF, K, j + y, ldk), d);
    }
    for (int x = 0; x < RB; x++) {
      av_f qv = av_load(Q + x * ldq + d);
      for (int y = 0; y < KB; y++)
        a[x][y] = av_fma(qv, kv[y], a[x][y]);
    }
  }
  for (int x = 0; x < RB; x++)
    for (int y = 0; y < KB; y++)
      S[x * lds + j + y] = av_hsum(a[x][y]);
}

/* RB rows of Q against nk keys, ATT_QK_KB at a time: RB x KB independent
 * FMA chains (one key at a time left 4, a quarter of what two FMA pipes of
 * latency 4-5 need). Each dot sums over d in the same order either way. */
ATT_ALWAYS_INLINE void qk_dot_rows(const int RB, const int BF, const float *Q, int64_t ldq,
                                   const void *K, int64_t ldk, int64_t nk, int64_t dl, float *S,
                                   int64_t lds, int64_t pf) {
  int64_t j = 0;
  for (; j + ATT_QK_KB <= nk; j += ATT_QK_KB)
    qk_dot_keys(RB, ATT_QK_KB, BF, Q, ldq, K, ldk, j, dl, S, lds, pf);
  for (; j < nk; j++)
    qk_dot_keys(RB, 1, BF, Q, ldq, K, ldk, j, dl, S, lds, pf);
}

/* (the first group of rows prefetches: the others read the same keys) */
static void qk_dot(const int BF, const float *Q, int64_t R, int64_t ldq, const void *K, int64_t ldk,
                   int64_t nk, int64_t dl, float *S, int64_t lds, int64_t pf) {
  int64_t r = 0;
  if (BF) {
    for (; r + 4 <= R; r += 4, pf = 0)
      qk_dot_rows(4, 1, Q + r * ldq, ldq, K, ldk, nk, dl, S + r * lds, lds, pf);
    for (; r < R; r++, pf = 0)
      qk_dot_rows(1, 1, Q + r * ldq, ldq, K, ldk, nk, dl, S + r * lds, lds, pf);
    return;
  }
  for (; r + 4 <= R; r += 4, pf = 0)
    qk_dot_rows(4, 0, Q + r * ldq, ldq, K, ldk, nk, dl, S + r * lds, lds, pf);
  for (; r < R; r++, pf = 0)
    qk_dot_rows(1, 0, Q + r * ldq, ldq, K, ldk, nk, dl, S + r * lds, lds, pf);
}

/* RB rows x NV vectors of S from KT (D rows of ldkt). */
ATT_ALWAYS_INLINE void qk_kt_tile(const int RB, const int NV, const float *Q, int64_t ldq,
                                  const float *KT, int64_t ldkt, int64_t D, float *S, int64_t lds) {
  av_f acc[AV_RB][AV_NV];
  for (int x = 0; x < RB; x++)
    for (int v = 0; v < NV; v++)
      acc[x][v] = av_zero();
  for (int64_t d = 0; d < D; d++) {
    av_f kv[AV_NV];
    for (int v = 0; v < NV; v++)
      kv[v] = av_load(KT + d * ldkt + v * AV_W);
    for (int x = 0; x < RB; x++) {
      av_f qb = av_set1(Q[x * ldq + d]);
      for (int v = 0; v < NV; v++)
        acc[x][v] = av_fma(qb, kv[v], acc[x][v]);
    }
  }
  for (int x = 0; x < RB; x++)
    for (int v = 0; v < NV; v++)
      av_store(S + x * lds + v * AV_W, acc[x][v]);
}

static void qk_kt(const float *Q, int64_t R, int64_t ldq, const float *KT, int64_t ldkt,
                  int64_t nkp, int64_t D, float *S, int64_t lds) {
  for (int64_t c = 0; c < nkp; c += AV_NV * AV_W) {
    int64_t r = 0;
    for (; r + AV_RB <= R; r += AV_RB)
      qk_kt_tile(AV_RB, AV_NV, Q + r * ldq, ldq, KT + c, ldkt, D, S + r * lds + c, lds);
    if (AV_RB > 4 && r + 4 <= R) {
      qk_kt_tile(4, AV_NV, Q + r * ldq, ldq, KT + c, ldkt, D, S + r * lds + c, lds);
      r += 4;
    }
    for (; r < R; r++)
      qk_kt_tile(1, AV_NV, Q + r * ldq, ldq, KT + c, ldkt, D, S + r * lds + c, lds);
  }
}

/* KT (D rows of ldkt) <- the nk rows of K (ld ldk, f32), columns nk .. nkp
 * zeroed. */
static inline void att_kt_pack(const float *K, int64_t ldk, int64_t nk, int64_t nkp, int64_t D,
                               float *KT, int64_t ldkt) {
  for (int64_t d = 0; d < D; d++) {
    float *row = KT + d * ldkt;
    for (int64_t j = 0; j < nk; j++)
      row[j] = K[j * ldk + d];
    for (int64_t j = nk; j < nkp; j++)
      row[j] = 0.0f;
  }
}
#ifndef AV_KT_PACK
#define AV_KT_PACK att_kt_pack
#endif

/* ---- acc += P V ----------------------------------------------------------- */

/* Vectors of a micro-tile row at most: AV_NV, or 3 for the 4-row strips
 * pv_bf runs when AV_NV < 3 (decode's G = 4 rows: 4 x 2 is 8 FMA chains,
 * 4 x 3 is 12). */
#define ATT_PV_NV (AV_NV > 3 ? AV_NV : 3)

ATT_ALWAYS_INLINE void pv_tile(const int RB, const int NV, const int BF, const float *P,
                               int64_t ldp, int64_t nk, const void *V, int64_t c, int64_t ldv,
                               float *O, int64_t ldo, int64_t pf) {
  av_f acc[AV_RB][ATT_PV_NV];
  for (int x = 0; x < RB; x++)
    for (int v = 0; v < NV; v++)
      acc[x][v] = av_load(O + x * ldo + v * AV_W);
  for (int64_t j = 0; j < nk; j++) {
    av_f vv[ATT_PV_NV];
    const void *vj = att_row(BF, V, j, ldv), *vp = att_row(BF, V, j + pf, ldv);
    for (int v = 0; v < NV; v++) {
      if (pf)
        att_prefetch(BF, vp, c + v * AV_W);
      vv[v] = att_load_row(BF, vj, c + v * AV_W);
    }
    for (int x = 0; x < RB; x++) {
      av_f pb = av_set1(P[x * ldp + j]);
      for (int v = 0; v < NV; v++)
        acc[x][v] = av_fma(pb, vv[v], acc[x][v]);
    }
  }
  for (int x = 0; x < RB; x++)
    for (int v = 0; v < NV; v++)
      av_store(O + x * ldo + v * AV_W, acc[x][v]);
}

ATT_ALWAYS_INLINE void pv_bf(const int BF, const float *P, int64_t R, int64_t ldp, int64_t nk,
                             const void *V, int64_t ldv, int64_t dvl, float *O, int64_t ldo,
                             int64_t pf) {
  int64_t c = 0;
  if (AV_NV < 3 && R == 4)
    for (; c + 3 * AV_W <= dvl; c += 3 * AV_W)
      pv_tile(4, 3, BF, P, ldp, nk, V, c, ldv, O + c, ldo, pf);
  for (; c + AV_NV * AV_W <= dvl; c += AV_NV * AV_W) {
    int64_t r = 0, p = pf; /* the first group of rows prefetches each column block */
    for (; r + AV_RB <= R; r += AV_RB, p = 0)
      pv_tile(AV_RB, AV_NV, BF, P + r * ldp, ldp, nk, V, c, ldv, O + r * ldo + c, ldo, p);
    if (AV_RB > 4 && r + 4 <= R) {
      pv_tile(4, AV_NV, BF, P + r * ldp, ldp, nk, V, c, ldv, O + r * ldo + c, ldo, p);
      r += 4, p = 0;
    }
    for (; r < R; r++, p = 0)
      pv_tile(1, AV_NV, BF, P + r * ldp, ldp, nk, V, c, ldv, O + r * ldo + c, ldo, p);
  }
  for (; c < dvl; c += AV_W) {
    int64_t r = 0, p = pf;
    for (; r + AV_RB <= R; r += AV_RB, p = 0)
      pv_tile(AV_RB, 1, BF, P + r * ldp, ldp, nk, V, c, ldv, O + r * ldo + c, ldo, p);
    if (AV_RB > 4 && r + 4 <= R) {
      pv_tile(4, 1, BF, P + r * ldp, ldp, nk, V, c, ldv, O + r * ldo + c, ldo, p);
      r += 4, p = 0;
    }
    for (; r < R; r++, p = 0)
      pv_tile(1, 1, BF, P + r * ldp, ldp, nk, V, c, ldv, O + r * ldo + c, ldo, p);
  }
}

#ifdef AV_PV_STREAM
/* P V by rows of V (units of fewer than AV_PV_STREAM rows: decode):
 * KB rows of V at a time, each read once, front to back, into RB rows of O
 * kept in memory (L1): the strips of pv_bf walk each column block down all
 * the tile's rows, a pattern the hardware prefetchers follow poorly when V
 * comes from memory. Each O element still sums over j in order, one FMA a
 * key, so the result is pv_bf's to the bit. */
#define ATT_PV_KB 2 /* keys a pass: RB x 2 broadcasts of P stay in registers (4: slower) */
ATT_ALWAYS_INLINE void pv_rows_keys(const int RB, const int KB, const int BF, const float *P,
                                    int64_t ldp, int64_t j, const void *V, int64_t ldv, int64_t dvl,
                                    float *O, int64_t ldo, int64_t pf) {
  av_f pb[4][ATT_PV_KB];
  const void *vr[ATT_PV_KB], *vp[ATT_PV_KB];
  for (int y = 0; y < KB; y++) {
    vr[y] = att_row(BF, V, j + y, ldv);
    vp[y] = att_row(BF, V, j + y + pf, ldv);
    for (int x = 0; x < RB; x++)
      pb[x][y] = av_set1(P[x * ldp + j + y]);
  }
  for (int64_t d = 0; d < dvl; d += AV_W) {
    av_f vv[ATT_PV_KB];
    for (int y = 0; y < KB; y++) {
      if (pf)
        att_prefetch(BF, vp[y], d);
      vv[y] = att_load_row(BF, vr[y], d);
    }
    for (int x = 0; x < RB; x++) {
      av_f o = av_load(O + x * ldo + d);
      for (int y = 0; y < KB; y++)
        o = av_fma(pb[x][y], vv[y], o);
      av_store(O + x * ldo + d, o);
    }
  }
}

ATT_ALWAYS_INLINE void pv_rows_rb(const int RB, const int BF, const float *P, int64_t ldp,
                                  int64_t nk, const void *V, int64_t ldv, int64_t dvl, float *O,
                                  int64_t ldo, int64_t pf) {
  int64_t j = 0;
  for (; j + ATT_PV_KB <= nk; j += ATT_PV_KB)
    pv_rows_keys(RB, ATT_PV_KB, BF, P, ldp, j, V, ldv, dvl, O, ldo, pf);
  for (; j < nk; j++)
    pv_rows_keys(RB, 1, BF, P, ldp, j, V, ldv, dvl, O, ldo, pf);
}

/* (groups of 4 rows; the first prefetches, the others find V in L1/L2) */
ATT_ALWAYS_INLINE void pv_rows(const int BF, const float *P, int64_t R, int64_t ldp, int64_t nk,
                               const void *V, int64_t ldv, int64_t dvl, float *O, int64_t ldo,
                               int64_t pf) {
  int64_t r = 0;
  for (; r + 4 <= R; r += 4, pf = 0)
    pv_rows_rb(4, BF, P + r * ldp, ldp, nk, V, ldv, dvl, O + r * ldo, ldo, pf);
  switch (R - r) {
  case 3:
    pv_rows_rb(3, BF, P + r * ldp, ldp, nk, V, ldv, dvl, O + r * ldo, ldo, pf);
    break;
  case 2:
    pv_rows_rb(2, BF, P + r * ldp, ldp, nk, V, ldv, dvl, O + r * ldo, ldo, pf);
    break;
  case 1:
    pv_rows_rb(1, BF, P + r * ldp, ldp, nk, V, ldv, dvl, O + r * ldo, ldo, pf);
    break;
  default:
    break;
  }
}
/* (one function a dtype, each in a frame of its own, not pv's) */
__attribute__((noinline)) static void pv_rows_f32(const float *P, int64_t R, int64_t ldp,
                                                  int64_t nk, const void *V, int64_t ldv,
                                                  int64_t dvl, float *O, int64_t ldo, int64_t pf) {
  pv_rows(0, P, R, ldp, nk, V, ldv, dvl, O, ldo, pf);
}
__attribute__((noinline)) static void pv_rows_bf16(const float *P, int64_t R, int64_t ldp,
                                                   int64_t nk, const void *V, int64_t ldv,
                                                   int64_t dvl, float *O, int64_t ldo, int64_t pf) {
  pv_rows(1, P, R, ldp, nk, V, ldv, dvl, O, ldo, pf);
}
#endif

#ifdef AV_BF16_PAIRS
/* ---- decode over bf16 K/V in pairs order ------------------------------------ */
/* Units of fewer than AV_PV_STREAM rows over bf16 K and V read in place,
 * D and D_v multiples of 16: the rows of Q and of acc are held in pairs
 * order (av_load_bf16_pair), so one load and two operations widen 16 values
 * (av_load_bf16: two loads, four operations). S = Q K^T by 4-row x 2-key
 * blocks whose 8 sums are reduced together (av_hsum_4x2); P V by rows of V
 * as pv_rows. K and V are read front to back and prefetched pf rows ahead,
 * as on the other paths. (P V by 16-column strips with acc in registers, each
 * tile's V prefetched while S was computed: ~14% less time than the old path
 * with K/V in cache, ~8% more with K/V in memory, one thread.) */
#define ATT_PAIRS_W 16

/* Columns d .. d + 15 of rows j .. j + KB - 1 of bf16 K or V (stride ld) in
 * pairs order, even to e[y], odd to o[y]; the rows pf ahead prefetched. */
ATT_ALWAYS_INLINE void pairs_load(const int KB, const uint16_t *X, int64_t ld, int64_t j, int64_t d,
                                  int64_t pf, av_f *e, av_f *o) {
  for (int y = 0; y < KB; y++) {
    if (pf)
      att_prefetch(1, X + (j + y + pf) * ld, d);
    av_load_bf16_pair(X + (j + y) * ld + d, &e[y], &o[y]);
  }
}

ATT_ALWAYS_INLINE void qk_pairs_keys(const int RB, const int KB, const float *Q, int64_t ldq,
                                     const uint16_t *K, int64_t ldk, int64_t j, int64_t D,
                                     float *S, int64_t lds, int64_t pf) {
  av_f a[4][2];
  for (int x = 0; x < RB; x++)
    for (int y = 0; y < KB; y++)
      a[x][y] = av_zero();
  for (int64_t d = 0; d < D; d += ATT_PAIRS_W) {
    av_f ke[2], ko[2];
    pairs_load(KB, K, ldk, j, d, pf, ke, ko);
    for (int x = 0; x < RB; x++) {
      av_f qe = av_load(Q + x * ldq + d), qo = av_load(Q + x * ldq + d + AV_W);
      for (int y = 0; y < KB; y++)
        a[x][y] = av_fma(qo, ko[y], av_fma(qe, ke[y], a[x][y]));
    }
  }
  if (RB == 4 && KB == 2) {
    av_f v[8] = {a[0][0], a[0][1], a[1][0], a[1][1], a[2][0], a[2][1], a[3][0], a[3][1]};
    av_hsum_4x2(v, S + j, lds);
    return;
  }
  for (int x = 0; x < RB; x++)
    for (int y = 0; y < KB; y++)
      S[x * lds + j + y] = av_hsum(a[x][y]);
}

ATT_ALWAYS_INLINE void qk_pairs_rb(const int RB, const float *Q, int64_t ldq, const uint16_t *K,
                                   int64_t ldk, int64_t nk, int64_t D, float *S, int64_t lds,
                                   int64_t pf) {
  int64_t j = 0;
  for (; j + 2 <= nk; j += 2)
    qk_pairs_keys(RB, 2, Q, ldq, K, ldk, j, D, S, lds, pf);
  if (j < nk)
    qk_pairs_keys(RB, 1, Q, ldq, K, ldk, j, D, S, lds, pf);
}

/* (the first group of rows prefetches) */
__attribute__((noinline)) static void qk_pairs(const float *Q, int64_t R, int64_t ldq,
                                               const uint16_t *K, int64_t ldk, int64_t nk,
                                               int64_t D, float *S, int64_t lds, int64_t pf) {
  int64_t r = 0;
  for (; r + 4 <= R; r += 4, pf = 0)
    qk_pairs_rb(4, Q + r * ldq, ldq, K, ldk, nk, D, S + r * lds, lds, pf);
  for (; r < R; r++, pf = 0)
    qk_pairs_rb(1, Q + r * ldq, ldq, K, ldk, nk, D, S + r * lds, lds, pf);
}

/* pv_rows_keys over V rows and acc rows in pairs order */
ATT_ALWAYS_INLINE void pv_pairs_keys(const int RB, const int KB, const float *P, int64_t ldp,
                                     int64_t j, const uint16_t *V, int64_t ldv, int64_t Dv,
                                     float *O, int64_t ldo, int64_t pf) {
  av_f pb[4][2];
  for (int y = 0; y < KB; y++)
    for (int x = 0; x < RB; x++)
      pb[x][y] = av_set1(P[x * ldp + j + y]);
  for (int64_t d = 0; d < Dv; d += ATT_PAIRS_W) {
    av_f ve[2], vo[2];
    pairs_load(KB, V, ldv, j, d, pf, ve, vo);
    for (int x = 0; x < RB; x++) {
      av_f oe = av_load(O + x * ldo + d), oo = av_load(O + x * ldo + d + AV_W);
      for (int y = 0; y < KB; y++) {
        oe = av_fma(pb[x][y], ve[y], oe);
        oo = av_fma(pb[x][y], vo[y], oo);
      }
      av_store(O + x * ldo + d, oe);
      av_store(O + x * ldo + d + AV_W, oo);
    }
  }
}

ATT_ALWAYS_INLINE void pv_pairs_rb(const int RB, const float *P, int64_t ldp, int64_t nk,
                                   const uint16_t *V, int64_t ldv, int64_t Dv, float *O,
                                   int64_t ldo, int64_t pf) {
  int64_t j = 0;
  for (; j + 2 <= nk; j += 2)
    pv_pairs_keys(RB, 2, P, ldp, j, V, ldv, Dv, O, ldo, pf);
  if (j < nk)
    pv_pairs_keys(RB, 1, P, ldp, j, V, ldv, Dv, O, ldo, pf);
}

__attribute__((noinline)) static void pv_pairs(const float *P, int64_t R, int64_t ldp, int64_t nk,
                                               const uint16_t *V, int64_t ldv, int64_t Dv,
                                               float *O, int64_t ldo, int64_t pf) {
  int64_t r = 0;
  for (; r + 4 <= R; r += 4, pf = 0)
    pv_pairs_rb(4, P + r * ldp, ldp, nk, V, ldv, Dv, O + r * ldo, ldo, pf);
  for (; r < R; r++, pf = 0)
    pv_pairs_rb(1, P + r * ldp, ldp, nk, V, ldv, Dv, O + r * ldo, ldo, pf);
}
#endif

/* O[r] += sum_j P[r][j] V[j] over R rows; V rows f32, or bf16 when bf;
 * V rows pf ahead prefetched (0: none). */
static void pv(int bf, const float *P, int64_t R, int64_t ldp, int64_t nk, const void *V,
               int64_t ldv, int64_t dvl, float *O, int64_t ldo, int64_t pf) {
#ifdef AV_PV_STREAM
  if (R < AV_PV_STREAM) {
    (bf ? pv_rows_bf16 : pv_rows_f32)(P, R, ldp, nk, V, ldv, dvl, O, ldo, pf);
    return;
  }
#endif
  if (bf)
    pv_bf(1, P, R, ldp, nk, V, ldv, dvl, O, ldo, pf);
  else
    pv_bf(0, P, R, ldp, nk, V, ldv, dvl, O, ldo, pf);
}

/* ---- the online softmax ----------------------------------------------- */

/* The sum of s[0 .. n) in 8 interleaved partial sums, added pairwise: the
 * same order at every level (the compiler keeps the 8 in one vector). */
static inline float att_row_sum(const float *s, int64_t n) {
  float a[8] = {0};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int x = 0; x < 8; x++)
      a[x] += s[j + x];
  for (; j < n; j++)
    a[j & 7] += s[j];
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

/* The max of s[0 .. n) and m0 (NaNs skipped), in 8 interleaved partial
 * maxima (the compiler keeps them in one vector). */
static inline float att_row_max(const float *s, int64_t n, float m0) {
  float a[8] = {m0, m0, m0, m0, m0, m0, m0, m0};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int x = 0; x < 8; x++)
      a[x] = s[j + x] > a[x] ? s[j + x] : a[x];
  for (; j < n; j++)
    a[j & 7] = s[j] > a[j & 7] ? s[j] : a[j & 7];
  for (int x = 1; x < 8; x++)
    a[0] = a[x] > a[0] ? a[x] : a[0];
  return a[0];
}

#ifndef AV_ROW_MAX
#define AV_ROW_MAX att_row_max
#endif

/* s[j] = exp(s[j] - m) over s[0 .. n); returns their sum (att_row_sum). */
static inline float att_exp_sum(float *s, int64_t n, float m) {
  for (int64_t j = 0; j < n; j++)
    s[j] -= m;
  vl_exp_f32(s, s, n);
  return att_row_sum(s, n);
}
#ifndef AV_EXP_SUM
#define AV_EXP_SUM att_exp_sum
#endif

/* ---- one unit --------------------------------------------------------------- */

/* Masks row s (query i of head n, keys jt .. jt + nk) in place. */
static void att_mask_row(const emlx_att_problem *p, int64_t b, int64_t n, int64_t i, int64_t jt,
                         int64_t nk, float *s) {
  if (p->mask_kind == 2) {
    const float *mr =
        (const float *)p->mask + b * p->ms[0] + n * p->ms[1] + i * p->ms[2] + jt * p->ms[3];
    for (int64_t j = 0; j < nk; j++)
      s[j] += mr[j * p->ms[3]];
  } else if (p->mask_kind == 1) {
    const uint8_t *mr =
        (const uint8_t *)p->mask + b * p->ms[0] + n * p->ms[1] + i * p->ms[2] + jt * p->ms[3];
    for (int64_t j = 0; j < nk; j++)
      if (!mr[j * p->ms[3]])
        s[j] = -FLT_MAX;
  }
  if (p->key_mask) {
    const uint8_t *km = p->key_mask + b * p->kms[0] + jt * p->kms[1];
    for (int64_t j = 0; j < nk; j++)
      if (!km[j * p->kms[1]])
        s[j] = -FLT_MAX;
  }
  if (p->causal) {
    int64_t first_hidden = i + p->causal_off + 1 - jt;
    for (int64_t j = first_hidden < 0 ? 0 : first_hidden; j < nk; j++)
      s[j] = -FLT_MAX;
  }
}

static int att_unit(const emlx_att_problem *p, const emlx_att_unit *u, float *m, float *l,
                    float *acc) {
  const int64_t BK = EMLX_ATT_BK, Dp = p->Dp, Dvp = p->Dvp, D = p->D, Dv = p->Dv;
  const int64_t nq = u->i1 - u->i0, R = (u->g1 - u->g0) * nq;
  const emlx_dtype dt = p->dtype;
  const size_t es = emlx_dtype_size(dt);
  const int64_t dl = att_roundup(D, AV_W), dvl = att_roundup(Dv, AV_W);
  const bool use_kt = R >= 8;
  /* K/V rows read in place: f32 always; bf16 widened in registers, except
   * K on the transposed path (converted once per tile there). */
  const bool inplace_dt = dt == EMLX_FLOAT32 || dt == EMLX_BFLOAT16;
  const bool kdirect =
      inplace_dt && p->ks[3] == 1 && D % AV_W == 0 && (dt == EMLX_FLOAT32 || !use_kt);
  const bool vdirect = inplace_dt && p->vs[3] == 1 && Dv % AV_W == 0;
  const int kbf = kdirect && dt == EMLX_BFLOAT16, vbf = vdirect && dt == EMLX_BFLOAT16;
#ifdef AV_BF16_PAIRS
  const bool pairs = kbf && vbf && D % ATT_PAIRS_W == 0 && Dv % ATT_PAIRS_W == 0;
#endif

  size_t nfloats = (size_t)(R * Dp + BK * Dp + Dp * BK + R * BK + BK * Dvp);
  float *scratch = emlx__scratch_get(nfloats * sizeof(float));
  if (!scratch)
    return -1;
  float *Qp = scratch, *Kbuf = Qp + R * Dp, *KT = Kbuf + BK * Dp, *S = KT + Dp * BK,
        *Vbuf = S + R * BK;

  for (int64_t g = u->g0; g < u->g1; g++) {
    int64_t n = u->h * p->G + g;
    for (int64_t i = u->i0; i < u->i1; i++) {
      int64_t r = (g - u->g0) * nq + (i - u->i0);
      const char *src = p->q + (size_t)(u->b * p->qs[0] + n * p->qs[1] + i * p->qs[2]) * es;
      float *qr = Qp + r * Dp;
      att_rows(src, dt, 0, p->qs[3], 1, D, qr, Dp);
      for (int64_t d = 0; d < D; d++)
        qr[d] *= p->scale;
#ifdef AV_BF16_PAIRS
      for (int64_t d = 0; pairs && d < D; d += ATT_PAIRS_W)
        av_pairs_from(qr + d);
#endif
      if (u->init_sinks && p->sinks) {
        m[r] = p->sinks[n * p->sks];
        l[r] = 1.0f;
      } else {
        m[r] = -INFINITY;
        l[r] = 0.0f;
      }
    }
  }
  memset(acc, 0, (size_t)(R * Dvp) * sizeof(float));

  int64_t jend = u->j1;
  if (p->causal && jend > u->i1 + p->causal_off)
    jend = u->i1 + p->causal_off; /* (i1 - 1) + off + 1: no row sees beyond */
  const char *kbase = p->k + (size_t)(u->b * p->ks[0] + u->h * p->ks[1]) * es;
  const char *vbase = p->v + (size_t)(u->b * p->vs[0] + u->h * p->vs[1]) * es;
  const bool masking = p->mask_kind != 0 || p->key_mask != NULL;
  /* K/V rows read in place are prefetched ATT_PF_BYTES ahead on each of the
   * two streams (decode reads K/V once, from memory: the hardware's
   * prefetchers alone left it at ~55-65% of a plain streaming read) */
  const int64_t krow = p->ks[2] * (int64_t)es, vrow = p->vs[2] * (int64_t)es;
  const int64_t kpf = krow > 0 ? (ATT_PF_BYTES + krow - 1) / krow : 0;
  const int64_t vpf = vrow > 0 ? (ATT_PF_BYTES + vrow - 1) / vrow : 0;

  for (int64_t jt = u->j0; jt < jend; jt += BK) {
    int64_t nk = jend - jt < BK ? jend - jt : BK;
    const void *K;
    int64_t ldk;
    if (kdirect) {
      K = kbase + (size_t)(jt * p->ks[2]) * es;
      ldk = p->ks[2];
    } else {
      att_rows(kbase + (size_t)(jt * p->ks[2]) * es, dt, p->ks[2], p->ks[3], nk, D, Kbuf, Dp);
      K = Kbuf;
      ldk = Dp;
    }
#ifdef AV_BF16_PAIRS
    if (pairs)
      qk_pairs(Qp, R, Dp, (const uint16_t *)K, ldk, nk, D, S, BK, kpf);
    else
#endif
    if (use_kt) {
      int64_t nkp = att_roundup(nk, AV_NV * AV_W);
      AV_KT_PACK((const float *)K, ldk, nk, nkp, D, KT, BK);
      qk_kt(Qp, R, Dp, KT, BK, nkp, D, S, BK);
    } else {
      qk_dot(kbf, Qp, R, Dp, K, ldk, nk, dl, S, BK, kdirect ? kpf : 0);
    }

    bool causal_tile = p->causal && jt + nk - 1 > u->i0 + p->causal_off;
    for (int64_t g = u->g0; g < u->g1; g++) {
      int64_t n = u->h * p->G + g;
      for (int64_t i = u->i0; i < u->i1; i++) {
        int64_t r = (g - u->g0) * nq + (i - u->i0);
        float *s = S + r * BK;
        if (masking || causal_tile)
          att_mask_row(p, u->b, n, i, jt, nk, s);
        float mt = AV_ROW_MAX(s, nk, -INFINITY);
        float mnew = m[r] > mt ? m[r] : mt;
        if (!(mnew > -FLT_MAX)) { /* nothing visible yet in this row */
          memset(s, 0, (size_t)nk * sizeof(float));
          continue;
        }
        float alpha = expf(m[r] - mnew);
        float sum = AV_EXP_SUM(s, nk, mnew);
        l[r] = l[r] * alpha + sum;
        if (alpha != 1.0f) {
          float *ar = acc + r * Dvp;
          const av_f va = av_set1(alpha);
          for (int64_t d = 0; d < dvl; d += AV_W)
            av_store(ar + d, av_mul(av_load(ar + d), va));
        }
        m[r] = mnew;
      }
    }

    const void *V;
    int64_t ldv;
    if (vdirect) {
      V = vbase + (size_t)(jt * p->vs[2]) * es;
      ldv = p->vs[2];
    } else {
      att_rows(vbase + (size_t)(jt * p->vs[2]) * es, dt, p->vs[2], p->vs[3], nk, Dv, Vbuf, Dvp);
      V = Vbuf;
      ldv = Dvp;
    }
#ifdef AV_BF16_PAIRS
    if (pairs) {
      pv_pairs(S, R, BK, nk, (const uint16_t *)V, ldv, Dv, acc, Dvp, vpf);
      continue;
    }
#endif
    pv(vbf, S, R, BK, nk, V, ldv, dvl, acc, Dvp, vdirect && !use_kt ? vpf : 0);
  }
#ifdef AV_BF16_PAIRS
  for (int64_t r = 0; pairs && r < R; r++) /* acc back to natural order */
    for (int64_t d = 0; d < Dv; d += ATT_PAIRS_W)
      av_pairs_to(acc + r * Dvp + d);
#endif
  emlx__scratch_put(scratch);
  return 0;
}

const emlx_att_table EMLX_ISA_NAME(emlx_att) = {.unit = att_unit};
