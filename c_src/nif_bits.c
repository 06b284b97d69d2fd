/* nif_bits.c — the handlers of the bit-counting ops (include/emlx/bits.h)
 * and of Nx's f8 and sub-byte types (include/emlx/nx_types.h):
 *   from_nx_blob(binary, shape, nx_type, dtype, device) decodes a packed Nx
 *     binary (whole bytes; EMLX pads bitstrings) into a tensor of dtype;
 *   nx_encode(binary, dtype, nx_type, flags) encodes a row-major binary of
 *     dtype (what to_blob returns) into Nx's packed bytes.
 * Binaries over NIF_DIRTY_BYTES are converted on a dirty scheduler. */
#include "emlx_nif.h"

NIF_HANDLER(h_count_leading_zeros) {
  return nif_ok_tensor(c, emlx_count_leading_zeros(a[0].array));
}
NIF_HANDLER(h_population_count) { return nif_ok_tensor(c, emlx_population_count(a[0].array)); }

static bool shape_count(const nif_arg *shape, int64_t *count) {
  int64_t n = 1;
  for (int i = 0; i < shape->n; i++)
    if (__builtin_mul_overflow(n, shape->ints[i], &n))
      return false;
  *count = n;
  return true;
}

NIF_HANDLER(h_from_nx_blob) {
  emlx_nx_type type;
  if (emlx_nx_type_from_name(a[2].str, &type) != 0)
    return nif_engine_error(c);
  int64_t count;
  if (!shape_count(&a[1], &count))
    return nif_error(c, "the shape %T is too large", a[1].term);
  if (a[0].bin.size > NIF_DIRTY_BYTES && nif_on_normal_scheduler())
    return nif_reschedule_dirty(c);
  return nif_ok_tensor(c, emlx_from_nx_blob(a[0].bin.data, a[0].bin.size, type, a[1].ints, a[1].n,
                                            a[3].dtype, a[4].device));
}

NIF_HANDLER(h_nx_encode) {
  emlx_nx_type type;
  if (emlx_nx_type_from_name(a[2].str, &type) != 0)
    return nif_engine_error(c);
  size_t esize = emlx_dtype_size(a[1].dtype);
  if (esize == 0 || a[0].bin.size % esize)
    return nif_error(c, "the binary has %lu bytes, not a whole number of %s elements",
                     (unsigned long)a[0].bin.size, emlx_dtype_name(a[1].dtype));
  if (a[3].i > 0xFFFF)
    return nif_error(c, "unknown flags %ld", (long)a[3].i);
  if (a[0].bin.size > NIF_DIRTY_BYTES && nif_on_normal_scheduler())
    return nif_reschedule_dirty(c);
  int64_t count = (int64_t)(a[0].bin.size / esize);
  size_t nbytes = emlx_nx_type_nbytes(type, count);
  ERL_NIF_TERM out;
  unsigned char *dst = enif_make_new_binary(c->env, nbytes, &out);
  if (!dst)
    return nif_error(c, "out of memory for a %lu-byte binary", (unsigned long)nbytes);
  if (emlx_nx_encode(type, a[1].dtype, a[0].bin.data, a[0].bin.size, count, dst, nbytes,
                     (unsigned)a[3].i) != 0)
    return nif_engine_error(c);
  return nif_ok(c, out);
}
