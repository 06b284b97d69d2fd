/* fast_scalar.c — the fused transformer kernels' inner loops (fast_body.h)
 * compiled for the scalar level; see fast_isa.h. */
#include "simd/vec_scalar.h"

#include "fast_body.h"
