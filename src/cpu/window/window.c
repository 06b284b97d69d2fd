/* window.c — the WINDOW_REDUCE kernel: sum / max / min / product over N-d
 * windows with strides, padding and dilation (semantics in
 * include/emlx/conv.h).
 *
 * Two drivers, both generated per dtype by macros and parallel over output
 * elements:
 *  - channels: when the last axis is untouched (window 1, stride 1, no
 *    padding or dilation, unit stride) — NHWC pooling — each output position
 *    accumulates whole channel blocks, an inner loop over contiguous memory
 *    the compiler vectorises (f32 max and min at the AVX2 and AVX-512
 *    levels: pool_avx2.c / pool_avx512.c, channels held in registers);
 *  - generic: any window; per output element, per axis, the range of taps
 *    inside the input is computed once (padding taps hold the identity and
 *    are skipped), then an odometer walks the taps.
 * Floats accumulate in double (sums and products round once; f32 max and
 * min, exact anyway, run in f32 in the channels driver), integers in 64
 * bits with wrapping arithmetic, bool as 0/1 (sum: any, product: all). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "isa.h"
#include "kernels.h"
#include "pool_f32.h"
#include "window_util.h"

#define WIN_CB 256 /* channels per block in the channels driver */

typedef struct win_ctx {
  int ndim;
  int op;
  win_axis ax[EMLX_MAX_NDIM];
  int64_t oshape[EMLX_MAX_NDIM];
  int64_t chans; /* channels driver: extent of the last axis */
  const void *in;
  void *out;
} win_ctx;

/* Scalar conversions for the generated kernels. */
#define LD_F16(x) ((double)emlx_f16_to_f32(x))
#define LD_BF16(x) ((double)emlx_bf16_to_f32(x))
#define LD_F(x) ((double)(x))
#define LD_I(x) ((int64_t)(x))
#define LD_U(x) ((uint64_t)(x))
#define LD_B(x) ((uint64_t)((x) != 0))
#define ST_F16(a) emlx__f64_to_f16(a)
#define ST_BF16(a) emlx__f64_to_bf16(a)
#define ST_F32(a) ((float)(a))
#define ST_F64(a) (a)
#define ST_B(a) ((uint8_t)((a) != 0))
#define ST_CAST(T) (T)

/* Accumulation by kind: F (double), I (int64, wrapping), U (uint64). */
#define ADD_F(a, v) ((a) + (v))
#define MUL_F(a, v) ((a) * (v))
#define MAX_F(a, v) (((v) > (a) || (v) != (v)) ? (v) : (a))
#define MIN_F(a, v) (((v) < (a) || (v) != (v)) ? (v) : (a))
#define ADD_I(a, v) ((int64_t)((uint64_t)(a) + (uint64_t)(v)))
#define MUL_I(a, v) ((int64_t)((uint64_t)(a) * (uint64_t)(v)))
#define MAX_I(a, v) ((v) > (a) ? (v) : (a))
#define MIN_I(a, v) ((v) < (a) ? (v) : (a))
#define ADD_U(a, v) ((a) + (v))
#define MUL_U(a, v) ((a) * (v))
#define MAX_U MAX_I
#define MIN_U MIN_I

/* Applies op to acc over n values p[0], p[step], ... */
#define WIN_RUN(K, ACC, LOAD, op, acc, p, n, step)                                                 \
  switch (op) {                                                                                    \
  case EMLX_WINDOW_SUM:                                                                            \
    for (int64_t t_ = 0; t_ < (n); t_++)                                                           \
      acc = ADD_##K(acc, (ACC)LOAD((p)[t_ * (step)]));                                             \
    break;                                                                                         \
  case EMLX_WINDOW_PRODUCT:                                                                        \
    for (int64_t t_ = 0; t_ < (n); t_++)                                                           \
      acc = MUL_##K(acc, (ACC)LOAD((p)[t_ * (step)]));                                             \
    break;                                                                                         \
  case EMLX_WINDOW_MAX:                                                                            \
    for (int64_t t_ = 0; t_ < (n); t_++) {                                                         \
      ACC v_ = (ACC)LOAD((p)[t_ * (step)]);                                                        \
      acc = MAX_##K(acc, v_);                                                                      \
    }                                                                                              \
    break;                                                                                         \
  default:                                                                                         \
    for (int64_t t_ = 0; t_ < (n); t_++) {                                                         \
      ACC v_ = (ACC)LOAD((p)[t_ * (step)]);                                                        \
      acc = MIN_##K(acc, v_);                                                                      \
    }                                                                                              \
    break;                                                                                         \
  }

