/* scan_avx512.c — the scan inner loops (scan_body.h) compiled for the avx512
 * level; see scan.h. */
#include "simd/vec_avx512.h"

#include "scan_body.h"
