/* reduce2_avx512.c — the product/min/all/any inner loops (reduce2_body.h)
 * compiled for the avx512 level; see ../reduce2.h. */
#include "vec_avx512.h"

#include "reduce2_body.h"
