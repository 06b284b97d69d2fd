/* params_conv.h — parameter structs of the window and convolution family
 * (WINDOW_REDUCE, WINDOW_SCATTER, CONV). Plain data, zero-initialised. */
#ifndef EMLX_PARAMS_CONV_H
#define EMLX_PARAMS_CONV_H

#include <stdint.h>

/* WINDOW_REDUCE (input a) and WINDOW_SCATTER (inputs a, source, init — all
 * of a's dtype, init of one element): op is an emlx_window_op (SCATTER: MAX
 * or MIN); per axis i of a, vals[5 * i + 0..4] are window, stride, padding
 * low, padding high, dilation. */
enum { EMLX_WIN_W, EMLX_WIN_S, EMLX_WIN_LO, EMLX_WIN_HI, EMLX_WIN_D, EMLX_WIN_NV };
typedef struct emlx_window_params {
  int32_t op;
  int32_t ndim;
  int64_t vals[];
} emlx_window_params;

/* CONV (inputs x (N, S..., C_in), w (C_out, K..., C_in / groups), one
 * dtype): per spatial axis i, vals[5 * i + 0..4] are stride, padding low,
 * padding high, kernel dilation, input dilation. */
enum { EMLX_CONV_S, EMLX_CONV_LO, EMLX_CONV_HI, EMLX_CONV_KD, EMLX_CONV_ID, EMLX_CONV_NV };
typedef struct emlx_conv_params {
  int32_t nspatial;
  int32_t flip;
  int64_t groups;
  int64_t batch_groups;
  int64_t vals[];
} emlx_conv_params;

#endif
