/* create.c — the creation kernels: full, arange, eye.
 *
 * full replicates the params' value (already in the output dtype) with
 * element-sized stores; arange computes start + i * step in f64 per tile and
 * converts the tile with the astype loop f64 -> dtype (so its rounding and
 * saturation rules are astype's); eye zero-fills and writes one per row. All
 * split large outputs over the thread pool. */
#include <string.h>

#include "cpu.h"

typedef struct fill_job {
  char *out;
  unsigned char value[16];
  size_t esize;
} fill_job;

static void fill_range(void *ctx, int64_t begin, int64_t end) {
  const fill_job *f = (const fill_job *)ctx;
  int64_t n = end - begin;
  char *p = f->out + begin * (int64_t)f->esize;
  switch (f->esize) {
  case 1:
    memset(p, f->value[0], (size_t)n);
    break;
  case 2: {
    uint16_t v, *o = (uint16_t *)(void *)p;
    memcpy(&v, f->value, sizeof v);
    for (int64_t i = 0; i < n; i++)
      o[i] = v;
    break;
  }
  case 4: {
    uint32_t v, *o = (uint32_t *)(void *)p;
    memcpy(&v, f->value, sizeof v);
    for (int64_t i = 0; i < n; i++)
      o[i] = v;
    break;
  }
  case 16: { /* complex128 */
    uint64_t v[2], *o = (uint64_t *)(void *)p;
    memcpy(v, f->value, sizeof v);
    for (int64_t i = 0; i < n; i++) {
      o[2 * i] = v[0];
      o[2 * i + 1] = v[1];
    }
    break;
  }
  default: { /* 8 bytes: 64-bit ints, f64, complex64 */
    uint64_t v, *o = (uint64_t *)(void *)p;
    memcpy(&v, f->value, sizeof v);
    for (int64_t i = 0; i < n; i++)
      o[i] = v;
    break;
  }
  }
}

/* Fills `count` elements of `out` (esize bytes each) with value. */
static void fill(char *out, int64_t count, size_t esize, const void *value) {
  fill_job f = {out, {0}, esize};
  memcpy(f.value, value, esize);
  if (count <= 4 * EMLX_CPU_GRAIN)
    fill_range(&f, 0, count);
  else
    emlx__parallel_for(count, 4 * EMLX_CPU_GRAIN, fill_range, &f);
}

int emlx_cpu_full(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs) {
  (void)inputs;
  emlx_array *out = outputs[0];
  if (!out)
    return 0;
  size_t es = emlx_dtype_size(out->dtype);
  if (es == 0 || es > 16)
    return EMLX_FAIL("cpu: full: invalid dtype");
  if (node->params_size < sizeof(emlx_full_params))
    return EMLX_FAIL("cpu: full: missing params");
  const emlx_full_params *p = (const emlx_full_params *)emlx__params(node);
  if (emlx__array_alloc_data(out) != 0)
    return -1;
  fill((char *)emlx__data(out), out->size, es, p->value);
  return 0;
}

typedef struct arange_job {
  double start, step;
  char *out;
  size_t esize;
  emlx_cpu_unary_loop from_f64;
} arange_job;

static void arange_range(void *ctx, int64_t begin, int64_t end) {
  const arange_job *j = (const arange_job *)ctx;
  double t[512];
  for (int64_t i0 = begin; i0 < end; i0 += 512) {
    int64_t len = end - i0 < 512 ? end - i0 : 512;
    for (int64_t i = 0; i < len; i++)
      t[i] = j->start + (double)(i0 + i) * j->step;
    j->from_f64(t, 1, j->out + i0 * (int64_t)j->esize, len);
  }
}

int emlx_cpu_arange(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs) {
  (void)inputs;
  emlx_array *out = outputs[0];
  if (!out)
    return 0;
  if (!emlx_dtype_is_valid(out->dtype))
    return EMLX_FAIL("cpu: arange: invalid dtype");
  if (node->params_size < sizeof(emlx_arange_params))
    return EMLX_FAIL("cpu: arange: missing params");
  const emlx_arange_params *p = (const emlx_arange_params *)emlx__params(node);
  if (emlx__array_alloc_data(out) != 0)
    return -1;
  arange_job j = {p->start, p->step, (char *)emlx__data(out), emlx_dtype_size(out->dtype),
                  emlx_cpu_isa_get()->cast->cast[EMLX_FLOAT64][out->dtype]};
  if (out->size <= EMLX_CPU_GRAIN)
    arange_range(&j, 0, out->size);
  else
    emlx__parallel_for(out->size, EMLX_CPU_GRAIN, arange_range, &j);
  return 0;
}

int emlx_cpu_eye(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs) {
  (void)inputs;
  emlx_array *out = outputs[0];
  if (!out)
    return 0;
  size_t es = emlx_dtype_size(out->dtype);
  if (es == 0)
    return EMLX_FAIL("cpu: eye: invalid dtype");
  if (node->params_size < sizeof(emlx_eye_params))
    return EMLX_FAIL("cpu: eye: missing params");
  int64_t k = ((const emlx_eye_params *)emlx__params(node))->k;
  if (emlx__array_alloc_data(out) != 0)
    return -1;
  if (out->size == 0)
    return 0;
  /* A batch of n x m matrices (rank 2 normally; rank 1 is one row). */
  int64_t m = out->ndim >= 1 ? out->shape[out->ndim - 1] : 1;
  int64_t n = out->ndim >= 2 ? out->shape[out->ndim - 2] : 1;
  int64_t rows = out->size / m;
  char *o = (char *)emlx__data(out);
  unsigned char zero[16] = {0}, one[16];
  double d1 = 1.0;
  emlx_cpu_isa_get()->cast->cast[EMLX_FLOAT64][out->dtype](&d1, 1, one, 1);
  fill(o, out->size, es, zero);
  for (int64_t g = 0; g < rows; g++) {
    int64_t r = g % n;
    if (k >= -r && k < m - r) /* column r + k inside [0, m) */
      memcpy(o + (g * m + r + k) * (int64_t)es, one, es);
  }
  return 0;
}
