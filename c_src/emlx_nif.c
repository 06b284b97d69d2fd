/* emlx_nif.c — the NIF's entry points: the row table, the dispatcher that
 * decodes every argument from its row's signature before the handler runs,
 * the result helpers, atoms, resource types and load/upgrade.
 *
 * Each row of nif_rows.h becomes one ErlNifFunc whose C function is a
 * two-line wrapper calling nif_dispatch() with the row. Nothing here knows
 * about particular functions. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "emlx_nif.h"

nif_atoms nif_atom;
nif_resources nif_res;
nif_counters nif_count;

/* ---- the table ------------------------------------------------------------ */

enum {
#define X(cname, name, sig, flags, fn) ROW_##cname,
  EMLX_NIF_ROWS(X)
#undef X
      ROW_COUNT
};

static const nif_row rows[] = {
#define X(cname, name, sig, flags, fn) [ROW_##cname] = {name, sig, flags, fn},
    EMLX_NIF_ROWS(X)
#undef X
};

_Static_assert(sizeof rows / sizeof rows[0] == ROW_COUNT, "every row has an entry");

static ERL_NIF_TERM nif_dispatch(const nif_row *row,
                                 ERL_NIF_TERM (*self)(ErlNifEnv *, int, const ERL_NIF_TERM[]),
                                 ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

#define X(cname, name, sig, flags, fn)                                                             \
  static ERL_NIF_TERM entry_##cname(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {         \
    return nif_dispatch(&rows[ROW_##cname], entry_##cname, env, argc, argv);                       \
  }
EMLX_NIF_ROWS(X)
#undef X

static ErlNifFunc nif_funcs[] = {
#define X(cname, name, sig, flags, fn) {name, sizeof(sig) - 1, entry_##cname, 0},
    EMLX_NIF_ROWS(X)
#undef X
};

/* ---- the dispatcher --------------------------------------------------------- */

static bool is_tensor_kind(char k) { return k == 't' || k == 'o'; }

/* All tensor arguments on one device, unless the row allows otherwise. */
static bool check_devices(nif_call *c, const nif_arg *args, int n, ERL_NIF_TERM *err) {
  int first = -1;
  for (int i = 0; i < n; i++) {
    emlx_device dev;
    char k = c->row->sig[i];
    if (is_tensor_kind(k) && args[i].array)
      dev = args[i].device;
    else if ((k == 'T' || k == 'L') && args[i].n > 0)
      dev = args[i].device;
    else
      continue;
    if (first < 0) {
      first = i;
    } else if (dev != args[first].device) {
      *err =
          nif_error(c, "tensors live on different devices (argument %d on %s, argument %d on %s)",
                    first + 1, emlx_device_name(args[first].device), i + 1, emlx_device_name(dev));
      return false;
    }
  }
  return true;
}

static ERL_NIF_TERM nif_dispatch(const nif_row *row,
                                 ERL_NIF_TERM (*self)(ErlNifEnv *, int, const ERL_NIF_TERM[]),
                                 ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  nif_call c = {env, row, argc, argv, self};
  nif_arg args[NIF_MAX_ARGS];
  ERL_NIF_TERM result;
  int n = 0;
  for (; n < argc; n++) {
    if (!nif_decode_arg(&c, row->sig[n], argv[n], n, &args[n], &result)) {
      n++; /* the failed argument may hold partial state */
      goto done;
    }
  }
  if (!(row->flags & NIF_ROW_ANY_DEVICE) && !check_devices(&c, args, n, &result))
    goto done;
  result = row->fn(&c, args);
done:
  nif_args_release(row->sig, args, n);
  return result;
}

const nif_row *nif_find_row(const char *name, int arity) {
  for (int r = 0; r < ROW_COUNT; r++)
    if ((int)strlen(rows[r].sig) == arity && strcmp(rows[r].name, name) == 0)
      return &rows[r];
  return NULL;
}

bool nif_row_name_exists(const char *name) {
  for (int r = 0; r < ROW_COUNT; r++)
    if (strcmp(rows[r].name, name) == 0)
      return true;
  return false;
}

ERL_NIF_TERM nif_call_row(ErlNifEnv *env, const nif_row *row, int argc, const ERL_NIF_TERM argv[]) {
  return nif_dispatch(row, NULL, env, argc, argv);
}

bool nif_on_normal_scheduler(void) { return enif_thread_type() == ERL_NIF_THR_NORMAL_SCHEDULER; }

ERL_NIF_TERM nif_reschedule_dirty(nif_call *c) {
  if (!c->self) /* a row called by the program interpreter: already off the scheduler */
    return nif_error(c, "cannot move to a dirty scheduler from inside a program");
  return enif_schedule_nif(c->env, c->row->name, ERL_NIF_DIRTY_JOB_CPU_BOUND, c->self, c->argc,
                           c->argv);
}

/* ---- results ------------------------------------------------------------------- */

ERL_NIF_TERM nif_make_string(ErlNifEnv *env, const char *msg) {
  size_t len = strlen(msg);
  ERL_NIF_TERM term;
  unsigned char *p = enif_make_new_binary(env, len, &term);
  if (p)
    memcpy(p, msg, len);
  return term;
}

ERL_NIF_TERM nif_ok(nif_call *c, ERL_NIF_TERM value) {
  return enif_make_tuple2(c->env, nif_atom.ok, value);
}

ERL_NIF_TERM nif_error(nif_call *c, const char *fmt, ...) {
  char msg[1024];
  int len = snprintf(msg, sizeof msg, "%s: ", c->row->name);
  va_list ap;
  va_start(ap, fmt);
  enif_vsnprintf(msg + len, sizeof msg - (size_t)len, fmt, ap);
  va_end(ap);
  return enif_make_tuple2(c->env, nif_atom.error, nif_make_string(c->env, msg));
}

ERL_NIF_TERM nif_engine_error(nif_call *c) {
  const char *e = emlx_last_error();
  if (!e || !*e)
    e = "the engine failed without a message";
  size_t len = strlen(c->row->name);
  if (strncmp(e, c->row->name, len) == 0 && e[len] == ':')
    return enif_make_tuple2(c->env, nif_atom.error, nif_make_string(c->env, e));
  return nif_error(c, "%s", e);
}

ERL_NIF_TERM nif_device_atom(emlx_device dev) {
  return dev == EMLX_GPU ? nif_atom.gpu : nif_atom.cpu;
}

ERL_NIF_TERM nif_make_tensor(ErlNifEnv *env, emlx_array *a, int *ok) {
  nif_tensor *t = enif_alloc_resource(nif_res.tensor, sizeof *t);
  if (!t) {
    emlx_release(a);
    *ok = 0;
    return 0;
  }
  atomic_flag_clear(&t->lock);
  t->array = a;
  atomic_init(&t->exported, false);
  atomic_fetch_add_explicit(&nif_count.tensors, 1, memory_order_relaxed);
  ERL_NIF_TERM ref = enif_make_resource(env, t);
  enif_release_resource(t);
  *ok = 1;
  return enif_make_tuple2(env, nif_device_atom(emlx_array_device(a)), ref);
}

ERL_NIF_TERM nif_ok_tensor(nif_call *c, emlx_array *a) {
  if (!a)
    return nif_engine_error(c);
  int ok;
  ERL_NIF_TERM t = nif_make_tensor(c->env, a, &ok);
  if (!ok)
    return nif_error(c, "out of memory for the tensor resource");
  return nif_ok(c, t);
}

ERL_NIF_TERM nif_dtype_term(ErlNifEnv *env, emlx_dtype dtype) {
  static const struct {
    char kind;
    int bits;
  } nx[EMLX_DTYPE_COUNT] = {
      [EMLX_BOOL] = {'b', 8},      [EMLX_UINT8] = {'u', 8},      [EMLX_UINT16] = {'u', 16},
      [EMLX_UINT32] = {'u', 32},   [EMLX_UINT64] = {'u', 64},    [EMLX_INT8] = {'s', 8},
      [EMLX_INT16] = {'s', 16},    [EMLX_INT32] = {'s', 32},     [EMLX_INT64] = {'s', 64},
      [EMLX_FLOAT16] = {'f', 16},  [EMLX_FLOAT32] = {'f', 32},   [EMLX_FLOAT64] = {'f', 64},
      [EMLX_BFLOAT16] = {'B', 16}, [EMLX_COMPLEX64] = {'c', 64},    [EMLX_COMPLEX128] = {'c', 128},
  };
  if ((int)dtype < 0 || dtype >= EMLX_DTYPE_COUNT)
    return nif_atom.nil;
  if (dtype == EMLX_BOOL)
    return nif_atom.mlx_name[EMLX_BOOL];
  ERL_NIF_TERM kind;
  switch (nx[dtype].kind) {
  case 'u':
    kind = nif_atom.k_u;
    break;
  case 's':
    kind = nif_atom.k_s;
    break;
  case 'f':
    kind = nif_atom.k_f;
    break;
  case 'B':
    kind = nif_atom.k_bf;
    break;
  default:
    kind = nif_atom.k_c;
    break;
  }
  return enif_make_tuple2(env, kind, enif_make_int(env, nx[dtype].bits));
}

ERL_NIF_TERM nif_make_number(ErlNifEnv *env, double v) {
  if (isnan(v))
    return nif_atom.nan;
  if (isinf(v))
    return v > 0 ? nif_atom.infinity : nif_atom.neg_infinity;
  return enif_make_double(env, v);
}

/* ---- resources ------------------------------------------------------------------- */

static void tensor_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  nif_tensor *t = obj;
  nif_local_forget(t);
  emlx_release(t->array);
  t->array = NULL;
  atomic_fetch_sub_explicit(&nif_count.tensors, 1, memory_order_relaxed);
}

static void blob_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  emlx_array **a = obj;
  emlx_release(*a);
  atomic_fetch_sub_explicit(&nif_count.blobs, 1, memory_order_relaxed);
}

