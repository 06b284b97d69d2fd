/* reduce.c — the sum and max kernels.
 *
 * The work is reduce_driver.c's (kept and reduced dims, row and column
 * modes, fixed splits); this file gives it the ops: the accumulators below,
 * the ISA table's fold loops, and the two cases the driver leaves out:
 * nothing to reduce (an astype into the output dtype) and an empty
 * reduction. Accumulator types: isa.h. The input may be virtual (a fused
 * elementwise region's output, emlx_cpu_reduce_source). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "cpu.h"
#include "reduce_driver.h"

typedef enum { ACC_F64, ACC_C128, ACC_U64, ACC_I64, ACC_C64, ACC_BOOL } acc_kind;

/* ---- accumulators --------------------------------------------------------- */
static acc_kind acc_kind_of(int op, emlx_dtype dt) {
  if (emlx_dtype_is_float(dt))
    return ACC_F64;
  if (dt == EMLX_COMPLEX64)
    return op == EMLX_CPU_SUM ? ACC_C128 : ACC_C64;
  if (op == EMLX_CPU_SUM)
    return ACC_U64;
  if (dt == EMLX_BOOL)
    return ACC_BOOL;
  return emlx_dtype_is_signed(dt) ? ACC_I64 : ACC_U64;
}

static void acc_init(const emlx_red_plan *p, void *acc, int64_t count) {
  if (p->op == EMLX_CPU_SUM || p->kind == ACC_U64 || p->kind == ACC_BOOL) {
    memset(acc, 0, (size_t)count * p->acc_es);
    return;
  }
  for (int64_t i = 0; i < count; i++) {
    if (p->kind == ACC_F64) {
      ((double *)acc)[i] = -(double)INFINITY;
    } else if (p->kind == ACC_I64) {
      ((int64_t *)acc)[i] = INT64_MIN;
    } else {
      emlx_c64 lo = {-INFINITY, -INFINITY};
      ((emlx_c64 *)acc)[i] = lo;
    }
  }
}

/* dst = fold(dst, src) for one accumulator. */
static void acc_combine(const emlx_red_plan *p, void *dst, const void *src) {
  switch (p->kind) {
  case ACC_F64: {
    double s;
    memcpy(&s, src, sizeof s);
    if (p->op == EMLX_CPU_SUM)
      *(double *)dst += s;
    else
      emlx_cv_max_f64_into((double *)dst, s);
    break;
  }
  case ACC_C128:
    ((double *)dst)[0] += ((const double *)src)[0];
    ((double *)dst)[1] += ((const double *)src)[1];
    break;
  case ACC_U64:
  case ACC_BOOL: {
    uint64_t s = *(const uint64_t *)src, *d = (uint64_t *)dst;
    if (p->op == EMLX_CPU_SUM)
      *d += s;
    else if (s > *d)
      *d = s;
    break;
  }
  case ACC_I64: {
    int64_t s = *(const int64_t *)src;
    if (s > *(int64_t *)dst)
      *(int64_t *)dst = s;
    break;
  }
  case ACC_C64:
    emlx_cv_max_c64_into((emlx_c64 *)dst, *(const emlx_c64 *)src);
    break;
  }
}

/* count accumulators -> count output elements. */
static void acc_finish(const emlx_red_plan *p, const void *acc, char *out, int64_t count) {
  switch (p->kind) {
  case ACC_F64:
    p->f64_to_out(acc, 1, out, count);
    break;
  case ACC_C128:
    for (int64_t i = 0; i < count; i++) {
      emlx_c64 v = {(float)((const double *)acc)[2 * i], (float)((const double *)acc)[2 * i + 1]};
      memcpy(out + i * 8, &v, 8);
    }
    break;
  case ACC_U64:
  case ACC_I64: /* wrap: keep the low bytes (little-endian) */
    for (int64_t i = 0; i < count; i++)
      memcpy(out + i * (int64_t)p->out_es, (const char *)acc + i * 8, p->out_es);
    break;
  case ACC_BOOL:
    for (int64_t i = 0; i < count; i++)
      out[i] = (char)(((const uint64_t *)acc)[i] != 0);
    break;
  case ACC_C64:
    memcpy(out, acc, (size_t)count * 8);
    break;
  }
}

/* The kernel on a real input, or (src non-NULL) on a virtual dense one of
 * in's shape and dtype; returns 1 when a virtual input cannot be read the
 * way this reduction would need (nothing done). */
