/* sort_avx512.c — the sort key loops (sort_body.h) compiled for the avx512
 * level; see sort.h. */
#include "simd/vec_avx512.h"

#include "sort_body.h"
