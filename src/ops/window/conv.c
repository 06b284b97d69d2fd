/* conv.c — constructor of conv_general (MLX's conv_general plus XLA's batch
 * groups), channels-last over any number of spatial axes.
 *
 * Validates shapes and groups, casts both operands to their promoted dtype
 * and makes one CONV node; semantics in include/emlx/conv.h. */
#include <stdlib.h>
#include <string.h>

#include "ops_util.h"
#include "params_conv.h"

static int64_t opt_at(const int64_t *v, int i, int64_t dflt) { return v ? v[i] : dflt; }

/* Fills the per-axis params and the output shape; 0 or -1 with an error. */
static int conv_setup(const emlx_array *x, const emlx_array *w, const emlx_conv_options *o,
                      emlx_conv_params *p, int64_t *oshape) {
  int ns = x->ndim - 2;
  int64_t groups = o && o->groups ? o->groups : 1;
  int64_t bgroups = o && o->batch_groups ? o->batch_groups : 1;
  int64_t n = x->shape[0], cin = x->shape[x->ndim - 1];
  int64_t cout = w->shape[0], wcin = w->shape[w->ndim - 1];
  if (groups < 1 || bgroups < 1)
    return EMLX_FAIL("conv_general: groups and batch_groups must be >= 1");
  if (groups > 1 && bgroups > 1)
    return EMLX_FAIL("conv_general: groups > 1 and batch_groups > 1 cannot be combined");
  if (cin % groups != 0)
    return EMLX_FAIL("conv_general: groups (%lld) does not divide the input channels (%lld)",
                     (long long)groups, (long long)cin);
  if (cout % groups != 0)
    return EMLX_FAIL("conv_general: groups (%lld) does not divide the output channels (%lld)",
                     (long long)groups, (long long)cout);
  if (wcin != cin / groups)
    return EMLX_FAIL("conv_general: weight has %lld input channels, expected %lld (C_in %lld / "
                     "groups %lld)",
                     (long long)wcin, (long long)(cin / groups), (long long)cin, (long long)groups);
  if (n % bgroups != 0 || cout % bgroups != 0)
    return EMLX_FAIL("conv_general: batch_groups (%lld) must divide the batch (%lld) and the "
                     "output channels (%lld)",
                     (long long)bgroups, (long long)n, (long long)cout);
  p->nspatial = ns;
  p->flip = o && o->flip ? 1 : 0;
  p->groups = groups;
  p->batch_groups = bgroups;
  oshape[0] = n / bgroups;
  oshape[ns + 1] = cout;
  const int64_t big = INT64_C(1) << 40;
  for (int i = 0; i < ns; i++) {
    int64_t s = opt_at(o ? o->strides : NULL, i, 1);
    int64_t lo = opt_at(o ? o->padding_low : NULL, i, 0);
    int64_t hi = opt_at(o ? o->padding_high : NULL, i, 0);
    int64_t kd = opt_at(o ? o->kernel_dilation : NULL, i, 1);
    int64_t id = opt_at(o ? o->input_dilation : NULL, i, 1);
    if (s < 1 || kd < 1 || id < 1)
      return EMLX_FAIL("conv_general: strides and dilations must be >= 1 (axis %d)", i);
    if (s > big || kd > big || id > big || lo > big || hi > big || lo < -big || hi < -big)
      return EMLX_FAIL("conv_general: parameter too large on spatial axis %d", i);
    int64_t in = x->shape[i + 1], k = w->shape[i + 1];
    int64_t span = in == 0 ? 0 : (in - 1) * id + 1 + lo + hi;
    if (in > 0 && span < 0)
      return EMLX_FAIL("conv_general: padding leaves spatial axis %d with negative extent", i);
    int64_t keff = k == 0 ? 0 : (k - 1) * kd + 1;
    oshape[i + 1] = (in == 0 || span < keff) ? 0 : (span - keff) / s + 1;
    int64_t *v = p->vals + EMLX_CONV_NV * i;
    v[EMLX_CONV_S] = s;
    v[EMLX_CONV_LO] = lo;
    v[EMLX_CONV_HI] = hi;
    v[EMLX_CONV_KD] = kd;
    v[EMLX_CONV_ID] = id;
  }
  return 0;
}

emlx_array *emlx_conv_general(emlx_array *input, emlx_array *weight,
                              const emlx_conv_options *opts) {
  EMLX_CHECK_ARRAY(input, "conv_general");
  EMLX_CHECK_ARRAY(weight, "conv_general");
  if (input->device != weight->device)
    return EMLX_FAIL_NULL("conv_general: input and weight are on different devices");
  if (input->ndim < 3 || input->ndim != weight->ndim)
    return EMLX_FAIL_NULL("conv_general: input (N, spatial..., C) and weight (C_out, "
                          "spatial..., C_in) need the same rank >= 3 (got %d and %d)",
                          input->ndim, weight->ndim);
  emlx_dtype dt = emlx_promote_types(input->dtype, weight->dtype);
  if (!emlx_dtype_is_valid(dt) || dt == EMLX_BOOL || emlx_dtype_is_complex(dt))
    return EMLX_FAIL_NULL("conv_general: unsupported dtype %s", emlx_dtype_name(dt));
  int ns = input->ndim - 2;
  size_t psize = sizeof(emlx_conv_params) + (size_t)(EMLX_CONV_NV * ns) * sizeof(int64_t);
  emlx_conv_params *p = calloc(1, psize);
  if (!p)
    return EMLX_FAIL_NULL("conv_general: out of memory");
  int64_t oshape[EMLX_MAX_NDIM];
  emlx_array *out = NULL, *x = NULL, *w = NULL;
  if (conv_setup(input, weight, opts, p, oshape) == 0) {
    x = emlx__cast(input, dt);
    w = x ? emlx__cast(weight, dt) : NULL;
    if (w) {
      emlx_array *in[2] = {x, w};
      out = emlx__op(EMLX_PRIM_CONV, in, 2, p, psize, dt, oshape, input->ndim);
    }
  }
  emlx_release(x);
  emlx_release(w);
  free(p);
  return out;
}
