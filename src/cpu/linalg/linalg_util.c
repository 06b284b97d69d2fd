/* linalg_util.c — the linalg kernels' batch driver and matrix copies.
 *
 * la_run hands the matrices of a batch to the per-matrix callback. Up to
 * order 512 (LA_SMALL_N), OpenBLAS is made single-threaded (see
 * linalg_lapack.c for why) and a batch is split over the engine's pool, one
 * LAPACK call per matrix in each task; larger matrices run one after the
 * other on the calling thread with OpenBLAS threading the BLAS-3 work
 * inside LAPACK. The two pools never run nested. Failures are recorded by
 * batch index from any thread; the calling thread reports the lowest one,
 * because the error message is thread-local. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "convert.h"
#include "linalg_cpu.h"

/* Up to this extent LAPACK runs single-threaded and batches go over the
 * pool; above it, matrices run one at a time and OpenBLAS threads them. */
#define LA_SMALL_N 512

void la_job_init(la_job *job, const char *op, int64_t nbatch, int64_t n, size_t scratch_bytes,
                 la_matrix_fn fn, void *ctx) {
  job->op = op;
  job->nbatch = nbatch;
  job->n = n;
  job->scratch_bytes = scratch_bytes;
  job->fn = fn;
  job->ctx = ctx;
  atomic_flag_clear(&job->lock);
  atomic_init(&job->fail_batch, INT64_MAX);
  job->msg[0] = '\0';
}

/* Keeps the message of the lowest failing batch index. */
static void store_msg(la_job *job, int64_t b, const char *msg) {
  emlx__spin_lock(&job->lock);
  if (b < atomic_load(&job->fail_batch)) {
    snprintf(job->msg, sizeof job->msg, "%s", msg);
    atomic_store(&job->fail_batch, b);
  }
  emlx__spin_unlock(&job->lock);
}

