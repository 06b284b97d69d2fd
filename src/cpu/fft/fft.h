/* fft.h — private to the FFT kernels: plans (fft_plan.c), the per-ISA inner
 * machinery (fft_body.h compiled by fft_{scalar,avx2,avx512}.c)
 * and the drivers (fft.c; fft_c128.c for complex128).
 *
 * Every transform is a forward one (exponent -2 pi i jk/n); the inverse is
 * conj(fft(conj(x))) / n, the conjugations folded into the copies in and out.
 *
 * Lane layout. The inner transforms run on W sequences at once ("lanes",
 * W = 16 for AVX-512, 8 for AVX2, 4 otherwise), stored split by element:
 * element j of the W sequences is 2W floats at buf + 2W*j, the W real
 * parts then the W imaginary parts. Every butterfly is then plain vector
 * arithmetic with the twiddle broadcast, for any radix and any length, and a
 * batch of rows, a block of W adjacent columns, or the columns of a
 * four-step decomposition fill the lanes.
 *
 * Plans (cached per length, see fft_plan.c):
 *  - DIRECT: Stockham autosort, mixed radix (8, 4, 2, 3, 5, 7 and a generic
 *    odd radix up to EMLX_FFT_MAX_RADIX), twiddles rounded from f64;
 *  - LANE_BLUESTEIN: chirp-z for lengths with a large prime factor, through
 *    a DIRECT plan of a 7-smooth length m >= 2n - 1;
 *  - FOURSTEP: one long row as an n1 x n2 matrix: n2 column transforms of
 *    length n1 (W columns per lane tile), twiddles, n1 row transforms of
 *    length n2 written transposed;
 *  - ROW_BLUESTEIN: chirp-z for one long row through a FOURSTEP plan of m.
 * The first two are lane plans (any batch), the last two row plans (one
 * long row at a time, parallel inside). */
#ifndef EMLX_CPU_FFT_H
#define EMLX_CPU_FFT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define EMLX_FFT_MAX_LANES 16
#define EMLX_FFT_MAX_STAGES 64
#define EMLX_FFT_MAX_RADIX 31 /* largest odd prime done as one butterfly */

enum {
  EMLX_FFT_DIRECT,
  EMLX_FFT_LANE_BLUESTEIN,
  EMLX_FFT_FOURSTEP,
  EMLX_FFT_ROW_BLUESTEIN,
};

/* One Stockham pass: input element (i, q, k) at i + ido*(q + p*k), output
 * (i, k, m) at i + ido*(k + l1*m), for i < ido, q, m < p, k < l1. */
typedef struct emlx_fft_stage {
  int64_t p, l1, ido;
  const float *tw;  /* (p-1)*ido complex: w_n^(m*i*l1) at (m-1)*ido + i */
  const float *rot; /* odd p: h*h (cos, sin) of 2 pi q m / p at (q-1)*h + m-1, h = (p-1)/2 */
} emlx_fft_stage;

typedef struct emlx_fft_plan emlx_fft_plan;
struct emlx_fft_plan {
  int64_t n;
  int kind;    /* EMLX_FFT_* */
  int64_t cap; /* lane plans: elements each of the two work buffers needs */
  /* DIRECT */
  int nstages;
  emlx_fft_stage stage[EMLX_FFT_MAX_STAGES];
  /* LANE_BLUESTEIN, ROW_BLUESTEIN: w[k] = exp(-i pi k^2 / n), k < n, and
   * bk = fft_m(b) / m with b[j] = b[m-j] = conj(w[j]); sub is the plan of m. */
  int64_t m;
  const float *chirp;
  const float *bk;
  emlx_fft_plan *sub;
  /* FOURSTEP: n = n1 * n2; p1, p2 are lane plans of n1 and n2. tw_lane holds
   * w_n^(k1*l) for l < 16 (16 real parts then 16 imaginary parts per k1),
   * tw_blk block t (n1 complex) holds w_n^(k1*16*t): the twiddle of column
   * c = 16t + l is their product. */
  int64_t n1, n2;
  emlx_fft_plan *p1, *p2;
  const float *tw_lane;
  const float *tw_blk;
  float *mem;   /* owns the tables above */
  size_t bytes; /* footprint with sub-plans, for the cache's bound */
  _Atomic long refs;
};

