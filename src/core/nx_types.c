/* nx_types.c — Nx's f8 and sub-byte integer types at the engine's edges
 * (include/emlx/nx_types.h): decoding a packed Nx buffer into a wider dtype
 * and encoding back with Nx.BinaryBackend's own rounding. Host code only;
 * the array versions decode into a temporary and hand it to from_blob, or
 * read the array with to_blob and encode. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A decoded NaN: signalling (quiet bit clear), payload MARK | mantissa of
 * the f8 code (E5M2: 1..3, E4M3FN: 7), the code's sign in the sign bit. */
#define NAN_MARK 0x150u
#define NAN_MARK_MASK 0x1F8u

static const char *const type_names[EMLX_NX_TYPE_COUNT] = {"f8", "f8_e4m3fn", "s2",
                                                           "s4", "u2",        "u4"};

static bool valid_type(emlx_nx_type t) { return (unsigned)t < EMLX_NX_TYPE_COUNT; }
static bool is_f8(emlx_nx_type t) { return t == EMLX_NX_F8_E5M2 || t == EMLX_NX_F8_E4M3FN; }
static bool is_signed_sub(emlx_nx_type t) { return t == EMLX_NX_S2 || t == EMLX_NX_S4; }

int emlx_nx_type_bits(emlx_nx_type t) {
  if (!valid_type(t))
    return 0;
  return is_f8(t) ? 8 : (t == EMLX_NX_S4 || t == EMLX_NX_U4) ? 4 : 2;
}

const char *emlx_nx_type_name(emlx_nx_type t) { return valid_type(t) ? type_names[t] : "invalid"; }

int emlx_nx_type_from_name(const char *name, emlx_nx_type *t) {
  for (int i = 0; name && i < EMLX_NX_TYPE_COUNT; i++)
    if (!strcmp(name, type_names[i])) {
      *t = (emlx_nx_type)i;
      return 0;
    }
  return EMLX_FAIL("nx types: unknown type \"%s\" (expected f8, f8_e4m3fn, s2, s4, u2 or u4)",
                   name ? name : "(null)");
}

size_t emlx_nx_type_nbytes(emlx_nx_type t, int64_t count) {
  int bits = emlx_nx_type_bits(t);
  if (!bits || count < 0 || (uint64_t)count > (UINT64_MAX - 7) / 8 || (uint64_t)count > SIZE_MAX)
    return 0;
  return (size_t)(((uint64_t)count * (uint64_t)bits + 7) / 8);
}

/* ---- f8 values ------------------------------------------------------------------ */

/* The value of an E5M2 / E4M3FN code (NaN codes give NAN). */
static double f8_value(emlx_nx_type t, unsigned code) {
  int sign = code >> 7;
  double v;
  if (t == EMLX_NX_F8_E5M2) {
    unsigned e = (code >> 2) & 31, m = code & 3;
    if (e == 31)
      v = m ? NAN : INFINITY;
    else
      v = e ? ldexp(4.0 + m, (int)e - 17) : ldexp((double)m, -16);
  } else {
    unsigned e = (code >> 3) & 15, m = code & 7;
    if (e == 15 && m == 7)
      v = NAN;
    else
      v = e ? ldexp(8.0 + m, (int)e - 10) : ldexp((double)m, -9);
  }
  return sign ? -v : v;
}

static bool f8_is_nan(emlx_nx_type t, unsigned code) {
  return t == EMLX_NX_F8_E5M2 ? (code & 0x7C) == 0x7C && (code & 3) : (code & 0x7F) == 0x7F;
}

/* IEEE binary16 of x, round to nearest even, overflow to inf (as the BEAM
 * writes <<x::float-16>>); x not NaN. */
static uint16_t f64_to_f16(double x) {
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  double a = fabs(x);
  if (a >= 65520.0) /* half-way between 65504 and 2^16 rounds to even: inf */
    return sign | 0x7C00;
  if (a < 0x1p-14) /* subnormal (or zero): units of 2^-24; 1024 is the first normal */
    return sign | (uint16_t)rint(a * 0x1p24);
  int e;
  frexp(a, &e);                      /* a = f * 2^e, f in [0.5, 1) */
  double q = rint(ldexp(a, 11 - e)); /* 11 significant bits, [1024, 2048] */
  int exp = e - 1 + 15;
  if (q >= 2048.0) {
    q = 1024.0;
    exp++;
  }
  if (exp >= 31)
    return sign | 0x7C00;
  return sign | (uint16_t)(exp << 10) | (uint16_t)((int)q - 1024);
}

