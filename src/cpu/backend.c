/* backend.c — the CPU backend: one kernel per primitive.
 *
 * src/cpu/ holds one folder per kernel family (elementwise/, reduce/,
 * indexing/, window/, matmul/, linalg/, fft/), each with its generic code,
 * its per-ISA units (*_scalar.c, *_avx2.c, *_avx512.c) and a kernels.h that
 * says what the family holds; at the top are this table, cpu.h (what the
 * families share), isa.c / isa.h (the run-time ISA level), convert.h (scalar
 * dtype conversions) and simd/ (the thin vector layer every per-ISA unit
 * includes).
 *
 * Designated initialisers cannot be checked for holes at compile time, so
 * the core primitives are listed here one by one, in enum order, and each
 * family adds its rows through the EMLX_CPU_<FAMILY>_KERNELS macro of its
 * <family>/kernels.h. A slot left NULL is reported by eval as unsupported
 * on cpu. View primitives are indexing/views.c's. */
#include "cpu.h"
#include "attention/kernels.h"
#include "elementwise/bits.h"
#include "elementwise/kernels.h"
#include "elementwise/kernels_fused.h"
#include "fast/kernels.h"
#include "fft/kernels.h"
#include "indexing/kernels.h"
#include "indexing/views.h"
#include "linalg/kernels.h"
#include "matmul/kernels.h"
#include "reduce/kernels.h"
#include "window/kernels.h"

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
         /* the families */
         EMLX_CPU_ELEMENTWISE_KERNELS EMLX_CPU_REDUCE_KERNELS EMLX_CPU_INDEXING_KERNELS
             EMLX_CPU_WINDOW_KERNELS EMLX_CPU_MATMUL_KERNELS EMLX_CPU_LINALG_KERNELS
                 EMLX_CPU_FFT_KERNELS EMLX_CPU_BITS_KERNELS
                     EMLX_CPU_FAST_KERNELS EMLX_CPU_ATTENTION_KERNELS},
    .fuse_supports = emlx_cpu_fuse_supports,
    .fuse_compile = emlx_cpu_fuse_compile,
    .fuse_run = emlx_cpu_fuse_run,
    .fuse_free = emlx_cpu_fuse_free,
    .fuse_reduce = emlx_cpu_fuse_reduce,
};