/* A plan of length n >= 1 (row: a row plan, which needs n >= 2 and is
 * meant for long rows), shared and reference counted: release it with
 * emlx__fft_plan_put. NULL with an error when memory runs out. */
emlx_fft_plan *emlx__fft_plan_get(int64_t n, int row);
void emlx__fft_plan_put(emlx_fft_plan *p);
/* Drops every cached plan not in use (tests, memory pressure). */
void emlx__fft_plan_cache_clear(void);

/* ---- per-ISA machinery ----------------------------------------------------- */
typedef struct emlx_cpu_fft_table {
  int lanes; /* W */
  /* Transforms the W sequences held in a (a lane plan: both buffers hold
   * plan->cap elements, 64-byte aligned); returns the buffer holding the
   * result, a or b. */
  float *(*lane_exec)(const emlx_fft_plan *p, float *a, float *b);
  /* Lanes adjacent in memory: element j of lane l is the complex at
   * x + 2*(j*sx + l) (floats), j < len; elements len..n-1 are zero.
   * conj: negate the imaginary parts. */
  void (*gather_cols)(const float *x, int64_t sx, int64_t len, int64_t n, float *buf, int conj);
  /* y + 2*(j*sy + l) = scale * buf element j, lane l (conjugated if conj). */
  void (*scatter_cols)(const float *buf, int64_t n, float *y, int64_t sy, float scale, int conj);
  /* Lane l < nl starts at src[l], elements sx complex apart, len[l] of
   * them (the rest up to n zero); lanes nl..W-1 are zero. */
  void (*gather_lanes)(const float *const *src, const int64_t *len, int nl, int64_t sx, int64_t n,
                       float *buf, int conj);
  void (*scatter_lanes)(const float *buf, int nl, int64_t n, float *const *dst, int64_t sy,
                        float scale, int conj);
  /* Four-step, first step: element k1 < n1, lane l of in, times
   * tw_lane[k1][l + lane0] * tw_blk[k1] (see the plan), into out. */
  void (*twiddle_cols)(const float *in, float *out, int64_t n1, const float *tw_lane, int lane0,
                       const float *tw_blk);
  /* Four-step, second step: the column tiles left by the first step (tile t
   * of W columns at Y + t*n1*2W, lane layout) give rows r0..r0+W-1 as the
   * lanes of buf (n2 elements). Reads W rows of every tile (Y needs W
   * elements of slack after its last tile). */
  void (*gather_tiles)(const float *Y, int64_t n1, int64_t n2, int64_t r0, float *buf);
  /* Interleaved complex rows: y[j*sy] = scale * x'[j*sx] * w[j], j < n, where
   * x' is x or conj(x) (conj_x) and the product is conjugated when
   * conj_out. y may be x. */
  void (*cmul)(const float *x, int64_t sx, const float *w, float *y, int64_t sy, int64_t n,
               int conj_x, int conj_out, float scale);
} emlx_cpu_fft_table;

extern const emlx_cpu_fft_table emlx_cpu_fft_scalar, emlx_cpu_fft_avx2, emlx_cpu_fft_avx512;
const emlx_cpu_fft_table *emlx__fft_table(void);

/* Element offset in x of the line along axis at (outer o, inner i): o
 * indexes the axes before it, i those after it, both row-major (fft.c;
 * the complex128 driver, fft_c128.c, walks its lines with it too). */
struct emlx_array;
int64_t emlx__fft_line_offset(const struct emlx_array *x, int axis, int64_t o, int64_t i);

#endif
