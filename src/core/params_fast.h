/* params_fast.h — parameters of the fused transformer kernels FAST_NORM,
 * FAST_ROPE and FAST_SWIGLU (constructors: src/ops/fast/fast.c, kernels:
 * src/cpu/fast/fast.c). Plain data, every byte set, no padding. */
#ifndef EMLX_PARAMS_FAST_H
#define EMLX_PARAMS_FAST_H

#include <stdint.h>

typedef enum emlx_fast_norm_op {
  EMLX_FAST_RMS_NORM,
  EMLX_FAST_LAYER_NORM,
} emlx_fast_norm_op;

/* FAST_NORM: inputs x, then weight when has_weight, then bias when
 * has_bias (each rank 1, x's last dimension, x's dtype). */
typedef struct emlx_fast_norm_params {
  int32_t op; /* emlx_fast_norm_op */
  int32_t has_weight;
  int32_t has_bias;
  float eps;
} emlx_fast_norm_params;

/* Where a row's position comes from. */
typedef enum emlx_fast_rope_mode {
  EMLX_ROPE_SCALAR,    /* offset + t */
  EMLX_ROPE_OFFSETS,   /* input 1, {B} or one element: offsets[b] + t */
  EMLX_ROPE_POSITIONS, /* input 1, {B, T}: positions[b, t] */
} emlx_fast_rope_mode;

/* FAST_ROPE: inputs x, then the offsets / positions (modes other than
 * SCALAR), then freqs ({dims / 2}, float32) when has_freqs. seq_axis is
 * the axis of x that T runs along (ndim - 2 for rope, 1 for the others);
 * the batch axis is 0. */
typedef struct emlx_fast_rope_params {
  int32_t dims;
  int32_t traditional;
  int32_t mode; /* emlx_fast_rope_mode */
  int32_t seq_axis;
  int32_t has_freqs;
  float base;
  float scale;
  int32_t pad; /* zero */
  int64_t offset;
} emlx_fast_rope_params;

#endif
