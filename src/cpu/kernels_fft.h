/* kernels_fft.h — the fft family's CPU kernels and its rows of the CPU
 * backend's table (src/cpu/backend.c expands EMLX_CPU_FFT_KERNELS). */
#ifndef EMLX_CPU_KERNELS_FFT_H
#define EMLX_CPU_KERNELS_FFT_H

#include "internal.h"

/* Designated initialisers "[EMLX_PRIM_X] = kernel," for this family. */
#define EMLX_CPU_FFT_KERNELS

#endif
