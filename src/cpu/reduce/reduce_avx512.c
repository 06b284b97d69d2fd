/* reduce_avx512.c — the fold loops of the six reductions over axes
 * (reduce_body.h) compiled for the avx512 level; see reduce_fold.h. */
#include "simd/vec_avx512.h"

#include "reduce_body.h"