/* Advances the tap odometer over axes [0, last) (the innermost moves
 * fastest); false when every tap was visited. */
static bool taps_next(const win_ctx *c, int last, const int64_t *kmin, const int64_t *kmax,
                      int64_t *kc, int64_t *off) {
  for (int i = last - 1; i >= 0; i--) {
    int64_t step = c->ax[i].d * c->ax[i].stride;
    *off += step;
    if (++kc[i] < kmax[i])
      return true;
    *off -= (kmax[i] - kmin[i]) * step;
    kc[i] = kmin[i];
  }
  return false;
}

/* The taps of output coordinates oc over axes [0, naxes): ranges and the
 * offset of the first tap; false when some axis has none. */
static bool taps_begin(const win_ctx *c, int naxes, const int64_t *oc, int64_t *kmin, int64_t *kmax,
                       int64_t *kc, int64_t *off) {
  *off = 0;
  for (int i = 0; i < naxes; i++) {
    int64_t first;
    if (!win_taps(&c->ax[i], oc[i], &kmin[i], &kmax[i], &first))
      return false;
    *off += first * c->ax[i].stride;
    kc[i] = kmin[i];
  }
  return true;
}

static void unravel(int64_t j, const int64_t *shape, int n, int64_t *idx) {
  for (int i = n - 1; i >= 0; i--) {
    idx[i] = shape[i] ? j % shape[i] : 0;
    j = shape[i] ? j / shape[i] : 0;
  }
}

static void odo_inc(int64_t *idx, const int64_t *shape, int n) {
  for (int i = n - 1; i >= 0; i--) {
    if (++idx[i] < shape[i])
      return;
    idx[i] = 0;
  }
}

