/* attention.c — the SDPA kernel and the driver it shares with the KV-cache
 * kernel (kv_cache.c): cut the problem into units (attention.h), run them on
 * the pool through the per-ISA tile loop, and finalise each query row.
 *
 * Units: a KV head of a batch, up to EMLX_ATT_RMAX query vectors of the heads
 * that share it (all G heads x a block of rows when G is small, so K/V tiles
 * are read once per block), and a key range. When that leaves too few units
 * for the pool (decode: T_q = 1 gives B x N_kv units), the key length is
 * split into chunks of whole tiles; each chunk's (m, l, acc) goes to a
 * buffer and the chunks of a unit are merged: m = max m_c,
 * l = sum l_c e^(m_c - m), acc = sum acc_c e^(m_c - m). Causal units are
 * handed out longest first. */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "convert.h"
#include "cpu.h"
#include "kernels.h"
#include "params_attention.h"

static const emlx_att_table *att_table(void) {
  const char *name = emlx_cpu_isa_get()->name;
  if (!strcmp(name, "avx512"))
    return &emlx_att_avx512;
  if (!strcmp(name, "avx2"))
    return &emlx_att_avx2;
  return &emlx_att_scalar;
}

static float att_load(const char *p, emlx_dtype dt) {
  if (dt == EMLX_FLOAT32) {
    float x;
    memcpy(&x, p, sizeof x);
    return x;
  }
  uint16_t h;
  memcpy(&h, p, sizeof h);
  return dt == EMLX_BFLOAT16 ? emlx_cv_bf16_to_f32(h) : emlx_cv_f16_to_f32(h);
}

static void att_store(char *p, emlx_dtype dt, float x) {
  if (dt == EMLX_FLOAT32) {
    memcpy(p, &x, sizeof x);
    return;
  }
  uint16_t h = dt == EMLX_BFLOAT16 ? emlx_cv_f32_to_bf16(x) : emlx_cv_f32_to_f16(x);
  memcpy(p, &h, sizeof h);
}

typedef struct att_plan {
  const emlx_att_problem *p;
  const emlx_att_table *t;
  int64_t gsub, nq, ngs, nqb, nunits, nsplit, chunk;
  int64_t rmax;
  float *partial; /* nunits x nsplit x (2 * rmax + rmax * Dvp) when nsplit > 1 */
  atomic_int failed;
} att_plan;

static void att_unit_of(const att_plan *pl, int64_t u0, int64_t s, emlx_att_unit *u) {
  const emlx_att_problem *p = pl->p;
  int64_t qb = pl->nqb - 1 - u0 % pl->nqb; /* longest causal blocks first */
  int64_t rest = u0 / pl->nqb;
  int64_t gs = rest % pl->ngs;
  rest /= pl->ngs;
  u->h = rest % p->Nkv;
  u->b = rest / p->Nkv;
  u->g0 = gs * pl->gsub;
  u->g1 = u->g0 + pl->gsub < p->G ? u->g0 + pl->gsub : p->G;
  u->i0 = qb * pl->nq;
  u->i1 = u->i0 + pl->nq < p->Tq ? u->i0 + pl->nq : p->Tq;
  u->j0 = s * pl->chunk;
  u->j1 = u->j0 + pl->chunk < p->Tkv ? u->j0 + pl->chunk : p->Tkv;
  u->init_sinks = s == 0;
}

/* Writes row (b, n, i) of the output from its final state. */
static void att_finish_row(const emlx_att_problem *p, int64_t b, int64_t h, int64_t n, int64_t i,
                           float l, const float *acc, float *tmp) {
  size_t es = emlx_dtype_size(p->dtype);
  char *o = p->o + (size_t)(b * p->os[0] + n * p->os[1] + i * p->os[2]) * es;
  if (l > 0.0f) {
    float inv = 1.0f / l;
    if (p->os[3] == 1) { /* contiguous rows: one loop per dtype, no per-element dispatch */
      if (p->dtype == EMLX_FLOAT32) {
        float *of = (float *)(void *)o;
        for (int64_t d = 0; d < p->Dv; d++)
          of[d] = acc[d] * inv;
      } else {
        uint16_t *oh = (uint16_t *)(void *)o;
        if (p->dtype == EMLX_BFLOAT16)
          for (int64_t d = 0; d < p->Dv; d++)
            oh[d] = emlx_cv_f32_to_bf16(acc[d] * inv);
        else
          for (int64_t d = 0; d < p->Dv; d++)
            oh[d] = emlx_cv_f32_to_f16(acc[d] * inv);
      }
      return;
    }
    for (int64_t d = 0; d < p->Dv; d++)
      att_store(o + (size_t)(d * p->os[3]) * es, p->dtype, acc[d] * inv);
    return;
  }
  /* No key visible: MLX's answer for keys hidden by boolean rules (they all
   * score -FLT_MAX, so softmax is uniform): the mean of V; else zeros. */
  for (int64_t d = 0; d < p->Dv; d++)
    tmp[d] = 0.0f;
  if (p->boolean_masking && p->Tkv > 0) {
    const char *vb = p->v + (size_t)(b * p->vs[0] + h * p->vs[1]) * es;
    for (int64_t j = 0; j < p->Tkv; j++)
      for (int64_t d = 0; d < p->Dv; d++)
        tmp[d] += att_load(vb + (size_t)(j * p->vs[2] + d * p->vs[3]) * es, p->dtype);
    for (int64_t d = 0; d < p->Dv; d++)
      tmp[d] /= (float)p->Tkv;
  }
  for (int64_t d = 0; d < p->Dv; d++)
    att_store(o + (size_t)(d * p->os[3]) * es, p->dtype, tmp[d]);
}

