/* quantize.c — constructors of the quantize family (include/emlx/quantize.h):
 * quantize, dequantize, quantized_matmul, gather_qmm.
 *
 * Each validates its inputs with MLX's rules (and a few more, so that
 * nothing reaches a kernel that it could misread), infers shapes and dtypes
 * and makes one node; the kernels are in src/cpu/quantize/. For
 * quantized_matmul the batch axes of x and w broadcast against each other
 * (a 2-D w serves every matrix of x; a 2-D x meets every matrix of a batched
 * w, where MLX would use only w's first matrix); the kernel maps output
 * matrices back to their operands, so nothing is broadcast in memory. */
#include <string.h>

#include "ops_util.h"
#include "params_quantize.h"

static const char *const mode_names[EMLX_QUANT_MODE_COUNT] = {"affine", "mxfp4", "mxfp8", "nvfp4"};

int emlx_quantization_mode_parse(const char *name, emlx_quantization_mode *mode) {
  if (!name || !mode)
    return EMLX_FAIL("quantization mode: NULL argument");
  for (int i = 0; i < EMLX_QUANT_MODE_COUNT; i++) {
    if (strcmp(name, mode_names[i]) == 0) {
      *mode = (emlx_quantization_mode)i;
      return 0;
    }
  }
  return EMLX_FAIL("unsupported quantization mode \"%s\" (expected \"affine\", \"mxfp4\", "
                   "\"mxfp8\" or \"nvfp4\")",
                   name);
}

const char *emlx_quantization_mode_name(emlx_quantization_mode mode) {
  return (int)mode >= 0 && mode < EMLX_QUANT_MODE_COUNT ? mode_names[mode] : "invalid";
}

/* Resolves defaults (0) and checks the (mode, group_size, bits) combination. */
static int check_params(const char *op, emlx_quantization_mode mode, int *group, int *bits) {
  if ((int)mode < 0 || mode >= EMLX_QUANT_MODE_COUNT)
    return EMLX_FAIL("%s: unsupported quantization mode %d", op, (int)mode);
  static const int dgroup[] = {64, 32, 32, 16}, dbits[] = {4, 4, 8, 4};
  if (*group == 0)
    *group = dgroup[mode];
  if (*bits == 0)
    *bits = dbits[mode];
  if (mode == EMLX_QUANT_AFFINE) {
    int b = *bits, g = *group;
    if (!(b == 2 || b == 3 || b == 4 || b == 5 || b == 6 || b == 8))
      return EMLX_FAIL("%s: %d bits is not supported for affine quantization (supported: 2, 3, "
                       "4, 5, 6, 8)",
                       op, b);
    if (!(g == 32 || g == 64 || g == 128))
      return EMLX_FAIL("%s: group size %d is not supported for affine quantization (supported: "
                       "32, 64, 128)",
                       op, g);
    return 0;
  }
  if (*group != dgroup[mode])
    return EMLX_FAIL("%s: %s quantization requires group size %d (got %d)", op, mode_names[mode],
                     dgroup[mode], *group);
  if (*bits != dbits[mode])
    return EMLX_FAIL("%s: %s quantization requires %d bits (got %d)", op, mode_names[mode],
                     dbits[mode], *bits);
  return 0;
}

static bool half_or_single(emlx_dtype d) {
  return d == EMLX_FLOAT32 || d == EMLX_FLOAT16 || d == EMLX_BFLOAT16;
}

static emlx_quantize_params params_of(emlx_quantization_mode mode, int group, int bits) {
  emlx_quantize_params p;
  memset(&p, 0, sizeof p);
  p.mode = (int32_t)mode;
  p.group_size = group;
  p.bits = bits;
  return p;
}

/* ---- quantize ------------------------------------------------------------------------------ */

