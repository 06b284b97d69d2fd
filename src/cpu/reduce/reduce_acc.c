/* reduce_acc.c — the accumulators of the six reductions over axes: what the
 * driver (reduce_driver.c) folds into, how two partials combine and how
 * accumulators become output elements; and the pick of the fold loops'
 * ISA table (reduce_fold.h, which also says the accumulator types).
 *
 * Sum and max fold into wide accumulators (double, uint64, int64, two
 * doubles for complex sums, emlx_c128 for complex128 maxima) that finish into the output dtype; product, min,
 * all and any fold into the input's own type (f32 for f16/bf16). */
#include <math.h>
#include <string.h>

#include "reduce_driver.h"
#include "reduce_fold.h"

/* ---- the ISA table -------------------------------------------------------- */
const emlx_cpu_reduce_table *emlx_cpu_reduce_get(void) {
  const char *name = emlx_cpu_isa_get()->name;
  if (!strcmp(name, "avx512"))
    return &emlx_cpu_reduce_avx512;
  if (!strcmp(name, "avx2"))
    return &emlx_cpu_reduce_avx2;
  return &emlx_cpu_reduce_scalar;
}

/* ---- sum and max: wide accumulators ---------------------------------------- */
/* ACC_C128: two doubles, a complex sum (finished into c64 or c128);
 * ACC_Z128: an emlx_c128, a complex128 maximum. */
typedef enum { ACC_F64, ACC_C128, ACC_U64, ACC_I64, ACC_C64, ACC_BOOL, ACC_Z128 } acc_kind;

static acc_kind wide_kind_of(int op, emlx_dtype dt) {
  if (emlx_dtype_is_float(dt))
    return ACC_F64;
  if (dt == EMLX_COMPLEX64)
    return op == EMLX_RED_SUM ? ACC_C128 : ACC_C64;
  if (dt == EMLX_COMPLEX128)
    return op == EMLX_RED_SUM ? ACC_C128 : ACC_Z128;
  if (op == EMLX_RED_SUM)
    return ACC_U64;
  if (dt == EMLX_BOOL)
    return ACC_BOOL;
  return emlx_dtype_is_signed(dt) ? ACC_I64 : ACC_U64;
}

static void wide_init(const emlx_red_plan *p, void *acc, int64_t count) {
  if (p->op == EMLX_RED_SUM || p->kind == ACC_U64 || p->kind == ACC_BOOL) {
    memset(acc, 0, (size_t)count * p->acc_es);
    return;
  }
  for (int64_t i = 0; i < count; i++) {
    if (p->kind == ACC_F64) {
      ((double *)acc)[i] = -(double)INFINITY;
    } else if (p->kind == ACC_I64) {
      ((int64_t *)acc)[i] = INT64_MIN;
    } else if (p->kind == ACC_Z128) {
      emlx_c128 lo = {-(double)INFINITY, -(double)INFINITY};
      ((emlx_c128 *)acc)[i] = lo;
    } else {
      emlx_c64 lo = {-INFINITY, -INFINITY};
      ((emlx_c64 *)acc)[i] = lo;
    }
  }
}

/* dst = fold(dst, src) for one accumulator. */
static void wide_combine(const emlx_red_plan *p, void *dst, const void *src) {
  switch (p->kind) {
  case ACC_F64: {
    double s;
    memcpy(&s, src, sizeof s);
    if (p->op == EMLX_RED_SUM)
      *(double *)dst += s;
    else
      emlx_cv_max_f64_into((double *)dst, s);
    break;
  }
  case ACC_C128:
    ((double *)dst)[0] += ((const double *)src)[0];
    ((double *)dst)[1] += ((const double *)src)[1];
    break;
  case ACC_U64:
  case ACC_BOOL: {
    uint64_t s = *(const uint64_t *)src, *d = (uint64_t *)dst;
    if (p->op == EMLX_RED_SUM)
      *d += s;
    else if (s > *d)
      *d = s;
    break;
  }
  case ACC_I64: {
    int64_t s = *(const int64_t *)src;
    if (s > *(int64_t *)dst)
      *(int64_t *)dst = s;
    break;
  }
  case ACC_C64:
    emlx_cv_max_c64_into((emlx_c64 *)dst, *(const emlx_c64 *)src);
    break;
  case ACC_Z128:
    emlx_cv_max_c128_into((emlx_c128 *)dst, *(const emlx_c128 *)src);
    break;
  }
}

