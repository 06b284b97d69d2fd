/* fast.c — constructors of the fused transformer kernels (include/emlx/
 * fast.h): rms_norm, layer_norm, the four rope entry points and swiglu.
 * Each validates its arguments with a message naming the function, casts
 * the small side inputs (weight, bias, freqs) to the dtype the kernel reads,
 * and makes one node (kernels: src/cpu/fast/fast.c). */
#include <math.h>

#include "ops_util.h"
#include "params_fast.h"

static bool fast_dtype_ok(emlx_dtype d) {
  return d == EMLX_FLOAT32 || d == EMLX_FLOAT16 || d == EMLX_BFLOAT16;
}

static int fast_check_float(const emlx_array *a, const char *op, const char *what) {
  if (!fast_dtype_ok(a->dtype))
    return EMLX_FAIL("%s: %s must be float32, float16 or bfloat16 (got %s)", op, what,
                     emlx_dtype_name(a->dtype));
  return 0;
}

/* ---- normalisation ------------------------------------------------------------- */
static int norm_check_vec(const emlx_array *v, const emlx_array *x, const char *op,
                          const char *what) {
  if (v->ndim != 1)
    return EMLX_FAIL("%s: %s must have rank 1 (got rank %d)", op, what, v->ndim);
  if (v->shape[0] != x->shape[x->ndim - 1])
    return EMLX_FAIL("%s: %s has %lld elements but the last axis of x has %lld", op, what,
                     (long long)v->shape[0], (long long)x->shape[x->ndim - 1]);
  return fast_check_float(v, op, what);
}

static emlx_array *norm_node(emlx_array *x, emlx_array *w, emlx_array *b, float eps,
                             emlx_fast_norm_op op, const char *name) {
  EMLX_CHECK_ARRAY(x, name);
  if (x->ndim < 1)
    return EMLX_FAIL_NULL("%s: x must have rank >= 1 (got a scalar)", name);
  if (fast_check_float(x, name, "x") != 0)
    return NULL;
  if (w && norm_check_vec(w, x, name, "weight") != 0)
    return NULL;
  if (b && norm_check_vec(b, x, name, "bias") != 0)
    return NULL;
  if (!(eps >= 0.0f) || eps == (float)INFINITY)
    return EMLX_FAIL_NULL("%s: eps must be finite and >= 0 (got %g)", name, (double)eps);
  emlx_dtype dt = x->dtype;
  if (w)
    dt = emlx_promote_types(dt, w->dtype);
  if (b)
    dt = emlx_promote_types(dt, b->dtype);
  emlx_array *in[3] = {emlx__cast(x, dt), w ? emlx__cast(w, dt) : NULL,
                       b ? emlx__cast(b, dt) : NULL};
  emlx_array *r = NULL;
  if (in[0] && (!w || in[1]) && (!b || in[2])) {
    emlx_fast_norm_params p = {.op = op, .has_weight = w != NULL, .has_bias = b != NULL, .eps = eps};
    emlx_array *args[3];
    int n = 0;
    for (int i = 0; i < 3; i++)
      if (in[i])
        args[n++] = in[i];
    r = emlx__op(EMLX_PRIM_FAST_NORM, args, n, &p, sizeof p, dt, x->shape, x->ndim);
  }
  for (int i = 0; i < 3; i++)
    emlx_release(in[i]);
  return r;
}

emlx_array *emlx_fast_rms_norm(emlx_array *x, emlx_array *weight, float eps) {
  return norm_node(x, weight, NULL, eps, EMLX_FAST_RMS_NORM, "fast_rms_norm");
}

emlx_array *emlx_fast_layer_norm(emlx_array *x, emlx_array *weight, emlx_array *bias, float eps) {
  return norm_node(x, weight, bias, eps, EMLX_FAST_LAYER_NORM, "fast_layer_norm");
}

emlx_array *emlx_fast_layer_norm_no_bias(emlx_array *x, emlx_array *weight, float eps) {
  return norm_node(x, weight, NULL, eps, EMLX_FAST_LAYER_NORM, "fast_layer_norm_no_bias");
}

