/* control_flow.c — loops and branches as graph nodes whose kernels run
 * programs (include/emlx/compile.h: emlx_while, emlx_cond,
 * emlx_program_call).
 *
 * A WHILE or COND node is an ordinary multi-output node: its inputs are the
 * state (or the predicates and operands), its params the programs it runs
 * (params_control.h), its kernel registered in the cpu backend like any
 * other. So a plain eval runs it, a trace records it, emlx_compile makes it
 * one kernel step, and programs nest inside programs without the compiler
 * knowing.
 *
 * The loop's state: the first iteration reads the node's inputs (borrowed:
 * others may hold them); each later one hands the previous state to the body
 * by ownership (emlx__program_run_owned), so a state value that dies in the
 * body lends its buffer to the kernel that computes its successor, the
 * kernels' usual donation rule. The final state becomes the node's outputs
 * as views of its buffers (no copy). */
#include <stdio.h>

#include "params_control.h"
#include "program.h"

static _Atomic uint64_t g_while_max_iterations;

uint64_t emlx_set_while_max_iterations(uint64_t max) {
  return atomic_exchange_explicit(&g_while_max_iterations, max, memory_order_relaxed);
}

/* ---- params: references to programs ----------------------------------------------- */

void emlx__params_retain(emlx_prim prim, const void *params) {
  if (!emlx__prim_holds_programs(prim))
    return;
  const emlx_control_params *cp = params;
  for (int k = 0; k < cp->nprogs; k++)
    emlx_program_retain(cp->progs[k]);
}

void emlx__params_release(emlx_prim prim, const void *params) {
  if (!emlx__prim_holds_programs(prim))
    return;
  const emlx_control_params *cp = params;
  for (int k = 0; k < cp->nprogs; k++)
    emlx_program_release(cp->progs[k]);
}

int64_t emlx__control_work(const void *params, emlx_prim prim) {
  const emlx_control_params *cp = params;
  if (prim == EMLX_PRIM_WHILE)
    return INT64_MAX;
  int64_t w = 0;
  for (int k = 0; k < cp->nprogs; k++)
    if (cp->progs[k]->info.work > w)
      w = cp->progs[k]->info.work;
  return w;
}

/* ---- templates ----------------------------------------------------------------------- */

static int value_template(const emlx_program *p, int v, emlx_template *t) {
  const value_info *vi = &p->vals[v];
  t->dtype = vi->dtype;
  t->ndim = vi->ndim;
  t->shape = vi->shape;
  return 0;
}

int emlx_program_input_template(const emlx_program *p, size_t i, emlx_template *t) {
  if (!p || !t)
    return EMLX_FAIL("program_input_template: %s is NULL", p ? "template" : "program");
  if (i >= p->ninputs)
    return EMLX_FAIL("program_input_template: input %zu of %zu", i, p->ninputs);
  return value_template(p, (int)i, t);
}

int emlx_program_output_template(const emlx_program *p, size_t i, emlx_template *t) {
  if (!p || !t)
    return EMLX_FAIL("program_output_template: %s is NULL", p ? "template" : "program");
  if (i >= p->noutputs)
    return EMLX_FAIL("program_output_template: output %zu of %zu", i, p->noutputs);
  return value_template(p, p->out_ids[i], t);
}

static const value_info *in_info(const emlx_program *p, size_t i) { return &p->vals[i]; }
static const value_info *out_info(const emlx_program *p, size_t i) {
  return &p->vals[p->out_ids[i]];
}

static bool info_is(const value_info *vi, const emlx_array *a) {
  return vi->dtype == a->dtype && emlx__same_dims(vi->ndim, vi->shape, a->ndim, a->shape);
}

static bool infos_equal(const value_info *x, const value_info *y) {
  return x->dtype == y->dtype && emlx__same_dims(x->ndim, x->shape, y->ndim, y->shape);
}

/* Describes a template for messages: "float32[2,3]". */
static const char *describe(char *buf, size_t len, emlx_dtype dtype, int ndim,
                            const int64_t *shape) {
  int k = snprintf(buf, len, "%s[", emlx_dtype_name(dtype));
  for (int d = 0; d < ndim && k > 0 && (size_t)k < len; d++)
    k += snprintf(buf + k, len - (size_t)k, d ? ",%lld" : "%lld", (long long)shape[d]);
  if (k > 0 && (size_t)k < len)
    snprintf(buf + k, len - (size_t)k, "]");
  return buf;
}

