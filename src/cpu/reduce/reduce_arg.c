/* reduce_arg.c — the argmax and argmin kernels.
 *
 * Elements are compared through 64-bit keys (sort_keys.h): every NaN maps
 * to the largest key and argmin complements the keys of numbers, so both
 * ops become "the first (or last) index of the largest key", and a NaN wins
 * both (the first NaN, whatever the tie rule: no key beats it and it never
 * ties with a number). Tiles of the input are turned into keys and scanned.
 *
 * The dims other than the axis are merged where contiguous. Row mode (the
 * axis has the smaller stride): each output scans its run, in parallel over
 * outputs, or, for few outputs with long runs, in fixed 64K pieces whose
 * partial winners are combined in order. Column mode: blocks of output
 * columns keep a best key and index per column while walking the axis;
 * with few blocks the axis is cut into slices combined in order. Splits
 * depend on the shape only. */
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "kernels.h"
#include "params_reduce.h"
#include "dyn_for.h"
#include "sort_keys.h"

#define ARG_TILE 256    /* keys converted at a time */
#define ARG_CHUNK 65536 /* axis elements per piece of a split run */
#define ARG_CB 256      /* output columns per block in column mode */
#define KEY_NAN UINT64_MAX

typedef struct arg_plan {
  emlx_dtype dt;
  int64_t es, out_es;
  const char *in;
  char *out;
  bool is_min, last, has_nan;
  int64_t n, sa; /* the axis: length and stride */
  int nk;
  int64_t ksize[EMLX_MAX_NDIM], kstride[EMLX_MAX_NDIM];
} arg_plan;

typedef struct arg_best {
  uint64_t key;
  int64_t idx; /* -1: nothing seen */
} arg_best;

/* ---- keys ----------------------------------------------------------------- */
#define KEY_LOOP(T, EXPR)                                                                          \
  do {                                                                                             \
    const T *x_ = (const T *)(const void *)x;                                                      \
    for (int64_t i = 0; i < n; i++) {                                                              \
      T v = x_[i * s];                                                                             \
      k[i] = (EXPR);                                                                               \
    }                                                                                              \
  } while (0)
#define WIDE_NAN(kk, ALL_ONES) ((kk) == (ALL_ONES) ? KEY_NAN : (uint64_t)(kk))

static void tile_keys(const arg_plan *p, const char *x, int64_t s, int64_t n, uint64_t *k) {
  switch (p->dt) {
  case EMLX_BOOL:
  case EMLX_UINT8:
    KEY_LOOP(uint8_t, v);
    break;
  case EMLX_UINT16:
    KEY_LOOP(uint16_t, v);
    break;
  case EMLX_UINT32:
    KEY_LOOP(uint32_t, v);
    break;
  case EMLX_UINT64:
    KEY_LOOP(uint64_t, v);
    break;
  case EMLX_INT8:
    KEY_LOOP(uint8_t, emlx_key_s8(v));
    break;
  case EMLX_INT16:
    KEY_LOOP(uint16_t, emlx_key_s16(v));
    break;
  case EMLX_INT32:
    KEY_LOOP(uint32_t, emlx_key_s32(v));
    break;
  case EMLX_INT64:
    KEY_LOOP(uint64_t, emlx_key_s64(v));
    break;
  case EMLX_FLOAT16:
    KEY_LOOP(uint16_t, WIDE_NAN(emlx_key_f16(v), 0xFFFFu));
    break;
  case EMLX_BFLOAT16:
    KEY_LOOP(uint16_t, WIDE_NAN(emlx_key_bf16(v), 0xFFFFu));
    break;
  case EMLX_FLOAT32:
    KEY_LOOP(uint32_t, WIDE_NAN(emlx_key_f32(v), 0xFFFFFFFFu));
    break;
  case EMLX_FLOAT64:
    KEY_LOOP(uint64_t, emlx_key_f64(v));
    break;
  case EMLX_COMPLEX64: { /* a NaN in either part makes the element NaN */
    const uint64_t *x_ = (const uint64_t *)(const void *)x;
    for (int64_t i = 0; i < n; i++) {
      uint64_t kk = emlx_key_c64(x_[i * s]);
      k[i] = (kk >> 32) == 0xFFFFFFFFu || (uint32_t)kk == 0xFFFFFFFFu ? KEY_NAN : kk;
    }
    break;
  }
  default:
    break;
  }
  if (p->is_min) {
    if (p->has_nan) {
      for (int64_t i = 0; i < n; i++)
        k[i] = k[i] == KEY_NAN ? KEY_NAN : ~k[i];
    } else {
      for (int64_t i = 0; i < n; i++)
        k[i] = ~k[i];
    }
  }
}

