/* alloc.c — the buffer allocator: 64-byte aligned buffers, huge pages for
 * large ones, and a size-bucketed cache of freed buffers with LRU eviction.
 *
 * Sizes round up to a class (multiples of 64 B up to 1 KiB, then four
 * classes per power of two), so a freed buffer serves every later request of
 * its class. Large buffers come from mmap aligned to 2 MiB with
 * MADV_HUGEPAGE: the first touch of fresh 4 KiB pages otherwise dominates
 * large outputs. One mutex guards everything; allocation is per op, not per
 * element, so it is never hot. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define SMALL_LIMIT 1024u
#define NBUCKETS 256
#define MMAP_THRESHOLD ((size_t)1 << 20)
#define HUGE_PAGE ((size_t)2 << 20)

typedef struct allocator {
  pthread_mutex_t mu;
  size_t active, peak, cached;
  size_t cache_limit, memory_limit;
  bool limits_ready;
  emlx_buffer *buckets[NBUCKETS]; /* most recently freed first */
  emlx_buffer *lru_head;          /* oldest cached buffer */
  emlx_buffer *lru_tail;          /* newest cached buffer */
} allocator;

static allocator g_alloc = {.mu = PTHREAD_MUTEX_INITIALIZER};

static size_t physical_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return (size_t)8 << 30;
  return (size_t)pages * (size_t)page;
}

static void ensure_limits(void) {
  if (g_alloc.limits_ready) return;
  g_alloc.memory_limit = physical_memory();
  g_alloc.cache_limit = g_alloc.memory_limit / 2;
  g_alloc.limits_ready = true;
}

/* Size class of n bytes: its bucket and capacity. */
static uint32_t size_class(size_t n, size_t *capacity) {
  if (n <= SMALL_LIMIT) {
    size_t units = n == 0 ? 1 : (n + 63) / 64;
    *capacity = units * 64;
    return (uint32_t)units; /* 1..16 */
  }
  int k = 63 - __builtin_clzll((unsigned long long)(n - 1)); /* 2^k < n <= 2^(k+1) */
  size_t quarter = (size_t)1 << (k - 1 > 0 ? k - 1 : 0);
  quarter >>= 1; /* 2^(k-2) */
  size_t base = (size_t)1 << k;
  size_t j = (n - base + quarter - 1) / quarter; /* 1..4 */
  *capacity = base + j * quarter;
  return (uint32_t)(16 + (k - 10) * 4 + (int)j); /* k >= 10 */
}

static void lru_unlink(emlx_buffer *b) {
  if (b->lru_prev) b->lru_prev->lru_next = b->lru_next;
  else g_alloc.lru_head = b->lru_next;
  if (b->lru_next) b->lru_next->lru_prev = b->lru_prev;
  else g_alloc.lru_tail = b->lru_prev;
  b->lru_prev = b->lru_next = NULL;
}

static void bucket_unlink(emlx_buffer *b) {
  if (b->prev) b->prev->next = b->next;
  else g_alloc.buckets[b->bucket] = b->next;
  if (b->next) b->next->prev = b->prev;
  b->prev = b->next = NULL;
}

