/* fft_plan.c — FFT plans: factorisation, twiddle tables (computed in f64,
 * rounded once to f32), the choice between a direct mixed-radix transform
 * and Bluestein's algorithm, four-step splits of long rows, and a bounded,
 * thread-safe cache of plans per length. The plan kinds are described in
 * fft.h. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fft.h"
#include "internal.h"

#define TWO_PI 6.283185307179586476925286766559

/* ---- integers ------------------------------------------------------------------ */

static int64_t largest_prime_factor(int64_t n) {
  int64_t lpf = 1;
  for (int64_t f = 2; f * f <= n; f++)
    while (n % f == 0) {
      lpf = f;
      n /= f;
    }
  return n > 1 ? n : lpf;
}

/* The smallest 2^a 3^b 5^c 7^d >= n. */
static int64_t good_size(int64_t n) {
  if (n <= 1)
    return 1;
  int64_t best = INT64_MAX;
  for (int64_t f7 = 1; f7 < best; f7 *= 7)
    for (int64_t f5 = f7; f5 < best; f5 *= 5)
      for (int64_t f3 = f5; f3 < best; f3 *= 3) {
        int64_t v = f3;
        while (v < n)
          v *= 2;
        if (v < best)
          best = v;
        if (f3 > INT64_MAX / 3)
          break;
      }
  return best;
}

/* Radices of n in pass order: 8s (with one 4 or two 4s to absorb the rest
 * of the power of two, so a lone 2 only for n even and not divisible by 4),
 * then odd primes ascending. Returns the count. */
static int factorize(int64_t n, int64_t *f) {
  int nf = 0, k = 0;
  while (n % 2 == 0) {
    n /= 2;
    k++;
  }
  int fours = k % 3 == 2 ? 1 : k % 3 == 1 && k >= 4 ? 2 : 0;
  int twos = k == 1 ? 1 : 0;
  int eights = (k - 2 * fours - twos) / 3;
  for (int i = 0; i < eights; i++)
    f[nf++] = 8;
  for (int i = 0; i < fours; i++)
    f[nf++] = 4;
  if (twos)
    f[nf++] = 2;
  for (int64_t p = 3; p * p <= n; p += 2)
    while (n % p == 0) {
      f[nf++] = p;
      n /= p;
    }
  if (n > 1)
    f[nf++] = n;
  return nf;
}

/* ---- cost model (arbitrary units per element) ------------------------------------ */

static double radix_cost(int64_t p) {
  switch (p) {
  case 2:
    return 1.0;
  case 3:
    return 1.8;
  case 4:
    return 1.6;
  case 5:
    return 2.8;
  case 7:
    return 3.8;
  case 8:
    return 2.3;
  default:
    return 0.6 * (double)p;
  }
}

static double direct_cost(int64_t n) {
  int64_t f[EMLX_FFT_MAX_STAGES];
  int nf = factorize(n, f);
  double c = 0.0;
  for (int i = 0; i < nf; i++)
    c += radix_cost(f[i]);
  return c;
}

/* Per element of n, through a direct transform of m = good_size(2n-1). */
static double bluestein_cost(int64_t n, int64_t m) {
  return (2.0 * direct_cost(m) + 6.0) * (double)m / (double)n + 2.0;
}

static bool lane_is_direct(int64_t n) {
  if (n <= 3)
    return true;
  if (largest_prime_factor(n) > EMLX_FFT_MAX_RADIX)
    return false;
  return direct_cost(n) <= bluestein_cost(n, good_size(2 * n - 1));
}

static double lane_cost(int64_t n) {
  return lane_is_direct(n) ? direct_cost(n) : bluestein_cost(n, good_size(2 * n - 1));
}
static int64_t lane_cap(int64_t n) { return lane_is_direct(n) ? n : good_size(2 * n - 1); }

/* ---- allocation --------------------------------------------------------------------- */

static emlx_fft_plan *plan_new(int64_t n, int kind, size_t floats) {
  emlx_fft_plan *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->n = n;
  p->kind = kind;
  atomic_init(&p->refs, 1);
  size_t bytes = (floats ? floats : 1) * sizeof(float);
  bytes = (bytes + 63) & ~(size_t)63;
  p->mem = aligned_alloc(64, bytes);
  if (!p->mem) {
    free(p);
    return NULL;
  }
  p->bytes = sizeof *p + bytes;
  return p;
}

