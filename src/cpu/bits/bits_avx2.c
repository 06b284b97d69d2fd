/* bits_avx2.c — the bit-counting loops (bits_body.h) at the avx2 level. */
#define BITS_TABLE emlx_cpu_bits_avx2
#include "bits_body.h"
