/* nif_decode.c — turning Erlang terms into validated C arguments.
 *
 * One decoder per signature letter (see nif_rows.h). Every check that does
 * not need the engine happens here, so a bad term never reaches it: types,
 * list lengths and ranks, negative or out-of-range integers, unknown dtype and
 * device atoms, deallocated tensors and tensors whose {device, ref} tag does
 * not match where they live. Errors name the argument (1-based) and show the
 * offending term, shortened when it is large. */
#include <math.h>
#include <string.h>

#include "emlx_nif.h"

/* ---- tensors ------------------------------------------------------------------ */

static void spin_lock(atomic_flag *f) {
  while (atomic_flag_test_and_set_explicit(f, memory_order_acquire)) {
  }
}

static void spin_unlock(atomic_flag *f) { atomic_flag_clear_explicit(f, memory_order_release); }

emlx_array *nif_tensor_get(nif_tensor *t) {
  spin_lock(&t->lock);
  emlx_array *a = emlx_retain(t->array);
  spin_unlock(&t->lock);
  return a;
}

void nif_tensor_swap(nif_tensor *t, emlx_array *a) {
  spin_lock(&t->lock);
  emlx_array *old = t->array;
  t->array = old ? a : NULL; /* a deallocated tensor stays deallocated */
  spin_unlock(&t->lock);
  if (!old)
    emlx_release(a);
  emlx_release(old);
}

bool nif_tensor_deallocate(nif_tensor *t) {
  spin_lock(&t->lock);
  emlx_array *old = t->array;
  t->array = NULL;
  spin_unlock(&t->lock);
  emlx_release(old);
  return old != NULL;
}

bool nif_is_row_contiguous(const emlx_array *a) {
  const int64_t *strides = emlx_strides(a);
  const int64_t *shape = emlx_shape(a);
  int nd = emlx_ndim(a);
  if (!strides || nd < 0)
    return false;
  if (emlx_size(a) <= 1)
    return true;
  int64_t expect = 1;
  for (int i = nd - 1; i >= 0; i--) {
    if (shape[i] == 1)
      continue;
    if (strides[i] != expect)
      return false;
    expect *= shape[i];
  }
  return true;
}

/* ---- error messages ------------------------------------------------------------ */

/* Whether %T may print the term: small enough to show whole. */
static bool term_is_small(ErlNifEnv *env, ERL_NIF_TERM term, int *budget) {
  if (--*budget < 0)
    return false;
  switch (enif_term_type(env, term)) {
  case ERL_NIF_TERM_TYPE_BITSTRING: {
    ErlNifBinary b;
    return !enif_inspect_binary(env, term, &b) || b.size <= 48;
  }
  case ERL_NIF_TERM_TYPE_LIST: {
    ERL_NIF_TERM head, tail = term;
    while (enif_get_list_cell(env, tail, &head, &tail))
      if (!term_is_small(env, head, budget))
        return false;
    return true;
  }
  case ERL_NIF_TERM_TYPE_TUPLE: {
    int arity;
    const ERL_NIF_TERM *el;
    enif_get_tuple(env, term, &arity, &el);
    for (int i = 0; i < arity; i++)
      if (!term_is_small(env, el[i], budget))
        return false;
    return true;
  }
  case ERL_NIF_TERM_TYPE_MAP: {
    size_t size = 0;
    enif_get_map_size(env, term, &size);
    *budget -= 2 * (int)(size > 64 ? 64 : size);
    return *budget >= 0 && size <= 8;
  }
  default:
    return true;
  }
}

static ERL_NIF_TERM bad_arg(nif_call *c, int index, const char *expected, ERL_NIF_TERM got) {
  int budget = 40;
  if (term_is_small(c->env, got, &budget))
    return nif_error(c, "argument %d: expected %s, got: %T", index + 1, expected, got);
  const char *what;
  switch (enif_term_type(c->env, got)) {
  case ERL_NIF_TERM_TYPE_BITSTRING:
    what = "a large binary";
    break;
  case ERL_NIF_TERM_TYPE_LIST:
    what = "a large list";
    break;
  case ERL_NIF_TERM_TYPE_TUPLE:
    what = "a large tuple";
    break;
  case ERL_NIF_TERM_TYPE_MAP:
    what = "a large map";
    break;
  default:
    what = "a large term";
    break;
  }
  return nif_error(c, "argument %d: expected %s, got %s", index + 1, expected, what);
}

