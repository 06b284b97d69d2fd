/* sort.c — the sort and argsort kernels: stable, along one axis, ascending
 * or descending.
 *
 * Each line along the axis is turned into order-preserving unsigned keys
 * (sort_keys.h; descending complements them, which keeps the sort stable
 * and puts NaNs first) and radix-sorted (sort_radix.h):
 *  - sort of a line whose keys can be turned back into its values (no -0.0,
 *    no NaN): the keys alone are sorted and converted back;
 *  - otherwise (argsort, or a line with -0.0 or NaN, whose bits must be
 *    kept): (key, index) pairs are sorted — packed as key << 32 | index in
 *    a uint64 for keys of up to 4 bytes, side by side for 8-byte keys — and
 *    the indices are written (argsort) or used to fetch the values (sort).
 * 1-byte keys are counting-sorted. Lines run in parallel; when there are
 * few long lines, each line's radix sort runs in parallel instead. */
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "kernels.h"
#include "dyn_for.h"
#include "params_reduce.h"
#include "sort.h"
#include "sort_radix.h"

typedef struct sort_plan {
  const emlx_cpu_sort_table *tab;
  bool arg, desc, par_lines;
  emlx_dtype dt;
  int width; /* key bytes */
  int64_t es, out_es;
  const char *in;
  char *out;
  int64_t n, sa; /* the axis: length and input stride */
  int64_t inner; /* output elements after the axis (the axis' output stride) */
  int nk;        /* the other dims of the input, in order */
  int64_t ksize[EMLX_MAX_NDIM], kstride[EMLX_MAX_NDIM];
} sort_plan;

/* Scratch for one line: keys (or pairs) and their radix twins. The
 * buffers come from the engine's allocator: cached between calls (no page
 * faults on repeated sorts) and huge-page backed when large. */
typedef struct sort_scratch {
  emlx_buffer *buf[4];
  void *a, *b;
  uint32_t *ix, *ix2;
} sort_scratch;

/* ---- the ISA table of key loops ------------------------------------------ */
static const emlx_cpu_sort_table *sort_table(void) {
  const char *name = emlx_cpu_isa_get()->name;
  if (!strcmp(name, "avx512"))
    return &emlx_cpu_sort_avx512;
  if (!strcmp(name, "avx2"))
    return &emlx_cpu_sort_avx2;
  return &emlx_cpu_sort_scalar;
}

/* Keys of the line's elements [i0, i1); returns whether they hold -0.0 or
 * NaN (keys not invertible; not computed with pack). */
static bool gather_keys(const sort_plan *p, const char *x, void *keys, bool pack, int64_t i0,
                        int64_t i1) {
  return p->tab->gather[p->dt](x, p->sa, keys, pack, p->desc, i0, i1) != 0;
}

/* Sorted keys back to values at y (stride inner), positions [i0, i1). */
static void keys_to_values(const sort_plan *p, const void *keys, char *y, int64_t i0, int64_t i1) {
  p->tab->emit[p->dt](keys, y, p->inner, p->desc, i0, i1);
}

/* ---- one line ------------------------------------------------------------------ */
/* Counting sort of 1-byte keys: values, or the stable order as indices. */
static void counting_sort(const sort_plan *p, const uint8_t *keys, uint8_t *sorted,
                          uint32_t *order) {
  int64_t cnt[256] = {0};
  for (int64_t i = 0; i < p->n; i++)
    cnt[keys[i]]++;
  if (sorted) {
    int64_t at = 0;
    for (int v = 0; v < 256; v++) {
      memset(sorted + at, v, (size_t)cnt[v]);
      at += cnt[v];
    }
    return;
  }
  int64_t run = 0;
  for (int v = 0; v < 256; v++) {
    int64_t c = cnt[v];
    cnt[v] = run;
    run += c;
  }
  for (int64_t i = 0; i < p->n; i++)
    order[cnt[keys[i]]++] = (uint32_t)i;
}

