/* quantize/qmm.c — the QMM (quantized_matmul) and GATHER_QMM kernels: the
 * drivers and the reference kernel.
 *
 * Both reduce to a list of matrix products out[i] = x[xi[i]] . W[wi[i]]
 * (QMM: the broadcast of x's and w's batch axes; GATHER_QMM: the index
 * arrays, checked against their bounds). x is read as float32 rows (a
 * float16 / bfloat16 x is converted once). Each product is first offered to
 * the fast SIMD kernels (emlx_cpu_qmm_fast / emlx_cpu_gather_qmm_fast of
 * qmm_fast*.c, contract in qmm_fast.h); what they decline
 * runs here: tiles of W are dequantized into a small block in scratch (never
 * the whole matrix) and reused across every row of x, one task per (matrix,
 * tile of N) on the pool, accumulating in float32. A bfloat16 x of
 * EMLX_QMM_TILE_MIN_M rows or more (transpose) is first offered, as it is,
 * to the bfloat16 tile kernel (qmm_tile.h: vdpbf16ps on the codes, scaled
 * per group); what it declines is converted to float32 and goes on as
 * above. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"
#include "kernels.h"
#include "params_quantize.h"
#include "qmm_tile.h"

#if defined(__has_include)
#if __has_include("qmm_fast.h")
#include "qmm_fast.h"
#define EMLX_QMM_HAVE_FAST 1
#endif
#endif

#ifndef EMLX_QMM_HAVE_FAST
/* The fast kernels are not in this tree: the descriptors of the contract,
 * and hooks that decline every product. */
typedef struct emlx_qmm_desc {
  const float *x;
  int64_t ldx;
  int64_t M, N, K;
  const uint32_t *w;
  const void *scales;
  const void *biases;
  emlx_dtype scale_dtype;
  int group_size, bits;
  int mode;
  bool transpose;
  float *out;
  int64_t ldo;
  bool threaded;
} emlx_qmm_desc;
typedef struct emlx_gqmm_desc {
  emlx_qmm_desc q;
  int64_t count;
  const uint32_t *lhs;
  const uint32_t *rhs;
  int64_t x_stride, w_stride, s_stride, o_stride, n_x, n_experts;
  bool sorted;
} emlx_gqmm_desc;
static bool emlx_cpu_qmm_fast(const emlx_qmm_desc *d) {
  (void)d;
  return false;
}
static bool emlx_cpu_gather_qmm_fast(const emlx_gqmm_desc *d) {
  (void)d;
  return false;
}
#endif

_Static_assert(EMLX_QUANT_AFFINE == 0 && EMLX_QUANT_MXFP4 == 1 && EMLX_QUANT_MXFP8 == 2 &&
                   EMLX_QUANT_NVFP4 == 3,
               "mode numbers are shared with the fast kernels");

/* ---- the reference kernel ------------------------------------------------------------------ */

typedef struct ref_ctx {
  const float *x;     /* all x matrices, [Bx][M][K] f32 */
  const uint8_t *w;   /* all packed matrices */
  const void *scales; /* [E][rows][cols / gs] */
  const void *biases;
  emlx_dtype sdt;
  int gs, bits, mode, transpose;
  int64_t M, N, K, rows, cols; /* packed matrix: rows x cols logical values */
  int64_t nmat, ntiles, tile;  /* products; tiles of N per product; tile width */
  const int64_t *xi, *wi;      /* product i: x matrix, w matrix */
  float *out;                  /* [nmat][M][N] f32 */
  _Atomic int failed;          /* a task could not get its scratch */
} ref_ctx;

