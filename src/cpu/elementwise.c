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

static int binary_index(emlx_prim prim) {
  switch (prim) {
  case EMLX_PRIM_ADD:
    return EMLX_CPU_ADD;
  case EMLX_PRIM_SUBTRACT:
    return EMLX_CPU_SUB;
  case EMLX_PRIM_MULTIPLY:
    return EMLX_CPU_MUL;
  case EMLX_PRIM_DIVIDE:
    return EMLX_CPU_DIV;
  default:
    return -1;
  }
}

int emlx_cpu_core_ew_resolve(emlx_prim prim, const emlx_dtype *in, int nin, emlx_dtype out,
                             emlx_cpu_ew_loop *loop) {
  const emlx_cpu_isa *isa = emlx_cpu_isa_get();
  *loop = (emlx_cpu_ew_loop){.nargs = nin, .grain = EMLX_CPU_GRAIN};
  const char *name = (unsigned)prim < EMLX_PRIM_COUNT ? emlx_prim_table[prim].name : "?";
  if (!emlx_dtype_is_valid(out))
    return EMLX_FAIL("cpu: %s: invalid dtype", name);
  for (int k = 0; k < nin; k++)
    if (!emlx_dtype_is_valid(in[k]))
      return EMLX_FAIL("cpu: %s: invalid dtype", name);
  int op = binary_index(prim);
  if (op >= 0) {
    if (nin != 2 || in[0] != out || in[1] != out)
      return EMLX_FAIL("cpu: %s expects inputs of the output dtype %s (got %s, %s)", name,
                       emlx_dtype_name(out), emlx_dtype_name(in[0]),
                       emlx_dtype_name(nin > 1 ? in[1] : in[0]));
    loop->bin = isa->ew->binary[op][out];
    if (out == EMLX_COMPLEX64 && op >= EMLX_CPU_MUL)
      loop->grain = 4096;
    if (!loop->bin)
      return EMLX_FAIL("cpu: %s is not supported for %s", name, emlx_dtype_name(out));
    return 0;
  }
  emlx_dtype di = in[0];
  if (nin == 1) {
    switch (prim) {
    case EMLX_PRIM_NEGATE:
      loop->un = di == out ? isa->ew->negate[di] : NULL;
      break;
    case EMLX_PRIM_EXP:
      loop->un = di == out ? isa->ew->exp[di] : NULL;
      break;
    case EMLX_PRIM_ASTYPE:
      loop->un = isa->cast->cast[di][out];
      break;
    case EMLX_PRIM_COPY:
      loop->un = di == out ? isa->cast->cast[di][di] : NULL;
      break;
    default:
      break;
    }
  }
  if (!loop->un)
    return EMLX_FAIL("cpu: %s is not supported from %s to %s", name, emlx_dtype_name(di),
                     emlx_dtype_name(out));
  loop->grain = unary_grain(prim, out);
  return 0;
}

int emlx_cpu_unary(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs) {
  emlx_array *in = inputs[0], *out = outputs[0];
  if (!out)
    return 0;
  emlx_dtype di = in->dtype, dout = out->dtype;
  emlx_cpu_ew_loop loop;
  if (emlx_cpu_core_ew_resolve(node->prim, &di, 1, dout, &loop) != 0)
    return -1;

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
  emlx_cpu_iter_run_unary(&it, loop.un, loop.grain);
  return 0;
}

int emlx_cpu_binary(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs) {
  emlx_array *a = inputs[0], *b = inputs[1], *out = outputs[0];
  if (!out)
    return 0;
  emlx_dtype dt = out->dtype, din[2] = {a->dtype, b->dtype};
  emlx_cpu_ew_loop loop;
  if (emlx_cpu_core_ew_resolve(node->prim, din, 2, dt, &loop) != 0)
    return -1;

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
  emlx_cpu_iter_run_binary(&it, loop.bin, loop.grain);
  return 0;
}
