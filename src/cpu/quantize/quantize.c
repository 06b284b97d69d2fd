/* quantize/quantize.c — the QUANTIZE and DEQUANTIZE kernels, bit-exact with
 * MLX's CPU results.
 *
 * affine quantize follows MLX's CPU kernel (mlx/backend/cpu/quantized.cpp,
 * quantize<T, U>): min / max and the scale in float, std::max / std::min
 * semantics (a NaN element is skipped by the min / max and packs as 0), rint
 * for the codes. The microscaled modes and every dequantize follow the graph
 * of ops MLX builds for them on the CPU (fp_quantize / fp_dequantize /
 * affine_dequantize in mlx/ops.cpp), rounding to the array's dtype after
 * each op as MLX does (formats.h). Work is split over groups on the pool. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"
#include "kernels.h"
#include "params_quantize.h"

/* ---- shared ------------------------------------------------------------------------------- */

const void *emlx_cpu_qz_contig(const emlx_array *a, void **owned) {
  *owned = NULL;
  if (a->size == 0 || (a->flags & EMLX_FLAG_ROW_CONTIG))
    return a->size == 0 ? NULL : emlx__data(a);
  size_t nb = (size_t)a->size * emlx_dtype_size(a->dtype);
  void *p = malloc(nb);
  if (!p)
    return EMLX_FAIL_NULL("%s: out of memory copying a %zu-byte input", "quantize", nb);
  emlx__copy_to_host(a, p);
  *owned = p;
  return p;
}

/* ---- quantize ----------------------------------------------------------------------------- */

typedef struct qz_ctx {
  const void *w;
  emlx_dtype dt;
  int group, bits, mode;
  uint8_t *wq; /* bytes of the packed output */
  void *scales, *biases;
} qz_ctx;

static void pack_codes(uint8_t *dst, const uint32_t *codes, int n, int bits) {
  memset(dst, 0, (size_t)n * (size_t)bits / 8);
  for (int i = 0; i < n; i++) {
    int64_t o = (int64_t)i * bits;
    uint32_t v = codes[i] << (o & 7);
    dst[o >> 3] |= (uint8_t)v;
    if ((o & 7) + bits > 8)
      dst[(o >> 3) + 1] |= (uint8_t)(v >> 8);
  }
}

static void affine_group(const qz_ctx *c, int64_t g) {
  int gs = c->group, bits = c->bits;
  float n_bins = (float)((1 << bits) - 1), eps = 1e-7f;
  float v[128];
  for (int j = 0; j < gs; j++)
    v[j] = emlx_qz_load(c->w, g * gs + j, c->dt);
  float w_min = INFINITY, w_max = -INFINITY;
  for (int j = 0; j < gs; j++) {
    w_max = w_max < v[j] ? v[j] : w_max; /* std::max(w_max, v) */
    w_min = v[j] < w_min ? v[j] : w_min; /* std::min(w_min, v) */
  }
  bool mask = fabsf(w_min) > fabsf(w_max);
  float range = (w_max - w_min) / n_bins;
  float scale = range < eps ? eps : range;
  scale = mask ? scale : -scale;
  float edge = mask ? w_min : w_max;
  float q0 = rintf(edge / scale);
  float bias = 0;
  if (q0 != 0) {
    scale = edge / q0;
    bias = edge;
  }
  uint32_t codes[128];
  for (int j = 0; j < gs; j++) {
    float q = rintf((v[j] - bias) / scale);
    q = q < 0.0f ? 0.0f : q;                /* std::max(q, 0) */
    q = n_bins < q ? n_bins : q;            /* std::min(q, n_bins) */
    codes[j] = isnan(q) ? 0u : (uint32_t)q; /* NaN packs as 0 (see above) */
  }
  pack_codes(c->wq + (size_t)g * (size_t)gs * (size_t)bits / 8, codes, gs, bits);
  emlx_qz_store(c->scales, g, c->dt, scale);
  emlx_qz_store(c->biases, g, c->dt, bias);
}

