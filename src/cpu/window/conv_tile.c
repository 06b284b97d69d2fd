/* conv_tile.c — the driver of the f32 convolution micro-kernels at the AVX2
 * and AVX-512 levels (conv_tile.h says what one call computes).
 *
 * The weight is packed once per evaluation into panels of NR output
 * channels over every tap and input channel of a group (taps reversed when
 * flipping). The output rows of each group (batch x output positions) are
 * cut into blocks of MR rows, spread over the pool; a block whose MR
 * positions are consecutive on one output row with every tap inside the
 * input reads the input in place, any other (padding, input dilation, the
 * end of a row, the last block) is gathered first into a thread-scratch
 * tile of MR x K values, zero where a tap falls outside. Each block then
 * runs the micro-kernel once per panel, writing its output straight. */
#include <string.h>

#include "conv_geom.h"
#include "conv_tile.h"
#include "isa.h"
#include "kernels.h"
#include "matmul/matmul.h"

typedef struct tile_ctx {
  const conv_geom *g;
  const emlx_conv_tile_kernel *k;
  const float *x;
  const float *bp; /* [G][npan][K][NR] */
  float *out;
  int64_t rows, ntiles, npan;
  bool linear_ok; /* blocks may read the input in place (no input dilation) */
  _Atomic int failed;
} tile_ctx;

/* The input image and the first channel that output row r of group grp reads,
 * and its output coordinates. */
static const float *row_base(const tile_ctx *c, int64_t grp, int64_t r, int64_t *oc) {
  const conv_geom *g = c->g;
  int64_t n = r / g->M, m = r % g->M;
  conv_unravel(m, g->o_sp, g->ns, oc);
  return c->x + (conv_input_batch(g, n, grp) * g->Min * g->Cin + conv_input_chan0(g, grp));
}

/* Whether the MR rows from r0 read the input in place; if so the taps'
 * offsets (floats, from *base) of the first row go to toff. */
static bool block_linear(const tile_ctx *c, int64_t grp, int64_t r0, const float **base,
                         int64_t *toff) {
  const conv_geom *g = c->g;
  int mr = c->k->mr, last = g->ns - 1;
  if (!c->linear_ok || r0 + mr > c->rows || r0 / g->M != (r0 + mr - 1) / g->M)
    return false;
  int64_t oc[EMLX_MAX_NDIM], oe[EMLX_MAX_NDIM], kc[EMLX_MAX_NDIM];
  *base = row_base(c, grp, r0, oc);
  if (oc[last] + mr > g->o_sp[last]) /* the block wraps onto the next output row */
    return false;
  memcpy(oe, oc, (size_t)g->ns * sizeof *oc);
  oe[last] += mr - 1;
  memset(kc, 0, (size_t)g->ns * sizeof *kc);
  for (int64_t t = 0; t < g->KS; t++) {
    int64_t p0 = conv_pixel(g, oc, kc), p1 = conv_pixel(g, oe, kc);
    if (p0 < 0 || p1 < 0)
      return false;
    toff[t] = p0 * g->Cin;
    conv_odo_inc(kc, g->k_sp, g->ns);
  }
  return true;
}

/* Rows [r0, r0 + MR) into buf (MR x K; rows past the end and taps outside
 * the input are zero). */
static void block_gather(const tile_ctx *c, int64_t grp, int64_t r0, float *buf) {
  const conv_geom *g = c->g;
  int64_t oc[EMLX_MAX_NDIM], kc[EMLX_MAX_NDIM];
  size_t run = (size_t)g->Cg * sizeof(float);
  for (int r = 0; r < c->k->mr; r++) {
    float *dst = buf + r * g->K;
    if (r0 + r >= c->rows) {
      memset(dst, 0, (size_t)g->K * sizeof(float));
      continue;
    }
    const float *xb = row_base(c, grp, r0 + r, oc);
    memset(kc, 0, (size_t)g->ns * sizeof *kc);
    for (int64_t t = 0; t < g->KS; t++, dst += g->Cg) {
      int64_t pix = conv_pixel(g, oc, kc);
      if (pix < 0)
        memset(dst, 0, run);
      else
        memcpy(dst, xb + pix * g->Cin, run);
      conv_odo_inc(kc, g->k_sp, g->ns);
    }
  }
}

