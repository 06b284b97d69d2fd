/* attention_avx512.c — the attention tile loop (attention_body.h) compiled for
 * the avx512 level; see attention.h. */
#include "att_vec_avx512.h"

#include "attention_body.h"
