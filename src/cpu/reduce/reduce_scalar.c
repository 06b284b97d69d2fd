/* reduce_scalar.c — the sum/max inner loops (reduce_body.h) compiled for the
 * scalar level; see isa.h. */
#include "simd/vec_scalar.h"

#include "reduce_body.h"
