/* reduce2_avx2.c — the product/min/all/any inner loops (reduce2_body.h)
 * compiled for the avx2 level; see ../reduce2.h. */
#include "vec_avx2.h"

#include "reduce2_body.h"
