/* nif_program.c — programs from Erlang: a spec term compiled once into an
 * engine program (emlx_compile), replayed by program_run.
 *
 * The spec is {templates, nodes, outputs}:
 *   templates :: [{dtype, shape}]           the inputs
 *   nodes     :: [{op :: atom, args :: list}]
 *   outputs   :: [{:ref, i}]
 * A value table starts with the inputs (0..n-1); each node appends its
 * results. op names a graph-building row of nif_rows.h (one whose
 * signature does not end in "qk"), and args are that row's arguments, except
 * that a tensor ("t", "o", "T") is {:ref, i}. Pseudo-ops:
 *   {:constant, [tensor]}                     a captured tensor
 *   {:while, [cond_spec, body_spec, refs]}    emlx_while over the state refs
 *   {:cond, [pred_refs, branch_specs, refs]}  emlx_cond (the last branch is the else)
 * A nested spec has the same form; its inputs are the operands (its
 * templates list may be [] or must match them).
 *
 * The interpreter is the NIF itself (nif_program_spec.c): inside
 * emlx_compile's trace, each value is wrapped in a temporary tensor term and
 * the row's own handler runs on those terms, so a program can hold every
 * lazy op of the NIF. Errors name the node (index and op) and never crash.
 *
 * program_run submits a lazy call of the program (emlx_program_call) to a
 * command queue like the other computing rows, or runs the program inline on
 * the calling scheduler when its estimated work is within the inline limits
 * (nif_async.c) and the queue allows it. */
#include <stdio.h>
#include <string.h>

#include "emlx_nif.h"

void nif_program_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  nif_program *p = obj;
  emlx_program_release(p->program);
  p->program = NULL;
}

/* ---- the rows ------------------------------------------------------------------- */

NIF_HANDLER(h_program_compile) {
  if (nif_on_normal_scheduler())
    return nif_reschedule_dirty(c); /* tracing and constants may take milliseconds */
  char err[1024];
  emlx_program *p = nif_program_from_spec(c, a[0].term, err, sizeof err);
  if (!p) /* every failure is the spec's: name the argument, as the decoder does */
    return nif_error(c, "argument 1: %s", err);
  nif_program *res = enif_alloc_resource(nif_res.program, sizeof *res);
  if (!res) {
    emlx_program_release(p);
    return nif_error(c, "out of memory for the program resource");
  }
  res->program = p;
  ERL_NIF_TERM term = enif_make_resource(c->env, res);
  enif_release_resource(res);
  return nif_ok(c, term);
}

static ERL_NIF_TERM template_list(ErlNifEnv *env, const emlx_program *p, size_t n, bool out) {
  ERL_NIF_TERM list = enif_make_list(env, 0);
  for (size_t i = n; i-- > 0;) {
    emlx_template t;
    if ((out ? emlx_program_output_template(p, i, &t) : emlx_program_input_template(p, i, &t)) != 0)
      continue;
    ERL_NIF_TERM dims[EMLX_MAX_NDIM];
    for (int d = 0; d < t.ndim; d++)
      dims[d] = enif_make_int64(env, t.shape[d]);
    ERL_NIF_TERM shape = enif_make_tuple_from_array(env, dims, (unsigned)t.ndim);
    list =
        enif_make_list_cell(env, enif_make_tuple2(env, nif_dtype_term(env, t.dtype), shape), list);
  }
  return list;
}

NIF_HANDLER(h_program_stats) {
  const emlx_program *p = a[0].program->program;
  emlx_program_info info;
  if (!p || emlx_program_get_info(p, &info) != 0)
    return nif_engine_error(c);
  ErlNifEnv *env = c->env;
  static const char *const keys[] = {"ninputs",       "noutputs",  "traced_ops", "steps",
                                     "fused_regions", "fused_ops", "constants",  "cse_merged",
                                     "noops_removed", "work",      "inputs",     "outputs"};
  ERL_NIF_TERM k[12], v[12];
  const uint64_t nums[] = {info.ninputs,   info.noutputs,      info.traced_ops,
                           info.steps,     info.fused_regions, info.fused_ops,
                           info.constants, info.cse_merged,    info.noops_removed};
  for (int i = 0; i < 12; i++)
    k[i] = enif_make_atom(env, keys[i]);
  for (int i = 0; i < 9; i++)
    v[i] = enif_make_uint64(env, nums[i]);
  v[9] = info.work == INT64_MAX ? enif_make_atom(env, "infinity") : enif_make_int64(env, info.work);
  v[10] = template_list(env, p, info.ninputs, false);
  v[11] = template_list(env, p, info.noutputs, true);
  ERL_NIF_TERM map;
  if (!enif_make_map_from_arrays(env, k, v, 12, &map))
    return nif_error(c, "cannot build the stats map");
  return nif_ok(c, map);
}

/* ---- running ------------------------------------------------------------------------- */

typedef struct run_job {
  ErlNifPid pid;
  ErlNifEnv *env;
  ERL_NIF_TERM ref;
  emlx_array **outs;
  size_t nout;
} run_job;

static void run_job_free(run_job *j) {
  for (size_t i = 0; i < j->nout; i++)
    emlx_release(j->outs[i]);
  enif_free(j->outs);
  if (j->env)
    enif_free_env(j->env);
  enif_free(j);
  atomic_fetch_sub_explicit(&nif_count.jobs, 1, memory_order_relaxed);
}

