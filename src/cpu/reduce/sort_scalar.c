/* sort_scalar.c — the sort key loops (sort_body.h) compiled for the scalar
 * level; see sort.h. */
#include "simd/vec_scalar.h"

#include "sort_body.h"