int emlx_quantize(emlx_array *w, int group_size, int bits, emlx_quantization_mode mode,
                  emlx_array **wq, emlx_array **scales, emlx_array **biases) {
  if (wq)
    *wq = NULL;
  if (scales)
    *scales = NULL;
  if (biases)
    *biases = NULL;
  if (!wq || !scales)
    return EMLX_FAIL("quantize: the wq and scales output pointers must not be NULL");
  if (!w)
    return EMLX_FAIL("quantize: input array is NULL");
  if (check_params("quantize", mode, &group_size, &bits) != 0)
    return -1;
  if (!half_or_single(w->dtype))
    return EMLX_FAIL("quantize: only float32, float16 and bfloat16 can be quantized (got %s)",
                     emlx_dtype_name(w->dtype));
  if (w->ndim < 2)
    return EMLX_FAIL("quantize: the matrix to quantize must have at least 2 dimensions (got %d)",
                     w->ndim);
  int64_t k = w->shape[w->ndim - 1];
  if (k % group_size != 0)
    return EMLX_FAIL("quantize: the last axis (%lld) is not divisible by the group size %d",
                     (long long)k, group_size);
  bool affine = mode == EMLX_QUANT_AFFINE;
  emlx_quantize_params p = params_of(mode, group_size, bits);
  p.with_biases = affine && biases != NULL;
  int nd = w->ndim;
  int64_t qs[EMLX_MAX_NDIM], ss[EMLX_MAX_NDIM];
  memcpy(qs, w->shape, (size_t)nd * sizeof *qs);
  memcpy(ss, w->shape, (size_t)nd * sizeof *ss);
  qs[nd - 1] = k * bits / 32;
  ss[nd - 1] = k / group_size;
  emlx_dtype sdt = affine ? w->dtype : EMLX_UINT8;
  emlx_dtype dts[3] = {EMLX_UINT32, sdt, sdt};
  const int64_t *shapes[3] = {qs, ss, ss};
  int ndims[3] = {nd, nd, nd};
  int nout = p.with_biases ? 3 : 2;
  emlx_array *res[3] = {NULL, NULL, NULL};
  if (!emlx__node_make(EMLX_PRIM_QUANTIZE, &w, 1, &p, sizeof p, nout, dts, shapes, ndims, w->device,
                       res))
    return -1;
  *wq = res[0];
  *scales = res[1];
  if (nout == 3)
    *biases = res[2];
  return 0;
}

/* ---- the quantized operand ------------------------------------------------------------------ */

/* Checks w / scales / biases as a quantized matrix stack; *cols receives the
 * number of logical values per row. */
static int check_quantized(const char *op, emlx_array *w, emlx_array *scales, emlx_array *biases,
                           emlx_quantization_mode mode, int group, int bits, int64_t *cols) {
  if (!w || !scales)
    return EMLX_FAIL("%s: %s is NULL", op, w ? "scales" : "w");
  if (w->dtype != EMLX_UINT32)
    return EMLX_FAIL("%s: the quantized matrix must be uint32 (got %s)", op,
                     emlx_dtype_name(w->dtype));
  if (w->ndim < 2)
    return EMLX_FAIL("%s: the quantized matrix must have at least 2 dimensions (got %d)", op,
                     w->ndim);
  if (mode == EMLX_QUANT_AFFINE) {
    if (!biases)
      return EMLX_FAIL("%s: biases must be given for affine quantization", op);
    if (!half_or_single(scales->dtype) || !half_or_single(biases->dtype))
      return EMLX_FAIL("%s: affine scales and biases must be float32, float16 or bfloat16 (got "
                       "%s and %s)",
                       op, emlx_dtype_name(scales->dtype), emlx_dtype_name(biases->dtype));
    if (!emlx__same_shape(scales, biases))
      return EMLX_FAIL("%s: scales and biases must have the same shape", op);
  } else {
    if (biases)
      return EMLX_FAIL("%s: biases must be NULL for %s quantization", op, mode_names[mode]);
    if (scales->dtype != EMLX_UINT8)
      return EMLX_FAIL("%s: %s scales must be uint8 (got %s)", op, mode_names[mode],
                       emlx_dtype_name(scales->dtype));
  }
  if (scales->ndim != w->ndim ||
      !emlx__same_dims(w->ndim - 1, w->shape, scales->ndim - 1, scales->shape))
    return EMLX_FAIL("%s: the shape of scales does not match the matrix (scales must have w's "
                     "shape but for the last axis)",
                     op);
  int64_t wl = w->shape[w->ndim - 1], sl = scales->shape[scales->ndim - 1];
  if (wl * 32 != sl * group * bits)
    return EMLX_FAIL("%s: the shape of scales does not match the matrix: w's last axis %lld "
                     "holds %lld values, scales' last axis %lld times group size %d gives %lld",
                     op, (long long)wl, (long long)(wl * 32 / bits), (long long)sl, group,
                     (long long)(sl * group));
  if (w->device != scales->device || (biases && biases->device != w->device))
    return EMLX_FAIL("%s: mismatched devices", op);
  *cols = wl * 32 / bits;
  return 0;
}

