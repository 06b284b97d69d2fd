/* backend.c — the CPU backend: one kernel per primitive.
 *
 * Designated initialisers cannot be checked for holes at compile time, so
 * the core primitives are listed here one by one, in enum order, and each
 * later family adds its rows through the EMLX_CPU_<FAMILY>_KERNELS macro of
 * its kernels_<family>.h. A slot left NULL is reported by eval as
 * unsupported on cpu. View primitives are views.c's. */
#include "bits/bits.h"
#include "cpu.h"
#include "kernels_conv.h"
#include "kernels_fft.h"
#include "kernels_fused.h"
#include "kernels_indexing.h"
#include "kernels_linalg.h"
#include "kernels_math.h"
#include "kernels_matmul.h"
#include "kernels_reduce.h"
#include "views.h"

const emlx_backend emlx_cpu_backend = {
    .name = "cpu",
    .kernels =
        {/* creation */
         [EMLX_PRIM_FULL] = emlx_cpu_full,
         [EMLX_PRIM_ARANGE] = emlx_cpu_arange,
         [EMLX_PRIM_EYE] = emlx_cpu_eye,
         /* elementwise unary */
         [EMLX_PRIM_NEGATE] = emlx_cpu_elementwise,
         [EMLX_PRIM_EXP] = emlx_cpu_elementwise,
         [EMLX_PRIM_ASTYPE] = emlx_cpu_elementwise,
         [EMLX_PRIM_COPY] = emlx_cpu_elementwise,
         /* elementwise binary */
         [EMLX_PRIM_ADD] = emlx_cpu_elementwise,
         [EMLX_PRIM_SUBTRACT] = emlx_cpu_elementwise,
         [EMLX_PRIM_MULTIPLY] = emlx_cpu_elementwise,
         [EMLX_PRIM_DIVIDE] = emlx_cpu_elementwise,
         /* views */
         [EMLX_PRIM_BROADCAST] = emlx_cpu_broadcast,
         [EMLX_PRIM_RESHAPE] = emlx_cpu_reshape,
         [EMLX_PRIM_TRANSPOSE] = emlx_cpu_transpose,
         [EMLX_PRIM_SLICE] = emlx_cpu_slice,
         /* reductions */
         [EMLX_PRIM_SUM] = emlx_cpu_reduce,
         [EMLX_PRIM_MAX] = emlx_cpu_reduce,
         /* the families */
         EMLX_CPU_MATH_KERNELS EMLX_CPU_REDUCE_KERNELS EMLX_CPU_INDEXING_KERNELS
             EMLX_CPU_CONV_KERNELS EMLX_CPU_MATMUL_KERNELS EMLX_CPU_LINALG_KERNELS
                 EMLX_CPU_FFT_KERNELS EMLX_CPU_BITS_KERNELS},
    .fuse_supports = emlx_cpu_fuse_supports,
    .fuse_compile = emlx_cpu_fuse_compile,
    .fuse_run = emlx_cpu_fuse_run,
    .fuse_free = emlx_cpu_fuse_free,
    .fuse_reduce = emlx_cpu_fuse_reduce,
};
