/* test_objcache_threads.c — the per-thread caches of array handles, nodes and
 * eval's spare blocks (src/core/objcache.c): a freed block is handed out
 * again zeroed; the cache stays within its bound; arrays built on one thread
 * and released on another give right values and land in the releasing
 * thread's cache; many threads at once build, evaluate and release graphs
 * over shared inputs (checked against f64 references); a thread's cache is
 * freed when it exits (the count of blocks freed at exit grows by what the
 * thread held, and LeakSanitizer sees no leak); a release that comes after
 * the cache's own exit destructor (from a later destructor) bypasses it; under
 * AddressSanitizer a cached block is poisoned. */
#include <pthread.h>
#include <stdatomic.h>

#include "objcache.h"
#include "test_util.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ASAN 1
#endif
#endif
#ifdef HAVE_ASAN
#include <sanitizer/asan_interface.h>
#endif

enum { N = 1000 };

static emlx_array *vec(const float *v, int64_t n) {
  return emlx_from_blob(v, EMLX_FLOAT32, &n, 1, EMLX_CPU);
}

/* ---- one thread: reuse, zeroing, the bound ---------------------------------------- */

static void test_reuse(void) {
  unsigned char *p = emlx__obj_alloc(200);
  CHECK(p != NULL);
  memset(p, 0xAB, 200);
  emlx__obj_free(p, 200);
  emlx__objcache_info i = emlx__objcache_thread_info();
  CHECK_MSG(i.armed && i.blocks >= 1, "a freed block is cached (blocks %zu)", i.blocks);
#ifdef HAVE_ASAN
  CHECK_MSG(__asan_address_is_poisoned(p + 8), "a cached block is poisoned under ASan");
#else
  fprintf(stderr, "note: not an ASan build: the poisoning of cached blocks is not checked\n");
#endif
  unsigned char *q = emlx__obj_alloc(250); /* the same 256-byte class */
  CHECK_MSG(q == p, "the class's last freed block is handed out again");
  bool zero = true;
  for (int k = 0; k < 250; k++)
    zero &= q[k] == 0;
  CHECK_MSG(zero, "a reused block is zeroed");
  CHECK(emlx__objcache_thread_info().blocks == i.blocks - 1);
  emlx__obj_free(q, 250);

  /* Sizes past the classes go to malloc and back. */
  void *big = emlx__obj_alloc(4096);
  CHECK(big != NULL);
  size_t before = emlx__objcache_thread_info().blocks;
  emlx__obj_free(big, 4096);
  CHECK_MSG(emlx__objcache_thread_info().blocks == before, "a 4 KiB block is not cached");

  /* Freeing far more than the bound keeps the cache within it. */
  enum { MANY = 4000 };
  void **blocks = malloc(MANY * sizeof *blocks);
  for (int k = 0; k < MANY; k++)
    blocks[k] = emlx__obj_alloc(320);
  for (int k = 0; k < MANY; k++)
    emlx__obj_free(blocks[k], 320);
  free(blocks);
  i = emlx__objcache_thread_info();
  CHECK_MSG(i.bytes <= (size_t)256 << 10 && i.bytes >= (size_t)200 << 10,
            "after freeing %d blocks of 320 bytes the cache holds %zu bytes (bound 256 KiB)", MANY,
            i.bytes);
}

/* ---- made on one thread, released on another ------------------------------------------ */

typedef struct handoff {
  emlx_array **arr;
  int n;
  const float *x;
  int bad;                 /* wrong values seen by the releasing thread */
  emlx__objcache_info got; /* its cache after releasing */
} handoff;

static void *release_main(void *p) {
  handoff *h = p;
  emlx__objcache_info before = emlx__objcache_thread_info();
  for (int k = 0; k < h->n; k++) {
    float out[4];
    if (emlx_to_blob(h->arr[k], out, sizeof out) != 0) {
      h->bad++;
    } else {
      for (int e = 0; e < 4; e++)
        h->bad += out[e] != h->x[e] * (float)(k % 7) + 1.0f;
    }
    emlx_release(h->arr[k]);
  }
  h->got = emlx__objcache_thread_info();
  h->got.blocks -= before.blocks;
  return NULL;
}

