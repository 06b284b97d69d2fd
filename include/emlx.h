/* emlx.h — the umbrella header of the EMLX array engine. */
#ifndef EMLX_H
#define EMLX_H

#include "emlx/base.h"
#include "emlx/array.h"
#include "emlx/memory.h"
#include "emlx/queue.h"
#include "emlx/ops.h"
#include "emlx/elementwise.h"
#include "emlx/reduce.h"
#include "emlx/indexing.h"
#include "emlx/conv.h"
#include "emlx/matmul.h"
#include "emlx/linalg.h"
#include "emlx/fft.h"
#include "emlx/compile.h"
#include "emlx/bits.h"
#include "emlx/fast.h"
#include "emlx/nx_types.h"
#include "emlx/fast_attention.h"

#endif
