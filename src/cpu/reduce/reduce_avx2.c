/* reduce_avx2.c — the fold loops of the six reductions over axes
 * (reduce_body.h) compiled for the avx2 level; see reduce_fold.h. */
#include "simd/vec_avx2.h"

#include "reduce_body.h"
