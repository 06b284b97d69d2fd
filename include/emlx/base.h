/* emlx/base.h — the types every area shares: arrays, dtypes, devices, errors.
 *
 * Ownership: every function that returns an emlx_array * hands the caller one
 * reference, which the caller gives back with emlx_release(). Arrays passed as
 * arguments are borrowed. Failure is NULL (or a non-zero status) plus a
 * thread-local message from emlx_last_error(); no input aborts the process. */
#ifndef EMLX_BASE_H
#define EMLX_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define EMLX_API __attribute__((visibility("default")))
#else
#define EMLX_API
#endif

#define EMLX_VERSION_MAJOR 0
#define EMLX_VERSION_MINOR 1
#define EMLX_VERSION_PATCH 0

/* Opaque, reference-counted array handle (lazy until evaluated). */
typedef struct emlx_array emlx_array;

/* The 14 dtypes of MLX, in MLX's order, then complex128 (Nx has it). */
typedef enum emlx_dtype {
  EMLX_BOOL,
  EMLX_UINT8,
  EMLX_UINT16,
  EMLX_UINT32,
  EMLX_UINT64,
  EMLX_INT8,
  EMLX_INT16,
  EMLX_INT32,
  EMLX_INT64,
  EMLX_FLOAT16,
  EMLX_FLOAT32,
  EMLX_FLOAT64,
  EMLX_BFLOAT16,
  EMLX_COMPLEX64,  /* a pair of f32: real, imaginary */
  EMLX_COMPLEX128, /* a pair of f64: real, imaginary */
  EMLX_DTYPE_COUNT
} emlx_dtype;

typedef enum emlx_device { EMLX_CPU, EMLX_GPU, EMLX_DEVICE_COUNT } emlx_device;

/* Largest rank an array may have. Every shape, as given to a constructor
 * or made by an op, has non-negative dimensions whose non-zero ones multiply
 * to at most 2^60: an empty shape is held to the rule of a full one
 * ({0, 2^30, 2^30} is valid, {0, INT64_MAX, 2} is refused), whatever the
 * order of its dimensions. */
#define EMLX_MAX_NDIM 64

/* The message of the last failure on this thread ("" if none). The pointer
 * stays valid until the next failing call on the same thread. */
EMLX_API const char *emlx_last_error(void);
EMLX_API void emlx_clear_error(void);

/* Dtype facts. */
EMLX_API size_t emlx_dtype_size(emlx_dtype dtype);          /* bytes per element; 0 if invalid */
EMLX_API const char *emlx_dtype_name(emlx_dtype dtype);      /* "float32", ...; "invalid" */
EMLX_API bool emlx_dtype_is_valid(emlx_dtype dtype);
EMLX_API bool emlx_dtype_is_float(emlx_dtype dtype);        /* f16, bf16, f32, f64 */
EMLX_API bool emlx_dtype_is_complex(emlx_dtype dtype);      /* c64, c128 */
/* The dtype of a complex dtype's parts (c64 -> f32, c128 -> f64); others: itself. */
EMLX_API emlx_dtype emlx_dtype_real_part(emlx_dtype dtype);
EMLX_API bool emlx_dtype_is_integer(emlx_dtype dtype);      /* signed or unsigned, not bool */
EMLX_API bool emlx_dtype_is_signed(emlx_dtype dtype);       /* signed ints and floats */
/* MLX's (JAX's lattice) promotion of two dtypes. */
EMLX_API emlx_dtype emlx_promote_types(emlx_dtype a, emlx_dtype b);

/* Devices: cpu always; gpu only when built with a GPU backend and one is present. */
EMLX_API bool emlx_device_available(emlx_device dev);
EMLX_API emlx_device emlx_default_device(void); /* gpu if available, else cpu */
EMLX_API const char *emlx_device_name(emlx_device dev);

/* Bit-exact scalar conversions (round to nearest even, NaN and Inf kept). */
EMLX_API uint16_t emlx_f32_to_f16(float x);
EMLX_API float emlx_f16_to_f32(uint16_t h);
EMLX_API uint16_t emlx_f32_to_bf16(float x);
EMLX_API float emlx_bf16_to_f32(uint16_t h);

#ifdef __cplusplus
}
#endif
#endif
