/* matmul_amx_avx512.c — the AMX-BF16 micro-kernel for bf16 products
 * (driver: matmul_lowp.c).
 *
 * One call computes a 32 x 32 block of C in four f32 tiles (2 x 2 blocking:
 * tiles 0-3 accumulate, 4-5 hold two 16-row slices of A, 6-7 two 16-column
 * slices of B), 32 values of k per step through TDPBF16PS, then stores the
 * tiles to a small f32 buffer and rounds them to bf16 with AVX-512 BF16.
 * Both operands are packed tile by tile: for each step of 32 k, A's two
 * 1 KiB tiles (rows 0-15, 16-31) and B's two VNNI tiles (columns 0-15,
 * 16-31), so each tile load reads one contiguous kilobyte. While it runs,
 * a call prefetches into L2 the slice of the next B panel the driver names:
 * the packed B lives in L3, and a panel met cold stalls the tile loads
 * (about 13% of the 2048^3 time on the machine this was tuned on). For a K
 * past KC_BLOCK the driver calls amx_micro_part over chunks of K instead,
 * the f32 block kept in a buffer between chunks, so a 16 KiB chunk of the B
 * panel is read from L1 by every A micro-panel of the row block (a few
 * percent at 2048^3; 512 is worse: the chunk no longer fits L1 with A's).
 *
 * The AMX instructions are enabled per function with target attributes, so
 * this unit needs no compiler flag beyond the AVX-512 set CMake gives every
 * *_avx512.c; the kernel is offered only when CPUID reports AMX-TILE and
 * AMX-BF16 and Linux grants the tile state (arch_prctl, once per process). */
#include "matmul_pack_avx512.h"

#define AMX_TARGET __attribute__((target("amx-tile,amx-bf16")))
#define MR 32
#define NR 32
#define KU 32
#define KC_BLOCK 256 /* values of k per amx_micro_part call (8 steps) */

typedef struct tile_config {
  uint8_t palette_id;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} tile_config;

AMX_TARGET static void amx_begin(void) {
  tile_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.palette_id = 1;
  for (int t = 0; t < 8; t++) {
    cfg.rows[t] = 16;
    cfg.colsb[t] = 64;
  }
  /* GCC 12 does not see that LDTILECFG reads cfg and drops the stores. */
  __asm__ __volatile__("" : : "r"(&cfg) : "memory");
  _tile_loadconfig(&cfg);
}

AMX_TARGET static void amx_end(void) { _tile_release(); }

/* A in tile order: for each step of 32 k, the 1 KiB tile of rows 0-15, then
 * that of rows 16-31 (row stride 64 bytes), so every tile load reads one
 * contiguous kilobyte. */
static void amx_pack_a(const emlx_gemm *g, int64_t i0, int64_t kpad, void *dst) {
  uint16_t *d = dst;
  int64_t nfull = g->K / KU;
  for (int r = 0; r < MR; r++) {
    int64_t i = i0 + r;
    uint16_t *drow = d + (r / 16) * 512 + (r % 16) * 32;
    if (i >= g->M) {
      for (int64_t kb = 0; kb < kpad / KU; kb++)
        memset(drow + kb * 1024, 0, 64);
      continue;
    }
    const uint16_t *src = (const uint16_t *)g->a + i * g->a_rs;
    int64_t kb = 0;
    if (g->a_cs == 1)
      for (; kb < nfull; kb++)
        _mm512_storeu_si512(drow + kb * 1024, _mm512_loadu_si512(src + kb * KU));
    for (; kb < kpad / KU; kb++) {
      uint16_t *t = drow + kb * 1024;
      for (int64_t c = 0; c < KU; c++) {
        int64_t k = kb * KU + c;
        t[c] = k < g->K ? mp_load_u16(src, k * g->a_cs) : 0;
      }
    }
  }
}

static void amx_pack_b(const emlx_gemm *g, int64_t j0, int64_t k0, int64_t k1, void *dst) {
  uint32_t *d = dst;
  for (int64_t p = k0 / 2; p < k1 / 2; p++) {
    /* Step p / 16, pair p % 16 within the step: tile 0 then tile 1. */
    uint32_t *step = d + (p / 16) * 512 + (p % 16) * 16;
    if (g->b_cs == 1) {
      __m512i o0, o1;
      mp_pair_vectors(g, p, j0, &o0, &o1);
      _mm512_storeu_si512(step, o0);
      _mm512_storeu_si512(step + 256, o1);
    } else {
      uint32_t row[32];
      mp_pair_row(g, p, j0, row);
      memcpy(step, row, 64);
      memcpy(step + 256, row + 16, 64);
    }
  }
}

