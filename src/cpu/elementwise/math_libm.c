/* math_libm.c — the float64 loops of the transcendental unary prims: the C
 * library's libm, one call per element, at every ISA level.
 *
 * Nx.BinaryBackend computes f64 with Erlang's :math, which is the platform
 * libm (glibc on Linux); its results are what Nx's doctests print. SLEEF's
 * f64 functions are 1 ulp and differ from glibc's in the last bit on a few
 * percent of inputs, so f64 calls libm and gives glibc's results bit for
 * bit. float32, float16 and bfloat16 keep the vectorised SLEEF loops
 * (simd/math_body_un.h); erf_inv (no libm function) and sqrt (exact) keep
 * theirs too. emlx_cpu_ew_resolve is the one place that selects these. */
#include <math.h>

#include "cpu.h"

#define LIBM_LOOP(NAME, FN)                                                                        \
  static void NAME(const void *pi, int64_t s, void *po, int64_t n) {                               \
    const double *a = (const double *)pi;                                                          \
    double *o = (double *)po;                                                                      \
    for (int64_t i = 0; i < n; i++)                                                                \
      o[i] = FN(a[i * s]);                                                                         \
  }

LIBM_LOOP(libm_exp, exp)
LIBM_LOOP(libm_expm1, expm1)
LIBM_LOOP(libm_log, log)
LIBM_LOOP(libm_log1p, log1p)
LIBM_LOOP(libm_sin, sin)
LIBM_LOOP(libm_cos, cos)
LIBM_LOOP(libm_tan, tan)
LIBM_LOOP(libm_asin, asin)
LIBM_LOOP(libm_acos, acos)
LIBM_LOOP(libm_atan, atan)
LIBM_LOOP(libm_sinh, sinh)
LIBM_LOOP(libm_cosh, cosh)
LIBM_LOOP(libm_tanh, tanh)
LIBM_LOOP(libm_asinh, asinh)
LIBM_LOOP(libm_acosh, acosh)
LIBM_LOOP(libm_atanh, atanh)
LIBM_LOOP(libm_erf, erf)
LIBM_LOOP(libm_erfc, erfc)

emlx_cpu_unary_loop emlx_cpu_libm_f64_loop(emlx_prim prim) {
  switch (prim) {
  case EMLX_PRIM_EXP:
    return libm_exp;
  case EMLX_PRIM_EXPM1:
    return libm_expm1;
  case EMLX_PRIM_LOG:
    return libm_log;
  case EMLX_PRIM_LOG1P:
    return libm_log1p;
  case EMLX_PRIM_SIN:
    return libm_sin;
  case EMLX_PRIM_COS:
    return libm_cos;
  case EMLX_PRIM_TAN:
    return libm_tan;
  case EMLX_PRIM_ASIN:
    return libm_asin;
  case EMLX_PRIM_ACOS:
    return libm_acos;
  case EMLX_PRIM_ATAN:
    return libm_atan;
  case EMLX_PRIM_SINH:
    return libm_sinh;
  case EMLX_PRIM_COSH:
    return libm_cosh;
  case EMLX_PRIM_TANH:
    return libm_tanh;
  case EMLX_PRIM_ASINH:
    return libm_asinh;
  case EMLX_PRIM_ACOSH:
    return libm_acosh;
  case EMLX_PRIM_ATANH:
    return libm_atanh;
  case EMLX_PRIM_ERF:
    return libm_erf;
  case EMLX_PRIM_ERFC:
    return libm_erfc;
  default:
    return NULL;
  }
}
