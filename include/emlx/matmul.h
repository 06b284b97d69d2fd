/* emlx/matmul.h — matmul, tensordot and einsum.
 *
 * Dtypes (all three ops): the operands are promoted with
 * emlx_promote_types() (MLX's lattice) and the result has the promoted
 * dtype. Every float dtype, complex64 and every integer dtype is accepted;
 * bool is an error (cast it first). MLX itself rejects integer matmul; we
 * accept it because Nx's dot/6 needs it: an integer product accumulates in
 * the output dtype and wraps modulo 2^bits, as Nx/XLA do. f16 and bf16
 * accumulate in f32 and round once at the end; f32, f64 and c64 go through
 * BLAS (OpenBLAS), whose summation order is its own.
 *
 * Layout: either operand may be any strided view; a transposed view (unit
 * stride along either of the last two axes) is consumed without a copy, and
 * broadcast batch axes (stride 0) are never materialised. */
#ifndef EMLX_MATMUL_H
#define EMLX_MATMUL_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NumPy/MLX matmul. a (..., M, K) times b (..., K, N) gives (..., M, N), the
 * batch axes broadcast against each other. A 1-D a is promoted to (1, K) and
 * a 1-D b to (K, 1); the added axis is removed from the result (so vector ·
 * vector gives a 0-d array). K = 0 gives zeros. Errors: NULL or 0-d
 * operands, mismatched K, batch axes that do not broadcast, bool operands,
 * different devices. */
EMLX_API emlx_array *emlx_matmul(emlx_array *a, emlx_array *b);

/* Generalised dot product (Nx's dot/6, XLA's dot_general). contract_a[i] of a
 * is contracted with contract_b[i] of b (ncontract pairs, equal sizes);
 * batch_a[i] of a is paired with batch_b[i] of b (nbatch pairs, equal sizes,
 * at any positions). The result's axes are the batch axes (in the order
 * listed), then a's remaining axes, then b's remaining axes, each in their
 * original order. With no contracting and no batch axes this is the outer
 * product. Axes may be negative. Errors: an axis out of range or listed
 * twice (across both lists of one operand), mismatched sizes, counts below
 * 0, NULL axis lists with a positive count, and the dtype errors of matmul. */
EMLX_API emlx_array *emlx_tensordot(emlx_array *a, emlx_array *b, const int *contract_a,
                                    const int *contract_b, int ncontract, const int *batch_a,
                                    const int *batch_b, int nbatch);

/* MLX's tensordot(a, b, axes=n): contracts the last n axes of a with the first
 * n axes of b, in order. */
EMLX_API emlx_array *emlx_tensordot_n(emlx_array *a, emlx_array *b, int n);

/* Einstein summation, MLX/NumPy syntax: "ij,jk->ik". Labels are ASCII
 * letters (case-sensitive); spaces are ignored; "..." stands for the
 * broadcast leading (or middle) axes of an operand. A label repeated within
 * one operand takes that operand's diagonal ("ii->i", trace "ii->"). Without
 * "->" the output is the ellipsis axes followed by the labels that occur
 * exactly once, in alphabetical order (upper case before lower case). With
 * "->", output labels must occur in the inputs and not repeat; ellipsis axes
 * left out of an explicit output are summed. A label of size 1 broadcasts
 * against the same label of another size (as MLX). Contraction order: labels
 * found in a single operand are summed first, then operands are contracted
 * pairwise, each time the pair whose result is smallest (greedy), through
 * matmul. The result is promoted as above. Errors: a malformed string, a term
 * count that differs from noperands, a term whose labels do not match the
 * operand's rank, sizes that disagree, an output label not in the inputs or
 * repeated, bool operands. */
EMLX_API emlx_array *emlx_einsum(const char *subscripts, emlx_array *const *operands,
                                 int noperands);

/* MLX's addmm: alpha * (a @ b) + beta * c (matmul's shapes and dtypes; c
 * broadcasts to the product's shape). */
EMLX_API emlx_array *emlx_addmm(emlx_array *c, emlx_array *a, emlx_array *b, double alpha,
                                double beta);

#ifdef __cplusplus
}
#endif
#endif
