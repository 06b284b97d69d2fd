/* fast_avx2.c — the fused transformer kernels' inner loops (fast_body.h)
 * compiled for the avx2 level; see fast_isa.h. */
#include "simd/vec_avx2.h"

/* s[i], c[i] = sin, cos of x[i] (SLEEF, <= 3.5 ulp in double: rounded to
 * float32, as rope_angles does, the same as the exact values but within a
 * few ulp of double of a float32 midpoint, as with its 1-ulp variant, which
 * takes about 1.7x as long) */
static void fb_sincos_f64(const double *x, int64_t n, double *s, double *c) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    Sleef___m256d_2 r = Sleef_sincosd4_u35avx2(_mm256_loadu_pd(x + i));
    _mm256_storeu_pd(s + i, r.x);
    _mm256_storeu_pd(c + i, r.y);
  }
  for (; i < n; i++) {
    Sleef_double2 r = Sleef_sincos_u35(x[i]);
    s[i] = r.x;
    c[i] = r.y;
  }
}

#include "fast_body.h"