/* ---- scalars -------------------------------------------------------------------- */

static bool get_device(ERL_NIF_TERM term, emlx_device *dev) {
  if (enif_is_identical(term, nif_atom.cpu))
    *dev = EMLX_CPU;
  else if (enif_is_identical(term, nif_atom.gpu))
    *dev = EMLX_GPU;
  else
    return false;
  return true;
}

static bool get_number(ErlNifEnv *env, ERL_NIF_TERM term, double *out) {
  ErlNifSInt64 i;
  if (enif_get_double(env, term, out))
    return true;
  if (enif_get_int64(env, term, &i)) {
    *out = (double)i;
    return true;
  }
  ErlNifUInt64 u;
  if (enif_get_uint64(env, term, &u)) {
    *out = (double)u;
    return true;
  }
  return false;
}

/* A number, or one of :nan, :infinity, :neg_infinity. */
static bool get_extended_number(ErlNifEnv *env, ERL_NIF_TERM term, double *out) {
  if (get_number(env, term, out))
    return true;
  if (enif_is_identical(term, nif_atom.nan))
    *out = (double)NAN;
  else if (enif_is_identical(term, nif_atom.infinity))
    *out = (double)INFINITY;
  else if (enif_is_identical(term, nif_atom.neg_infinity))
    *out = -(double)INFINITY;
  else
    return false;
  return true;
}

static bool get_scalar(ErlNifEnv *env, ERL_NIF_TERM term, nif_scalar *s) {
  ErlNifSInt64 i;
  ErlNifUInt64 u;
  int arity;
  const ERL_NIF_TERM *el;
  memset(s, 0, sizeof *s);
  if (enif_get_int64(env, term, &i)) {
    s->kind = NIF_SCALAR_INT;
    s->i = i;
    s->f = (double)i;
  } else if (enif_get_uint64(env, term, &u)) {
    s->kind = NIF_SCALAR_UINT;
    s->u = u;
    s->f = (double)u;
  } else if (enif_is_identical(term, nif_atom.true_) || enif_is_identical(term, nif_atom.false_)) {
    s->kind = NIF_SCALAR_INT;
    s->i = enif_is_identical(term, nif_atom.true_);
    s->f = (double)s->i;
  } else if (get_extended_number(env, term, &s->f)) {
    s->kind = NIF_SCALAR_FLOAT;
  } else if (enif_get_tuple(env, term, &arity, &el) && arity == 2 &&
             get_extended_number(env, el[0], &s->f) && get_extended_number(env, el[1], &s->im)) {
    s->kind = NIF_SCALAR_COMPLEX;
  } else {
    return false;
  }
  return true;
}

static bool get_dtype(ErlNifEnv *env, ERL_NIF_TERM term, emlx_dtype *out) {
  int arity, bits;
  const ERL_NIF_TERM *el;
  if (enif_is_atom(env, term)) {
    for (int d = 0; d < EMLX_DTYPE_COUNT; d++) {
      if (enif_is_identical(term, nif_atom.mlx_name[d]) ||
          enif_is_identical(term, nif_atom.nx_short[d])) {
        *out = (emlx_dtype)d;
        return true;
      }
    }
    return false;
  }
  if (!enif_get_tuple(env, term, &arity, &el) || arity != 2 || !enif_get_int(env, el[1], &bits))
    return false;
  ERL_NIF_TERM k = el[0];
  if (enif_is_identical(k, nif_atom.k_u)) {
    switch (bits) {
    case 8:
      *out = EMLX_UINT8;
      return true;
    case 16:
      *out = EMLX_UINT16;
      return true;
    case 32:
      *out = EMLX_UINT32;
      return true;
    case 64:
      *out = EMLX_UINT64;
      return true;
    default:
      return false;
    }
  }
  if (enif_is_identical(k, nif_atom.k_s)) {
    switch (bits) {
    case 8:
      *out = EMLX_INT8;
      return true;
    case 16:
      *out = EMLX_INT16;
      return true;
    case 32:
      *out = EMLX_INT32;
      return true;
    case 64:
      *out = EMLX_INT64;
      return true;
    default:
      return false;
    }
  }
  if (enif_is_identical(k, nif_atom.k_f)) {
    switch (bits) {
    case 16:
      *out = EMLX_FLOAT16;
      return true;
    case 32:
      *out = EMLX_FLOAT32;
      return true;
    case 64:
      *out = EMLX_FLOAT64;
      return true;
    default:
      return false;
    }
  }
  if (enif_is_identical(k, nif_atom.k_bf) && bits == 16) {
    *out = EMLX_BFLOAT16;
    return true;
  }
  if (enif_is_identical(k, nif_atom.k_c) && (bits == 64 || bits == 128)) {
    *out = bits == 64 ? EMLX_COMPLEX64 : EMLX_COMPLEX128;
    return true;
  }
  return false;
}