/* The valid mv x nv corner of the f32 block tmp, rounded to bf16, into c. */
static void amx_store_bf16(const float (*tmp)[NR], void *c, int64_t ldc, int mv, int nv) {
  uint16_t *out = c;
  __mmask16 m0 = nv >= 16 ? 0xFFFF : (__mmask16)((1u << nv) - 1u);
  __mmask16 m1 = nv <= 16 ? 0 : nv >= 32 ? 0xFFFF : (__mmask16)((1u << (nv - 16)) - 1u);
  for (int r = 0; r < mv; r++) {
    __m256i lo = (__m256i)_mm512_cvtneps_pbh(_mm512_load_ps(&tmp[r][0]));
    __m256i hi = (__m256i)_mm512_cvtneps_pbh(_mm512_load_ps(&tmp[r][16]));
    _mm256_mask_storeu_epi16(out + r * ldc, m0, lo);
    if (m1)
      _mm256_mask_storeu_epi16(out + r * ldc + 16, m1, hi);
  }
}

/* Steps [k0, k1) of the packed panels into tiles 0-3, prefetching into L2
 * pf_lines cache lines from pf (spread evenly over the steps). */
AMX_TARGET static inline void amx_steps(int64_t k0, int64_t k1, const uint16_t *a,
                                        const uint16_t *b, const char *pf, int64_t pf_lines) {
  int64_t per = pf ? (pf_lines + (k1 - k0) / KU - 1) / ((k1 - k0) / KU) : 0;
  const char *pf_end = pf ? pf + pf_lines * 64 : NULL;
  for (int64_t k = k0; k < k1; k += KU) {
    const uint16_t *bk = b + k * NR; /* 2 tiles of 16 pairs x 16 columns */
    for (int64_t l = 0; l < per && pf < pf_end; l++, pf += 64)
      _mm_prefetch(pf, _MM_HINT_T1);
    _tile_loadd(4, a + k * MR, 64);
    _tile_loadd(6, bk, 64);
    _tile_loadd(5, a + k * MR + 512, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_loadd(7, bk + 512, 64);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(3, 5, 7);
  }
}

AMX_TARGET static void amx_micro(int64_t kpad, const void *ap, const void *bp, void *c, int64_t ldc,
                                 int mv, int nv, emlx_dtype dt, const void *pf, int64_t pf_bytes) {
  (void)dt;
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  amx_steps(0, kpad, ap, bp, pf, pf_bytes / 64);
  _Alignas(64) float tmp[MR][NR];
  _tile_stored(0, &tmp[0][0], NR * 4);
  _tile_stored(1, &tmp[0][16], NR * 4);
  _tile_stored(2, &tmp[16][0], NR * 4);
  _tile_stored(3, &tmp[16][16], NR * 4);
  amx_store_bf16((const float(*)[NR])tmp, c, ldc, mv, nv);
}

AMX_TARGET static void amx_micro_part(int64_t k0, int64_t k1, const void *ap, const void *bp,
                                      float *acc, bool first, bool last, void *c, int64_t ldc,
                                      int mv, int nv, const void *pf, int64_t pf_bytes) {
  if (first) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  } else {
    _tile_loadd(0, acc, NR * 4);
    _tile_loadd(1, acc + 16, NR * 4);
    _tile_loadd(2, acc + 16 * NR, NR * 4);
    _tile_loadd(3, acc + 16 * NR + 16, NR * 4);
  }
  amx_steps(k0, k1, ap, bp, pf, pf_bytes / 64);
  _Alignas(64) float tmp[MR][NR];
  float *dst = last ? &tmp[0][0] : acc;
  _tile_stored(0, dst, NR * 4);
  _tile_stored(1, dst + 16, NR * 4);
  _tile_stored(2, dst + 16 * NR, NR * 4);
  _tile_stored(3, dst + 16 * NR + 16, NR * 4);
  if (last)
    amx_store_bf16((const float(*)[NR])tmp, c, ldc, mv, nv);
}

static const emlx_mm_lowp_kernel amx_kernel = {
    .name = "amx-bf16",
    .mr = MR,
    .nr = NR,
    .ku = KU,
    .a_panel_elt = 2,
    .b_panel_elt = 2,
    .pack_a = amx_pack_a,
    .pack_b = amx_pack_b,
    .micro = amx_micro,
    .micro_part = amx_micro_part,
    .kc = KC_BLOCK,
    .begin = amx_begin,
    .end = amx_end};

const emlx_mm_lowp_kernel *emlx_mm_lowp_amx(void) {
  return emlx_mm_amx_usable() ? &amx_kernel : NULL;
}
