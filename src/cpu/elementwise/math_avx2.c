/* math_avx2.c — the math family's inner loops (math_body.h) compiled for
 * the avx2 level; see math_isa.h. */
#include "simd/vec_avx2.h"

#include "math_vec_avx2.h"
#include "math_cr_avx2.h"

#include "math_body.h"