/* ---- integer lists ---------------------------------------------------------------- */

typedef enum { INTS_SHAPE, INTS_RESHAPE, INTS_ANY, INTS_AXES } ints_mode;

/* Reads a list (or, for shapes, a tuple) of at most NIF_MAX_INTS integers. */
static bool get_ints(nif_call *c, ERL_NIF_TERM term, int index, ints_mode mode, nif_arg *a,
                     ERL_NIF_TERM *err) {
  ErlNifEnv *env = c->env;
  static const char *const expected[] = {
      [INTS_SHAPE] = "a shape (a tuple or list of non-negative integers)",
      [INTS_RESHAPE] = "a shape (a tuple or list of integers >= -1)",
      [INTS_ANY] = "a list of integers",
      [INTS_AXES] = "a list of axes (integers)",
  };
  int arity = 0;
  const ERL_NIF_TERM *el = NULL;
  ERL_NIF_TERM head, tail = term;
  bool is_tuple = enif_get_tuple(env, term, &arity, &el);
  if (!is_tuple && !enif_is_list(env, term)) {
    *err = bad_arg(c, index, expected[mode], term);
    return false;
  }
  a->n = 0;
  for (int k = 0;; k++) {
    ERL_NIF_TERM item;
    if (is_tuple) {
      if (k == arity)
        break;
      item = el[k];
    } else {
      if (!enif_get_list_cell(env, tail, &head, &tail)) {
        if (!enif_is_empty_list(env, tail)) {
          *err = bad_arg(c, index, expected[mode], term);
          return false;
        }
        break;
      }
      item = head;
    }
    if (a->n == NIF_MAX_INTS) {
      *err = nif_error(c, "argument %d: more than %d entries", index + 1, NIF_MAX_INTS);
      return false;
    }
    ErlNifSInt64 v;
    if (!enif_get_int64(env, item, &v)) {
      *err = nif_error(c, "argument %d: entry %d is not an integer in the int64 range: %T",
                       index + 1, k + 1, item);
      return false;
    }
    if (mode == INTS_SHAPE && v < 0) {
      *err = nif_error(c, "argument %d: dimension %d is negative (%ld)", index + 1, k + 1, (long)v);
      return false;
    }
    if (mode == INTS_RESHAPE && v < -1) {
      *err = nif_error(c, "argument %d: dimension %d is %ld (only -1 may be negative)", index + 1,
                       k + 1, (long)v);
      return false;
    }
    if (mode == INTS_AXES) {
      if (v < -(ErlNifSInt64)EMLX_MAX_NDIM || v >= (ErlNifSInt64)EMLX_MAX_NDIM) {
        *err = nif_error(c, "argument %d: axis %ld is out of range", index + 1, (long)v);
        return false;
      }
      a->axes[a->n] = (int)v;
    }
    a->ints[a->n++] = v;
  }
  return true;
}

/* ---- the decoder --------------------------------------------------------------------- */