#define WIN_KERNELS(SFX, T, K, ACC, LOAD, STORE, ID_MAX, ID_MIN)                                   \
  static ACC win_ident_##SFX(int op) {                                                             \
    return op == EMLX_WINDOW_SUM       ? (ACC)0                                                    \
           : op == EMLX_WINDOW_PRODUCT ? (ACC)1                                                    \
           : op == EMLX_WINDOW_MAX     ? (ACC)(ID_MAX)                                             \
                                       : (ACC)(ID_MIN);                                                \
  }                                                                                                \
  static void win_generic_##SFX(void *vc, int64_t j0, int64_t j1) {                                \
    const win_ctx *c = vc;                                                                         \
    const T *in = c->in;                                                                           \
    T *out = c->out;                                                                               \
    int r = c->ndim, last = r - 1;                                                                 \
    int64_t oc[EMLX_MAX_NDIM], kmin[EMLX_MAX_NDIM], kmax[EMLX_MAX_NDIM], kc[EMLX_MAX_NDIM];        \
    unravel(j0, c->oshape, r, oc);                                                                 \
    int64_t lstep = c->ax[last].d * c->ax[last].stride;                                            \
    for (int64_t j = j0; j < j1; j++) {                                                            \
      ACC acc = win_ident_##SFX(c->op);                                                            \
      int64_t off;                                                                                 \
      if (taps_begin(c, r, oc, kmin, kmax, kc, &off)) {                                            \
        int64_t cnt = kmax[last] - kmin[last];                                                     \
        do {                                                                                       \
          const T *p = in + off;                                                                   \
          WIN_RUN(K, ACC, LOAD, c->op, acc, p, cnt, lstep)                                         \
        } while (taps_next(c, last, kmin, kmax, kc, &off));                                        \
      }                                                                                            \
      out[j] = STORE(acc);                                                                         \
      odo_inc(oc, c->oshape, r);                                                                   \
    }                                                                                              \
  }                                                                                                \
  static void win_chan_##SFX(void *vc, int64_t j0, int64_t j1) {                                   \
    const win_ctx *c = vc;                                                                         \
    const T *in = c->in;                                                                           \
    T *out = c->out;                                                                               \
    int r = c->ndim - 1;                                                                           \
    int64_t C = c->chans;                                                                          \
    int64_t oc[EMLX_MAX_NDIM], kmin[EMLX_MAX_NDIM], kmax[EMLX_MAX_NDIM], kc[EMLX_MAX_NDIM];        \
    ACC acc[WIN_CB];                                                                               \
    ACC id = win_ident_##SFX(c->op);                                                               \
    unravel(j0, c->oshape, r, oc);                                                                 \
    for (int64_t j = j0; j < j1; j++) {                                                            \
      for (int64_t c0 = 0; c0 < C; c0 += WIN_CB) {                                                 \
        int64_t nb = C - c0 < WIN_CB ? C - c0 : WIN_CB;                                            \
        for (int64_t t = 0; t < nb; t++)                                                           \
          acc[t] = id;                                                                             \
        int64_t off;                                                                               \
        if (taps_begin(c, r, oc, kmin, kmax, kc, &off)) {                                          \
          do {                                                                                     \
            const T *p = in + off + c0;                                                            \
            switch (c->op) {                                                                       \
            case EMLX_WINDOW_SUM:                                                                  \
              for (int64_t t = 0; t < nb; t++)                                                     \
                acc[t] = ADD_##K(acc[t], (ACC)LOAD(p[t]));                                         \
              break;                                                                               \
            case EMLX_WINDOW_PRODUCT:                                                              \
              for (int64_t t = 0; t < nb; t++)                                                     \
                acc[t] = MUL_##K(acc[t], (ACC)LOAD(p[t]));                                         \
              break;                                                                               \
            case EMLX_WINDOW_MAX:                                                                  \
              for (int64_t t = 0; t < nb; t++) {                                                   \
                ACC v = (ACC)LOAD(p[t]);                                                           \
                acc[t] = MAX_##K(acc[t], v);                                                       \
              }                                                                                    \
              break;                                                                               \
            default:                                                                               \
              for (int64_t t = 0; t < nb; t++) {                                                   \
                ACC v = (ACC)LOAD(p[t]);                                                           \
                acc[t] = MIN_##K(acc[t], v);                                                       \
              }                                                                                    \
              break;                                                                               \
            }                                                                                      \
          } while (taps_next(c, r, kmin, kmax, kc, &off));                                         \
        }                                                                                          \
        T *o = out + j * C + c0;                                                                   \
        for (int64_t t = 0; t < nb; t++)                                                           \
          o[t] = STORE(acc[t]);                                                                    \
      }                                                                                            \
      odo_inc(oc, c->oshape, r);                                                                   \
    }                                                                                              \
  }

WIN_KERNELS(b, uint8_t, U, uint64_t, LD_B, ST_B, 0, 1)
WIN_KERNELS(u8, uint8_t, U, uint64_t, LD_U, ST_CAST(uint8_t), 0, UINT8_MAX)
WIN_KERNELS(u16, uint16_t, U, uint64_t, LD_U, ST_CAST(uint16_t), 0, UINT16_MAX)
WIN_KERNELS(u32, uint32_t, U, uint64_t, LD_U, ST_CAST(uint32_t), 0, UINT32_MAX)
WIN_KERNELS(u64, uint64_t, U, uint64_t, LD_U, ST_CAST(uint64_t), 0, UINT64_MAX)
WIN_KERNELS(i8, int8_t, I, int64_t, LD_I, ST_CAST(int8_t), INT8_MIN, INT8_MAX)
WIN_KERNELS(i16, int16_t, I, int64_t, LD_I, ST_CAST(int16_t), INT16_MIN, INT16_MAX)
WIN_KERNELS(i32, int32_t, I, int64_t, LD_I, ST_CAST(int32_t), INT32_MIN, INT32_MAX)
WIN_KERNELS(i64, int64_t, I, int64_t, LD_I, ST_CAST(int64_t), INT64_MIN, INT64_MAX)
WIN_KERNELS(f16, uint16_t, F, double, LD_F16, ST_F16, -INFINITY, INFINITY)
WIN_KERNELS(bf16, uint16_t, F, double, LD_BF16, ST_BF16, -INFINITY, INFINITY)
WIN_KERNELS(f32, float, F, double, LD_F, ST_F32, -INFINITY, INFINITY)
WIN_KERNELS(f64, double, F, double, LD_F, ST_F64, -INFINITY, INFINITY)

