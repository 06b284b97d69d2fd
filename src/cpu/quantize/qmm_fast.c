/* quantize/qmm_fast.c — the driver of the fast quantized matmul kernels
 * (qmm_fast.h): checks, set-up of the prepared x, the split over the pool,
 * the prefill loop over unpacked panels, gather_qmm's grouping by expert,
 * and the portable pieces every ISA shares (scale decoding, row unpacking,
 * the generic decode path, the scalar unit). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "internal.h"
#include "isa.h"
#include "qmm_fast.h"

#define QMM_DECODE_MAX_M EMLX_QMM_DECODE_MAX_M
/* M up to this takes the integer decode path where it applies (it streams
 * W once per 32 rows of x and unpacks nothing into memory; the prefill
 * path's unpacking pays only over many rows). */
#define QMM_INT_MAX_M EMLX_QMM_INT_MAX_M
/* Prefill: elements of K per unpacked panel. */
#define QMM_KC 256
/* Generic decode path: elements of a packed row unpacked at a time. */
#define QMM_GEN_CHUNK 512

/* ---- code values and scales ---------------------------------------------- */

static const float fp4_lut[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                  -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
static float fp8_lut[256]; /* MLX's FromFP8: f16 bits (c & 127) << 7, times 256, sign bit 7 */
static pthread_once_t fp8_once = PTHREAD_ONCE_INIT;

static void fp8_init(void) {
  for (int c = 0; c < 256; c++) {
    float v = emlx_cv_f16_to_f32((uint16_t)((c & 127) << 7)) * 256.0f;
    fp8_lut[c] = (c & 128) ? -v : v;
  }
}

static inline float e8m0(uint8_t s) { /* MLX: bf16 bits s << 7, s == 0 -> 0x40 */
  return emlx_cv_bits_f32(s == 0 ? 0x00400000u : (uint32_t)s << 23);
}

void emlx_qmm_load_scales(const emlx_qmm_prob *p, int64_t r, int64_t g0, int64_t n, float *dst) {
  int64_t at = r * p->groups + g0;
  float mul = p->smul;
  switch (p->sdt) {
  case EMLX_FLOAT32: {
    const float *s = (const float *)p->scales + at;
    for (int64_t i = 0; i < n; i++)
      dst[i] = s[i] * mul;
    break;
  }
  case EMLX_FLOAT16: {
    const uint16_t *s = (const uint16_t *)p->scales + at;
    for (int64_t i = 0; i < n; i++)
      dst[i] = emlx_cv_f16_to_f32(s[i]) * mul;
    break;
  }
  case EMLX_BFLOAT16: {
    const uint16_t *s = (const uint16_t *)p->scales + at;
    for (int64_t i = 0; i < n; i++)
      dst[i] = emlx_cv_bf16_to_f32(s[i]) * mul;
    break;
  }
  default: { /* uint8 codes: e4m3 for nvfp4, e8m0 otherwise */
    const uint8_t *s = (const uint8_t *)p->scales + at;
    if (p->mode == EMLX_QMM_NVFP4)
      for (int64_t i = 0; i < n; i++)
        dst[i] = fp8_lut[s[i]] * mul;
    else
      for (int64_t i = 0; i < n; i++)
        dst[i] = e8m0(s[i]) * mul;
    break;
  }
  }
}

void emlx_qmm_load_biases(const emlx_qmm_prob *p, int64_t r, int64_t g0, int64_t n, float *dst) {
  int64_t at = r * p->groups + g0;
  if (p->sdt == EMLX_FLOAT32) {
    memcpy(dst, (const float *)p->biases + at, (size_t)n * sizeof(float));
  } else {
    const uint16_t *b = (const uint16_t *)p->biases + at;
    bool half = p->sdt == EMLX_FLOAT16;
    for (int64_t i = 0; i < n; i++)
      dst[i] = half ? emlx_cv_f16_to_f32(b[i]) : emlx_cv_bf16_to_f32(b[i]);
  }
}

/* Codes e0 .. e0 + 7 of a row: 8 codes of b bits are exactly b bytes. */
static inline void unpack8(const uint8_t *row, int bits, int64_t e0, uint32_t q[8]) {
  const uint8_t *b = row + (e0 / 8) * bits;
  uint64_t v = 0;
  memcpy(&v, b, (size_t)bits); /* little-endian hosts (x86-64, arm64) */
  uint32_t mask = (1u << bits) - 1u;
  for (int i = 0; i < 8; i++)
    q[i] = (uint32_t)(v >> (i * bits)) & mask;
}

void emlx_qmm_dequant_row(const emlx_qmm_prob *p, int64_t r, int64_t e0, int64_t e1, float *dst) {
  const uint8_t *row = (const uint8_t *)p->w + r * p->row_bytes;
  const int gs = p->gs, bits = p->bits;
  const bool affine = p->mode == EMLX_QMM_AFFINE;
  emlx_qmm_prob one = *p;
  one.smul = 1.0f;
  for (int64_t g0 = e0 / gs * gs; g0 < e1; g0 += gs) {
    int64_t a = g0 > e0 ? g0 : e0, b = g0 + gs < e1 ? g0 + gs : e1;
    float s, bias = 0.0f;
    emlx_qmm_load_scales(&one, r, g0 / gs, 1, &s);
    if (affine)
      emlx_qmm_load_biases(p, r, g0 / gs, 1, &bias);
    float *d = dst + (a - e0);
    if (affine && bits == 4) {
      const uint8_t *q = row + a / 2;
      for (int64_t i = 0; i < (b - a) / 2; i++) {
        d[2 * i] = s * (float)(q[i] & 15) + bias;
        d[2 * i + 1] = s * (float)(q[i] >> 4) + bias;
      }
      continue;
    }
    if (affine && bits == 8) {
      const uint8_t *q = row + a;
      for (int64_t i = 0; i < b - a; i++)
        d[i] = s * (float)q[i] + bias;
      continue;
    }
    uint32_t q[8];
    for (int64_t e = a; e < b; e += 8, d += 8) {
      unpack8(row, bits, e, q);
      switch (p->mode) {
      case EMLX_QMM_AFFINE:
        for (int i = 0; i < 8; i++)
          d[i] = s * (float)q[i] + bias;
        break;
      case EMLX_QMM_MXFP8:
        for (int i = 0; i < 8; i++)
          d[i] = s * fp8_lut[q[i]];
        break;
      default:
        for (int i = 0; i < 8; i++)
          d[i] = s * fp4_lut[q[i]];
        break;
      }
    }
  }
}

/* ---- the generic decode path (every format, every ISA) -------------------- */

static float dot_f32(const float *a, const float *b, int64_t n) {
  float acc[8] = {0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++)
      acc[j] += a[i + j] * b[i + j];
  float s = 0;
  for (; i < n; i++)
    s += a[i] * b[i];
  return s + ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

/* transpose: output columns n0 .. n1 are dot products of unpacked W rows. */
static void generic_decode_t(const emlx_qmm_prob *p, int64_t n0, int64_t n1, float *buf) {
  for (int64_t n = n0; n < n1; n++) {
    float acc[QMM_DECODE_MAX_M] = {0};
    for (int64_t k0 = 0; k0 < p->K; k0 += QMM_GEN_CHUNK) {
      int64_t k1 = k0 + QMM_GEN_CHUNK < p->K ? k0 + QMM_GEN_CHUNK : p->K;
      emlx_qmm_dequant_row(p, n, k0, k1, buf);
      for (int64_t m = 0; m < p->M; m++)
        acc[m] += dot_f32(buf, p->xr[m] + k0, k1 - k0);
    }
    for (int64_t m = 0; m < p->M; m++)
      p->orow[m][n] = acc[m];
  }
}

/* !transpose: out[m][c0 .. c1) += x[m][k] * W[k][c0 .. c1) over k. */
static void generic_decode_n(const emlx_qmm_prob *p, int64_t c0, int64_t c1, float *buf) {
  int64_t w = c1 - c0;
  for (int64_t m = 0; m < p->M; m++)
    memset(p->orow[m] + c0, 0, (size_t)w * sizeof(float));
  for (int64_t k = 0; k < p->K; k++) {
    emlx_qmm_dequant_row(p, k, c0, c1, buf);
    for (int64_t m = 0; m < p->M; m++) {
      float xk = p->xr[m][k];
      float *o = p->orow[m] + c0;
      for (int64_t j = 0; j < w; j++)
        o[j] += xk * buf[j];
    }
  }
}

/* ---- the scalar unit ------------------------------------------------------ */

static int scalar_pick(emlx_qmm_prob *p) {
  p->smul = 1.0f;
  return EMLX_QK_GENERIC;
}

#define SC_MR 4
#define SC_NR 8
static void scalar_micro(int64_t kc, const float *ap, const float *bp, float *const *c, int64_t j0,
                         int mv, int nv, bool first) {
  float acc[SC_MR][SC_NR] = {{0}};
  for (int64_t k = 0; k < kc; k++)
    for (int i = 0; i < SC_MR; i++) {
      float a = ap[k * SC_MR + i];
      for (int j = 0; j < SC_NR; j++)
        acc[i][j] += a * bp[k * SC_NR + j];
    }
  for (int i = 0; i < mv; i++)
    for (int j = 0; j < nv; j++)
      c[i][j0 + j] = first ? acc[i][j] : c[i][j0 + j] + acc[i][j];
}

const emlx_qmm_isa emlx_qmm_isa_scalar = {
    "scalar", 1, SC_MR, SC_NR, scalar_pick, NULL, NULL, scalar_micro, emlx_qmm_dequant_row,
    NULL,     0, NULL,  NULL,  NULL};

/* ---- driver --------------------------------------------------------------- */

static bool valid_format(int mode, int bits, int gs, emlx_dtype sdt, bool has_bias) {
  switch (mode) {
  case EMLX_QMM_AFFINE:
    return (bits == 2 || bits == 3 || bits == 4 || bits == 5 || bits == 6 || bits == 8) &&
           (gs == 32 || gs == 64 || gs == 128) &&
           (sdt == EMLX_FLOAT32 || sdt == EMLX_FLOAT16 || sdt == EMLX_BFLOAT16) && has_bias;
  case EMLX_QMM_MXFP4:
    return bits == 4 && gs == 32 && sdt == EMLX_UINT8;
  case EMLX_QMM_MXFP8:
    return bits == 8 && gs == 32 && sdt == EMLX_UINT8;
  case EMLX_QMM_NVFP4:
    return bits == 4 && gs == 16 && sdt == EMLX_UINT8;
  default:
    return false;
  }
}

static const emlx_qmm_isa *unit(void) {
  const char *name = emlx_cpu_isa_get()->name;
  if (!strcmp(name, "avx512"))
    return &emlx_qmm_isa_avx512;
  if (!strcmp(name, "avx2"))
    return &emlx_qmm_isa_avx2;
  return &emlx_qmm_isa_scalar;
}

/* Values per byte of the split decoders (lane order of the prepared x). */
static int split_ppb(int kind) {
  return kind == EMLX_QK_A4 || kind == EMLX_QK_F4 ? 2 : kind == EMLX_QK_A2 ? 4 : 1;
}

typedef struct run_ctx {
  const emlx_qmm_prob *p;
  const emlx_qmm_isa *u;
  const float *xpack; /* prefill: x in panels [M / mr][K][mr], rows past M zero */
  atomic_bool failed; /* a chunk found no scratch memory */
} run_ctx;

static void decode_t_range(void *vctx, int64_t n0, int64_t n1) {
  const run_ctx *c = vctx;
  if (c->p->kind >= EMLX_QK_IA4) {
    c->u->decode_ti(c->p, n0, n1);
    return;
  }
  if (c->p->kind != EMLX_QK_GENERIC) {
    c->u->decode_t(c->p, n0, n1);
    return;
  }
  float *buf = emlx__scratch_get(QMM_GEN_CHUNK * sizeof(float));
  if (!buf) {
    atomic_store(&((run_ctx *)vctx)->failed, true);
    return;
  }
  generic_decode_t(c->p, n0, n1, buf);
  emlx__scratch_put(buf);
}

static void decode_n_range(void *vctx, int64_t b0, int64_t b1) {
  const run_ctx *c = vctx;
  const emlx_qmm_prob *p = c->p;
  int64_t c0 = b0 * p->gs, c1 = b1 * p->gs;
  if (p->kind != EMLX_QK_GENERIC) {
    if (!c->u->decode_n(p, c0, c1))
      atomic_store(&((run_ctx *)vctx)->failed, true);
    return;
  }
  float *buf = emlx__scratch_get((size_t)(c1 - c0) * sizeof(float));
  if (!buf) {
    atomic_store(&((run_ctx *)vctx)->failed, true);
    return;
  }
  generic_decode_n(p, c0, c1, buf);
  emlx__scratch_put(buf);
}

/* Prefill: for each block of nr output columns, each chunk of K: unpack
 * the block into the panel bp[kc][nr] (zero past N), then run the
 * micro-kernel over every mr rows of x. */
static void prefill_range(void *vctx, int64_t b0, int64_t b1) {
  run_ctx *c = vctx;
  const emlx_qmm_prob *p = c->p;
  const emlx_qmm_isa *u = c->u;
  int nr = u->nr, mr = u->mr;
  float *bp = emlx__scratch_get((size_t)QMM_KC * nr * sizeof(float) * 2);
  if (!bp) {
    atomic_store(&c->failed, true);
    return;
  }
  float *tmp = bp + (size_t)QMM_KC * nr; /* transpose: nv rows of kc */
  for (int64_t b = b0; b < b1; b++) {
    int64_t n0 = b * nr;
    int nv = (int)(p->N - n0 < nr ? p->N - n0 : nr);
    for (int64_t k0 = 0; k0 < p->K; k0 += QMM_KC) {
      int64_t kc = p->K - k0 < QMM_KC ? p->K - k0 : QMM_KC;
      if (p->transpose) {
        for (int j = 0; j < nv; j++)
          u->dequant(p, n0 + j, k0, k0 + kc, tmp + (size_t)j * QMM_KC);
        if (u->tr && nv == nr && kc % u->vl == 0) { /* whole blocks */
          for (int64_t kb = 0; kb < kc; kb += u->vl)
            for (int jb = 0; jb < nr; jb += u->vl)
              u->tr(tmp + (size_t)jb * QMM_KC + kb, QMM_KC, bp + kb * nr + jb, nr);
        } else {
          for (int64_t k = 0; k < kc; k++) {
            float *d = bp + k * nr;
            int j = 0;
            for (; j < nv; j++)
              d[j] = tmp[(size_t)j * QMM_KC + k];
            for (; j < nr; j++)
              d[j] = 0.0f;
          }
        }
      } else {
        for (int64_t k = 0; k < kc; k++) {
          float *d = bp + k * nr;
          u->dequant(p, k0 + k, n0, n0 + nv, d);
          for (int j = nv; j < nr; j++)
            d[j] = 0.0f;
        }
      }
      for (int64_t m0 = 0; m0 < p->M; m0 += mr) {
        int mv = (int)(p->M - m0 < mr ? p->M - m0 : mr);
        const float *ap = c->xpack + m0 * p->K + k0 * mr;
        u->micro(kc, ap, bp, p->orow + m0, n0, mv, nv, k0 == 0);
      }
    }
  }
  emlx__scratch_put(bp);
}

static atomic_bool int_dot_on = true;

bool emlx_cpu_qmm_fast_int_dot(bool on) { return atomic_exchange(&int_dot_on, on); }

/* Per group g < G of x (gs elements each): sums[g] = the f64 sum of its x,
 * rounded to f32, and amax[g] = its max |x|. false: some |x| is NaN or
 * above lim (Inf, or larger than the caller's codes take). */
static bool group_stats(const float *x, int64_t gs, int64_t G, float lim, float *sums,
                        float *amax) {
  for (int64_t g = 0; g < G; g++) {
    const float *xg = x + g * gs;
    float m = 0.0f;
    double t = 0.0;
    for (int64_t k = 0; k < gs; k++) {
      float a = xg[k] < 0 ? -xg[k] : xg[k];
      if (!(a <= lim))
        return false;
      m = a > m ? a : m;
      t += (double)xg[k];
    }
    sums[g] = (float)t;
    amax[g] = m;
  }
  return true;
}

/* e with 2^(e - 1) <= the largest of amax[0 .. G) < 2^e (0 when all are
 * 0): an x row's power of two, from its groups' max|x|. */
static int max_exp(const float *amax, int64_t G) {
  float mx = 0.0f;
  for (int64_t g = 0; g < G; g++)
    mx = amax[g] > mx ? amax[g] : mx;
  int e = 0;
  if (mx > 0.0f)
    frexpf(mx, &e);
  return e;
}

#define QI_C EMLX_QI_C
int emlx_qmm_int_row_scales(float *sc, float *su, double *inv, int64_t G, bool affine) {
  const int xe = max_exp(sc, G);
  const double xn = ldexp(1.0, -xe);
  for (int64_t g = 0; g < G; g++) {
    const float amax = sc[g];
    inv[g] = amax > 0.0f ? QI_C / (double)amax : 0.0;
    sc[g] = (float)((double)amax / QI_C * xn);
    if (affine)
      su[g] = (float)((double)su[g] * xn);
  }
  return xe;
}

/* The integer decode path's x: per row and group of gs elements, the codes
 * c = round(x / xsc') with xsc' = max|x| / QI_C, QI_C = 8355711, so that c =
 * 65536 * h + 256 * m + l with h, m, l int8 (l the low byte as signed, then
 * m likewise of (c - l) / 256, h the rest, in -127 .. 127), laid out per
 * chunk of vb bytes of a packed row (vb * ppb elements) for the AVX2 unit's
 * vpmaddwd (the AVX-512 unit lays out its own x): the int16 words 256 * h +
 * m, little-endian, then the bytes l. 8-bit codes (EMLX_QK_IA8): word j is
 * element j. 4-bit codes (part s: the elements at s, s + 2, ..., the low /
 * high nibbles of the chunk's bytes): word k of vector 2 s + t is the
 * element of byte 2 k + t and part s, then the l of part 0, of part 1.
 * Otherwise h of each part, then m, then l. Elements past K are 0. A code
 * is off x by at most xsc' / 2 = max|x| / 16711422 of its group (about
 * 2^-24, f32's own rounding of it). xe[m]: row m's power of two
 * (emlx_qmm_int_row_scales); xsc: per group, xsc' times 2^-xe; xs: per
 * group, the sum of x times 2^-xe (affine) or of the coded x times xsc
 * (e2m1, whose codes carry an offset). false: x is not finite; the caller
 * takes the f32 path. */
static bool prep_int(const emlx_qmm_prob *p, int vb, int8_t *xi, float *xsc, float *xs, double *inv,
                     int *xe) {
  const int ppb = p->kind == EMLX_QK_IA8 || p->kind == EMLX_QK_IAB ? 1 : 2;
  const int64_t K = p->K, gs = p->gs, G = p->groups;
  const int ce_sh = __builtin_ctz((unsigned)(vb * ppb)), gs_sh = __builtin_ctz((unsigned)gs);
  const int64_t cb = 3 * (int64_t)ppb * vb; /* bytes of xi per chunk */
  const bool affine = p->mode == EMLX_QMM_AFFINE;
  for (int64_t m = 0; m < p->M; m++) {
    const float *x = p->xr[m];
    int8_t *d = xi + m * p->xi_row;
    float *sc = xsc + m * p->xs_row, *su = xs + m * p->xs_row;
    const int64_t full = (K >> ce_sh) * cb; /* past it: the last, partial chunk, zero past K */
    memset(d + full, 0, (size_t)(p->xi_row - full));
    /* the sums of x, and in sc max|x| until the scales replace it */
    if (!group_stats(x, gs, G, 3.0e38f, su, sc))
      return false; /* NaN or Inf */
    xe[m] = emlx_qmm_int_row_scales(sc, su, inv, G, affine);
    int64_t csum = 0;
    for (int64_t e = 0; e < K; e++) { /* the codes, in chunk order */
      const int64_t g = e >> gs_sh;
      double v = (double)x[e] * inv[g];
      int32_t c = (int32_t)(v < 0 ? -(int32_t)(0.5 - v) : (int32_t)(v + 0.5));
      c = c > QI_C ? QI_C : c < -QI_C ? -QI_C : c;
      int32_t l = ((c & 0xff) ^ 0x80) - 0x80, c1 = (c - l) / 256;
      int32_t m8 = ((c1 & 0xff) ^ 0x80) - 0x80, h = (c1 - m8) / 256;
      int8_t *ch = d + (e >> ce_sh) * cb;
      int64_t part = e & (ppb - 1), j = (e & ((1 << ce_sh) - 1)) >> (ppb - 1);
      const uint16_t hw = (uint16_t)(int16_t)(256 * h + m8);
      if (p->kind == EMLX_QK_IA8) { /* the word 256 h + m (int16, little-endian), then l */
        ch[2 * j] = (int8_t)(hw & 0xff);
        ch[2 * j + 1] = (int8_t)(hw >> 8);
      } else if (ppb == 2) { /* word j / 2 of vector 2 * part + j % 2, then l */
        int8_t *wd = ch + (2 * part + (j & 1)) * vb + (j >> 1) * 2;
        wd[0] = (int8_t)(hw & 0xff);
        wd[1] = (int8_t)(hw >> 8);
      } else {
        ch[part * vb + j] = (int8_t)h;
        ch[(ppb + part) * vb + j] = (int8_t)m8;
      }
      ch[(2 * ppb + part) * vb + j] = (int8_t)l;
      csum += c;
      if (((e + 1) & (gs - 1)) == 0) {
        if (!affine) /* e2m1: the sum of the coded x */
          su[g] = (float)((double)sc[g] * (double)csum);
        csum = 0;
      }
    }
    for (int64_t g = G; g < p->xs_row; g++)
      sc[g] = su[g] = 0.0f;
  }
  return true;
}

/* The subnormal-code decode path's x (EMLX_QK_DA4, one row; see
 * qmm_fast.h): per 32-byte chunk c of a packed row (elements 64 c ..
 * 64 c + 63; 32-bit lane i holds elements 64 c + 8 i + k, k = 0 .. 7, as its
 * nibbles k), vector k holds in lane i that element times 2^(E - 4 pos(k)),
 * pos(k) = k for k <= 4 and k - 3 above (the kernel masks the upper three
 * nibbles after a shift by 12), computed in f64 and exact: E = 126 - e,
 * 2^(e - 1) <= max|x| < 2^e, so every |x 2^E| < 2^126. Elements past K are
 * 0. xs: per group, the sum of x (zeros up to xs_row). p->xd_e = 149 - E
 * (an f64 exponent). false: x holds NaN or Inf. */
static bool prep_den(emlx_qmm_prob *p, float *xd, float *xs) {
  const float *x = p->xr[0];
  const int64_t K = p->K, chunks = (p->row_bytes + 31) / 32;
  float *gmax = xd; /* the groups' max|x|, in xd until the codes' x overwrite it */
  if (!group_stats(x, p->gs, p->groups, 3.4028235e38f, xs, gmax))
    return false; /* NaN or Inf */
  for (int64_t g = p->groups; g < p->xs_row; g++)
    xs[g] = 0.0f;
  const int E = 126 - max_exp(gmax, p->groups);
  double f[5]; /* 2^(E - 4 pos) */
  for (int pos = 0; pos < 5; pos++)
    f[pos] = ldexp(1.0, E - 4 * pos);
  memset(xd + (chunks - 1) * 64, 0, 64 * sizeof(float)); /* the last chunk's tail */
  for (int64_t k = 0; k < K; k++) {
    const int nib = (int)(k & 7), pos = nib <= 4 ? nib : nib - 3;
    xd[(k >> 6) * 64 + nib * 8 + ((k >> 3) & 7)] = (float)((double)x[k] * f[pos]);
  }
  p->xd_e = 149 - E;
  return true;
}

/* Runs one set-up problem (row pointers filled in). false: out of memory. */
static bool run_prob(emlx_qmm_prob *p, bool threaded) {
  const emlx_qmm_isa *u = unit();
  pthread_once(&fp8_once, fp8_init);
  p->rows = p->transpose ? p->N : p->K;
  p->rlen = p->transpose ? p->K : p->N;
  p->row_bytes = p->rlen * p->bits / 8;
  p->groups = p->rlen / p->gs;
  p->xp = p->xsum = p->xsc = NULL;
  p->xi = NULL;
  p->xd = NULL;
  p->xd_e = 0;
  p->xi_row = p->xs_row = 0;
  run_ctx c = {p, u, NULL, false};
  int nt = threaded ? emlx_num_threads() : 1;

  p->kind = u->pick(p); /* sets p->smul */
  void *prep = NULL;
  if (p->transpose && u->ipick && p->M <= QMM_INT_MAX_M && atomic_load(&int_dot_on)) {
    emlx_qmm_prob ip = *p;
    int ik = u->ipick(&ip);
    if (ik == EMLX_QK_DA4) {
      const int64_t chunks = (p->row_bytes + 31) / 32;
      ip.xs_row = (p->groups + 15) / 16 * 16;
      prep = emlx__scratch_get((size_t)(chunks * 64 + ip.xs_row) * sizeof(float));
      if (!prep)
        return false;
      float *xd = prep, *xs = xd + chunks * 64;
      if (prep_den(&ip, xd, xs)) {
        ip.kind = ik;
        ip.xd = xd;
        ip.xsum = xs;
        *p = ip;
      } else { /* NaN or Inf: the integer path's checks decide */
        emlx__scratch_put(prep);
        prep = NULL;
        ik = EMLX_QK_IA4;
      }
    }
    if (ik != EMLX_QK_GENERIC && !prep) {
      ip.kind = ik;
      int ppb = ik == EMLX_QK_IA8 || ik == EMLX_QK_IAB ? 1 : 2;
      int64_t units = ik == EMLX_QK_IAB ? p->K : p->row_bytes; /* of QI_VB per step */
      ip.xi_row = (units + u->ivb - 1) / u->ivb * (3 * ppb * u->ivb);
      ip.xs_row = (p->groups + 15) / 16 * 16;
      size_t n_xi = (size_t)(p->M * ip.xi_row), n_g = (size_t)(p->M * ip.xs_row);
      prep = emlx__scratch_get(n_xi + 2 * n_g * sizeof(float) + (size_t)p->groups * 8 + 64);
      if (!prep)
        return false;
      float *xsc = (float *)((char *)prep + (n_xi + 63) / 64 * 64), *xs = xsc + n_g;
      double *inv = (double *)(xs + n_g + (n_g & 1)); /* 8-byte aligned: n_g is even */
      if (u->iprep ? u->iprep(&ip, prep, xsc, xs, inv, ip.xe)
                   : prep_int(&ip, u->ivb, prep, xsc, xs, inv, ip.xe)) {
        ip.xi = prep;
        ip.xsc = xsc;
        ip.xsum = xs;
        *p = ip;
      } else {
        emlx__scratch_put(prep);
        prep = NULL;
      }
    }
  }
  if (!prep && p->M > QMM_DECODE_MAX_M) {
    int mr = u->mr;
    int64_t mpad = (p->M + mr - 1) / mr * mr;
    float *xpack = emlx__scratch_get((size_t)(mpad * p->K) * sizeof(float));
    if (!xpack)
      return false;
    for (int64_t m0 = 0; m0 < mpad; m0 += mr)
      for (int i = 0; i < mr; i++) {
        float *d = xpack + m0 * p->K + i;
        if (m0 + i < p->M) {
          const float *x = p->xr[m0 + i];
          for (int64_t k = 0; k < p->K; k++)
            d[k * mr] = x[k];
        } else {
          for (int64_t k = 0; k < p->K; k++)
            d[k * mr] = 0.0f;
        }
      }
    c.xpack = xpack;
    int64_t blocks = (p->N + u->nr - 1) / u->nr;
    if (threaded)
      emlx__parallel_for(blocks, 1, prefill_range, &c);
    else
      prefill_range(&c, 0, blocks);
    emlx__scratch_put(xpack);
    return !atomic_load(&c.failed);
  }

  if (prep) {
    /* the integer path: x prepared above */
  } else if (p->transpose && p->kind != EMLX_QK_GENERIC) {
    int ppb = split_ppb(p->kind), vl = u->vl;
    int64_t chunk = (int64_t)vl * ppb;
    size_t n_xp = (size_t)(p->M * p->K), n_xs = (size_t)(p->M * p->groups);
    prep = emlx__scratch_get((n_xp + n_xs) * sizeof(float));
    if (!prep)
      return false;
    float *xp = prep, *xs = xp + n_xp;
    for (int64_t m = 0; m < p->M; m++) {
      const float *x = p->xr[m];
      float *d = xp + m * p->K;
      for (int64_t c0 = 0; c0 < p->K; c0 += chunk)
        for (int64_t v = 0; v < chunk; v++) /* value v of the chunk: byte v / ppb, part v % ppb */
          d[c0 + (v % ppb) * vl + v / ppb] = x[c0 + v];
      for (int64_t g = 0; g < p->groups; g++) {
        double s = 0;
        for (int64_t k = 0; k < p->gs; k++)
          s += (double)x[g * p->gs + k];
        xs[m * p->groups + g] = (float)s;
      }
    }
    p->xp = xp;
    p->xsum = xs;
  }
  if (p->transpose) {
    int64_t grain = 16;
    if (threaded && p->N > grain && nt > 1)
      emlx__parallel_for(p->N, grain, decode_t_range, &c);
    else
      decode_t_range(&c, 0, p->N);
  } else {
    int64_t blocks = p->N / p->gs; /* columns in whole groups */
    int64_t grain = (1024 + p->gs - 1) / p->gs;
    if (threaded && blocks > grain && nt > 1)
      emlx__parallel_for(blocks, grain, decode_n_range, &c);
    else
      decode_n_range(&c, 0, blocks);
  }
  emlx__scratch_put(prep);
  return !atomic_load(&c.failed);
}

static bool desc_ok(const emlx_qmm_desc *d) {
  if (!d || !d->x || !d->w || !d->scales || !d->out || d->M < 1 || d->N < 1 || d->K < 1 ||
      d->ldx < d->K || d->ldo < d->N)
    return false;
  if (!valid_format(d->mode, d->bits, d->group_size, d->scale_dtype, d->biases != NULL))
    return false;
  int64_t rlen = d->transpose ? d->K : d->N;
  return rlen % d->group_size == 0;
}

bool emlx_cpu_qmm_fast(const emlx_qmm_desc *d) {
  if (!desc_ok(d))
    return false;
  void *ptrs = emlx__scratch_get((size_t)d->M * 2 * sizeof(void *));
  if (!ptrs)
    return false;
  const float **xr = ptrs;
  float **orow = (float **)(xr + d->M);
  for (int64_t m = 0; m < d->M; m++) {
    xr[m] = d->x + m * d->ldx;
    orow[m] = d->out + m * d->ldo;
  }
  emlx_qmm_prob p = {.M = d->M,
                     .N = d->N,
                     .K = d->K,
                     .xr = xr,
                     .orow = orow,
                     .w = d->w,
                     .scales = d->scales,
                     .biases = d->mode == EMLX_QMM_AFFINE ? d->biases : NULL,
                     .sdt = d->scale_dtype,
                     .gs = d->group_size,
                     .bits = d->bits,
                     .mode = d->mode,
                     .transpose = d->transpose};
  bool ok = run_prob(&p, d->threaded);
  emlx__scratch_put(ptrs);
  return ok;
}

/* ---- gather_qmm ------------------------------------------------------------ */

bool emlx_cpu_gather_qmm_fast(const emlx_gqmm_desc *g) {
  if (!g || g->count < 0 || !desc_ok(&g->q) || g->n_experts < 1 || g->n_x < 1)
    return false;
  const emlx_qmm_desc *d = &g->q;
  int64_t count = g->count;
  if (count == 0)
    return true;
  for (int64_t i = 0; i < count; i++) {
    int64_t li = g->lhs ? g->lhs[i] : i, ri = g->rhs ? g->rhs[i] : i;
    if (li >= g->n_x || ri >= g->n_experts)
      return false;
  }
  /* Output matrices grouped by expert (a counting sort: stable, so the
   * order within an expert, and thus every result, is the same whether or
   * not the indices come sorted). */
  int64_t E = g->n_experts, rows = count * d->M;
  size_t bytes = (size_t)(E + 1) * sizeof(int64_t) + (size_t)count * sizeof(int64_t) +
                 (size_t)rows * 2 * sizeof(void *);
  void *mem = emlx__scratch_get(bytes);
  if (!mem)
    return false;
  int64_t *start = mem, *order = start + E + 1;
  const float **xr = (const float **)(order + count);
  float **orow = (float **)(xr + rows);
  memset(start, 0, (size_t)(E + 1) * sizeof(int64_t));
  for (int64_t i = 0; i < count; i++)
    start[(g->rhs ? g->rhs[i] : i) + 1]++;
  for (int64_t e = 0; e < E; e++)
    start[e + 1] += start[e];
  {
    int64_t *fill = order; /* reuse: positions, then overwritten in place */
    int64_t *next = emlx__scratch_get((size_t)E * sizeof(int64_t));
    if (!next) {
      emlx__scratch_put(mem);
      return false;
    }
    memcpy(next, start, (size_t)E * sizeof(int64_t));
    for (int64_t i = 0; i < count; i++)
      fill[next[g->rhs ? g->rhs[i] : i]++] = i;
    emlx__scratch_put(next);
  }
  bool ok = true;
  for (int64_t e = 0; e < E && ok; e++) {
    int64_t n_mat = start[e + 1] - start[e];
    if (n_mat == 0)
      continue;
    int64_t r = 0;
    for (int64_t t = start[e]; t < start[e + 1]; t++) {
      int64_t i = order[t], li = g->lhs ? g->lhs[i] : i;
      for (int64_t m = 0; m < d->M; m++, r++) {
        xr[r] = d->x + li * g->x_stride + m * d->ldx;
        orow[r] = d->out + i * g->o_stride + m * d->ldo;
      }
    }
    emlx_qmm_prob p = {
        .M = r,
        .N = d->N,
        .K = d->K,
        .xr = xr,
        .orow = orow,
        .w = d->w + e * g->w_stride,
        .scales = (const uint8_t *)d->scales + e * g->s_stride *
                                                   (d->scale_dtype == EMLX_FLOAT32 ? 4
                                                    : d->scale_dtype == EMLX_UINT8 ? 1
                                                                                   : 2),
        .biases = d->mode == EMLX_QMM_AFFINE
                      ? (const uint8_t *)d->biases +
                            e * g->s_stride * (d->scale_dtype == EMLX_FLOAT32 ? 4 : 2)
                      : NULL,
        .sdt = d->scale_dtype,
        .gs = d->group_size,
        .bits = d->bits,
        .mode = d->mode,
        .transpose = d->transpose};
    ok = run_prob(&p, d->threaded);
  }
  emlx__scratch_put(mem);
  return ok;
}