static void plan_free(emlx_fft_plan *p) {
  if (!p)
    return;
  plan_free(p->sub);
  plan_free(p->p1);
  plan_free(p->p2);
  free(p->mem);
  free(p);
}

/* w_n^e = exp(-2 pi i e / n), e reduced mod n, as two floats. */
static void twiddle(float *out, uint64_t e, int64_t n) {
  double a = -TWO_PI * (double)(e % (uint64_t)n) / (double)n;
  out[0] = (float)cos(a);
  out[1] = (float)sin(a);
}

/* exp(-i pi k^2 / n) for k < n, with k^2 reduced mod 2n incrementally
 * (exact for any n < 2^61). */
static void fill_chirp(double *w, int64_t n) {
  uint64_t r = 0, twon = 2 * (uint64_t)n;
  for (int64_t k = 0; k < n; k++) {
    double a = -M_PI * (double)r / (double)n;
    w[2 * k] = cos(a);
    w[2 * k + 1] = sin(a);
    r = (r + 2 * (uint64_t)k + 1) % twon; /* (k+1)^2 = k^2 + 2k + 1 */
  }
}

/* In-place forward DFT in f64 of x (m complex, m 7-smooth) by recursive
 * decimation in time; tab[e] = w_M^e, m divides M; tmp holds m complex. */
static void dft_f64(double *x, int64_t m, const double *tab, int64_t M, double *tmp) {
  if (m == 1)
    return;
  int64_t p = m % 4 == 0 ? 4 : m % 2 == 0 ? 2 : m % 3 == 0 ? 3 : m % 5 == 0 ? 5 : 7;
  int64_t r = m / p, step = M / m;
  for (int64_t q = 0; q < p; q++)
    for (int64_t j = 0; j < r; j++) {
      tmp[2 * (q * r + j)] = x[2 * (j * p + q)];
      tmp[2 * (q * r + j) + 1] = x[2 * (j * p + q) + 1];
    }
  for (int64_t q = 0; q < p; q++)
    dft_f64(tmp + 2 * q * r, r, tab, M, x);
  for (int64_t k = 0; k < m; k++) {
    double sr = 0.0, si = 0.0;
    for (int64_t q = 0; q < p; q++) {
      const double *t = tmp + 2 * (q * r + k % r);
      const double *w = tab + 2 * ((q * k % m) * step);
      sr += t[0] * w[0] - t[1] * w[1];
      si += t[0] * w[1] + t[1] * w[0];
    }
    x[2 * k] = sr;
    x[2 * k + 1] = si;
  }
}

/* chirp (n complex) and bk = fft_m(b) / m (m complex), both from f64. */
static int fill_bluestein(float *chirp, float *bk, int64_t n, int64_t m) {
  double *w = malloc(sizeof(double) * 2 * (size_t)n);
  double *b = calloc(2 * (size_t)m, sizeof(double));
  double *tab = calloc(2 * (size_t)m, sizeof(double));
  double *tmp = malloc(sizeof(double) * 2 * (size_t)m);
  int rc = -1;
  if (w && b && tab && tmp) {
    fill_chirp(w, n);
    for (int64_t e = 0; e < m; e++) {
      double a = -TWO_PI * (double)e / (double)m;
      tab[2 * e] = cos(a);
      tab[2 * e + 1] = sin(a);
    }
    for (int64_t j = 0; j < n; j++) {
      chirp[2 * j] = (float)w[2 * j];
      chirp[2 * j + 1] = (float)w[2 * j + 1];
      b[2 * j] = w[2 * j];
      b[2 * j + 1] = -w[2 * j + 1];
      if (j > 0) {
        b[2 * (m - j)] = w[2 * j];
        b[2 * (m - j) + 1] = -w[2 * j + 1];
      }
    }
    dft_f64(b, m, tab, m, tmp);
    for (int64_t j = 0; j < 2 * m; j++)
      bk[j] = (float)(b[j] / (double)m);
    rc = 0;
  }
  free(w);
  free(b);
  free(tab);
  free(tmp);
  return rc;
}

/* ---- builders ---------------------------------------------------------------------- */

