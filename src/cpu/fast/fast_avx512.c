/* fast_avx512.c — the fused transformer kernels' inner loops (fast_body.h)
 * compiled for the avx512 level; see fast_isa.h. */
#include "simd/vec_avx512.h"

#include "fast_body.h"