/* ---- rope ------------------------------------------------------------------------ */
typedef struct rope_args {
  emlx_array *x;
  int dims;
  bool traditional;
  float base, scale;
  int64_t offset;
  emlx_array *pos; /* offsets or positions */
  emlx_array *freqs;
  emlx_fast_rope_mode mode;
  int seq_axis_from_end; /* 2: axis -2; 0: axis 1 */
} rope_args;

static int rope_check_int(const emlx_array *a, const char *op, const char *what) {
  emlx_dtype d = a->dtype;
  if (d < EMLX_UINT8 || d > EMLX_INT64)
    return EMLX_FAIL("%s: %s must have an integer dtype (got %s)", op, what, emlx_dtype_name(d));
  return 0;
}

static emlx_array *rope_node(const rope_args *a, const char *name) {
  emlx_array *x = a->x;
  EMLX_CHECK_ARRAY(x, name);
  if (x->ndim < 3)
    return EMLX_FAIL_NULL("%s: x must have rank >= 3 ({B, ..., T, D} or {B, T, ..., D}); got "
                          "rank %d",
                          name, x->ndim);
  if (fast_check_float(x, name, "x") != 0)
    return NULL;
  int64_t D = x->shape[x->ndim - 1];
  if (a->dims <= 0 || a->dims % 2 != 0 || a->dims > D)
    return EMLX_FAIL_NULL("%s: dims must be even and in (0, %lld] (the last axis); got %d", name,
                          (long long)D, a->dims);
  if (!a->freqs && !(a->base > 0.0f && a->base < (float)INFINITY))
    return EMLX_FAIL_NULL("%s: base must be finite and > 0 (got %g)", name, (double)a->base);
  if (!(a->scale > -(float)INFINITY && a->scale < (float)INFINITY))
    return EMLX_FAIL_NULL("%s: scale must be finite (got %g)", name, (double)a->scale);
  int seq_axis = a->seq_axis_from_end ? x->ndim - 2 : 1;
  int64_t B = x->shape[0], T = x->shape[seq_axis];
  if (a->mode == EMLX_ROPE_OFFSETS) {
    EMLX_CHECK_ARRAY(a->pos, name);
    if (rope_check_int(a->pos, name, "offset") != 0)
      return NULL;
    if (a->pos->ndim > 1 || (a->pos->size != 1 && a->pos->size != B))
      return EMLX_FAIL_NULL("%s: offset must be a scalar or a vector of %lld elements (the batch "
                            "axis of x); got rank %d with %lld elements",
                            name, (long long)B, a->pos->ndim, (long long)a->pos->size);
  } else if (a->mode == EMLX_ROPE_POSITIONS) {
    EMLX_CHECK_ARRAY(a->pos, name);
    if (rope_check_int(a->pos, name, "position_ids") != 0)
      return NULL;
    if (a->pos->ndim != 2 || a->pos->shape[0] != B || a->pos->shape[1] != T)
      return EMLX_FAIL_NULL("%s: position_ids must be {B, T} = {%lld, %lld} (x is {B, T, ..., D})"
                            "; got rank %d",
                            name, (long long)B, (long long)T, a->pos->ndim);
  }
  emlx_array *freqs = NULL;
  if (a->freqs) {
    if (a->freqs->ndim != 1 || a->freqs->shape[0] != a->dims / 2)
      return EMLX_FAIL_NULL("%s: freqs must be rank 1 with dims / 2 = %d elements", name,
                            a->dims / 2);
    if (!emlx_dtype_is_float(a->freqs->dtype))
      return EMLX_FAIL_NULL("%s: freqs must have a float dtype (got %s)", name,
                            emlx_dtype_name(a->freqs->dtype));
    freqs = emlx__cast(a->freqs, EMLX_FLOAT32);
    if (!freqs)
      return NULL;
  }
  emlx_fast_rope_params p = {.dims = a->dims,
                             .traditional = a->traditional,
                             .mode = a->mode,
                             .seq_axis = seq_axis,
                             .has_freqs = freqs != NULL,
                             .base = a->freqs ? 1.0f : a->base,
                             .scale = a->scale,
                             .offset = a->offset};
  emlx_array *in[3];
  int n = 0;
  in[n++] = x;
  if (a->mode != EMLX_ROPE_SCALAR)
    in[n++] = a->pos;
  if (freqs)
    in[n++] = freqs;
  emlx_array *r = emlx__op(EMLX_PRIM_FAST_ROPE, in, n, &p, sizeof p, x->dtype, x->shape, x->ndim);
  emlx_release(freqs);
  return r;
}