/* Nx.Floating.dump_f8_e4m3fn for a finite, non-zero or zero x. */
static unsigned e4m3fn_encode(double x, unsigned flags) {
  if (x == 0.0)
    return signbit(x) && !(flags & EMLX_NX_NEG_ZERO_POSITIVE) ? 0x80 : 0x00;
  double clamped = fmax(-448.0, fmin(448.0, x));
  unsigned sign = clamped < 0 ? 1 : 0;
  double a = sign ? -clamped : clamped;
  double eu = floor(log2(a));
  double exp = eu + 7;
  if (exp <= 0) {
    double m = round(a / pow(2.0, -6.0) * 8);
    return sign << 7 | (unsigned)fmin(7.0, m);
  }
  if (exp > 15)
    return sign << 7 | 0x7E;
  double significand = a / pow(2.0, eu);
  double m = fmax(0.0, fmin(7.0, round((significand - 1.0) * 8)));
  if (exp == 15 && m >= 7)
    return sign << 7 | 0x7E;
  return sign << 7 | (unsigned)exp << 3 | (unsigned)m;
}

/* The code a decoded NaN carries, or -1. payload: the mantissa bits below
 * the quiet bit; quiet: that bit. */
static int marked_code(emlx_nx_type t, unsigned sign, unsigned quiet, uint64_t payload) {
  if (quiet || (payload & ~(uint64_t)0x1FF) || (payload & NAN_MARK_MASK) != NAN_MARK)
    return -1;
  unsigned m = (unsigned)(payload & 7);
  unsigned code = t == EMLX_NX_F8_E5M2 ? (sign << 7 | 0x7C | m) : (sign << 7 | 0x78 | m);
  return m && f8_is_nan(t, code) && (t != EMLX_NX_F8_E5M2 || m <= 3) ? (int)code : -1;
}

/* The code of x read from an element of dtype d at p. */
static unsigned f8_encode(emlx_nx_type t, emlx_dtype d, const unsigned char *p, unsigned flags) {
  double x;
  int code = -1;
  switch (d) {
  case EMLX_FLOAT16: {
    uint16_t h;
    memcpy(&h, p, 2);
    if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF))
      code = marked_code(t, h >> 15, (h >> 9) & 1, h & 0x1FF);
    x = (double)emlx_f16_to_f32(h);
    break;
  }
  case EMLX_BFLOAT16: {
    uint16_t h;
    memcpy(&h, p, 2);
    x = (double)emlx_bf16_to_f32(h);
    break;
  }
  case EMLX_FLOAT32: {
    uint32_t u;
    float f;
    memcpy(&u, p, 4);
    memcpy(&f, p, 4);
    if (isnan(f))
      code = marked_code(t, u >> 31, (u >> 22) & 1, u & 0x3FFFFF);
    x = (double)f;
    break;
  }
  default: { /* EMLX_FLOAT64 */
    uint64_t u;
    memcpy(&u, p, 8);
    memcpy(&x, p, 8);
    if (isnan(x))
      code = marked_code(t, (unsigned)(u >> 63), (unsigned)(u >> 51) & 1, u & 0x7FFFFFFFFFFFFull);
    break;
  }
  }
  if (isnan(x))
    return code >= 0 ? (unsigned)code : t == EMLX_NX_F8_E5M2 ? 0x7E : 0x7F;
  if (t == EMLX_NX_F8_E5M2)
    return f64_to_f16(x) >> 8;
  if (isinf(x))
    return x > 0 ? 0x7E : 0xFE;
  return e4m3fn_encode(x, flags);
}