static void *os_alloc(size_t capacity, uint8_t *mapped) {
  if (capacity >= MMAP_THRESHOLD) {
    size_t len = capacity + HUGE_PAGE;
    char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return NULL;
    uintptr_t start = ((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    size_t head = start - (uintptr_t)raw;
    size_t tail = len - head - capacity;
    if (head) munmap(raw, head);
    if (tail) munmap((char *)start + capacity, tail);
#ifdef MADV_HUGEPAGE
    madvise((void *)start, capacity, MADV_HUGEPAGE);
#endif
    *mapped = 1;
    return (void *)start;
  }
  void *p = NULL;
  if (posix_memalign(&p, 64, capacity) != 0) return NULL;
  *mapped = 0;
  return p;
}

static void os_free(emlx_buffer *b) {
  if (b->mapped) munmap(b->ptr, b->capacity);
  else free(b->ptr);
  free(b);
}

/* Drops the oldest cached buffer; the caller holds the mutex. */
static void evict_oldest(void) {
  emlx_buffer *b = g_alloc.lru_head;
  lru_unlink(b);
  bucket_unlink(b);
  g_alloc.cached -= b->capacity;
  os_free(b);
}

emlx_buffer *emlx__buffer_alloc(size_t nbytes, emlx_device dev) {
  size_t capacity;
  uint32_t bucket = size_class(nbytes, &capacity);
  if (nbytes > ((size_t)1 << 62) || bucket >= NBUCKETS) {
    emlx__set_error("allocation of %zu bytes is too large", nbytes);
    return NULL;
  }
  pthread_mutex_lock(&g_alloc.mu);
  ensure_limits();
  /* Active memory never passes the limit, whether the buffer comes from the
   * cache or the OS; a refused allocation evicts nothing. */
  if (g_alloc.active + capacity > g_alloc.memory_limit) {
    size_t active = g_alloc.active, limit = g_alloc.memory_limit;
    pthread_mutex_unlock(&g_alloc.mu);
    emlx__set_error("memory limit exceeded: allocating %zu bytes with %zu active would pass "
                    "the limit of %zu bytes",
                    capacity, active, limit);
    return NULL;
  }
  emlx_buffer *b = g_alloc.buckets[bucket];
  if (b) {
    bucket_unlink(b);
    lru_unlink(b);
    g_alloc.cached -= b->capacity;
  } else {
    while (g_alloc.lru_head && g_alloc.active + g_alloc.cached + capacity > g_alloc.memory_limit)
      evict_oldest();
    b = calloc(1, sizeof *b);
    uint8_t mapped = 0;
    void *p = b ? os_alloc(capacity, &mapped) : NULL;
    if (!p) {
      free(b);
      pthread_mutex_unlock(&g_alloc.mu);
      emlx__set_error("out of memory allocating %zu bytes", capacity);
      return NULL;
    }
    b->ptr = p;
    b->capacity = capacity;
    b->bucket = bucket;
    b->mapped = mapped;
  }
  g_alloc.active += capacity;
  if (g_alloc.active > g_alloc.peak) g_alloc.peak = g_alloc.active;
  pthread_mutex_unlock(&g_alloc.mu);
  b->device = dev;
  atomic_init(&b->refcount, 1);
  return b;
}

emlx_buffer *emlx__buffer_retain(emlx_buffer *b) {
  if (b) atomic_fetch_add_explicit(&b->refcount, 1, memory_order_relaxed);
  return b;
}

void emlx__buffer_release(emlx_buffer *b) {
  if (!b || atomic_fetch_sub_explicit(&b->refcount, 1, memory_order_acq_rel) != 1) return;
  pthread_mutex_lock(&g_alloc.mu);
  g_alloc.active -= b->capacity;
  if (b->capacity > g_alloc.cache_limit) {
    pthread_mutex_unlock(&g_alloc.mu);
    os_free(b);
    return;
  }
  while (g_alloc.cached + b->capacity > g_alloc.cache_limit) evict_oldest();
  b->prev = NULL;
  b->next = g_alloc.buckets[b->bucket];
  if (b->next) b->next->prev = b;
  g_alloc.buckets[b->bucket] = b;
  b->lru_next = NULL;
  b->lru_prev = g_alloc.lru_tail;
  if (g_alloc.lru_tail) g_alloc.lru_tail->lru_next = b;
  else g_alloc.lru_head = b;
  g_alloc.lru_tail = b;
  g_alloc.cached += b->capacity;
  pthread_mutex_unlock(&g_alloc.mu);
}

/* ---- public API ------------------------------------------------------------ */

emlx_memory_stats emlx_memory_info(void) {
  pthread_mutex_lock(&g_alloc.mu);
  emlx_memory_stats s = {g_alloc.active, g_alloc.peak, g_alloc.cached};
  pthread_mutex_unlock(&g_alloc.mu);
  return s;
}

size_t emlx_set_cache_limit(size_t bytes) {
  pthread_mutex_lock(&g_alloc.mu);
  ensure_limits();
  size_t old = g_alloc.cache_limit;
  g_alloc.cache_limit = bytes;
  while (g_alloc.cached > g_alloc.cache_limit) evict_oldest();
  pthread_mutex_unlock(&g_alloc.mu);
  return old;
}

size_t emlx_set_memory_limit(size_t bytes) {
  pthread_mutex_lock(&g_alloc.mu);
  ensure_limits();
  size_t old = g_alloc.memory_limit;
  g_alloc.memory_limit = bytes;
  pthread_mutex_unlock(&g_alloc.mu);
  return old;
}

size_t emlx_get_cache_limit(void) {
  pthread_mutex_lock(&g_alloc.mu);
  ensure_limits();
  size_t v = g_alloc.cache_limit;
  pthread_mutex_unlock(&g_alloc.mu);
  return v;
}

size_t emlx_get_memory_limit(void) {
  pthread_mutex_lock(&g_alloc.mu);
  ensure_limits();
  size_t v = g_alloc.memory_limit;
  pthread_mutex_unlock(&g_alloc.mu);
  return v;
}

void emlx_clear_cache(void) {
  pthread_mutex_lock(&g_alloc.mu);
  while (g_alloc.lru_head) evict_oldest();
  pthread_mutex_unlock(&g_alloc.mu);
}

void emlx_reset_peak_memory(void) {
  pthread_mutex_lock(&g_alloc.mu);
  g_alloc.peak = g_alloc.active;
  pthread_mutex_unlock(&g_alloc.mu);
}
