/* quantize/qmm_tile.h — the prefill quantized matmul for bfloat16 x
 * (qmm_tile.c: the gate; qmm_tile_avx512.c: the AVX-512 BF16 kernel).
 *
 * out[M][N] = x[M][K] . W^T, W [N, K] packed as in qmm_fast.h (transpose =
 * true only), every mode and bit width MLX has. A block of 32 rows of W is
 * unpacked once into a panel of bfloat16 code values (the integer code of
 * the affine modes, the e2m1 / e4m3 value of the microscaled ones: all exact
 * in bfloat16) that every row of x then reuses; vdpbf16ps (or TDPBF16PS,
 * where the CPU has AMX-BF16 and groups are 32 codes or more) multiplies the
 * bfloat16 x with those codes exactly and sums in f32, and each group's sum
 * is scaled once: out = sum_g s_g * (sum_{k in g} x_k q_k) + b_g * (sum_{k in
 * g} x_k). Nothing dequantized is written to memory beyond the panels.
 * Results agree with an f64 dequantize-then-matmul to f32 rounding of the
 * sums. Both treat subnormal inputs as zero, so an x with non-zero
 * values below 2^-60 in magnitude, or non-finite values, is declined (the
 * f32 path then runs). */
#ifndef EMLX_CPU_QMM_TILE_H
#define EMLX_CPU_QMM_TILE_H

#include <stdbool.h>
#include <stdint.h>

#include "qmm_fast.h"

/* The fewest rows of x the tile kernel is offered (fewer: the decode
 * paths of qmm_fast.c, which unpack nothing into memory). */
#define EMLX_QMM_TILE_MIN_M 32

/* d as for emlx_cpu_qmm_fast, except that x is xb: bfloat16 bits [M][ldx]
 * (d->x is not read). true: out written; false: not handled here (not
 * transpose, M below EMLX_QMM_TILE_MIN_M, an invalid format, a CPU or ISA
 * level without AVX-512 BF16, an x it declines, or no scratch memory); no
 * error is set. */
bool emlx_cpu_qmm_tile(const emlx_qmm_desc *d, const uint16_t *xb);

/* The AVX-512 BF16 kernel behind it (qmm_tile_avx512.c), for a checked d. */
bool emlx_qmm_tile_bf16_avx512(const emlx_qmm_desc *d, const uint16_t *xb);

#endif
