/* bits_scalar.c — the bit-counting loops (bits_body.h) at the scalar level. */
#define BITS_TABLE emlx_cpu_bits_scalar
#include "bits_body.h"
