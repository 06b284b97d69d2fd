/* isa.c — run-time choice of the CPU kernels' instruction set.
 *
 * At first use, CPUID (through __builtin_cpu_supports, which also checks that
 * the OS saves the vector state) gives the best level this machine runs:
 * avx512 (F+BW+VL+DQ, with AVX2/FMA/F16C), avx2 (AVX2+FMA+F16C), or scalar
 * (baseline x86-64). EMLX_ISA=scalar|avx2|avx512 caps the level (it never
 * raises it); an unknown value is ignored. The choice is made once and is
 * the same for every thread. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"

static const emlx_cpu_isa isa_scalar = {"scalar", &emlx_cpu_ew_scalar, &emlx_cpu_cast_scalar};
static const emlx_cpu_isa isa_avx2 = {"avx2", &emlx_cpu_ew_avx2, &emlx_cpu_cast_avx2};
static const emlx_cpu_isa isa_avx512 = {"avx512", &emlx_cpu_ew_avx512, &emlx_cpu_cast_avx512};

static _Atomic(const emlx_cpu_isa *) chosen_isa;

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* CPUID.1:ECX bit 29 (__builtin_cpu_supports has no "f16c" in every compiler). */
static int has_f16c(void) {
  unsigned a, b, c, d;
  return __get_cpuid(1, &a, &b, &c, &d) && ((c >> 29) & 1u);
}
#endif

static int hardware_level(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c()))
    return 0;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return 2;
  return 1;
#else
  return 0;
#endif
}

static const emlx_cpu_isa *select_isa(void) {
  int level = hardware_level();
  const char *cap = getenv("EMLX_ISA");
  if (cap) {
    int want = !strcmp(cap, "scalar")   ? 0
               : !strcmp(cap, "avx2")   ? 1
               : !strcmp(cap, "avx512") ? 2
                                        : 2;
    if (want < level)
      level = want;
  }
  return level == 2 ? &isa_avx512 : level == 1 ? &isa_avx2 : &isa_scalar;
}

const emlx_cpu_isa *emlx_cpu_isa_get(void) {
  const emlx_cpu_isa *isa = atomic_load_explicit(&chosen_isa, memory_order_acquire);
  if (!isa) { /* racing first callers compute the same answer */
    isa = select_isa();
    atomic_store_explicit(&chosen_isa, isa, memory_order_release);
  }
  return isa;
}

const char *emlx_simd_level(void) { return emlx_cpu_isa_get()->name; }