/* Writes code's value as dtype d at p. */
static void f8_decode(emlx_nx_type t, unsigned code, emlx_dtype d, unsigned char *p) {
  unsigned sign = code >> 7;
  bool nan = f8_is_nan(t, code);
  uint64_t payload = NAN_MARK | (code & (t == EMLX_NX_F8_E5M2 ? 3u : 7u));
  double v = f8_value(t, code);
  switch (d) {
  case EMLX_FLOAT16: {
    uint16_t h = nan ? (uint16_t)(sign << 15 | 0x7C00 | payload) : f64_to_f16(v);
    memcpy(p, &h, 2);
    break;
  }
  case EMLX_FLOAT32: {
    uint32_t u;
    float f = (float)v;
    memcpy(&u, &f, 4);
    if (nan)
      u = sign << 31 | 0x7F800000u | (uint32_t)payload;
    memcpy(p, &u, 4);
    break;
  }
  default: { /* EMLX_FLOAT64 */
    uint64_t u;
    memcpy(&u, &v, 8);
    if (nan)
      u = (uint64_t)sign << 63 | 0x7FF0000000000000ull | payload;
    memcpy(p, &u, 8);
    break;
  }
  }
}

/* ---- sub-byte integers ----------------------------------------------------------- */

static uint64_t read_int(emlx_dtype d, const unsigned char *p) {
  switch (emlx_dtype_size(d)) {
  case 1:
    return *p;
  case 2: {
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
  }
  case 4: {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
  }
  default: {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
  }
  }
}

/* Stores v (already in d's range as a two's-complement pattern) at p. */
static void write_int(emlx_dtype d, uint64_t v, unsigned char *p) {
  switch (emlx_dtype_size(d)) {
  case 1:
    *p = (unsigned char)v;
    break;
  case 2: {
    uint16_t w = (uint16_t)v;
    memcpy(p, &w, 2);
    break;
  }
  case 4: {
    uint32_t w = (uint32_t)v;
    memcpy(p, &w, 4);
    break;
  }
  default:
    memcpy(p, &v, 8);
    break;
  }
}

/* ---- checks ------------------------------------------------------------------------ */

static int check_buffers(const char *op, emlx_nx_type t, emlx_dtype d, int64_t count,
                         const void *packed, size_t packed_bytes, const void *wide,
                         size_t wide_bytes) {
  if (!valid_type(t))
    return EMLX_FAIL("%s: invalid Nx type %d", op, (int)t);
  if (!emlx_dtype_is_valid(d))
    return EMLX_FAIL("%s: invalid dtype", op);
  const char *tn = type_names[t], *dn = emlx_dtype_name(d);
  if (is_f8(t)) {
    bool ok = d == EMLX_FLOAT16 || d == EMLX_FLOAT32 || d == EMLX_FLOAT64 ||
              (d == EMLX_BFLOAT16 && !strcmp(op, "nx_encode"));
    if (!ok)
      return EMLX_FAIL("%s: %s needs a float16, float32 or float64 tensor (got %s)", op, tn, dn);
  } else if (!emlx_dtype_is_integer(d)) {
    return EMLX_FAIL("%s: %s needs an integer tensor (got %s)", op, tn, dn);
  } else if (is_signed_sub(t) && !emlx_dtype_is_signed(d) && !strcmp(op, "nx_decode")) {
    return EMLX_FAIL("nx_decode: %s holds negative values: decode it into a signed dtype (got %s)",
                     tn, dn);
  }
  if (count < 0)
    return EMLX_FAIL("%s: negative count %lld", op, (long long)count);
  size_t need = emlx_nx_type_nbytes(t, count), esize = emlx_dtype_size(d);
  if ((uint64_t)count > SIZE_MAX / esize || (count > 0 && need == 0))
    return EMLX_FAIL("%s: %lld elements are too many", op, (long long)count);
  if (packed_bytes != need)
    return EMLX_FAIL("%s: %lld elements of %s take %zu bytes (got %zu)", op, (long long)count, tn,
                     need, packed_bytes);
  if (wide_bytes != (size_t)count * esize)
    return EMLX_FAIL("%s: %lld elements of %s take %zu bytes (got %zu)", op, (long long)count, dn,
                     (size_t)count * esize, wide_bytes);
  if (count > 0 && (!packed || !wide))
    return EMLX_FAIL("%s: NULL buffer", op);
  return 0;
}

/* ---- the conversions ----------------------------------------------------------------- */