static emlx_fft_plan *build_direct(int64_t n) {
  int64_t f[EMLX_FFT_MAX_STAGES];
  int nf = factorize(n, f);
  size_t floats = 0;
  for (int64_t s = 0, l1 = 1; s < nf; l1 *= f[s], s++) {
    floats += 2 * (size_t)((f[s] - 1) * (n / (l1 * f[s])));
    if (f[s] % 2)
      floats += 2 * (size_t)((f[s] - 1) / 2 * ((f[s] - 1) / 2));
  }
  emlx_fft_plan *p = plan_new(n, EMLX_FFT_DIRECT, floats);
  if (!p)
    return NULL;
  p->cap = n;
  p->nstages = nf;
  float *mem = p->mem;
  int64_t l1 = 1;
  for (int s = 0; s < nf; s++) {
    emlx_fft_stage *st = &p->stage[s];
    st->p = f[s];
    st->l1 = l1;
    st->ido = n / (l1 * f[s]);
    float *tw = mem;
    for (int64_t m = 1; m < st->p; m++)
      for (int64_t i = 0; i < st->ido; i++)
        twiddle(tw + 2 * ((m - 1) * st->ido + i), (uint64_t)m * (uint64_t)i * (uint64_t)l1, n);
    st->tw = tw;
    mem += 2 * (st->p - 1) * st->ido;
    if (st->p % 2) {
      int64_t h = (st->p - 1) / 2;
      for (int64_t q = 1; q <= h; q++)
        for (int64_t m = 1; m <= h; m++) {
          double a = TWO_PI * (double)(q * m % st->p) / (double)st->p;
          mem[2 * ((q - 1) * h + m - 1)] = (float)cos(a);
          mem[2 * ((q - 1) * h + m - 1) + 1] = (float)sin(a);
        }
      st->rot = mem;
      mem += 2 * h * h;
    }
    l1 *= f[s];
  }
  return p;
}

static emlx_fft_plan *build_lane(int64_t n) {
  if (lane_is_direct(n))
    return build_direct(n);
  int64_t m = good_size(2 * n - 1);
  emlx_fft_plan *p = plan_new(n, EMLX_FFT_LANE_BLUESTEIN, 2 * (size_t)(n + m));
  if (!p)
    return NULL;
  p->m = m;
  p->cap = m;
  p->chirp = p->mem;
  p->bk = p->mem + 2 * n;
  p->sub = build_direct(m);
  if (!p->sub || fill_bluestein(p->mem, p->mem + 2 * n, n, m) != 0) {
    plan_free(p);
    return NULL;
  }
  p->bytes += p->sub->bytes;
  return p;
}

static emlx_fft_plan *build_row(int64_t n);

/* The split n = n1 * n2 of a four-step plan: the cheapest one whose lane
 * buffers stay reasonable, the most balanced among near-equal costs; 0
 * when none (n prime or only lopsided splits). */
static int64_t choose_split(int64_t n, double *cost) {
  double limit = 16.0 * sqrt((double)n) + 4096.0, best = 0.0;
  int64_t best_d = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int64_t d = 2; d * d <= n; d++) {
      if (n % d || (double)lane_cap(d) > limit || (double)lane_cap(n / d) > limit)
        continue;
      double c = lane_cost(d) + lane_cost(n / d);
      if (pass == 0 && (!best_d || c < best)) {
        best = c;
        best_d = d;
      } else if (pass == 1 && c <= best * 1.03) {
        best_d = d; /* the largest d <= sqrt(n) within 3% of the best */
      }
    }
  *cost = best + 3.0; /* the extra passes over memory */
  return best_d;
}

static emlx_fft_plan *build_fourstep(int64_t n, int64_t n1) {
  int64_t n2 = n / n1, nb = (n2 + 15) / 16;
  emlx_fft_plan *p = plan_new(n, EMLX_FFT_FOURSTEP, 32 * (size_t)n1 + 2 * (size_t)(nb * n1));
  if (!p)
    return NULL;
  p->n1 = n1;
  p->n2 = n2;
  float *tl = p->mem, *tb = p->mem + 32 * n1;
  for (int64_t k = 0; k < n1; k++)
    for (int64_t l = 0; l < 16; l++) {
      float w[2];
      twiddle(w, (uint64_t)k * (uint64_t)l, n);
      tl[32 * k + l] = w[0];
      tl[32 * k + 16 + l] = w[1];
    }
  for (int64_t t = 0; t < nb; t++)
    for (int64_t k = 0; k < n1; k++)
      twiddle(tb + 2 * (t * n1 + k), (uint64_t)k * (uint64_t)(16 * t), n);
  p->tw_lane = tl;
  p->tw_blk = tb;
  p->p1 = build_lane(n1);
  p->p2 = build_lane(n2);
  if (!p->p1 || !p->p2) {
    plan_free(p);
    return NULL;
  }
  p->bytes += p->p1->bytes + p->p2->bytes;
  return p;
}

