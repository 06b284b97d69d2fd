/* objcache.h — per-thread caches of the engine's working memory
 * (objcache.c): the small fixed-size objects (array handles, nodes) and the
 * spare blocks of eval's walk and partition, kept between evals. Both are
 * freed when the thread exits. */
#ifndef EMLX_OBJCACHE_H
#define EMLX_OBJCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Array handles and nodes come from a per-thread cache of freed blocks
 * (64-byte classes up to 1 KiB; larger sizes go to malloc). A block may be
 * freed on any thread, with the size it was allocated with. */
void *emlx__obj_alloc(size_t bytes);        /* zeroed; NULL when out of memory */
void emlx__obj_free(void *p, size_t bytes); /* NULL-safe */

/* Spare blocks: one malloc'd block per slot and thread, handed out by take
 * (NULL and *cap 0 when the slot is empty; the slot is empty until the
 * block is given back) and kept by give for the thread's next take when the
 * slot is empty and cap is at most EMLX__SPARE_MAX bytes (else freed). A
 * nested user (an eval inside a kernel) finds the slot empty and uses
 * malloc. */
enum {
  EMLX__SPARE_WALK_STACK,
  EMLX__SPARE_WALK_ORDER,
  EMLX__SPARE_MAP_KEYS,
  EMLX__SPARE_MAP_VALS,
  EMLX__SPARE_REGION_OF,
  EMLX__SPARE_PARTITION,
  EMLX__SPARE_GROUP,
  EMLX__SPARE_COUNT
};
#define EMLX__SPARE_MAX ((size_t)64 << 10)
void *emlx__spare_take(int slot, size_t *cap);
void emlx__spare_give(int slot, void *p, size_t cap); /* NULL-safe */
/* The slot's block when it holds `need` bytes, else a new one (malloc, at
 * least 4 KiB; the old block is freed): *cap gets its size. NULL when out of
 * memory. */
void *emlx__spare_get(int slot, size_t need, size_t *cap);

/* For tests: the calling thread's caches and the blocks freed at thread
 * exit so far (all threads). */
typedef struct emlx__objcache_info {
  size_t blocks, bytes; /* objects cached by the calling thread */
  size_t spares;        /* spare blocks kept by the calling thread */
  bool armed;           /* the thread's exit destructor is set */
  uint64_t exit_freed;  /* objects and spares freed at thread exit, all threads */
} emlx__objcache_info;
emlx__objcache_info emlx__objcache_thread_info(void);

#endif
