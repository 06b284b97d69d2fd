/* rowwise.c — the ROW_REDUCE (mean, var, std, logsumexp) and ROW_SOFTMAX
 * (softmax, log_softmax) kernels.
 *
 * The input's trailing `nred` axes form a row (the constructor moved the
 * reduced axes there, src/ops/reduce/rowwise.c). Rows are read in the work
 * dtype (f64 for f64 inputs, f32 for everything else): straight from the
 * input when a row is one contiguous run of that dtype, otherwise packed
 * (converted and gathered, any strides) into per-task scratch from the
 * heap. Then, per row:
 *   mean       one pass: sum / n (f64 lanes)
 *   var, std   two passes over the row in cache: the mean, then the sum of
 *              squared deviations from it (f64), over max(n - ddof, 0)
 *   logsumexp  max, then m + log(sum(exp(x - m)))
 *   softmax    max, exp(x - m) into the output with its sum, then a scale
 *   log_softmax max, the sum of exp(x - m), then x - (m + log(sum))
 * Short rows (<= RW_SEG elements) are the unit of parallel work, several to
 * a task. A longer row is cut into RW_SEG pieces that run in parallel, pass
 * by pass, with per-piece partials combined in order; the cut depends on the
 * shape only, so results do not depend on the thread count. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "params_rowwise.h"
#include "reduce/kernels.h"
#include "rowwise.h"

#define RW_SEG 65536       /* elements of one piece of a long row */
#define RW_TASK_WORK 32768 /* input elements per parallel task of short rows */

typedef struct rw_job {
  const emlx_cpu_rowwise_table *t;
  int op;
  int64_t ddof;
  bool f64;   /* work in f64, else f32 */
  size_t wes; /* work element size */
  const char *in;
  size_t in_es, out_es;
  emlx_dtype in_dt, out_dt;
  emlx_cpu_unary_loop pack;   /* input dtype -> work dtype (any stride) */
  emlx_cpu_unary_loop unpack; /* work dtype -> output dtype; NULL: the same */
  bool direct;                /* rows are contiguous runs of the work dtype */
  bool softmax;
  int nk, nr;
  int64_t kshape[EMLX_MAX_NDIM], kstride[EMLX_MAX_NDIM];
  int64_t rshape[EMLX_MAX_NDIM], rstride[EMLX_MAX_NDIM];
  int64_t nrows, rowlen;
  char *out;
  atomic_int failed;
} rw_job;

static const emlx_cpu_rowwise_table *rw_table(void) {
  const char *name = emlx_cpu_isa_get()->name;
  if (!strcmp(name, "avx512"))
    return &emlx_cpu_rowwise_avx512;
  if (!strcmp(name, "avx2"))
    return &emlx_cpu_rowwise_avx2;
  return &emlx_cpu_rowwise_scalar;
}

/* Drops size-1 dims and merges neighbours that are contiguous together. */
static int rw_merge(const int64_t *shape, const int64_t *stride, int n, int64_t *os, int64_t *ost) {
  int m = 0;
  for (int i = 0; i < n; i++) {
    if (shape[i] == 1)
      continue;
    if (m > 0 && ost[m - 1] == stride[i] * shape[i]) {
      os[m - 1] *= shape[i];
      ost[m - 1] = stride[i];
    } else {
      os[m] = shape[i];
      ost[m] = stride[i];
      m++;
    }
  }
  return m;
}

/* Element offset of row r's first element. */
static int64_t rw_base(const rw_job *j, int64_t r) {
  int64_t off = 0;
  for (int d = j->nk - 1; d >= 0; d--) {
    off += (r % j->kshape[d]) * j->kstride[d];
    r /= j->kshape[d];
  }
  return off;
}

/* Elements [lo, lo + n) of the row at base, in the work dtype: a pointer
 * into the input, or scratch filled here. */
static const void *rw_load(const rw_job *j, int64_t base, int64_t lo, int64_t n, void *scratch) {
  if (n == 0)
    return j->in;
  if (j->direct)
    return j->in + (size_t)(base + lo) * j->in_es;
  int64_t idx[EMLX_MAX_NDIM], rem = lo;
  for (int d = j->nr - 1; d >= 0; d--) {
    idx[d] = rem % j->rshape[d];
    rem /= j->rshape[d];
  }
  char *dst = scratch;
  int last = j->nr - 1;
  while (n > 0) {
    int64_t off = base;
    for (int d = 0; d < j->nr; d++)
      off += idx[d] * j->rstride[d];
    int64_t run = j->rshape[last] - idx[last];
    if (run > n)
      run = n;
    j->pack(j->in + off * (int64_t)j->in_es, j->rstride[last], dst, run);
    dst += (size_t)run * j->wes;
    n -= run;
    idx[last] += run;
    for (int d = last; d > 0 && idx[d] == j->rshape[d]; d--) {
      idx[d] = 0;
      idx[d - 1]++;
    }
  }
  return scratch;
}

