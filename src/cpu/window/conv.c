/* conv.c — the CONV kernel: channels-last N-d convolution with strides,
 * padding, input and kernel dilation, feature groups, batch groups and flip
 * (semantics in include/emlx/conv.h).
 *
 * Implicit GEMM: for each group, the output rows (batch x output positions)
 * are cut into blocks whose im2col matrix A (rows x K, K = taps x C_in/G)
 * stays a few MiB; each block is filled on the calling thread (see
 * conv_gemm) and multiplied by the group's packed weight B (K x C_out/G, flipped when
 * asked) through the matmul family's GEMM entry points (OpenBLAS for
 * f32/f64, our f32-accumulating kernels for f16/bf16, wrapping integer
 * kernels; these thread themselves), writing straight into the output's columns of that group.
 * 1x1 convolutions without stride, padding or dilation skip im2col: the
 * input's pixels already are A. Depthwise convolutions (C_in/G == 1) in
 * f32/f64 run the direct kernel of conv_direct.c instead, and the other f32
 * convolutions at the AVX2 and AVX-512 levels the implicit-GEMM
 * micro-kernels of conv_tile.c (no im2col block at all), 3x3 stride-1 ones
 * with enough channels Winograd's F(2x2, 3x3) over those micro-kernels
 * (conv_wino.c); the scalar level keeps im2col + BLAS. */
#include <stdlib.h>
#include <string.h>

#include "conv_geom.h"
#include "kernels.h"
#include "matmul/matmul.h"

#define CONV_BLOCK_BYTES ((size_t)4 << 20) /* target size of one im2col block */

static int run_gemm(const emlx_gemm *g) {
  switch (g->dtype) {
  case EMLX_FLOAT32:
  case EMLX_FLOAT64:
    return emlx_cpu_gemm_blas(g);
  case EMLX_FLOAT16:
  case EMLX_BFLOAT16:
    return emlx_cpu_gemm_lowp(g, true);
  default:
    return emlx_cpu_gemm_int(g, true);
  }
}

typedef struct im2col_ctx {
  const conv_geom *cg;
  const char *x; /* contiguous input */
  char *a;       /* the block: rows x K */
  int64_t r0;    /* first global row (n * M + m) of the block */
  int64_t group;
} im2col_ctx;

static void im2col_range(void *vc, int64_t i0, int64_t i1) {
  const im2col_ctx *c = vc;
  const conv_geom *g = c->cg;
  size_t es = g->esize, run = (size_t)g->Cg * es;
  int ns = g->ns;
  int64_t oc[EMLX_MAX_NDIM], kc[EMLX_MAX_NDIM];
  for (int64_t i = i0; i < i1; i++) {
    int64_t r = c->r0 + i, n = r / g->M, m = r % g->M;
    int64_t nin = conv_input_batch(g, n, c->group);
    const char *xb = c->x + ((nin * g->Min) * g->Cin + conv_input_chan0(g, c->group)) * (int64_t)es;
    conv_unravel(m, g->o_sp, ns, oc);
    char *dst = c->a + i * g->K * (int64_t)es;
    memset(kc, 0, (size_t)ns * sizeof *kc);
    for (int64_t kp = 0; kp < g->KS; kp++) {
      int64_t pix = conv_pixel(g, oc, kc);
      if (pix < 0)
        memset(dst, 0, run);
      else
        memcpy(dst, xb + pix * g->Cin * (int64_t)es, run);
      dst += run;
      conv_odo_inc(kc, g->k_sp, ns);
    }
  }
}

/* Weight (C_out, taps, Cg) contiguous -> per group (K x Cog) row-major,
 * taps reversed when flipping. */
static void pack_weight(const conv_geom *g, const char *w, char *wp) {
  size_t es = g->esize;
  for (int64_t grp = 0; grp < g->G; grp++)
    for (int64_t j = 0; j < g->Cog; j++) {
      int64_t co = grp * g->Cog + j;
      for (int64_t kp = 0; kp < g->KS; kp++) {
        int64_t ks = g->flip ? g->KS - 1 - kp : kp;
        for (int64_t ci = 0; ci < g->Cg; ci++) {
          int64_t dst = ((grp * g->KS + kp) * g->Cg + ci) * g->Cog + j;
          int64_t src = (co * g->KS + ks) * g->Cg + ci;
          memcpy(wp + dst * (int64_t)es, w + src * (int64_t)es, es);
        }
      }
    }
}

