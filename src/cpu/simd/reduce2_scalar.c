/* reduce2_scalar.c — the product/min/all/any inner loops (reduce2_body.h)
 * compiled for the scalar level; see ../reduce2.h. */
#include "vec_scalar.h"

#include "reduce2_body.h"
