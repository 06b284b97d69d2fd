/* compile_run.c — emlx_program_run: replays a program's steps on new
 * inputs, on arrays that belong to no graph, freeing each intermediate
 * after its last use (see compile.c and program.h). */
#include "program.h"

static void drop_values(emlx_array **vals, size_t n) {
  for (size_t v = 0; v < n; v++)
    emlx_release(vals[v]);
}

/* A FUSED_REDUCE step the slow way: the region's output stored, then
 * reduced. */
static int reduce_through(const step *s, emlx_array *const *ins, const long *refs,
                          emlx_array *out) {
  emlx_array *x = emlx__array_alloc(s->like->dtype, s->like->shape, s->like->ndim, EMLX_CPU);
  if (!x)
    return -1;
  int rc = emlx__fuse_plan_run(s->plan, ins, &x, refs);
  if (rc == 0) {
    atomic_store_explicit(&x->status, EMLX_STATUS_READY, memory_order_release);
    rc = emlx__backend(EMLX_CPU)->kernels[s->proto->prim](s->proto, &x, &out);
  }
  emlx_release(x);
  return rc;
}

static int run_step(const emlx_program *p, const step *s, emlx_array **vals, bool owned) {
  emlx_array *in_local[8], *out_local[8];
  emlx_array **ins = s->nin <= 8 ? in_local : malloc((size_t)s->nin * sizeof *ins);
  emlx_array **outs = s->nout <= 8 ? out_local : malloc((size_t)s->nout * sizeof *outs);
  long refs_local[EMLX_FUSE_MAX_INPUTS];
  bool protect_local[8];
  bool *protect = s->nin <= 8 ? protect_local : malloc((size_t)s->nin * sizeof *protect);
  int rc = 0;
  if (!ins || !outs || !protect) {
    rc = EMLX_FAIL("program_run: out of memory");
    goto out;
  }
  /* An input may lend its buffer only when it dies here and is read once. */
  for (int k = 0; k < s->nin; k++) {
    ins[k] = vals[s->in[k]];
    bool dies = false;
    for (int q = 0; q < s->ndie && !dies; q++)
      dies = s->die[q] == s->in[k];
    for (int q = 0; owned && q < s->ndie_in && !dies; q++)
      dies = s->die_in[q] == s->in[k];
    for (int q = 0; q < s->nin && dies; q++)
      dies = q == k || s->in[q] != s->in[k];
    protect[k] = !dies;
    if (s->kind != STEP_KERNEL)
      refs_local[k] = dies ? 1 : 0;
    else if (protect[k])
      emlx_retain(ins[k]);
  }
  int made = 0;
  for (; made < s->nout; made++) {
    const value_info *vi = &p->vals[s->out[made]];
    outs[made] = vi->absent ? NULL : emlx__array_alloc(vi->dtype, vi->shape, vi->ndim, EMLX_CPU);
    if (!outs[made] && !vi->absent) {
      rc = -1;
      break;
    }
  }
  if (rc == 0) {
    if (s->kind == STEP_FUSED) {
      rc = emlx__fuse_plan_run(s->plan, ins, outs, refs_local);
    } else if (s->kind == STEP_FUSED_REDUCE) {
      rc = emlx__fuse_plan_reduce(s->plan, ins, s->proto, s->like, outs[0]);
      if (rc == 1) /* this reduction cannot take it directly: materialise it */
        rc = reduce_through(s, ins, refs_local, outs[0]);
    } else {
      emlx_kernel_fn k = emlx__backend(EMLX_CPU)->kernels[s->proto->prim];
      rc = k ? k(s->proto, ins, outs)
             : EMLX_FAIL("%s: no kernel on device cpu", emlx_prim_table[s->proto->prim].name);
    }
  }
  if (s->kind == STEP_KERNEL)
    for (int k = 0; k < s->nin; k++)
      if (protect[k])
        emlx_release(ins[k]);
  for (int o = 0; o < made; o++) {
    if (!outs[o])
      continue;
    if (rc == 0) {
      atomic_store_explicit(&outs[o]->status, EMLX_STATUS_READY, memory_order_release);
      vals[s->out[o]] = outs[o];
    } else {
      emlx_release(outs[o]);
    }
  }
  if (rc == 0) {
    for (int q = 0; q < s->ndie; q++) {
      emlx_release(vals[s->die[q]]);
      vals[s->die[q]] = NULL;
    }
    for (int q = 0; owned && q < s->ndie_in; q++) {
      emlx_release(vals[s->die_in[q]]);
      vals[s->die_in[q]] = NULL;
    }
  }
out:
  if (ins != in_local)
    free(ins);
  if (outs != out_local)
    free(outs);
  if (protect != protect_local)
    free(protect);
  return rc;
}

