/* emlx/nx_types.h — Nx's types that have no engine dtype: the f8 formats
 * ({:f, 8} = E5M2, {:f8_e4m3fn, 8}) and the sub-byte integers ({:s, 2},
 * {:s, 4}, {:u, 2}, {:u, 4}). The engine stores them in a wider dtype and
 * converts at the edges, bit-exactly as Nx.BinaryBackend reads and writes
 * them, so that a round trip returns the same bits and an op computed in the
 * wide dtype and encoded gives Nx's bits.
 *
 * Nx's binary layout: f8 is one byte per element. Sub-byte elements are
 * packed most significant bits first (element 0 in the top bits of byte 0,
 * as Erlang bitstrings lay out <<x::4, y::4>>); a tensor of n elements of b
 * bits is n * b bits, so its last byte may be partial. Here a packed buffer
 * is always whole bytes (emlx_nx_type_nbytes); the bits after the last
 * element are zero when encoding and ignored when decoding.
 *
 * Decoding:
 *   f8 -> float16, float32 or float64 (every f8 value is exact in each).
 *     E5M2 follows IEEE (±inf, NaN for exponent 31 with a non-zero
 *     mantissa); E4M3FN has no infinity and NaN only at S.1111.111.
 *     A NaN is written as a signalling NaN whose payload carries its code,
 *     so encoding gives the same code back while the value is only moved
 *     (copy, reshape, slice, concatenate, ...); arithmetic quiets it and
 *     the result encodes as Nx's NaN.
 *   s2/s4 -> any signed integer dtype (sign-extended); u2/u4 -> any integer
 *     dtype.
 * Encoding (from any real float dtype for f8, any integer dtype for the
 * sub-byte types):
 *   E5M2: Nx writes <<x::float-16>> (round to nearest even, overflow to
 *     inf) and keeps the high byte, so the f16 mantissa is truncated to 2
 *     bits, not rounded. NaN is 0x7E (sign dropped) unless it carries a
 *     decoded code (above).
 *   E4M3FN: Nx.Floating.dump_f8_e4m3fn, step by step: saturate to ±448
 *     (±inf too), exponent floor(log2 |x|) (libm's log2, as the BEAM's),
 *     mantissa rounded half away from zero and clamped to 7 (no carry into
 *     the exponent), subnormals likewise; NaN is 0x7F. -0.0 encodes as 0x80,
 *     as Nx on OTP 27 and later; with EMLX_NX_NEG_ZERO_POSITIVE as 0x00, as
 *     Nx on earlier OTPs (whose pattern +0.0 also matches -0.0).
 *   s2/s4/u2/u4: the low 2 or 4 bits of the value (two's complement), as
 *     <<x::4-signed>> keeps them.
 * Functions return 0, or non-zero with emlx_last_error() set; the array
 * versions return NULL on failure. */
#ifndef EMLX_NX_TYPES_H
#define EMLX_NX_TYPES_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum emlx_nx_type {
  EMLX_NX_F8_E5M2,   /* Nx {:f, 8} */
  EMLX_NX_F8_E4M3FN, /* Nx {:f8_e4m3fn, 8} */
  EMLX_NX_S2,
  EMLX_NX_S4,
  EMLX_NX_U2,
  EMLX_NX_U4,
  EMLX_NX_TYPE_COUNT
} emlx_nx_type;

/* Flags of the encoders. */
enum { EMLX_NX_NEG_ZERO_POSITIVE = 1 };

/* Bits per element (8, 4 or 2; 0 for an invalid type). */
EMLX_API int emlx_nx_type_bits(emlx_nx_type type);
/* "f8", "f8_e4m3fn", "s2", "s4", "u2", "u4" ("invalid" otherwise). */
EMLX_API const char *emlx_nx_type_name(emlx_nx_type type);
/* The type named by emlx_nx_type_name; 0, or non-zero for an unknown name. */
EMLX_API int emlx_nx_type_from_name(const char *name, emlx_nx_type *type);
/* Bytes of a packed buffer of count elements: ceil(count * bits / 8);
 * 0 for an invalid type or a negative or overflowing count. */
EMLX_API size_t emlx_nx_type_nbytes(emlx_nx_type type, int64_t count);

/* count elements of type from the packed buffer src (src_bytes ==
 * emlx_nx_type_nbytes) into dst as dtype (dst_bytes == count * its size). */
EMLX_API int emlx_nx_decode(emlx_nx_type type, const void *src, size_t src_bytes, int64_t count,
                            emlx_dtype dtype, void *dst, size_t dst_bytes);
/* count elements of dtype from src (src_bytes == count * its size) into the
 * packed buffer dst (dst_bytes == emlx_nx_type_nbytes). */
EMLX_API int emlx_nx_encode(emlx_nx_type type, emlx_dtype dtype, const void *src, size_t src_bytes,
                            int64_t count, void *dst, size_t dst_bytes, unsigned flags);

/* A new array of shape and dtype holding the decoded packed buffer. */
EMLX_API emlx_array *emlx_from_nx_blob(const void *src, size_t nbytes, emlx_nx_type type,
                                       const int64_t *shape, int ndim, emlx_dtype dtype,
                                       emlx_device dev);
/* Evaluates a and encodes its elements (row-major) into dst. */
EMLX_API int emlx_to_nx_blob(emlx_array *a, emlx_nx_type type, void *dst, size_t nbytes,
                             unsigned flags);

#ifdef __cplusplus
}
#endif

#endif
