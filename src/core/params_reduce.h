/* params_reduce.h — parameter structs of the reduce family's primitives
 * (product/min/all/any use emlx_reduce_params of prims.h). Plain data, no
 * pointers, every byte set by the constructor (compared bytewise). */
#ifndef EMLX_PARAMS_REDUCE_H
#define EMLX_PARAMS_REDUCE_H

#include <stdint.h>

/* ARGMAX / ARGMIN: one axis of the input (argmax_all flattens first). The
 * index dtype is the output array's. */
typedef struct emlx_argreduce_params {
  int32_t axis; /* non-negative */
  int32_t keep_dims;
  int32_t last_index; /* ties take the last index */
  int32_t reserved;   /* 0 */
} emlx_argreduce_params;

/* SCAN: the operation and its direction along one axis. */
typedef enum emlx_scan_op {
  EMLX_SCAN_SUM,
  EMLX_SCAN_PROD,
  EMLX_SCAN_MAX,
  EMLX_SCAN_MIN,
  EMLX_SCAN_OP_COUNT
} emlx_scan_op;

typedef struct emlx_scan_params {
  int32_t axis; /* non-negative */
  int32_t op;   /* emlx_scan_op */
  int32_t reverse;
  int32_t inclusive;
} emlx_scan_params;

/* SORT / ARGSORT: stable along one axis. The index dtype of ARGSORT is the
 * output array's. */
typedef struct emlx_sort_params {
  int32_t axis; /* non-negative */
  int32_t descending;
} emlx_sort_params;

#endif
