/* ew_scalar.c — the elementwise inner loops (ew_body.h) compiled for the
 * scalar level; see ../isa.h. */
#include "simd/vec_scalar.h"

#include "math_cr_scalar.h"

#include "ew_body.h"
