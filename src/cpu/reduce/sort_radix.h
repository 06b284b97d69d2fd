/* sort_radix.h — stable radix sorts of unsigned integers, the engine of sort
 * and argsort (sort.c); the keys come from sort_keys.h.
 *
 * emlx_radix_uN(a, b, n, lo, hi, par) sorts a[0..n) stably by bits [lo, hi)
 * of each element (bit 0 the least significant); b is scratch of n
 * elements. It returns a or b, whichever holds the result. Bits above hi
 * must not matter and bits below lo may only break ties in their original
 * order: callers sort either whole keys (lo = 0, hi = width) or
 * (key << 32 | index) pairs (lo = 32), whose index bits already ascend.
 * With par, large inputs use the thread pool; a stable sort has a single
 * answer, so the result does not depend on the thread count.
 *
 * emlx_radix_kv64 sorts 64-bit keys with 32-bit companions (indices)
 * stably by key; *k / *ix are updated to point at the buffers holding the
 * result (the originals or the scratch k2 / ix2). */
#ifndef EMLX_CPU_SORT_RADIX_H
#define EMLX_CPU_SORT_RADIX_H

#include <stdbool.h>
#include <stdint.h>

uint16_t *emlx_radix_u16(uint16_t *a, uint16_t *b, int64_t n, int lo, int hi, bool par);
uint32_t *emlx_radix_u32(uint32_t *a, uint32_t *b, int64_t n, int lo, int hi, bool par);
uint64_t *emlx_radix_u64(uint64_t *a, uint64_t *b, int64_t n, int lo, int hi, bool par);
void emlx_radix_kv64(uint64_t **k, uint32_t **ix, uint64_t *k2, uint32_t *ix2, int64_t n);

#endif
