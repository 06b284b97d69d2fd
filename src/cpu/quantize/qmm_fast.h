/* quantize/qmm_fast.h — the fast CPU kernels of quantized matmul and
 * gather_qmm (qmm_fast.c: driver and portable kernels; qmm_fast_avx2.c,
 * qmm_fast_avx512.c: per-ISA units from qmm_fast_body.h).
 *
 * The packed formats are MLX's (mlx/backend/cpu/quantized.cpp): every row
 * of W is quantized along its last axis, groups of group_size elements,
 * codes packed LSB-first in uint32 words as one little-endian bit stream.
 *   affine, bits 2/3/4/5/6/8, group 32/64/128: value = scale * q + bias;
 *   mxfp4: e2m1 codes, e8m0 scales (2^(s-127)), group 32, no biases;
 *   mxfp8: e4m3 codes (MLX's FromFP8), e8m0 scales, group 32, no biases;
 *   nvfp4: e2m1 codes, e4m3 scales, group 16, no biases.
 * transpose = true: W is logically [N, K] (x . W^T), words [N][K*bits/32],
 * scales/biases [N][K/gs]; transpose = false: W is [K, N] (x . W), words
 * [K][N*bits/32], scales/biases [K][N/gs].
 *
 * Paths: decode (M small): each thread streams a block of packed rows once,
 * unpacks in registers and accumulates per group (scale * sum q*x + bias *
 * sum x); prefill (M large): a block of W is unpacked once into an f32 panel
 * in L1/L2 and a register-blocked FMA micro-kernel reuses it over all rows
 * of x. Nothing dequantized is written to memory beyond those panels.
 * Integer decode path (transpose, M <= 32, every format but mxfp8; AVX-512
 * with VNNI + VBMI, or AVX2 for 4-bit and affine 8-bit codes, as 16-bit
 * words; AVX2 takes affine codes at every M (but 4-bit codes at M = 1,
 * which take the subnormal-code path below), e2m1 codes for M < 4 and
 * M > 8, the f32 decode path being faster between): x is coded
 * per group of gs elements in 24 bits (x ~ xsc * c, |c| <= 8355711,
 * xsc = max|x| / 8355711) and the codes' dot products with
 * x's three int8 parts (AVX2's 8-bit codes: its word 256 h + m and its
 * byte l) are exact int32 sums, scaled into f32 per group; a
 * code is off x by at most max|x over its group| / 16711422 (about f32's
 * rounding of it), so results stay within the f32 tolerances below. x is
 * scaled per row and the scales (and biases) per block of 128 groups by
 * powers of two that the block's sums, gathered in f64, undo, so tiny or
 * huge scales and x keep normal f32 products. x with NaN or Inf takes the
 * f32 path. W streams with
 * software prefetch (one row at a time for one x row or 8-bit codes), 128 KB
 * blocks of rows in L2 while blocks of 4 x rows run over them (the f32
 * decode path on AVX2 likewise).
 * Subnormal-code decode path (AVX2, transpose, affine 4-bit, one row of x):
 * a 32-bit lane of the packed row holds 8 codes; masked in place (nibble k
 * of the lane at bits 4k, k <= 4; the upper three after a shift by 12) each
 * is the bit pattern of the f32 subnormal q * 16^k * 2^-149, exact, which an
 * FMA multiplies by x times 2^(E - 4k) (prepared per row, E from max|x|):
 * products q * x * 2^(E - 149), no integer-to-float conversion, x kept in
 * f32 (no coding), sums scaled per block of 128 groups by a power of two
 * (from the block's largest scale) and gathered in f64. The kernel clears
 * the denormals-are-zero and flush-to-zero bits of MXCSR while it runs. x
 * with NaN or Inf goes to the integer decode path's checks (and so to the
 * f32 path).
 * Accumulation is f32; results agree with an f64 dequantize-then-matmul to
 * f32 rounding of the sums (not bit-exact with MLX, whose order differs).
 * This comment and the declarations below are the contract with the op side
 * (qmm.c). */
#ifndef EMLX_CPU_QMM_FAST_H
#define EMLX_CPU_QMM_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "emlx.h"

/* Mode numbers (the public enum of include/emlx/quantize.h uses the same). */
#define EMLX_QMM_AFFINE 0
#define EMLX_QMM_MXFP4 1
#define EMLX_QMM_MXFP8 2
#define EMLX_QMM_NVFP4 3

typedef struct emlx_qmm_desc {
  const float *x;         /* [M][ldx] f32 (the caller converts f16/bf16 x) */
  int64_t ldx;            /* row stride of x in elements (>= K) */
  int64_t M, N, K;        /* out[M][N] = x[M][K] . W */
  const uint32_t *w;      /* packed words, layout above */
  const void *scales;     /* affine: scale_dtype; mx/nv: uint8 codes */
  const void *biases;     /* affine only, scale_dtype; NULL otherwise */
  emlx_dtype scale_dtype; /* EMLX_FLOAT32/FLOAT16/BFLOAT16 (affine), EMLX_UINT8 (mx/nv) */
  int group_size, bits;
  int mode; /* EMLX_QMM_* */
  bool transpose;
  float *out;    /* [M][ldo] f32, fully overwritten */
  int64_t ldo;   /* row stride of out (>= N) */
  bool threaded; /* may use the engine's pool */
} emlx_qmm_desc;

