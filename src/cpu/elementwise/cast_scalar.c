/* cast_scalar.c — the astype inner loops (cast_body.h) compiled for the
 * scalar level; see ../isa.h. */
#include "simd/vec_scalar.h"

#include "cast_body.h"
