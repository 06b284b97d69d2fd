/* prims.h — the primitives of the graph, their parameter structs and traits.
 *
 * Parameters are plain data without pointers (variable-length parts are
 * flexible array members) and are zero-initialised, so two nodes have equal
 * parameters exactly when the bytes are equal: CSE and plan caches hash and
 * compare them bytewise. */
#ifndef EMLX_PRIMS_H
#define EMLX_PRIMS_H

#include <stddef.h>
#include <stdint.h>

typedef enum emlx_prim {
  /* creation (no inputs) */
  EMLX_PRIM_FULL,
  EMLX_PRIM_ARANGE,
  EMLX_PRIM_EYE,
  /* elementwise unary */
  EMLX_PRIM_NEGATE,
  EMLX_PRIM_EXP,
  EMLX_PRIM_ASTYPE,
  EMLX_PRIM_COPY,
  /* elementwise binary */
  EMLX_PRIM_ADD,
  EMLX_PRIM_SUBTRACT,
  EMLX_PRIM_MULTIPLY,
  EMLX_PRIM_DIVIDE,
  /* views (share the input's buffer when the layout allows) */
  EMLX_PRIM_BROADCAST,
  EMLX_PRIM_RESHAPE,
  EMLX_PRIM_TRANSPOSE,
  EMLX_PRIM_SLICE,
  /* reductions */
  EMLX_PRIM_SUM,
  EMLX_PRIM_MAX,
  EMLX_PRIM_COUNT
} emlx_prim;

/* What fusion and the scheduler need to know of a primitive. */
typedef enum emlx_prim_class {
  EMLX_CLASS_CREATE,
  EMLX_CLASS_UNARY,   /* elementwise, one input */
  EMLX_CLASS_BINARY,  /* elementwise, two broadcast inputs of one dtype */
  EMLX_CLASS_TERNARY, /* elementwise, three inputs */
  EMLX_CLASS_VIEW,
  EMLX_CLASS_REDUCE,
  EMLX_CLASS_OTHER
} emlx_prim_class;

typedef struct emlx_prim_traits {
  const char *name;
  int arity; /* inputs; -1: variable */
  emlx_prim_class klass;
} emlx_prim_traits;

extern const emlx_prim_traits emlx_prim_table[EMLX_PRIM_COUNT];

/* ---- parameter structs ---------------------------------------------------- */

/* FULL: the value, already converted to the output dtype (little-endian). */
typedef struct emlx_full_params {
  unsigned char value[16];
} emlx_full_params;

/* ARANGE: element i is (dtype)(start + i * step). */
typedef struct emlx_arange_params {
  double start;
  double step;
} emlx_arange_params;

/* EYE: ones where column - row == k. */
typedef struct emlx_eye_params {
  int64_t k;
} emlx_eye_params;

/* ASTYPE carries no params (the output dtype is the array's). */

/* TRANSPOSE: output axis i is input axis perm[i]. */
typedef struct emlx_transpose_params {
  int32_t ndim;
  int32_t perm[];
} emlx_transpose_params;

/* SLICE: per axis, the (already clamped) start index and the step;
 * vals[0..ndim) are starts, vals[ndim..2*ndim) are steps. The output shape is
 * the array's. */
typedef struct emlx_slice_params {
  int64_t ndim;
  int64_t vals[];
} emlx_slice_params;

/* SUM / MAX: sorted, distinct, non-negative axes of the input. */
typedef struct emlx_reduce_params {
  int32_t naxes;
  int32_t keep_dims;
  int32_t axes[];
} emlx_reduce_params;

#endif
