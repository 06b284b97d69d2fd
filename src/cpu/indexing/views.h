/* views.h — CPU kernels of the view primitives (views.c). */
#ifndef EMLX_CPU_VIEWS_H
#define EMLX_CPU_VIEWS_H

#include "internal.h"

int emlx_cpu_broadcast(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_reshape(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_transpose(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx_cpu_slice(const emlx_node *node, emlx_array *const *in, emlx_array *const *out);

/* Copies src (any strides) into dst's row-major buffer; shapes are equal. */
void emlx_cpu_copy_strided(emlx_array *dst, const emlx_array *src);

#endif
