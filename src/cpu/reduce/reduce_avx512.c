/* reduce_avx512.c — the sum/max inner loops (reduce_body.h) compiled for the
 * avx512 level; see isa.h. */
#include "simd/vec_avx512.h"

#include "reduce_body.h"
