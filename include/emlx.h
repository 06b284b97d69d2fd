/* emlx.h — the umbrella header of the EMLX array engine. */
#ifndef EMLX_H
#define EMLX_H

#include "emlx/base.h"
#include "emlx/array.h"
#include "emlx/memory.h"
#include "emlx/queue.h"
#include "emlx/ops.h"

#endif
