/* creation.c — arrays made from nothing: scalars, full, arange, eye. */
#include <math.h>
#include <string.h>

#include "ops_util.h"

static emlx_array *make_full(const int64_t *shape, int ndim, const emlx_full_params *p,
                             emlx_dtype dtype, emlx_device dev, const char *op) {
  if (!emlx_dtype_is_valid(dtype)) return EMLX_FAIL_NULL("%s: invalid dtype %d", op, (int)dtype);
  if (emlx__check_device(dev, op) != 0) return NULL;
  const int64_t *shapes[1] = {shape};
  return emlx__node_make(EMLX_PRIM_FULL, NULL, 0, p, sizeof *p, 1, &dtype, shapes, &ndim, dev,
                         NULL);
}

/* A scalar tensor is an evaluated leaf from the start, as MLX's
 * array(value) is: eager code makes one per scalar operand, and a lazy FULL
 * node would cost a node to build, walk and run at every eval. */
static emlx_array *scalar_leaf(const emlx_full_params *p, emlx_dtype dtype, emlx_device dev,
                               const char *op) {
  if (!emlx_dtype_is_valid(dtype)) return EMLX_FAIL_NULL("%s: invalid dtype %d", op, (int)dtype);
  if (emlx__check_device(dev, op) != 0) return NULL;
  return emlx_from_blob(p->value, dtype, NULL, 0, dev);
}

emlx_array *emlx_full(const int64_t *shape, int ndim, double value, emlx_dtype dtype,
                      emlx_device dev) {
  emlx_full_params p;
  memset(&p, 0, sizeof p);
  if (emlx_dtype_is_valid(dtype)) emlx__store_f64(p.value, dtype, value);
  return make_full(shape, ndim, &p, dtype, dev, "full");
}

emlx_array *emlx_scalar_tensor(double value, emlx_dtype dtype, emlx_device dev) {
  emlx_full_params p;
  memset(&p, 0, sizeof p);
  if (emlx_dtype_is_valid(dtype)) emlx__store_f64(p.value, dtype, value);
  return scalar_leaf(&p, dtype, dev, "scalar_tensor");
}

emlx_array *emlx_scalar_tensor_int(int64_t value, emlx_dtype dtype, emlx_device dev) {
  emlx_full_params p;
  memset(&p, 0, sizeof p);
  if (emlx_dtype_is_valid(dtype)) emlx__store_i64(p.value, dtype, value);
  return scalar_leaf(&p, dtype, dev, "scalar_tensor");
}

emlx_array *emlx_scalar_tensor_complex(float re, float im, emlx_device dev) {
  emlx_full_params p;
  memset(&p, 0, sizeof p);
  memcpy(p.value, &re, sizeof re);
  memcpy(p.value + sizeof re, &im, sizeof im);
  return scalar_leaf(&p, EMLX_COMPLEX64, dev, "scalar_tensor");
}

emlx_array *emlx_scalar_tensor_complex128(double re, double im, emlx_device dev) {
  emlx_full_params p;
  memset(&p, 0, sizeof p);
  memcpy(p.value, &re, sizeof re);
  memcpy(p.value + sizeof re, &im, sizeof im);
  return scalar_leaf(&p, EMLX_COMPLEX128, dev, "scalar_tensor");
}

emlx_array *emlx_ones(const int64_t *shape, int ndim, emlx_dtype dtype, emlx_device dev) {
  return emlx_full(shape, ndim, 1.0, dtype, dev);
}

emlx_array *emlx_zeros(const int64_t *shape, int ndim, emlx_dtype dtype, emlx_device dev) {
  return emlx_full(shape, ndim, 0.0, dtype, dev);
}

emlx_array *emlx_full_array(const int64_t *shape, int ndim, emlx_array *value, emlx_dtype dtype) {
  EMLX_CHECK_ARRAY(value, "full");
  if (!emlx_dtype_is_valid(dtype)) return EMLX_FAIL_NULL("full: invalid dtype %d", (int)dtype);
  emlx_array *cast = emlx__cast(value, dtype);
  if (!cast) return NULL;
  emlx_array *b = emlx_broadcast_to(cast, shape, ndim);
  emlx_release(cast);
  if (!b) return NULL;
  emlx_array *out = emlx_copy(b);
  emlx_release(b);
  return out;
}

emlx_array *emlx_arange(double start, double stop, double step, emlx_dtype dtype,
                        emlx_device dev) {
  if (!emlx_dtype_is_valid(dtype)) return EMLX_FAIL_NULL("arange: invalid dtype %d", (int)dtype);
  if (dtype == EMLX_BOOL) return EMLX_FAIL_NULL("arange: bool is not supported");
  if (!isfinite(start) || !isfinite(stop) || !isfinite(step))
    return EMLX_FAIL_NULL("arange: start, stop and step must be finite");
  if (step == 0.0) return EMLX_FAIL_NULL("arange: step must not be zero");
  double count = ceil((stop - start) / step);
  if (count > (double)((int64_t)1 << 60))
    return EMLX_FAIL_NULL("arange: %g elements is too many", count);
  int64_t n = count > 0.0 ? (int64_t)count : 0;
  emlx_arange_params p = {start, step};
  if (emlx__check_device(dev, "arange") != 0) return NULL;
  const int64_t *shapes[1] = {&n};
  int nd = 1;
  return emlx__node_make(EMLX_PRIM_ARANGE, NULL, 0, &p, sizeof p, 1, &dtype, shapes, &nd, dev,
                         NULL);
}

emlx_array *emlx_eye(int64_t n, int64_t m, int64_t k, emlx_dtype dtype, emlx_device dev) {
  if (!emlx_dtype_is_valid(dtype)) return EMLX_FAIL_NULL("eye: invalid dtype %d", (int)dtype);
  if (n < 0 || m < 0)
    return EMLX_FAIL_NULL("eye: sizes must be non-negative, got %lld x %lld", (long long)n,
                          (long long)m);
  if (emlx__check_device(dev, "eye") != 0) return NULL;
  emlx_eye_params p = {k};
  int64_t shape[2] = {n, m};
  const int64_t *shapes[1] = {shape};
  int nd = 2;
  return emlx__node_make(EMLX_PRIM_EYE, NULL, 0, &p, sizeof p, 1, &dtype, shapes, &nd, dev, NULL);
}
