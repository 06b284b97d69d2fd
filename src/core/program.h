/* program.h — private to the compiler of programs: the program's steps and
 * values, the compiler's state, and what its four files give each other.
 *
 *   compile.c          emlx_compile (the driver: trace, then the passes) and
 *                      the program's lifetime;
 *   compile_simplify.c the walk of the traced graph into numbered values:
 *                      constants, no-ops, common subexpressions, scalars;
 *   compile_plan.c     the steps (kernels and fused regions) and the values
 *                      that die after each;
 *   compile_run.c      emlx_program_run. */
#ifndef EMLX_CORE_PROGRAM_H
#define EMLX_CORE_PROGRAM_H

#include <stdlib.h>
#include <string.h>

#include "fuse.h"
#include "ptrmap.h"

enum {
  STEP_KERNEL,       /* one node's kernel */
  STEP_FUSED,        /* a fused region */
  STEP_FUSED_REDUCE, /* a reduction fed directly by a fused region's one output */
};

typedef struct step {
  int kind;
  emlx_node *proto;     /* KERNEL, FUSED_REDUCE: prim, params, counts; no inputs or outputs */
  emlx_fuse_plan *plan; /* FUSED, FUSED_REDUCE */
  emlx_array *like;     /* FUSED_REDUCE: the region's output (shape and dtype, no data) */
  int nin, nout, ndie, ndie_in;
  int *in;     /* value ids */
  int *out;    /* value ids of the results */
  int *die;    /* values freed after this step */
  int *die_in; /* program inputs read here for the last time (freed after this step
                  only by a run that owns its inputs: emlx__program_run_owned) */
} step;

typedef struct value_info {
  emlx_dtype dtype;
  int ndim;
  int64_t *shape;
  emlx_array *fixed; /* inputs: NULL; constants: the array */
  bool absent;       /* an output of a multi-output node that the trace released:
                        its kernel gets NULL for it (and computes it in scratch) */
  int producer;      /* candidate node (during compile) or -1 */
} value_info;

struct emlx_program {
  _Atomic long refs;
  size_t ninputs, noutputs, nvalues, nsteps;
  value_info *vals;
  step *steps;
  int *out_ids;
  emlx_program_info info;
};

/* ---- small containers ------------------------------------------------------- */

static inline void *realloc_or_free(void *p, size_t bytes) {
  void *q = realloc(p, bytes);
  if (!q)
    free(p);
  return q;
}

#define GROW(arr, n, cap)                                                                          \
  ((n) < (cap) ? 0                                                                                 \
               : ((cap) = (cap) ? (cap)*2 : 64,                                                    \
                  (arr) = realloc_or_free((arr), (cap) * sizeof *(arr)), (arr) ? 0 : -1))

/* A multimap from 64-bit hashes to indices (open addressing); lookups walk
 * the slots of a hash and compare the entries themselves. */
typedef struct htab {
  uint64_t *key;
  int *idx; /* index + 1; 0 empty */
  size_t cap, n;
} htab;

static inline void htab_free(htab *t) {
  free(t->key);
  free(t->idx);
}

typedef struct cnode { /* a traced node kept as a candidate step */
  emlx_node *node;
  int nin;
  int *in;  /* value ids (canonical) */
  int *out; /* value ids, one per node output */
  bool fusable;
} cnode;

typedef struct compiler {
  emlx_program *p;
  size_t capvals;
  emlx_ptrmap arr_value; /* traced array -> value id */
  emlx_array **order;    /* emlx__walk_lazy's: the lazy arrays, inputs first */
  size_t norder;
  cnode *cn;
  size_t ncn, capcn;
  int *alias; /* value id -> canonical value id */
  size_t capalias;
  htab cse;     /* candidates by structural hash, for common subexpressions */
  htab scalars; /* canonical scalar constants by dtype, shape and bytes */
} compiler;

/* ---- compile_run.c ------------------------------------------------------------ */
/* emlx_program_run taking over the inputs (one reference each, released
 * whatever happens): an input the program reads for the last time may lend
 * its buffer to the kernel reading it (the loop state of control_flow.c). */
int emlx__program_run_owned(const emlx_program *p, emlx_array **inputs, size_t ninputs,
                            emlx_array **outputs, size_t noutputs);

/* ---- compile.c ---------------------------------------------------------------- */
/* A new value of the program; -1 out of memory. */
int emlx__compile_add_value(emlx_program *p, size_t *cap, emlx_dtype dtype, int ndim,
                            const int64_t *shape, emlx_array *fixed);

/* ---- compile_simplify.c ---------------------------------------------------------- */
/* Whether node n reads a placeholder or a node in dep (under n's lock). */
bool emlx__compile_depends_on_placeholder(emlx_node *n, const emlx_ptrmap *dep);
/* The canonical value id of a traced array (after walk and numbering). */
int emlx__compile_value_of(compiler *c, const emlx_array *a);
/* Value v stands for value `to` from now on; -1 out of memory. */
int emlx__compile_set_alias(compiler *c, int v, int to);
/* The value of a constant (an evaluated traced array), merged with an
 * equal scalar constant; -1 out of memory. */
int emlx__compile_constant_value(compiler *c, emlx_array *a);
/* Numbers every node of c->order and simplifies (no-ops, common
 * subexpressions); 0 or -1 with an error. */
int emlx__compile_number_nodes(compiler *c);

/* ---- compile_plan.c -------------------------------------------------------------- */
/* Turns the candidates into the program's steps (fused regions and
 * kernels); 0 or -1 with an error. */
int emlx__compile_build_steps(compiler *c, const unsigned char *is_output);
/* Records per step the values that die after it; 0 or -1. */
int emlx__compile_plan_lifetimes(emlx_program *p, const unsigned char *is_output);

#endif
