/* bits.c — constructors of the bit-counting ops (include/emlx/bits.h):
 * integer dtypes only, the output keeps the input's dtype. */
#include "ops_util.h"

static emlx_array *bit_count(emlx_prim prim, emlx_array *a) {
  const char *op = emlx_prim_table[prim].name;
  EMLX_CHECK_ARRAY(a, op);
  if (!emlx_dtype_is_integer(a->dtype))
    return EMLX_FAIL_NULL("%s: expects an integer array (got %s)", op, emlx_dtype_name(a->dtype));
  return emlx__op(prim, &a, 1, NULL, 0, a->dtype, a->shape, a->ndim);
}

emlx_array *emlx_count_leading_zeros(emlx_array *a) {
  return bit_count(EMLX_PRIM_COUNT_LEADING_ZEROS, a);
}

emlx_array *emlx_population_count(emlx_array *a) {
  return bit_count(EMLX_PRIM_POPULATION_COUNT, a);
}
