/* objcache.c — per-thread caches of the engine's small fixed-size objects
 * (array handles and graph nodes; a node and its single output share one
 * block, see graph.c) and of eval's spare working blocks (objcache.h).
 *
 * Eager code makes and frees a few of these per op, so malloc's general
 * paths would be a fifth of a small graph's cost. Each thread keeps freed
 * blocks in lists by size class (multiples of 64 bytes up to 1 KiB), up to
 * OBJ_THREAD_BYTES in all, and hands them out again before asking malloc.
 * The blocks are plain malloc memory, so a block made on one thread may be
 * freed on another: it joins the freeing thread's cache (or goes back to
 * malloc when that cache is full), which bounds what any producer/consumer
 * pattern can pile up. A thread's cache is freed when the thread exits (a
 * pthread key's destructor); a block freed on that thread afterwards (by a
 * later destructor) goes straight back to malloc. Under AddressSanitizer the
 * cached blocks are poisoned past their link word, so a use after free is
 * still reported.
 *
 * Spare blocks are simpler: one per slot, taken and given back by the same
 * thread (eval's walk and partition), so a small graph's eval allocates
 * nothing once its thread has run one like it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "objcache.h"

#include "internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define OBJ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OBJ_ASAN 1
#endif
#endif
#ifdef OBJ_ASAN
#include <sanitizer/asan_interface.h>
#define OBJ_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define OBJ_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define OBJ_POISON(p, n) ((void)(p), (void)(n))
#define OBJ_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define OBJ_GRAIN 64
#define OBJ_CLASSES 16 /* blocks of 64, 128, ..., 1024 bytes */
#define OBJ_THREAD_BYTES ((size_t)256 << 10)

enum { CACHE_FRESH = 0, CACHE_LIVE = 1, CACHE_DEAD = 2 };

typedef struct obj_block {
  struct obj_block *next;
} obj_block;

typedef struct obj_cache {
  obj_block *head[OBJ_CLASSES];
  size_t count[OBJ_CLASSES];
  size_t bytes; /* cached, all classes */
  int state;    /* CACHE_*: LIVE once the exit destructor is armed, DEAD after it ran */
  void *spare[EMLX__SPARE_COUNT];
  size_t spare_cap[EMLX__SPARE_COUNT];
} obj_cache;

static _Thread_local obj_cache tls_cache;

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static bool cache_key_ok;
static _Atomic uint64_t g_exit_freed; /* blocks freed by thread-exit destructors */

/* Class k holds blocks of (k + 1) * 64 bytes; -1 for a size no class holds. */
static int size_class(size_t bytes) {
  if (bytes == 0 || bytes > OBJ_GRAIN * OBJ_CLASSES)
    return -1;
  return (int)((bytes - 1) / OBJ_GRAIN);
}

static size_t class_bytes(int k) { return (size_t)(k + 1) * OBJ_GRAIN; }

static void cache_flush(obj_cache *c) {
  uint64_t n = 0;
  for (int k = 0; k < OBJ_CLASSES; k++) {
    obj_block *b = c->head[k];
    while (b) {
      OBJ_UNPOISON(b, class_bytes(k));
      obj_block *next = b->next;
      free(b);
      b = next;
      n++;
    }
    c->head[k] = NULL;
    c->count[k] = 0;
  }
  c->bytes = 0;
  for (int k = 0; k < EMLX__SPARE_COUNT; k++) {
    n += c->spare[k] != NULL;
    free(c->spare[k]);
    c->spare[k] = NULL;
    c->spare_cap[k] = 0;
  }
  atomic_fetch_add_explicit(&g_exit_freed, n, memory_order_relaxed);
}

/* At thread exit: free the cache; later frees on this thread bypass it. */
static void cache_exit(void *p) {
  obj_cache *c = (obj_cache *)p;
  cache_flush(c);
  c->state = CACHE_DEAD;
}

static void cache_key_init(void) { cache_key_ok = pthread_key_create(&cache_key, cache_exit) == 0; }

/* Arms the exit destructor on the thread's first cached block; false when
 * it cannot be armed (then nothing is cached: it would leak at exit). */
static bool cache_arm(obj_cache *c) {
  pthread_once(&cache_once, cache_key_init);
  if (!cache_key_ok || pthread_setspecific(cache_key, c) != 0) {
    c->state = CACHE_DEAD;
    return false;
  }
  c->state = CACHE_LIVE;
  return true;
}

void *emlx__obj_alloc(size_t bytes) {
  int k = size_class(bytes);
  if (k < 0)
    return calloc(1, bytes);
  obj_cache *c = &tls_cache;
  obj_block *b = c->head[k];
  if (!b)
    return calloc(1, class_bytes(k));
  OBJ_UNPOISON(b, class_bytes(k));
  c->head[k] = b->next;
  c->count[k]--;
  c->bytes -= class_bytes(k);
  memset(b, 0, bytes);
  return b;
}

void emlx__obj_free(void *p, size_t bytes) {
  if (!p)
    return;
  int k = size_class(bytes);
  obj_cache *c = &tls_cache;
  if (k < 0 || c->state == CACHE_DEAD || c->bytes + class_bytes(k) > OBJ_THREAD_BYTES ||
      (c->state == CACHE_FRESH && !cache_arm(c))) {
    free(p);
    return;
  }
  obj_block *b = (obj_block *)p;
  b->next = c->head[k];
  c->head[k] = b;
  c->count[k]++;
  c->bytes += class_bytes(k);
  /* All but the link: LeakSanitizer does not follow pointers in poisoned
   * memory, and any use of a dead array or node reads past its first word. */
  OBJ_POISON((char *)b + sizeof *b, class_bytes(k) - sizeof *b);
}

void *emlx__spare_take(int slot, size_t *cap) {
  obj_cache *c = &tls_cache;
  void *p = c->spare[slot];
  *cap = c->spare_cap[slot];
  c->spare[slot] = NULL;
  c->spare_cap[slot] = 0;
  return p;
}

void emlx__spare_give(int slot, void *p, size_t cap) {
  if (!p)
    return;
  obj_cache *c = &tls_cache;
  if (c->spare[slot] || cap > EMLX__SPARE_MAX || c->state == CACHE_DEAD ||
      (c->state == CACHE_FRESH && !cache_arm(c))) {
    free(p);
    return;
  }
  c->spare[slot] = p;
  c->spare_cap[slot] = cap;
}

void *emlx__spare_get(int slot, size_t need, size_t *cap) {
  void *p = emlx__spare_take(slot, cap);
  if (p && *cap >= need)
    return p;
  free(p);
  *cap = need < 4096 ? 4096 : need;
  return malloc(*cap);
}

emlx__objcache_info emlx__objcache_thread_info(void) {
  const obj_cache *c = &tls_cache;
  emlx__objcache_info s = {0, c->bytes, 0, c->state == CACHE_LIVE,
                           atomic_load_explicit(&g_exit_freed, memory_order_relaxed)};
  for (int k = 0; k < OBJ_CLASSES; k++)
    s.blocks += c->count[k];
  for (int k = 0; k < EMLX__SPARE_COUNT; k++)
    s.spares += c->spare[k] != NULL;
  return s;
}
