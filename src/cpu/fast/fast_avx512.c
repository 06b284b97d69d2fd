/* fast_avx512.c — the fused transformer kernels' inner loops (fast_body.h)
 * compiled for the avx512 level; see fast_isa.h. */
#include "simd/vec_avx512.h"

/* s[i], c[i] = sin, cos of x[i] (SLEEF, <= 3.5 ulp in double: rounded to
 * float32, as rope_angles does, the same as the exact values but within a
 * few ulp of double of a float32 midpoint, as with its 1-ulp variant, which
 * takes about 1.7x as long) */
static void fb_sincos_f64(const double *x, int64_t n, double *s, double *c) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    Sleef___m512d_2 r = Sleef_sincosd8_u35avx512f(_mm512_loadu_pd(x + i));
    _mm512_storeu_pd(s + i, r.x);
    _mm512_storeu_pd(c + i, r.y);
  }
  for (; i < n; i++) {
    Sleef_double2 r = Sleef_sincos_u35(x[i]);
    s[i] = r.x;
    c[i] = r.y;
  }
}

#include "fast_body.h"
