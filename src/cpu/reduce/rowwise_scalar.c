/* rowwise_scalar.c — the statistics and softmax inner loops (rowwise_body.h)
 * compiled for the scalar level; see rowwise.h. */
#include "simd/vec_scalar.h"

#include "rowwise_body.h"
