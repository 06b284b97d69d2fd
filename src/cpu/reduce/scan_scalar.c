/* scan_scalar.c — the scan inner loops (scan_body.h) compiled for the scalar
 * level; see scan.h. */
#include "simd/vec_scalar.h"

#include "scan_body.h"
