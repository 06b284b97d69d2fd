/* indexing_util.h — what the indexing family's CPU kernels share
 * (src/cpu/indexing_*.c): strided block copies run over the pool, element
 * fills, and the reading of index arrays of any integer dtype and layout into
 * element offsets, with MLX's negative wrap and the clamp / check policy.
 *
 * All data movement is by element size (1, 2, 4 or 8 bytes: every dtype,
 * complex64 included, is one of these), so the kernels do not care about
 * dtypes except scatter_add. */
#ifndef EMLX_CPU_INDEXING_UTIL_H
#define EMLX_CPU_INDEXING_UTIL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "params_indexing.h"

/* Elements a parallel chunk should at least move. */
#define EMLX_IDX_GRAIN 16384
/* Outputs at least this large are written with streaming stores. */
#define EMLX_IDX_STREAM_MIN ((size_t)32 << 20)
/* Index positions converted at a time (a stack buffer of offsets). */
#define EMLX_IDX_PIECE 512

/* ---- strided blocks --------------------------------------------------------
 * A block is a shape with element strides on a destination and a source side,
 * simplified: size-1 dims dropped, neighbouring dims that are contiguous on
 * both sides merged, so its innermost dim is as long as possible. Its "rows"
 * are the positions of all dims but the innermost. A side may be ignored
 * (strides 0) when only one side's offsets are wanted. */
typedef struct emlx_idx_block {
  int ndim;     /* >= 1 */
  int64_t size; /* elements (0: nothing to do) */
  int64_t rows; /* size / shape[ndim - 1] */
  int64_t shape[EMLX_MAX_NDIM];
  int64_t dst[EMLX_MAX_NDIM];
  int64_t src[EMLX_MAX_NDIM];
} emlx_idx_block;

/* dst_strides or src_strides NULL: row-major strides of shape. */
void emlx_idx_block_init(emlx_idx_block *b, int ndim, const int64_t *shape,
                         const int64_t *dst_strides, const int64_t *src_strides);
/* Element offsets (dst and src side) of the first element of row r. */
void emlx_idx_block_row(const emlx_idx_block *b, int64_t r, int64_t *dst_off, int64_t *src_off);
/* Copies rows [r0, r1) of the block from src to dst (pointers to element 0
 * of each side); stream as for emlx_idx_copy_run. */
void emlx_idx_block_copy_rows(const emlx_idx_block *b, char *dst, const char *src, size_t esize,
                              int64_t r0, int64_t r1, bool stream);

/* Moves n elements of esize bytes from src (stride ss) to dst (stride ds):
 * memcpy when both are contiguous, a fill when ss == 0. With stream, long
 * contiguous runs use non-temporal stores (no read-for-ownership of the
 * destination: a third less memory traffic for outputs larger than the
 * caches); the caller then ends its work with emlx_idx_stream_fence(). */
void emlx_idx_copy_run(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n, size_t esize,
                       bool stream);
/* Whether an output of nbytes is written with streaming stores. */
static inline bool emlx_idx_streams(size_t nbytes) { return nbytes >= EMLX_IDX_STREAM_MIN; }
/* memcpy of n bytes with streaming stores (then emlx_idx_stream_fence). */
void emlx_idx_stream_bytes(char *dst, const char *src, size_t n);
/* Orders this thread's streaming stores before what follows (the pool's
 * completion signal). */
void emlx_idx_stream_fence(void);
/* Writes n copies of the esize-byte value to dst (contiguous). */
void emlx_idx_fill_run(char *dst, int64_t n, const void *value, size_t esize);
/* The same for a large contiguous range, over the pool. */
void emlx_idx_fill_parallel(char *dst, int64_t n, const void *value, size_t esize);

/* A list of block copies, run as one job over the pool (long rows are split
 * in pieces so that a single big copy still uses every thread). */
typedef struct emlx_idx_copy {
  char *dst;
  const char *src;
  emlx_idx_block blk;
} emlx_idx_copy;
void emlx_idx_copies_run(const emlx_idx_copy *copies, int n, size_t esize);

/* Copies the READY array src (any layout) into dst, row-major. */
void emlx_idx_copy_array(char *dst, const emlx_array *src);

/* ---- offsets along a strided walk -------------------------------------------
 * A walk enumerates the positions of a shape in row-major order and yields
 * an element offset for each (strides may be 0 or negative). */
typedef struct emlx_idx_walk {
  emlx_idx_block blk; /* the src side carries the strides */
} emlx_idx_walk;
void emlx_idx_walk_init(emlx_idx_walk *w, int ndim, const int64_t *shape, const int64_t *strides);
/* out[j] = offset of position p0 + j, j < n. */
void emlx_idx_walk_offsets(const emlx_idx_walk *w, int64_t p0, int64_t n, int64_t *out);

/* ---- index arrays ------------------------------------------------------------ */

/* How the indices of one axis become element offsets: index i (after the
 * wrap) must lie in [0, hi], hi = dim - slice size; the offset is i * mul. */
typedef struct emlx_idx_axis {
  int64_t dim;  /* the axis' size (for the wrap and messages) */
  int64_t hi;   /* largest valid start */
  int64_t mul;  /* element stride of the axis in the indexed array */
  int32_t wrap; /* negative indices count from the end */
  int32_t check;
  int32_t axis;  /* for messages */
  int64_t slice; /* for messages */
} emlx_idx_axis;

/* An index array: its data, dtype and walk. */
typedef struct emlx_idx_src {
  const char *data;
  emlx_dtype dtype;
  emlx_idx_walk walk;
} emlx_idx_src;
void emlx_idx_src_init(emlx_idx_src *s, const emlx_array *idx);

/* The first out-of-range index a parallel kernel met (CHECK mode). */
typedef struct emlx_idx_error {
  _Atomic int set;
  int32_t axis;
  int64_t dim, slice;
  int is_unsigned;
  uint64_t raw; /* the index as given (bits of an int64 or a uint64) */
} emlx_idx_error;

/* out[j] (+)= normalised index of position p0 + j times ax->mul, j < n
 * (add != 0 accumulates into out). Out-of-range indices are clamped; in
 * CHECK mode the first one is also recorded in err. Returns 0, or -1 when
 * an index was out of range in CHECK mode. */
int emlx_idx_offsets(const emlx_idx_src *s, int64_t p0, int64_t n, const emlx_idx_axis *ax, int add,
                     int64_t *out, emlx_idx_error *err);
/* Element pos (row-major) of the READY integer array a, as int64 (u64
 * beyond INT64_MAX saturates). */
int64_t emlx_idx_load_at(const emlx_array *a, int64_t pos);
/* Sets the error message from err for op; returns -1. */
int emlx_idx_error_report(const emlx_idx_error *err, const char *op);

#endif
