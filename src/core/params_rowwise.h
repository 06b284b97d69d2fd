/* params_rowwise.h — parameters of ROW_REDUCE and ROW_SOFTMAX, the fused
 * statistics and softmax kernels (constructors: src/ops/reduce/rowwise.c,
 * kernels: src/cpu/reduce/rowwise.c).
 *
 * Both work on rows: the constructor moves the reduced axes last (a
 * transpose view), so the input's trailing `nred` axes form one row per
 * position of the leading ones. ROW_REDUCE's output has the leading axes'
 * shape; ROW_SOFTMAX's has the input's. Plain data, every byte set. */
#ifndef EMLX_PARAMS_ROWWISE_H
#define EMLX_PARAMS_ROWWISE_H

#include <stdint.h>

typedef enum emlx_rowwise_op {
  EMLX_ROW_MEAN,
  EMLX_ROW_VAR,
  EMLX_ROW_STD,
  EMLX_ROW_LOGSUMEXP,
  EMLX_ROW_SOFTMAX,
  EMLX_ROW_LOG_SOFTMAX,
} emlx_rowwise_op;

typedef struct emlx_rowwise_params {
  int32_t op;   /* emlx_rowwise_op */
  int32_t nred; /* trailing axes that form a row */
  int64_t ddof; /* var, std; 0 otherwise */
} emlx_rowwise_params;

#endif
