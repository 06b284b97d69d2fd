/* nif_program_spec.c — the interpreter of program specs: the trace that
 * program_compile (nif_program.c) hands to emlx_compile.
 *
 * A spec is {templates, nodes, outputs} (nif_program.c has the full form).
 * Inside the trace, each value is wrapped in a temporary tensor term and the
 * row's own handler runs on those terms (decoding, validation and all), so a
 * program can hold every lazy op of the NIF. The temporary terms live in a
 * private env freed after each node. while and cond compile their nested
 * specs into sub-programs on the templates of their operands. Errors name
 * the node (index and op) and the nesting path; nothing crashes. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "emlx_nif.h"

#define SPEC_MAX_DEPTH 32
#define SPEC_MAX_VALUES (1 << 24)

typedef struct spec_ctx {
  nif_call *call; /* program_compile's call (its env holds the spec) */
  char err[1024];
  int depth;
} spec_ctx;

static void spec_fail(spec_ctx *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void spec_fail(spec_ctx *s, const char *fmt, ...) {
  if (s->err[0])
    return; /* the innermost message wins */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->err, sizeof s->err, fmt, ap);
  va_end(ap);
}

/* The message of an {:error, msg} term (or a description of the term). */
static void error_text(ErlNifEnv *env, ERL_NIF_TERM t, char *buf, size_t len) {
  int arity;
  const ERL_NIF_TERM *el;
  ErlNifBinary bin;
  if (enif_get_tuple(env, t, &arity, &el) && arity == 2 && enif_inspect_binary(env, el[1], &bin)) {
    size_t n = bin.size < len - 1 ? bin.size : len - 1;
    memcpy(buf, bin.data, n);
    buf[n] = '\0';
  } else {
    enif_snprintf(buf, len, "%T", t);
  }
}

typedef struct value_table {
  emlx_array **v;
  size_t n, cap;
} value_table;

static bool table_push(value_table *t, emlx_array *a) {
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    emlx_array **v = enif_realloc(t->v, cap * sizeof *v);
    if (!v || cap > SPEC_MAX_VALUES) {
      if (v)
        t->v = v;
      emlx_release(a);
      return false;
    }
    t->v = v;
    t->cap = cap;
  }
  t->v[t->n++] = a;
  return true;
}

static void table_free(value_table *t) {
  for (size_t i = 0; i < t->n; i++)
    emlx_release(t->v[i]);
  enif_free(t->v);
}

typedef struct trace_ctx {
  spec_ctx *spec;
  ERL_NIF_TERM nodes, outputs;
} trace_ctx;

/* {:ref, i} with i in the table: the value; else NULL with the error set.
 * node/op name the node for the message (op "output": output node). */
static emlx_array *get_ref(spec_ctx *s, ErlNifEnv *env, const value_table *t, ERL_NIF_TERM term,
                           size_t node, const char *op) {
  int arity;
  const ERL_NIF_TERM *el;
  char name[8], at[96];
  ErlNifSInt64 i;
  if (strcmp(op, "output") == 0)
    snprintf(at, sizeof at, "output %zu", node);
  else
    snprintf(at, sizeof at, "node %zu (%s)", node, op);
  if (!enif_get_tuple(env, term, &arity, &el) || arity != 2 ||
      !enif_get_atom(env, el[0], name, sizeof name, ERL_NIF_LATIN1) || strcmp(name, "ref") != 0 ||
      !enif_get_int64(env, el[1], &i)) {
    char got[128];
    enif_snprintf(got, sizeof got, "%T", term);
    spec_fail(s, "%s: expected {:ref, index}, got: %s", at, got);
    return NULL;
  }
  if (i < 0 || (uint64_t)i >= t->n) {
    spec_fail(s, "%s: {:ref, %lld} is not a value yet (%zu values so far)", at, (long long)i, t->n);
    return NULL;
  }
  return t->v[i];
}

