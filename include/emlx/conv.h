/* emlx/conv.h — window reductions, window scatters and N-d convolution. */
#ifndef EMLX_CONV_H
#define EMLX_CONV_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
