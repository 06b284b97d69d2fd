/* scratch.c — per-thread scratch blocks for kernels.
 *
 * Kernels run on the pool's workers, on command queues' workers and on
 * callers' own threads, whose stacks may be small (BEAM schedulers, a
 * 128 KiB pthread), so no kernel keeps a large buffer on its stack: it takes
 * a block of its thread's scratch instead. Each thread holds a short LIFO of
 * blocks (a fused region's tiles, and above them those of a reduction that
 * reads the region), each kept for the next use at its depth and freed when
 * the thread exits. The blocks are working memory of bounded size per
 * thread, not array data, so they stay outside the allocator's counters. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"

#define SCRATCH_DEPTH 8
#define SCRATCH_ALIGN 64

typedef struct scratch_stack {
  void *block[SCRATCH_DEPTH];
  size_t cap[SCRATCH_DEPTH];
  int depth;
} scratch_stack;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static bool scratch_key_ok;
static _Thread_local scratch_stack *tls_scratch;

static void scratch_free(void *p) {
  scratch_stack *s = (scratch_stack *)p;
  for (int d = 0; d < SCRATCH_DEPTH; d++)
    free(s->block[d]);
  free(s);
}

static void scratch_init(void) {
  scratch_key_ok = pthread_key_create(&scratch_key, scratch_free) == 0;
}

static scratch_stack *this_thread(void) {
  if (tls_scratch)
    return tls_scratch;
  pthread_once(&scratch_once, scratch_init);
  scratch_stack *s = scratch_key_ok ? calloc(1, sizeof *s) : NULL;
  if (!s)
    return NULL;
  if (pthread_setspecific(scratch_key, s) != 0) { /* no destructor: it would leak */
    free(s);
    return NULL;
  }
  tls_scratch = s;
  return s;
}

void *emlx__scratch_get(size_t bytes) {
  scratch_stack *s = this_thread();
  if (!s)
    return EMLX_FAIL_NULL("scratch: out of memory");
  if (s->depth == SCRATCH_DEPTH)
    return EMLX_FAIL_NULL("scratch: more than %d blocks in use on one thread", SCRATCH_DEPTH);
  int d = s->depth;
  if (s->cap[d] < bytes) {
    size_t cap = (bytes + SCRATCH_ALIGN - 1) / SCRATCH_ALIGN * SCRATCH_ALIGN;
    void *p = cap >= bytes ? aligned_alloc(SCRATCH_ALIGN, cap) : NULL;
    if (!p)
      return EMLX_FAIL_NULL("scratch: out of memory for %zu bytes", bytes);
    free(s->block[d]);
    s->block[d] = p;
    s->cap[d] = cap;
  }
  s->depth = d + 1;
  return s->block[d];
}

void emlx__scratch_put(void *block) {
  if (!block)
    return;
  scratch_stack *s = tls_scratch;
  assert(s && s->depth > 0 && s->block[s->depth - 1] == block);
  s->depth--;
}