/* count accumulators -> count output elements. */
static void wide_finish(const emlx_red_plan *p, const void *acc, char *out, int64_t count) {
  switch (p->kind) {
  case ACC_F64:
    p->f64_to_out(acc, 1, out, count);
    break;
  case ACC_C128:
    if (p->out_dt == EMLX_COMPLEX128) {
      memcpy(out, acc, (size_t)count * 16);
      break;
    }
    for (int64_t i = 0; i < count; i++) {
      emlx_c64 v = {(float)((const double *)acc)[2 * i], (float)((const double *)acc)[2 * i + 1]};
      memcpy(out + i * 8, &v, 8);
    }
    break;
  case ACC_U64:
  case ACC_I64: /* wrap: keep the low bytes (little-endian) */
    for (int64_t i = 0; i < count; i++)
      memcpy(out + i * (int64_t)p->out_es, (const char *)acc + i * 8, p->out_es);
    break;
  case ACC_BOOL:
    for (int64_t i = 0; i < count; i++)
      out[i] = (char)(((const uint64_t *)acc)[i] != 0);
    break;
  case ACC_C64:
    memcpy(out, acc, (size_t)count * 8);
    break;
  case ACC_Z128:
    memcpy(out, acc, (size_t)count * 16);
    break;
  }
}

/* ---- product, min, all and any: the input's own type ---------------------- */
static size_t own_size(int op, emlx_dtype dt) {
  if (op == EMLX_RED_ALL || op == EMLX_RED_ANY)
    return 1;
  if (dt == EMLX_FLOAT16 || dt == EMLX_BFLOAT16)
    return 4;
  return emlx_dtype_size(dt);
}

void emlx_cpu_fold_identity(emlx_fold_kind kind, emlx_dtype dt, unsigned char id[16]) {
  union {
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    int8_t s8;
    int16_t s16;
    int32_t s32;
    int64_t s64;
    float f32;
    double f64;
    emlx_c64 c64;
    emlx_c128 c128;
  } v;
  memset(&v, 0, sizeof v);
  if (kind == EMLX_FOLD_PROD) {
    switch (dt) {
    case EMLX_FLOAT16:
    case EMLX_BFLOAT16:
    case EMLX_FLOAT32:
      v.f32 = 1.0f;
      break;
    case EMLX_FLOAT64:
      v.f64 = 1.0;
      break;
    case EMLX_COMPLEX64:
      v.c64.re = 1.0f;
      break;
    case EMLX_COMPLEX128:
      v.c128.re = 1.0;
      break;
    default:
      v.u64 = 1; /* little-endian: 1 in every integer width, and true */
    }
    memcpy(id, &v, 16);
    return;
  }
  bool hi = kind == EMLX_FOLD_MIN; /* min starts high, max low */
  switch (dt) {
  case EMLX_BOOL:
    v.u8 = hi;
    break;
  case EMLX_UINT8:
    v.u8 = hi ? UINT8_MAX : 0;
    break;
  case EMLX_UINT16:
    v.u16 = hi ? UINT16_MAX : 0;
    break;
  case EMLX_UINT32:
    v.u32 = hi ? UINT32_MAX : 0;
    break;
  case EMLX_UINT64:
    v.u64 = hi ? UINT64_MAX : 0;
    break;
  case EMLX_INT8:
    v.s8 = hi ? INT8_MAX : INT8_MIN;
    break;
  case EMLX_INT16:
    v.s16 = hi ? INT16_MAX : INT16_MIN;
    break;
  case EMLX_INT32:
    v.s32 = hi ? INT32_MAX : INT32_MIN;
    break;
  case EMLX_INT64:
    v.s64 = hi ? INT64_MAX : INT64_MIN;
    break;
  case EMLX_FLOAT16:
  case EMLX_BFLOAT16:
  case EMLX_FLOAT32:
    v.f32 = hi ? INFINITY : -INFINITY;
    break;
  case EMLX_FLOAT64:
    v.f64 = hi ? (double)INFINITY : -(double)INFINITY;
    break;
  case EMLX_COMPLEX64:
    v.c64.re = v.c64.im = hi ? INFINITY : -INFINITY;
    break;
  case EMLX_COMPLEX128:
    v.c128.re = v.c128.im = hi ? (double)INFINITY : -(double)INFINITY;
    break;
  default:
    break;
  }
  memcpy(id, &v, 16);
}