static emlx_fft_plan *build_row(int64_t n) {
  double split_cost;
  int64_t n1 = choose_split(n, &split_cost);
  int64_t m = good_size(2 * n - 1);
  if (n1) {
    double blue = 2.0 * (direct_cost(m) + 3.0) * (double)m / (double)n + 6.0;
    if (split_cost <= blue)
      return build_fourstep(n, n1);
  }
  emlx_fft_plan *p = plan_new(n, EMLX_FFT_ROW_BLUESTEIN, 2 * (size_t)(n + m));
  if (!p)
    return NULL;
  p->m = m;
  p->chirp = p->mem;
  p->bk = p->mem + 2 * n;
  p->sub = build_row(m);
  if (!p->sub || fill_bluestein(p->mem, p->mem + 2 * n, n, m) != 0) {
    plan_free(p);
    return NULL;
  }
  p->bytes += p->sub->bytes;
  return p;
}

/* ---- the cache ------------------------------------------------------------------------ */

#define CACHE_SLOTS 32
#define CACHE_BYTES ((size_t)256 << 20)

typedef struct cache_slot {
  emlx_fft_plan *plan; /* NULL: free */
  int row;
  uint64_t used;
} cache_slot;

static pthread_mutex_t g_cache_mu = PTHREAD_MUTEX_INITIALIZER;
static cache_slot g_cache[CACHE_SLOTS];
static size_t g_cache_bytes;
static uint64_t g_cache_tick;

void emlx__fft_plan_put(emlx_fft_plan *p) {
  if (p && atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1)
    plan_free(p);
}

/* Under the lock: drops slot i (the plan lives on while in use). */
static void cache_drop(int i) {
  g_cache_bytes -= g_cache[i].plan->bytes;
  emlx__fft_plan_put(g_cache[i].plan);
  g_cache[i].plan = NULL;
}

static emlx_fft_plan *cache_find(int64_t n, int row) {
  for (int i = 0; i < CACHE_SLOTS; i++)
    if (g_cache[i].plan && g_cache[i].plan->n == n && g_cache[i].row == row) {
      g_cache[i].used = ++g_cache_tick;
      atomic_fetch_add_explicit(&g_cache[i].plan->refs, 1, memory_order_relaxed);
      return g_cache[i].plan;
    }
  return NULL;
}

emlx_fft_plan *emlx__fft_plan_get(int64_t n, int row) {
  pthread_mutex_lock(&g_cache_mu);
  emlx_fft_plan *p = cache_find(n, row);
  pthread_mutex_unlock(&g_cache_mu);
  if (p)
    return p;
  /* Built outside the lock: two threads may build the same plan; the
   * second to finish uses the first's. */
  emlx_fft_plan *fresh = row ? build_row(n) : build_lane(n);
  if (!fresh)
    return EMLX_FAIL_NULL("fft: out of memory building the plan of length %lld", (long long)n);
  pthread_mutex_lock(&g_cache_mu);
  p = cache_find(n, row);
  if (!p && fresh->bytes <= CACHE_BYTES) {
    int victim = -1;
    for (;;) {
      int lru = -1, empty = -1;
      for (int i = 0; i < CACHE_SLOTS; i++) {
        if (!g_cache[i].plan)
          empty = empty < 0 ? i : empty;
        else if (lru < 0 || g_cache[i].used < g_cache[lru].used)
          lru = i;
      }
      if (empty >= 0 && g_cache_bytes + fresh->bytes <= CACHE_BYTES) {
        victim = empty;
        break;
      }
      cache_drop(lru); /* lru exists: the cache is full or over its bytes */
    }
    atomic_fetch_add_explicit(&fresh->refs, 1, memory_order_relaxed); /* the cache's */
    g_cache[victim] = (cache_slot){fresh, row, ++g_cache_tick};
    g_cache_bytes += fresh->bytes;
  }
  pthread_mutex_unlock(&g_cache_mu);
  if (p) {
    plan_free(fresh);
    return p;
  }
  return fresh;
}

void emlx__fft_plan_cache_clear(void) {
  pthread_mutex_lock(&g_cache_mu);
  for (int i = 0; i < CACHE_SLOTS; i++)
    if (g_cache[i].plan)
      cache_drop(i);
  pthread_mutex_unlock(&g_cache_mu);
}