/* M up to this takes the decode paths; above, the prefill path (or, up to
 * EMLX_QMM_INT_MAX_M rows, the integer decode path where it applies). */
#define EMLX_QMM_DECODE_MAX_M 8
#define EMLX_QMM_INT_MAX_M 32

/* true: out written. false: this combination is not handled here (the
 * caller runs its reference kernel); no error is set. M, N, K >= 1. */
bool emlx_cpu_qmm_fast(const emlx_qmm_desc *d);

/* gather_qmm: output matrix i (i < count) = x[lhs[i]] . W[rhs[i]], each a
 * (q.M x q.N) product like the one q describes; q's x, w, scales, biases
 * and out point at matrix / expert / output 0. The rows are grouped by
 * expert inside, so each expert's packed weights stream once per call; no
 * expert weights are copied. */
typedef struct emlx_gqmm_desc {
  emlx_qmm_desc q;
  int64_t count;
  const uint32_t *lhs; /* [count] x matrix of each output, or NULL: i */
  const uint32_t *rhs; /* [count] expert of each output, or NULL: i */
  int64_t x_stride;    /* elements between x matrices */
  int64_t w_stride;    /* words between experts */
  int64_t s_stride;    /* elements between experts' scales (and biases) */
  int64_t o_stride;    /* elements between output matrices */
  int64_t n_x;         /* number of x matrices (bound for lhs) */
  int64_t n_experts;   /* number of experts (bound for rhs) */
  bool sorted;         /* rhs non-decreasing: a hint, never changes results */
} emlx_gqmm_desc;

/* true: every output written; false: not handled (including an index out
 * of range); no error is set. */
bool emlx_cpu_gather_qmm_fast(const emlx_gqmm_desc *d);

/* ---- internals shared by the per-ISA units -------------------------------- */

/* One problem after set-up: row pointers of x and out (gather passes rows
 * of several matrices), the packed matrix, and the prepared x. */
typedef struct emlx_qmm_prob {
  int64_t M, N, K;
  const float *const *xr; /* M rows of x (K each) */
  float *const *orow;     /* M rows of out (N each) */
  const uint32_t *w;
  const void *scales, *biases;
  emlx_dtype sdt;
  int gs, bits, mode;
  bool transpose;
  int64_t rows;      /* packed rows of W: N (transpose) or K */
  int64_t rlen;      /* elements per packed row: K (transpose) or N */
  int64_t row_bytes; /* rlen * bits / 8 */
  int64_t groups;    /* rlen / gs */
  float smul;        /* factor folded into every scale (the unit's code values) */
  int kind;          /* EMLX_QK_*: the unit's in-register decoder, or generic */
  const float *xp;   /* decode path, transpose: M x K, x permuted to the unit's lane order */
  const float *xsum; /* decode path, transpose, affine: M x groups sums of x per group */
  /* integer decode path (kinds EMLX_QK_I*): x per group as 24-bit codes
   * x ~ 2^xe * xsc * (65536 * h + 256 * m + l), h, m, l int8, in the unit's
   * chunk order (see qmm_fast.c, prep_int); xsum then holds, per group,
   * 2^-xe times the sum of x (affine) or the sum of the coded x (e2m1). xe
   * is per x row, 2^(xe - 1) <= its max|x| < 2^xe, so xsc < 2^-23 whatever
   * x's range. */
  const int8_t *xi;
  const float *xsc;
  int64_t xi_row; /* bytes of xi per x row */
  int xe[EMLX_QMM_INT_MAX_M];
  int64_t pf_rows; /* integer decode path: rows ahead to prefetch */
  int64_t xs_row;  /* floats of xsc (and xsum) per x row: groups rounded up to 16, zeros past */
  /* subnormal-code decode path (EMLX_QK_DA4): x times 2^(E - 4 pos) per
   * 32-byte chunk of a packed row (qmm_fast.c, prep_den), xsum the sums of
   * x per group, and xd_e = 149 - E: out = sum * 2^xd_e */
  const float *xd;
  int xd_e;
} emlx_qmm_prob;