/* mxfp4 / mxfp8 / nvfp4, as MLX's fp_quantize graph computes them. */
static void fp_group(const qz_ctx *c, int64_t g) {
  int gs = c->group, bits = c->bits;
  emlx_dtype dt = c->dt;
  float v[32], amax = 0.0f;
  bool nan = false;
  for (int j = 0; j < gs; j++) {
    v[j] = emlx_qz_load(c->w, g * gs + j, dt);
    float a = fabsf(v[j]);
    nan |= isnan(a);
    amax = a > amax ? a : amax;
  }
  if (nan) /* MLX's max reduction propagates NaN */
    amax = NAN;
  float maxval = bits == 4 ? 6.0f : 448.0f;
  float s = emlx_qz_round(amax / maxval, dt);
  float q[32];
  uint8_t sbyte;
  bool f32_codes;
  if (gs == 16) { /* nvfp4: e4m3 scales, codes chosen in float32 */
    sbyte = emlx_qz_to_fp8(s);
    float sd = emlx_qz_round(emlx_qz_from_fp8(sbyte), dt);
    for (int j = 0; j < gs; j++)
      q[j] = emlx_qz_round(v[j] / sd, dt);
    f32_codes = true;
  } else { /* e8m0: e = ceil(log2(s)), exactly, 0 when s == 0 (MLX 0.32.4; the source of
            * 0.32.2 rounded log2 instead: the golden vectors say ceil) */
    float e = 0.0f;
    if (s != 0.0f) {
      int ex = 0;
      if (isfinite(s)) { /* exactly ceil(log2(s)) */
        float m = frexpf(s, &ex);
        ex = m == 0.5f ? ex - 1 : ex;
      } else {
        ex = INT32_MIN;
      }
      e = emlx_qz_round((float)ex, dt);
    }
    float p = emlx_qz_round(powf(2.0f, e), dt);
    for (int j = 0; j < gs; j++)
      q[j] = emlx_qz_round(v[j] / p, dt);
    sbyte = (uint8_t)emlx_qz_f2i(emlx_qz_round(e + 127.0f, dt));
    f32_codes = false;
  }
  uint8_t *dst = c->wq + (size_t)g * (size_t)gs * (size_t)bits / 8;
  if (bits == 8) {
    for (int j = 0; j < gs; j++)
      dst[j] = emlx_qz_to_fp8(q[j]);
  } else {
    uint32_t codes[32];
    for (int j = 0; j < gs; j++) { /* argmin |q - lut|: the first minimum; NaN -> 0 */
      uint32_t best = 0;
      float bd = 0.0f;
      for (uint32_t i = 0; i < 16; i++) {
        float d = q[j] - emlx_qz_fp4_lut[i];
        d = fabsf(f32_codes ? d : emlx_qz_round(d, dt));
        if (i == 0) {
          bd = d;
        } else if (d < bd) {
          bd = d;
          best = i;
        }
      }
      codes[j] = best;
    }
    pack_codes(dst, codes, gs, 4);
  }
  ((uint8_t *)c->scales)[g] = sbyte;
}

static void qz_range(void *ctx, int64_t begin, int64_t end) {
  const qz_ctx *c = ctx;
  for (int64_t g = begin; g < end; g++) {
    if (c->mode == EMLX_QUANT_AFFINE)
      affine_group(c, g);
    else
      fp_group(c, g);
  }
}

int emlx_cpu_quantize(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_quantize_params *p = emlx__params(node);
  const emlx_array *w = in[0];
  for (int i = 0; i < node->noutputs; i++)
    if (out[i] && emlx__array_alloc_data(out[i]) != 0)
      return -1;
  int64_t ngroups = w->size / p->group_size;
  if (ngroups == 0)
    return 0;
  void *owned;
  const void *wd = emlx_cpu_qz_contig(w, &owned);
  if (!wd)
    return -1;
  /* Outputs the caller released are still computed into scratch. */
  size_t wq_bytes = (size_t)w->size * (size_t)p->bits / 8;
  size_t s_bytes =
      (size_t)ngroups * emlx_dtype_size(p->mode == EMLX_QUANT_AFFINE ? w->dtype : EMLX_UINT8);
  void *tmp[3] = {NULL, NULL, NULL};
  void *dst[3];
  size_t sizes[3] = {wq_bytes, s_bytes, s_bytes};
  for (int i = 0; i < 3; i++) {
    if (i >= node->noutputs) {
      dst[i] = NULL;
      continue;
    }
    if (out[i]) {
      dst[i] = emlx__data(out[i]);
    } else {
      dst[i] = tmp[i] = malloc(sizes[i]);
      if (!tmp[i]) {
        free(tmp[0]);
        free(tmp[1]);
        free(owned);
        return EMLX_FAIL("quantize: out of memory");
      }
    }
  }
  if (p->mode == EMLX_QUANT_AFFINE && node->noutputs < 3) {
    dst[2] = tmp[2] = malloc(s_bytes);
    if (!tmp[2]) {
      free(tmp[0]);
      free(tmp[1]);
      free(owned);
      return EMLX_FAIL("quantize: out of memory");
    }
  }
  qz_ctx c = {.w = wd,
              .dt = w->dtype,
              .group = p->group_size,
              .bits = p->bits,
              .mode = p->mode,
              .wq = dst[0],
              .scales = dst[1],
              .biases = dst[2]};
  emlx__parallel_for(ngroups, 256, qz_range, &c);
  for (int i = 0; i < 3; i++)
    free(tmp[i]);
  free(owned);
  return 0;
}

