/* attention_avx2.c — the attention tile loop (attention_body.h) compiled for
 * the avx2 level; see attention.h. */
#include "att_vec_avx2.h"

#include "attention_body.h"