/* A list of refs as values (borrowed, enif_alloc'd list in *out). */
static bool get_refs(spec_ctx *s, ErlNifEnv *env, const value_table *t, ERL_NIF_TERM list,
                     size_t node, const char *op, emlx_array ***out, unsigned *n) {
  if (!enif_get_list_length(env, list, n)) {
    spec_fail(s, "node %zu (%s): expected a list of {:ref, index}", node, op);
    return false;
  }
  *out = enif_alloc((*n ? *n : 1) * sizeof **out);
  if (!*out) {
    spec_fail(s, "node %zu (%s): out of memory", node, op);
    return false;
  }
  ERL_NIF_TERM head, tail = list;
  for (unsigned k = 0; k < *n; k++) {
    enif_get_list_cell(env, tail, &head, &tail);
    if (!((*out)[k] = get_ref(s, env, t, head, node, op))) {
      enif_free(*out);
      *out = NULL;
      return false;
    }
  }
  return true;
}

/* A temporary {cpu, ref} term in env holding a reference to a. */
static ERL_NIF_TERM wrap(ErlNifEnv *env, emlx_array *a, bool *ok) {
  int made;
  ERL_NIF_TERM t = nif_make_tensor(env, emlx_retain(a), &made);
  *ok = made != 0;
  return t;
}

/* The arrays of a row's result value: a tensor, or a tuple or list of them
 * (retained into the table). */
static bool push_results(spec_ctx *s, ErlNifEnv *env, ERL_NIF_TERM value, value_table *t,
                         size_t node, const char *op) {
  int arity;
  const ERL_NIF_TERM *el;
  nif_tensor *res;
  if (enif_get_tuple(env, value, &arity, &el) && arity == 2 &&
      enif_get_resource(env, el[1], nif_res.tensor, (void **)&res)) {
    emlx_array *a = nif_tensor_get(res);
    if (!a || !table_push(t, a)) {
      spec_fail(s, "node %zu (%s): out of memory", node, op);
      return false;
    }
    return true;
  }
  ERL_NIF_TERM items[64];
  unsigned n = 0;
  if (enif_get_tuple(env, value, &arity, &el)) {
    for (int k = 0; k < arity && k < 64; k++)
      items[n++] = el[k];
    if (arity > 64 || arity == 0)
      n = 0;
  } else if (enif_is_list(env, value)) {
    ERL_NIF_TERM head, tail = value;
    while (n < 64 && enif_get_list_cell(env, tail, &head, &tail))
      items[n++] = head;
    if (!enif_is_empty_list(env, tail))
      n = 0;
  }
  for (unsigned k = 0; k < n; k++) {
    if (!enif_get_tuple(env, items[k], &arity, &el) || arity != 2 ||
        !enif_get_resource(env, el[1], nif_res.tensor, (void **)&res)) {
      n = 0;
      break;
    }
  }
  if (n == 0) {
    spec_fail(s, "node %zu (%s): the op returns no tensors, so it cannot be part of a program",
              node, op);
    return false;
  }
  for (unsigned k = 0; k < n; k++) {
    enif_get_tuple(env, items[k], &arity, &el);
    enif_get_resource(env, el[1], nif_res.tensor, (void **)&res);
    emlx_array *a = nif_tensor_get(res);
    if (!a || !table_push(t, a)) {
      spec_fail(s, "node %zu (%s): out of memory", node, op);
      return false;
    }
  }
  return true;
}

static bool is_tensor_letter(char k) { return k == 't' || k == 'o' || k == 'T'; }