/* ---- dequantize --------------------------------------------------------------------------- */

typedef struct dq_ctx {
  const uint8_t *wq;
  const void *scales, *biases;
  emlx_dtype sdt, bdt, pdt, odt; /* scales, biases, their promotion, output */
  int group, bits, mode;
  void *out;
} dq_ctx;

static void dq_range(void *ctx, int64_t begin, int64_t end) {
  const dq_ctx *c = ctx;
  int gs = c->group, bits = c->bits;
  for (int64_t g = begin; g < end; g++) {
    const uint8_t *row = c->wq + (size_t)g * (size_t)gs * (size_t)bits / 8;
    if (c->mode == EMLX_QUANT_AFFINE) {
      float s = emlx_qz_load(c->scales, g, c->sdt), b = emlx_qz_load(c->biases, g, c->bdt);
      for (int j = 0; j < gs; j++) {
        float q = (float)emlx_qz_code(row, j, bits);
        float prod = emlx_qz_round(q * s, c->sdt);
        float val = emlx_qz_round(prod + b, c->pdt);
        emlx_qz_store(c->out, g * gs + j, c->odt, emlx_qz_round(val, c->odt));
      }
      continue;
    }
    emlx_dtype t = c->odt;
    uint8_t sb = ((const uint8_t *)c->scales)[g];
    float scale;
    if (gs == 16) {
      scale = emlx_qz_round(emlx_qz_from_fp8(sb), t);
    } else {
      float e = emlx_qz_round(emlx_qz_round((float)sb, t) - 127.0f, t);
      scale = emlx_qz_round(powf(2.0f, e), t);
    }
    for (int j = 0; j < gs; j++) {
      float v = bits == 4 ? emlx_qz_fp4_lut[emlx_qz_code(row, j, 4)]
                          : emlx_qz_round(emlx_qz_from_fp8(row[j]), t);
      emlx_qz_store(c->out, g * gs + j, t, emlx_qz_round(v * scale, t));
    }
  }
}

int emlx_cpu_dequantize(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_quantize_params *p = emlx__params(node);
  if (emlx__array_alloc_data(out[0]) != 0)
    return -1;
  int64_t ngroups = out[0]->size / p->group_size;
  if (ngroups == 0)
    return 0;
  bool affine = p->mode == EMLX_QUANT_AFFINE;
  void *o0, *o1, *o2 = NULL;
  const void *wq = emlx_cpu_qz_contig(in[0], &o0);
  const void *sc = wq ? emlx_cpu_qz_contig(in[1], &o1) : NULL;
  const void *bi = NULL;
  if (sc && affine)
    bi = emlx_cpu_qz_contig(in[2], &o2);
  if (!wq || !sc || (affine && !bi)) {
    free(o0);
    free(wq ? o1 : NULL);
    free(o2);
    return -1;
  }
  dq_ctx c = {.wq = wq,
              .scales = sc,
              .biases = bi,
              .sdt = in[1]->dtype,
              .bdt = affine ? in[2]->dtype : EMLX_FLOAT32,
              .odt = out[0]->dtype,
              .group = p->group_size,
              .bits = p->bits,
              .mode = p->mode,
              .out = emlx__data(out[0])};
  c.pdt = affine ? emlx_promote_types(c.sdt, c.bdt) : c.odt;
  emlx__parallel_for(ngroups, 256, dq_range, &c);
  free(o0);
  free(o1);
  free(o2);
  return 0;
}
