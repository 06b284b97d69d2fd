/* att_ref.h — what the attention tests share: golden_value (the inputs of
 * gen_golden.py, exact in every float dtype), a naive f64 attention written
 * from the formula (softmax(scale * q k^T + mask) v per row, with the
 * documented rules for sinks and fully masked rows), and a tolerance check. */
#ifndef ATT_REF_H
#define ATT_REF_H

#include "test_util.h"

/* n values ((h >> 56) - 128) / 64, h a 64-bit mix of i and seed. */
static inline void golden_value(uint64_t seed, int64_t n, double *out) {
  for (int64_t i = 0; i < n; i++) {
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ULL + seed;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 29;
    out[i] = (double)((int64_t)(x >> 56) - 128) / 64.0;
  }
}

typedef struct ref_problem {
  int64_t B, Nq, Nkv, Tq, Tkv, D, Dv;
  double scale;
  int causal;
  const double *q, *k, *v; /* row-major {B, N, T, D} */
  int mask_kind;           /* 0 none, 1 bool, 2 additive */
  const double *mask;      /* full {B, Nq, Tq, Tkv}; bool as 0 / 1 */
  const double *key_mask;  /* {B, Tkv}, 0 = hidden */
  const double *sinks;     /* {Nq} */
} ref_problem;

/* out: {B, Nq, Tq, Dv}. A key is visible unless a boolean rule (causal,
 * bool mask, key mask) hides it. No visible key with a finite score and no
 * sink: the mean of V when some boolean rule is in play, else 0. */
static inline void ref_sdpa(const ref_problem *p, double *out) {
  int64_t G = p->Nq / p->Nkv;
  bool boolean = p->causal || p->mask_kind == 1 || p->key_mask;
  double *s = malloc((size_t)(p->Tkv > 0 ? p->Tkv : 1) * sizeof(double));
  bool *vis = malloc((size_t)(p->Tkv > 0 ? p->Tkv : 1));
  for (int64_t b = 0; b < p->B; b++)
    for (int64_t n = 0; n < p->Nq; n++)
      for (int64_t i = 0; i < p->Tq; i++) {
        int64_t h = n / G;
        const double *qr = p->q + ((b * p->Nq + n) * p->Tq + i) * p->D;
        double M = p->sinks ? p->sinks[n] : -HUGE_VAL;
        for (int64_t j = 0; j < p->Tkv; j++) {
          const double *kr = p->k + ((b * p->Nkv + h) * p->Tkv + j) * p->D;
          double dot = 0;
          for (int64_t d = 0; d < p->D; d++)
            dot += qr[d] * kr[d];
          s[j] = p->scale * dot;
          vis[j] = true;
          int64_t mi = ((b * p->Nq + n) * p->Tq + i) * p->Tkv + j;
          if (p->causal && j > i + p->Tkv - p->Tq)
            vis[j] = false;
          if (p->mask_kind == 1 && p->mask[mi] == 0)
            vis[j] = false;
          if (p->mask_kind == 2)
            s[j] += p->mask[mi];
          if (p->key_mask && p->key_mask[b * p->Tkv + j] == 0)
            vis[j] = false;
          if (vis[j] && s[j] > M)
            M = s[j];
        }
        double *o = out + ((b * p->Nq + n) * p->Tq + i) * p->Dv;
        for (int64_t d = 0; d < p->Dv; d++)
          o[d] = 0;
        if (M == -HUGE_VAL) {
          if (boolean && p->Tkv > 0)
            for (int64_t j = 0; j < p->Tkv; j++)
              for (int64_t d = 0; d < p->Dv; d++)
                o[d] += p->v[((b * p->Nkv + h) * p->Tkv + j) * p->Dv + d] / (double)p->Tkv;
          continue;
        }
        double den = p->sinks ? exp(p->sinks[n] - M) : 0;
        for (int64_t j = 0; j < p->Tkv; j++) {
          if (!vis[j])
            continue;
          double w = exp(s[j] - M);
          den += w;
          for (int64_t d = 0; d < p->Dv; d++)
            o[d] += w * p->v[((b * p->Nkv + h) * p->Tkv + j) * p->Dv + d];
        }
        for (int64_t d = 0; d < p->Dv; d++)
          o[d] /= den;
      }
  free(s);
  free(vis);
}

/* Tolerances of an attention output per dtype: inputs are exact, the kernel
 * accumulates in f32 and rounds the result once. */
static inline double att_tol(emlx_dtype d) {
  return d == EMLX_FLOAT32 ? 2e-5 : d == EMLX_FLOAT16 ? 2e-3 : 1.6e-2;
}

/* |got - ref| <= tol * (1 + |ref|) everywhere, and every value finite. */
#define att_check(got, ref, n, d, what) att_check_at(got, ref, n, d, what, __FILE__, __LINE__)
static inline bool att_check_at(const double *got, const double *ref, int64_t n, emlx_dtype d,
                                const char *what, const char *file, int line) {
  if (!got)
    return tu_record(false, file, line, "%s: no output", what);
  double tol = att_tol(d), worst = 0;
  int64_t at = -1;
  for (int64_t i = 0; i < n; i++) {
    double e = fabs(got[i] - ref[i]) / (1 + fabs(ref[i]));
    if (!isfinite(got[i]) || !(e <= worst)) {
      if (!isfinite(got[i]) || e > worst) {
        worst = isfinite(got[i]) ? e : HUGE_VAL;
        at = i;
      }
    }
  }
  return tu_record(worst <= tol, file, line, "%s (%s): worst error %.3g at %lld (got %.8g, want %.8g), tol %.3g",
                   what, tu_dname(d), worst, (long long)at, at >= 0 ? got[at] : 0.0,
                   at >= 0 ? ref[at] : 0.0, tol);
}

#endif
