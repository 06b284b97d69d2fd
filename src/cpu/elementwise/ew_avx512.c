/* ew_avx512.c — the elementwise inner loops (ew_body.h) compiled for the
 * avx512 level; see ../isa.h. */
#include "simd/vec_avx512.h"

#include "math_cr_avx512.h"

#include "ew_body.h"
