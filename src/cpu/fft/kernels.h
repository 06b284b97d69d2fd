/* fft/kernels.h — the fft family's CPU kernels and its rows of the CPU
 * backend's table (src/cpu/backend.c expands EMLX_CPU_FFT_KERNELS).
 *
 * The family (src/cpu/fft/): our own FFT. fft.c is the driver along one axis
 * of any strides, fft_plan.c the plans (factorisation, twiddles, Bluestein,
 * four-step splits), fft.h their shared layout; the per-ISA machinery is
 * fft_body.h in fft_{scalar,avx2,avx512}.c. Constructors: src/ops/fft/;
 * tests: tests/fft/; benchmark: bench/bench_fft.c. */
#ifndef EMLX_CPU_KERNELS_FFT_H
#define EMLX_CPU_KERNELS_FFT_H

#include "internal.h"

/* FFT (fft.c): a complex64 transform along one axis; complex128 nodes go
 * on to fft_c128.c. */
int emlx_cpu_fft(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs);
int emlx_cpu_fft_c128(const emlx_node *node, emlx_array *const *inputs,
                      emlx_array *const *outputs);

/* Designated initialisers "[EMLX_PRIM_X] = kernel," for this family. */
#define EMLX_CPU_FFT_KERNELS [EMLX_PRIM_FFT] = emlx_cpu_fft,

#endif
