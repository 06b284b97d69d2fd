/* math_cr_scalar.h — math_cr_body.h's lane layer for the scalar (baseline
 * x86-64) units: one double a "vector", no FMA (cr_fma is a multiply and an
 * add, which the body's error bounds allow). Included by math_scalar.c and
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
static inline crv cr_fnma(crv a, crv b, crv c) { return c - a * b; }
/* c < x ? c : x and c > x ? c : x: a NaN x comes out as itself. */
static inline crv cr_min(crv c, crv x) { return c < x ? c : x; }
static inline crv cr_max(crv c, crv x) { return c > x ? c : x; }
static inline crv cr_abs(crv a) { return cr_of_bits(cr_bits(a) & ~(UINT64_C(1) << 63)); }
/* 2^(k/64) from t = k + MCR_MAGIC: tab[k & 63] (tab[j] = 2^(j/64)) with
 * k >> 6 added to its exponent. */
static inline crv cr_exp2_table(const double *tab, crv t) {
  uint64_t u = cr_bits(t);
  return cr_of_bits(cr_bits(tab[u & 63u]) + (u >> 6 << 52));
}
/* y where t has bit b set, else x. */
static inline crv cr_sel_bit(crv t, int b, crv x, crv y) { return cr_bits(t) >> b & 1u ? y : x; }
/* y negated where t has bit b set. */
static inline crv cr_neg_bit(crv t, int b, crv y) {
  return cr_of_bits(cr_bits(y) ^ (cr_bits(t) >> b & 1u) << 63);
}
/* 1 where !(a < lim) (NaN included). */
static inline unsigned cr_not_below(crv a, double lim) { return !(a < lim); }
static inline crv cr_load(const float *p) { return (double)*p; }
static inline void cr_store(float *p, crv y) { *p = (float)y; }
/* 1 where lo < a < hi. */
static inline unsigned cr_between(crv a, double lo, double hi) { return lo < a && a < hi; }
/* 1 where y's low 29 bits lie within band of 1 << 28. */
static inline unsigned cr_near_half(crv y, int64_t band) {
  uint64_t u = (cr_bits(y) - (uint64_t)((1 << 28) - band)) & ((1u << 29) - 1u);
  return u < (uint64_t)(2 * band);
}

#include "math_cr_body.h"

#endif
