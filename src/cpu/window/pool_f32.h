/* pool_f32.h — the f32 max / min pooling folds of the AVX2 and AVX-512
 * levels (pool_avx2.c, pool_avx512.c; driver: window.c's channels driver).
 *
 * One call folds n taps of C channels each (tap k at p[k], contiguous) into
 * o: o[c] = best(o[c], p[0][c], ..., p[n-1][c]), where o starts at the
 * identity when first; best keeps a NaN tap and otherwise the larger (max)
 * or the smaller (min), the earlier value on ties — bit for bit the
 * channels driver's scalar rule. The accumulators stay in registers across
 * the taps. */
#ifndef EMLX_CPU_POOL_F32_H
#define EMLX_CPU_POOL_F32_H

#include <stdbool.h>
#include <stdint.h>

typedef void (*emlx_pool_fold_f32)(const float *const *p, int n, int64_t C, float *o, bool first,
                                   bool is_max);
void emlx_pool_fold_f32_avx2(const float *const *p, int n, int64_t C, float *o, bool first,
                             bool is_max);
void emlx_pool_fold_f32_avx512(const float *const *p, int n, int64_t C, float *o, bool first,
                               bool is_max);

#endif
