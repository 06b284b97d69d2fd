/* conv_wino_avx2.c — the Winograd transforms at AVX2 (conv_wino_body.h). */
#define WV 8
#define WINO_IN emlx_conv_wino_in_avx2
#define WINO_OUT emlx_conv_wino_out_avx2
#include "conv_wino_body.h"