static int reduce_impl(const emlx_node *node, const emlx_array *in, const emlx_cpu_source *src,
                       emlx_array *out) {
  int op = node->prim == EMLX_PRIM_SUM ? EMLX_CPU_SUM : EMLX_CPU_MAX;
  if (node->prim != EMLX_PRIM_SUM && node->prim != EMLX_PRIM_MAX)
    return EMLX_FAIL("cpu: %s is not a reduction", emlx_prim_table[node->prim].name);
  const emlx_reduce_params *rp = (const emlx_reduce_params *)emlx__params(node);
  if (node->params_size < sizeof *rp ||
      node->params_size < sizeof *rp + (size_t)(rp->naxes > 0 ? rp->naxes : 0) * sizeof(int32_t))
    return EMLX_FAIL("cpu: reduce: malformed params");
  unsigned char reduced[EMLX_MAX_NDIM] = {0};
  for (int k = 0; k < rp->naxes; k++) {
    int ax = rp->axes[k];
    if (ax < 0 || ax >= in->ndim || reduced[ax])
      return EMLX_FAIL("cpu: reduce: bad axis %d for rank %d", ax, in->ndim);
    reduced[ax] = 1;
  }
  const emlx_cpu_isa *isa = emlx_cpu_isa_get();
  emlx_red_plan *p = malloc(sizeof *p);
  if (!p)
    return EMLX_FAIL("cpu: reduce: out of memory");
  p->op = op;
  p->in_dt = in->dtype;
  p->out_dt = out->dtype;
  p->kind = acc_kind_of(op, in->dtype);
  p->in_es = emlx_dtype_size(in->dtype);
  p->out_es = emlx_dtype_size(out->dtype);
  p->acc_es = p->kind == ACC_C128 ? 16 : 8;
  p->init = acc_init;
  p->combine = acc_combine;
  p->finish = acc_finish;
  p->task_work = EMLX_CPU_GRAIN;
  p->src = src;
  int64_t nout = emlx_cpu_red_dims(p, in, reduced);
  int rc = 0;
  if (nout != out->size) {
    rc = EMLX_FAIL("cpu: reduce: output has %lld elements, expected %lld", (long long)out->size,
                   (long long)nout);
    goto done;
  }
  if (src && in->size > 0 && !emlx_cpu_red_source_ok(p)) {
    rc = 1; /* the virtual input would be read strided: not this way */
    goto done;
  }
  p->row = isa->reduce->row[op][in->dtype];
  p->col = isa->reduce->col[op][in->dtype];
  p->f64_to_out = isa->cast->cast[EMLX_FLOAT64][out->dtype];
  p->in = src ? NULL : (const char *)emlx__data(in);
  if ((rc = emlx__array_alloc_data(out)) != 0)
    goto done;
  p->out = (char *)emlx__data(out);
  if (out->size == 0)
    goto done;

  if (p->nr == 0) { /* nothing to reduce (or only size-1 axes): astype */
    int64_t shape[EMLX_MAX_NDIM], st[EMLX_MAX_NDIM];
    for (int k = 0; k < p->nk; k++) {
      shape[k] = p->kept[k].size;
      st[k] = p->kept[k].stride;
    }
    const int64_t *sts[1] = {st};
    emlx_cpu_iter it;
    emlx_cpu_iter_init(&it, p->nk, shape, 1, sts);
    it.in[0] = p->in;
    it.in_esize[0] = p->in_es;
    it.out = p->out;
    it.out_esize = p->out_es;
    emlx_cpu_iter_run_unary(&it, isa->cast->cast[in->dtype][out->dtype], EMLX_CPU_GRAIN);
  } else if (in->size == 0) { /* an empty reduction */
    if (op == EMLX_CPU_MAX) {
      rc = EMLX_FAIL("cpu: max of an empty reduction");
      goto done;
    }
    memset(p->out, 0, (size_t)out->size * p->out_es);
  } else {
    rc = emlx_cpu_red_run(p, nout);
  }
done:
  if (rc < 0 && out->buffer) {
    emlx__buffer_release(out->buffer);
    out->buffer = NULL;
  }
  free(p);
  return rc;
}

int emlx_cpu_reduce(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs) {
  if (!outputs[0])
    return 0;
  return reduce_impl(node, inputs[0], NULL, outputs[0]);
}

int emlx_cpu_reduce_source(const emlx_node *node, const emlx_array *like,
                           const emlx_cpu_source *src, emlx_array *out) {
  emlx_array v;
  int64_t st[EMLX_MAX_NDIM];
  emlx_cpu_red_stand_in(&v, st, like);
  return reduce_impl(node, &v, src, out);
}
