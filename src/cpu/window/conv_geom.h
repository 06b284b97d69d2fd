/* conv_geom.h — the geometry of one CONV evaluation, shared by the im2col
 * GEMM driver (conv.c) and the direct depthwise kernel (conv_direct.c):
 * extents, groups, and the map from (output position, kernel tap) to the
 * input pixel it reads (or -1 for padding and input-dilation holes). */
#ifndef EMLX_CPU_CONV_GEOM_H
#define EMLX_CPU_CONV_GEOM_H

#include <string.h>

#include "internal.h"
#include "params_conv.h"

typedef struct conv_geom {
  emlx_dtype dtype;
  size_t esize;
  int ns; /* spatial axes */
  int flip;
  int64_t N, Nout, Cin, Cout;
  int64_t G; /* groups of either kind */
  int64_t fg, bg;
  int64_t Cg;  /* input channels per group (weight's last axis) */
  int64_t Cog; /* output channels per group */
  int64_t in_sp[EMLX_MAX_NDIM], k_sp[EMLX_MAX_NDIM], o_sp[EMLX_MAX_NDIM];
  int64_t in_rs[EMLX_MAX_NDIM]; /* row-major pixel strides of the input's spatial axes */
  int64_t s[EMLX_MAX_NDIM], lo[EMLX_MAX_NDIM], kd[EMLX_MAX_NDIM], id[EMLX_MAX_NDIM];
  int64_t Min; /* input pixels per image */
  int64_t M;   /* output positions per image */
  int64_t KS;  /* kernel taps */
  int64_t K;   /* KS * Cg */
} conv_geom;

static inline void conv_geom_init(conv_geom *g, const emlx_conv_params *p, const emlx_array *x,
                                  const emlx_array *w, const emlx_array *out) {
  memset(g, 0, sizeof *g);
  g->dtype = out->dtype;
  g->esize = emlx_dtype_size(out->dtype);
  g->ns = p->nspatial;
  g->flip = p->flip;
  g->N = x->shape[0];
  g->Nout = out->shape[0];
  g->Cin = x->shape[x->ndim - 1];
  g->Cout = w->shape[0];
  g->fg = p->groups;
  g->bg = p->batch_groups;
  g->G = g->fg > 1 ? g->fg : g->bg;
  g->Cg = w->shape[w->ndim - 1];
  g->Cog = g->Cout / g->G;
  g->Min = g->M = g->KS = 1;
  for (int i = 0; i < g->ns; i++) {
    const int64_t *v = p->vals + EMLX_CONV_NV * i;
    g->in_sp[i] = x->shape[i + 1];
    g->k_sp[i] = w->shape[i + 1];
    g->o_sp[i] = out->shape[i + 1];
    g->s[i] = v[EMLX_CONV_S];
    g->lo[i] = v[EMLX_CONV_LO];
    g->kd[i] = v[EMLX_CONV_KD];
    g->id[i] = v[EMLX_CONV_ID];
    g->Min *= g->in_sp[i];
    g->M *= g->o_sp[i];
    g->KS *= g->k_sp[i];
  }
  int64_t st = 1;
  for (int i = g->ns - 1; i >= 0; i--) {
    g->in_rs[i] = st;
    st *= g->in_sp[i];
  }
  g->K = g->KS * g->Cg;
}

/* The input image that output image n of group grp reads. */
static inline int64_t conv_input_batch(const conv_geom *g, int64_t n, int64_t grp) {
  return g->bg > 1 ? grp * g->Nout + n : n;
}
/* The first input channel of group grp. */
static inline int64_t conv_input_chan0(const conv_geom *g, int64_t grp) {
  return g->fg > 1 ? grp * g->Cg : 0;
}

/* Pixel index (row-major over the input's spatial axes) that tap kc of
 * output position oc reads, or -1 when it lies in padding or a dilation
 * hole. */
static inline int64_t conv_pixel(const conv_geom *g, const int64_t *oc, const int64_t *kc) {
  int64_t pix = 0;
  for (int i = 0; i < g->ns; i++) {
    int64_t pd = oc[i] * g->s[i] + kc[i] * g->kd[i] - g->lo[i];
    if (pd < 0)
      return -1;
    if (g->id[i] != 1) {
      if (pd % g->id[i] != 0)
        return -1;
      pd /= g->id[i];
    }
    if (pd >= g->in_sp[i])
      return -1;
    pix += pd * g->in_rs[i];
  }
  return pix;
}

static inline void conv_unravel(int64_t j, const int64_t *shape, int n, int64_t *idx) {
  for (int i = n - 1; i >= 0; i--) {
    idx[i] = j % shape[i];
    j /= shape[i];
  }
}

static inline void conv_odo_inc(int64_t *idx, const int64_t *shape, int n) {
  for (int i = n - 1; i >= 0; i--) {
    if (++idx[i] < shape[i])
      return;
    idx[i] = 0;
  }
}

/* 1x1 kernel, stride 1, no padding or input dilation: im2col is the input. */
static inline bool conv_is_pointwise(const conv_geom *g) {
  for (int i = 0; i < g->ns; i++)
    if (g->k_sp[i] != 1 || g->s[i] != 1 || g->lo[i] != 0 || g->id[i] != 1 ||
        g->o_sp[i] != g->in_sp[i])
      return false;
  return true;
}

/* Depthwise (one input channel per feature group) in f32/f64. */
static inline bool conv_direct_ok(const conv_geom *g) {
  return g->fg > 1 && g->Cg == 1 && (g->dtype == EMLX_FLOAT32 || g->dtype == EMLX_FLOAT64);
}

/* conv_direct.c: the depthwise kernel over contiguous x and w into out. */
int emlx_cpu_conv_direct(const conv_geom *g, const char *x, const char *w, char *out);

/* conv_tile.c: the f32 micro-kernel of this ISA level for g (NULL: none,
 * im2col + BLAS instead), and the convolution through it over contiguous x
 * and w into out. */
struct emlx_conv_tile_kernel;
const struct emlx_conv_tile_kernel *emlx_cpu_conv_tile_kernel(const conv_geom *g);
int emlx_cpu_conv_tiled(const conv_geom *g, const struct emlx_conv_tile_kernel *k, const char *x,
                        const char *w, char *out);

/* conv_wino.c: whether g (f32, 2-D, 3x3, stride 1, no dilation, one group,
 * 16 to 256 channels in and out, 64+ output tiles of 2 x 2) runs through
 * Winograd F(2x2, 3x3), and
 * that convolution (with the tile kernel k for its GEMMs). */
bool emlx_cpu_conv_wino_ok(const conv_geom *g);
int emlx_cpu_conv_wino(const conv_geom *g, const struct emlx_conv_tile_kernel *k, const char *x,
                       const char *w, char *out);

#endif
