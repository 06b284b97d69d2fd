/* cast_avx512.c — the astype inner loops (cast_body.h) compiled for the
 * avx512 level; see ../isa.h. */
#include "simd/vec_avx512.h"

#include "cast_body.h"