/* f32 max and min in the channels driver: the result is one of the inputs,
 * so they run in f32 (not double, as the generated kernels do), four or
 * more lanes per instruction, the same values bit for bit (a NaN tap
 * wins, as MAX_F / MIN_F say). */
#define WIN_CHAN_F32(NAME, BETTER, IDENT)                                                          \
  static void NAME(void *vc, int64_t j0, int64_t j1) {                                             \
    const win_ctx *c = vc;                                                                         \
    const float *in = c->in;                                                                       \
    float *out = c->out;                                                                           \
    int r = c->ndim - 1;                                                                           \
    int64_t C = c->chans;                                                                          \
    int64_t oc[EMLX_MAX_NDIM], kmin[EMLX_MAX_NDIM], kmax[EMLX_MAX_NDIM], kc[EMLX_MAX_NDIM];        \
    unravel(j0, c->oshape, r, oc);                                                                 \
    for (int64_t j = j0; j < j1; j++) {                                                            \
      float *o = out + j * C;                                                                      \
      for (int64_t t = 0; t < C; t++)                                                              \
        o[t] = (IDENT);                                                                            \
      int64_t off;                                                                                 \
      if (taps_begin(c, r, oc, kmin, kmax, kc, &off)) {                                            \
        do {                                                                                       \
          const float *p = in + off;                                                               \
          for (int64_t t = 0; t < C; t++) {                                                        \
            float v = p[t], a = o[t];                                                              \
            o[t] = (BETTER(v, a) || v != v) ? v : a;                                               \
          }                                                                                        \
        } while (taps_next(c, r, kmin, kmax, kc, &off));                                           \
      }                                                                                            \
      odo_inc(oc, c->oshape, r);                                                                   \
    }                                                                                              \
  }
/* The same through a per-ISA fold (pool_f32.h) that keeps the channels in
 * registers across the taps: the taps' pointers are collected, POOL_BATCH
 * at a time. */
#define POOL_BATCH 32
typedef struct pool_ctx {
  win_ctx w;
  emlx_pool_fold_f32 fold;
  bool is_max;
} pool_ctx;

static void win_chan_pool_f32(void *vc, int64_t j0, int64_t j1) {
  const pool_ctx *pc = vc;
  const win_ctx *c = &pc->w;
  const float *in = c->in;
  float *out = c->out;
  int r = c->ndim - 1;
  int64_t C = c->chans;
  int64_t oc[EMLX_MAX_NDIM], kmin[EMLX_MAX_NDIM], kmax[EMLX_MAX_NDIM], kc[EMLX_MAX_NDIM];
  const float *taps[POOL_BATCH];
  unravel(j0, c->oshape, r, oc);
  for (int64_t j = j0; j < j1; j++) {
    float *o = out + j * C;
    int64_t off;
    int n = 0;
    bool first = true;
    if (taps_begin(c, r, oc, kmin, kmax, kc, &off)) {
      do {
        taps[n++] = in + off;
        if (n == POOL_BATCH) {
          pc->fold(taps, n, C, o, first, pc->is_max);
          first = false;
          n = 0;
        }
      } while (taps_next(c, r, kmin, kmax, kc, &off));
    }
    if (n > 0 || first)
      pc->fold(taps, n, C, o, first, pc->is_max);
    odo_inc(oc, c->oshape, r);
  }
}

#define WIN_GT(v, a) ((v) > (a))
#define WIN_LT(v, a) ((v) < (a))
WIN_CHAN_F32(win_chan_max_f32, WIN_GT, -INFINITY)
WIN_CHAN_F32(win_chan_min_f32, WIN_LT, INFINITY)

