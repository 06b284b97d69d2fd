/* compose.c — MLX's everyday elementwise ops that are compositions of the
 * engine's own (logaddexp, log2, log10, isfinite, isposinf, isneginf,
 * nan_to_num, square, reciprocal) and the creation ops linspace and tri.
 * Every step is elementwise, so at eval each becomes one fused region: a
 * single pass over memory, whatever the number of steps written here. */
#include <float.h>
#include <math.h>
#include <stdarg.h>

#include "ops_util.h"

/* Releases n handles (NULL-safe) and returns r. */
static emlx_array *done(emlx_array *r, int n, ...) {
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++)
    emlx_release(va_arg(ap, emlx_array *));
  va_end(ap);
  return r;
}

static emlx_dtype float_of(emlx_dtype d) { return emlx_dtype_is_float(d) ? d : EMLX_FLOAT32; }

static emlx_array *scalar_like(double v, emlx_dtype dt, const emlx_array *a) {
  return emlx_scalar_tensor(v, dt, a->device);
}

emlx_array *emlx_logaddexp(emlx_array *a, emlx_array *b) {
  EMLX_CHECK_ARRAY(a, "logaddexp");
  EMLX_CHECK_ARRAY(b, "logaddexp");
  emlx_dtype pt = emlx_promote_types(a->dtype, b->dtype), dt = float_of(pt);
  if (emlx_dtype_is_complex(pt))
    return EMLX_FAIL_NULL("logaddexp: %s is not supported", emlx_dtype_name(pt));
  /* max + log1p(exp(min - max)); equal inputs (both infinities included,
   * where min - max is NaN) give a + log(2). */
  emlx_array *x = emlx__cast(a, dt), *y = x ? emlx__cast(b, dt) : NULL;
  emlx_array *hi = y ? emlx_maximum(x, y) : NULL, *lo = hi ? emlx_minimum(x, y) : NULL;
  emlx_array *d = lo ? emlx_subtract(lo, hi) : NULL, *e = d ? emlx_exp(d) : NULL;
  emlx_array *l = e ? emlx_log1p(e) : NULL, *s = l ? emlx_add(hi, l) : NULL;
  emlx_array *ln2 = s ? scalar_like(M_LN2, dt, a) : NULL, *x2 = ln2 ? emlx_add(x, ln2) : NULL;
  emlx_array *eq = x2 ? emlx_equal(x, y) : NULL, *r = eq ? emlx_where(eq, x2, s) : NULL;
  return done(r, 11, x, y, hi, lo, d, e, l, s, ln2, x2, eq);
}

/* log(x) * k, in f64 for the narrower floats (one rounding at the end). */
static emlx_array *scaled_log(emlx_array *a, double k, const char *op) {
  EMLX_CHECK_ARRAY(a, op);
  if (emlx_dtype_is_complex(a->dtype))
    return EMLX_FAIL_NULL("%s: %s is not supported", op, emlx_dtype_name(a->dtype));
  emlx_dtype dt = float_of(a->dtype);
  emlx_array *w = emlx__cast(a, EMLX_FLOAT64), *l = w ? emlx_log(w) : NULL;
  emlx_array *c = l ? emlx_scalar_tensor(k, EMLX_FLOAT64, a->device) : NULL;
  emlx_array *m = c ? emlx_multiply(l, c) : NULL, *r = m ? emlx__cast(m, dt) : NULL;
  return done(r, 4, w, l, c, m);
}

emlx_array *emlx_log2(emlx_array *a) { return scaled_log(a, 1.0 / M_LN2, "log2"); }
emlx_array *emlx_log10(emlx_array *a) { return scaled_log(a, 1.0 / M_LN10, "log10"); }

emlx_array *emlx_isfinite(emlx_array *a) {
  EMLX_CHECK_ARRAY(a, "isfinite");
  emlx_array *n = emlx_is_nan(a), *i = n ? emlx_is_infinity(a) : NULL;
  emlx_array *o = i ? emlx_logical_or(n, i) : NULL, *r = o ? emlx_logical_not(o) : NULL;
  return done(r, 3, n, i, o);
}

/* is_infinity(a) and (a > 0) (or < 0). */
static emlx_array *signed_inf(emlx_array *a, bool positive, const char *op) {
  EMLX_CHECK_ARRAY(a, op);
  if (emlx_dtype_is_complex(a->dtype))
    return EMLX_FAIL_NULL("%s: %s is not supported", op, emlx_dtype_name(a->dtype));
  emlx_array *i = emlx_is_infinity(a), *z = i ? scalar_like(0, a->dtype, a) : NULL;
  emlx_array *s = z ? (positive ? emlx_greater(a, z) : emlx_less(a, z)) : NULL;
  emlx_array *r = s ? emlx_logical_and(i, s) : NULL;
  return done(r, 3, i, z, s);
}

emlx_array *emlx_isposinf(emlx_array *a) { return signed_inf(a, true, "isposinf"); }
emlx_array *emlx_isneginf(emlx_array *a) { return signed_inf(a, false, "isneginf"); }

static double largest_finite(emlx_dtype d) {
  switch (d) {
  case EMLX_FLOAT16:
    return 65504.0;
  case EMLX_BFLOAT16:
    return 0x1.fep127;
  case EMLX_FLOAT32:
    return (double)FLT_MAX;
  default:
    return DBL_MAX;
  }
}