/* p's n inputs fit the arrays; 0 or -1 with an error naming what. */
static int check_inputs(const char *what, const emlx_program *p, emlx_array *const *a, size_t n) {
  if (p->ninputs != n)
    return EMLX_FAIL("%s takes %zu inputs, given %zu values", what, p->ninputs, n);
  for (size_t i = 0; i < n; i++) {
    if (!a[i])
      return EMLX_FAIL("%s: value %zu is NULL", what, i);
    if (a[i]->device != EMLX_CPU)
      return EMLX_FAIL("%s: value %zu is not on the cpu", what, i);
    const value_info *t = in_info(p, i);
    if (!info_is(t, a[i])) {
      char x[128], y[128];
      return EMLX_FAIL("%s: input %zu is %s but the value is %s", what, i,
                       describe(x, sizeof x, t->dtype, t->ndim, t->shape),
                       describe(y, sizeof y, a[i]->dtype, a[i]->ndim, a[i]->shape));
    }
  }
  return 0;
}

static bool is_scalar_truth(emlx_dtype dtype, int ndim) {
  return ndim == 0 && !emlx_dtype_is_complex(dtype);
}

/* ---- nodes ------------------------------------------------------------------------------- */

/* A node of prim with the programs and inputs; out_tpl gives the outputs. */
static int make_node(emlx_prim prim, int32_t nclauses, int32_t nops, emlx_program *const *progs,
                     int nprogs, emlx_array *const *inputs, int ninputs,
                     const value_info *const *out_tpl, int nout, emlx_array **out) {
  size_t psize = sizeof(emlx_control_params) + (size_t)nprogs * sizeof(emlx_program *);
  emlx_control_params *cp = calloc(1, psize);
  emlx_dtype *dt = malloc((size_t)nout * sizeof *dt);
  const int64_t **shapes = malloc((size_t)nout * sizeof *shapes);
  int *ndims = malloc((size_t)nout * sizeof *ndims);
  if (!cp || !dt || !shapes || !ndims) {
    free(cp);
    free(dt);
    free(shapes);
    free(ndims);
    return EMLX_FAIL("%s: out of memory", emlx_prim_table[prim].name);
  }
  cp->nclauses = nclauses;
  cp->nops = nops;
  cp->nout = nout;
  cp->nprogs = nprogs;
  for (int k = 0; k < nprogs; k++)
    cp->progs[k] = progs[k];
  for (int o = 0; o < nout; o++) {
    dt[o] = out_tpl[o]->dtype;
    shapes[o] = out_tpl[o]->shape;
    ndims[o] = out_tpl[o]->ndim;
  }
  emlx_array *first = emlx__node_make(prim, inputs, ninputs, cp, psize, nout, dt, shapes, ndims,
                                      EMLX_CPU, nout > 1 ? out : NULL);
  if (first) {
    emlx__params_retain(prim, first->node->params);
    if (nout == 1)
      out[0] = first;
  }
  free(cp);
  free(dt);
  free(shapes);
  free(ndims);
  return first ? 0 : -1;
}