/* Sorts the line's keys into an order: either packed pairs (*packed, for
 * keys of 2 or 4 bytes) or indices (returned, for 1- and 8-byte keys).
 * is_packed: sc->a already holds the pairs. */
static const uint32_t *sorted_order(const sort_plan *p, sort_scratch *sc, bool par, bool is_packed,
                                    const uint64_t **packed) {
  int64_t n = p->n;
  *packed = NULL;
  if (p->width == 1) {
    counting_sort(p, (const uint8_t *)sc->a, NULL, sc->ix);
    return sc->ix;
  }
  if (p->width == 8) {
    uint64_t *k = (uint64_t *)sc->a;
    uint32_t *ix = sc->ix;
    for (int64_t i = 0; i < n; i++)
      ix[i] = (uint32_t)i;
    emlx_radix_kv64(&k, &ix, (uint64_t *)sc->b, sc->ix2, n);
    return ix;
  }
  uint64_t *pk = (uint64_t *)sc->a;
  if (!is_packed) { /* pack key << 32 | index in place, from the end (keys are narrower) */
    if (p->width == 2) {
      const uint16_t *k = (const uint16_t *)sc->a;
      for (int64_t i = n - 1; i >= 0; i--)
        pk[i] = (uint64_t)k[i] << 32 | (uint64_t)i;
    } else {
      const uint32_t *k = (const uint32_t *)sc->a;
      for (int64_t i = n - 1; i >= 0; i--)
        pk[i] = (uint64_t)k[i] << 32 | (uint64_t)i;
    }
  }
  *packed = emlx_radix_u64(pk, (uint64_t *)sc->b, n, 32, 32 + 8 * p->width, par);
  return NULL;
}

/* The index at sorted position i: from pairs or from an index array. */
#define ORDER_AT(i) (packed ? (uint32_t)packed[i] : ix[i])

static void write_indices(const sort_plan *p, const uint64_t *packed, const uint32_t *ix, char *y,
                          int64_t i0, int64_t i1) {
  int64_t s = p->inner;
  switch (p->out_es) {
  case 1:
    for (int64_t i = i0; i < i1; i++)
      ((uint8_t *)y)[i * s] = (uint8_t)ORDER_AT(i);
    break;
  case 2:
    for (int64_t i = i0; i < i1; i++)
      ((uint16_t *)(void *)y)[i * s] = (uint16_t)ORDER_AT(i);
    break;
  case 4:
    if (s == 1 && packed) {
      for (int64_t i = i0; i < i1; i++)
        ((uint32_t *)(void *)y)[i] = (uint32_t)packed[i];
    } else {
      for (int64_t i = i0; i < i1; i++)
        ((uint32_t *)(void *)y)[i * s] = ORDER_AT(i);
    }
    break;
  default:
    for (int64_t i = i0; i < i1; i++)
      ((uint64_t *)(void *)y)[i * s] = ORDER_AT(i);
    break;
  }
}

static void gather_values(const sort_plan *p, const char *x, const uint64_t *packed,
                          const uint32_t *ix, char *y, int64_t i0, int64_t i1) {
  int64_t s = p->inner, sa = p->sa;
  switch (p->es) {
  case 1:
    for (int64_t i = i0; i < i1; i++)
      ((uint8_t *)y)[i * s] = ((const uint8_t *)x)[ORDER_AT(i) * sa];
    break;
  case 2:
    for (int64_t i = i0; i < i1; i++)
      ((uint16_t *)(void *)y)[i * s] = ((const uint16_t *)(const void *)x)[ORDER_AT(i) * sa];
    break;
  case 4:
    for (int64_t i = i0; i < i1; i++)
      ((uint32_t *)(void *)y)[i * s] = ((const uint32_t *)(const void *)x)[ORDER_AT(i) * sa];
    break;
  default:
    for (int64_t i = i0; i < i1; i++)
      ((uint64_t *)(void *)y)[i * s] = ((const uint64_t *)(const void *)x)[ORDER_AT(i) * sa];
    break;
  }
}

