/* math_avx512.c — the math family's inner loops (math_body.h) compiled for
 * the avx512 level; see math_isa.h. */
#include "simd/vec_avx512.h"

#include "math_vec_avx512.h"
#include "math_cr_avx512.h"

#include "math_body.h"
