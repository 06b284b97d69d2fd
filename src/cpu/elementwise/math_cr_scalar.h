/* math_cr_scalar.h — math_cr_body.h's lane layer for the scalar (baseline
 * x86-64) units: one double a "vector", no FMA (cr_fma is a multiply and an
 * add, which the body's error bound allows). Included by math_scalar.c and
 * ew_scalar.c. */
#ifndef EMLX_MATH_CR_SCALAR_H
#define EMLX_MATH_CR_SCALAR_H

#include <stdint.h>
#include <string.h>

typedef double crv;
#define CR_N 1

static inline uint64_t cr_bits(crv a) {
  uint64_t u;
  memcpy(&u, &a, sizeof u);
  return u;
}
static inline crv cr_of_bits(uint64_t u) {
  crv a;
  memcpy(&a, &u, sizeof a);
  return a;
}
static inline crv cr_set(double v) { return v; }
static inline crv cr_add(crv a, crv b) { return a + b; }
static inline crv cr_sub(crv a, crv b) { return a - b; }
static inline crv cr_mul(crv a, crv b) { return a * b; }
static inline crv cr_fma(crv a, crv b, crv c) { return a * b + c; }
/* c < x ? c : x and c > x ? c : x: a NaN x comes out as itself. */
static inline crv cr_min(crv c, crv x) { return c < x ? c : x; }
static inline crv cr_max(crv c, crv x) { return c > x ? c : x; }
static inline crv cr_abs(crv a) { return cr_of_bits(cr_bits(a) & ~(UINT64_C(1) << 63)); }
/* 2^k from t = k + MCR_MAGIC (k in t's low mantissa bits). */
static inline crv cr_pow2i(crv t) { return cr_of_bits((cr_bits(t) + 1023u) << 52); }
/* y where t has bit b set, else x. */
static inline crv cr_sel_bit(crv t, int b, crv x, crv y) { return cr_bits(t) >> b & 1u ? y : x; }
/* y negated where t has bit b set. */
static inline crv cr_neg_bit(crv t, int b, crv y) {
  return cr_of_bits(cr_bits(y) ^ (cr_bits(t) >> b & 1u) << 63);
}
/* s with the sign bit of r or'ed in. */
static inline crv cr_sign_of(crv s, crv r) {
  return cr_of_bits(cr_bits(s) | (cr_bits(r) & UINT64_C(1) << 63));
}
/* 1 where !(a < lim) (NaN included). */
static inline unsigned cr_not_below(crv a, double lim) { return !(a < lim); }
static inline crv cr_load(const float *p) { return (double)*p; }
static inline void cr_store(float *p, crv y) { *p = (float)y; }
/* 1 where y (1 - g) and y (1 + g) round to different f32. */
static inline unsigned cr_hard(crv y, double g) {
  float lo = (float)(y - y * g), hi = (float)(y + y * g);
  uint32_t a, b;
  memcpy(&a, &lo, sizeof a);
  memcpy(&b, &hi, sizeof b);
  return a != b;
}

#include "math_cr_body.h"

#endif
