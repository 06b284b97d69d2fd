/* conv_direct.c — the direct depthwise convolution kernel (feature groups
 * with one input channel each, f32/f64), where im2col would multiply
 * matrices only a few taps deep.
 *
 * Output channel co reads input channel co / mult (mult = C_out / C_in). The
 * weight is repacked tap-major (taps x C_out, flipped when asked), so each
 * valid tap adds x[pixel, co / mult] * w[tap, co] across all output channels
 * of a position: with mult 1 a contiguous multiply-add the compiler
 * vectorises. Parallel over output positions. */
#include <stdlib.h>
#include <string.h>

#include "conv_geom.h"
#include "kernels.h"

typedef struct direct_ctx {
  const conv_geom *g;
  const char *x;
  const char *wt; /* taps x C_out */
  char *out;
} direct_ctx;

#define DIRECT_KERNEL(SFX, T)                                                                      \
  static void direct_##SFX(void *vc, int64_t r0, int64_t r1) {                                     \
    const direct_ctx *c = vc;                                                                      \
    const conv_geom *g = c->g;                                                                     \
    const T *x = (const T *)c->x, *wt = (const T *)c->wt;                                          \
    T *out = (T *)c->out;                                                                          \
    int64_t C = g->Cout, mult = g->Cout / g->Cin;                                                  \
    int64_t oc[EMLX_MAX_NDIM], kc[EMLX_MAX_NDIM];                                                  \
    for (int64_t r = r0; r < r1; r++) {                                                            \
      int64_t n = r / g->M, m = r % g->M;                                                          \
      const T *xb = x + n * g->Min * g->Cin;                                                       \
      T *o = out + r * C;                                                                          \
      for (int64_t co = 0; co < C; co++)                                                           \
        o[co] = 0;                                                                                 \
      conv_unravel(m, g->o_sp, g->ns, oc);                                                         \
      for (int i = 0; i < g->ns; i++)                                                              \
        kc[i] = 0;                                                                                 \
      for (int64_t kp = 0; kp < g->KS; kp++) {                                                     \
        int64_t pix = conv_pixel(g, oc, kc);                                                       \
        if (pix >= 0) {                                                                            \
          const T *xp = xb + pix * g->Cin, *wp = wt + kp * C;                                      \
          if (mult == 1)                                                                           \
            for (int64_t co = 0; co < C; co++)                                                     \
              o[co] += xp[co] * wp[co];                                                            \
          else                                                                                     \
            for (int64_t co = 0; co < C; co++)                                                     \
              o[co] += xp[co / mult] * wp[co];                                                     \
        }                                                                                          \
        conv_odo_inc(kc, g->k_sp, g->ns);                                                          \
      }                                                                                            \
    }                                                                                              \
  }

DIRECT_KERNEL(f32, float)
DIRECT_KERNEL(f64, double)

int emlx_cpu_conv_direct(const conv_geom *g, const char *x, const char *w, char *out) {
  size_t es = g->esize;
  char *wt = malloc((size_t)(g->KS * g->Cout) * es + 1);
  if (!wt)
    return EMLX_FAIL("conv_general: out of memory");
  /* w is (C_out, taps, 1): transpose to (taps, C_out), flipping taps. */
  for (int64_t co = 0; co < g->Cout; co++)
    for (int64_t kp = 0; kp < g->KS; kp++) {
      int64_t ks = g->flip ? g->KS - 1 - kp : kp;
      memcpy(wt + (kp * g->Cout + co) * (int64_t)es, w + (co * g->KS + ks) * (int64_t)es, es);
    }
  direct_ctx c = {.g = g, .x = x, .wt = wt, .out = out};
  int64_t grain = 32768 / (g->KS * g->Cout) + 1;
  emlx__parallel_for(g->Nout * g->M, grain, g->dtype == EMLX_FLOAT32 ? direct_f32 : direct_f64, &c);
  free(wt);
  return 0;
}