/* Runs a graph-building row on the values: argv in a private env. */
static bool run_row(spec_ctx *s, ErlNifEnv *env, const char *op, size_t node, ERL_NIF_TERM args,
                    unsigned nargs, value_table *t) {
  const nif_row *row = nif_find_row(op, (int)nargs);
  if (!row) {
    if (nif_row_name_exists(op))
      spec_fail(s, "node %zu (%s): no row %s takes %u arguments", node, op, op, nargs);
    else
      spec_fail(s, "node %zu (%s): unknown op", node, op);
    return false;
  }
  size_t len = strlen(row->sig);
  if (len >= 2 && row->sig[len - 2] == 'q' && row->sig[len - 1] == 'k') {
    spec_fail(s, "node %zu (%s): %s computes (a queue row), which a program cannot hold", node, op,
              op);
    return false;
  }
  for (size_t k = 0; k < len; k++)
    if (strchr("PzLr", row->sig[k])) {
      spec_fail(s, "node %zu (%s): %s is not a graph op", node, op, op);
      return false;
    }
  ErlNifEnv *tmp = enif_alloc_env();
  if (!tmp) {
    spec_fail(s, "node %zu (%s): out of memory", node, op);
    return false;
  }
  ERL_NIF_TERM argv[NIF_MAX_ARGS];
  ERL_NIF_TERM head, tail = args;
  bool ok = true;
  for (unsigned k = 0; ok && k < nargs; k++) {
    enif_get_list_cell(env, tail, &head, &tail);
    char kind = row->sig[k];
    if (!is_tensor_letter(kind) || (kind == 'o' && enif_is_identical(head, nif_atom.nil))) {
      argv[k] = enif_make_copy(tmp, head);
    } else if (kind == 'T') {
      emlx_array **list = NULL;
      unsigned n = 0;
      ok = get_refs(s, env, t, head, node, op, &list, &n);
      ERL_NIF_TERM out = enif_make_list(tmp, 0);
      for (unsigned q = n; ok && q-- > 0;) {
        ERL_NIF_TERM w = wrap(tmp, list[q], &ok);
        out = enif_make_list_cell(tmp, w, out);
      }
      if (list)
        enif_free(list);
      argv[k] = out;
    } else {
      emlx_array *a = get_ref(s, env, t, head, node, op);
      ok = a != NULL;
      if (ok)
        argv[k] = wrap(tmp, a, &ok);
    }
  }
  if (!ok) {
    spec_fail(s, "node %zu (%s): out of memory", node, op);
    enif_free_env(tmp);
    return false;
  }
  ERL_NIF_TERM result = nif_call_row(tmp, row, (int)nargs, argv);
  int arity;
  const ERL_NIF_TERM *el;
  if (enif_get_tuple(tmp, result, &arity, &el) && arity == 2 &&
      enif_is_identical(el[0], nif_atom.ok)) {
    ok = push_results(s, tmp, el[1], t, node, op);
  } else {
    char msg[768];
    error_text(tmp, result, msg, sizeof msg);
    spec_fail(s, "node %zu (%s): %s", node, op, msg);
    ok = false;
  }
  enif_free_env(tmp);
  return ok;
}

static emlx_program *compile_spec(spec_ctx *s, ERL_NIF_TERM spec, emlx_array *const *operands,
                                  size_t nops, const char *where);

/* {:while, [cond_spec, body_spec, refs]} */
static bool run_while(spec_ctx *s, ErlNifEnv *env, size_t node, const ERL_NIF_TERM *args,
                      value_table *t) {
  emlx_array **state;
  unsigned n;
  if (!get_refs(s, env, t, args[2], node, "while", &state, &n))
    return false;
  char where[64];
  snprintf(where, sizeof where, "node %zu (while) cond", node);
  emlx_program *cond = compile_spec(s, args[0], state, n, where);
  snprintf(where, sizeof where, "node %zu (while) body", node);
  emlx_program *body = cond ? compile_spec(s, args[1], state, n, where) : NULL;
  bool ok = false;
  if (cond && body) {
    emlx_array **out = enif_alloc((n ? n : 1) * sizeof *out);
    if (!out) {
      spec_fail(s, "node %zu (while): out of memory", node);
    } else if (emlx_while(cond, body, state, n, out) != 0) {
      spec_fail(s, "node %zu (while): %s", node, emlx_last_error());
    } else {
      ok = true;
      for (unsigned k = 0; k < n; k++)
        if (ok && !table_push(t, out[k])) {
          spec_fail(s, "node %zu (while): out of memory", node);
          ok = false;
        } else if (!ok) {
          emlx_release(out[k]);
        }
    }
    enif_free(out);
  }
  emlx_program_release(cond);
  emlx_program_release(body);
  enif_free(state);
  return ok;
}