/* The per-element stages of a line (gather, emit) run over index ranges:
 * inline, or on the pool for one long line. */
enum { STAGE_GATHER, STAGE_VALUES, STAGE_INDICES, STAGE_GATHER_VALUES };
typedef struct stage_job {
  const sort_plan *p;
  int stage;
  bool pack;
  const char *x;
  char *y;
  void *keys;
  const uint64_t *packed;
  const uint32_t *ix;
  _Atomic unsigned lossy;
} stage_job;

static void stage_range(void *ctx, int64_t i0, int64_t i1) {
  stage_job *j = (stage_job *)ctx;
  switch (j->stage) {
  case STAGE_GATHER:
    if (gather_keys(j->p, j->x, j->keys, j->pack, i0, i1))
      j->lossy = 1;
    break;
  case STAGE_VALUES:
    keys_to_values(j->p, j->keys, j->y, i0, i1);
    break;
  case STAGE_INDICES:
    write_indices(j->p, j->packed, j->ix, j->y, i0, i1);
    break;
  default:
    gather_values(j->p, j->x, j->packed, j->ix, j->y, i0, i1);
    break;
  }
}

static void run_stage(stage_job *j, int stage, bool par) {
  j->stage = stage;
  if (par)
    emlx_cpu_dyn_for(j->p->n, 65536, stage_range, j);
  else
    stage_range(j, 0, j->p->n);
}

static void sort_line(const sort_plan *p, sort_scratch *sc, int64_t line, bool par) {
  int64_t off = 0, l = line;
  for (int k = p->nk - 1; k >= 0; k--) {
    off += (l % p->ksize[k]) * p->kstride[k];
    l /= p->ksize[k];
  }
  stage_job j = {.p = p, .x = p->in + off * p->es, .keys = sc->a};
  j.y = p->out + ((line / p->inner) * p->n * p->inner + line % p->inner) * p->out_es;
  j.pack = p->arg && (p->width == 2 || p->width == 4);
  j.lossy = 0;
  run_stage(&j, STAGE_GATHER, par);
  if (!p->arg && !j.lossy) {
    switch (p->width) {
    case 1:
      counting_sort(p, (const uint8_t *)sc->a, (uint8_t *)sc->b, NULL);
      j.keys = sc->b;
      break;
    case 2:
      j.keys = emlx_radix_u16(sc->a, sc->b, p->n, 0, 16, par);
      break;
    case 4:
      j.keys = emlx_radix_u32(sc->a, sc->b, p->n, 0, 32, par);
      break;
    default:
      j.keys = emlx_radix_u64(sc->a, sc->b, p->n, 0, 64, par);
      break;
    }
    run_stage(&j, STAGE_VALUES, par);
    return;
  }
  j.ix = sorted_order(p, sc, par, j.pack, &j.packed);
  run_stage(&j, p->arg ? STAGE_INDICES : STAGE_GATHER_VALUES, par);
}

/* ---- lines in parallel ------------------------------------------------------------ */
static bool scratch_alloc(const sort_plan *p, sort_scratch *sc) {
  size_t n = (size_t)(p->n > 0 ? p->n : 1);
  const size_t bytes[4] = {n * 8, n * 8, n * sizeof(uint32_t), n * sizeof(uint32_t)};
  bool ok = true;
  for (int i = 0; i < 4; i++) {
    sc->buf[i] = ok ? emlx__buffer_alloc(bytes[i], EMLX_CPU) : NULL;
    ok = ok && sc->buf[i];
  }
  if (!ok)
    return false;
  sc->a = sc->buf[0]->ptr;
  sc->b = sc->buf[1]->ptr;
  sc->ix = (uint32_t *)sc->buf[2]->ptr;
  sc->ix2 = (uint32_t *)sc->buf[3]->ptr;
  return true;
}
static void scratch_free(sort_scratch *sc) {
  for (int i = 0; i < 4; i++)
    if (sc->buf[i])
      emlx__buffer_release(sc->buf[i]);
}

