/* bits.c — the bit-counting family's CPU side: which table of loops runs
 * (bits.h) and the resolver that the elementwise kernel and the fused
 * interpreter share, so fused and unfused results are the same loop's. */
#include <stdatomic.h>
#include <string.h>

#include "bits.h"

static bool probe_bit_extensions(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vpopcntdq") && __builtin_cpu_supports("avx512bitalg") &&
         __builtin_cpu_supports("avx512cd");
#else
  return false;
#endif
}

/* Asked once (racing first callers compute the same answer). */
static bool has_bit_extensions(void) {
  static _Atomic int known; /* 0 unknown, 1 no, 2 yes */
  int k = atomic_load_explicit(&known, memory_order_relaxed);
  if (!k) {
    k = probe_bit_extensions() ? 2 : 1;
    atomic_store_explicit(&known, k, memory_order_relaxed);
  }
  return k == 2;
}

const emlx_cpu_bits_table *emlx_cpu_bits_get(void) {
  const char *name = emlx_cpu_isa_get()->name;
  if (!strcmp(name, "avx512"))
    return has_bit_extensions() ? &emlx_cpu_bits_avx512 : &emlx_cpu_bits_avx2;
  if (!strcmp(name, "avx2"))
    return &emlx_cpu_bits_avx2;
  return &emlx_cpu_bits_scalar;
}

static int width_index(size_t bytes) {
  switch (bytes) {
  case 1:
    return 0;
  case 2:
    return 1;
  case 4:
    return 2;
  case 8:
    return 3;
  default:
    return -1;
  }
}

int emlx_cpu_bits_ew_resolve(emlx_prim prim, const emlx_dtype *in, int nin, emlx_dtype out,
                             emlx_cpu_ew_loop *loop) {
  *loop = (emlx_cpu_ew_loop){.nargs = 1, .grain = EMLX_CPU_GRAIN};
  const char *name = (unsigned)prim < EMLX_PRIM_COUNT ? emlx_prim_table[prim].name : "?";
  int op = prim == EMLX_PRIM_COUNT_LEADING_ZEROS ? EMLX_BITS_CLZ
           : prim == EMLX_PRIM_POPULATION_COUNT  ? EMLX_BITS_POPCOUNT
                                                 : -1;
  if (op < 0 || nin != 1)
    return EMLX_FAIL("cpu: %s is not a bit-counting op on one input", name);
  if (!emlx_dtype_is_valid(in[0]) || in[0] != out || !emlx_dtype_is_integer(out))
    return EMLX_FAIL("cpu: %s expects an integer input of the output dtype (got %s to %s)", name,
                     emlx_dtype_name(in[0]), emlx_dtype_name(out));
  int w = width_index(emlx_dtype_size(out));
  if (w < 0)
    return EMLX_FAIL("cpu: %s: no loop for %s", name, emlx_dtype_name(out));
  loop->un = emlx_cpu_bits_get()->loop[op][w];
  return 0;
}