/* Logical values c0 .. c0 + n of row r of packed matrix m. */
static void deq_row(const ref_ctx *c, int64_t m, int64_t r, int64_t c0, int64_t n, float *dst) {
  int64_t row_bytes = c->cols * c->bits / 8, ng = c->cols / c->gs;
  const uint8_t *row = c->w + (m * c->rows + r) * row_bytes;
  int64_t sbase = (m * c->rows + r) * ng;
  for (int64_t j = 0; j < n; j++) {
    int64_t col = c0 + j, g = sbase + col / c->gs;
    uint32_t code = emlx_qz_code(row, col, c->bits);
    float v;
    switch (c->mode) {
    case EMLX_QUANT_AFFINE:
      v = emlx_qz_load(c->scales, g, c->sdt) * (float)code + emlx_qz_load(c->biases, g, c->sdt);
      break;
    case EMLX_QUANT_MXFP4:
      v = emlx_qz_fp4_lut[code] * emlx_qz_e8m0(((const uint8_t *)c->scales)[g]);
      break;
    case EMLX_QUANT_MXFP8:
      v = emlx_qz_from_fp8((uint8_t)code) * emlx_qz_e8m0(((const uint8_t *)c->scales)[g]);
      break;
    default: /* nvfp4 */
      v = emlx_qz_fp4_lut[code] * emlx_qz_from_fp8(((const uint8_t *)c->scales)[g]);
      break;
    }
    dst[j] = v;
  }
}

enum { REF_KB_T = 256, REF_NB_T = 16, REF_KB_N = 64, REF_NB_N = 64 };

static void ref_task(const ref_ctx *c, int64_t t, float *blk, float *acc) {
  int64_t i = t / c->ntiles, n0 = (t % c->ntiles) * c->tile;
  int64_t nb = c->N - n0 < c->tile ? c->N - n0 : c->tile;
  const float *x = c->x + c->xi[i] * c->M * c->K;
  int64_t wm = c->wi[i];
  memset(acc, 0, (size_t)(c->M * nb) * sizeof *acc);
  if (c->transpose) { /* W row n = packed row n (K values) */
    for (int64_t k0 = 0; k0 < c->K; k0 += REF_KB_T) {
      int64_t kb = c->K - k0 < REF_KB_T ? c->K - k0 : REF_KB_T;
      for (int64_t j = 0; j < nb; j++)
        deq_row(c, wm, n0 + j, k0, kb, blk + j * REF_KB_T);
      for (int64_t m = 0; m < c->M; m++) {
        const float *xr = x + m * c->K + k0;
        for (int64_t j = 0; j < nb; j++) {
          const float *br = blk + j * REF_KB_T;
          float s = 0.0f;
          for (int64_t k = 0; k < kb; k++)
            s += xr[k] * br[k];
          acc[m * nb + j] += s;
        }
      }
    }
  } else { /* packed row k holds W[k][0..N) */
    for (int64_t k0 = 0; k0 < c->K; k0 += REF_KB_N) {
      int64_t kb = c->K - k0 < REF_KB_N ? c->K - k0 : REF_KB_N;
      for (int64_t kk = 0; kk < kb; kk++)
        deq_row(c, wm, k0 + kk, n0, nb, blk + kk * REF_NB_N);
      for (int64_t m = 0; m < c->M; m++) {
        const float *xr = x + m * c->K + k0;
        float *ar = acc + m * nb;
        for (int64_t kk = 0; kk < kb; kk++) {
          const float *br = blk + kk * REF_NB_N;
          float xv = xr[kk];
          for (int64_t j = 0; j < nb; j++)
            ar[j] += xv * br[j];
        }
      }
    }
  }
  float *o = c->out + i * c->M * c->N;
  for (int64_t m = 0; m < c->M; m++)
    memcpy(o + m * c->N + n0, acc + m * nb, (size_t)nb * sizeof *o);
}

static void ref_range(void *ctx, int64_t begin, int64_t end) {
  const ref_ctx *c = ctx;
  size_t blk_n = (size_t)(c->transpose ? REF_KB_T * REF_NB_T : REF_KB_N * REF_NB_N);
  float *blk = emlx__scratch_get((blk_n + (size_t)(c->M * c->tile)) * sizeof(float));
  if (!blk) { /* scratch has set the error */
    atomic_store(&((ref_ctx *)ctx)->failed, 1);
    return;
  }
  float *acc = blk + blk_n;
  for (int64_t t = begin; t < end; t++)
    ref_task(c, t, blk, acc);
  emlx__scratch_put(blk);
}

