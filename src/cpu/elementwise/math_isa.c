/* math_isa.c — picks the math family's table of inner loops for the ISA
 * level the CPU backend chose (isa.c), so every family runs at one level. */
#include <string.h>

#include "math_isa.h"

const emlx_cpu_math_table *emlx_cpu_math_get(void) {
  const char *name = emlx_cpu_isa_get()->name;
  if (!strcmp(name, "avx512"))
    return &emlx_cpu_math_avx512;
  if (!strcmp(name, "avx2"))
    return &emlx_cpu_math_avx2;
  return &emlx_cpu_math_scalar;
}
