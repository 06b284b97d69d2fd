/* params_control.h — parameters of WHILE and COND, the control-flow nodes
 * (constructors and kernels: src/core/control_flow.c).
 *
 * Unlike every other primitive's, these params hold pointers: references to
 * the sub-programs the node runs. Two nodes with the same programs, inputs
 * and counts compute the same thing, so comparing the pointers bytewise (CSE)
 * is right. The node owns one reference per program: taken when the node is
 * made or its params are copied (emlx__params_retain), dropped when the node
 * or the copy is freed (emlx__params_release). */
#ifndef EMLX_PARAMS_CONTROL_H
#define EMLX_PARAMS_CONTROL_H

#include <stdbool.h>
#include <stdint.h>

#include "emlx.h"
#include "prims.h"

typedef struct emlx_control_params {
  int32_t nclauses; /* COND: predicates (inputs 0..nclauses-1); WHILE: 0 */
  int32_t nops;     /* WHILE: state values; COND: operands (the inputs after the predicates) */
  int32_t nout;     /* outputs (WHILE: nops) */
  int32_t nprogs;   /* WHILE: 2 (cond, body); COND: nclauses + 1 (the last is the else) */
  emlx_program *progs[];
} emlx_control_params;

/* Whether prim's params hold program references. */
static inline bool emlx__prim_holds_programs(emlx_prim prim) {
  return prim == EMLX_PRIM_WHILE || prim == EMLX_PRIM_COND;
}

/* Takes / drops the references a copy of prim's params holds (no-ops for
 * every other primitive). */
void emlx__params_retain(emlx_prim prim, const void *params);
void emlx__params_release(emlx_prim prim, const void *params);

/* The element-operations estimate of one control-flow node beyond reading
 * its inputs and writing its outputs: INT64_MAX for a loop (unbounded), the
 * dearest branch for a cond. */
int64_t emlx__control_work(const void *params, emlx_prim prim);

/* The kernels (registered in src/cpu/backend.c). */
struct emlx_node;
int emlx__kernel_while(const struct emlx_node *node, emlx_array *const *in, emlx_array *const *out);
int emlx__kernel_cond(const struct emlx_node *node, emlx_array *const *in, emlx_array *const *out);

#endif
