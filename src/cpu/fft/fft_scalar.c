/* fft_scalar.c — the FFT machinery (fft_body.h) for the baseline level:
 * 4 lanes in a generic vector (GCC/Clang vector extension; SSE2 on x86-64,
 * NEON on aarch64), no FMA. See fft.h. */
#include <string.h>

#define FV_W 4
typedef float fv __attribute__((vector_size(16)));

static inline fv fv_ld(const float *p) {
  fv v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline fv fv_ldu(const float *p) { return fv_ld(p); }
static inline void fv_st(float *p, fv v) { memcpy(p, &v, sizeof v); }
static inline fv fv_set1(float x) { return (fv){x, x, x, x}; }
static inline fv fv_zero(void) { return (fv){0.0f, 0.0f, 0.0f, 0.0f}; }
static inline fv fv_add(fv a, fv b) { return a + b; }
static inline fv fv_sub(fv a, fv b) { return a - b; }
static inline fv fv_mul(fv a, fv b) { return a * b; }
static inline fv fv_neg(fv a) { return -a; }
static inline fv fv_fmadd(fv a, fv b, fv c) { return a * b + c; }
static inline fv fv_fmsub(fv a, fv b, fv c) { return a * b - c; }
static inline void fv_ld_cplx(const float *p, fv *re, fv *im) {
  *re = (fv){p[0], p[2], p[4], p[6]};
  *im = (fv){p[1], p[3], p[5], p[7]};
}
static inline void fv_st_cplx(float *p, fv re, fv im) {
  for (int l = 0; l < FV_W; l++) {
    p[2 * l] = re[l];
    p[2 * l + 1] = im[l];
  }
}

/* m[r][c] -> m[c][r] for the FV_W x FV_W block. */
static inline void fv_transpose(fv *m) {
  for (int r = 0; r < FV_W; r++)
    for (int c = r + 1; c < FV_W; c++) {
      float t = m[r][c];
      m[r][c] = m[c][r];
      m[c][r] = t;
    }
}

#define FFT_SUFFIX scalar
#include "fft_body.h"
