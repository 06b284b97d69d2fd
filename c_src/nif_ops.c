/* nif_ops.c — the handlers of the creation, elementwise, shape and metadata
 * rows (reductions are in nif_reduce.c, indexing in nif_indexing.c, products
 * in nif_matmul.c). They run on the calling scheduler: each makes one lazy node (or reads
 * metadata) and returns, so none computes. Arguments arrive decoded and
 * validated (nif_decode.c); the engine validates the rest (broadcasting,
 * axes against ranks, ...) and its message becomes the error. */
#include <string.h>

#include "emlx_nif.h"

/* ---- creation ------------------------------------------------------------------- */

static bool shape_bytes(const nif_arg *shape, emlx_dtype dtype, size_t *out) {
  uint64_t n = emlx_dtype_size(dtype);
  for (int i = 0; i < shape->n; i++)
    if (__builtin_mul_overflow(n, (uint64_t)shape->ints[i], &n))
      return false;
  *out = (size_t)n;
  return true;
}

NIF_HANDLER(h_from_blob) {
  size_t need;
  if (!shape_bytes(&a[1], a[2].dtype, &need))
    return nif_error(c, "the shape %T is too large", a[1].term);
  if (a[0].bin.size != need)
    return nif_error(c, "the binary has %lu bytes, but shape %T of %s needs %lu",
                     (unsigned long)a[0].bin.size, a[1].term, emlx_dtype_name(a[2].dtype),
                     (unsigned long)need);
  if (need > NIF_DIRTY_BYTES && nif_on_normal_scheduler())
    return nif_reschedule_dirty(c);
  return nif_ok_tensor(c,
                       emlx_from_blob(a[0].bin.data, a[2].dtype, a[1].ints, a[1].n, a[3].device));
}

static bool int_like(emlx_dtype d) { return d == EMLX_BOOL || emlx_dtype_is_integer(d); }

/* A 0-d array of dtype holding s, exact for every integer dtype. */
static emlx_array *make_scalar(const nif_scalar *s, emlx_dtype dtype, emlx_device dev) {
  switch (s->kind) {
  case NIF_SCALAR_INT:
    return int_like(dtype) ? emlx_scalar_tensor_int(s->i, dtype, dev)
                           : emlx_scalar_tensor(s->f, dtype, dev);
  case NIF_SCALAR_UINT:
    return int_like(dtype) ? emlx_scalar_tensor_int((int64_t)s->u, dtype, dev)
                           : emlx_scalar_tensor(s->f, dtype, dev);
  case NIF_SCALAR_FLOAT:
    return emlx_scalar_tensor(s->f, dtype, dev);
  case NIF_SCALAR_COMPLEX: {
    /* complex128 keeps the parts' doubles; others go through complex64. */
    emlx_array *z = dtype == EMLX_COMPLEX128
                        ? emlx_scalar_tensor_complex128(s->f, s->im, dev)
                        : emlx_scalar_tensor_complex((float)s->f, (float)s->im, dev);
    if (!z || dtype == EMLX_COMPLEX64 || dtype == EMLX_COMPLEX128)
      return z;
    emlx_array *r = emlx_astype(z, dtype);
    emlx_release(z);
    return r;
  }
  }
  return NULL;
}

NIF_HANDLER(h_scalar_tensor) {
  return nif_ok_tensor(c, make_scalar(&a[0].scalar, a[1].dtype, a[2].device));
}

NIF_HANDLER(h_full) {
  const nif_scalar *s = &a[0].scalar;
  const int64_t exact = (int64_t)1 << 53;
  bool as_double = s->kind == NIF_SCALAR_FLOAT ||
                   (s->kind == NIF_SCALAR_INT && s->i <= exact && s->i >= -exact) ||
                   (s->kind == NIF_SCALAR_UINT && s->u <= (uint64_t)exact);
  if (as_double)
    return nif_ok_tensor(c, emlx_full(a[1].ints, a[1].n, s->f, a[2].dtype, a[3].device));
  emlx_array *value = make_scalar(s, a[2].dtype, a[3].device);
  if (!value)
    return nif_engine_error(c);
  emlx_array *out = emlx_full_array(a[1].ints, a[1].n, value, a[2].dtype);
  emlx_release(value);
  return nif_ok_tensor(c, out);
}

NIF_HANDLER(h_ones) {
  return nif_ok_tensor(c, emlx_ones(a[0].ints, a[0].n, a[1].dtype, a[2].device));
}

NIF_HANDLER(h_arange) {
  return nif_ok_tensor(c, emlx_arange(a[0].f, a[1].f, a[2].f, a[3].dtype, a[4].device));
}

NIF_HANDLER(h_eye) {
  return nif_ok_tensor(c, emlx_eye(a[0].i, a[1].i, 0, a[2].dtype, a[3].device));
}

/* ---- elementwise ---------------------------------------------------------------- */

#define UNARY(handler, fn)                                                                         \
  NIF_HANDLER(handler) { return nif_ok_tensor(c, fn(a[0].array)); }
#define BINARY(handler, fn)                                                                        \
  NIF_HANDLER(handler) { return nif_ok_tensor(c, fn(a[0].array, a[1].array)); }

BINARY(h_add, emlx_add)
BINARY(h_subtract, emlx_subtract)
BINARY(h_multiply, emlx_multiply)
BINARY(h_divide, emlx_divide)
UNARY(h_negate, emlx_negate)
UNARY(h_exp, emlx_exp)
UNARY(h_copy, emlx_copy)

NIF_HANDLER(h_astype) { return nif_ok_tensor(c, emlx_astype(a[0].array, a[1].dtype)); }

/* ---- shape ---------------------------------------------------------------------- */

NIF_HANDLER(h_broadcast_to) {
  return nif_ok_tensor(c, emlx_broadcast_to(a[0].array, a[1].ints, a[1].n));
}

NIF_HANDLER(h_reshape) { return nif_ok_tensor(c, emlx_reshape(a[0].array, a[1].ints, a[1].n)); }

NIF_HANDLER(h_transpose) {
  return nif_ok_tensor(c, emlx_transpose(a[0].array, AXES(a[1]), NAXES(a[1])));
}

NIF_HANDLER(h_squeeze) {
  return nif_ok_tensor(c, emlx_squeeze(a[0].array, AXES(a[1]), NAXES(a[1])));
}

NIF_HANDLER(h_slice) {
  if (a[1].n != a[2].n || a[1].n != a[3].n)
    return nif_error(c, "starts, stops and strides must have one entry per axis (got %d, %d, %d)",
                     a[1].n, a[2].n, a[3].n);
  return nif_ok_tensor(c, emlx_slice(a[0].array, a[1].ints, a[2].ints, a[3].ints, a[1].n));
}

/* ---- metadata ----------------------------------------------------------------------- */

NIF_HANDLER(h_shape) {
  int nd = emlx_ndim(a[0].array);
  const int64_t *shape = emlx_shape(a[0].array);
  ERL_NIF_TERM dims[EMLX_MAX_NDIM];
  for (int i = 0; i < nd; i++)
    dims[i] = enif_make_int64(c->env, shape[i]);
  return nif_ok(c, enif_make_tuple_from_array(c->env, dims, (unsigned)nd));
}

NIF_HANDLER(h_scalar_type) {
  return nif_ok(c, nif_dtype_term(c->env, emlx_array_dtype(a[0].array)));
}

NIF_HANDLER(h_deallocate) {
  (void)c;
  return nif_tensor_deallocate(a[0].tensor) ? nif_atom.ok : nif_atom.already_deallocated;
}