/* A live {device, ref}: its array (retained), resource and device. */
static bool get_tensor_parts(nif_call *c, ERL_NIF_TERM term, int index, emlx_array **array,
                             nif_tensor **tensor, emlx_device *device, ERL_NIF_TERM *err) {
  ErlNifEnv *env = c->env;
  int arity;
  const ERL_NIF_TERM *el;
  nif_tensor *t;
  if (!enif_get_tuple(env, term, &arity, &el) || arity != 2 ||
      !enif_get_resource(env, el[1], nif_res.tensor, (void **)&t) || !enif_is_atom(env, el[0])) {
    *err = bad_arg(c, index, "a tensor {device, reference}", term);
    return false;
  }
  emlx_device dev;
  if (!get_device(el[0], &dev)) {
    *err = nif_error(c, "argument %d: unknown device %T in the tensor tag (expected :cpu or :gpu)",
                     index + 1, el[0]);
    return false;
  }
  emlx_array *arr = nif_tensor_get(t);
  if (!arr) {
    *err = nif_error(c, "argument %d: the tensor was deallocated", index + 1);
    return false;
  }
  if (emlx_array_device(arr) != dev) {
    *err = nif_error(c, "argument %d: the tensor is tagged :%s but lives on %s", index + 1,
                     emlx_device_name(dev), emlx_device_name(emlx_array_device(arr)));
    emlx_release(arr);
    return false;
  }
  *array = arr;
  *tensor = t;
  *device = dev;
  return true;
}

static bool get_tensor(nif_call *c, ERL_NIF_TERM term, int index, nif_arg *a, ERL_NIF_TERM *err) {
  return get_tensor_parts(c, term, index, &a->array, &a->tensor, &a->device, err);
}

#define NIF_MAX_LIST_TENSORS (1 << 16)

static bool get_tensor_list(nif_call *c, ERL_NIF_TERM term, int index, bool may_be_empty,
                            nif_arg *a, ERL_NIF_TERM *err) {
  ErlNifEnv *env = c->env;
  unsigned len;
  if (!enif_get_list_length(env, term, &len) || (len == 0 && !may_be_empty)) {
    *err =
        bad_arg(c, index, may_be_empty ? "a list of tensors" : "a non-empty list of tensors", term);
    return false;
  }
  if (len > NIF_MAX_LIST_TENSORS) {
    *err = nif_error(c, "argument %d: more than %d tensors", index + 1, NIF_MAX_LIST_TENSORS);
    return false;
  }
  a->arrays = enif_alloc((len ? len : 1) * sizeof *a->arrays);
  if (!a->arrays) {
    *err = nif_error(c, "argument %d: out of memory", index + 1);
    return false;
  }
  ERL_NIF_TERM head, tail = term;
  for (unsigned k = 0; k < len; k++) {
    enif_get_list_cell(env, tail, &head, &tail);
    emlx_array *array;
    nif_tensor *tensor;
    emlx_device device;
    if (!get_tensor_parts(c, head, index, &array, &tensor, &device, err))
      return false;
    if (a->n > 0 && device != a->device) {
      emlx_release(array);
      *err = nif_error(c, "argument %d: the tensors live on different devices", index + 1);
      return false;
    }
    a->device = device;
    a->arrays[a->n++] = array;
  }
  return true;
}

