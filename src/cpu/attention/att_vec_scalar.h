/* att_vec_scalar.h — the few vector operations of the attention tile loop
 * (attention_body.h) for the scalar unit: one lane, plain C. */
#ifndef EMLX_ATT_VEC_SCALAR_H
#define EMLX_ATT_VEC_SCALAR_H

#include <math.h>

#include "simd/vec_scalar.h"

#define AV_W 1
#define AV_NV 4
typedef float av_f;

static inline av_f av_zero(void) { return 0.0f; }
static inline av_f av_set1(float x) { return x; }
static inline av_f av_load(const float *p) { return *p; }
static inline void av_store(float *p, av_f v) { *p = v; }
static inline av_f av_fma(av_f a, av_f b, av_f c) { return fmaf(a, b, c); }
static inline av_f av_mul(av_f a, av_f b) { return a * b; }
static inline float av_hsum(av_f v) { return v; }
static inline av_f av_load_bf16(const uint16_t *p) { return emlx_cv_bf16_to_f32(*p); }

#endif