typedef struct lines_job {
  const sort_plan *p;
  _Atomic int failed;
} lines_job;

static void lines_task(void *ctx, int64_t begin, int64_t end) {
  lines_job *j = (lines_job *)ctx;
  sort_scratch sc;
  if (!scratch_alloc(j->p, &sc)) {
    scratch_free(&sc);
    j->failed = 1;
    return;
  }
  for (int64_t l = begin; l < end; l++)
    sort_line(j->p, &sc, l, false);
  scratch_free(&sc);
}

/* ---- the kernel ---------------------------------------------------------------- */
int emlx_cpu_sort(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs) {
  emlx_array *in = inputs[0], *out = outputs[0];
  if (!out)
    return 0;
  const char *name = emlx_prim_table[node->prim].name;
  const emlx_sort_params *sp = (const emlx_sort_params *)emlx__params(node);
  bool arg = node->prim == EMLX_PRIM_ARGSORT;
  if ((node->prim != EMLX_PRIM_SORT && !arg) || node->params_size != sizeof *sp || sp->axis < 0 ||
      sp->axis >= in->ndim || out->size != in->size)
    return EMLX_FAIL("cpu: %s: malformed node", name);
  if (arg ? !emlx_dtype_is_integer(out->dtype) : out->dtype != in->dtype)
    return EMLX_FAIL("cpu: %s: unexpected output dtype %s", name, emlx_dtype_name(out->dtype));
  if (in->shape[sp->axis] > (int64_t)UINT32_MAX)
    return EMLX_FAIL("cpu: %s: axis too long", name);
  sort_plan p;
  memset(&p, 0, sizeof p);
  p.tab = sort_table();
  if (!p.tab->gather[in->dtype]) /* complex128: no 64-bit order key holds both doubles */
    return EMLX_FAIL("cpu: %s: dtype %s is not supported", name, emlx_dtype_name(in->dtype));
  p.arg = arg;
  p.desc = sp->descending != 0;
  p.dt = in->dtype;
  p.es = (int64_t)emlx_dtype_size(in->dtype);
  p.width = (int)p.es;
  p.out_es = (int64_t)emlx_dtype_size(out->dtype);
  p.n = in->shape[sp->axis];
  p.sa = in->strides[sp->axis];
  p.inner = 1;
  for (int i = 0; i < in->ndim; i++) {
    if (i == sp->axis)
      continue;
    p.ksize[p.nk] = in->shape[i];
    p.kstride[p.nk++] = in->strides[i];
    if (i > sp->axis)
      p.inner *= in->shape[i];
  }
  if (emlx__array_alloc_data(out) != 0)
    return -1;
  if (out->size == 0)
    return 0;
  p.in = (const char *)emlx__data(in);
  p.out = (char *)emlx__data(out);
  int64_t nlines = in->size / p.n;
  int nt = emlx_num_threads();
  if (nlines >= 2 * (int64_t)nt || p.n < 65536) {
    lines_job j = {&p, 0};
    int64_t grain = 16384 / p.n;
    emlx_cpu_dyn_for(nlines, grain, lines_task, &j);
    if (j.failed)
      return EMLX_FAIL("cpu: %s: out of memory for scratch", name);
    return 0;
  }
  /* Few long lines: one at a time, each sorted in parallel. */
  sort_scratch sc;
  if (!scratch_alloc(&p, &sc)) {
    scratch_free(&sc);
    return EMLX_FAIL("cpu: %s: out of memory for scratch", name);
  }
  for (int64_t l = 0; l < nlines; l++)
    sort_line(&p, &sc, l, true);
  scratch_free(&sc);
  return 0;
}
