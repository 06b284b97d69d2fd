/* emlx/memory.h — the buffer allocator's counters and limits.
 *
 * active_memory: bytes in buffers that arrays hold now; peak_memory: the most
 * active_memory has been since start or emlx_reset_peak_memory();
 * cache_memory: bytes of freed buffers kept for reuse. */
#ifndef EMLX_MEMORY_H
#define EMLX_MEMORY_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct emlx_memory_stats {
  size_t active_memory;
  size_t peak_memory;
  size_t cache_memory;
} emlx_memory_stats;

EMLX_API emlx_memory_stats emlx_memory_info(void);
/* Both setters return the previous limit. Lowering the cache limit evicts at
 * once. Active memory never passes the memory limit: an allocation that would
 * take it over fails, even when a cached buffer of its size is free, and the
 * eval that asked for it returns an error, leaving every existing array and
 * the cache intact. One that fits but would take active + cached memory over
 * the limit first evicts cached buffers. */
EMLX_API size_t emlx_set_cache_limit(size_t bytes);
EMLX_API size_t emlx_set_memory_limit(size_t bytes);
EMLX_API size_t emlx_get_cache_limit(void);
EMLX_API size_t emlx_get_memory_limit(void);
EMLX_API void emlx_clear_cache(void);
EMLX_API void emlx_reset_peak_memory(void);

#ifdef __cplusplus
}
#endif
#endif