/* {:cond, [pred_refs, branch_specs, operand_refs]} */
static bool run_cond(spec_ctx *s, ErlNifEnv *env, size_t node, const ERL_NIF_TERM *args,
                     value_table *t) {
  emlx_array **preds = NULL, **ops = NULL;
  unsigned np = 0, nops = 0, nb = 0;
  if (!get_refs(s, env, t, args[0], node, "cond", &preds, &np))
    return false;
  if (!get_refs(s, env, t, args[2], node, "cond", &ops, &nops)) {
    enif_free(preds);
    return false;
  }
  bool ok = false;
  emlx_program **branches = NULL;
  if (!enif_get_list_length(env, args[1], &nb) || nb != np + 1) {
    spec_fail(s,
              "node %zu (cond): expects a list of %u branch specs (one per predicate, then "
              "the else)",
              node, np + 1);
    goto out;
  }
  branches = enif_alloc(nb * sizeof *branches);
  if (!branches) {
    spec_fail(s, "node %zu (cond): out of memory", node);
    goto out;
  }
  memset(branches, 0, nb * sizeof *branches);
  ERL_NIF_TERM head, tail = args[1];
  for (unsigned b = 0; b < nb; b++) {
    enif_get_list_cell(env, tail, &head, &tail);
    char where[64];
    snprintf(where, sizeof where, "node %zu (cond) branch %u", node, b);
    if (!(branches[b] = compile_spec(s, head, ops, nops, where)))
      goto out;
  }
  size_t nout = 0;
  emlx_program_info info;
  if (emlx_program_get_info(branches[0], &info) == 0)
    nout = info.noutputs;
  emlx_array **out = enif_alloc((nout ? nout : 1) * sizeof *out);
  if (!out) {
    spec_fail(s, "node %zu (cond): out of memory", node);
    goto out;
  }
  if (emlx_cond(preds, np, (const emlx_program *const *)branches, ops, nops, out, nout) != 0) {
    spec_fail(s, "node %zu (cond): %s", node, emlx_last_error());
  } else {
    ok = true;
    for (size_t k = 0; k < nout; k++)
      if (ok && !table_push(t, out[k])) {
        spec_fail(s, "node %zu (cond): out of memory", node);
        ok = false;
      } else if (!ok) {
        emlx_release(out[k]);
      }
  }
  enif_free(out);
out:
  if (branches) {
    for (unsigned b = 0; b < nb; b++)
      emlx_program_release(branches[b]);
    enif_free(branches);
  }
  enif_free(preds);
  enif_free(ops);
  return ok;
}

/* {:constant, [tensor]} */
static bool run_constant(spec_ctx *s, ErlNifEnv *env, size_t node, ERL_NIF_TERM arg,
                         value_table *t) {
  int arity;
  const ERL_NIF_TERM *el;
  nif_tensor *res;
  if (!enif_get_tuple(env, arg, &arity, &el) || arity != 2 ||
      !enif_get_resource(env, el[1], nif_res.tensor, (void **)&res)) {
    spec_fail(s, "node %zu (constant): expected a tensor {device, reference}", node);
    return false;
  }
  emlx_array *a = nif_tensor_get(res);
  if (!a) {
    spec_fail(s, "node %zu (constant): the tensor was deallocated", node);
    return false;
  }
  if (emlx_array_device(a) != EMLX_CPU) {
    emlx_release(a);
    spec_fail(s, "node %zu (constant): the tensor is not on the cpu", node);
    return false;
  }
  if (!table_push(t, a)) {
    spec_fail(s, "node %zu (constant): out of memory", node);
    return false;
  }
  return true;
}