/* b takes (key, idx), a later candidate, when it is larger, or equal with
 * the last-index rule (a NaN is never displaced: it is the first NaN). */
static inline bool better(const arg_plan *p, uint64_t key, const arg_best *b) {
  return b->idx < 0 || key > b->key ||
         (p->last && key == b->key && !(p->has_nan && key == KEY_NAN));
}

static inline bool settled(const arg_plan *p, const arg_best *b) {
  return p->has_nan && b->idx >= 0 && b->key == KEY_NAN;
}

/* Scans axis positions [i0, i1) of the run starting at base into b. */
static void scan_run(const arg_plan *p, const char *base, int64_t i0, int64_t i1, arg_best *b) {
  uint64_t k[ARG_TILE];
  for (int64_t t0 = i0; t0 < i1 && !settled(p, b); t0 += ARG_TILE) {
    int64_t len = i1 - t0 < ARG_TILE ? i1 - t0 : ARG_TILE;
    tile_keys(p, base + t0 * p->sa * p->es, p->sa, len, k);
    for (int64_t j = 0; j < len; j++)
      if (better(p, k[j], b)) {
        b->key = k[j];
        b->idx = t0 + j;
      }
  }
}

static void store_index(const arg_plan *p, int64_t o, int64_t idx) {
  memcpy(p->out + o * p->out_es, &idx, (size_t)p->out_es); /* little-endian low bytes */
}

static int64_t kept_offset(const arg_plan *p, int nk, int64_t o) {
  int64_t off = 0;
  for (int k = nk - 1; k >= 0; k--) {
    off += (o % p->ksize[k]) * p->kstride[k];
    o /= p->ksize[k];
  }
  return off;
}

/* ---- row mode ----------------------------------------------------------------- */
typedef struct row_job {
  const arg_plan *p;
  int64_t npieces;
  arg_best *partials;
} row_job;

static void row_outputs(void *ctx, int64_t begin, int64_t end) {
  const arg_plan *p = ((const row_job *)ctx)->p;
  for (int64_t o = begin; o < end; o++) {
    arg_best b = {0, -1};
    scan_run(p, p->in + kept_offset(p, p->nk, o) * p->es, 0, p->n, &b);
    store_index(p, o, b.idx);
  }
}

static void row_pieces(void *ctx, int64_t begin, int64_t end) {
  const row_job *j = (const row_job *)ctx;
  const arg_plan *p = j->p;
  for (int64_t u = begin; u < end; u++) {
    int64_t o = u / j->npieces, k = u % j->npieces;
    arg_best *b = &j->partials[u];
    b->idx = -1;
    scan_run(p, p->in + kept_offset(p, p->nk, o) * p->es, p->n * k / j->npieces,
             p->n * (k + 1) / j->npieces, b);
  }
}

