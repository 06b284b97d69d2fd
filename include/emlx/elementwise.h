/* emlx/elementwise.h — elementwise math beyond the basic ops: unary functions, comparisons, logical and bitwise ops, where, clip, isclose, allclose. */
#ifndef EMLX_ELEMENTWISE_H
#define EMLX_ELEMENTWISE_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