static void att_finish_unit(const att_plan *pl, const emlx_att_unit *u, const float *l,
                            const float *acc, float *tmp) {
  const emlx_att_problem *p = pl->p;
  int64_t nq = u->i1 - u->i0;
  for (int64_t g = u->g0; g < u->g1; g++)
    for (int64_t i = u->i0; i < u->i1; i++) {
      int64_t r = (g - u->g0) * nq + (i - u->i0);
      att_finish_row(p, u->b, u->h, u->h * p->G + g, i, l[r], acc + r * p->Dvp, tmp);
    }
}

static size_t att_state_floats(const att_plan *pl) {
  return (size_t)(2 * pl->rmax + pl->rmax * pl->p->Dvp);
}

static void att_task(void *ctx, int64_t begin, int64_t end) {
  att_plan *pl = ctx;
  const emlx_att_problem *p = pl->p;
  size_t nst = att_state_floats(pl);
  float *own = NULL;
  if (pl->nsplit == 1) {
    own = emlx__scratch_get((nst + (size_t)p->Dvp) * sizeof(float));
    if (!own) {
      atomic_store(&pl->failed, 1);
      return;
    }
  }
  for (int64_t t = begin; t < end; t++) {
    int64_t u0 = t / pl->nsplit, s = t % pl->nsplit;
    emlx_att_unit u;
    att_unit_of(pl, u0, s, &u);
    float *st = own ? own : pl->partial + (size_t)t * nst;
    float *m = st, *l = m + pl->rmax, *acc = l + pl->rmax;
    if (pl->t->unit(p, &u, m, l, acc) != 0) {
      atomic_store(&pl->failed, 1);
      break;
    }
    if (own)
      att_finish_unit(pl, &u, l, acc, acc + pl->rmax * p->Dvp);
  }
  emlx__scratch_put(own);
}

/* Merges the chunks of units [begin, end) and finalises them. */
static void att_merge_task(void *ctx, int64_t begin, int64_t end) {
  att_plan *pl = ctx;
  const emlx_att_problem *p = pl->p;
  size_t nst = att_state_floats(pl);
  float *tmp = emlx__scratch_get((nst + (size_t)p->Dvp) * sizeof(float));
  if (!tmp) {
    atomic_store(&pl->failed, 1);
    return;
  }
  for (int64_t u0 = begin; u0 < end; u0++) {
    emlx_att_unit u;
    att_unit_of(pl, u0, 0, &u);
    int64_t R = (u.g1 - u.g0) * (u.i1 - u.i0);
    float *L = tmp, *A = tmp + pl->rmax;
    memset(A, 0, (size_t)(R * p->Dvp) * sizeof(float));
    for (int64_t r = 0; r < R; r++) {
      float M = -INFINITY;
      for (int64_t s = 0; s < pl->nsplit; s++) {
        const float *st = pl->partial + (size_t)(u0 * pl->nsplit + s) * nst;
        M = st[r] > M ? st[r] : M;
      }
      L[r] = 0.0f;
      if (!(M > -FLT_MAX))
        continue;
      float *ar = A + r * p->Dvp;
      for (int64_t s = 0; s < pl->nsplit; s++) {
        const float *st = pl->partial + (size_t)(u0 * pl->nsplit + s) * nst;
        if (!(st[r] > -FLT_MAX))
          continue;
        float w = expf(st[r] - M);
        L[r] += st[pl->rmax + r] * w;
        const float *sa = st + 2 * pl->rmax + r * p->Dvp;
        for (int64_t d = 0; d < p->Dv; d++)
          ar[d] += sa[d] * w;
      }
    }
    att_finish_unit(pl, &u, L, A, A + pl->rmax * p->Dvp);
  }
  emlx__scratch_put(tmp);
}

