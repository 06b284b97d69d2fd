/* fast_avx2.c — the fused transformer kernels' inner loops (fast_body.h)
 * compiled for the avx2 level; see fast_isa.h. */
#include "simd/vec_avx2.h"

#include "fast_body.h"
