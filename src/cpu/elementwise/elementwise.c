/* elementwise.c — the kernel of every elementwise op: the core ones
 * (negate, exp, astype, copy; add, subtract, multiply, divide: their loops
 * are resolved here) and the math family's (resolved in math.c).
 *
 * The kernel resolves the node's loop for its dtypes and params (the same
 * resolution the fused interpreter uses), checks the shapes broadcast,
 * gives the output a buffer (reusing a donatable input of the output's
 * shape and dtype, never where's condition), builds broadcast strides (0 on
 * stretched and missing axes, aligned on trailing axes) and hands the loop
 * to iter.c's strided iterator, which parallelises it. */
#include <string.h>

#include "cpu.h"
#include "elementwise/bits.h"

static int64_t unary_grain(emlx_prim prim, emlx_dtype dt) {
  if (prim == EMLX_PRIM_EXP)
    return emlx_dtype_is_complex(dt) ? 1024 : 8192;
  if (emlx_dtype_is_complex(dt) && prim != EMLX_PRIM_ASTYPE && prim != EMLX_PRIM_COPY)
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
    if (emlx_dtype_is_complex(out) && op >= EMLX_CPU_MUL)
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

static int ew_resolve(emlx_prim prim, const void *params, size_t params_size, const emlx_dtype *in,
                      int nin, emlx_dtype out, emlx_cpu_ew_loop *loop) {
  switch (prim) {
  case EMLX_PRIM_NEGATE:
  case EMLX_PRIM_EXP:
  case EMLX_PRIM_ASTYPE:
  case EMLX_PRIM_COPY:
  case EMLX_PRIM_ADD:
  case EMLX_PRIM_SUBTRACT:
  case EMLX_PRIM_MULTIPLY:
  case EMLX_PRIM_DIVIDE:
    return emlx_cpu_core_ew_resolve(prim, in, nin, out, loop);
  case EMLX_PRIM_COUNT_LEADING_ZEROS:
  case EMLX_PRIM_POPULATION_COUNT:
    return emlx_cpu_bits_ew_resolve(prim, in, nin, out, loop);
  default:
    return emlx_cpu_math_ew_resolve(prim, params, params_size, in, nin, out, loop);
  }
}

/* float64 transcendentals run libm's functions (math_libm.c), as Nx's
 * Erlang :math does, in place of the ISA table's SLEEF loops. */
int emlx_cpu_ew_resolve(emlx_prim prim, const void *params, size_t params_size,
                        const emlx_dtype *in, int nin, emlx_dtype out, emlx_cpu_ew_loop *loop) {
  if (ew_resolve(prim, params, params_size, in, nin, out, loop) != 0)
    return -1;
  if (nin == 1 && in[0] == EMLX_FLOAT64 && out == EMLX_FLOAT64) {
    emlx_cpu_unary_loop libm = emlx_cpu_libm_f64_loop(prim);
    if (libm)
      loop->un = libm;
  }
  return 0;
}

int emlx_cpu_elementwise(const emlx_node *node, emlx_array *const *inputs,
                         emlx_array *const *outputs) {
  emlx_array *out = outputs[0];
  if (!out)
    return 0;
  int nin = node->ninputs;
  const char *name = emlx_prim_table[node->prim].name;
  if (nin < 1 || nin > 3)
    return EMLX_FAIL("cpu: %s takes 1 to 3 inputs (got %d)", name, nin);
  emlx_dtype din[3];
  for (int k = 0; k < nin; k++)
    din[k] = inputs[k]->dtype;
  emlx_cpu_ew_loop loop;
  if (emlx_cpu_ew_resolve(node->prim, emlx__params(node), node->params_size, din, nin, out->dtype,
                          &loop) != 0)
    return -1;
  /* The operands in the loop's order (a binary loop may take them swapped). */
  emlx_array *in[3] = {inputs[0], nin > 1 ? inputs[1] : NULL, nin > 2 ? inputs[2] : NULL};
  if (loop.bin && loop.swap) {
    in[0] = inputs[1];
    in[1] = inputs[0];
  }
  int64_t st[3][EMLX_MAX_NDIM];
  const int64_t *sts[3];
  const char *src[3]; /* read before donation moves a buffer */
  emlx_array *give = NULL;
  for (int k = 0; k < nin; k++) {
    if (emlx_cpu_broadcast_strides(in[k], out, st[k]) != 0)
      return -1;
    sts[k] = st[k];
    src[k] = (const char *)emlx__data(in[k]);
    if (!give && !(node->prim == EMLX_PRIM_WHERE && k == 0)) /* never the bool condition */
      give = emlx_cpu_donor(in[k], out);
  }
  if (emlx__array_alloc_data_donate(out, give) != 0)
    return -1;
  if (out->size == 0)
    return 0;
  emlx_cpu_iter it;
  emlx_cpu_iter_init(&it, out->ndim, out->shape, nin, sts);
  for (int k = 0; k < nin; k++) {
    it.in[k] = src[k];
    it.in_esize[k] = emlx_dtype_size(in[k]->dtype);
  }
  it.out = (char *)emlx__data(out);
  it.out_esize = emlx_dtype_size(out->dtype);
  if (loop.un) {
    if (node->prim == EMLX_PRIM_COPY && it.ndim == 1 && it.stride[0][0] == 1 &&
        (const char *)it.in[0] == it.out)
      return 0; /* donated in place: nothing to copy */
    emlx_cpu_iter_run_unary(&it, loop.un, loop.grain);
  } else if (loop.bin) {
    emlx_cpu_iter_run_binary(&it, loop.bin, loop.grain);
  } else {
    emlx_cpu_iter_run_nary(&it, loop.nary, loop.ctx, loop.grain);
  }
  return 0;
}
