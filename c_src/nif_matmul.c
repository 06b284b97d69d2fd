/* nif_matmul.c — the handlers of the contraction rows: tensordot and einsum. */
#include "emlx_nif.h"

/* tensordot(a, b, axes_a, axes_b) contracts axes_a[i] with axes_b[i];
 * tensordot(a, b, axes_a, axes_b, batch_a, batch_b) also pairs batch axes
 * (Nx's dot/6): the result's axes are the batch axes, then a's and b's free
 * axes. */
NIF_HANDLER(h_tensordot) {
  if (a[2].n != a[3].n)
    return nif_error(c, "%d contracting axes given for a but %d for b", a[2].n, a[3].n);
  const int *batch_a = NULL, *batch_b = NULL;
  int nbatch = 0;
  if (c->argc == 6) {
    if (a[4].n != a[5].n)
      return nif_error(c, "%d batch axes given for a but %d for b", a[4].n, a[5].n);
    batch_a = a[4].axes;
    batch_b = a[5].axes;
    nbatch = a[4].n;
  }
  return nif_ok_tensor(c, emlx_tensordot(a[0].array, a[1].array, a[2].axes, a[3].axes, a[2].n,
                                         batch_a, batch_b, nbatch));
}

/* einsum([tensors], "ij,jk->ik") */
NIF_HANDLER(h_einsum) { return nif_ok_tensor(c, emlx_einsum(a[1].str, a[0].arrays, a[0].n)); }
