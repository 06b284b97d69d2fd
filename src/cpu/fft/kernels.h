/* kernels_fft.h — the fft family's CPU kernels and its rows of the CPU
 * backend's table (src/cpu/backend.c expands EMLX_CPU_FFT_KERNELS). */
#ifndef EMLX_CPU_KERNELS_FFT_H
#define EMLX_CPU_KERNELS_FFT_H

#include "internal.h"

/* FFT (fft.c): a complex64 transform along one axis. */
int emlx_cpu_fft(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs);

/* Designated initialisers "[EMLX_PRIM_X] = kernel," for this family. */
#define EMLX_CPU_FFT_KERNELS [EMLX_PRIM_FFT] = emlx_cpu_fft,

#endif