emlx_array *emlx_dequantize_to(emlx_array *wq, emlx_array *scales, emlx_array *biases,
                               int group_size, int bits, emlx_quantization_mode mode,
                               emlx_dtype dtype) {
  const char *op = "dequantize";
  int64_t cols;
  if (check_params(op, mode, &group_size, &bits) != 0 ||
      check_quantized(op, wq, scales, biases, mode, group_size, bits, &cols) != 0)
    return NULL;
  if ((int)dtype < 0) {
    dtype = mode == EMLX_QUANT_AFFINE ? emlx_promote_types(scales->dtype, biases->dtype)
                                      : EMLX_BFLOAT16;
  } else if (!half_or_single(dtype)) {
    return EMLX_FAIL_NULL("%s: the output dtype must be float32, float16 or bfloat16 (got %s)", op,
                          emlx_dtype_name(dtype));
  }
  emlx_quantize_params p = params_of(mode, group_size, bits);
  int64_t shape[EMLX_MAX_NDIM];
  memcpy(shape, wq->shape, (size_t)wq->ndim * sizeof *shape);
  shape[wq->ndim - 1] = cols;
  emlx_array *ins[3] = {wq, scales, biases};
  return emlx__op(EMLX_PRIM_DEQUANTIZE, ins, biases ? 3 : 2, &p, sizeof p, dtype, shape, wq->ndim);
}

emlx_array *emlx_dequantize(emlx_array *wq, emlx_array *scales, emlx_array *biases, int group_size,
                            int bits, emlx_quantization_mode mode) {
  return emlx_dequantize_to(wq, scales, biases, group_size, bits, mode, (emlx_dtype)-1);
}

/* ---- quantized matmul ---------------------------------------------------------------------- */

typedef struct qmm_prep {
  emlx_array *ins[6]; /* x, w, scales[, biases] (owned refs where cast) */
  int nin;
  emlx_dtype out_dtype;
  int64_t n, k;
} qmm_prep;

static void prep_release(qmm_prep *q) {
  for (int i = 0; i < q->nin; i++)
    emlx_release(q->ins[i]);
}

/* Validates the operands shared by quantized_matmul and gather_qmm and
 * collects new references to the node's first inputs. */
static int prep(const char *op, emlx_array *x, emlx_array *w, emlx_array *scales,
                emlx_array *biases, bool transpose, int *group, int *bits,
                emlx_quantization_mode mode, qmm_prep *q) {
  memset(q, 0, sizeof *q);
  int64_t cols;
  if (!x)
    return EMLX_FAIL("%s: x is NULL", op);
  if (check_params(op, mode, group, bits) != 0 ||
      check_quantized(op, w, scales, biases, mode, *group, *bits, &cols) != 0)
    return -1;
  if (!half_or_single(x->dtype))
    return EMLX_FAIL("%s: x must be float32, float16 or bfloat16 (got %s)", op,
                     emlx_dtype_name(x->dtype));
  if (x->ndim < 1)
    return EMLX_FAIL("%s: x must have at least 1 dimension", op);
  if (x->device != w->device)
    return EMLX_FAIL("%s: mismatched devices", op);
  int64_t rows = w->shape[w->ndim - 2];
  q->k = transpose ? cols : rows;
  q->n = transpose ? rows : cols;
  if (x->shape[x->ndim - 1] != q->k)
    return EMLX_FAIL("%s: the last axis of x (%lld) does not match the quantized matrix (%lld x "
                     "%lld with transpose=%s)",
                     op, (long long)x->shape[x->ndim - 1], (long long)q->k, (long long)q->n,
                     transpose ? "true" : "false");
  bool affine = mode == EMLX_QUANT_AFFINE;
  emlx_dtype sdt = affine ? emlx_promote_types(scales->dtype, biases->dtype) : EMLX_UINT8;
  q->out_dtype = affine ? emlx_promote_types(x->dtype, sdt) : x->dtype;
  q->ins[0] = emlx_retain(x);
  q->ins[1] = emlx_retain(w);
  q->ins[2] = emlx__cast(scales, sdt);
  q->nin = 3;
  if (affine)
    q->ins[q->nin++] = emlx__cast(biases, sdt);
  for (int i = 0; i < q->nin; i++) {
    if (!q->ins[i]) {
      prep_release(q);
      return -1;
    }
  }
  return 0;
}