/* ---- the per-run steps, in the work dtype -------------------------------------- */
static double rw_sum(const rw_job *j, const void *w, int64_t n) {
  return j->f64 ? j->t->sum_f64(w, n) : j->t->sum_f32(w, n);
}
static double rw_sqdev(const rw_job *j, const void *w, int64_t n, double mean) {
  return j->f64 ? j->t->sqdev_f64(w, n, mean) : j->t->sqdev_f32(w, n, mean);
}
static int rw_max(const rw_job *j, const void *w, int64_t n, double *m) {
  if (j->f64)
    return j->t->max_f64(w, n, m);
  float mf;
  int nan = j->t->max_f32(w, n, &mf);
  *m = (double)mf;
  return nan;
}
static double rw_expsum(const rw_job *j, const void *w, int64_t n, double m, void *e) {
  return j->f64 ? j->t->expsum_f64(w, n, m, e) : j->t->expsum_f32(w, n, (float)m, e);
}
static void rw_expscale(const rw_job *j, const void *w, int64_t n, double m, double s, void *y) {
  if (j->f64)
    j->t->expscale_f64(w, n, m, s, y);
  else
    j->t->expscale_f32(w, n, (float)m, (float)s, y);
}
static void rw_scale(const rw_job *j, const void *w, int64_t n, double s, void *y) {
  if (j->f64)
    j->t->scale_f64(w, n, s, y);
  else
    j->t->scale_f32(w, n, (float)s, y);
}
static void rw_shift(const rw_job *j, const void *w, int64_t n, double c, void *y) {
  if (j->f64)
    j->t->shift_f64(w, n, c, y);
  else
    j->t->shift_f32(w, n, (float)c, y);
}
static void rw_fill_nan(const rw_job *j, int64_t n, void *y) {
  for (int64_t i = 0; i < n; i++) {
    if (j->f64)
      ((double *)y)[i] = (double)NAN;
    else
      ((float *)y)[i] = NAN;
  }
}

/* The statistic of a row from its sums (n elements). */
static double rw_var(const rw_job *j, double sq, int64_t n) {
  double d = (double)n - (double)j->ddof;
  double v = sq / (d > 0 ? d : 0.0);
  return j->op == EMLX_ROW_STD ? sqrt(v) : v;
}
static double rw_lse(double m, double s) { return isinf(m) ? m : m + log(s); }

/* ---- short rows: whole rows per task ------------------------------------------- */
static void rw_rows(void *ctx, int64_t r0, int64_t r1) {
  rw_job *j = ctx;
  int64_t n = j->rowlen;
  size_t scratch_bytes =
      (j->direct ? 0 : (size_t)n * j->wes) + (j->softmax && j->unpack ? (size_t)n * j->wes : 0);
  char *scratch = scratch_bytes ? malloc(scratch_bytes) : NULL;
  if (scratch_bytes && !scratch) {
    atomic_store(&j->failed, 1);
    return;
  }
  char *ybuf = scratch ? scratch + (j->direct ? 0 : (size_t)n * j->wes) : NULL;
  for (int64_t r = r0; r < r1; r++) {
    const void *w = rw_load(j, rw_base(j, r), 0, n, scratch);
    if (!j->softmax) {
      double v;
      if (j->op == EMLX_ROW_LOGSUMEXP) {
        double m;
        v = rw_max(j, w, n, &m) ? (double)NAN
            : isinf(m)          ? m
                                : rw_lse(m, rw_expsum(j, w, n, m, NULL));
      } else {
        double mean = rw_sum(j, w, n) / (double)n;
        v = j->op == EMLX_ROW_MEAN ? mean : rw_var(j, rw_sqdev(j, w, n, mean), n);
      }
      emlx__store_f64(j->out + (size_t)r * j->out_es, j->out_dt, v);
      continue;
    }
    char *orow = j->out + (size_t)r * (size_t)n * j->out_es;
    void *y = j->unpack ? (void *)ybuf : (void *)orow;
    double m;
    if (rw_max(j, w, n, &m)) {
      rw_fill_nan(j, n, y);
    } else if (j->op == EMLX_ROW_SOFTMAX) {
      double s = rw_expsum(j, w, n, m, y);
      rw_scale(j, y, n, 1.0 / s, y);
    } else {
      double s = rw_expsum(j, w, n, m, NULL);
      rw_shift(j, w, n, m + log(s), y);
    }
    if (j->unpack)
      j->unpack(y, 1, orow, n);
  }
  free(scratch);
}