/* ---- the shared driver --------------------------------------------------------------------- */

typedef struct qmm_inputs {
  void *own[5];
  float *xf; /* x as f32, [Bx][M][K]; owned when own[4] */
  const uint32_t *w;
  const void *scales, *biases;
} qmm_inputs;

static void inputs_free(qmm_inputs *q) {
  for (int i = 0; i < 5; i++)
    free(q->own[i]);
}

/* x as f32 rows, w / scales / biases row-major. */
static int inputs_load(emlx_array *const *in, bool affine, qmm_inputs *q) {
  memset(q, 0, sizeof *q);
  const emlx_array *x = in[0];
  if (x->dtype == EMLX_FLOAT32 && (x->flags & EMLX_FLAG_ROW_CONTIG)) {
    q->xf = emlx__data(x);
  } else {
    void *tmp;
    const void *xd = emlx_cpu_qz_contig(x, &tmp);
    if (!xd)
      return -1;
    float *xf = malloc((size_t)x->size * sizeof *xf);
    if (!xf) {
      free(tmp);
      return EMLX_FAIL("quantized_matmul: out of memory converting x");
    }
    for (int64_t i = 0; i < x->size; i++)
      xf[i] = emlx_qz_load(xd, i, x->dtype);
    free(tmp);
    q->xf = xf;
    q->own[4] = xf;
  }
  q->w = emlx_cpu_qz_contig(in[1], &q->own[0]);
  q->scales = q->w ? emlx_cpu_qz_contig(in[2], &q->own[1]) : NULL;
  if (q->scales && affine)
    q->biases = emlx_cpu_qz_contig(in[3], &q->own[2]);
  if (!q->w || !q->scales || (affine && !q->biases)) {
    inputs_free(q);
    return -1;
  }
  return 0;
}

typedef struct qmm_geom {
  int64_t M, N, K, rows, cols;
} qmm_geom;

static qmm_geom geom_of(const emlx_quantize_params *p, const emlx_array *x, const emlx_array *w) {
  qmm_geom g;
  g.rows = w->shape[w->ndim - 2];
  g.cols = w->shape[w->ndim - 1] * 32 / p->bits;
  g.M = x->shape[x->ndim - 2];
  g.K = x->shape[x->ndim - 1];
  g.N = p->transpose ? g.rows : g.cols;
  return g;
}

static emlx_qmm_desc desc_of(const emlx_quantize_params *p, const qmm_geom *g, const qmm_inputs *q,
                             emlx_dtype sdt, float *out) {
  emlx_qmm_desc d;
  memset(&d, 0, sizeof d);
  d.x = q->xf;
  d.ldx = g->K;
  d.M = g->M;
  d.N = g->N;
  d.K = g->K;
  d.w = q->w;
  d.scales = q->scales;
  d.biases = q->biases;
  d.scale_dtype = sdt;
  d.group_size = p->group_size;
  d.bits = p->bits;
  d.mode = p->mode;
  d.transpose = p->transpose != 0;
  d.out = out;
  d.ldo = g->N;
  d.threaded = true;
  return d;
}

