/* kernels_conv.h — the conv family's CPU kernels and its rows of the CPU
 * backend's table (src/cpu/backend.c expands EMLX_CPU_CONV_KERNELS). */
#ifndef EMLX_CPU_KERNELS_CONV_H
#define EMLX_CPU_KERNELS_CONV_H

#include "internal.h"

/* Designated initialisers "[EMLX_PRIM_X] = kernel," for this family. */
#define EMLX_CPU_CONV_KERNELS

#endif