/* [tensor] of outs (new references) in env; 0 on failure. */
static ERL_NIF_TERM tensor_list(ErlNifEnv *env, emlx_array *const *outs, size_t n) {
  ERL_NIF_TERM list = enif_make_list(env, 0);
  for (size_t i = n; i-- > 0;) {
    int ok;
    ERL_NIF_TERM t = nif_make_tensor(env, emlx_retain(outs[i]), &ok);
    if (!ok)
      return 0;
    list = enif_make_list_cell(env, t, list);
  }
  return list;
}

static ERL_NIF_TERM run_error(ErlNifEnv *env, const char *msg) {
  char buf[1024];
  const char *name = "program_run";
  if (strncmp(msg, name, strlen(name)) == 0 && msg[strlen(name)] == ':')
    snprintf(buf, sizeof buf, "%s", msg);
  else
    snprintf(buf, sizeof buf, "%s: %s", name, msg && *msg ? msg : "evaluation failed");
  return enif_make_tuple2(env, nif_atom.error, nif_make_string(env, buf));
}

static void run_done(int status, const char *error, void *user) {
  run_job *j = user;
  ERL_NIF_TERM result;
  if (status != 0) {
    result = run_error(j->env, error);
  } else {
    ERL_NIF_TERM list = tensor_list(j->env, j->outs, j->nout);
    result = list ? enif_make_tuple2(j->env, nif_atom.ok, list)
                  : run_error(j->env, "out of memory for the tensor resources");
  }
  enif_send(NULL, &j->pid, j->env, enif_make_tuple2(j->env, j->ref, result));
  run_job_free(j);
}

/* May the run happen on the calling scheduler? */
static bool may_run_inline(const nif_queue *q, const emlx_program_info *info,
                           emlx_array *const *ins, size_t n) {
  int64_t max_nodes, max_work;
  nif_inline_limits(&max_nodes, &max_work);
  if (max_nodes <= 0 || info->work > max_work || (int64_t)info->steps > max_nodes)
    return false;
  if (!q->is_default && !emlx_queue_idle(q->queue))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!emlx_is_evaluated(ins[i]))
      return emlx_eval_within(ins, n, max_nodes, max_work, NULL);
  return true;
}

NIF_HANDLER(h_program_run) {
  const emlx_program *p = a[0].program->program;
  nif_queue *q = a[2].queue;
  emlx_program_info info;
  if (!p || emlx_program_get_info(p, &info) != 0)
    return nif_engine_error(c);
  if (q->device != EMLX_CPU)
    return nif_error(c, "argument 3: the queue is on %s; programs run on the cpu",
                     emlx_device_name(q->device));
  emlx_array **ins = a[1].arrays; /* borrowed: the decoded argument holds them */
  unsigned n = (unsigned)a[1].n;
  if (n > 0 && a[1].device != EMLX_CPU)
    return nif_error(c, "argument 2: the inputs are on %s; programs run on the cpu",
                     emlx_device_name(a[1].device));
  ERL_NIF_TERM result;
  emlx_array **outs = enif_alloc(info.noutputs * sizeof *outs);
  if (!outs) {
    result = nif_error(c, "out of memory");
    goto out;
  }
  if (n != info.ninputs) {
    result = nif_error(c, "argument 2: the program takes %lu inputs, given %u",
                       (unsigned long)info.ninputs, n);
    enif_free(outs);
    goto out;
  }
  if (may_run_inline(q, &info, ins, n)) {
    if (emlx_program_run(p, ins, n, outs, info.noutputs) != 0) {
      result = nif_engine_error(c);
    } else {
      ERL_NIF_TERM list = tensor_list(c->env, outs, info.noutputs);
      result = list ? nif_ok(c, list) : nif_error(c, "out of memory for the tensor resources");
      for (size_t i = 0; i < info.noutputs; i++)
        emlx_release(outs[i]);
    }
    enif_free(outs);
    goto out;
  }
  if (emlx_program_call(p, ins, n, outs, info.noutputs) != 0) {
    result = nif_engine_error(c);
    enif_free(outs);
    goto out;
  }
  run_job *j = enif_alloc(sizeof *j);
  ErlNifEnv *jenv = j ? enif_alloc_env() : NULL;
  if (!j || !jenv || !enif_self(c->env, &j->pid)) {
    result = nif_error(c, j && jenv ? "cannot reply: not called from a process" : "out of memory");
    for (size_t i = 0; i < info.noutputs; i++)
      emlx_release(outs[i]);
    enif_free(outs);
    if (jenv)
      enif_free_env(jenv);
    if (j)
      enif_free(j);
    goto out;
  }
  j->env = jenv;
  j->ref = enif_make_copy(jenv, a[3].term);
  j->outs = outs;
  j->nout = info.noutputs;
  atomic_fetch_add_explicit(&nif_count.jobs, 1, memory_order_relaxed);
  if (emlx_eval_async(q->queue, outs, info.noutputs, run_done, j) != 0) {
    result = nif_engine_error(c);
    run_job_free(j);
    goto out;
  }
  result = nif_atom.ok;
out:
  return result;
}
