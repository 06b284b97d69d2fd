/* body.h — what every kernel body (ew_body.h, cast_body.h, reduce_body.h)
 * shares: the per-ISA symbol suffix, the tile size, and loading/storing
 * tiles of f16/bf16 through f32. Included after a vec_<isa>.h, which defines
 * EMLX_ISA_SUFFIX and the vl_* layer. */
#ifndef EMLX_SIMD_BODY_H
#define EMLX_SIMD_BODY_H

#include <stdint.h>

#include "convert.h"
#include "isa.h"

#ifndef EMLX_ISA_SUFFIX
#error "include a vec_<isa>.h first"
#endif

#define EMLX_BODY_CAT2(a, b) a##_##b
#define EMLX_BODY_CAT(a, b) EMLX_BODY_CAT2(a, b)
#define EMLX_ISA_NAME(x) EMLX_BODY_CAT(x, EMLX_ISA_SUFFIX)

/* Elements per tile when a loop stages data through f32 (fits L1 easily). */
#define EMLX_TILE 512

static inline int64_t bd_min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* n <= EMLX_TILE halves at stride s -> f32. */
static inline void bd_load_f16(const uint16_t *p, int64_t s, int64_t n, float *out) {
  if (s == 1) {
    vl_f16_to_f32(p, out, n);
    return;
  }
  uint16_t g[EMLX_TILE];
  for (int64_t i = 0; i < n; i++)
    g[i] = p[i * s];
  vl_f16_to_f32(g, out, n);
}
static inline void bd_load_bf16(const uint16_t *p, int64_t s, int64_t n, float *out) {
  if (s == 1) {
    for (int64_t i = 0; i < n; i++)
      out[i] = emlx_cv_bf16_to_f32(p[i]);
    return;
  }
  for (int64_t i = 0; i < n; i++)
    out[i] = emlx_cv_bf16_to_f32(p[i * s]);
}
static inline void bd_store_f16(const float *in, uint16_t *out, int64_t n) {
  vl_f32_to_f16(in, out, n);
}
static inline void bd_store_bf16(const float *in, uint16_t *out, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    out[i] = emlx_cv_f32_to_bf16(in[i]);
}

#endif