int emlx_while(const emlx_program *cond, const emlx_program *body, emlx_array *const *state,
               size_t n, emlx_array **out) {
  if (!cond || !body)
    return EMLX_FAIL("while: the %s program is NULL", cond ? "body" : "cond");
  if (!out || !state)
    return EMLX_FAIL("while: the %s list is NULL", out ? "state" : "output");
  if (n == 0 || n > (1u << 16))
    return EMLX_FAIL("while: expects 1 to 65536 state values (got %zu)", n);
  if (check_inputs("while: cond", cond, state, n) != 0 ||
      check_inputs("while: body", body, state, n) != 0)
    return -1;
  if (cond->noutputs != 1)
    return EMLX_FAIL("while: cond returns %zu values (expects one predicate)", cond->noutputs);
  const value_info *pv = out_info(cond, 0);
  if (!is_scalar_truth(pv->dtype, pv->ndim)) {
    char x[128];
    return EMLX_FAIL("while: cond returns %s (expects a rank-0 real or integer predicate)",
                     describe(x, sizeof x, pv->dtype, pv->ndim, pv->shape));
  }
  if (body->noutputs != n)
    return EMLX_FAIL("while: body returns %zu values for a state of %zu", body->noutputs, n);
  const value_info **tpl = malloc(n * sizeof *tpl);
  if (!tpl)
    return EMLX_FAIL("while: out of memory");
  for (size_t i = 0; i < n; i++) {
    const value_info *o = out_info(body, i);
    if (!info_is(o, state[i])) {
      char x[128], y[128];
      free(tpl);
      return EMLX_FAIL("while: body output %zu is %s but state value %zu is %s", i,
                       describe(x, sizeof x, o->dtype, o->ndim, o->shape), i,
                       describe(y, sizeof y, state[i]->dtype, state[i]->ndim, state[i]->shape));
    }
    tpl[i] = o;
  }
  emlx_program *progs[2] = {(emlx_program *)cond, (emlx_program *)body};
  int rc = make_node(EMLX_PRIM_WHILE, 0, (int32_t)n, progs, 2, state, (int)n, tpl, (int)n, out);
  free(tpl);
  return rc;
}

int emlx_cond(emlx_array *const *preds, size_t nclauses, const emlx_program *const *branches,
              emlx_array *const *operands, size_t nops, emlx_array **out, size_t nout) {
  if (!branches || !out || (nclauses && !preds) || (nops && !operands))
    return EMLX_FAIL("cond: the %s list is NULL", !branches              ? "branch"
                                                  : !out                 ? "output"
                                                  : (nclauses && !preds) ? "predicate"
                                                                         : "operand");
  if (nclauses > (1u << 16) || nops > (1u << 16) || nout == 0 || nout > (1u << 16))
    return EMLX_FAIL("cond: expects at most 65536 clauses and operands, 1 to 65536 outputs");
  for (size_t k = 0; k < nclauses; k++) {
    if (!preds[k])
      return EMLX_FAIL("cond: predicate %zu is NULL", k);
    if (preds[k]->device != EMLX_CPU)
      return EMLX_FAIL("cond: predicate %zu is not on the cpu", k);
    if (!is_scalar_truth(preds[k]->dtype, preds[k]->ndim)) {
      char x[128];
      return EMLX_FAIL("cond: predicate %zu is %s (expects a rank-0 real or integer value)", k,
                       describe(x, sizeof x, preds[k]->dtype, preds[k]->ndim, preds[k]->shape));
    }
  }
  for (size_t b = 0; b <= nclauses; b++) {
    char what[64];
    snprintf(what, sizeof what, "cond: branch %zu", b);
    if (!branches[b])
      return EMLX_FAIL("%s is NULL", what);
    if (check_inputs(what, branches[b], operands, nops) != 0)
      return -1;
    if (branches[b]->noutputs != nout)
      return EMLX_FAIL("%s returns %zu values (expects %zu)", what, branches[b]->noutputs, nout);
    for (size_t o = 0; o < nout; o++) {
      const value_info *x = out_info(branches[b], o), *y = out_info(branches[0], o);
      if (!infos_equal(x, y)) {
        char sx[128], sy[128];
        return EMLX_FAIL("%s output %zu is %s but branch 0's is %s", what, o,
                         describe(sx, sizeof sx, x->dtype, x->ndim, x->shape),
                         describe(sy, sizeof sy, y->dtype, y->ndim, y->shape));
      }
    }
  }
  size_t nin = nclauses + nops;
  emlx_array **ins = malloc((nin ? nin : 1) * sizeof *ins);
  const value_info **tpl = malloc(nout * sizeof *tpl);
  if (!ins || !tpl) {
    free(ins);
    free(tpl);
    return EMLX_FAIL("cond: out of memory");
  }
  for (size_t k = 0; k < nclauses; k++)
    ins[k] = preds[k];
  for (size_t k = 0; k < nops; k++)
    ins[nclauses + k] = operands[k];
  for (size_t o = 0; o < nout; o++)
    tpl[o] = out_info(branches[0], o);
  int rc =
      make_node(EMLX_PRIM_COND, (int32_t)nclauses, (int32_t)nops, (emlx_program *const *)branches,
                (int)nclauses + 1, ins, (int)nin, tpl, (int)nout, out);
  free(ins);
  free(tpl);
  return rc;
}

