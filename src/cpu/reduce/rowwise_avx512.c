/* rowwise_avx512.c — the statistics and softmax inner loops (rowwise_body.h)
 * compiled for the avx512 level; see rowwise.h. */
#include "simd/vec_avx512.h"

#include "rowwise_body.h"
