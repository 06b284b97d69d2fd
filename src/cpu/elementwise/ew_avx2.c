/* ew_avx2.c — the elementwise inner loops (ew_body.h) compiled for the
 * avx2 level; see ../isa.h. */
#include "simd/vec_avx2.h"

#include "math_cr_avx2.h"

#include "ew_body.h"