static int run_reference(const emlx_quantize_params *p, const qmm_geom *g, const qmm_inputs *q,
                         emlx_dtype sdt, int64_t nmat, const int64_t *xi, const int64_t *wi,
                         float *out) {
  ref_ctx c = {.x = q->xf,
               .w = (const uint8_t *)q->w,
               .scales = q->scales,
               .biases = q->biases,
               .sdt = sdt,
               .gs = p->group_size,
               .bits = p->bits,
               .mode = p->mode,
               .transpose = p->transpose,
               .M = g->M,
               .N = g->N,
               .K = g->K,
               .rows = g->rows,
               .cols = g->cols,
               .nmat = nmat,
               .xi = xi,
               .wi = wi,
               .out = out};
  c.tile = p->transpose ? REF_NB_T : REF_NB_N;
  c.ntiles = (g->N + c.tile - 1) / c.tile;
  int64_t work = g->M * g->K * c.tile; /* per task */
  int64_t grain = work >= (1 << 16) ? 1 : (1 << 16) / (work + 1) + 1;
  atomic_init(&c.failed, 0);
  emlx__parallel_for(nmat * c.ntiles, grain, ref_range, &c);
  return atomic_load(&c.failed) ? -1 : 0;
}

/* Gives out its data; *f32 is where the products go (the output itself, or
 * a temporary to round from). */
static int out_begin(emlx_array *out, float **f32) {
  if (emlx__array_alloc_data(out) != 0)
    return -1;
  if (out->dtype == EMLX_FLOAT32) {
    *f32 = out->size ? emlx__data(out) : NULL;
    return 0;
  }
  *f32 = malloc((size_t)(out->size ? out->size : 1) * sizeof(float));
  return *f32 ? 0 : EMLX_FAIL("quantized_matmul: out of memory");
}

static void out_end(emlx_array *out, float *f32) {
  if (out->dtype == EMLX_FLOAT32)
    return;
  void *o = emlx__data(out);
  for (int64_t i = 0; i < out->size; i++)
    emlx_qz_store(o, i, out->dtype, f32[i]);
  free(f32);
}

/* Flat index, in an array of batch shape (bshape, nb dims, right-aligned
 * against the output's batch shape oshape of no dims), of output matrix o. */
static int64_t batch_index(int64_t o, const int64_t *oshape, int no, const int64_t *bshape,
                           int nb) {
  int64_t idx = 0, mul = 1;
  for (int d = no - 1, e = nb - 1; d >= 0; d--, e--) {
    int64_t coord = o % oshape[d];
    o /= oshape[d];
    if (e >= 0) {
      if (bshape[e] != 1)
        idx += coord * mul;
      mul *= bshape[e];
    }
  }
  return idx;
}

/* A bfloat16 x of EMLX_QMM_TILE_MIN_M rows or more, transpose: every
 * product through the bfloat16 tile kernel. 1: all written; 0: declined
 * (by the first product: nothing written; the caller runs the f32 paths);
 * -1: an error is set. */
static int try_tile_bf16(const emlx_quantize_params *p, const qmm_geom *g, emlx_array *const *in,
                         int64_t nmat, const int64_t *xi, const int64_t *wi, float *out) {
  if (in[0]->dtype != EMLX_BFLOAT16 || !p->transpose || g->M < EMLX_QMM_TILE_MIN_M)
    return 0;
  bool affine = p->mode == EMLX_QUANT_AFFINE;
  qmm_inputs q;
  memset(&q, 0, sizeof q);
  const uint16_t *xb = emlx_cpu_qz_contig(in[0], &q.own[3]);
  q.w = xb ? emlx_cpu_qz_contig(in[1], &q.own[0]) : NULL;
  q.scales = q.w ? emlx_cpu_qz_contig(in[2], &q.own[1]) : NULL;
  if (q.scales && affine)
    q.biases = emlx_cpu_qz_contig(in[3], &q.own[2]);
  if (!xb || !q.w || !q.scales || (affine && !q.biases)) {
    inputs_free(&q);
    return -1;
  }
  emlx_dtype sdt = in[2]->dtype;
  int64_t wmat = g->rows * g->cols * p->bits / 32, smat = g->rows * (g->cols / p->group_size);
  size_t ses = emlx_dtype_size(sdt);
  int rc = 1;
  for (int64_t i = 0; i < nmat; i++) {
    emlx_qmm_desc d = desc_of(p, g, &q, sdt, out + i * g->M * g->N);
    d.x = NULL;
    d.w = q.w + wi[i] * wmat;
    d.scales = (const char *)q.scales + (size_t)(wi[i] * smat) * ses;
    d.biases = affine ? (const char *)q.biases + (size_t)(wi[i] * smat) * ses : NULL;
    if (emlx_cpu_qmm_tile(&d, xb + xi[i] * g->M * g->K))
      continue;
    if (i == 0) { /* declined: the f32 paths take every product */
      rc = 0;
      break;
    }
    /* declined after accepting (an x it declines, or no scratch): this product in f32 */
    float *xf = malloc((size_t)(g->M * g->K) * sizeof *xf);
    if (!xf) {
      rc = EMLX_FAIL("quantized_matmul: out of memory converting x");
      break;
    }
    for (int64_t j = 0; j < g->M * g->K; j++)
      xf[j] = emlx_qz_load(xb + xi[i] * g->M * g->K, j, EMLX_BFLOAT16);
    qmm_inputs qi = q;
    qi.xf = xf;
    int64_t zero = 0;
    d.x = xf;
    if (!emlx_cpu_qmm_fast(&d) &&
        run_reference(p, g, &qi, sdt, 1, &zero, wi + i, out + i * g->M * g->N) != 0)
      rc = -1;
    free(xf);
    if (rc < 0)
      break;
  }
  inputs_free(&q);
  return rc;
}

