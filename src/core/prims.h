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
  /* a program input while emlx_compile traces (compile.c); never evaluated;
   * params: one int32, set to 1 by an attempt to evaluate it */
  EMLX_PRIM_PLACEHOLDER,
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

  /* ---- math family (include/emlx/elementwise.h) ---- */
  EMLX_PRIM_ABS,
  EMLX_PRIM_ACOS,
  EMLX_PRIM_ACOSH,
  EMLX_PRIM_ASIN,
  EMLX_PRIM_ASINH,
  EMLX_PRIM_ATAN,
  EMLX_PRIM_ATANH,
  EMLX_PRIM_BITWISE_NOT,
  EMLX_PRIM_CEIL,
  EMLX_PRIM_CONJUGATE,
  EMLX_PRIM_COS,
  EMLX_PRIM_COSH,
  EMLX_PRIM_ERF,
  EMLX_PRIM_ERF_INV,
  EMLX_PRIM_ERFC,
  EMLX_PRIM_EXPM1,
  EMLX_PRIM_FLOOR,
  EMLX_PRIM_IMAG,
  EMLX_PRIM_IS_INF,
  EMLX_PRIM_IS_NAN,
  EMLX_PRIM_LOG,
  EMLX_PRIM_LOG1P,
  EMLX_PRIM_LOGICAL_NOT,
  EMLX_PRIM_REAL,
  EMLX_PRIM_ROUND,
  EMLX_PRIM_RSQRT,
  EMLX_PRIM_SIGMOID,
  EMLX_PRIM_SIGN,
  EMLX_PRIM_SIN,
  EMLX_PRIM_SINH,
  EMLX_PRIM_SQRT,
  EMLX_PRIM_TAN,
  EMLX_PRIM_TANH,
  EMLX_PRIM_QUOTIENT,
  EMLX_PRIM_REMAINDER,
  EMLX_PRIM_POW,
  EMLX_PRIM_ATAN2,
  EMLX_PRIM_MAXIMUM,
  EMLX_PRIM_MINIMUM,
  EMLX_PRIM_EQUAL,
  EMLX_PRIM_NOT_EQUAL,
  EMLX_PRIM_GREATER,
  EMLX_PRIM_GREATER_EQUAL,
  EMLX_PRIM_LESS,
  EMLX_PRIM_LESS_EQUAL,
  EMLX_PRIM_LOGICAL_AND,
  EMLX_PRIM_LOGICAL_OR,
  EMLX_PRIM_LOGICAL_XOR,
  EMLX_PRIM_BITWISE_AND,
  EMLX_PRIM_BITWISE_OR,
  EMLX_PRIM_BITWISE_XOR,
  EMLX_PRIM_LEFT_SHIFT,
  EMLX_PRIM_RIGHT_SHIFT,
  EMLX_PRIM_WHERE,
  EMLX_PRIM_CLIP,
  EMLX_PRIM_ISCLOSE,

  /* ---- reduction, scan and sort family (include/emlx/reduce.h) ---- */
  EMLX_PRIM_PRODUCT,
  EMLX_PRIM_MIN,
  EMLX_PRIM_ALL,
  EMLX_PRIM_ANY,
  EMLX_PRIM_ARGMAX,
  EMLX_PRIM_ARGMIN,
  EMLX_PRIM_SCAN,
  EMLX_PRIM_SORT,
  EMLX_PRIM_ARGSORT,

  /* ---- indexing family (include/emlx/indexing.h) ---- */
  EMLX_PRIM_SLICE_UPDATE,
  EMLX_PRIM_PAD,
  EMLX_PRIM_CONCATENATE,
  EMLX_PRIM_AS_STRIDED,
  EMLX_PRIM_VIEW_DTYPE,
  EMLX_PRIM_GATHER,
  EMLX_PRIM_SCATTER,
  EMLX_PRIM_SCATTER_ADD,
  EMLX_PRIM_TAKE,
  EMLX_PRIM_TAKE_ALONG_AXIS,

  /* ---- window and convolution family (include/emlx/conv.h) ---- */
  EMLX_PRIM_WINDOW_REDUCE,
  EMLX_PRIM_WINDOW_SCATTER,
  EMLX_PRIM_CONV,

  /* ---- matmul family (include/emlx/matmul.h) ---- */
  EMLX_PRIM_MATMUL,
  EMLX_PRIM_DIAG_VIEW, /* einsum's repeated labels: a view on diagonals */

  /* ---- linear algebra family (include/emlx/linalg.h) ---- */
  EMLX_PRIM_CHOLESKY,
  EMLX_PRIM_EIGH,
  EMLX_PRIM_INV,
  EMLX_PRIM_LU,
  EMLX_PRIM_QR,
  EMLX_PRIM_SOLVE,
  EMLX_PRIM_SOLVE_TRIANGULAR,
  EMLX_PRIM_SVD,
  EMLX_PRIM_TRI_INV,
  EMLX_PRIM_PINV,

  /* ---- FFT family (include/emlx/fft.h) ---- */
  EMLX_PRIM_FFT,

  /* ---- bit counting (include/emlx/bits.h) ---- */
  EMLX_PRIM_COUNT_LEADING_ZEROS,
  EMLX_PRIM_POPULATION_COUNT,

  /* ---- statistics and softmax (include/emlx/reduce.h; params_rowwise.h) ---- */
  EMLX_PRIM_ROW_REDUCE,  /* mean, var, std, logsumexp over trailing axes */
  EMLX_PRIM_ROW_SOFTMAX, /* softmax, log_softmax over trailing axes */

  /* ---- fused transformer kernels (include/emlx/fast.h; params_fast.h) ---- */
  EMLX_PRIM_FAST_NORM,   /* rms_norm, layer_norm over the last axis */
  EMLX_PRIM_FAST_ROPE,   /* rotary position embedding */
  EMLX_PRIM_FAST_SWIGLU, /* silu(gate) * up */
  /* ---- attention family (include/emlx/fast_attention.h; params_attention.h) ---- */
  EMLX_PRIM_SDPA,         /* fused scaled dot-product attention */
  EMLX_PRIM_KV_ATTENTION, /* KV-cache update + attention: three outputs */

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
