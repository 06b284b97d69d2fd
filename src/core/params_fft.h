/* params_fft.h — parameter struct of the FFT family's primitive. Plain data,
 * no pointers, every byte set by the constructor (compared bytewise). */
#ifndef EMLX_PARAMS_FFT_H
#define EMLX_PARAMS_FFT_H

#include <stdint.h>

/* FFT: a one-dimensional complex64 transform along one axis. The input is
 * complex64; along `axis` its first min(n, length) entries are used and the
 * rest up to n is zero (padding); the output has length n there. inverse:
 * the +i exponent and the 1/n scale of ifft. Multi-axis transforms are
 * chains of these nodes. */
typedef struct emlx_fft_params {
  int64_t n;       /* >= 1 */
  int32_t axis;    /* non-negative */
  int32_t inverse; /* 0 or 1 */
} emlx_fft_params;

#endif
