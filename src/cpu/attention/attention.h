/* attention.h — private to the attention kernels: one attention problem
 * described by pointers and element strides (so views, either layout of the
 * KV cache and the caches being written are all read in place), the unit of
 * work a thread runs, and the per-ISA table of the tile loop
 * (attention_body.h).
 *
 * A unit is one KV head h of one batch b, a range of the G = N_q / N_kv
 * query heads that share it, a range of query rows and a range of keys. Its
 * R = heads x rows query vectors are packed (scaled, f32) and meet each K/V
 * tile once; the unit's state per query row is the online softmax triple
 * (m: running max, l: running sum, acc: running sum of weights x V). */
#ifndef EMLX_CPU_ATTENTION_H
#define EMLX_CPU_ATTENTION_H

#include <stdint.h>

#include "emlx.h"
#include "params_attention.h"

/* Rows (query vectors) of a unit and keys of a tile at most. */
#define EMLX_ATT_RMAX 64
#define EMLX_ATT_BK 64

typedef struct emlx_att_problem {
  emlx_dtype dtype; /* of q, k, v and o */
  int64_t B, Nq, Nkv, G, Tq, Tkv, D, Dv;
  int64_t Dp, Dvp; /* D, D_v rounded up to 16 (the padded f32 row length) */
  float scale;
  int causal;
  int64_t causal_off; /* query i sees keys j <= i + causal_off */
  /* element pointers and strides (elements) over (b, n, t, d) */
  const char *q, *k, *v;
  int64_t qs[4], ks[4], vs[4];
  char *o;
  int64_t os[4];
  /* mask over (b, n, i, j): bool (u8) or additive f32; NULL: none */
  int mask_kind;
  const char *mask;
  int64_t ms[4];
  const uint8_t *key_mask; /* (b, j), strides kms; NULL: none */
  int64_t kms[2];
  const float *sinks; /* (n) stride sks; NULL: none */
  int64_t sks;
  int boolean_masking; /* some rule scores hidden keys as -FLT_MAX */
} emlx_att_problem;

typedef struct emlx_att_unit {
  int64_t b, h, g0, g1, i0, i1, j0, j1;
  int init_sinks; /* start each row's state from its head's sink */
} emlx_att_unit;

typedef struct emlx_att_table {
  /* Runs unit u: m, l (R each) and acc (R x Dvp) receive the unit's state,
   * rows ordered head-major (r = (g - g0) * (i1 - i0) + (i - i0)). Scratch
   * comes from emlx__scratch_get. 0, or -1 with an error. */
  int (*unit)(const emlx_att_problem *p, const emlx_att_unit *u, float *m, float *l, float *acc);
} emlx_att_table;

extern const emlx_att_table emlx_att_scalar, emlx_att_avx2, emlx_att_avx512;

/* The sizes, scale and masking rules of a problem (attention.c); the caller
 * then sets the pointers and strides. */
void emlx__att_problem_init(emlx_att_problem *p, const emlx_attention_params *prm, emlx_dtype dt,
                            int64_t B, int64_t Nq, int64_t Nkv, int64_t Tq, int64_t Tkv, int64_t D,
                            int64_t Dv);
/* Runs a problem on the pool (attention.c). 0, or -1 with an error. */
int emlx__att_run(const emlx_att_problem *p);

#endif