int emlx_cpu_qmm(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_quantize_params *p = emlx__params(node);
  const emlx_array *x = in[0], *w = in[1];
  emlx_array *o = out[0];
  float *of;
  if (out_begin(o, &of) != 0)
    return -1;
  if (o->size == 0)
    return 0;
  qmm_geom g = geom_of(p, x, w);
  bool affine = p->mode == EMLX_QUANT_AFFINE;
  int64_t nmat = o->size / (g.M * g.N);
  int ob = o->ndim - 2, xb = x->ndim - 2, wb = w->ndim - 2;
  int64_t *xi = malloc((size_t)nmat * 2 * sizeof *xi);
  qmm_inputs q;
  if (!xi) {
    out_end(o, of);
    return EMLX_FAIL("quantized_matmul: out of memory");
  }
  int64_t *wi = xi + nmat;
  for (int64_t i = 0; i < nmat; i++) {
    xi[i] = batch_index(i, o->shape, ob, x->shape, xb);
    wi[i] = batch_index(i, o->shape, ob, w->shape, wb);
  }
  if (g.K == 0) { /* nothing to read: zeros */
    memset(of, 0, (size_t)o->size * sizeof *of);
    free(xi);
    out_end(o, of);
    return 0;
  }
  int tr = try_tile_bf16(p, &g, in, nmat, xi, wi, of);
  if (tr != 0) { /* done (1) or failed (-1) */
    free(xi);
    out_end(o, of);
    return tr > 0 ? 0 : -1;
  }
  if (inputs_load(in, affine, &q) != 0) {
    free(xi);
    out_end(o, of);
    return -1;
  }
  emlx_dtype sdt = in[2]->dtype;
  int64_t wmat = g.rows * g.cols * p->bits / 32, smat = g.rows * (g.cols / p->group_size);
  size_t ses = emlx_dtype_size(sdt);
  bool fast = true;
  int rc = 0;
  for (int64_t i = 0; i < nmat && fast; i++) {
    emlx_qmm_desc d = desc_of(p, &g, &q, sdt, of + i * g.M * g.N);
    d.x = q.xf + xi[i] * g.M * g.K;
    d.w = q.w + wi[i] * wmat;
    d.scales = (const char *)q.scales + (size_t)(wi[i] * smat) * ses;
    d.biases = affine ? (const char *)q.biases + (size_t)(wi[i] * smat) * ses : NULL;
    fast = emlx_cpu_qmm_fast(&d);
    if (!fast && i > 0) { /* declined after accepting: finish the rest here */
      rc = run_reference(p, &g, &q, sdt, nmat - i, xi + i, wi + i, of + i * g.M * g.N);
      fast = true;
      break;
    }
  }
  if (!fast)
    rc = run_reference(p, &g, &q, sdt, nmat, xi, wi, of);
  inputs_free(&q);
  free(xi);
  out_end(o, of);
  return rc;
}

