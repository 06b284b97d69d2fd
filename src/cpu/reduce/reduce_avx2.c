/* reduce_avx2.c — the sum/max inner loops (reduce_body.h) compiled for the
 * avx2 level; see isa.h. */
#include "simd/vec_avx2.h"

#include "reduce_body.h"
