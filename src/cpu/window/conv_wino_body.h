/* conv_wino_body.h — the input and output transforms of the Winograd
 * F(2x2, 3x3) convolution (driver: conv_wino.c), vectorised over channels.
 * Included by conv_wino_avx2.c and conv_wino_avx512.c, which define WV (f32
 * lanes per vector) and WINO_IN / WINO_OUT (the entry points' names).
 *
 * With d the 4 x 4 input patch of a tile (zero outside the input) and m the
 * 4 x 4 products of the 16 GEMMs, V = B^T d B and Y = A^T m A (Lavin and
 * Gray's F(2x2, 3x3)):
 *   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],  A^T = [1 1 1 0; 0 1 -1 -1].
 * Both use additions only. */
#include <string.h>

#include "conv_wino.h"

typedef float wv_t __attribute__((vector_size(WV * 4)));

static inline wv_t wv_load(const float *p) {
  wv_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void wv_store(float *p, wv_t v) { memcpy(p, &v, sizeof v); }

/* V = B^T d B over one lane type T (a vector or a float); d[i * 4 + j]. */
#define WINO_IN_XFORM(T, d, v)                                                                     \
  do {                                                                                             \
    T t_[16];                                                                                      \
    for (int j_ = 0; j_ < 4; j_++) {                                                               \
      t_[0 + j_] = d[0 + j_] - d[8 + j_];                                                          \
      t_[4 + j_] = d[4 + j_] + d[8 + j_];                                                          \
      t_[8 + j_] = d[8 + j_] - d[4 + j_];                                                          \
      t_[12 + j_] = d[4 + j_] - d[12 + j_];                                                        \
    }                                                                                              \
    for (int i_ = 0; i_ < 4; i_++) {                                                               \
      v[i_ * 4 + 0] = t_[i_ * 4 + 0] - t_[i_ * 4 + 2];                                             \
      v[i_ * 4 + 1] = t_[i_ * 4 + 1] + t_[i_ * 4 + 2];                                             \
      v[i_ * 4 + 2] = t_[i_ * 4 + 2] - t_[i_ * 4 + 1];                                             \
      v[i_ * 4 + 3] = t_[i_ * 4 + 1] - t_[i_ * 4 + 3];                                             \
    }                                                                                              \
  } while (0)

/* Y (2 x 2) = A^T m A; y[a * 2 + b]. */
#define WINO_OUT_XFORM(T, m, y)                                                                    \
  do {                                                                                             \
    T t_[8];                                                                                       \
    for (int j_ = 0; j_ < 4; j_++) {                                                               \
      t_[j_] = m[0 + j_] + m[4 + j_] + m[8 + j_];                                                  \
      t_[4 + j_] = m[4 + j_] - m[8 + j_] - m[12 + j_];                                             \
    }                                                                                              \
    for (int a_ = 0; a_ < 2; a_++) {                                                               \
      y[a_ * 2 + 0] = t_[a_ * 4 + 0] + t_[a_ * 4 + 1] + t_[a_ * 4 + 2];                            \
      y[a_ * 2 + 1] = t_[a_ * 4 + 1] - t_[a_ * 4 + 2] - t_[a_ * 4 + 3];                            \
    }                                                                                              \
  } while (0)

void WINO_IN(const wino_geom *w, const float *x, int64_t t0, int64_t nt, float *V) {
  int64_t cin = w->cin, ldx = w->ntile_rows * cin; /* one of the 16 matrices */
  for (int64_t r = 0; r < nt; r++) {
    int64_t t = t0 + r, n = t / (w->th * w->tw), rem = t % (w->th * w->tw);
    int64_t ih0 = (rem / w->tw) * 2 - w->lo_h, iw0 = (rem % w->tw) * 2 - w->lo_w;
    const float *src[16];
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++) {
        int64_t ih = ih0 + i, iw = iw0 + j;
        src[i * 4 + j] = ih >= 0 && ih < w->h && iw >= 0 && iw < w->w
                             ? x + ((n * w->h + ih) * w->w + iw) * w->cstride
                             : NULL;
      }
    float *dst = V + r * cin;
    int64_t c = 0;
    for (; c + WV <= cin; c += WV) {
      wv_t d[16], v[16];
      for (int q = 0; q < 16; q++)
        d[q] = src[q] ? wv_load(src[q] + c) : (wv_t){0};
      WINO_IN_XFORM(wv_t, d, v);
      for (int q = 0; q < 16; q++)
        wv_store(dst + q * ldx + c, v[q]);
    }
    for (; c < cin; c++) {
      float d[16], v[16];
      for (int q = 0; q < 16; q++)
        d[q] = src[q] ? src[q][c] : 0.0f;
      WINO_IN_XFORM(float, d, v);
      for (int q = 0; q < 16; q++)
        dst[q * ldx + c] = v[q];
    }
  }
  /* Rows past the tiles (the last block's padding) read as zeros. */
  for (int q = 0; q < 16; q++)
    for (int64_t r = nt; r < w->ntile_rows; r++)
      memset(V + q * ldx + r * cin, 0, (size_t)cin * sizeof(float));
}

void WINO_OUT(const wino_geom *w, const float *Mo, int64_t t0, int64_t nt, float *out) {
  int64_t cout = w->cout, ldm = w->ntile_rows * cout;
  for (int64_t r = 0; r < nt; r++) {
    int64_t t = t0 + r, n = t / (w->th * w->tw), rem = t % (w->th * w->tw);
    int64_t oh0 = (rem / w->tw) * 2, ow0 = (rem % w->tw) * 2;
    float *dst[4];
    for (int a = 0; a < 2; a++)
      for (int b = 0; b < 2; b++)
        dst[a * 2 + b] = oh0 + a < w->oh && ow0 + b < w->ow
                             ? out + ((n * w->oh + oh0 + a) * w->ow + ow0 + b) * cout
                             : NULL;
    const float *src = Mo + r * cout;
    int64_t c = 0;
    for (; c + WV <= cout; c += WV) {
      wv_t m[16], y[4];
      for (int q = 0; q < 16; q++)
        m[q] = wv_load(src + q * ldm + c);
      WINO_OUT_XFORM(wv_t, m, y);
      for (int q = 0; q < 4; q++)
        if (dst[q])
          wv_store(dst[q] + c, y[q]);
    }
    for (; c < cout; c++) {
      float m[16], y[4];
      for (int q = 0; q < 16; q++)
        m[q] = src[q * ldm + c];
      WINO_OUT_XFORM(float, m, y);
      for (int q = 0; q < 4; q++)
        if (dst[q])
          dst[q][c] = y[q];
    }
  }
}