static int check_call(const emlx_program *p, emlx_array *const *inputs, size_t ninputs,
                      emlx_array **outputs, size_t noutputs) {
  if (!p)
    return EMLX_FAIL("program_run: program is NULL");
  if (ninputs != p->ninputs)
    return EMLX_FAIL("program_run: expects %zu inputs (got %zu)", p->ninputs, ninputs);
  if (noutputs != p->noutputs)
    return EMLX_FAIL("program_run: produces %zu outputs (got room for %zu)", p->noutputs, noutputs);
  if ((ninputs && !inputs) || !outputs)
    return EMLX_FAIL("program_run: %s list is NULL", outputs ? "input" : "output");
  for (size_t i = 0; i < ninputs; i++) {
    const emlx_array *a = inputs[i];
    const value_info *t = &p->vals[i];
    if (!a)
      return EMLX_FAIL("program_run: input %zu is NULL", i);
    if (a->device != EMLX_CPU)
      return EMLX_FAIL("program_run: input %zu is on %s, the program on cpu", i,
                       emlx_device_name(a->device));
    if (a->dtype != t->dtype)
      return EMLX_FAIL("program_run: input %zu has dtype %s, the template %s", i,
                       emlx_dtype_name(a->dtype), emlx_dtype_name(t->dtype));
    if (!emlx__same_dims(a->ndim, a->shape, t->ndim, t->shape))
      return EMLX_FAIL("program_run: input %zu has another shape than its template (rank %d, "
                       "template rank %d)",
                       i, a->ndim, t->ndim);
  }
  return 0;
}

/* Runs p with vals[0..ninputs) holding one reference to each input. */
static int run(const emlx_program *p, emlx_array **vals, emlx_array **outputs, size_t noutputs,
               bool owned) {
  for (size_t v = p->ninputs; v < p->nvalues; v++)
    if (p->vals[v].fixed)
      vals[v] = emlx_retain(p->vals[v].fixed);
  for (size_t i = 0; i < p->nsteps; i++) {
    if (run_step(p, &p->steps[i], vals, owned) != 0) {
      drop_values(vals, p->nvalues);
      free(vals);
      return -1;
    }
  }
  for (size_t i = 0; i < noutputs; i++)
    outputs[i] = emlx_retain(vals[p->out_ids[i]]);
  drop_values(vals, p->nvalues);
  free(vals);
  return 0;
}

int emlx_program_run(const emlx_program *p, emlx_array *const *inputs, size_t ninputs,
                     emlx_array **outputs, size_t noutputs) {
  if (check_call(p, inputs, ninputs, outputs, noutputs) != 0)
    return -1;
  if (ninputs && emlx_eval(inputs, ninputs) != 0)
    return -1;
  emlx_array **vals = calloc(p->nvalues ? p->nvalues : 1, sizeof *vals);
  if (!vals)
    return EMLX_FAIL("program_run: out of memory");
  for (size_t i = 0; i < ninputs; i++)
    vals[i] = emlx_retain(inputs[i]);
  return run(p, vals, outputs, noutputs, false);
}

int emlx__program_run_owned(const emlx_program *p, emlx_array **inputs, size_t ninputs,
                            emlx_array **outputs, size_t noutputs) {
  emlx_array **vals = NULL;
  int rc = check_call(p, inputs, ninputs, outputs, noutputs);
  if (rc == 0 && ninputs && emlx_eval(inputs, ninputs) != 0)
    rc = -1;
  if (rc == 0 && !(vals = calloc(p->nvalues ? p->nvalues : 1, sizeof *vals)))
    rc = EMLX_FAIL("program_run: out of memory");
  if (rc != 0) {
    for (size_t i = 0; i < ninputs; i++)
      emlx_release(inputs[i]);
    return rc;
  }
  for (size_t i = 0; i < ninputs; i++)
    vals[i] = inputs[i]; /* taken over */
  return run(p, vals, outputs, noutputs, true);
}
