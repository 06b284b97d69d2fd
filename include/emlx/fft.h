/* emlx/fft.h — fast Fourier transforms. */
#ifndef EMLX_FFT_H
#define EMLX_FFT_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
