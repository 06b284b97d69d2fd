/* bits.h — private to the bit-counting kernels (count_leading_zeros,
 * population_count): the per-ISA table of inner loops, the resolver the
 * elementwise kernel and the fused interpreter call, and the family's rows
 * of the CPU backend's table.
 *
 * Loops follow isa.h's contract (contiguous output; input strides in
 * elements, maybe 0 or negative; n may be 0). They are indexed by element
 * width (0: 8 bits ... 3: 64 bits): a signed dtype runs the unsigned loop
 * of its width, since both ops only look at the bits. */
#ifndef EMLX_CPU_BITS_H
#define EMLX_CPU_BITS_H

#include "cpu.h"

enum { EMLX_BITS_CLZ, EMLX_BITS_POPCOUNT, EMLX_BITS_OP_COUNT };

typedef struct emlx_cpu_bits_table {
  emlx_cpu_unary_loop loop[EMLX_BITS_OP_COUNT][4]; /* [op][log2 of bytes] */
} emlx_cpu_bits_table;

/* bits_scalar.c, bits_avx2.c: the portable body at each level;
 * bits_avx512.c: AVX-512 VPOPCNTDQ/BITALG/CD loops, used only where the CPU
 * has those extensions (the avx2 table runs otherwise). */
extern const emlx_cpu_bits_table emlx_cpu_bits_scalar, emlx_cpu_bits_avx2, emlx_cpu_bits_avx512;

/* The table for this process's ISA level (isa.c) and CPU. */
const emlx_cpu_bits_table *emlx_cpu_bits_get(void);

/* emlx_cpu_ew_resolve for COUNT_LEADING_ZEROS and POPULATION_COUNT: one
 * integer input of the output's dtype. */
int emlx_cpu_bits_ew_resolve(emlx_prim prim, const emlx_dtype *in, int nin, emlx_dtype out,
                             emlx_cpu_ew_loop *loop);

/* Designated initialisers for backend.c's table. */
#define EMLX_CPU_BITS_KERNELS                                                                      \
  [EMLX_PRIM_COUNT_LEADING_ZEROS] = emlx_cpu_elementwise,                                          \
  [EMLX_PRIM_POPULATION_COUNT] = emlx_cpu_elementwise,

#endif
