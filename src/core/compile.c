/* compile.c — programs: a traced graph, simplified, fused and replayed.
 *
 * emlx_compile
 * 1. makes one placeholder array per input template (a lazy array whose
 *    node, EMLX_PRIM_PLACEHOLDER, has no kernel) and calls the trace
 *    function, which builds its outputs with ordinary ops;
 * 2. walks the graph from the outputs (inputs first) and evaluates at once
 *    every node that does not depend on a placeholder: those become
 *    constants the program holds;
 * 3. numbers the values (inputs, constants, node outputs) and simplifies in
 *    dependency order: a no-op (astype to the same dtype, copy, reshape or
 *    broadcast to the same shape, identity transpose) becomes its input; a
 *    node equal to an earlier one (prim, params, input values, output dtypes
 *    and shapes) becomes that node; scalar constants of equal dtype and
 *    bytes become one;
 * 4. groups the remaining nodes into fused regions (fuse_partition.c's rule) and
 *    takes their plans from the plan cache; every other node is a kernel
 *    step that keeps a copy of its node's prim and params;
 * 5. records, per step, the values that die after it (their last use).
 *
 * emlx_program_run holds the inputs and constants, runs the steps in order
 * on arrays that belong to no graph, frees each intermediate after its last
 * use and lets a step's kernel take over the buffer of an input that dies
 * with it (the kernels' own donation rule, which needs the value's only
 * reference). The program itself is never modified by a run.
 *
 * This file holds the driver and the program's lifetime; steps 2-3 are
 * compile_simplify.c's, 4-5 compile_plan.c's, the run compile_run.c's
 * (shared structures: program.h). */
#include "params_control.h"
#include "program.h"

/* ---- the program ------------------------------------------------------------------ */

static void program_free(emlx_program *p) {
  if (!p)
    return;
  for (size_t i = 0; i < p->nsteps; i++) {
    step *s = &p->steps[i];
    if (s->proto)
      emlx__params_release(s->proto->prim, s->proto->params);
    free(s->proto);
    emlx__fuse_plan_release(s->plan);
    emlx_release(s->like);
    free(s->in);
    free(s->out);
    free(s->die);
    free(s->die_in);
  }
  for (size_t v = 0; v < p->nvalues; v++) {
    emlx_release(p->vals[v].fixed);
    free(p->vals[v].shape);
  }
  free(p->vals);
  free(p->steps);
  free(p->out_ids);
  free(p);
}

emlx_program *emlx_program_retain(emlx_program *p) {
  if (p)
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
  return p;
}

void emlx_program_release(emlx_program *p) {
  if (p && atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1)
    program_free(p);
}

int emlx_program_get_info(const emlx_program *p, emlx_program_info *info) {
  if (!p || !info)
    return EMLX_FAIL("program_get_info: %s is NULL", p ? "info" : "program");
  *info = p->info;
  return 0;
}

/* A new value of the program; -1 out of memory. */
int emlx__compile_add_value(emlx_program *p, size_t *cap, emlx_dtype dtype, int ndim,
                            const int64_t *shape, emlx_array *fixed) {
  if (GROW(p->vals, p->nvalues, *cap) != 0)
    return -1;
  value_info *v = &p->vals[p->nvalues];
  memset(v, 0, sizeof *v);
  v->dtype = dtype;
  v->ndim = ndim;
  v->producer = -1;
  v->shape = malloc((size_t)(ndim ? ndim : 1) * sizeof(int64_t));
  if (!v->shape)
    return -1;
  if (ndim)
    memcpy(v->shape, shape, (size_t)ndim * sizeof(int64_t));
  v->fixed = fixed ? emlx_retain(fixed) : NULL;
  return (int)p->nvalues++;
}

/* The element-operations of one run, as emlx_eval_within counts them: each
 * step's kernel estimate (emlx__kernel_work: what it reads and writes,
 * matmul's inner products, control flow's programs; a loop is unbounded); a
 * fused region as the reads and writes of its inputs and outputs. */
static int64_t sat_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

static int64_t value_size(const value_info *v) {
  int64_t size = 1;
  for (int d = 0; d < v->ndim; d++)
    size = v->shape[d] && size > INT64_MAX / v->shape[d] ? INT64_MAX : size * v->shape[d];
  return size;
}