/* In-register decoders of the per-ISA units. */
enum {
  EMLX_QK_GENERIC, /* unpack through an f32 row buffer (every format) */
  EMLX_QK_A4,      /* affine 4-bit, nibbles split into even / odd lanes */
  EMLX_QK_F4,      /* e2m1, nibbles split */
  EMLX_QK_A8,      /* affine 8-bit */
  EMLX_QK_F8,      /* e4m3 */
  EMLX_QK_A2,      /* affine 2-bit, four lanes sets */
  /* integer dot products (u8 codes times the int8 parts of 24-bit x codes) */
  EMLX_QK_IA4, /* affine 4-bit: nibble codes */
  EMLX_QK_IF4, /* e2m1: 2 * value + 12, in 0 .. 24 */
  EMLX_QK_IA8, /* affine 8-bit: byte codes */
  EMLX_QK_IAB, /* affine 2, 3, 5, 6-bit: codes unpacked to bytes in natural order */
  EMLX_QK_DA4, /* affine 4-bit, one x row: codes as f32 subnormals (the decode_ti of AVX2) */
};

/* Scales of packed row r, groups [g0, g0 + n), to f32 times p->smul. */
void emlx_qmm_load_scales(const emlx_qmm_prob *p, int64_t r, int64_t g0, int64_t n, float *dst);
/* Biases of packed row r (affine), groups [g0, g0 + n), to f32. */
void emlx_qmm_load_biases(const emlx_qmm_prob *p, int64_t r, int64_t g0, int64_t n, float *dst);
/* Dequantized elements [e0, e1) of packed row r (e0, e1 multiples of 8). */
void emlx_qmm_dequant_row(const emlx_qmm_prob *p, int64_t r, int64_t e0, int64_t e1, float *dst);

/* A per-ISA unit. vl: f32 lanes. pick: the decoder kind for p (or
 * EMLX_QK_GENERIC), setting p->smul. decode_t: decode path, transpose, rows
 * [n0, n1) of W, all M rows (reads p->xp, p->xsum). decode_n: decode path,
 * !transpose, output columns [c0, c1) (whole groups). micro: the prefill
 * micro-kernel: C rows c[0 .. mv), columns [j0, j0 + nv) (nv <= nr) =
 * (first) or += the packed x panel ap [kc][mr] times the panel bp [kc][nr]. */
typedef struct emlx_qmm_isa {
  const char *name;
  int vl, mr, nr;
  int (*pick)(emlx_qmm_prob *p);
  void (*decode_t)(const emlx_qmm_prob *p, int64_t n0, int64_t n1);
  bool (*decode_n)(const emlx_qmm_prob *p, int64_t c0, int64_t c1); /* false: no memory */
  void (*micro)(int64_t kc, const float *ap, const float *bp, float *const *c, int64_t j0, int mv,
                int nv, bool first);
  /* emlx_qmm_dequant_row through the unit's decoder (p->kind, p->smul). */
  void (*dequant)(const emlx_qmm_prob *p, int64_t r, int64_t e0, int64_t e1, float *dst);
  /* Integer decode path (transpose), or NULL. ipick: the EMLX_QK_I* kind for
   * p (setting p->smul), or EMLX_QK_GENERIC; ivb: bytes of its int vectors
   * (the chunk of the prepared x); decode_ti: like decode_t, reading p->xi. */
  int (*ipick)(emlx_qmm_prob *p);
  int ivb;
  void (*decode_ti)(const emlx_qmm_prob *p, int64_t n0, int64_t n1);
  /* Prefill, transpose: a vl x vl block, dst[c * ds + r] = src[r * ss + c],
   * or NULL (the driver transposes element by element). */
  void (*tr)(const float *src, int64_t ss, float *dst, int64_t ds);
  /* The integer decode path's x (qmm_fast.c, prep_int: the same codes and
   * layout, the same false), in vectors, or NULL (the driver's loop). */
  bool (*iprep)(const emlx_qmm_prob *p, int8_t *xi, float *xsc, float *xs, double *inv, int *xe);
} emlx_qmm_isa;

/* The integer decode path codes x per group as c = round(x * EMLX_QI_C /
 * max|x|), 65536 * h + 256 * m + l with h, m, l int8 (qmm_fast.c, prep_int). */
#define EMLX_QI_C 8355711 /* 32639 * 256 + 127 */

/* The integer decode path's scales of one x row of G groups (qmm_fast.c,
 * prep_int; the units' own preps too): sc[g] holds its group's max|x| on
 * entry; on return inv[g] = EMLX_QI_C / max|x| (0 for a zero group), sc[g] =
 * max|x| / EMLX_QI_C * 2^-xe and, affine, su[g] (the sum of x) times 2^-xe.
 * Returns the row's xe (emlx_qmm_prob). */
int emlx_qmm_int_row_scales(float *sc, float *su, double *inv, int64_t G, bool affine);

/* Tests: turns the integer decode path off (false) or back on (true, the
 * default); returns the previous setting. Not thread-safe: call it while
 * no quantized matmul runs. */
bool emlx_cpu_qmm_fast_int_dot(bool on);

extern const emlx_qmm_isa emlx_qmm_isa_scalar, emlx_qmm_isa_avx2, emlx_qmm_isa_avx512;

#endif
