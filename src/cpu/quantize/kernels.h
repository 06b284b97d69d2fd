/* quantize/kernels.h — the quantize family's CPU kernels and its rows of the
 * CPU backend's table (src/cpu/backend.c expands EMLX_CPU_QUANTIZE_KERNELS).
 *
 * The family (src/cpu/quantize/): MLX's quantization formats (formats.h),
 * quantize / dequantize (quantize.c) and the reference quantized matmul and
 * gather_qmm (qmm.c), which first offer each matrix to the fast SIMD kernels
 * of qmm_fast*.c through emlx_cpu_qmm_fast() / emlx_cpu_gather_qmm_fast()
 * (contract and descriptor in qmm_fast.h).
 * Constructors: src/ops/quantize/; tests: tests/quantize/. */
#ifndef EMLX_CPU_KERNELS_QUANTIZE_H
#define EMLX_CPU_KERNELS_QUANTIZE_H

#include "internal.h"

int emlx_cpu_quantize(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_dequantize(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_qmm(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_gather_qmm(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);

/* a's elements row-major: a's own data when it is row-contiguous, else a
 * malloc'ed copy returned through *owned (free it). NULL with an error when
 * the copy cannot be made; NULL without one for an empty array. */
const void *emlx_cpu_qz_contig(const emlx_array *a, void **owned);

/* Designated initialisers "[EMLX_PRIM_X] = kernel," for this family. */
#define EMLX_CPU_QUANTIZE_KERNELS                                                                  \
  [EMLX_PRIM_QUANTIZE] = emlx_cpu_quantize, [EMLX_PRIM_DEQUANTIZE] = emlx_cpu_dequantize,          \
  [EMLX_PRIM_QMM] = emlx_cpu_qmm, [EMLX_PRIM_GATHER_QMM] = emlx_cpu_gather_qmm,

#endif