static int64_t program_work(const emlx_program *p) {
  int64_t w = 0;
  for (size_t i = 0; i < p->nsteps; i++) {
    const step *s = &p->steps[i];
    int64_t in = 0, out = 0, widest = 1, in0_last = 1, in1_size = 1;
    for (int k = 0; k < s->nin; k++) {
      const value_info *v = &p->vals[s->in[k]];
      int64_t last = v->ndim > 0 ? v->shape[v->ndim - 1] : 1;
      in = sat_add(in, value_size(v));
      widest = last > widest ? last : widest;
      if (k == 0)
        in0_last = last;
      if (k == 1)
        in1_size = value_size(v);
    }
    for (int k = 0; k < s->nout; k++)
      out = sat_add(out, value_size(&p->vals[s->out[k]]));
    w = sat_add(w, s->kind == STEP_KERNEL ? emlx__kernel_work(s->proto->prim, s->proto->params, in,
                                                               widest, in0_last, in1_size, out)
                                          : sat_add(in, out));
  }
  return w;
}

/* ---- compiling ---------------------------------------------------------------------- */

static int check_template(const emlx_template *t, size_t i) {
  if (!emlx_dtype_is_valid(t->dtype))
    return EMLX_FAIL("compile: input %zu has an invalid dtype", i);
  if (t->ndim < 0 || t->ndim > EMLX_MAX_NDIM)
    return EMLX_FAIL("compile: input %zu has rank %d (0..%d)", i, t->ndim, EMLX_MAX_NDIM);
  if (t->ndim > 0 && !t->shape)
    return EMLX_FAIL("compile: input %zu has rank %d and a NULL shape", i, t->ndim);
  for (int d = 0; d < t->ndim; d++)
    if (t->shape[d] < 0)
      return EMLX_FAIL("compile: input %zu has a negative dim", i);
  return 0;
}