/* ---- strided rows whose neighbours are adjacent: columns ----------------------- */
/* When rows are not contiguous but consecutive rows start at consecutive
 * elements (a reduction over a leading axis: mean(x, axis 0)), RW_COLS rows
 * are folded side by side: each reduced position contributes one contiguous
 * run of RW_COLS elements (read in f64) to RW_COLS accumulators, in order.
 * Statistics only; softmax keeps the packed rows above. */
#define RW_COLS 1024

static void rw_cols(void *ctx, int64_t t0, int64_t t1) {
  rw_job *j = ctx;
  int64_t K = j->kshape[j->nk - 1], nblk = (K + RW_COLS - 1) / RW_COLS;
  double *buf = malloc(4 * RW_COLS * sizeof(double));
  if (!buf) {
    atomic_store(&j->failed, 1);
    return;
  }
  double *tile = buf, *a = buf + RW_COLS, *b = buf + 2 * RW_COLS, *nan = buf + 3 * RW_COLS;
  emlx_cpu_unary_loop to_f64 = emlx_cpu_isa_get()->cast->cast[j->in_dt][EMLX_FLOAT64];
  bool stats = j->op != EMLX_ROW_LOGSUMEXP;
  for (int64_t t = t0; t < t1; t++) {
    int64_t c0 = (t % nblk) * RW_COLS, w = K - c0 < RW_COLS ? K - c0 : RW_COLS;
    int64_t r0 = (t / nblk) * K + c0, base = rw_base(j, r0);
    for (int pass = 0; pass < 2; pass++) {
      if (pass == 1 && j->op == EMLX_ROW_MEAN)
        break;
      for (int64_t c = 0; c < w; c++) {
        if (pass == 0)
          a[c] = stats ? 0.0 : -(double)INFINITY, nan[c] = 0;
        b[c] = 0.0;
      }
      int64_t idx[EMLX_MAX_NDIM] = {0};
      for (int64_t p = 0; p < j->rowlen; p++) {
        int64_t off = base;
        for (int d = 0; d < j->nr; d++)
          off += idx[d] * j->rstride[d];
        for (int d = j->nr - 1; d >= 0 && ++idx[d] == j->rshape[d]; d--)
          if (d > 0)
            idx[d] = 0;
        const char *x = j->in + off * (int64_t)j->in_es;
        if (stats && j->in_dt == EMLX_FLOAT32) { /* straight from the input */
          if (pass == 0)
            j->t->col_add_f32((const float *)x, w, a);
          else
            j->t->col_sqdev_f32((const float *)x, w, a, b);
          continue;
        }
        if (stats && j->in_dt == EMLX_FLOAT64) {
          if (pass == 0)
            j->t->col_add_f64((const double *)x, w, a);
          else
            j->t->col_sqdev_f64((const double *)x, w, a, b);
          continue;
        }
        to_f64(x, 1, tile, w);
        if (pass == 0 && stats) {
          for (int64_t c = 0; c < w; c++)
            a[c] += tile[c];
        } else if (pass == 0) {
          for (int64_t c = 0; c < w; c++) {
            nan[c] = tile[c] != tile[c] ? 1.0 : nan[c];
            a[c] = tile[c] > a[c] ? tile[c] : a[c];
          }
        } else if (stats) {
          for (int64_t c = 0; c < w; c++) {
            double d = tile[c] - a[c];
            b[c] += d * d;
          }
        } else {
          for (int64_t c = 0; c < w; c++)
            tile[c] = isinf(a[c]) ? 0.0 : tile[c] - a[c];
          j->t->expscale_f64(tile, w, 0.0, 1.0, tile);
          for (int64_t c = 0; c < w; c++)
            b[c] += tile[c];
        }
      }
      if (pass == 0 && stats)
        for (int64_t c = 0; c < w; c++)
          a[c] /= (double)j->rowlen; /* the means */
    }
    for (int64_t c = 0; c < w; c++) {
      double v = j->op == EMLX_ROW_MEAN ? a[c]
                 : stats                ? rw_var(j, b[c], j->rowlen)
                 : nan[c] != 0.0        ? (double)NAN
                                        : rw_lse(a[c], b[c]);
      emlx__store_f64(j->out + (size_t)(r0 + c) * j->out_es, j->out_dt, v);
    }
  }
  free(buf);
}