int la_fail(la_job *job, int64_t b, const char *fmt, ...) {
  char what[160], full[sizeof job->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(full, sizeof full, "%s: the matrix at batch index %lld %s", job->op, (long long)b, what);
  store_msg(job, b, full);
  return -1;
}

static void run_range(void *ctx, int64_t begin, int64_t end) {
  la_job *job = ctx;
  /* Always a buffer (at least 64 bytes), so callbacks never offset NULL. */
  emlx_buffer *buf = emlx__buffer_alloc(job->scratch_bytes, EMLX_CPU);
  if (!buf) {
    char msg[sizeof job->msg];
    snprintf(msg, sizeof msg, "%s: cannot allocate %zu bytes of scratch memory (%s)", job->op,
             job->scratch_bytes, emlx_last_error());
    store_msg(job, begin, msg);
    return;
  }
  for (int64_t b = begin; b < end; b++) {
    if (atomic_load_explicit(&job->fail_batch, memory_order_relaxed) < b)
      break;
    job->fn(job, b, buf->ptr);
  }
  emlx__buffer_release(buf);
}

int la_run(la_job *job) {
  if (job->nbatch <= 0)
    return 0;
  if (job->n > LA_SMALL_N) {
    /* Large matrices, one after the other: OpenBLAS threads the BLAS-3 work. */
    run_range(job, 0, job->nbatch);
  } else {
    la_blas_single_begin();
    /* At least about 64^3 flops per task, so tiny matrices come in groups. */
    int64_t n = job->n > 0 ? job->n : 1;
    int64_t grain = (64 * 64 * 64) / (n * n * n);
    emlx__parallel_for(job->nbatch, grain > 1 ? grain : 1, run_range, job);
    la_blas_single_end();
  }
  if (atomic_load(&job->fail_batch) == INT64_MAX)
    return 0;
  emlx__set_error("%s", job->msg);
  return -1;
}

int la_too_large(const char *op, int64_t rows, int64_t cols) {
  return EMLX_FAIL("%s: %lld x %lld matrices are too large for LAPACK (32-bit indices)", op,
                   (long long)rows, (long long)cols);
}

int la_alloc_outputs(emlx_array *const *out, int count) {
  for (int i = 0; i < count; i++)
    if (out[i] && emlx__array_alloc_data(out[i]) != 0)
      return -1;
  return 0;
}

/* ---- matrices of arrays ------------------------------------------------------------- */

int64_t la_batch_count(const emlx_array *a) {
  int64_t n = 1;
  for (int d = 0; d < a->ndim - 2; d++)
    n *= a->shape[d];
  return n;
}

const void *la_matrix(const emlx_array *a, int64_t b, int64_t *rs, int64_t *cs) {
  int nd = a->ndim;
  int64_t off = 0;
  for (int d = nd - 3; d >= 0 && b > 0; d--) {
    int64_t i = b % a->shape[d];
    b /= a->shape[d];
    off += i * a->strides[d];
  }
  *rs = a->strides[nd - 2];
  *cs = a->strides[nd - 1];
  return (const char *)emlx__data(a) + off * (int64_t)emlx_dtype_size(a->dtype);
}

/* ---- copies --------------------------------------------------------------------------- */

#define LA_TILE 32

/* The strided copy for one element type; transposing copies go tile by tile
 * so both sides stay in cache. */
#define LA_COPY_BODY(T)                                                                            \
  do {                                                                                             \
    const T *s = src;                                                                              \
    T *d = dst;                                                                                    \
    for (int64_t i0 = 0; i0 < rows; i0 += LA_TILE) {                                               \
      int64_t i1 = i0 + LA_TILE < rows ? i0 + LA_TILE : rows;                                      \
      for (int64_t j0 = 0; j0 < cols; j0 += LA_TILE) {                                             \
        int64_t j1 = j0 + LA_TILE < cols ? j0 + LA_TILE : cols;                                    \
        for (int64_t i = i0; i < i1; i++)                                                          \
          for (int64_t j = j0; j < j1; j++)                                                        \
            d[i * drs + j * dcs] = s[i * rs + j * cs];                                             \
      }                                                                                            \
    }                                                                                              \
  } while (0)

void la_copy(size_t esize, const void *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
             void *dst, int64_t drs, int64_t dcs) {
  if (rows <= 0 || cols <= 0)
    return;
  if (src == dst && rs == drs && cs == dcs)
    return;
  if (cs == 1 && dcs == 1) { /* rows are contiguous on both sides */
    for (int64_t i = 0; i < rows; i++)
      memcpy((char *)dst + (size_t)(i * drs) * esize, (const char *)src + (i * rs) * (int64_t)esize,
             (size_t)cols * esize);
    return;
  }
  if (rs == 1 && drs == 1) { /* columns are */
    for (int64_t j = 0; j < cols; j++)
      memcpy((char *)dst + (size_t)(j * dcs) * esize, (const char *)src + (j * cs) * (int64_t)esize,
             (size_t)rows * esize);
    return;
  }
  if (esize == 4)
    LA_COPY_BODY(uint32_t);
  else if (esize == 16)
    LA_COPY_BODY(emlx_b16);
  else
    LA_COPY_BODY(uint64_t);
}

/* Whether element i of a dense array of dt is finite (complex: both parts). */
static bool elem_finite(emlx_dtype dt, const void *p, int64_t i) {
  if (dt == EMLX_FLOAT64)
    return isfinite(((const double *)p)[i]);
  if (dt == EMLX_FLOAT32)
    return isfinite(((const float *)p)[i]);
  if (dt == EMLX_COMPLEX128)
    return isfinite(((const double *)p)[2 * i]) && isfinite(((const double *)p)[2 * i + 1]);
  return isfinite(((const float *)p)[2 * i]) && isfinite(((const float *)p)[2 * i + 1]);
}

bool la_finite(emlx_dtype dt, const void *p, int64_t rows, int64_t cols, int tri) {
  for (int64_t i = 0; i < rows; i++) {
    int64_t j0 = tri > 0 ? i : 0, j1 = tri < 0 ? (i + 1 < cols ? i + 1 : cols) : cols;
    for (int64_t j = j0; j < j1; j++)
      if (!elem_finite(dt, p, i * cols + j))
        return false;
  }
  return true;
}

void la_conj(emlx_dtype dt, void *p, int64_t count) {
  if (dt == EMLX_COMPLEX128) {
    double *d = p;
    for (int64_t i = 0; i < count; i++)
      d[2 * i + 1] = -d[2 * i + 1];
    return;
  }
  float *f = p;
  for (int64_t i = 0; i < count; i++)
    f[2 * i + 1] = -f[2 * i + 1];
}

void la_zero_triangle(size_t esize, void *p, int64_t rows, int64_t cols, int64_t ld, bool lower) {
  char *base = p;
  for (int64_t i = 0; i < rows; i++) {
    char *row = base + (size_t)(i * ld) * esize;
    if (lower) {
      int64_t n = i < cols ? i : cols; /* columns 0 .. i-1 */
      memset(row, 0, (size_t)n * esize);
    } else if (i + 1 < cols) { /* columns i+1 .. cols-1 */
      memset(row + (size_t)(i + 1) * esize, 0, (size_t)(cols - i - 1) * esize);
    }
  }
}

void la_store_one(emlx_dtype dt, void *p) {
  if (dt == EMLX_FLOAT32) {
    float one = 1.0f;
    memcpy(p, &one, 4);
  } else if (dt == EMLX_FLOAT64) {
    double one = 1.0;
    memcpy(p, &one, 8);
  } else if (dt == EMLX_COMPLEX128) {
    double one[2] = {1.0, 0.0};
    memcpy(p, one, 16);
  } else {
    float one[2] = {1.0f, 0.0f};
    memcpy(p, one, 8);
  }
}

void la_identity(emlx_dtype dt, void *p, int64_t n) {
  size_t es = la_esize(dt);
  memset(p, 0, (size_t)(n * n) * es);
  for (int64_t i = 0; i < n; i++)
    la_store_one(dt, (char *)p + (size_t)(i * n + i) * es);
}