typedef struct win_fns {
  emlx_range_fn generic, chan;
} win_fns;

static const win_fns win_table[EMLX_DTYPE_COUNT] = {
    [EMLX_BOOL] = {win_generic_b, win_chan_b},
    [EMLX_UINT8] = {win_generic_u8, win_chan_u8},
    [EMLX_UINT16] = {win_generic_u16, win_chan_u16},
    [EMLX_UINT32] = {win_generic_u32, win_chan_u32},
    [EMLX_UINT64] = {win_generic_u64, win_chan_u64},
    [EMLX_INT8] = {win_generic_i8, win_chan_i8},
    [EMLX_INT16] = {win_generic_i16, win_chan_i16},
    [EMLX_INT32] = {win_generic_i32, win_chan_i32},
    [EMLX_INT64] = {win_generic_i64, win_chan_i64},
    [EMLX_FLOAT16] = {win_generic_f16, win_chan_f16},
    [EMLX_BFLOAT16] = {win_generic_bf16, win_chan_bf16},
    [EMLX_FLOAT32] = {win_generic_f32, win_chan_f32},
    [EMLX_FLOAT64] = {win_generic_f64, win_chan_f64},
};

int emlx_cpu_window_reduce(const emlx_node *node, emlx_array *const *inputs,
                           emlx_array *const *outputs) {
  const emlx_window_params *p = emlx__params(node);
  emlx_array *a = inputs[0], *out = outputs[0];
  if (!out)
    return 0;
  const win_fns *fns = &win_table[a->dtype];
  if (!fns->generic)
    return EMLX_FAIL("window_reduce: unsupported dtype %s", emlx_dtype_name(a->dtype));
  if (emlx__array_alloc_data(out) != 0)
    return -1;
  if (out->size == 0)
    return 0;
  win_ctx c;
  memset(&c, 0, sizeof c);
  c.op = p->op;
  c.in = emlx__data(a);
  c.out = emlx__data(out);
  if (p->ndim == 0) { /* a scalar is its own (one-element) window */
    c.ndim = 1;
    c.ax[0] = (win_axis){.n = 1, .stride = 0, .w = 1, .s = 1, .lo = 0, .d = 1};
    c.oshape[0] = 1;
  } else {
    c.ndim = p->ndim;
    win_axes(p, a, c.ax);
    memcpy(c.oshape, out->shape, (size_t)out->ndim * sizeof(int64_t));
  }
  int64_t taps = 1;
  for (int i = 0; i < c.ndim; i++)
    taps *= c.ax[i].w;
  const win_axis *l = &c.ax[c.ndim - 1];
  bool chan = c.ndim >= 2 && l->w == 1 && l->s == 1 && l->lo == 0 && l->d == 1 && l->stride == 1 &&
              out->shape[c.ndim - 1] == l->n;
  if (chan) {
    c.chans = l->n;
    int64_t rows = out->size / c.chans;
    int64_t grain = 65536 / (taps * c.chans) + 1;
    emlx_range_fn fn = fns->chan;
    bool minmax = c.op == EMLX_WINDOW_MAX || c.op == EMLX_WINDOW_MIN;
    if (a->dtype == EMLX_FLOAT32 && minmax) {
      const char *isa = emlx_cpu_isa_get()->name;
      pool_ctx pc = {.w = c, .is_max = c.op == EMLX_WINDOW_MAX};
      pc.fold = strcmp(isa, "avx512") == 0 ? emlx_pool_fold_f32_avx512
                : strcmp(isa, "avx2") == 0 ? emlx_pool_fold_f32_avx2
                                           : NULL;
      if (pc.fold) {
        emlx__parallel_for(rows, grain, win_chan_pool_f32, &pc);
        return 0;
      }
      fn = c.op == EMLX_WINDOW_MAX ? win_chan_max_f32 : win_chan_min_f32;
    }
    emlx__parallel_for(rows, grain, fn, &c);
  } else {
    int64_t grain = 65536 / taps + 1;
    emlx__parallel_for(out->size, grain, fns->generic, &c);
  }
  return 0;
}