void nif_queue_dtor(ErlNifEnv *env, void *obj); /* nif_async.c */

/* ---- loading --------------------------------------------------------------------- */

static void make_atoms(ErlNifEnv *env) {
  nif_atom.ok = enif_make_atom(env, "ok");
  nif_atom.error = enif_make_atom(env, "error");
  nif_atom.nil = enif_make_atom(env, "nil");
  nif_atom.true_ = enif_make_atom(env, "true");
  nif_atom.false_ = enif_make_atom(env, "false");
  nif_atom.cpu = enif_make_atom(env, "cpu");
  nif_atom.gpu = enif_make_atom(env, "gpu");
  nif_atom.nan = enif_make_atom(env, "nan");
  nif_atom.infinity = enif_make_atom(env, "infinity");
  nif_atom.neg_infinity = enif_make_atom(env, "neg_infinity");
  nif_atom.complex = enif_make_atom(env, "complex");
  nif_atom.already_deallocated = enif_make_atom(env, "already_deallocated");
  nif_atom.active_memory = enif_make_atom(env, "active_memory");
  nif_atom.peak_memory = enif_make_atom(env, "peak_memory");
  nif_atom.cache_memory = enif_make_atom(env, "cache_memory");
  nif_atom.tensors = enif_make_atom(env, "tensors");
  nif_atom.queues = enif_make_atom(env, "queues");
  nif_atom.jobs = enif_make_atom(env, "jobs");
  nif_atom.blobs = enif_make_atom(env, "blobs");
  nif_atom.k_u = enif_make_atom(env, "u");
  nif_atom.k_s = enif_make_atom(env, "s");
  nif_atom.k_f = enif_make_atom(env, "f");
  nif_atom.k_bf = enif_make_atom(env, "bf");
  nif_atom.k_c = enif_make_atom(env, "c");
  static const char *const shorts[EMLX_DTYPE_COUNT] = {
      [EMLX_BOOL] = "bool",     [EMLX_UINT8] = "u8",      [EMLX_UINT16] = "u16",
      [EMLX_UINT32] = "u32",    [EMLX_UINT64] = "u64",    [EMLX_INT8] = "s8",
      [EMLX_INT16] = "s16",     [EMLX_INT32] = "s32",     [EMLX_INT64] = "s64",
      [EMLX_FLOAT16] = "f16",   [EMLX_FLOAT32] = "f32",   [EMLX_FLOAT64] = "f64",
      [EMLX_BFLOAT16] = "bf16", [EMLX_COMPLEX64] = "c64",   [EMLX_COMPLEX128] = "c128",
  };
  for (int d = 0; d < EMLX_DTYPE_COUNT; d++) {
    nif_atom.mlx_name[d] = enif_make_atom(env, emlx_dtype_name((emlx_dtype)d));
    nif_atom.nx_short[d] = enif_make_atom(env, shorts[d]);
  }
}

static int open_resources(ErlNifEnv *env) {
  ErlNifResourceFlags flags = ERL_NIF_RT_CREATE | ERL_NIF_RT_TAKEOVER;
  nif_res.tensor = enif_open_resource_type(env, NULL, "emlx_tensor", tensor_dtor, flags, NULL);
  nif_res.queue = enif_open_resource_type(env, NULL, "emlx_queue", nif_queue_dtor, flags, NULL);
  nif_res.blob = enif_open_resource_type(env, NULL, "emlx_blob", blob_dtor, flags, NULL);
  nif_res.program =
      enif_open_resource_type(env, NULL, "emlx_program", nif_program_dtor, flags, NULL);
  return nif_res.tensor && nif_res.queue && nif_res.blob && nif_res.program ? 0 : -1;
}

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info) {
  (void)priv;
  (void)info;
  make_atoms(env);
  if (open_resources(env) != 0)
    return -1;
  return nif_async_load(env);
}

static int upgrade(ErlNifEnv *env, void **priv, void **old_priv, ERL_NIF_TERM info) {
  (void)old_priv;
  return load(env, priv, info);
}

ERL_NIF_INIT(Elixir.EMLX.NIF, nif_funcs, load, NULL, upgrade, NULL)
