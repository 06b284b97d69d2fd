/* sort_radix.c — stable radix sorts (see sort_radix.h).
 *
 * Small inputs are insertion-sorted. Otherwise only the bits that differ
 * between elements are sorted (one OR pass finds the highest one). Inputs
 * that fit in cache get an LSD radix sort: 8-bit digits, least significant
 * first, every digit counted in one read up front, uniform digits skipped.
 * Larger inputs first get one MSD pass on their top 11 differing bits (a
 * stable counting scatter into 2048 buckets), then every bucket, now small
 * enough for the cache, is sorted the same way on the bits below: one pass
 * over main memory instead of one per digit. With par, the MSD pass counts
 * and scatters per thread block (each block gets its own range of every
 * bucket, blocks in order, so it stays stable) and the buckets are sorted
 * in parallel, in tasks of balanced element counts. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sort_radix.h"

#define RADIX_SMALL 64       /* insertion sort up to here */
#define RADIX_CACHE 65536    /* LSD in cache up to here */
#define RADIX_MSD_BITS 8     /* bits of the MSD digit */
#define RADIX_PAR_MIN 131072 /* parallel MSD pass from here */
#define RADIX_MAX_BLOCKS 64

/* Index of the highest set bit of x != 0. */
static inline int top_bit(uint64_t x) { return 63 - __builtin_clzll(x); }

