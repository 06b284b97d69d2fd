/* quantize/qmm_tile.c — the gate of the bfloat16-x prefill kernel
 * (qmm_tile.h): the checks of the descriptor, and the choice of the unit
 * (AVX-512 BF16 when the ISA level is avx512 and the CPU has the
 * instructions; otherwise none, and the caller runs the f32 path). */
#include <string.h>

#include "isa.h"
#include "matmul/matmul.h"
#include "qmm_tile.h"

static bool format_ok(const emlx_qmm_desc *d) {
  switch (d->mode) {
  case EMLX_QMM_AFFINE:
    return (d->bits == 2 || d->bits == 3 || d->bits == 4 || d->bits == 5 || d->bits == 6 ||
            d->bits == 8) &&
           (d->group_size == 32 || d->group_size == 64 || d->group_size == 128) &&
           (d->scale_dtype == EMLX_FLOAT32 || d->scale_dtype == EMLX_FLOAT16 ||
            d->scale_dtype == EMLX_BFLOAT16) &&
           d->biases;
  case EMLX_QMM_MXFP4:
    return d->bits == 4 && d->group_size == 32 && d->scale_dtype == EMLX_UINT8;
  case EMLX_QMM_MXFP8:
    return d->bits == 8 && d->group_size == 32 && d->scale_dtype == EMLX_UINT8;
  case EMLX_QMM_NVFP4:
    return d->bits == 4 && d->group_size == 16 && d->scale_dtype == EMLX_UINT8;
  default:
    return false;
  }
}

bool emlx_cpu_qmm_tile(const emlx_qmm_desc *d, const uint16_t *xb) {
  if (!d || !xb || !d->w || !d->scales || !d->out || !d->transpose || d->M < EMLX_QMM_TILE_MIN_M ||
      d->N < 1 || d->K < 1 || d->ldx < d->K || d->ldo < d->N || !format_ok(d) ||
      d->K % d->group_size != 0)
    return false;
  if (strcmp(emlx_cpu_isa_get()->name, "avx512") != 0 || !emlx_mm_cpu_has_avx512bf16())
    return false;
  return emlx_qmm_tile_bf16_avx512(d, xb);
}