bool nif_decode_arg(nif_call *c, char kind, ERL_NIF_TERM term, int index, nif_arg *a,
                    ERL_NIF_TERM *err) {
  ErlNifEnv *env = c->env;
  a->term = term;
  a->array = NULL;
  a->arrays = NULL;
  a->n = 0;
  switch (kind) {
  case 't':
    return get_tensor(c, term, index, a, err);
  case 'r': {
    int arity;
    const ERL_NIF_TERM *el;
    emlx_device dev;
    if (!enif_get_tuple(env, term, &arity, &el) || arity != 2 || !get_device(el[0], &dev) ||
        !enif_get_resource(env, el[1], nif_res.tensor, (void **)&a->tensor)) {
      *err = bad_arg(c, index, "a tensor {device, reference}", term);
      return false;
    }
    a->device = dev;
    return true;
  }
  case 'o':
    a->present = !enif_is_identical(term, nif_atom.nil);
    return !a->present || get_tensor(c, term, index, a, err);
  case 'T':
  case 'L':
    return get_tensor_list(c, term, index, kind == 'L', a, err);
  case 's':
    return get_ints(c, term, index, INTS_SHAPE, a, err);
  case 'R':
    return get_ints(c, term, index, INTS_RESHAPE, a, err);
  case 'n':
    if (enif_is_tuple(env, term))
      break;
    return get_ints(c, term, index, INTS_ANY, a, err);
  case 'a':
  case 'A':
    a->present = !(kind == 'A' && enif_is_identical(term, nif_atom.nil));
    if (!a->present)
      return true;
    if (enif_is_tuple(env, term))
      break;
    return get_ints(c, term, index, INTS_AXES, a, err);
  case 'i': {
    ErlNifSInt64 v;
    if (!enif_get_int64(env, term, &v)) {
      *err = bad_arg(c, index, "an integer in the int64 range", term);
      return false;
    }
    a->i = v;
    return true;
  }
  case 'u': {
    ErlNifSInt64 v;
    if (!enif_get_int64(env, term, &v) || v < 0) {
      *err = bad_arg(c, index, "a non-negative integer in the int64 range", term);
      return false;
    }
    a->i = v;
    return true;
  }
  case 'U': {
    ErlNifUInt64 v;
    if (!enif_get_uint64(env, term, &v)) {
      *err = bad_arg(c, index, "a non-negative integer below 2^64", term);
      return false;
    }
    a->u = v;
    return true;
  }
  case 'f':
    if (!get_number(env, term, &a->f)) {
      *err = bad_arg(c, index, "a number", term);
      return false;
    }
    return true;
  case 'x':
    if (!get_scalar(env, term, &a->scalar)) {
      *err = bad_arg(c, index,
                     "a scalar (an integer, a float, :nan, :infinity, :neg_infinity or {re, im})",
                     term);
      return false;
    }
    return true;
  case 'b':
    if (enif_is_identical(term, nif_atom.true_))
      a->b = true;
    else if (enif_is_identical(term, nif_atom.false_))
      a->b = false;
    else {
      *err = bad_arg(c, index, "a boolean", term);
      return false;
    }
    return true;
  case 'y':
  case 'Y':
    if (kind == 'Y' &&
        (enif_is_identical(term, nif_atom.true_) || enif_is_identical(term, nif_atom.false_))) {
      a->b = true;
      a->dtype = enif_is_identical(term, nif_atom.true_) ? EMLX_INT32 : EMLX_FLOAT32;
      return true;
    }
    a->b = false;
    if (!get_dtype(env, term, &a->dtype)) {
      *err = bad_arg(c, index,
                     kind == 'y' ? "a dtype ({:f, 32}, {:bf, 16}, {:s, 64}, :float32, :bool, ...)"
                                 : "a dtype or a boolean",
                     term);
      return false;
    }
    return true;
  case 'd':
    if (!get_device(term, &a->device)) {
      *err = bad_arg(c, index, "a device (:cpu or :gpu)", term);
      return false;
    }
    return true;
  case 'B':
    if (!enif_inspect_binary(env, term, &a->bin)) {
      *err = bad_arg(c, index, "a binary", term);
      return false;
    }
    return true;
  case 'S':
    if (!enif_inspect_binary(env, term, &a->bin) || a->bin.size == 0 ||
        a->bin.size >= sizeof a->str || memchr(a->bin.data, 0, a->bin.size)) {
      *err = bad_arg(c, index, "a non-empty string of at most 255 bytes without NUL", term);
      return false;
    }
    memcpy(a->str, a->bin.data, a->bin.size);
    a->str[a->bin.size] = '\0';
    return true;
  case 'q':
    if (!enif_get_resource(env, term, nif_res.queue, (void **)&a->queue)) {
      *err = bad_arg(c, index, "a command queue reference", term);
      return false;
    }
    return true;
  case 'P':
    if (!enif_get_resource(env, term, nif_res.program, (void **)&a->program)) {
      *err = bad_arg(c, index, "a compiled program (from program_compile)", term);
      return false;
    }
    return true;
  case 'z': /* any term: the handler decodes it */
    return true;
  case 'k':
    if (!enif_is_ref(env, term)) {
      *err = bad_arg(c, index, "a reference", term);
      return false;
    }
    return true;
  default:
    break;
  }
  /* the fall-through cases: a tuple where a list was expected */
  *err = bad_arg(c, index, kind == 'n' ? "a list of integers" : "a list of axes (integers)", term);
  return false;
}

void nif_args_release(const char *sig, nif_arg *args, int n) {
  for (int i = 0; i < n; i++) {
    emlx_release(args[i].array);
    if ((sig[i] == 'T' || sig[i] == 'L') && args[i].arrays) {
      for (int k = 0; k < args[i].n; k++)
        emlx_release(args[i].arrays[k]);
      enif_free(args[i].arrays);
    }
  }
}
