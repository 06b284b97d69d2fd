/* conv_tile.c — the driver of the f32 convolution micro-kernels at the AVX2
 * and AVX-512 levels (conv_tile.h says what one call computes).
 *
 * The weight is packed once per evaluation into panels of NR output
 * channels over every tap and input channel of a group (taps reversed when
 * flipping). The output rows of each group (batch x output positions) are
 * cut into blocks of MR rows, spread over the pool. A block whose MR
 * positions are consecutive on one output row reads, per tap, the input in
 * place (every row inside it), nothing (none inside: the tap is skipped) or
 * a gathered MR x Cg strip (some inside: the ends of the row); any other
 * block (input dilation, a block across rows, the last one)
 * is gathered whole into a thread-scratch tile of MR x K values, zero where
 * a tap falls outside. Each block then runs the micro-kernel once per
 * panel, writing its output straight. */
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

/* The taps of the MR rows from r0 when they are consecutive positions of
 * one output row (and the input has no dilation), into ta / trs / tb: per
 * tap, the input in place when every row lands inside it, nothing when none
 * does (the tap is left out), else the rows gathered into a strip of buf
 * (MR x Cg at buf + t * MR * Cg). The number of taps listed, or -1 when the
 * block is not such a run: then it is gathered whole. */
static int64_t block_taps(const tile_ctx *c, int64_t grp, int64_t r0, float *buf, const float **ta,
                          int64_t *trs, int64_t *tb) {
  const conv_geom *g = c->g;
  int mr = c->k->mr, last = g->ns - 1;
  if (!c->linear_ok || r0 + mr > c->rows || r0 / g->M != (r0 + mr - 1) / g->M)
    return -1;
  int64_t oc[EMLX_MAX_NDIM], kc[EMLX_MAX_NDIM];
  const float *xb = row_base(c, grp, r0, oc);
  if (oc[last] + mr > g->o_sp[last]) /* the block wraps onto the next output row */
    return -1;
  int64_t sl = g->s[last], nl = g->in_sp[last], cin = g->Cin, cg = g->Cg, n = 0;
  size_t run = (size_t)cg * sizeof(float);
  memset(kc, 0, (size_t)g->ns * sizeof *kc);
  for (int64_t t = 0; t < g->KS; t++, conv_odo_inc(kc, g->k_sp, g->ns)) {
    int64_t pix = 0;
    bool inside = true;
    for (int i = 0; i < last; i++) {
      int64_t pd = oc[i] * g->s[i] + kc[i] * g->kd[i] - g->lo[i];
      inside &= pd >= 0 && pd < g->in_sp[i];
      pix += pd * g->in_rs[i];
    }
    /* Row r reads position iw0 + r * sl of the last axis: rows [rlo, rhi) land inside. */
    int64_t iw0 = oc[last] * sl + kc[last] * g->kd[last] - g->lo[last];
    int64_t rlo = iw0 >= 0 ? 0 : (-iw0 + sl - 1) / sl;
    int64_t rhi = iw0 > nl - 1 ? 0 : (nl - 1 - iw0) / sl + 1;
    if (rhi > mr)
      rhi = mr;
    if (!inside || rlo >= rhi)
      continue;
    const float *src = xb + (pix + iw0) * cin;
    tb[n] = t * cg * c->k->nr;
    if (rlo == 0 && rhi == mr) {
      ta[n] = src;
      trs[n++] = sl * cin;
      continue;
    }
    float *strip = buf + t * mr * cg;
    for (int64_t r = 0; r < mr; r++) {
      if (r < rlo || r >= rhi)
        memset(strip + r * cg, 0, run);
      else
        memcpy(strip + r * cg, src + r * sl * cin, run);
    }
    ta[n] = strip;
    trs[n++] = cg;
  }
  return n;
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
  size_t tap_bytes = (size_t)g->KS * (sizeof(const float *) + 2 * sizeof(int64_t));
  size_t buf_bytes = (size_t)(k->mr * g->K) * sizeof(float);
  char *scratch = emlx__scratch_get(tap_bytes + buf_bytes);
  if (!scratch) {
    atomic_store(&c->failed, 1);
    return;
  }
  const float **ta = (const float **)(void *)scratch;
  int64_t *trs = (int64_t *)(void *)(ta + g->KS), *tb = trs + g->KS;
  float *buf = (float *)(void *)(tb + g->KS);
  for (int64_t t = t0; t < t1; t++) {
    int64_t grp = t / c->ntiles, r0 = (t % c->ntiles) * k->mr;
    int mv = (int)(c->rows - r0 < k->mr ? c->rows - r0 : k->mr);
    int64_t ntaps = block_taps(c, grp, r0, buf, ta, trs, tb);
    if (ntaps < 0) {
      block_gather(c, grp, r0, buf);
      for (int64_t q = 0; q < g->KS; q++) {
        ta[q] = buf + q * g->Cg;
        trs[q] = g->K;
        tb[q] = q * g->Cg * k->nr;
      }
      ntaps = g->KS;
    }
    const float *bp = c->bp + grp * c->npan * g->K * k->nr;
    float *o = c->out + r0 * g->Cout + grp * g->Cog;
    for (int64_t jb = 0; jb < c->npan; jb++) {
      int64_t j0 = jb * k->nr;
      int nv = (int)(g->Cog - j0 < k->nr ? g->Cog - j0 : k->nr);
      if (ntaps == 0) { /* every tap in padding: zeros */
        for (int r = 0; r < mv; r++)
          memset(o + r * g->Cout + j0, 0, (size_t)nv * sizeof(float));
        continue;
      }
      k->tile(ta, trs, tb, ntaps, g->Cg, bp + jb * g->K * k->nr, o + j0, g->Cout, mv, nv);
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