/* ---- long rows: pieces of one row per task, pass by pass ----------------------- */
enum { RW_PASS_SUM, RW_PASS_SQDEV, RW_PASS_MAX, RW_PASS_EXPSUM, RW_PASS_WRITE };

typedef struct rw_long {
  rw_job *j;
  int64_t base, row;
  int pass;
  double *part; /* per piece */
  int *nan;     /* per piece (max) */
  double mean, m, s;
} rw_long;

static void rw_pieces(void *ctx, int64_t g0, int64_t g1) {
  rw_long *L = ctx;
  rw_job *j = L->j;
  size_t bytes = (j->direct ? 0 : (size_t)RW_SEG * j->wes) +
                 (L->pass == RW_PASS_WRITE && j->unpack ? (size_t)RW_SEG * j->wes : 0);
  char *scratch = bytes ? malloc(bytes) : NULL;
  if (bytes && !scratch) {
    atomic_store(&j->failed, 1);
    return;
  }
  char *ybuf = scratch ? scratch + (j->direct ? 0 : (size_t)RW_SEG * j->wes) : NULL;
  for (int64_t g = g0; g < g1; g++) {
    int64_t lo = g * RW_SEG, n = j->rowlen - lo < RW_SEG ? j->rowlen - lo : RW_SEG;
    const void *w = rw_load(j, L->base, lo, n, scratch);
    switch (L->pass) {
    case RW_PASS_SUM:
      L->part[g] = rw_sum(j, w, n);
      break;
    case RW_PASS_SQDEV:
      L->part[g] = rw_sqdev(j, w, n, L->mean);
      break;
    case RW_PASS_MAX:
      L->nan[g] = rw_max(j, w, n, &L->part[g]);
      break;
    case RW_PASS_EXPSUM:
      L->part[g] = rw_expsum(j, w, n, L->m, NULL);
      break;
    default: {
      char *orow = j->out + (size_t)(L->row * j->rowlen + lo) * j->out_es;
      void *y = j->unpack ? (void *)ybuf : (void *)orow;
      if (isnan(L->s))
        rw_fill_nan(j, n, y);
      else if (j->op == EMLX_ROW_SOFTMAX)
        rw_expscale(j, w, n, L->m, 1.0 / L->s, y);
      else
        rw_shift(j, w, n, L->m + log(L->s), y);
      if (j->unpack)
        j->unpack(y, 1, orow, n);
    }
    }
  }
  free(scratch);
}

static double rw_run_pass(rw_long *L, int pass, int64_t nseg) {
  L->pass = pass;
  emlx__parallel_for(nseg, 1, rw_pieces, L);
  double acc = pass == RW_PASS_MAX ? -(double)INFINITY : 0.0;
  for (int64_t g = 0; g < nseg; g++) {
    if (pass != RW_PASS_MAX)
      acc += L->part[g];
    else if (L->nan[g])
      acc = (double)NAN;
    else if (!isnan(acc) && L->part[g] > acc)
      acc = L->part[g];
  }
  return acc;
}

static int rw_long_rows(rw_job *j) {
  int64_t nseg = (j->rowlen + RW_SEG - 1) / RW_SEG;
  rw_long L = {.j = j};
  L.part = malloc((size_t)nseg * sizeof(double));
  L.nan = calloc((size_t)nseg, sizeof(int));
  if (!L.part || !L.nan) {
    free(L.part);
    free(L.nan);
    return EMLX_FAIL("%s: out of memory", j->softmax ? "softmax" : "reduction");
  }
  for (int64_t r = 0; r < j->nrows && !atomic_load(&j->failed); r++) {
    L.base = rw_base(j, r);
    L.row = r;
    double n = (double)j->rowlen, v = 0.0;
    if (j->op == EMLX_ROW_MEAN || j->op == EMLX_ROW_VAR || j->op == EMLX_ROW_STD) {
      L.mean = rw_run_pass(&L, RW_PASS_SUM, nseg) / n;
      v = j->op == EMLX_ROW_MEAN ? L.mean
                                 : rw_var(j, rw_run_pass(&L, RW_PASS_SQDEV, nseg), j->rowlen);
    } else {
      L.m = rw_run_pass(&L, RW_PASS_MAX, nseg);
      bool special = isnan(L.m) || (j->op == EMLX_ROW_LOGSUMEXP && isinf(L.m));
      L.s = special ? (double)NAN : rw_run_pass(&L, RW_PASS_EXPSUM, nseg);
      if (j->softmax)
        rw_run_pass(&L, RW_PASS_WRITE, nseg);
      else
        v = special ? L.m : rw_lse(L.m, L.s);
    }
    if (!j->softmax)
      emlx__store_f64(j->out + (size_t)r * j->out_es, j->out_dt, v);
  }
  free(L.part);
  free(L.nan);
  return 0;
}

