/* emlx_nif.h — the private contract between the files of the Erlang NIF.
 *
 * The NIF is table driven: c_src/nif_rows.h lists every function once (its
 * Erlang name, its argument signature and the C handler), and one generic
 * dispatcher (emlx_nif.c) decodes and validates the arguments from the
 * signature before the handler runs. A handler therefore sees only valid,
 * decoded arguments (nif_arg) and returns a term built with the helpers
 * below. Graph-building handlers run on the calling scheduler (they only make
 * lazy nodes); handlers that compute submit a job to a command queue and
 * return at once, the result arriving later as a message (nif_async.c). */
#ifndef EMLX_NIF_H
#define EMLX_NIF_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <erl_nif.h>

#include "emlx.h"

/* Most arguments a row may take, and most entries in an integer list. */
#define NIF_MAX_ARGS 16
#define NIF_MAX_INTS EMLX_MAX_NDIM

/* ---- atoms ---------------------------------------------------------------- */
typedef struct nif_atoms {
  ERL_NIF_TERM ok, error, nil, true_, false_, cpu, gpu, nan, infinity, neg_infinity, complex;
  ERL_NIF_TERM already_deallocated, active_memory, peak_memory, cache_memory;
  ERL_NIF_TERM tensors, queues, jobs, blobs;
  /* Nx type kinds */
  ERL_NIF_TERM k_u, k_s, k_f, k_bf, k_c;
  /* dtype names: MLX's (float32, ...) and Nx's short forms (f32, ...) */
  ERL_NIF_TERM mlx_name[EMLX_DTYPE_COUNT];
  ERL_NIF_TERM nx_short[EMLX_DTYPE_COUNT];
} nif_atoms;

extern nif_atoms nif_atom;

/* ---- resources ------------------------------------------------------------ */
/* A tensor: one reference to an engine array, or NULL once deallocated. The
 * spin lock makes "retain unless deallocated" and "deallocate" atomic with
 * respect to each other (a scheduler may decode the tensor while another
 * deallocates it). */
typedef struct nif_tensor {
  atomic_flag lock;
  emlx_array *array;
  atomic_bool exported; /* it gave out a :local address (nif_pointers.c) */
} nif_tensor;

/* nif_pointers.c: records that owner, holding a, gave out address (size
 * bytes) — false when out of memory; forgets every address owner gave. */
bool nif_local_export(nif_tensor *owner, const emlx_array *a, uintptr_t address, size_t size);
void nif_local_forget(nif_tensor *owner);

/* A command queue: the engine queue and its device. Default queues belong to
 * the engine and are never freed; others are freed (off the scheduler) when
 * the last reference dies. */
typedef struct nif_queue {
  emlx_queue *queue;
  emlx_device device;
  bool is_default;
} nif_queue;

/* A compiled program (nif_program.c): one reference, released by the
 * resource's destructor. */
typedef struct nif_program {
  emlx_program *program;
} nif_program;

typedef struct nif_resources {
  ErlNifResourceType *tensor;  /* nif_tensor */
  ErlNifResourceType *program; /* nif_program */
  ErlNifResourceType *queue;   /* nif_queue */
  ErlNifResourceType *blob;    /* emlx_array * keeping a zero-copy binary alive */
} nif_resources;

extern nif_resources nif_res;

/* Live objects, for leak checks (EMLX.NIF.nif_stats/0). */
typedef struct nif_counters {
  _Atomic long tensors, queues, jobs, blobs;
} nif_counters;

extern nif_counters nif_count;

/* ---- decoded arguments ---------------------------------------------------- */
typedef enum nif_scalar_kind {
  NIF_SCALAR_INT,
  NIF_SCALAR_UINT,
  NIF_SCALAR_FLOAT,
  NIF_SCALAR_COMPLEX
} nif_scalar_kind;

typedef struct nif_scalar {
  nif_scalar_kind kind;
  int64_t i;
  uint64_t u;
  double f;  /* FLOAT; the real part for COMPLEX */
  double im; /* COMPLEX */
} nif_scalar;

typedef struct nif_arg {
  ERL_NIF_TERM term;
  /* 't' and 'o': a retained array (NULL for an absent optional tensor) */
  emlx_array *array;
  nif_tensor *tensor;
  emlx_device device;         /* 't', 'o' (when present), 'd' */
  int64_t i;                  /* 'i', 'u' */
  uint64_t u;                 /* 'U' */
  double f;                   /* 'f' */
  bool b;                     /* 'b'; also 'Y' (true when a boolean was given) */
  bool present;               /* 'A' and 'o': false for nil */
  emlx_dtype dtype;           /* 'y', 'Y' */
  nif_scalar scalar;          /* 'x' */
  int n;                      /* entries of ints / axes / arrays */
  int64_t ints[NIF_MAX_INTS]; /* 's', 'R', 'n', 'a', 'A' */
  int axes[NIF_MAX_INTS];     /* 'a', 'A' (the same values as int) */
  emlx_array **arrays;        /* 'T': n retained arrays (enif_alloc'd) */
  ErlNifBinary bin;           /* 'B', 'S' */
  char str[256];              /* 'S': NUL-terminated copy */
  nif_queue *queue;           /* 'q' */
  nif_program *program;       /* 'P' */
} nif_arg;

/* ---- rows ----------------------------------------------------------------- */
typedef struct nif_call nif_call;
typedef ERL_NIF_TERM (*nif_handler)(nif_call *c, nif_arg *a);

enum nif_row_flags {
  NIF_ROW_ANY_DEVICE = 1u << 0, /* tensor arguments may live on different devices */
};

typedef struct nif_row {
  const char *name; /* the Erlang name, also used in error messages */
  const char *sig;  /* one kind letter per argument (see nif_decode.c) */
  unsigned flags;
  nif_handler fn;
} nif_row;