emlx_array *emlx_quantized_matmul(emlx_array *x, emlx_array *w, emlx_array *scales,
                                  emlx_array *biases, bool transpose, int group_size, int bits,
                                  emlx_quantization_mode mode) {
  const char *op = "quantized_matmul";
  qmm_prep q;
  if (prep(op, x, w, scales, biases, transpose, &group_size, &bits, mode, &q) != 0)
    return NULL;
  bool vec = x->ndim == 1;
  if (vec) {
    int64_t s2[2] = {1, q.k};
    emlx_array *x2 = emlx_reshape(x, s2, 2);
    if (!x2) {
      prep_release(&q);
      return NULL;
    }
    emlx_release(q.ins[0]);
    q.ins[0] = x2;
  }
  emlx_array *xx = q.ins[0];
  int64_t shape[EMLX_MAX_NDIM];
  int nb = emlx__broadcast_shapes(xx->shape, xx->ndim - 2, w->shape, w->ndim - 2, shape, op);
  if (nb < 0 || nb + 2 > EMLX_MAX_NDIM) {
    prep_release(&q);
    return nb < 0 ? NULL : EMLX_FAIL_NULL("%s: result has too many dimensions", op);
  }
  shape[nb] = xx->shape[xx->ndim - 2];
  shape[nb + 1] = q.n;
  emlx_quantize_params p = params_of(mode, group_size, bits);
  p.transpose = transpose;
  emlx_array *out = emlx__op(EMLX_PRIM_QMM, q.ins, q.nin, &p, sizeof p, q.out_dtype, shape, nb + 2);
  prep_release(&q);
  if (out && vec) {
    emlx_array *r = emlx_reshape(out, &q.n, 1);
    emlx_release(out);
    out = r;
  }
  return out;
}

/* An index array: the given one (checked), or 0 .. prod(batch)-1 shaped like
 * a's batch axes. */
static emlx_array *indices_or_default(const char *op, const char *what, emlx_array *idx,
                                      const emlx_array *a) {
  if (idx) {
    if (!emlx_dtype_is_integer(idx->dtype))
      return EMLX_FAIL_NULL("%s: %s must have an integer dtype (got %s)", op, what,
                            emlx_dtype_name(idx->dtype));
    if (idx->device != a->device)
      return EMLX_FAIL_NULL("%s: mismatched devices", op);
    return emlx_retain(idx);
  }
  int64_t total = 1;
  for (int d = 0; d < a->ndim - 2; d++)
    total *= a->shape[d];
  emlx_array *r = emlx_arange(0, (double)total, 1, EMLX_UINT32, a->device);
  if (!r)
    return NULL;
  emlx_array *s = emlx_reshape(r, a->shape, a->ndim - 2);
  emlx_release(r);
  return s;
}

emlx_array *emlx_gather_qmm(emlx_array *x, emlx_array *w, emlx_array *scales, emlx_array *biases,
                            emlx_array *lhs_indices, emlx_array *rhs_indices, bool transpose,
                            int group_size, int bits, emlx_quantization_mode mode,
                            bool sorted_indices) {
  const char *op = "gather_qmm";
  if (!lhs_indices && !rhs_indices)
    return emlx_quantized_matmul(x, w, scales, biases, transpose, group_size, bits, mode);
  if (x && x->ndim < 2)
    return EMLX_FAIL_NULL("%s: x must have at least 2 dimensions (got %d)", op, x->ndim);
  qmm_prep q;
  if (prep(op, x, w, scales, biases, transpose, &group_size, &bits, mode, &q) != 0)
    return NULL;
  emlx_array *li = indices_or_default(op, "lhs_indices", lhs_indices, x);
  emlx_array *ri = li ? indices_or_default(op, "rhs_indices", rhs_indices, w) : NULL;
  emlx_array *out = NULL;
  if (!li || !ri)
    goto done;
  int64_t shape[EMLX_MAX_NDIM];
  int nb = emlx__broadcast_shapes(li->shape, li->ndim, ri->shape, ri->ndim, shape, op);
  if (nb < 0)
    goto done;
  if (nb + 2 > EMLX_MAX_NDIM) {
    emlx__set_error("%s: result has too many dimensions", op);
    goto done;
  }
  emlx_array *lb = emlx_broadcast_to(li, shape, nb);
  emlx_array *rb = lb ? emlx_broadcast_to(ri, shape, nb) : NULL;
  if (lb && rb) {
    q.ins[q.nin] = lb;
    q.ins[q.nin + 1] = rb;
    shape[nb] = x->shape[x->ndim - 2];
    shape[nb + 1] = q.n;
    emlx_quantize_params p = params_of(mode, group_size, bits);
    p.transpose = transpose;
    p.sorted = sorted_indices;
    out =
        emlx__op(EMLX_PRIM_GATHER_QMM, q.ins, q.nin + 2, &p, sizeof p, q.out_dtype, shape, nb + 2);
  }
  emlx_release(lb);
  emlx_release(rb);
done:
  emlx_release(li);
  emlx_release(ri);
  prep_release(&q);
  return out;
}
