/* reduce2.c — the product, min, all and any kernels.
 *
 * The work is reduce_driver.c's (kept and reduced dims, row and column
 * modes, fixed splits, an optional virtual input); this file gives it the
 * ops: the accumulators below and the ISA table's fold loops (reduce2.h),
 * plus the cases the driver leaves out: an empty reduction (the identity)
 * and nothing left to reduce (one element per output, folded as a
 * reduction over one position). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "kernels.h"
#include "reduce_fold.h"
#include "reduce_driver.h"

/* Input elements per parallel task: large enough that each thread streams
 * long contiguous runs (prefetchers), small enough that a descheduled
 * thread delays little on a busy machine. */
#define R2_TASK_WORK 131072

/* ---- the ISA table -------------------------------------------------------- */
const emlx_cpu_reduce2_table *emlx_cpu_reduce2_get(void) {
  const char *name = emlx_cpu_isa_get()->name;
  if (!strcmp(name, "avx512"))
    return &emlx_cpu_reduce2_avx512;
  if (!strcmp(name, "avx2"))
    return &emlx_cpu_reduce2_avx2;
  return &emlx_cpu_reduce2_scalar;
}

/* ---- accumulators (see reduce2.h) ------------------------------------------ */
static size_t acc_size(int op, emlx_dtype dt) {
  if (op == EMLX_R2_ALL || op == EMLX_R2_ANY)
    return 1;
  if (dt == EMLX_FLOAT16 || dt == EMLX_BFLOAT16)
    return 4;
  return emlx_dtype_size(dt);
}

/* The identity of op in accumulator form (at most 8 bytes). */
static void acc_identity(int op, emlx_dtype dt, unsigned char *id) {
  memset(id, 0, 8);
  if (op == EMLX_R2_ALL || op == EMLX_R2_ANY) {
    id[0] = op == EMLX_R2_ALL;
    return;
  }
  union {
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    int8_t s8;
    int16_t s16;
    int32_t s32;
    int64_t s64;
    float f32;
    double f64;
    emlx_c64 c64;
  } v;
  memset(&v, 0, sizeof v);
  bool prod = op == EMLX_R2_PROD;
  switch (dt) {
  case EMLX_BOOL:
    v.u8 = 1;
    break;
  case EMLX_UINT8:
    v.u8 = prod ? 1 : UINT8_MAX;
    break;
  case EMLX_UINT16:
    v.u16 = prod ? 1 : UINT16_MAX;
    break;
  case EMLX_UINT32:
    v.u32 = prod ? 1 : UINT32_MAX;
    break;
  case EMLX_UINT64:
    v.u64 = prod ? 1 : UINT64_MAX;
    break;
  case EMLX_INT8:
    v.s8 = prod ? 1 : INT8_MAX;
    break;
  case EMLX_INT16:
    v.s16 = prod ? 1 : INT16_MAX;
    break;
  case EMLX_INT32:
    v.s32 = prod ? 1 : INT32_MAX;
    break;
  case EMLX_INT64:
    v.s64 = prod ? 1 : INT64_MAX;
    break;
  case EMLX_FLOAT16:
  case EMLX_BFLOAT16:
  case EMLX_FLOAT32:
    v.f32 = prod ? 1.0f : INFINITY;
    break;
  case EMLX_FLOAT64:
    v.f64 = prod ? 1.0 : (double)INFINITY;
    break;
  case EMLX_COMPLEX64:
    v.c64.re = prod ? 1.0f : INFINITY;
    v.c64.im = prod ? 0.0f : INFINITY;
    break;
  default:
    break;
  }
  memcpy(id, &v, 8);
}

static void acc_init(const emlx_red_plan *p, void *acc, int64_t count) {
  unsigned char id[8];
  acc_identity(p->op, p->in_dt, id);
  for (int64_t i = 0; i < count; i++)
    memcpy((char *)acc + i * (int64_t)p->acc_es, id, p->acc_es);
}

/* dst = fold(dst, src) for one accumulator: the column loop over one
 * "column" with the partial as the row does exactly that. */
static void acc_combine(const emlx_red_plan *p, void *dst, const void *src) {
  if (p->in_dt == EMLX_FLOAT16 || p->in_dt == EMLX_BFLOAT16) { /* f32 accumulators */
    float s, *d = (float *)dst;
    memcpy(&s, src, sizeof s);
    if (p->op == EMLX_R2_PROD)
      *d *= s;
    else
      emlx_r2_min_f32_into(d, s);
    return;
  }
  if (p->op == EMLX_R2_ALL) {
    *(uint8_t *)dst &= *(const uint8_t *)src;
    return;
  }
  if (p->op == EMLX_R2_ANY) {
    *(uint8_t *)dst |= *(const uint8_t *)src;
    return;
  }
  /* product and min accumulate in the input's own type: its column loop. */
  p->col(src, 1, 1, dst);
}

/* count accumulators -> count output elements. */
static void acc_finish(const emlx_red_plan *p, const void *acc, char *out, int64_t count) {
  if (p->out_dt == EMLX_FLOAT16 || p->out_dt == EMLX_BFLOAT16) {
    const float *a = (const float *)acc;
    uint16_t *o = (uint16_t *)(void *)out;
    for (int64_t i = 0; i < count; i++)
      o[i] = p->out_dt == EMLX_FLOAT16 ? emlx_cv_f32_to_f16(a[i]) : emlx_cv_f32_to_bf16(a[i]);
    return;
  }
  memcpy(out, acc, (size_t)count * p->out_es); /* same type and size */
}

