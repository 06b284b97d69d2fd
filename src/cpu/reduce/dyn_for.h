/* dyn_for.h — dynamic chunk scheduling for the reduce family's kernels
 * (reduce_arg.c, scan.c, sort.c).
 *
 * emlx_cpu_dyn_for(n, chunk, fn, ctx) calls fn(ctx, begin, end) over [0, n)
 * in chunks of `chunk` that every pool thread claims from an atomic
 * counter until none is left (the ggml habit). On a busy machine a thread
 * that is descheduled holds at most one small chunk, where a static split
 * would leave its whole share to wait for it. Runs inline when n <= chunk,
 * with one thread, or inside a pool worker. Which thread runs a chunk never
 * changes a result. */
#ifndef EMLX_CPU_DYN_FOR_H
#define EMLX_CPU_DYN_FOR_H

#include "internal.h"

void emlx_cpu_dyn_for(int64_t n, int64_t chunk, emlx_range_fn fn, void *ctx);

#endif