int emlx_nx_decode(emlx_nx_type t, const void *src, size_t src_bytes, int64_t count, emlx_dtype d,
                   void *dst, size_t dst_bytes) {
  if (check_buffers("nx_decode", t, d, count, src, src_bytes, dst, dst_bytes) != 0)
    return -1;
  const unsigned char *s = (const unsigned char *)src;
  unsigned char *o = (unsigned char *)dst;
  size_t esize = emlx_dtype_size(d);
  if (is_f8(t)) {
    for (int64_t i = 0; i < count; i++)
      f8_decode(t, s[i], d, o + (size_t)i * esize);
    return 0;
  }
  int bits = emlx_nx_type_bits(t);
  unsigned mask = (1u << bits) - 1;
  for (int64_t i = 0; i < count; i++) {
    uint64_t bit = (uint64_t)i * (uint64_t)bits;
    unsigned v = (s[bit / 8] >> (8 - bits - bit % 8)) & mask;
    int64_t x = is_signed_sub(t) && (v >> (bits - 1)) ? (int64_t)v - (1 << bits) : (int64_t)v;
    write_int(d, (uint64_t)x, o + (size_t)i * esize);
  }
  return 0;
}

int emlx_nx_encode(emlx_nx_type t, emlx_dtype d, const void *src, size_t src_bytes, int64_t count,
                   void *dst, size_t dst_bytes, unsigned flags) {
  if (check_buffers("nx_encode", t, d, count, dst, dst_bytes, src, src_bytes) != 0)
    return -1;
  const unsigned char *s = (const unsigned char *)src;
  unsigned char *o = (unsigned char *)dst;
  size_t esize = emlx_dtype_size(d);
  if (is_f8(t)) {
    for (int64_t i = 0; i < count; i++)
      o[i] = (unsigned char)f8_encode(t, d, s + (size_t)i * esize, flags);
    return 0;
  }
  if (dst_bytes)
    memset(o, 0, dst_bytes);
  int bits = emlx_nx_type_bits(t);
  unsigned mask = (1u << bits) - 1;
  for (int64_t i = 0; i < count; i++) {
    uint64_t bit = (uint64_t)i * (uint64_t)bits;
    unsigned v = (unsigned)read_int(d, s + (size_t)i * esize) & mask;
    o[bit / 8] |= (unsigned char)(v << (8 - bits - bit % 8));
  }
  return 0;
}

/* ---- arrays ---------------------------------------------------------------------------- */

emlx_array *emlx_from_nx_blob(const void *src, size_t nbytes, emlx_nx_type t, const int64_t *shape,
                              int ndim, emlx_dtype d, emlx_device dev) {
  if (ndim < 0 || ndim > EMLX_MAX_NDIM || (ndim > 0 && !shape))
    return EMLX_FAIL_NULL("from_nx_blob: invalid rank %d", ndim);
  int64_t count = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0)
      return EMLX_FAIL_NULL("from_nx_blob: negative dimension %lld", (long long)shape[i]);
    if (shape[i] && count > INT64_MAX / shape[i])
      return EMLX_FAIL_NULL("from_nx_blob: the shape has too many elements");
    count *= shape[i];
  }
  size_t esize = emlx_dtype_size(d);
  if (esize && (uint64_t)count > SIZE_MAX / esize)
    return EMLX_FAIL_NULL("from_nx_blob: the shape has too many elements");
  size_t wide = (size_t)count * esize;
  void *tmp = malloc(wide ? wide : 1);
  if (!tmp)
    return EMLX_FAIL_NULL("from_nx_blob: out of memory for %zu bytes", wide);
  emlx_array *a = NULL;
  if (emlx_nx_decode(t, src, nbytes, count, d, tmp, wide) == 0)
    a = emlx_from_blob(tmp, d, shape, ndim, dev);
  free(tmp);
  return a;
}

int emlx_to_nx_blob(emlx_array *a, emlx_nx_type t, void *dst, size_t nbytes, unsigned flags) {
  if (!a)
    return EMLX_FAIL("to_nx_blob: input array is NULL");
  emlx_dtype d = emlx_array_dtype(a);
  int64_t count = emlx_size(a);
  size_t wide = emlx_nbytes(a);
  void *tmp = malloc(wide ? wide : 1);
  if (!tmp)
    return EMLX_FAIL("to_nx_blob: out of memory for %zu bytes", wide);
  int rc = emlx_to_blob(a, tmp, wide);
  if (rc == 0)
    rc = emlx_nx_encode(t, d, tmp, wide, count, dst, nbytes, flags);
  free(tmp);
  return rc;
}