static void test_cross_thread(void) {
  float x[4] = {1.5f, -2.0f, 0.25f, 3.0f};
  emlx_array *a = vec(x, 4);
  handoff h = {malloc(N * sizeof(emlx_array *)), N, x, 0, {0}};
  for (int k = 0; k < N; k++) { /* x * (k % 7) + 1, lazy */
    emlx_array *s = emlx_scalar_tensor((double)(k % 7), EMLX_FLOAT32, EMLX_CPU);
    emlx_array *one = emlx_scalar_tensor(1.0, EMLX_FLOAT32, EMLX_CPU);
    emlx_array *m = emlx_multiply(a, s);
    h.arr[k] = emlx_add(m, one);
    emlx_release(s), emlx_release(one), emlx_release(m);
  }
  pthread_t t;
  pthread_create(&t, NULL, release_main, &h);
  pthread_join(t, NULL);
  CHECK_MSG(h.bad == 0, "graphs built on one thread, evaluated and released on another: %d wrong",
            h.bad);
  CHECK_MSG(h.got.blocks > 0, "the releasing thread cached the blocks it freed (%zu)",
            h.got.blocks);
  /* This thread goes on allocating (from malloc or its own cache). */
  emlx_array *b = emlx_add(a, a);
  float out[4];
  CHECK(b && emlx_to_blob(b, out, sizeof out) == 0 && out[3] == 6.0f);
  emlx_release(b);
  emlx_release(a);
  free(h.arr);
}

/* ---- many threads at once --------------------------------------------------------------- */

enum { THREADS = 8, ROUNDS = 60, LEN = 257 };

typedef struct worker {
  pthread_barrier_t *go;
  emlx_array *shared; /* a lazy node every worker reads */
  const float *x;
  int id, bad;
  emlx_array **to_peer; /* arrays this worker leaves for the next one to release */
  emlx_array **from_peer;
  pthread_barrier_t *swap;
} worker;

/* t = x; 12 times t = tanh(t * c + shared) or t - c, for the checksum of a
 * private chain over a shared lazy input. */
static void *worker_main(void *p) {
  worker *w = p;
  pthread_barrier_wait(w->go);
  for (int r = 0; r < ROUNDS; r++) {
    emlx_array *t = emlx_retain(w->shared);
    double c = 0.125 * (double)(w->id + 1);
    for (int k = 0; k < 12 && t; k++) {
      emlx_array *s = emlx_scalar_tensor(c, EMLX_FLOAT32, EMLX_CPU), *u;
      if (k % 3 == 2) {
        u = emlx_subtract(t, s);
      } else {
        emlx_array *m = emlx_multiply(t, s);
        emlx_array *q = m ? emlx_add(m, w->shared) : NULL;
        u = q ? emlx_tanh(q) : NULL;
        emlx_release(m), emlx_release(q);
      }
      emlx_release(s), emlx_release(t);
      t = u;
    }
    float out[LEN];
    if (!t || emlx_to_blob(t, out, sizeof out) != 0) {
      w->bad++;
    } else {
      for (int e = 0; e < LEN; e++) {
        double sh = 2.0 * (double)w->x[e], v = sh;
        for (int k = 0; k < 12; k++)
          v = k % 3 == 2 ? v - c : tanh(v * c + sh);
        w->bad += fabs((double)out[e] - v) > 1e-5;
      }
    }
    /* Every other round, the array goes to the next worker to release. */
    if (r % 2) {
      w->to_peer[r] = t;
    } else {
      emlx_release(t);
    }
  }
  pthread_barrier_wait(w->swap);
  for (int r = 1; r < ROUNDS; r += 2)
    emlx_release(w->from_peer[r]);
  return NULL;
}

