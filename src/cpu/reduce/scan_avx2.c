/* scan_avx2.c — the scan inner loops (scan_body.h) compiled for the avx2
 * level; see scan.h. */
#include "simd/vec_avx2.h"

#include "scan_body.h"
