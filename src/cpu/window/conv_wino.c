/* conv_wino.c — f32 3x3 stride-1 convolutions at the AVX2 and AVX-512
 * levels through Winograd's F(2x2, 3x3) (conv_wino.h): 16 multiplies per 2 x 2
 * outputs and input channel instead of 36, so 2.25x fewer multiply-adds
 * than the implicit GEMM of conv_tile.c, which is already at the FMA
 * units' peak on these shapes.
 *
 * The weight is transformed once per evaluation (U = G g G^T per output and
 * input channel, taps reversed when flipping) into the panels of the tile
 * kernel of conv_tile.h, one set per each of the 16 positions of the
 * transformed tile. Tiles are cut into chunks (spread over the pool) small
 * enough that a chunk's 16 transformed input matrices and 16 products stay
 * in L2: transform the chunk's input patches, run the 16 GEMMs (the same
 * micro-kernels as conv_tile.c, one "tap"), transform back into the output.
 * The rounding differs from the direct sum (the transforms add and subtract
 * inputs before the products), within a few f32 ulps of the inputs'
 * magnitudes; EMLX_CONV_WINOGRAD=0 turns it off (the implicit GEMM then
 * runs). */
#include <stdlib.h>
#include <string.h>

#include "conv_geom.h"
#include "conv_tile.h"
#include "conv_wino.h"
#include "isa.h"
#include "kernels.h"
#include "matmul/matmul.h"

#define WINO_CHUNK_BYTES ((size_t)384 << 10) /* a chunk's V and products */
#define WINO_MIN_ROWS 48                     /* tiles per chunk at the least */
#define WINO_MIN_TILES 64                    /* tiles of the whole evaluation */

bool emlx_cpu_conv_wino_ok(const conv_geom *g) {
  /* Past 256 channels the per-evaluation weight transform and the
   * transformed weight streamed past every chunk cost more than the saved
   * multiply-adds (measured: 512 -> 512 on 14 x 14 ran 1.7x slower), as do
   * few tiles. */
  if (g->dtype != EMLX_FLOAT32 || g->ns != 2 || g->G != 1 || g->Cg < 16 || g->Cog < 16 ||
      g->Cg > 256 || g->Cog > 256)
    return false;
  for (int i = 0; i < 2; i++)
    if (g->k_sp[i] != 3 || g->s[i] != 1 || g->kd[i] != 1 || g->id[i] != 1 || g->o_sp[i] < 2)
      return false;
  if (g->Nout * ((g->o_sp[0] + 1) / 2) * ((g->o_sp[1] + 1) / 2) < WINO_MIN_TILES)
    return false;
  const char *env = getenv("EMLX_CONV_WINOGRAD");
  return !(env && strcmp(env, "0") == 0);
}

typedef struct wino_ctx {
  wino_geom w;
  const emlx_conv_tile_kernel *k;
  wino_in_fn fin;
  wino_out_fn fout;
  const float *x, *U; /* U: [16][npan][cin][nr] */
  float *out;
  int64_t ntiles, npan;
  _Atomic int failed;
} wino_ctx;

static void wino_range(void *vc, int64_t c0, int64_t c1) {
  wino_ctx *c = vc;
  const wino_geom *w = &c->w;
  const emlx_conv_tile_kernel *k = c->k;
  int64_t rows = w->ntile_rows, cin = w->cin, cout = w->cout;
  float *V = emlx__scratch_get((size_t)(16 * rows * (cin + cout)) * sizeof(float));
  if (!V) {
    atomic_store(&c->failed, 1);
    return;
  }
  float *Mo = V + 16 * rows * cin;
  const float *ta[1];
  int64_t trs[1] = {cin}, tb[1] = {0};
  for (int64_t ch = c0; ch < c1; ch++) {
    int64_t t0 = ch * rows, nt = c->ntiles - t0 < rows ? c->ntiles - t0 : rows;
    int64_t used = (nt + k->mr - 1) / k->mr * k->mr;
    c->fin(w, c->x, t0, nt, V);
    for (int q = 0; q < 16; q++) {
      const float *vq = V + q * rows * cin, *uq = c->U + q * c->npan * cin * k->nr;
      float *mq = Mo + q * rows * cout;
      for (int64_t r0 = 0; r0 < used; r0 += k->mr) {
        ta[0] = vq + r0 * cin;
        for (int64_t jb = 0; jb < c->npan; jb++) {
          int64_t j0 = jb * k->nr;
          int nv = (int)(cout - j0 < k->nr ? cout - j0 : k->nr);
          k->tile(ta, trs, tb, 1, cin, uq + jb * cin * k->nr, mq + r0 * cout + j0, cout, k->mr, nv);
        }
      }
    }
    c->fout(w, Mo, t0, nt, c->out);
  }
  emlx__scratch_put(V);
}

