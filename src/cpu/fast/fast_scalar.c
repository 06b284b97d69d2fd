/* fast_scalar.c — the fused transformer kernels' inner loops (fast_body.h)
 * compiled for the scalar level; see fast_isa.h. */
#include "simd/vec_scalar.h"

/* s[i], c[i] = sin, cos of x[i] (SLEEF, <= 3.5 ulp in double, as the
 * vector units) */
static void fb_sincos_f64(const double *x, int64_t n, double *s, double *c) {
  for (int64_t i = 0; i < n; i++) {
    Sleef_double2 r = Sleef_sincos_u35(x[i]);
    s[i] = r.x;
    c[i] = r.y;
  }
}

#include "fast_body.h"
