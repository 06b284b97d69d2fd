/* matmul_ops.h — what the matmul family's constructors (matmul.c,
 * einsum.c) share. */
#ifndef EMLX_MATMUL_OPS_H
#define EMLX_MATMUL_OPS_H

#include "ops_util.h"

/* The promoted dtype of a product of a and b; -1 with an error naming op for
 * bool. */
int emlx__matmul_dtype(emlx_dtype a, emlx_dtype b, const char *op, emlx_dtype *out);

#endif
