/* conv_wino_avx512.c — the Winograd transforms at AVX-512 (conv_wino_body.h). */
#define WV 16
#define WINO_IN emlx_conv_wino_in_avx512
#define WINO_OUT emlx_conv_wino_out_avx512
#include "conv_wino_body.h"