/* U = G g G^T, G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], for every
 * (output, input) channel, into the tile kernel's panels (zero past cout). */
static void transform_weight(const conv_geom *g, int nr, int64_t npan, const float *wt, float *U) {
  int64_t cin = g->Cg, cout = g->Cog;
  memset(U, 0, (size_t)(16 * npan * cin * nr) * sizeof(float));
  for (int64_t co = 0; co < cout; co++)
    for (int64_t ci = 0; ci < cin; ci++) {
      float f[9], t[12], u[16];
      for (int tap = 0; tap < 9; tap++) {
        int src = g->flip ? 8 - tap : tap;
        f[tap] = wt[(co * 9 + src) * cin + ci];
      }
      for (int j = 0; j < 3; j++) { /* t = G f (4 x 3) */
        t[0 + j] = f[0 + j];
        t[3 + j] = 0.5f * (f[0 + j] + f[3 + j] + f[6 + j]);
        t[6 + j] = 0.5f * (f[0 + j] - f[3 + j] + f[6 + j]);
        t[9 + j] = f[6 + j];
      }
      for (int i = 0; i < 4; i++) { /* u = t G^T (4 x 4) */
        u[i * 4 + 0] = t[i * 3 + 0];
        u[i * 4 + 1] = 0.5f * (t[i * 3 + 0] + t[i * 3 + 1] + t[i * 3 + 2]);
        u[i * 4 + 2] = 0.5f * (t[i * 3 + 0] - t[i * 3 + 1] + t[i * 3 + 2]);
        u[i * 4 + 3] = t[i * 3 + 2];
      }
      for (int q = 0; q < 16; q++)
        U[((q * npan + co / nr) * cin + ci) * nr + co % nr] = u[q];
    }
}

int emlx_cpu_conv_wino(const conv_geom *g, const emlx_conv_tile_kernel *k, const char *x,
                       const char *w, char *out) {
  bool avx512 = k == &emlx_conv_tile_avx512;
  wino_ctx c = {.k = k,
                .fin = avx512 ? emlx_conv_wino_in_avx512 : emlx_conv_wino_in_avx2,
                .fout = avx512 ? emlx_conv_wino_out_avx512 : emlx_conv_wino_out_avx2,
                .x = (const float *)(const void *)x,
                .out = (float *)(void *)out};
  wino_geom *wg = &c.w;
  wg->h = g->in_sp[0];
  wg->w = g->in_sp[1];
  wg->oh = g->o_sp[0];
  wg->ow = g->o_sp[1];
  wg->lo_h = g->lo[0];
  wg->lo_w = g->lo[1];
  wg->th = (wg->oh + 1) / 2;
  wg->tw = (wg->ow + 1) / 2;
  wg->cin = g->Cg;
  wg->cout = g->Cog;
  wg->cstride = g->Cin;
  int64_t per_row = (int64_t)(16 * sizeof(float)) * (wg->cin + wg->cout);
  /* Rows for L2, but at least WINO_MIN_ROWS: with many channels every chunk
   * streams the whole transformed weight past its rows. */
  int64_t rows = (int64_t)WINO_CHUNK_BYTES / per_row;
  rows = rows < WINO_MIN_ROWS ? WINO_MIN_ROWS : rows;
  wg->ntile_rows = (rows + k->mr - 1) / k->mr * k->mr;
  c.ntiles = g->Nout * wg->th * wg->tw;
  c.npan = (wg->cout + k->nr - 1) / k->nr;
  atomic_init(&c.failed, 0);
  emlx_buffer *holder;
  float *U = emlx_cpu_mm_scratch((size_t)(16 * c.npan * wg->cin * k->nr) * sizeof(float), &holder);
  if (!U)
    return -1;
  transform_weight(g, k->nr, c.npan, (const float *)(const void *)w, U);
  c.U = U;
  emlx__parallel_for((c.ntiles + wg->ntile_rows - 1) / wg->ntile_rows, 1, wino_range, &c);
  emlx__buffer_release(holder);
  return atomic_load(&c.failed) ? EMLX_FAIL("conv_general: out of memory for a tile") : 0;
}