static int trace(void *vctx, emlx_array *const *inputs, size_t ninputs, emlx_array **outputs,
                 size_t noutputs) {
  trace_ctx *tc = vctx;
  spec_ctx *s = tc->spec;
  ErlNifEnv *env = s->call->env;
  value_table t = {0};
  int rc = -1;
  for (size_t i = 0; i < ninputs; i++)
    if (!table_push(&t, emlx_retain(inputs[i]))) {
      spec_fail(s, "out of memory");
      goto out;
    }
  ERL_NIF_TERM head, tail = tc->nodes;
  for (size_t node = 0; enif_get_list_cell(env, tail, &head, &tail); node++) {
    int arity;
    const ERL_NIF_TERM *el;
    char op[64];
    unsigned nargs;
    if (!enif_get_tuple(env, head, &arity, &el) || arity != 2 ||
        !enif_get_atom(env, el[0], op, sizeof op, ERL_NIF_LATIN1) ||
        !enif_get_list_length(env, el[1], &nargs)) {
      char got[128];
      enif_snprintf(got, sizeof got, "%T", head);
      spec_fail(s, "node %zu: expected {op_atom, [args]}, got: %s", node, got);
      goto out;
    }
    ERL_NIF_TERM args[NIF_MAX_ARGS];
    ERL_NIF_TERM ah, at = el[1];
    for (unsigned k = 0; k < nargs && k < NIF_MAX_ARGS; k++) {
      enif_get_list_cell(env, at, &ah, &at);
      args[k] = ah;
    }
    bool ok;
    if (strcmp(op, "constant") == 0 || strcmp(op, "while") == 0 || strcmp(op, "cond") == 0) {
      unsigned want = strcmp(op, "constant") == 0 ? 1 : 3;
      if (nargs != want) {
        spec_fail(s, "node %zu (%s): takes %u arguments, given %u", node, op, want, nargs);
        goto out;
      }
      if (want == 1)
        ok = run_constant(s, env, node, args[0], &t);
      else if (op[0] == 'w')
        ok = run_while(s, env, node, args, &t);
      else
        ok = run_cond(s, env, node, args, &t);
    } else {
      ok = nargs <= NIF_MAX_ARGS && run_row(s, env, op, node, el[1], nargs, &t);
      if (nargs > NIF_MAX_ARGS)
        spec_fail(s, "node %zu (%s): too many arguments", node, op);
    }
    if (!ok)
      goto out;
  }
  if (!enif_is_empty_list(env, tail)) {
    spec_fail(s, "the nodes are not a proper list");
    goto out;
  }
  {
    ERL_NIF_TERM oh, ot = tc->outputs;
    for (size_t k = 0; k < noutputs; k++) {
      enif_get_list_cell(env, ot, &oh, &ot);
      emlx_array *a = get_ref(s, env, &t, oh, k, "output");
      if (!a) {
        for (size_t q = 0; q < k; q++) {
          emlx_release(outputs[q]);
          outputs[q] = NULL;
        }
        goto out;
      }
      outputs[k] = emlx_retain(a);
    }
  }
  rc = 0;
out:
  table_free(&t);
  return rc;
}

/* Reads one {dtype, shape} template (shape into dims). */
static bool get_template(spec_ctx *s, ERL_NIF_TERM term, size_t i, const char *where,
                         emlx_template *tpl, int64_t *dims) {
  nif_call *c = s->call;
  int arity;
  const ERL_NIF_TERM *el;
  if (!enif_get_tuple(c->env, term, &arity, &el) || arity != 2) {
    spec_fail(s, "%s: template %zu: expected {dtype, shape}", where, i);
    return false;
  }
  nif_arg d, sh;
  ERL_NIF_TERM err;
  if (!nif_decode_arg(c, 'y', el[0], 0, &d, &err) || !nif_decode_arg(c, 's', el[1], 0, &sh, &err)) {
    char msg[512];
    error_text(c->env, err, msg, sizeof msg);
    /* skip "program_compile: argument 1: " */
    const char *m = strstr(msg, "argument 1: ");
    spec_fail(s, "%s: template %zu: %s", where, i, m ? m + 12 : msg);
    return false;
  }
  tpl->dtype = d.dtype;
  tpl->ndim = sh.n;
  memcpy(dims, sh.ints, (size_t)sh.n * sizeof(int64_t));
  tpl->shape = dims;
  return true;
}

/* Compiles a spec; its inputs are the templates of the operands when given
 * (a nested spec), else its own. NULL with the error set. */