/* The identity of op in accumulator form (at most 16 bytes). */
static void own_identity(int op, emlx_dtype dt, unsigned char *id) {
  memset(id, 0, 16);
  if (op == EMLX_RED_ALL || op == EMLX_RED_ANY) {
    id[0] = op == EMLX_RED_ALL;
    return;
  }
  emlx_cpu_fold_identity(op == EMLX_RED_PROD ? EMLX_FOLD_PROD : EMLX_FOLD_MIN, dt, id);
}

static void own_init(const emlx_red_plan *p, void *acc, int64_t count) {
  unsigned char id[16];
  own_identity(p->op, p->in_dt, id);
  for (int64_t i = 0; i < count; i++)
    memcpy((char *)acc + i * (int64_t)p->acc_es, id, p->acc_es);
}

/* dst = fold(dst, src) for one accumulator: the column loop over one
 * "column" with the partial as the row does exactly that. */
static void own_combine(const emlx_red_plan *p, void *dst, const void *src) {
  if (p->in_dt == EMLX_FLOAT16 || p->in_dt == EMLX_BFLOAT16) { /* f32 accumulators */
    float s, *d = (float *)dst;
    memcpy(&s, src, sizeof s);
    if (p->op == EMLX_RED_PROD)
      *d *= s;
    else
      emlx_red_min_f32_into(d, s);
    return;
  }
  if (p->op == EMLX_RED_ALL) {
    *(uint8_t *)dst &= *(const uint8_t *)src;
    return;
  }
  if (p->op == EMLX_RED_ANY) {
    *(uint8_t *)dst |= *(const uint8_t *)src;
    return;
  }
  if (p->op == EMLX_RED_PROD && emlx_dtype_is_integer(p->in_dt)) {
    /* by the accumulator's width: a widening cast's source (reduce.c) may be
     * narrower than the accumulator, so the column loop would misread it */
    if (p->acc_es == 8)
      *(uint64_t *)dst *= *(const uint64_t *)src;
    else
      *(uint32_t *)dst *= *(const uint32_t *)src;
    return;
  }
  /* the others accumulate in the input's own type: its column loop. */
  p->col(src, 1, 1, dst);
}

/* count accumulators -> count output elements. */
static void own_finish(const emlx_red_plan *p, const void *acc, char *out, int64_t count) {
  if (p->acc_to_out) { /* the min of a widening cast's source (reduce.c) */
    p->acc_to_out(acc, 1, out, count);
    return;
  }
  if (p->out_dt == EMLX_FLOAT16 || p->out_dt == EMLX_BFLOAT16) {
    const float *a = (const float *)acc;
    uint16_t *o = (uint16_t *)(void *)out;
    for (int64_t i = 0; i < count; i++)
      o[i] = p->out_dt == EMLX_FLOAT16 ? emlx_cv_f32_to_f16(a[i]) : emlx_cv_f32_to_bf16(a[i]);
    return;
  }
  memcpy(out, acc, (size_t)count * p->out_es); /* same type and size */
}

/* ---- the plan's accumulator ------------------------------------------------ */
void emlx_cpu_red_acc_setup(emlx_red_plan *p) {
  if (p->op == EMLX_RED_SUM || p->op == EMLX_RED_MAX) {
    p->kind = wide_kind_of(p->op, p->in_dt);
    p->acc_es = p->kind == ACC_C128 || p->kind == ACC_Z128 ? 16 : 8;
    p->init = wide_init;
    p->combine = wide_combine;
    p->finish = wide_finish;
  } else {
    p->kind = 0;
    p->acc_es = own_size(p->op, p->in_dt);
    p->init = own_init;
    p->combine = own_combine;
    p->finish = own_finish;
  }
}
