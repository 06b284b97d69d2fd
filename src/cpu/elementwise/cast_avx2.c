/* cast_avx2.c — the astype inner loops (cast_body.h) compiled for the
 * avx2 level; see ../isa.h. */
#include "simd/vec_avx2.h"

#include "cast_body.h"