static int r2_op_of(emlx_prim prim) {
  switch (prim) {
  case EMLX_PRIM_PRODUCT:
    return EMLX_R2_PROD;
  case EMLX_PRIM_MIN:
    return EMLX_R2_MIN;
  case EMLX_PRIM_ALL:
    return EMLX_R2_ALL;
  case EMLX_PRIM_ANY:
    return EMLX_R2_ANY;
  default:
    return -1;
  }
}

/* The kernel on a real input, or (src set) on a virtual dense one of in's
 * shape and dtype; 1 when a virtual input would be read strided (nothing
 * done). */
static int reduce2_impl(const emlx_node *node, const emlx_array *in, const emlx_cpu_source *src,
                        emlx_array *out) {
  const char *name = emlx_prim_table[node->prim].name;
  int op = r2_op_of(node->prim);
  if (op < 0)
    return EMLX_FAIL("cpu: %s is not a product/min/all/any reduction", name);
  const emlx_reduce_params *rp = (const emlx_reduce_params *)emlx__params(node);
  if (node->params_size < sizeof *rp ||
      node->params_size < sizeof *rp + (size_t)(rp->naxes > 0 ? rp->naxes : 0) * sizeof(int32_t))
    return EMLX_FAIL("cpu: %s: malformed params", name);
  unsigned char reduced[EMLX_MAX_NDIM] = {0};
  for (int k = 0; k < rp->naxes; k++) {
    int ax = rp->axes[k];
    if (ax < 0 || ax >= in->ndim || reduced[ax])
      return EMLX_FAIL("cpu: %s: bad axis %d for rank %d", name, ax, in->ndim);
    reduced[ax] = 1;
  }
  bool logic = op == EMLX_R2_ALL || op == EMLX_R2_ANY;
  if (logic ? out->dtype != EMLX_BOOL : out->dtype != in->dtype)
    return EMLX_FAIL("cpu: %s: unexpected dtypes %s -> %s", name, emlx_dtype_name(in->dtype),
                     emlx_dtype_name(out->dtype));
  const emlx_cpu_reduce2_table *tab = emlx_cpu_reduce2_get();
  emlx_red_plan *p = malloc(sizeof *p);
  if (!p)
    return EMLX_FAIL("cpu: %s: out of memory", name);
  p->op = op;
  p->in_dt = in->dtype;
  p->out_dt = out->dtype;
  p->in_es = emlx_dtype_size(in->dtype);
  p->out_es = emlx_dtype_size(out->dtype);
  p->acc_es = acc_size(op, in->dtype);
  p->row = tab->row[op][in->dtype];
  p->col = tab->col[op][in->dtype];
  p->init = acc_init;
  p->combine = acc_combine;
  p->finish = acc_finish;
  p->task_work = R2_TASK_WORK;
  p->src = src;
  int rc = 0;
  int64_t nout = emlx_cpu_red_dims(p, in, reduced);
  if (!p->row || !p->col) {
    rc = EMLX_FAIL("cpu: %s: dtype %s is not supported", name, emlx_dtype_name(in->dtype));
    goto done;
  }
  if (nout != out->size) {
    rc = EMLX_FAIL("cpu: %s: output has %lld elements, expected %lld", name, (long long)out->size,
                   (long long)nout);
    goto done;
  }
  if (in->size > 0 && p->nr == 0) { /* nothing left to reduce: one position */
    p->red[0].size = 1;
    p->red[0].stride = 0;
    p->nr = 1;
    p->inner_reduced = 1;
  }
  if (src && in->size > 0 && !emlx_cpu_red_source_ok(p)) {
    rc = 1; /* the virtual input would be read strided: not this way */
    goto done;
  }
  p->in = src ? NULL : (const char *)emlx__data(in);
  if ((rc = emlx__array_alloc_data(out)) != 0)
    goto done;
  p->out = (char *)emlx__data(out);
  if (out->size == 0)
    goto done;
  if (in->size == 0) { /* an empty reduction: the identity (min never gets here) */
    if (op == EMLX_R2_MIN) {
      rc = EMLX_FAIL("cpu: min of an empty reduction");
      goto done;
    }
    char *acc = malloc((size_t)out->size * p->acc_es);
    if (!acc) {
      rc = EMLX_FAIL("cpu: %s: out of memory", name);
      goto done;
    }
    acc_init(p, acc, out->size);
    acc_finish(p, acc, p->out, out->size);
    free(acc);
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

int emlx_cpu_reduce2(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs) {
  if (!outputs[0])
    return 0;
  return reduce2_impl(node, inputs[0], NULL, outputs[0]);
}

int emlx_cpu_reduce2_source(const emlx_node *node, const emlx_array *like,
                            const emlx_cpu_source *src, emlx_array *out) {
  emlx_array v;
  int64_t st[EMLX_MAX_NDIM];
  emlx_cpu_red_stand_in(&v, st, like);
  return reduce2_impl(node, &v, src, out);
}
