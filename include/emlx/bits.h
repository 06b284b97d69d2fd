/* emlx/bits.h — bit counting: count_leading_zeros and population_count.
 *
 * Both are elementwise, lazy and fusable like the other unary ops (inputs
 * borrowed, a new array returned; NULL + emlx_last_error() on failure).
 * They take every integer dtype (u8..u64, s8..s64) and return the input's
 * dtype. Signed inputs count over the two's-complement bits of their width,
 * as Nx does: in s32, count_leading_zeros(-1) == 0, (0) == 32, (1) == 31;
 * population_count(-1) == 32, in s8 population_count(-128) == 1.
 * bool, float and complex inputs are an error (Nx: "bitwise operators expect
 * integer tensors"). */
#ifndef EMLX_BITS_H
#define EMLX_BITS_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The number of zero bits above the highest set bit (the width for 0). */
EMLX_API emlx_array *emlx_count_leading_zeros(emlx_array *a);
/* The number of set bits. */
EMLX_API emlx_array *emlx_population_count(emlx_array *a);

#ifdef __cplusplus
}
#endif

#endif
