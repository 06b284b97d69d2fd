/* elementwise.c — the unary (negate, exp, astype, copy) and binary (add,
 * subtract, multiply, divide) kernels.
 *
 * A kernel checks what the op layer promised (dtypes, broadcastable shapes),
 * gives the output a buffer (reusing a donatable input of the output's shape
 * and dtype), builds broadcast strides (0 on stretched and missing axes,
 * aligned on trailing axes) and hands the loop from the ISA table to the
 * strided iterator, which parallelises it. */
#include <string.h>

#include "cpu.h"

static int64_t unary_grain(emlx_prim prim, emlx_dtype dt) {
  if (prim == EMLX_PRIM_EXP)
    return dt == EMLX_COMPLEX64 ? 1024 : 8192;
  if (dt == EMLX_COMPLEX64 && prim != EMLX_PRIM_ASTYPE && prim != EMLX_PRIM_COPY)
    return 8192;
  return EMLX_CPU_GRAIN;
}

int emlx_cpu_unary(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs) {
  emlx_array *in = inputs[0], *out = outputs[0];
  if (!out)
    return 0;
  const emlx_cpu_isa *isa = emlx_cpu_isa_get();
  emlx_dtype di = in->dtype, dout = out->dtype;
  if (!emlx_dtype_is_valid(di) || !emlx_dtype_is_valid(dout))
    return EMLX_FAIL("cpu: invalid dtype");
  emlx_cpu_unary_loop fn = NULL;
  switch (node->prim) {
  case EMLX_PRIM_NEGATE:
    fn = di == dout ? isa->ew->negate[di] : NULL;
    break;
  case EMLX_PRIM_EXP:
    fn = di == dout ? isa->ew->exp[di] : NULL;
    break;
  case EMLX_PRIM_ASTYPE:
    fn = isa->cast->cast[di][dout];
    break;
  case EMLX_PRIM_COPY:
    fn = di == dout ? isa->cast->cast[di][di] : NULL;
    break;
  default:
    break;
  }
  if (!fn)
    return EMLX_FAIL("cpu: %s is not supported from %s to %s", emlx_prim_table[node->prim].name,
                     emlx_dtype_name(di), emlx_dtype_name(dout));

  int64_t st[EMLX_MAX_NDIM];
  if (emlx_cpu_broadcast_strides(in, out, st) != 0)
    return -1;
  /* Read the input's address before allocating: donation may move its buffer. */
  const char *src = (const char *)emlx__data(in);
  if (emlx__array_alloc_data_donate(out, emlx_cpu_donor(in, out)) != 0)
    return -1;
  if (out->size == 0)
    return 0;
  const int64_t *sts[1] = {st};
  emlx_cpu_iter it;
  emlx_cpu_iter_init(&it, out->ndim, out->shape, 1, sts);
  it.in[0] = src;
  it.in_esize[0] = emlx_dtype_size(di);
  it.out = (char *)emlx__data(out);
  it.out_esize = emlx_dtype_size(dout);
  if (node->prim == EMLX_PRIM_COPY && it.ndim == 1 && it.stride[0][0] == 1 &&
      (const char *)it.in[0] == it.out)
    return 0; /* donated in place: nothing to copy */
  emlx_cpu_iter_run_unary(&it, fn, unary_grain(node->prim, dout));
  return 0;
}

int emlx_cpu_binary(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs) {
  emlx_array *a = inputs[0], *b = inputs[1], *out = outputs[0];
  if (!out)
    return 0;
  int op;
  switch (node->prim) {
  case EMLX_PRIM_ADD:
    op = EMLX_CPU_ADD;
    break;
  case EMLX_PRIM_SUBTRACT:
    op = EMLX_CPU_SUB;
    break;
  case EMLX_PRIM_MULTIPLY:
    op = EMLX_CPU_MUL;
    break;
  case EMLX_PRIM_DIVIDE:
    op = EMLX_CPU_DIV;
    break;
  default:
    return EMLX_FAIL("cpu: %s is not a binary kernel", emlx_prim_table[node->prim].name);
  }
  emlx_dtype dt = out->dtype;
  if (!emlx_dtype_is_valid(dt) || a->dtype != dt || b->dtype != dt)
    return EMLX_FAIL("cpu: %s expects inputs of the output dtype %s (got %s, %s)",
                     emlx_prim_table[node->prim].name, emlx_dtype_name(dt),
                     emlx_dtype_name(a->dtype), emlx_dtype_name(b->dtype));
  emlx_cpu_binary_loop fn = emlx_cpu_isa_get()->ew->binary[op][dt];
  if (!fn)
    return EMLX_FAIL("cpu: %s is not supported for %s", emlx_prim_table[node->prim].name,
                     emlx_dtype_name(dt));

  int64_t sa[EMLX_MAX_NDIM], sb[EMLX_MAX_NDIM];
  if (emlx_cpu_broadcast_strides(a, out, sa) != 0 || emlx_cpu_broadcast_strides(b, out, sb) != 0)
    return -1;
  const char *pa = (const char *)emlx__data(a), *pb = (const char *)emlx__data(b);
  emlx_array *give = emlx_cpu_donor(a, out);
  if (!give)
    give = emlx_cpu_donor(b, out);
  if (emlx__array_alloc_data_donate(out, give) != 0)
    return -1;
  if (out->size == 0)
    return 0;
  const int64_t *sts[2] = {sa, sb};
  emlx_cpu_iter it;
  emlx_cpu_iter_init(&it, out->ndim, out->shape, 2, sts);
  it.in[0] = pa;
  it.in[1] = pb;
  it.in_esize[0] = it.in_esize[1] = emlx_dtype_size(dt);
  it.out = (char *)emlx__data(out);
  it.out_esize = emlx_dtype_size(dt);
  int64_t grain = EMLX_CPU_GRAIN;
  if (dt == EMLX_COMPLEX64 && op >= EMLX_CPU_MUL)
    grain = 4096;
  emlx_cpu_iter_run_binary(&it, fn, grain);
  return 0;
}