static emlx_program *compile_spec(spec_ctx *s, ERL_NIF_TERM spec, emlx_array *const *operands,
                                  size_t nops, const char *where) {
  ErlNifEnv *env = s->call->env;
  int arity;
  const ERL_NIF_TERM *el;
  unsigned ntpl, nnodes, nout;
  if (s->depth >= SPEC_MAX_DEPTH) {
    spec_fail(s, "%s: specs nest deeper than %d levels", where, SPEC_MAX_DEPTH);
    return NULL;
  }
  if (!enif_get_tuple(env, spec, &arity, &el) || arity != 3 ||
      !enif_get_list_length(env, el[0], &ntpl) || !enif_get_list_length(env, el[1], &nnodes) ||
      !enif_get_list_length(env, el[2], &nout)) {
    spec_fail(s, "%s: expected a spec {templates, nodes, outputs} (three lists)", where);
    return NULL;
  }
  if (nout == 0) {
    spec_fail(s, "%s: the spec has no outputs", where);
    return NULL;
  }
  size_t n = operands ? nops : ntpl;
  if (operands && ntpl != 0 && ntpl != nops) {
    spec_fail(s, "%s: the spec has %u templates for %zu operands", where, ntpl, nops);
    return NULL;
  }
  emlx_template *tpl = enif_alloc((n ? n : 1) * sizeof *tpl);
  int64_t *dims = enif_alloc((n ? n : 1) * NIF_MAX_INTS * sizeof *dims);
  emlx_program *p = NULL;
  if (!tpl || !dims) {
    spec_fail(s, "%s: out of memory", where);
    goto out;
  }
  ERL_NIF_TERM head, tail = el[0];
  for (size_t i = 0; i < ntpl; i++) {
    enif_get_list_cell(env, tail, &head, &tail);
    if (!get_template(s, head, i, where, &tpl[i], dims + i * NIF_MAX_INTS))
      goto out;
    if (operands) {
      const emlx_array *a = operands[i];
      bool same = tpl[i].dtype == emlx_array_dtype(a) && tpl[i].ndim == emlx_ndim(a);
      for (int d = 0; same && d < tpl[i].ndim; d++)
        same = tpl[i].shape[d] == emlx_shape(a)[d];
      if (!same) {
        spec_fail(s, "%s: template %zu does not match its operand (%s of rank %d)", where, i,
                  emlx_dtype_name(emlx_array_dtype(a)), emlx_ndim(a));
        goto out;
      }
    }
  }
  if (operands)
    for (size_t i = 0; i < nops; i++) {
      tpl[i].dtype = emlx_array_dtype(operands[i]);
      tpl[i].ndim = emlx_ndim(operands[i]);
      tpl[i].shape = emlx_shape(operands[i]);
    }
  trace_ctx tc = {s, el[1], el[2]};
  s->depth++;
  p = emlx_compile(trace, &tc, tpl, n, nout);
  s->depth--;
  if (!p && s->err[0] && s->depth > 0) { /* a node's message: say where the spec is */
    char inner[sizeof s->err];
    memcpy(inner, s->err, sizeof inner);
    size_t w = strlen(where);
    if (w + 2 < sizeof s->err) { /* where, then as much of the inner message as fits */
      memcpy(s->err, where, w);
      memcpy(s->err + w, ": ", 2);
      size_t room = sizeof s->err - w - 3, len = strlen(inner);
      memcpy(s->err + w + 2, inner, len < room ? len : room);
      s->err[w + 2 + (len < room ? len : room)] = '\0';
    }
  } else if (!p && !s->err[0]) {
    spec_fail(s, "%s: %s", s->depth > 0 ? where : "the spec", emlx_last_error());
  }
out:
  enif_free(tpl);
  enif_free(dims);
  return p;
}

emlx_program *nif_program_from_spec(nif_call *c, ERL_NIF_TERM spec, char *err, size_t errlen) {
  spec_ctx s = {.call = c, .err = "", .depth = 0};
  emlx_program *p = compile_spec(&s, spec, NULL, 0, "the spec");
  if (!p)
    snprintf(err, errlen, "%s", s.err[0] ? s.err : emlx_last_error());
  return p;
}
