/* emlx/linalg.h — linear algebra: factorisations, solves, inverses. */
#ifndef EMLX_LINALG_H
#define EMLX_LINALG_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
