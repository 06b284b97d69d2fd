/* window_scatter.c — the WINDOW_SCATTER kernel (Nx's window_scatter_max /
 * window_scatter_min, XLA's select_and_scatter).
 *
 * For each window (an element of source), the selected position of the
 * operand is the first maximum (minimum) in row-major tap order among the
 * taps inside the input (padding taps are never selected; NaN beats every
 * number and the first NaN wins); source's value is added there. Values are
 * compared through an order-preserving key (double for floats, a biased
 * uint64 for integers) and summed in a double (floats) or wrapping uint64
 * (integers) accumulator of the operand's size, so f16/bf16 round once at
 * the end. Windows may overlap, so the scatter runs on one thread. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "window_util.h"

/* Order-preserving uint64 key of an integer element. */
static uint64_t int_key(const void *p, emlx_dtype dt) {
  switch (dt) {
  case EMLX_BOOL:
  case EMLX_UINT8:
    return *(const uint8_t *)p;
  case EMLX_UINT16:
    return *(const uint16_t *)p;
  case EMLX_UINT32:
    return *(const uint32_t *)p;
  case EMLX_UINT64:
    return *(const uint64_t *)p;
  case EMLX_INT8:
    return (uint64_t)(int64_t) * (const int8_t *)p ^ (UINT64_C(1) << 63);
  case EMLX_INT16:
    return (uint64_t)(int64_t) * (const int16_t *)p ^ (UINT64_C(1) << 63);
  case EMLX_INT32:
    return (uint64_t)(int64_t) * (const int32_t *)p ^ (UINT64_C(1) << 63);
  default:
    return (uint64_t) * (const int64_t *)p ^ (UINT64_C(1) << 63);
  }
}

/* Raw integer bits of an element, sign-extended (the accumulator wraps). */
static uint64_t int_bits(const void *p, emlx_dtype dt) {
  return dt == EMLX_UINT64 ? *(const uint64_t *)p : (uint64_t)emlx__load_i64(p, dt);
}

static void store_int_bits(void *p, emlx_dtype dt, uint64_t v) {
  switch (dt) {
  case EMLX_BOOL:
    *(uint8_t *)p = v != 0;
    break;
  case EMLX_UINT8:
  case EMLX_INT8:
    *(uint8_t *)p = (uint8_t)v;
    break;
  case EMLX_UINT16:
  case EMLX_INT16:
    *(uint16_t *)p = (uint16_t)v;
    break;
  case EMLX_UINT32:
  case EMLX_INT32:
    *(uint32_t *)p = (uint32_t)v;
    break;
  default:
    *(uint64_t *)p = v;
    break;
  }
}

typedef struct scat_state {
  const char *a; /* operand element 0 */
  size_t es;
  emlx_dtype dt;
  bool is_float, is_max;
  bool have;
  int64_t best_pos; /* row-major position of the selected tap */
  double best_f;
  uint64_t best_k;
} scat_state;

static void consider(scat_state *s, int64_t off, int64_t pos) {
  const void *p = s->a + off * (int64_t)s->es;
  if (s->is_float) {
    double v = emlx__load_f64(p, s->dt);
    bool take;
    if (!s->have)
      take = true;
    else if (isnan(s->best_f))
      take = false;
    else if (isnan(v))
      take = true;
    else
      take = s->is_max ? v > s->best_f : v < s->best_f;
    if (take) {
      s->best_f = v;
      s->best_pos = pos;
      s->have = true;
    }
  } else {
    uint64_t k = int_key(p, s->dt);
    if (!s->have || (s->is_max ? k > s->best_k : k < s->best_k)) {
      s->best_k = k;
      s->best_pos = pos;
      s->have = true;
    }
  }
}

int emlx_cpu_window_scatter(const emlx_node *node, emlx_array *const *inputs,
                            emlx_array *const *outputs) {
  const emlx_window_params *p = emlx__params(node);
  emlx_array *a = inputs[0], *src = inputs[1], *init = inputs[2], *out = outputs[0];
  if (!out)
    return 0;
  if (emlx__array_alloc_data(out) != 0)
    return -1;
  int64_t n = out->size;
  if (n == 0)
    return 0;
  int r = p->ndim;
  emlx_dtype dt = a->dtype;
  size_t es = emlx_dtype_size(dt);
  bool is_float = emlx_dtype_is_float(dt);
  /* Accumulator over the operand's row-major positions. */
  void *acc = malloc((size_t)n * 8);
  if (!acc)
    return EMLX_FAIL("window_scatter: out of memory");
  double *accf = acc;
  uint64_t *acci = acc;
  const void *ip = emlx__data(init);
  double initf = is_float ? emlx__load_f64(ip, dt) : 0.0;
  uint64_t initi = is_float ? 0 : int_bits(ip, dt);
  for (int64_t i = 0; i < n; i++) {
    if (is_float)
      accf[i] = initf;
    else
      acci[i] = initi;
  }
  win_axis ax[EMLX_MAX_NDIM];
  win_axes(p, a, ax);
  /* Row-major strides of the operand's positions, for the accumulator. */
  int64_t rstride[EMLX_MAX_NDIM];
  emlx__row_major_strides(a->shape, r, rstride);
  scat_state st = {.a = emlx__data(a),
                   .es = es,
                   .dt = dt,
                   .is_float = is_float,
                   .is_max = p->op == EMLX_WINDOW_MAX};
  const char *sp = emlx__data(src);
  int64_t oc[EMLX_MAX_NDIM] = {0}, kmin[EMLX_MAX_NDIM], kmax[EMLX_MAX_NDIM], kc[EMLX_MAX_NDIM],
          first[EMLX_MAX_NDIM];
  for (int64_t j = 0; j < src->size; j++) {
    /* source element j at coordinates oc (any strides) */
    int64_t soff = 0;
    bool any = true;
    for (int i = 0; i < r; i++) {
      soff += oc[i] * src->strides[i];
      if (any && !win_taps(&ax[i], oc[i], &kmin[i], &kmax[i], &first[i]))
        any = false;
      kc[i] = kmin[i];
    }
    if (any) {
      st.have = false;
      for (;;) {
        int64_t off = 0, rp = 0;
        for (int i = 0; i < r; i++) {
          int64_t x = first[i] + (kc[i] - kmin[i]) * ax[i].d;
          off += x * ax[i].stride;
          rp += x * rstride[i];
        }
        consider(&st, off, rp);
        int i = r - 1;
        for (; i >= 0; i--) {
          if (++kc[i] < kmax[i])
            break;
          kc[i] = kmin[i];
        }
        if (i < 0)
          break;
      }
      int64_t pos = st.best_pos;
      const char *s = sp + soff * (int64_t)es;
      if (is_float)
        accf[pos] += emlx__load_f64(s, dt);
      else
        acci[pos] += int_bits(s, dt);
    }
    for (int i = r - 1; i >= 0; i--) {
      if (++oc[i] < src->shape[i])
        break;
      oc[i] = 0;
    }
  }
  char *o = emlx__data(out);
  for (int64_t i = 0; i < n; i++) {
    if (is_float)
      emlx__store_f64(o + i * (int64_t)es, dt, accf[i]);
    else
      store_int_bits(o + i * (int64_t)es, dt, acci[i]);
  }
  free(acc);
  return 0;
}