static int run_rows(const arg_plan *p, int64_t nout) {
  row_job j = {p, 1, NULL};
  if (nout >= 64 || p->n < 2 * ARG_CHUNK) {
    int64_t grain = EMLX_CPU_GRAIN / p->n;
    if (grain < 1)
      grain = 1;
    emlx_cpu_dyn_for(nout, grain, row_outputs, &j);
    return 0;
  }
  j.npieces = (p->n + ARG_CHUNK - 1) / ARG_CHUNK;
  if (j.npieces > 256)
    j.npieces = 256;
  j.partials = malloc((size_t)(nout * j.npieces) * sizeof *j.partials);
  if (!j.partials)
    return EMLX_FAIL("cpu: argmax/argmin: out of memory for partial results");
  emlx_cpu_dyn_for(nout * j.npieces, 1, row_pieces, &j);
  for (int64_t o = 0; o < nout; o++) {
    arg_best b = {0, -1};
    for (int64_t k = 0; k < j.npieces; k++) {
      const arg_best *c = &j.partials[o * j.npieces + k];
      if (c->idx >= 0 && !settled(p, &b) && better(p, c->key, &b))
        b = *c;
    }
    store_index(p, o, b.idx);
  }
  free(j.partials);
  return 0;
}

/* ---- column mode -------------------------------------------------------------- */
typedef struct col_job {
  const arg_plan *p;
  int64_t m, ks;   /* the innermost kept dim */
  int64_t nblocks; /* column blocks per outer output index */
  int64_t nslices;
  arg_best *partials; /* nslices > 1: ARG_CB winners per task */
} col_job;

static void col_fold(const col_job *j, int64_t unit, int64_t slice, arg_best *best, int64_t *cols) {
  const arg_plan *p = j->p;
  int64_t o = unit / j->nblocks, c0 = (unit % j->nblocks) * ARG_CB;
  int64_t len = j->m - c0 < ARG_CB ? j->m - c0 : ARG_CB;
  int64_t i0 = p->n * slice / j->nslices, i1 = p->n * (slice + 1) / j->nslices;
  const char *base = p->in + (kept_offset(p, p->nk - 1, o) + c0 * j->ks) * p->es;
  uint64_t k[ARG_CB];
  for (int64_t c = 0; c < len; c++)
    best[c].idx = -1;
  for (int64_t i = i0; i < i1; i++) {
    tile_keys(p, base + i * p->sa * p->es, j->ks, len, k);
    for (int64_t c = 0; c < len; c++)
      if (better(p, k[c], &best[c])) {
        best[c].key = k[c];
        best[c].idx = i;
      }
  }
  *cols = len;
}

static void col_tasks(void *ctx, int64_t begin, int64_t end) {
  const col_job *j = (const col_job *)ctx;
  arg_best best[ARG_CB];
  for (int64_t t = begin; t < end; t++) {
    int64_t unit = t / j->nslices, slice = t % j->nslices, len;
    if (j->nslices == 1) {
      col_fold(j, unit, 0, best, &len);
      int64_t o = unit / j->nblocks, c0 = (unit % j->nblocks) * ARG_CB;
      for (int64_t c = 0; c < len; c++)
        store_index(j->p, o * j->m + c0 + c, best[c].idx);
    } else {
      col_fold(j, unit, slice, j->partials + t * ARG_CB, &len);
    }
  }
}

static int run_cols(const arg_plan *p) {
  col_job j = {p, p->ksize[p->nk - 1], p->kstride[p->nk - 1], 0, 1, NULL};
  j.nblocks = (j.m + ARG_CB - 1) / ARG_CB;
  int64_t nouter = 1;
  for (int k = 0; k < p->nk - 1; k++)
    nouter *= p->ksize[k];
  int64_t units = nouter * j.nblocks;
  if (units < 16 && p->n >= 2048)
    j.nslices = p->n / 512 < 16 ? p->n / 512 : 16;
  int64_t ntasks = units * j.nslices;
  if (j.nslices > 1) {
    j.partials = malloc((size_t)(ntasks * ARG_CB) * sizeof *j.partials);
    if (!j.partials)
      return EMLX_FAIL("cpu: argmax/argmin: out of memory for partial results");
  }
  int64_t work = (p->n / j.nslices) * (j.m < ARG_CB ? j.m : ARG_CB);
  int64_t grain = EMLX_CPU_GRAIN / (work > 0 ? work : 1);
  emlx_cpu_dyn_for(ntasks, grain, col_tasks, &j);
  if (j.nslices > 1) {
    for (int64_t u = 0; u < units; u++) {
      int64_t o = u / j.nblocks, c0 = (u % j.nblocks) * ARG_CB;
      int64_t len = j.m - c0 < ARG_CB ? j.m - c0 : ARG_CB;
      for (int64_t c = 0; c < len; c++) {
        arg_best b = {0, -1};
        for (int64_t sl = 0; sl < j.nslices; sl++) {
          const arg_best *cand = &j.partials[(u * j.nslices + sl) * ARG_CB + c];
          if (cand->idx >= 0 && !settled(p, &b) && better(p, cand->key, &b))
            b = *cand;
        }
        store_index(p, o * j.m + c0 + c, b.idx);
      }
    }
    free(j.partials);
  }
  return 0;
}