int emlx_program_call(const emlx_program *p, emlx_array *const *inputs, size_t n, emlx_array **out,
                      size_t nout) {
  if (!p)
    return EMLX_FAIL("program_call: the program is NULL");
  if (nout != p->noutputs)
    return EMLX_FAIL("program_call: the program returns %zu values (room for %zu)", p->noutputs,
                     nout);
  const emlx_program *branches[1] = {p};
  if (emlx_cond(NULL, 0, branches, inputs, n, out, nout) != 0) {
    const char *e = emlx_last_error();
    if (strncmp(e, "cond: branch 0", 14) == 0) /* say it in the caller's terms */
      emlx__set_error("program_call:%s", e + 14);
    return -1;
  }
  return 0;
}

/* ---- kernels ----------------------------------------------------------------------------- */

static bool truth(const emlx_array *a) {
  const void *p = emlx__data(a);
  if (emlx_dtype_is_float(a->dtype))
    return emlx__load_f64(p, a->dtype) != 0.0;
  return emlx__load_i64(p, a->dtype) != 0;
}

/* Evaluates pred = cond(state); 1 true, 0 false, -1 error. */
static int run_cond(const emlx_program *cond, emlx_array *const *state, size_t n) {
  emlx_array *pred = NULL;
  if (emlx_program_run(cond, state, n, &pred, 1) != 0)
    return -1;
  int t = truth(pred) ? 1 : 0;
  emlx_release(pred);
  return t;
}

/* Makes out[o] (when wanted) a view of res[o]'s data. */
static void publish(emlx_array *const *out, emlx_array *const *res, size_t n) {
  for (size_t o = 0; o < n; o++)
    if (out[o])
      emlx__array_set_view(out[o], res[o], res[o]->offset, res[o]->strides);
}

int emlx__kernel_while(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_control_params *cp = emlx__params(node);
  const emlx_program *cond = cp->progs[0], *body = cp->progs[1];
  size_t n = (size_t)cp->nops;
  emlx_array **state = malloc(2 * n * sizeof *state);
  if (!state)
    return EMLX_FAIL("while: out of memory");
  emlx_array **next = state + n;
  for (size_t i = 0; i < n; i++)
    state[i] = emlx_retain(in[i]);
  uint64_t max = atomic_load_explicit(&g_while_max_iterations, memory_order_relaxed);
  uint64_t done = 0;
  int rc = 0;
  for (;;) {
    int t = run_cond(cond, state, n);
    if (t <= 0) {
      rc = t;
      break;
    }
    if (max && done >= max) {
      rc = EMLX_FAIL("while: stopped after %llu iterations, the bound set by "
                     "emlx_set_while_max_iterations",
                     (unsigned long long)done);
      break;
    }
    /* the body takes the state (and frees or reuses it) */
    if (emlx__program_run_owned(body, state, n, next, n) != 0) {
      for (size_t i = 0; i < n; i++)
        state[i] = NULL;
      rc = -1;
      break;
    }
    for (size_t i = 0; i < n; i++)
      state[i] = next[i];
    done++;
  }
  if (rc == 0)
    publish(out, state, n);
  for (size_t i = 0; i < n; i++)
    emlx_release(state[i]);
  free(state);
  return rc;
}

int emlx__kernel_cond(const emlx_node *node, emlx_array *const *in, emlx_array *const *out) {
  const emlx_control_params *cp = emlx__params(node);
  int pick = cp->nclauses;
  for (int k = 0; k < cp->nclauses; k++)
    if (truth(in[k])) {
      pick = k;
      break;
    }
  size_t nout = (size_t)cp->nout;
  emlx_array *local[8];
  emlx_array **res = nout <= 8 ? local : malloc(nout * sizeof *res);
  if (!res)
    return EMLX_FAIL("cond: out of memory");
  int rc = emlx_program_run(cp->progs[pick], in + cp->nclauses, (size_t)cp->nops, res, nout);
  if (rc == 0) {
    publish(out, res, nout);
    for (size_t o = 0; o < nout; o++)
      emlx_release(res[o]);
  }
  if (res != local)
    free(res);
  return rc;
}
