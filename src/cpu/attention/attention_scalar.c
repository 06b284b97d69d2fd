/* attention_scalar.c — the attention tile loop (attention_body.h) compiled for
 * the scalar level; see attention.h. */
#include "att_vec_scalar.h"

#include "attention_body.h"