/* A row-major copy of a (or a itself when it already is one). */
static const char *contiguous(const emlx_array *a, emlx_buffer **holder) {
  *holder = NULL;
  if (a->flags & EMLX_FLAG_ROW_CONTIG)
    return emlx__data(a);
  char *p = emlx_cpu_mm_scratch((size_t)a->size * emlx_dtype_size(a->dtype), holder);
  if (p)
    emlx__copy_to_host(a, p);
  return p;
}

static int conv_gemm(const conv_geom *g, const char *x, const char *wp, char *out) {
  size_t es = g->esize;
  int64_t rows = g->Nout * g->M;
  emlx_gemm gm = {.dtype = g->dtype,
                  .N = g->Cog,
                  .K = g->K,
                  .b_rs = g->Cog,
                  .b_cs = 1,
                  .ldc = g->Cout,
                  .a_cs = 1};
  if (conv_is_pointwise(g)) {
    for (int64_t grp = 0; grp < g->G; grp++) {
      gm.M = rows;
      gm.a = x + (conv_input_batch(g, 0, grp) * g->Min * g->Cin + conv_input_chan0(g, grp)) *
                     (int64_t)es;
      gm.a_rs = g->Cin;
      gm.b = wp + grp * g->K * g->Cog * (int64_t)es;
      gm.c = out + grp * g->Cog * (int64_t)es;
      if (run_gemm(&gm) != 0)
        return -1;
    }
    return 0;
  }
  int64_t mb = (int64_t)(CONV_BLOCK_BYTES / ((size_t)g->K * es));
  if (mb < 64)
    mb = 64;
  if (mb > rows)
    mb = rows;
  emlx_buffer *holder;
  char *a = emlx_cpu_mm_scratch((size_t)(mb * g->K) * es, &holder);
  if (!a)
    return -1;
  int rc = 0;
  im2col_ctx ic = {.cg = g, .x = x, .a = a};
  for (int64_t grp = 0; grp < g->G && rc == 0; grp++) {
    for (int64_t r0 = 0; r0 < rows && rc == 0; r0 += mb) {
      int64_t nr = rows - r0 < mb ? rows - r0 : mb;
      ic.r0 = r0;
      ic.group = grp;
      /* On the calling thread: OpenBLAS's workers spin for a while after
       * each product, and a pool job in that window fights them for the
       * cores (measured: 2x slower medians on the 2-core bench machine). */
      im2col_range(&ic, 0, nr);
      gm.M = nr;
      gm.a = a;
      gm.a_rs = g->K;
      gm.b = wp + grp * g->K * g->Cog * (int64_t)es;
      gm.c = out + (r0 * g->Cout + grp * g->Cog) * (int64_t)es;
      rc = run_gemm(&gm);
    }
  }
  emlx__buffer_release(holder);
  return rc;
}

int emlx_cpu_conv(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs) {
  emlx_array *xa = inputs[0], *wa = inputs[1], *out = outputs[0];
  if (!out)
    return 0;
  if (emlx__array_alloc_data(out) != 0)
    return -1;
  if (out->size == 0)
    return 0;
  conv_geom g;
  conv_geom_init(&g, emlx__params(node), xa, wa, out);
  if (g.K == 0) { /* no taps or no channels: an empty sum */
    memset(emlx__data(out), 0, (size_t)out->size * g.esize);
    return 0;
  }
  emlx_buffer *xh, *wh;
  const char *x = contiguous(xa, &xh);
  const char *w = x ? contiguous(wa, &wh) : NULL;
  if (!w) {
    emlx__buffer_release(xh);
    return -1;
  }
  int rc;
  const struct emlx_conv_tile_kernel *tk = NULL;
  if (conv_direct_ok(&g)) {
    rc = emlx_cpu_conv_direct(&g, x, w, emlx__data(out));
  } else if ((tk = emlx_cpu_conv_tile_kernel(&g)) != NULL) {
    rc = emlx_cpu_conv_wino_ok(&g) ? emlx_cpu_conv_wino(&g, tk, x, w, emlx__data(out))
                                   : emlx_cpu_conv_tiled(&g, tk, x, w, emlx__data(out));
  } else {
    emlx_buffer *ph;
    char *wp = emlx_cpu_mm_scratch((size_t)(g.G * g.K * g.Cog) * g.esize, &ph);
    rc = -1;
    if (wp) {
      pack_weight(&g, w, wp);
      rc = conv_gemm(&g, x, wp, emlx__data(out));
      emlx__buffer_release(ph);
    }
  }
  emlx__buffer_release(xh);
  emlx__buffer_release(wh);
  return rc;
}
