/* reduce_scalar.c — the fold loops of the six reductions over axes
 * (reduce_body.h) compiled for the scalar level; see reduce_fold.h. */
#include "simd/vec_scalar.h"

#include "reduce_body.h"
