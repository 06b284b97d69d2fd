/* rowwise_avx2.c — the statistics and softmax inner loops (rowwise_body.h)
 * compiled for the avx2 level; see rowwise.h. */
#include "simd/vec_avx2.h"

#include "rowwise_body.h"