#define RADIX_DEFINE(NAME, T)                                                                      \
  static void NAME##_insertion(T *a, int64_t n) {                                                  \
    for (int64_t i = 1; i < n; i++) {                                                              \
      T v = a[i];                                                                                  \
      int64_t j = i;                                                                               \
      while (j > 0 && a[j - 1] > v) {                                                              \
        a[j] = a[j - 1];                                                                           \
        j--;                                                                                       \
      }                                                                                            \
      a[j] = v;                                                                                    \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  /* hi lowered to just above the highest bit in [lo, hi) that differs. */                         \
  static int NAME##_span(const T *a, int64_t n, int lo, int hi) {                                  \
    T x = 0, a0 = a[0];                                                                            \
    for (int64_t i = 0; i < n; i++)                                                                \
      x |= (T)(a[i] ^ a0);                                                                         \
    uint64_t m = (uint64_t)x >> lo;                                                                \
    if (hi - lo < 64)                                                                              \
      m &= (UINT64_C(1) << (hi - lo)) - 1;                                                         \
    return m ? lo + top_bit(m) + 1 : lo;                                                           \
  }                                                                                                \
                                                                                                   \
  /* LSD on bits [lo, hi), 8-bit digits (bits above hi are equal throughout). */                   \
  static T *NAME##_lsd(T *a, T *b, int64_t n, int lo, int hi) {                                    \
    int64_t cnt[8][256];                                                                           \
    int nd = (hi - lo + 7) / 8;                                                                    \
    memset(cnt, 0, (size_t)nd * sizeof cnt[0]);                                                    \
    for (int64_t i = 0; i < n; i++) {                                                              \
      uint64_t v = (uint64_t)a[i] >> lo;                                                           \
      for (int d = 0; d < nd; d++, v >>= 8)                                                        \
        cnt[d][v & 0xFF]++;                                                                        \
    }                                                                                              \
    T *src = a, *dst = b;                                                                          \
    for (int d = 0; d < nd; d++) {                                                                 \
      int shift = lo + 8 * d;                                                                      \
      int64_t *off = cnt[d];                                                                       \
      if (off[(src[0] >> shift) & 0xFF] == n)                                                      \
        continue; /* every element has this digit */                                               \
      int64_t run = 0;                                                                             \
      for (int v = 0; v < 256; v++) {                                                              \
        int64_t c = off[v];                                                                        \
        off[v] = run;                                                                              \
        run += c;                                                                                  \
      }                                                                                            \
      for (int64_t i = 0; i < n; i++) {                                                            \
        T v = src[i];                                                                              \
        dst[off[(v >> shift) & 0xFF]++] = v;                                                       \
      }                                                                                            \
      T *t = src;                                                                                  \
      src = dst;                                                                                   \
      dst = t;                                                                                     \
    }                                                                                              \
    return src;                                                                                    \
  }                                                                                                \
                                                                                                   \
  static T *NAME##_sort(T *a, T *b, int64_t n, int lo, int hi, bool par);                          \
                                                                                                   \
  typedef struct NAME##_msd {                                                                      \
    T *src, *dst;                                                                                  \
    int64_t n;                                                                                     \
    int lo, shift, nbk, nb;                                                                        \
    int64_t *hist;  /* [block][bucket]: counts, then write positions */                            \
    int64_t *start; /* bucket starts (nbk + 1) */                                                  \
    int *task;      /* bucket ranges of the sub-sort tasks */                                      \
  } NAME##_msd;                                                                                    \
                                                                                                   \
  static void NAME##_count(void *pc, int64_t begin, int64_t end) {                                 \
    NAME##_msd *c = (NAME##_msd *)pc;                                                              \
    T mask = (T)(c->nbk - 1);                                                                      \
    for (int64_t blk = begin; blk < end; blk++) {                                                  \
      int64_t *h = c->hist + blk * c->nbk;                                                         \
      memset(h, 0, (size_t)c->nbk * sizeof *h);                                                    \
      int64_t i0 = c->n * blk / c->nb, i1 = c->n * (blk + 1) / c->nb;                              \
      for (int64_t i = i0; i < i1; i++)                                                            \
        h[(c->src[i] >> c->shift) & mask]++;                                                       \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  static void NAME##_scatter(void *pc, int64_t begin, int64_t end) {                               \
    NAME##_msd *c = (NAME##_msd *)pc;                                                              \
    T mask = (T)(c->nbk - 1);                                                                      \
    for (int64_t blk = begin; blk < end; blk++) {                                                  \
      int64_t *pos = c->hist + blk * c->nbk;                                                       \
      int64_t i0 = c->n * blk / c->nb, i1 = c->n * (blk + 1) / c->nb;                              \
      for (int64_t i = i0; i < i1; i++) {                                                          \
        T v = c->src[i];                                                                           \
        c->dst[pos[(v >> c->shift) & mask]++] = v;                                                 \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  /* Sorts buckets [task[t], task[t+1]) of dst on the bits below the digit. */                     \
  static void NAME##_buckets(void *pc, int64_t begin, int64_t end) {                               \
    NAME##_msd *c = (NAME##_msd *)pc;                                                              \
    for (int64_t t = begin; t < end; t++)                                                          \
      for (int k = c->task[t]; k < c->task[t + 1]; k++) {                                          \
        int64_t s = c->start[k], m = c->start[k + 1] - s;                                          \
        if (m < 2)                                                                                 \
          continue;                                                                                \
        T *r = NAME##_sort(c->dst + s, c->src + s, m, c->lo, c->shift, false);                     \
        if (r != c->dst + s)                                                                       \
          memcpy(c->dst + s, r, (size_t)m * sizeof(T));                                            \
      }                                                                                            \
  }                                                                                                \
                                                                                                   \
  /* One MSD pass a -> b on bits [hi - D, hi), then the buckets; NULL if out of memory. */         \
  static T *NAME##_msd_pass(T *a, T *b, int64_t n, int lo, int hi, bool par) {                     \
    int bits = hi - lo < RADIX_MSD_BITS ? hi - lo : RADIX_MSD_BITS;                                \
    int nt = emlx_num_threads();                                                                   \
    int nb =                                                                                       \
        par && n >= RADIX_PAR_MIN && nt > 1 ? (nt < RADIX_MAX_BLOCKS ? nt : RADIX_MAX_BLOCKS) : 1; \
    NAME##_msd c = {a, b, n, lo, hi - bits, 1 << bits, nb, NULL, NULL, NULL};                      \
    c.hist = malloc((size_t)nb * (size_t)c.nbk * sizeof *c.hist);                                  \
    c.start = malloc((size_t)(c.nbk + 1) * sizeof *c.start);                                       \
    c.task = malloc((size_t)(c.nbk + 1) * sizeof *c.task);                                         \
    if (!c.hist || !c.start || !c.task) {                                                          \
      free(c.hist);                                                                                \
      free(c.start);                                                                               \
      free(c.task);                                                                                \
      return NULL;                                                                                 \
    }                                                                                              \
    emlx__parallel_for(nb, 1, NAME##_count, &c);                                                   \
    int64_t run = 0;                                                                               \
    for (int k = 0; k < c.nbk; k++) {                                                              \
      c.start[k] = run;                                                                            \
      for (int blk = 0; blk < nb; blk++) {                                                         \
        int64_t cnt = c.hist[blk * c.nbk + k];                                                     \
        c.hist[blk * c.nbk + k] = run;                                                             \
        run += cnt;                                                                                \
      }                                                                                            \
    }                                                                                              \
    c.start[c.nbk] = run;                                                                          \
    emlx__parallel_for(nb, 1, NAME##_scatter, &c);                                                 \
    /* Tasks of consecutive buckets with about n / ntasks elements each. */                        \
    int ntasks = par && nt > 1 ? 8 * nt : 1, t = 0;                                                \
    c.task[0] = 0;                                                                                 \
    for (int k = 0; k < c.nbk && t < ntasks - 1; k++)                                              \
      if (c.start[k + 1] >= n * (t + 1) / ntasks)                                                  \
        c.task[++t] = k + 1;                                                                       \
    c.task[++t] = c.nbk;                                                                           \
    emlx__parallel_for(t, 1, NAME##_buckets, &c);                                                  \
    free(c.hist);                                                                                  \
    free(c.start);                                                                                 \
    free(c.task);                                                                                  \
    return b;                                                                                      \
  }                                                                                                \
                                                                                                   \
  static T *NAME##_sort(T *a, T *b, int64_t n, int lo, int hi, bool par) {                         \
    if (n <= RADIX_SMALL) {                                                                        \
      NAME##_insertion(a, n);                                                                      \
      return a;                                                                                    \
    }                                                                                              \
    hi = NAME##_span(a, n, lo, hi);                                                                \
    if (hi == lo)                                                                                  \
      return a; /* equal in every sorted bit: already in order */                                  \
    if (n > RADIX_CACHE) {                                                                         \
      T *r = NAME##_msd_pass(a, b, n, lo, hi, par);                                                \
      if (r)                                                                                       \
        return r;                                                                                  \
    }                                                                                              \
    return NAME##_lsd(a, b, n, lo, hi);                                                            \
  }                                                                                                \
                                                                                                   \
  T *NAME(T *a, T *b, int64_t n, int lo, int hi, bool par) {                                       \
    return NAME##_sort(a, b, n, lo, hi, par);                                                      \
  }

RADIX_DEFINE(emlx_radix_u16, uint16_t)
RADIX_DEFINE(emlx_radix_u32, uint32_t)
RADIX_DEFINE(emlx_radix_u64, uint64_t)

void emlx_radix_kv64(uint64_t **pk, uint32_t **pix, uint64_t *k2, uint32_t *ix2, int64_t n) {
  uint64_t *k = *pk;
  uint32_t *ix = *pix;
  if (n <= RADIX_SMALL) { /* stable insertion by key */
    for (int64_t i = 1; i < n; i++) {
      uint64_t kv = k[i];
      uint32_t iv = ix[i];
      int64_t j = i;
      while (j > 0 && k[j - 1] > kv) {
        k[j] = k[j - 1];
        ix[j] = ix[j - 1];
        j--;
      }
      k[j] = kv;
      ix[j] = iv;
    }
    return;
  }
  int64_t cnt[8][256];
  memset(cnt, 0, sizeof cnt);
  for (int64_t i = 0; i < n; i++) {
    uint64_t v = k[i];
    for (int d = 0; d < 8; d++, v >>= 8)
      cnt[d][v & 0xFF]++;
  }
  for (int d = 0; d < 8; d++) {
    int shift = 8 * d;
    int64_t *off = cnt[d];
    if (off[(k[0] >> shift) & 0xFF] == n)
      continue;
    int64_t run = 0;
    for (int v = 0; v < 256; v++) {
      int64_t c = off[v];
      off[v] = run;
      run += c;
    }
    for (int64_t i = 0; i < n; i++) {
      int64_t p = off[(k[i] >> shift) & 0xFF]++;
      k2[p] = k[i];
      ix2[p] = ix[i];
    }
    uint64_t *tk = k;
    uint32_t *ti = ix;
    k = k2;
    ix = ix2;
    k2 = tk;
    ix2 = ti;
  }
  *pk = k;
  *pix = ix;
}
