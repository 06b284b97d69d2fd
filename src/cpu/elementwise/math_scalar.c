/* math_scalar.c — the math family's inner loops (math_body.h) compiled for
 * the scalar level; see math_isa.h. */
#include "simd/vec_scalar.h"

#include "math_vec_scalar.h"
#include "math_cr_scalar.h"

#include "math_body.h"