emlx_array *emlx_fast_rope(emlx_array *x, int dims, bool traditional, float base, float scale,
                           int64_t offset) {
  rope_args a = {.x = x,
                 .dims = dims,
                 .traditional = traditional,
                 .base = base,
                 .scale = scale,
                 .offset = offset,
                 .mode = EMLX_ROPE_SCALAR,
                 .seq_axis_from_end = 2};
  return rope_node(&a, "fast_rope");
}

emlx_array *emlx_fast_rope_ids(emlx_array *x, int dims, bool traditional, float base, float scale,
                               emlx_array *offsets) {
  rope_args a = {.x = x,
                 .dims = dims,
                 .traditional = traditional,
                 .base = base,
                 .scale = scale,
                 .pos = offsets,
                 .mode = EMLX_ROPE_OFFSETS};
  if (!offsets)
    return EMLX_FAIL_NULL("fast_rope_ids: offset array is NULL");
  return rope_node(&a, "fast_rope_ids");
}

emlx_array *emlx_fast_rope_positions(emlx_array *x, int dims, bool traditional, float base,
                                     float scale, emlx_array *positions) {
  rope_args a = {.x = x,
                 .dims = dims,
                 .traditional = traditional,
                 .base = base,
                 .scale = scale,
                 .pos = positions,
                 .mode = EMLX_ROPE_POSITIONS};
  if (!positions)
    return EMLX_FAIL_NULL("fast_rope_positions: position_ids array is NULL");
  return rope_node(&a, "fast_rope_positions");
}

emlx_array *emlx_fast_rope_with_freqs(emlx_array *x, int dims, bool traditional, float scale,
                                      emlx_array *offsets, emlx_array *freqs) {
  rope_args a = {.x = x,
                 .dims = dims,
                 .traditional = traditional,
                 .scale = scale,
                 .pos = offsets,
                 .freqs = freqs,
                 .mode = EMLX_ROPE_OFFSETS};
  if (!offsets || !freqs)
    return EMLX_FAIL_NULL("fast_rope_with_freqs: %s array is NULL", offsets ? "freqs" : "offset");
  return rope_node(&a, "fast_rope_with_freqs");
}

/* ---- swiglu ------------------------------------------------------------------------ */
emlx_array *emlx_fast_swiglu(emlx_array *gate, emlx_array *up) {
  const char *name = "fast_swiglu";
  EMLX_CHECK_ARRAY(gate, name);
  EMLX_CHECK_ARRAY(up, name);
  if (fast_check_float(gate, name, "gate") != 0 || fast_check_float(up, name, "up") != 0)
    return NULL;
  if (gate->dtype != up->dtype)
    return EMLX_FAIL_NULL("%s: gate and up must have the same dtype (got %s and %s)", name,
                          emlx_dtype_name(gate->dtype), emlx_dtype_name(up->dtype));
  bool same = gate->ndim == up->ndim;
  for (int i = 0; same && i < gate->ndim; i++)
    same = gate->shape[i] == up->shape[i];
  if (!same)
    return EMLX_FAIL_NULL("%s: gate and up must have the same shape (ranks %d and %d)", name,
                          gate->ndim, up->ndim);
  emlx_array *in[2] = {gate, up};
  return emlx__op(EMLX_PRIM_FAST_SWIGLU, in, 2, NULL, 0, gate->dtype, gate->shape, gate->ndim);
}
