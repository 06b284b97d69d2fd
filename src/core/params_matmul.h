/* params_matmul.h — parameter structs of the matmul family's primitives.
 *
 * MATMUL has no parameters: its inputs are a (..., M, K) and b (..., K, N)
 * whose batch axes already have the output's batch shape (broadcast views),
 * and the kernel reads any strides. */
#ifndef EMLX_PARAMS_MATMUL_H
#define EMLX_PARAMS_MATMUL_H

#include <stdint.h>

/* DIAG_VIEW: input axis j becomes output axis group[j]; input axes that share
 * an output axis are walked together (a diagonal: the output stride is the
 * sum of theirs, the sizes are equal). The output has max(group) + 1 axes and
 * every output axis receives at least one input axis. */
typedef struct emlx_diag_view_params {
  int32_t ndim_in;
  int32_t group[];
} emlx_diag_view_params;

#endif