static void tile_range(void *vc, int64_t t0, int64_t t1) {
  tile_ctx *c = vc;
  const conv_geom *g = c->g;
  const emlx_conv_tile_kernel *k = c->k;
  size_t toff_bytes = (size_t)(2 * g->KS) * sizeof(int64_t);
  size_t buf_bytes = (size_t)(k->mr * g->K) * sizeof(float);
  char *scratch = emlx__scratch_get(toff_bytes + buf_bytes);
  if (!scratch) {
    atomic_store(&c->failed, 1);
    return;
  }
  int64_t *toff = (int64_t *)(void *)scratch, *goff = toff + g->KS;
  float *buf = (float *)(void *)(scratch + toff_bytes);
  for (int64_t t = 0; t < g->KS; t++)
    goff[t] = t * g->Cg;
  for (int64_t t = t0; t < t1; t++) {
    int64_t grp = t / c->ntiles, r0 = (t % c->ntiles) * k->mr;
    int mv = (int)(c->rows - r0 < k->mr ? c->rows - r0 : k->mr);
    const float *a;
    const int64_t *offs;
    int64_t rs;
    if (block_linear(c, grp, r0, &a, toff)) {
      offs = toff;
      rs = g->s[g->ns - 1] * g->Cin;
    } else {
      block_gather(c, grp, r0, buf);
      a = buf;
      offs = goff;
      rs = g->K;
    }
    const float *bp = c->bp + grp * c->npan * g->K * k->nr;
    float *o = c->out + r0 * g->Cout + grp * g->Cog;
    for (int64_t jb = 0; jb < c->npan; jb++) {
      int64_t j0 = jb * k->nr;
      int nv = (int)(g->Cog - j0 < k->nr ? g->Cog - j0 : k->nr);
      k->tile(a, offs, rs, g->KS, g->Cg, bp + jb * g->K * k->nr, o + j0, g->Cout, mv, nv);
    }
  }
  emlx__scratch_put(scratch);
}

/* Weight (C_out, taps, Cg) contiguous -> [G][npan][K][NR], taps reversed
 * when flipping, zero past each group's channels. */
static void pack_panels(const conv_geom *g, int nr, int64_t npan, const float *w, float *bp) {
  for (int64_t grp = 0; grp < g->G; grp++)
    for (int64_t jb = 0; jb < npan; jb++) {
      float *d = bp + (grp * npan + jb) * g->K * nr;
      for (int64_t t = 0; t < g->KS; t++) {
        int64_t ts = g->flip ? g->KS - 1 - t : t;
        for (int64_t ci = 0; ci < g->Cg; ci++, d += nr)
          for (int j = 0; j < nr; j++) {
            int64_t cj = jb * nr + j;
            d[j] = cj < g->Cog ? w[((grp * g->Cog + cj) * g->KS + ts) * g->Cg + ci] : 0.0f;
          }
      }
    }
}

const emlx_conv_tile_kernel *emlx_cpu_conv_tile_kernel(const conv_geom *g) {
  if (g->dtype != EMLX_FLOAT32 || g->ns < 1)
    return NULL;
  const char *isa = emlx_cpu_isa_get()->name;
  if (strcmp(isa, "avx512") == 0)
    return &emlx_conv_tile_avx512;
  if (strcmp(isa, "avx2") == 0)
    return &emlx_conv_tile_avx2;
  return NULL;
}

int emlx_cpu_conv_tiled(const conv_geom *g, const emlx_conv_tile_kernel *k, const char *x,
                        const char *w, char *out) {
  tile_ctx c = {.g = g, .k = k, .x = (const float *)(const void *)x, .out = (float *)(void *)out};
  c.rows = g->Nout * g->M;
  c.ntiles = (c.rows + k->mr - 1) / k->mr;
  c.npan = (g->Cog + k->nr - 1) / k->nr;
  c.linear_ok = true;
  for (int i = 0; i < g->ns; i++)
    c.linear_ok &= g->id[i] == 1;
  atomic_init(&c.failed, 0);
  emlx_buffer *holder;
  float *bp = emlx_cpu_mm_scratch((size_t)(g->G * c.npan * g->K * k->nr) * sizeof(float), &holder);
  if (!bp)
    return -1;
  pack_panels(g, k->nr, c.npan, (const float *)(const void *)w, bp);
  c.bp = bp;
  /* About 2^20 multiply-adds per task at the least. */
  int64_t per_tile = (int64_t)k->mr * g->K * c.npan * k->nr;
  int64_t grain = ((int64_t)1 << 20) / (per_tile > 0 ? per_tile : 1) + 1;
  emlx__parallel_for(g->G * c.ntiles, grain, tile_range, &c);
  emlx__buffer_release(holder);
  return atomic_load(&c.failed) ? EMLX_FAIL("conv_general: out of memory for a tile") : 0;
}
