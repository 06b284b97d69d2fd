/* params_quantize.h — the parameter struct of the quantize family's
 * primitives (QUANTIZE, DEQUANTIZE, QMM, GATHER_QMM; include/emlx/quantize.h).
 *
 * Inputs, as the constructors in src/ops/quantize/ arrange them:
 *   QUANTIZE    (w)                                  -> wq, scales[, biases]
 *   DEQUANTIZE  (wq, scales[, biases])               -> dense
 *   QMM         (x, w, scales[, biases])             -> out
 *   GATHER_QMM  (x, w, scales[, biases], lhs, rhs)   -> out
 * biases are present exactly when mode is affine. For QMM / GATHER_QMM the
 * batch axes of x and w are not broadcast by the constructor: the kernel maps
 * each output matrix to its x and w matrices (broadcast rules in the
 * constructor's comment); lhs and rhs are already broadcast to the output's
 * batch shape (views). */
#ifndef EMLX_PARAMS_QUANTIZE_H
#define EMLX_PARAMS_QUANTIZE_H

#include <stdint.h>

typedef struct emlx_quantize_params {
  int32_t mode; /* emlx_quantization_mode */
  int32_t group_size;
  int32_t bits;
  int32_t transpose;   /* QMM, GATHER_QMM */
  int32_t sorted;      /* GATHER_QMM: rhs sorted (hint) */
  int32_t with_biases; /* QUANTIZE: the biases output exists */
} emlx_quantize_params;

#endif