int emlx_cpu_rowwise(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs) {
  const emlx_rowwise_params *p = emlx__params(node);
  const emlx_array *in = inputs[0];
  emlx_array *out = outputs[0];
  if (!out)
    return 0;
  rw_job *j = calloc(1, sizeof *j);
  if (!j)
    return EMLX_FAIL("%s: out of memory", emlx_prim_table[node->prim].name);
  j->t = rw_table();
  j->op = p->op;
  j->ddof = p->ddof;
  j->softmax = node->prim == EMLX_PRIM_ROW_SOFTMAX;
  j->f64 = in->dtype == EMLX_FLOAT64;
  emlx_dtype wdt = j->f64 ? EMLX_FLOAT64 : EMLX_FLOAT32;
  j->wes = emlx_dtype_size(wdt);
  j->in_es = emlx_dtype_size(in->dtype);
  j->in_dt = in->dtype;
  j->out_dt = out->dtype;
  j->out_es = emlx_dtype_size(out->dtype);
  const emlx_cpu_cast_table *cast = emlx_cpu_isa_get()->cast;
  j->pack = cast->cast[in->dtype][wdt];
  j->unpack = out->dtype == wdt ? NULL : cast->cast[wdt][out->dtype];

  int nk = in->ndim - p->nred;
  /* An empty reduced axis makes a row empty whatever the others multiply to
   * (no product is formed then); otherwise the product is <= the size. */
  int64_t rowlen = 1;
  for (int d = nk; d < in->ndim; d++)
    if (in->shape[d] == 0)
      rowlen = 0;
  for (int d = nk; rowlen && d < in->ndim; d++)
    rowlen *= in->shape[d];
  j->rowlen = rowlen;
  j->nrows = j->softmax ? (rowlen ? in->size / rowlen : 0) : out->size;
  j->nk = rw_merge(in->shape, in->strides, nk, j->kshape, j->kstride);
  j->nr = rowlen ? rw_merge(in->shape + nk, in->strides + nk, p->nred, j->rshape, j->rstride) : 0;
  if (j->nr == 0) {
    j->nr = 1;
    j->rshape[0] = rowlen ? 1 : 0;
    j->rstride[0] = 1;
  }
  j->direct = in->dtype == wdt && j->nr == 1 && j->rstride[0] == 1;

  int rc = j->softmax && j->direct && out->dtype == in->dtype
               ? emlx__array_alloc_data_donate(out, (emlx_array *)in)
               : emlx__array_alloc_data(out);
  if (rc != 0) {
    free(j);
    return -1;
  }
  j->in = in->size > 0 ? (const char *)emlx__data(in) : NULL;
  j->out = (char *)emlx__data(out);
  bool columns = !j->softmax && !j->direct && j->rowlen > 0 && j->nk > 0 &&
                 j->kstride[j->nk - 1] == 1 && j->kshape[j->nk - 1] > 1;
  if (j->nrows > 0 && columns) {
    int64_t K = j->kshape[j->nk - 1], nblk = (K + RW_COLS - 1) / RW_COLS;
    int64_t per = (K < RW_COLS ? K : RW_COLS) * j->rowlen;
    int64_t grain = RW_TASK_WORK / (per > 0 ? per : 1);
    emlx__parallel_for(j->nrows / K * nblk, grain > 0 ? grain : 1, rw_cols, j);
  } else if (j->nrows > 0) {
    if (j->rowlen <= RW_SEG) {
      int64_t grain = RW_TASK_WORK / (j->rowlen > 0 ? j->rowlen : 1);
      emlx__parallel_for(j->nrows, grain > 0 ? grain : 1, rw_rows, j);
    } else if (rw_long_rows(j) != 0) {
      free(j);
      return -1;
    }
  }
  int failed = atomic_load(&j->failed);
  free(j);
  return failed ? EMLX_FAIL("%s: out of memory", emlx_prim_table[node->prim].name) : 0;
}