/* ---- the kernel ---------------------------------------------------------------- */
int emlx_cpu_arg_reduce(const emlx_node *node, emlx_array *const *inputs,
                        emlx_array *const *outputs) {
  emlx_array *in = inputs[0], *out = outputs[0];
  const char *name = emlx_prim_table[node->prim].name;
  if (!out)
    return 0;
  if (node->prim != EMLX_PRIM_ARGMAX && node->prim != EMLX_PRIM_ARGMIN)
    return EMLX_FAIL("cpu: %s is not argmax/argmin", name);
  const emlx_argreduce_params *ap = (const emlx_argreduce_params *)emlx__params(node);
  if (node->params_size != sizeof *ap || ap->axis < 0 || ap->axis >= in->ndim)
    return EMLX_FAIL("cpu: %s: malformed params", name);
  if (!emlx_dtype_is_integer(out->dtype))
    return EMLX_FAIL("cpu: %s: index dtype %s is not an integer dtype", name,
                     emlx_dtype_name(out->dtype));
  if (in->dtype == EMLX_COMPLEX128) /* no 64-bit order key holds both doubles */
    return EMLX_FAIL("cpu: %s: dtype complex128 is not supported", name);
  arg_plan p;
  memset(&p, 0, sizeof p);
  p.dt = in->dtype;
  p.es = (int64_t)emlx_dtype_size(in->dtype);
  p.out_es = (int64_t)emlx_dtype_size(out->dtype);
  p.is_min = node->prim == EMLX_PRIM_ARGMIN;
  p.last = ap->last_index != 0;
  p.has_nan = emlx_dtype_is_float(in->dtype) || in->dtype == EMLX_COMPLEX64;
  p.n = in->shape[ap->axis];
  p.sa = in->strides[ap->axis];
  int64_t nout = 1;
  bool merged_last = false;
  for (int i = 0; i < in->ndim; i++) {
    if (i == ap->axis) {
      merged_last = false;
      continue;
    }
    int64_t size = in->shape[i], stride = in->strides[i];
    nout *= size;
    if (size == 1)
      continue;
    if (merged_last && p.kstride[p.nk - 1] == stride * size) {
      p.ksize[p.nk - 1] *= size;
      p.kstride[p.nk - 1] = stride;
    } else {
      p.ksize[p.nk] = size;
      p.kstride[p.nk++] = stride;
    }
    merged_last = true;
  }
  if (nout != out->size)
    return EMLX_FAIL("cpu: %s: output has %lld elements, expected %lld", name, (long long)out->size,
                     (long long)nout);
  if (emlx__array_alloc_data(out) != 0)
    return -1;
  if (out->size == 0)
    return 0;
  if (p.n == 0)
    return EMLX_FAIL("cpu: %s of an empty axis", name);
  p.in = (const char *)emlx__data(in);
  p.out = (char *)emlx__data(out);
  int64_t ks = p.nk > 0 ? p.kstride[p.nk - 1] : 0;
  bool rows = p.nk == 0 || p.n == 1 || (p.sa < 0 ? -p.sa : p.sa) <= (ks < 0 ? -ks : ks);
  return rows ? run_rows(&p, nout) : run_cols(&p);
}