int emlx_cpu_gather_qmm(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_quantize_params *p = emlx__params(node);
  const emlx_array *x = in[0], *w = in[1];
  bool affine = p->mode == EMLX_QUANT_AFFINE;
  const emlx_array *lhs = in[affine ? 4 : 3], *rhs = in[affine ? 5 : 4];
  emlx_array *o = out[0];
  float *of;
  if (out_begin(o, &of) != 0)
    return -1;
  if (o->size == 0)
    return 0;
  qmm_geom g = geom_of(p, x, w);
  int64_t count = lhs->size;
  int64_t bx = 1, ne = 1;
  for (int d = 0; d < x->ndim - 2; d++)
    bx *= x->shape[d];
  for (int d = 0; d < w->ndim - 2; d++)
    ne *= w->shape[d];
  /* Indices: both arrays to int64, checked, then to uint32 for the fast side. */
  size_t es_l = emlx_dtype_size(lhs->dtype), es_r = emlx_dtype_size(rhs->dtype);
  char *raw = malloc((size_t)count * (es_l + es_r));
  int64_t *xi = malloc((size_t)count * 2 * sizeof *xi);
  uint32_t *u = malloc((size_t)count * 2 * sizeof *u);
  int rc = 0;
  if (!raw || !xi || !u) {
    rc = EMLX_FAIL("gather_qmm: out of memory");
    goto done;
  }
  int64_t *wi = xi + count;
  emlx__copy_to_host(lhs, raw);
  emlx__copy_to_host(rhs, raw + (size_t)count * es_l);
  for (int64_t i = 0; i < count; i++) {
    int64_t a = emlx__load_i64(raw + (size_t)i * es_l, lhs->dtype);
    int64_t b = emlx__load_i64(raw + (size_t)count * es_l + (size_t)i * es_r, rhs->dtype);
    if (a < 0 || a >= bx) {
      rc = EMLX_FAIL("gather_qmm: lhs_indices[%lld] = %lld is out of range for %lld matrices of x",
                     (long long)i, (long long)a, (long long)bx);
      goto done;
    }
    if (b < 0 || b >= ne) {
      rc = EMLX_FAIL("gather_qmm: rhs_indices[%lld] = %lld is out of range for %lld experts in w",
                     (long long)i, (long long)b, (long long)ne);
      goto done;
    }
    xi[i] = a;
    wi[i] = b;
    u[i] = (uint32_t)a;
    u[count + i] = (uint32_t)b;
  }
  if (g.K == 0) {
    memset(of, 0, (size_t)o->size * sizeof *of);
    goto done;
  }
  qmm_inputs q;
  if (inputs_load(in, affine, &q) != 0) {
    rc = -1;
    goto done;
  }
  emlx_dtype sdt = in[2]->dtype;
  emlx_gqmm_desc d;
  memset(&d, 0, sizeof d);
  d.q = desc_of(p, &g, &q, sdt, of);
  d.count = count;
  d.lhs = u;
  d.rhs = u + count;
  d.x_stride = g.M * g.K;
  d.w_stride = g.rows * g.cols * p->bits / 32;
  d.s_stride = g.rows * (g.cols / p->group_size);
  d.o_stride = g.M * g.N;
  d.n_x = bx;
  d.n_experts = ne;
  d.sorted = p->sorted != 0;
  if (!emlx_cpu_gather_qmm_fast(&d))
    rc = run_reference(p, &g, &q, sdt, count, xi, wi, of);
  inputs_free(&q);
done:
  free(raw);
  free(xi);
  free(u);
  if (rc != 0 && o->dtype != EMLX_FLOAT32) {
    free(of);
    return rc;
  }
  if (rc == 0)
    out_end(o, of);
  return rc;
}
