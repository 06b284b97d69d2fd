/* nif_fft.c — the handlers of the Fourier transform rows: fft, ifft, fft2,
 * ifft2 (emlx/fft.h). Lengths of 0 (or an empty list for fft2) keep the
 * axes' own lengths; the result is always {:c, 64}. */
#include "emlx_nif.h"

/* fft(tensor, n, axis) */
NIF_HANDLER(h_fft) {
  AXIS_ARG(axis, 2);
  return nif_ok_tensor(c, emlx_fft(a[0].array, a[1].i, axis));
}

NIF_HANDLER(h_ifft) {
  AXIS_ARG(axis, 2);
  return nif_ok_tensor(c, emlx_ifft(a[0].array, a[1].i, axis));
}

/* fft2(tensor, s, axes): s two lengths or []; axes two axes or nil (the
 * last two). */
static ERL_NIF_TERM fft2_common(nif_call *c, nif_arg *a, bool inverse) {
  if (a[1].n != 0 && a[1].n != 2)
    return nif_error(c, "argument 2: expected two lengths or [], got %d", a[1].n);
  if (a[2].present && a[2].n != 2)
    return nif_error(c, "argument 3: expected two axes or nil, got %d", a[2].n);
  const int64_t *s = a[1].n ? a[1].ints : NULL;
  const int *axes = a[2].present ? a[2].axes : NULL;
  return nif_ok_tensor(c,
                       inverse ? emlx_ifft2(a[0].array, s, axes) : emlx_fft2(a[0].array, s, axes));
}

NIF_HANDLER(h_fft2) { return fft2_common(c, a, false); }
NIF_HANDLER(h_ifft2) { return fft2_common(c, a, true); }
