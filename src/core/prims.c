/* prims.c — the traits row of every primitive. */
#include "internal.h"

const emlx_prim_traits emlx_prim_table[EMLX_PRIM_COUNT] = {
    [EMLX_PRIM_FULL] = {"full", 0, EMLX_CLASS_CREATE},
    [EMLX_PRIM_ARANGE] = {"arange", 0, EMLX_CLASS_CREATE},
    [EMLX_PRIM_EYE] = {"eye", 0, EMLX_CLASS_CREATE},
    [EMLX_PRIM_NEGATE] = {"negate", 1, EMLX_CLASS_UNARY},
    [EMLX_PRIM_EXP] = {"exp", 1, EMLX_CLASS_UNARY},
    [EMLX_PRIM_ASTYPE] = {"astype", 1, EMLX_CLASS_UNARY},
    [EMLX_PRIM_COPY] = {"copy", 1, EMLX_CLASS_UNARY},
    [EMLX_PRIM_ADD] = {"add", 2, EMLX_CLASS_BINARY},
    [EMLX_PRIM_SUBTRACT] = {"subtract", 2, EMLX_CLASS_BINARY},
    [EMLX_PRIM_MULTIPLY] = {"multiply", 2, EMLX_CLASS_BINARY},
    [EMLX_PRIM_DIVIDE] = {"divide", 2, EMLX_CLASS_BINARY},
    [EMLX_PRIM_BROADCAST] = {"broadcast_to", 1, EMLX_CLASS_VIEW},
    [EMLX_PRIM_RESHAPE] = {"reshape", 1, EMLX_CLASS_VIEW},
    [EMLX_PRIM_TRANSPOSE] = {"transpose", 1, EMLX_CLASS_VIEW},
    [EMLX_PRIM_SLICE] = {"slice", 1, EMLX_CLASS_VIEW},
    [EMLX_PRIM_SUM] = {"sum", 1, EMLX_CLASS_REDUCE},
    [EMLX_PRIM_MAX] = {"max", 1, EMLX_CLASS_REDUCE},
};

_Static_assert(sizeof emlx_prim_table / sizeof emlx_prim_table[0] == EMLX_PRIM_COUNT,
               "every primitive needs a traits row");
