/* matmul_compose.c — MLX's addmm as matmul plus one fused elementwise pass. */
#include "ops_util.h"

emlx_array *emlx_addmm(emlx_array *c, emlx_array *a, emlx_array *b, double alpha, double beta) {
  EMLX_CHECK_ARRAY(c, "addmm");
  EMLX_CHECK_ARRAY(a, "addmm");
  EMLX_CHECK_ARRAY(b, "addmm");
  emlx_array *p = emlx_matmul(a, b);
  if (!p)
    return NULL;
  emlx_dtype dt = p->dtype;
  emlx_array *ka = alpha != 1.0 ? emlx_scalar_tensor(alpha, dt, p->device) : NULL;
  emlx_array *pa = alpha != 1.0 ? (ka ? emlx_multiply(p, ka) : NULL) : emlx_retain(p);
  emlx_array *kb = beta != 1.0 ? emlx_scalar_tensor(beta, dt, p->device) : NULL;
  emlx_array *cb = beta != 1.0 ? (kb ? emlx_multiply(c, kb) : NULL) : emlx_retain(c);
  emlx_array *r = pa && cb ? emlx_add(pa, cb) : NULL;
  emlx_release(p);
  emlx_release(ka);
  emlx_release(pa);
  emlx_release(kb);
  emlx_release(cb);
  return r;
}
