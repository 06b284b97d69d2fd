/* sort_avx2.c — the sort key loops (sort_body.h) compiled for the avx2
 * level; see sort.h. */
#include "simd/vec_avx2.h"

#include "sort_body.h"