static void test_many_threads(void) {
  float x[LEN];
  for (int e = 0; e < LEN; e++)
    x[e] = (float)((e * 37) % 101) / 50.0f - 1.0f;
  emlx_array *a = vec(x, LEN);
  emlx_array *shared = emlx_add(a, a); /* lazy: the workers race to compute it */
  pthread_barrier_t go, swap;
  pthread_barrier_init(&go, NULL, THREADS);
  pthread_barrier_init(&swap, NULL, THREADS);
  static emlx_array *slots[THREADS][ROUNDS];
  worker w[THREADS];
  pthread_t t[THREADS];
  uint64_t exit_before = emlx__objcache_thread_info().exit_freed;
  for (int i = 0; i < THREADS; i++) {
    w[i] = (worker){&go, shared, x, i, 0, slots[i], slots[(i + THREADS - 1) % THREADS], &swap};
    pthread_create(&t[i], NULL, worker_main, &w[i]);
  }
  int bad = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    bad += w[i].bad;
  }
  CHECK_MSG(bad == 0, "%d threads x %d rounds of private chains over a shared node: %d wrong",
            THREADS, ROUNDS, bad);
  CHECK_MSG(emlx__objcache_thread_info().exit_freed > exit_before,
            "the exiting workers freed their caches (%llu blocks)",
            (unsigned long long)(emlx__objcache_thread_info().exit_freed - exit_before));
  pthread_barrier_destroy(&go);
  pthread_barrier_destroy(&swap);
  emlx_release(shared);
  emlx_release(a);
}

/* ---- thread exit -------------------------------------------------------------------- */

typedef struct exiting {
  emlx__objcache_info held; /* the thread's caches just before it exits */
} exiting;

static void *exit_main(void *p) {
  exiting *e = p;
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  emlx_array *a = vec(x, 8);
  for (int k = 0; k < 50; k++) {
    emlx_array *b = emlx_exp(a), *c = b ? emlx_add(b, a) : NULL;
    emlx_eval(&c, 1);
    emlx_release(b), emlx_release(c);
  }
  emlx_release(a);
  e->held = emlx__objcache_thread_info();
  return NULL;
}

static void test_thread_exit(void) {
  uint64_t before = emlx__objcache_thread_info().exit_freed;
  exiting e = {{0}};
  pthread_t t;
  pthread_create(&t, NULL, exit_main, &e);
  pthread_join(t, NULL);
  uint64_t freed = emlx__objcache_thread_info().exit_freed - before;
  CHECK_MSG(e.held.blocks > 0 && e.held.spares > 0,
            "the thread held cached blocks (%zu) and spare blocks (%zu) before exiting",
            e.held.blocks, e.held.spares);
  CHECK_MSG(freed == e.held.blocks + e.held.spares,
            "its exit freed them all: %llu of %zu blocks and %zu spares", (unsigned long long)freed,
            e.held.blocks, e.held.spares);
}

/* A destructor of the test's own that releases an array after the cache's
 * exit destructor has run (it defers itself until then): those blocks must go
 * back to malloc, not into a cache nobody frees. */
static pthread_key_t late_key;
static _Thread_local emlx_array *late_array;
static _Atomic int late_rounds, late_checked;
static _Atomic size_t late_blocks_after = (size_t)-1;

static void late_destructor(void *p) {
  atomic_fetch_add(&late_rounds, 1);
  if (emlx__objcache_thread_info().armed && atomic_load(&late_rounds) < 4) {
    pthread_setspecific(late_key, p); /* run again after the cache's destructor */
    return;
  }
  emlx_release(late_array); /* a lazy node and its inputs die here */
  atomic_store(&late_blocks_after, emlx__objcache_thread_info().blocks);
  atomic_store(&late_checked, 1);
}

static void *late_main(void *p) {
  (void)p;
  float x[4] = {1, 2, 3, 4};
  emlx_array *a = vec(x, 4);
  emlx_array *b = emlx_exp(a);
  emlx_array *c = emlx_add(b, a); /* kept lazy for the destructor */
  emlx_release(a), emlx_release(b);
  emlx_release(emlx_add(c, c)); /* arms this thread's cache */
  late_array = c;
  pthread_setspecific(late_key, (void *)1);
  return NULL;
}

static void test_release_after_exit_destructor(void) {
  CHECK_OK(pthread_key_create(&late_key, late_destructor));
  pthread_t t;
  pthread_create(&t, NULL, late_main, NULL);
  pthread_join(t, NULL);
  CHECK_MSG(atomic_load(&late_checked) == 1, "the late destructor ran (%d rounds)",
            atomic_load(&late_rounds));
  CHECK_MSG(atomic_load(&late_blocks_after) == 0,
            "blocks freed after the cache's exit destructor bypass it (%zu cached)",
            atomic_load(&late_blocks_after));
  pthread_key_delete(late_key);
}

int main(void) {
  test_reuse();
  test_cross_thread();
  test_many_threads();
  test_thread_exit();
  test_release_after_exit_destructor();
  return tu_finish();
}