int emlx__att_run(const emlx_att_problem *p) {
  if (p->B == 0 || p->Nq == 0 || p->Tq == 0 || p->Dv == 0)
    return 0;
  att_plan pl = {.p = p, .t = att_table()};
  atomic_init(&pl.failed, 0);
  if (p->G >= EMLX_ATT_RMAX) {
    pl.gsub = EMLX_ATT_RMAX;
    pl.nq = 1;
  } else {
    pl.gsub = p->G;
    pl.nq = EMLX_ATT_RMAX / p->G;
  }
  if (pl.nq > p->Tq)
    pl.nq = p->Tq;
  pl.rmax = pl.gsub * pl.nq;
  pl.ngs = (p->G + pl.gsub - 1) / pl.gsub;
  pl.nqb = (p->Tq + pl.nq - 1) / pl.nq;
  pl.nunits = p->B * p->Nkv * pl.ngs * pl.nqb;
  /* Split the keys when the units cannot keep every thread busy. */
  int64_t nt = emlx_num_threads(), want = 4 * nt;
  pl.nsplit = 1;
  pl.chunk = p->Tkv > 0 ? p->Tkv : 1;
  if (pl.nunits < want && p->Tkv > 4 * EMLX_ATT_BK) {
    int64_t s = (want + pl.nunits - 1) / pl.nunits;
    int64_t chunk = (p->Tkv + s - 1) / s;
    if (chunk < 4 * EMLX_ATT_BK)
      chunk = 4 * EMLX_ATT_BK;
    chunk = (chunk + EMLX_ATT_BK - 1) / EMLX_ATT_BK * EMLX_ATT_BK;
    pl.chunk = chunk;
    pl.nsplit = (p->Tkv + chunk - 1) / chunk;
  }
  if (pl.nsplit > 1) {
    pl.partial = malloc((size_t)(pl.nunits * pl.nsplit) * att_state_floats(&pl) * sizeof(float));
    if (!pl.partial)
      return EMLX_FAIL("fast_sdpa: out of memory");
  }
  emlx__parallel_for(pl.nunits * pl.nsplit, 1, att_task, &pl);
  if (!atomic_load(&pl.failed) && pl.nsplit > 1)
    emlx__parallel_for(pl.nunits, 1, att_merge_task, &pl);
  free(pl.partial);
  if (atomic_load(&pl.failed))
    return EMLX_FAIL("fast_sdpa: out of memory for the attention scratch");
  return 0;
}

static int64_t round16(int64_t x) { return (x + 15) / 16 * 16; }

void emlx__att_problem_init(emlx_att_problem *p, const emlx_attention_params *prm, emlx_dtype dt,
                            int64_t B, int64_t Nq, int64_t Nkv, int64_t Tq, int64_t Tkv, int64_t D,
                            int64_t Dv) {
  memset(p, 0, sizeof *p);
  p->dtype = dt;
  p->B = B;
  p->Nq = Nq;
  p->Nkv = Nkv;
  p->G = Nkv > 0 ? Nq / Nkv : 1;
  p->Tq = Tq;
  p->Tkv = Tkv;
  p->D = D;
  p->Dv = Dv;
  p->Dp = round16(D);
  p->Dvp = round16(Dv);
  p->scale = prm->scale;
  p->causal = prm->causal;
  p->causal_off = Tkv - Tq;
  p->boolean_masking = prm->causal || prm->mask_kind == EMLX_ATT_MASK_BOOL || prm->has_key_mask;
}

static void strides4(const emlx_array *a, const int *order, int64_t *s) {
  for (int i = 0; i < 4; i++)
    s[i] = a->strides[order[i]];
}

int emlx_cpu_sdpa(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_attention_params *prm = emlx__params(node);
  const emlx_array *q = in[0], *k = in[1], *v = in[2];
  emlx_array *o = out[0];
  if (!o)
    return 0;
  if (emlx__array_alloc_data(o) != 0)
    return -1;
  emlx_att_problem p;
  emlx__att_problem_init(&p, prm, q->dtype, q->shape[0], q->shape[1], k->shape[1], q->shape[2],
                         k->shape[2], q->shape[3], v->shape[3]);
  static const int bnhd[4] = {0, 1, 2, 3};
  p.q = emlx__data(q);
  p.k = emlx__data(k);
  p.v = emlx__data(v);
  p.o = emlx__data(o);
  strides4(q, bnhd, p.qs);
  strides4(k, bnhd, p.ks);
  strides4(v, bnhd, p.vs);
  strides4(o, bnhd, p.os);
  int next = 3;
  if (prm->mask_kind != EMLX_ATT_MASK_NONE) {
    const emlx_array *mk = in[next++];
    p.mask_kind = prm->mask_kind;
    p.mask = emlx__data(mk);
    strides4(mk, bnhd, p.ms);
  }
  if (prm->has_key_mask) {
    const emlx_array *km = in[next++];
    p.key_mask = emlx__data(km);
    p.kms[0] = km->strides[0];
    p.kms[1] = km->strides[1];
  }
  if (prm->has_sinks) {
    const emlx_array *sk = in[next++];
    p.sinks = emlx__data(sk);
    p.sks = sk->strides[0];
  }
  return emlx__att_run(&p);
}
