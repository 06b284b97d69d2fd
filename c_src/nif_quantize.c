/* nif_quantize.c — the handlers of the quantize rows (emlx/quantize.h).
 *
 * Modes travel as strings ("affine", "mxfp4", "mxfp8", "nvfp4"); group_size
 * and bits of 0 take the mode's defaults. quantize answers {:ok, {wq,
 * scales, biases}} with biases nil for the microscaled modes. */
#include "emlx_nif.h"

/* The mode of argument k, or -1 after filling *err with the engine's message. */
static int mode_arg(nif_call *c, const nif_arg *a, int k, ERL_NIF_TERM *err) {
  emlx_quantization_mode m;
  if (emlx_quantization_mode_parse(a[k].str, &m) != 0) {
    *err = nif_engine_error(c);
    return -1;
  }
  return (int)m;
}

static int int_arg(const nif_arg *a, int k) {
  int64_t v = a[k].i;
  return v < -1000000 || v > 1000000 ? -1 : (int)v; /* out of range: refused by the engine */
}

/* quantize(w, group_size, bits, mode) -> {wq, scales, biases | nil} */
NIF_HANDLER(h_quantize) {
  ERL_NIF_TERM err = 0;
  int mode = mode_arg(c, a, 3, &err);
  if (mode < 0)
    return err;
  emlx_array *q = NULL, *s = NULL, *b = NULL;
  if (emlx_quantize(a[0].array, int_arg(a, 1), int_arg(a, 2), (emlx_quantization_mode)mode, &q, &s,
                    &b) != 0)
    return nif_engine_error(c);
  emlx_array *arrs[3] = {q, s, b};
  ERL_NIF_TERM items[3];
  for (int i = 0; i < 3; i++) {
    if (!arrs[i]) {
      items[i] = nif_atom.nil;
      continue;
    }
    int ok;
    items[i] = nif_make_tensor(c->env, arrs[i], &ok);
    if (!ok) {
      for (int j = i + 1; j < 3; j++)
        emlx_release(arrs[j]);
      return nif_error(c, "out of memory for the tensor resource");
    }
  }
  return nif_ok(c, enif_make_tuple_from_array(c->env, items, 3));
}

/* dequantize(w, scales, biases | nil, group_size, bits, mode) */
NIF_HANDLER(h_dequantize) {
  ERL_NIF_TERM err = 0;
  int mode = mode_arg(c, a, 5, &err);
  if (mode < 0)
    return err;
  return nif_ok_tensor(c, emlx_dequantize(a[0].array, a[1].array, a[2].array, int_arg(a, 3),
                                          int_arg(a, 4), (emlx_quantization_mode)mode));
}

/* quantized_matmul(x, w, scales, biases | nil, transpose, group_size, bits, mode) */
NIF_HANDLER(h_quantized_matmul) {
  ERL_NIF_TERM err = 0;
  int mode = mode_arg(c, a, 7, &err);
  if (mode < 0)
    return err;
  return nif_ok_tensor(c, emlx_quantized_matmul(a[0].array, a[1].array, a[2].array, a[3].array,
                                                a[4].b, int_arg(a, 5), int_arg(a, 6),
                                                (emlx_quantization_mode)mode));
}

/* gather_qmm(x, w, scales, biases | nil, lhs | nil, rhs | nil, transpose, group_size, bits,
 * mode, sorted_indices) */
NIF_HANDLER(h_gather_qmm) {
  ERL_NIF_TERM err = 0;
  int mode = mode_arg(c, a, 9, &err);
  if (mode < 0)
    return err;
  return nif_ok_tensor(c, emlx_gather_qmm(a[0].array, a[1].array, a[2].array, a[3].array,
                                          a[4].array, a[5].array, a[6].b, int_arg(a, 7),
                                          int_arg(a, 8), (emlx_quantization_mode)mode, a[10].b));
}