emlx_program *emlx_compile(emlx_trace_fn fn, void *ctx, const emlx_template *inputs, size_t ninputs,
                           size_t noutputs) {
  if (!fn)
    return EMLX_FAIL_NULL("compile: the trace function is NULL");
  if (ninputs > 0 && !inputs)
    return EMLX_FAIL_NULL("compile: the template list is NULL");
  if (noutputs == 0 || noutputs > (1u << 20) || ninputs > (1u << 20))
    return EMLX_FAIL_NULL("compile: expects 1 to 2^20 outputs and at most 2^20 inputs");
  for (size_t i = 0; i < ninputs; i++)
    if (check_template(&inputs[i], i) != 0)
      return NULL;

  emlx_program *p = calloc(1, sizeof *p);
  emlx_array **ph = calloc(ninputs ? ninputs : 1, sizeof *ph);
  emlx_array **outs = calloc(noutputs, sizeof *outs);
  unsigned char *is_output = NULL;
  compiler c = {0};
  c.p = p;
  bool ok = p && ph && outs;
  if (!ok)
    emlx__set_error("compile: out of memory");
  if (p) {
    atomic_init(&p->refs, 1);
    p->ninputs = ninputs;
    p->noutputs = noutputs;
    p->info.ninputs = ninputs;
    p->info.noutputs = noutputs;
  }
  /* 1. placeholders and the trace */
  for (size_t i = 0; ok && i < ninputs; i++) {
    const int64_t *shape = inputs[i].shape;
    int ndim = inputs[i].ndim;
    int32_t evaluated = 0; /* set by eval if the trace tries to evaluate it */
    ph[i] = emlx__node_make(EMLX_PRIM_PLACEHOLDER, NULL, 0, &evaluated, sizeof evaluated, 1,
                            &inputs[i].dtype, &shape, &ndim, EMLX_CPU, NULL);
    ok = ph[i] &&
         emlx__compile_add_value(p, &c.capvals, inputs[i].dtype, ndim, shape, NULL) == (int)i &&
         emlx__compile_set_alias(&c, (int)i, (int)i) == 0 &&
         emlx__ptrmap_put(&c.arr_value, ph[i], (int)i) >= 0;
  }
  if (ok) {
    emlx_clear_error();
    int frc = fn(ctx, ph, ninputs, outs, noutputs);
    if (frc != 0) {
      const char *msg = emlx_last_error();
      if (!msg[0])
        emlx__set_error("compile: the trace function failed (status %d)", frc);
      ok = false;
    }
    for (size_t i = 0; ok && i < ninputs; i++)
      if (__atomic_load_n((int32_t *)(void *)ph[i]->node->params, __ATOMIC_RELAXED)) {
        emlx__set_error("compile: the trace tried to evaluate a value derived from input %zu "
                        "(values of a trace must stay lazy)",
                        i);
        ok = false;
      }
    for (size_t i = 0; ok && i < noutputs; i++) {
      if (!outs[i]) {
        emlx__set_error("compile: the trace function returned NULL for output %zu", i);
        ok = false;
      } else if (outs[i]->device != EMLX_CPU) {
        emlx__set_error("compile: output %zu is not on the cpu", i);
        ok = false;
      }
    }
  }
  /* 2. the graph, and its constant part evaluated now */
  /* held: evaluating the constants frees what only they read */
  ok = ok && emlx__walk_lazy(outs, noutputs, &c.order, &c.norder) == 0;
  emlx_ptrmap dep = {0};
  if (ok) {
    emlx_array **consts = NULL;
    size_t nconsts = 0, capconsts = 0;
    for (size_t i = 0; ok && i < c.norder; i++) {
      emlx_node *n = c.order[i]->node;
      if (n->prim == EMLX_PRIM_PLACEHOLDER)
        continue;
      p->info.traced_ops++;
      if (emlx__compile_depends_on_placeholder(n, &dep)) {
        ok = emlx__ptrmap_put(&dep, n, 1) >= 0;
      } else if (GROW(consts, nconsts, capconsts) != 0) {
        ok = false;
      } else {
        consts[nconsts++] = c.order[i];
      }
    }
    if (!ok)
      emlx__set_error("compile: out of memory");
    else if (nconsts && emlx_eval(consts, nconsts) != 0)
      ok = false;
    free(consts);
  }
  /* 3. values, simplified */
  if (ok) {
    for (size_t i = 0; ok && i < noutputs; i++) /* outputs that are constants */
      if (emlx__ready(outs[i]))
        ok = emlx__compile_constant_value(&c, outs[i]) >= 0;
    ok = ok && emlx__compile_number_nodes(&c) == 0;
    if (!ok && !emlx_last_error()[0])
      emlx__set_error("compile: out of memory");
  }
  if (ok) {
    p->out_ids = malloc(noutputs * sizeof(int));
    is_output = calloc(p->nvalues ? p->nvalues : 1, 1);
    ok = p->out_ids && is_output;
    for (size_t i = 0; ok && i < noutputs; i++) {
      int v = emlx__ready(outs[i]) ? emlx__compile_constant_value(&c, outs[i])
                                   : emlx__compile_value_of(&c, outs[i]);
      ok = v >= 0;
      if (ok) {
        p->out_ids[i] = v;
        is_output[v] = 1;
      }
    }
    /* 4. steps, 5. lifetimes */
    ok = ok && emlx__compile_build_steps(&c, is_output) == 0 &&
         emlx__compile_plan_lifetimes(p, is_output) == 0;
    if (!ok)
      emlx__set_error("compile: out of memory");
    else {
      p->info.steps = p->nsteps;
      p->info.work = program_work(p);
    }
  }

  emlx__ptrmap_free(&dep);
  for (size_t j = 0; j < c.ncn; j++) {
    free(c.cn[j].in);
    free(c.cn[j].out);
  }
  free(c.cn);
  for (size_t i = 0; i < c.norder; i++)
    emlx_release(c.order[i]);
  free(c.order);
  free(c.alias);
  htab_free(&c.cse);
  htab_free(&c.scalars);
  emlx__ptrmap_free(&c.arr_value);
  free(is_output);
  if (outs)
    for (size_t i = 0; i < noutputs; i++)
      emlx_release(outs[i]);
  if (ph)
    for (size_t i = 0; i < ninputs; i++)
      emlx_release(ph[i]);
  free(outs);
  free(ph);
  if (!ok) {
    program_free(p);
    return NULL;
  }
  return p;
}