struct nif_call {
  ErlNifEnv *env;
  const nif_row *row;
  int argc;
  const ERL_NIF_TERM *argv;
  /* the row's entry point, for handlers that move themselves to a dirty
   * scheduler (nif_reschedule_dirty) */
  ERL_NIF_TERM (*self)(ErlNifEnv *, int, const ERL_NIF_TERM[]);
};

/* Default inline limits of the computing rows (nif_async.c): a pending graph
 * of at most this many lazy nodes and element-operations is evaluated on the
 * calling scheduler. */
#define NIF_INLINE_MAX_NODES 64
#define NIF_INLINE_MAX_WORK 32768

/* Copies above this many bytes run on a dirty CPU scheduler. */
#define NIF_DIRTY_BYTES ((size_t)1 << 20)
/* True on an ordinary (non-dirty) scheduler thread. */
bool nif_on_normal_scheduler(void);
/* Re-runs the current call on a dirty CPU scheduler. */
ERL_NIF_TERM nif_reschedule_dirty(nif_call *c);

/* ---- results (emlx_nif.c) -------------------------------------------------- */
ERL_NIF_TERM nif_ok(nif_call *c, ERL_NIF_TERM value);
/* {:error, "<name>: <message>"}; the format understands enif's %T. */
ERL_NIF_TERM nif_error(nif_call *c, const char *fmt, ...);
/* {:error, ...} from emlx_last_error(), prefixed with the row's name. */
ERL_NIF_TERM nif_engine_error(nif_call *c);
/* {:ok, {device, ref}} taking ownership of a, or the engine error when a is NULL. */
ERL_NIF_TERM nif_ok_tensor(nif_call *c, emlx_array *a);
/* {device, ref} for a (ownership passes to the new resource); works in any env,
 * including a message env on a non-scheduler thread. Returns 0 on failure. */
ERL_NIF_TERM nif_make_tensor(ErlNifEnv *env, emlx_array *a, int *ok);
/* A binary term holding msg. */
ERL_NIF_TERM nif_make_string(ErlNifEnv *env, const char *msg);
ERL_NIF_TERM nif_device_atom(emlx_device dev);
/* The Nx-style type term of a dtype ({:f, 32}, ..., :bool for bool). */
ERL_NIF_TERM nif_dtype_term(ErlNifEnv *env, emlx_dtype dtype);
/* A double as a term: numbers, or :nan / :infinity / :neg_infinity. */
ERL_NIF_TERM nif_make_number(ErlNifEnv *env, double v);

/* ---- tensors (nif_decode.c) -------------------------------------------------- */
/* The tensor's array, retained, or NULL once deallocated. */
emlx_array *nif_tensor_get(nif_tensor *t);
/* Replaces the tensor's array by a (taking ownership); the old one is released. */
void nif_tensor_swap(nif_tensor *t, emlx_array *a);
/* Detaches and releases the array; false when it was already gone. */
bool nif_tensor_deallocate(nif_tensor *t);

/* Decodes argv per the row's signature into a; on failure returns false with
 * the error term in *err. Arguments decoded so far must still be released
 * with nif_args_release. */
bool nif_decode_arg(nif_call *c, char kind, ERL_NIF_TERM term, int index, nif_arg *a,
                    ERL_NIF_TERM *err);
void nif_args_release(const char *sig, nif_arg *args, int n);

/* Row-major dense strides? (a must be evaluated.) */
bool nif_is_row_contiguous(const emlx_array *a);

/* nil axes: the engine's default (NULL: every axis, or the reversed order for
 * transpose). */
#define AXES(arg) ((arg).present ? (arg).axes : NULL)
#define NAXES(arg) ((arg).present ? (arg).n : 0)

/* The int64 axis of argument k as an int, or an error return. */
#define AXIS_ARG(var, k)                                                                           \
  if (a[k].i < INT32_MIN || a[k].i > INT32_MAX)                                                    \
    return nif_error(c, "argument %d: axis %ld is out of range", (k) + 1, (long)a[k].i);           \
  int var = (int)a[k].i

/* ---- handlers ------------------------------------------------------------------ */
#define NIF_HANDLER(fn) ERL_NIF_TERM fn(nif_call *c, nif_arg *a)
#define X(cname, name, sig, flags, fn) NIF_HANDLER(fn);
#include "nif_rows.h"
EMLX_NIF_ROWS(X)
#undef X

/* Loading: resource types and the engine's default state (nif_async.c). */
int nif_async_load(ErlNifEnv *env);

/* ---- rows called by other rows (emlx_nif.c; the program interpreter) ---------- */
/* The row of that Erlang name and arity, or NULL. */
const nif_row *nif_find_row(const char *name, int arity);
/* Whether some row has that name (at any arity). */
bool nif_row_name_exists(const char *name);
/* Decodes argv per the row's signature and runs its handler in env, exactly
 * as a call from Erlang would (but never rescheduled: call it on a dirty
 * scheduler or for rows that do not reschedule). */
ERL_NIF_TERM nif_call_row(ErlNifEnv *env, const nif_row *row, int argc, const ERL_NIF_TERM argv[]);
/* The current inline limits of the computing rows (nif_async.c). */
void nif_inline_limits(int64_t *max_nodes, int64_t *max_work);
/* The program resource's destructor (nif_program.c). */
void nif_program_dtor(ErlNifEnv *env, void *obj);
/* Compiles a program spec (nif_program_spec.c) for call c, or NULL with the
 * message in err. */
emlx_program *nif_program_from_spec(nif_call *c, ERL_NIF_TERM spec, char *err, size_t errlen);

#endif