emlx_array *emlx_nan_to_num(emlx_array *a, double nan, const double *posinf, const double *neginf) {
  EMLX_CHECK_ARRAY(a, "nan_to_num");
  if (emlx_dtype_is_complex(a->dtype))
    return EMLX_FAIL_NULL("nan_to_num: %s is not supported", emlx_dtype_name(a->dtype));
  if (!emlx_dtype_is_float(a->dtype))
    return emlx_retain(a); /* nothing to replace */
  double big = largest_finite(a->dtype);
  emlx_array *vn = scalar_like(nan, a->dtype, a);
  emlx_array *vp = vn ? scalar_like(posinf ? *posinf : big, a->dtype, a) : NULL;
  emlx_array *vm = vp ? scalar_like(neginf ? *neginf : -big, a->dtype, a) : NULL;
  emlx_array *in = vm ? emlx_is_nan(a) : NULL, *r1 = in ? emlx_where(in, vn, a) : NULL;
  emlx_array *ip = r1 ? emlx_isposinf(a) : NULL, *r2 = ip ? emlx_where(ip, vp, r1) : NULL;
  emlx_array *im = r2 ? emlx_isneginf(a) : NULL, *r = im ? emlx_where(im, vm, r2) : NULL;
  return done(r, 8, vn, vp, vm, in, r1, ip, r2, im);
}

emlx_array *emlx_square(emlx_array *a) {
  EMLX_CHECK_ARRAY(a, "square");
  return emlx_multiply(a, a);
}

emlx_array *emlx_reciprocal(emlx_array *a) {
  EMLX_CHECK_ARRAY(a, "reciprocal");
  emlx_array *one = scalar_like(1, a->dtype == EMLX_BOOL ? EMLX_FLOAT32 : a->dtype, a);
  emlx_array *r = one ? emlx_divide(one, a) : NULL;
  return done(r, 1, one);
}

/* ---- creation ------------------------------------------------------------------- */
emlx_array *emlx_linspace(double start, double stop, int64_t num, emlx_dtype dtype,
                          emlx_device dev) {
  if (num < 0)
    return EMLX_FAIL_NULL("linspace: num must be non-negative (got %lld)", (long long)num);
  if (!isfinite(start) || !isfinite(stop))
    return EMLX_FAIL_NULL("linspace: start and stop must be finite");
  if (!emlx_dtype_is_valid(dtype) || emlx_dtype_is_complex(dtype))
    return EMLX_FAIL_NULL("linspace: unsupported dtype %d", (int)dtype);
  if (num <= 1) {
    int64_t shape[1] = {num};
    return emlx_full(shape, 1, start, dtype, dev);
  }
  /* start * (1 - t) + stop * t with t = i / (num - 1), in f64 (as MLX's
   * formula, so both ends are exact), then cast. */
  emlx_array *i = emlx_arange(0, (double)num, 1, EMLX_FLOAT64, dev);
  emlx_array *den = i ? emlx_scalar_tensor((double)(num - 1), EMLX_FLOAT64, dev) : NULL;
  emlx_array *t = den ? emlx_divide(i, den) : NULL;
  emlx_array *one = t ? emlx_scalar_tensor(1, EMLX_FLOAT64, dev) : NULL;
  emlx_array *tb = one ? emlx_subtract(one, t) : NULL;
  emlx_array *s0 = tb ? emlx_scalar_tensor(start, EMLX_FLOAT64, dev) : NULL;
  emlx_array *s1 = s0 ? emlx_scalar_tensor(stop, EMLX_FLOAT64, dev) : NULL;
  emlx_array *p0 = s1 ? emlx_multiply(tb, s0) : NULL, *p1 = p0 ? emlx_multiply(t, s1) : NULL;
  emlx_array *sum = p1 ? emlx_add(p0, p1) : NULL, *r = sum ? emlx__cast(sum, dtype) : NULL;
  return done(r, 10, i, den, t, one, tb, s0, s1, p0, p1, sum);
}

emlx_array *emlx_tri(int64_t n, int64_t m, int64_t k, emlx_dtype dtype, emlx_device dev) {
  if (n < 0 || m < 0)
    return EMLX_FAIL_NULL("tri: n and m must be non-negative");
  if (!emlx_dtype_is_valid(dtype))
    return EMLX_FAIL_NULL("tri: invalid dtype %d", (int)dtype);
  /* column - row <= k */
  int64_t rs[2] = {n, 1}, cs[2] = {1, m};
  emlx_array *r0 = emlx_arange(0, (double)n, 1, EMLX_INT64, dev);
  emlx_array *c0 = r0 ? emlx_arange(0, (double)m, 1, EMLX_INT64, dev) : NULL;
  emlx_array *r = c0 ? emlx_reshape(r0, rs, 2) : NULL, *c = r ? emlx_reshape(c0, cs, 2) : NULL;
  emlx_array *d = c ? emlx_subtract(c, r) : NULL;
  emlx_array *kk = d ? emlx_scalar_tensor_int(k, EMLX_INT64, dev) : NULL;
  emlx_array *mask = kk ? emlx_less_equal(d, kk) : NULL,
             *out = mask ? emlx__cast(mask, dtype) : NULL;
  return done(out, 7, r0, c0, r, c, d, kk, mask);
}
