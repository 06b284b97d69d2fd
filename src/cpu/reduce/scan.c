/* scan.c — the scan kernel (cumulative sum, product, max, min along one
 * axis; forward or reverse; inclusive or exclusive).
 *
 * The output is row-major, seen as [outer, n, inner] with n the scanned
 * axis. A row-contiguous input is scanned straight into the output (in
 * place when its buffer is donated); any other layout is first copied into
 * the output, which is then scanned in place. A reverse scan is a forward
 * scan that starts at the last row with a negative row stride.
 *
 * Work is cut into units, one per (outer index, block of inner columns)
 * (inner == 1: one per line). Units run in parallel; each walks its rows in
 * order. When there are few units and long axes, a unit's rows are cut into
 * fixed chunks: a first parallel pass folds each chunk to its total, the
 * totals are combined in order into each chunk's starting value, and a
 * second parallel pass scans every chunk from its start (the classic
 * two-pass scan). Chunk sizes depend on the shape only, so results do not
 * depend on the thread count. Loops and accumulators: scan.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "cpu.h"
#include "kernels.h"
#include "dyn_for.h"
#include "reduce_driver.h"
#include "scan.h"
#include "indexing/views.h"

#define SCAN_CHUNK 65536 /* elements per chunk of the two-pass scan */
#define SCAN_CB 1024     /* inner columns per unit (at most) */

typedef struct scan_job {
  emlx_cpu_scan_line line;
  emlx_cpu_scan_cols cols;
  emlx_cpu_scan_fold fold;
  emlx_cpu_scan_combine combine;
  int inclusive;
  const char *x;
  char *y;
  int64_t es, acc_es;
  int64_t rs;                  /* signed row stride in elements (same for x and y) */
  int64_t first_row;           /* offset of the first row walked (0, or (n-1)*inner) */
  int64_t n, inner, block, nb; /* rows, columns, columns per unit, units per outer index */
  int64_t crows, nch;          /* two-pass: rows per chunk, chunks per unit */
  unsigned char id[16];        /* the identity accumulator */
  char *totals;                /* two-pass: block accumulators per (unit, chunk) */
} scan_job;

/* ---- the ISA table, identities --------------------------------------------- */
static const emlx_cpu_scan_table *scan_table(void) {
  const char *name = emlx_cpu_isa_get()->name;
  if (!strcmp(name, "avx512"))
    return &emlx_cpu_scan_avx512;
  if (!strcmp(name, "avx2"))
    return &emlx_cpu_scan_avx2;
  return &emlx_cpu_scan_scalar;
}

static int64_t acc_size(emlx_dtype dt) {
  return dt == EMLX_FLOAT16 || dt == EMLX_BFLOAT16 ? 4 : (int64_t)emlx_dtype_size(dt);
}

/* The identity of op as an accumulator (see emlx/reduce.h): 0 for a sum,
 * else the fold's identity (reduce_driver.h). */
static void identity(int op, emlx_dtype dt, unsigned char *id) {
  memset(id, 0, 16);
  if (op == EMLX_SCAN_PROD)
    emlx_cpu_fold_identity(EMLX_FOLD_PROD, dt, id);
  else if (op == EMLX_SCAN_MAX || op == EMLX_SCAN_MIN)
    emlx_cpu_fold_identity(op == EMLX_SCAN_MIN ? EMLX_FOLD_MIN : EMLX_FOLD_MAX, dt, id);
}

static void fill_identity(const scan_job *j, void *acc, int64_t m) {
  for (int64_t c = 0; c < m; c++)
    memcpy((char *)acc + c * j->acc_es, j->id, (size_t)j->acc_es);
}

/* ---- units and chunks ---------------------------------------------------------- */
/* Element offset of row r (in walking order) of unit u, and its column count. */
static int64_t unit_offset(const scan_job *j, int64_t u, int64_t r, int64_t *len) {
  int64_t o = u / j->nb, c0 = (u % j->nb) * j->block;
  *len = j->inner - c0 < j->block ? j->inner - c0 : j->block;
  return o * j->n * j->inner + j->first_row + r * j->rs + c0;
}

/* Scans rows [r0, r1) of unit u from acc (updated). */
static void scan_rows(const scan_job *j, int64_t u, int64_t r0, int64_t r1, void *acc) {
  int64_t len, off = unit_offset(j, u, r0, &len);
  const char *x = j->x + off * j->es;
  char *y = j->y + off * j->es;
  if (j->inner == 1)
    j->line(x, j->rs, y, j->rs, r1 - r0, j->inclusive, acc);
  else
    j->cols(x, j->rs, y, j->rs, r1 - r0, len, j->inclusive, acc);
}

static void units_task(void *ctx, int64_t begin, int64_t end) {
  const scan_job *j = (const scan_job *)ctx;
  _Alignas(16) unsigned char acc[SCAN_CB * 8];
  for (int64_t u = begin; u < end; u++) {
    fill_identity(j, acc, j->block);
    scan_rows(j, u, 0, j->n, acc);
  }
}

static void totals_task(void *ctx, int64_t begin, int64_t end) {
  const scan_job *j = (const scan_job *)ctx;
  for (int64_t t = begin; t < end; t++) {
    int64_t u = t / (j->nch - 1), c = t % (j->nch - 1), len;
    int64_t r0 = c * j->crows, r1 = r0 + j->crows;
    int64_t off = unit_offset(j, u, r0, &len);
    char *tot = j->totals + (u * j->nch + c + 1) * j->block * j->acc_es;
    fill_identity(j, tot, len);
    j->fold(j->x + off * j->es, j->rs, r1 - r0, len, tot);
  }
}

static void chunks_task(void *ctx, int64_t begin, int64_t end) {
  const scan_job *j = (const scan_job *)ctx;
  for (int64_t t = begin; t < end; t++) {
    int64_t u = t / j->nch, c = t % j->nch;
    int64_t r0 = c * j->crows, r1 = c == j->nch - 1 ? j->n : r0 + j->crows;
    scan_rows(j, u, r0, r1, j->totals + t * j->block * j->acc_es); /* its start value */
  }
}

static int run_two_pass(scan_job *j, int64_t units) {
  j->crows = SCAN_CHUNK / j->block > 0 ? SCAN_CHUNK / j->block : 1;
  j->nch = (j->n + j->crows - 1) / j->crows;
  size_t bytes = (size_t)(units * j->nch * j->block * j->acc_es);
  j->totals = malloc(bytes);
  if (!j->totals)
    return EMLX_FAIL("cpu: scan: out of memory for chunk totals");
  /* totals[u][c] for c >= 1 holds the fold of chunk c - 1; then they are
   * turned, in order, into each chunk's starting value. */
  emlx_cpu_dyn_for(units * (j->nch - 1), 1, totals_task, j);
  for (int64_t u = 0; u < units; u++) {
    int64_t len;
    unit_offset(j, u, 0, &len);
    char *t0 = j->totals + u * j->nch * j->block * j->acc_es;
    fill_identity(j, t0, len);
    for (int64_t c = 1; c < j->nch; c++) {
      char *tc = t0 + c * j->block * j->acc_es, *prev = tc - j->block * j->acc_es;
      /* tc = prev (start of chunk c - 1) combined with the fold of chunk c - 1 */
      _Alignas(16) unsigned char tmp[SCAN_CB * 8];
      memcpy(tmp, prev, (size_t)(len * j->acc_es));
      j->combine(tmp, tc, len);
      memcpy(tc, tmp, (size_t)(len * j->acc_es));
    }
  }
  emlx_cpu_dyn_for(units * j->nch, 1, chunks_task, j);
  free(j->totals);
  return 0;
}

/* ---- the kernel ------------------------------------------------------------------ */
int emlx_cpu_scan(const emlx_node *node, emlx_array *const *inputs, emlx_array *const *outputs) {
  emlx_array *in = inputs[0], *out = outputs[0];
  if (!out)
    return 0;
  const emlx_scan_params *sp = (const emlx_scan_params *)emlx__params(node);
  if (node->prim != EMLX_PRIM_SCAN || node->params_size != sizeof *sp || sp->axis < 0 ||
      sp->axis >= in->ndim || sp->op < 0 || sp->op >= EMLX_SCAN_OP_COUNT)
    return EMLX_FAIL("cpu: scan: malformed node");
  if (in->dtype != out->dtype || in->size != out->size)
    return EMLX_FAIL("cpu: scan: input and output differ");
  const emlx_cpu_scan_table *tab = scan_table();
  scan_job j;
  memset(&j, 0, sizeof j);
  j.line = tab->line[sp->op][in->dtype];
  j.cols = tab->cols[sp->op][in->dtype];
  j.fold = tab->fold[sp->op][in->dtype];
  j.combine = tab->combine[sp->op][in->dtype];
  if (!j.line || !j.cols || !j.fold || !j.combine)
    return EMLX_FAIL("cpu: scan: dtype %s is not supported", emlx_dtype_name(in->dtype));
  j.inclusive = sp->inclusive != 0;
  j.es = (int64_t)emlx_dtype_size(in->dtype);
  j.acc_es = acc_size(in->dtype);
  identity(sp->op, in->dtype, j.id);

  if (in->flags & EMLX_FLAG_ROW_CONTIG) {
    j.x = (const char *)emlx__data(in);
    if (emlx__array_alloc_data_donate(out, in) != 0)
      return -1;
  } else {
    if (emlx__array_alloc_data(out) != 0)
      return -1;
    emlx_cpu_copy_strided(out, in);
    j.x = (const char *)emlx__data(out);
  }
  j.y = (char *)emlx__data(out);
  if (out->size == 0)
    return 0;

  int64_t outer = 1;
  j.inner = 1;
  for (int i = 0; i < sp->axis; i++)
    outer *= in->shape[i];
  for (int i = sp->axis + 1; i < in->ndim; i++)
    j.inner *= in->shape[i];
  j.n = in->shape[sp->axis];
  j.rs = sp->reverse ? -j.inner : j.inner;
  j.first_row = sp->reverse ? (j.n - 1) * j.inner : 0;
  j.block = j.inner < SCAN_CB ? j.inner : SCAN_CB;
  j.nb = (j.inner + j.block - 1) / j.block;
  int64_t units = outer * j.nb;
  if (units < 8 && j.n >= 4 && j.n * j.block >= 2 * SCAN_CHUNK)
    return run_two_pass(&j, units);

  /* One pass: the column blocks may shrink for more parallelism (a column's
   * result does not depend on its block). */
  int64_t want = 4 * (int64_t)emlx_num_threads();
  if (j.inner > 1 && units < want) {
    int64_t per_outer = (want + outer - 1) / outer;
    int64_t b = (j.inner + per_outer - 1) / per_outer;
    j.block = b < 64 ? (j.inner < 64 ? j.inner : 64) : b;
    j.nb = (j.inner + j.block - 1) / j.block;
    units = outer * j.nb;
  }
  int64_t work = j.n * j.block;
  int64_t grain = EMLX_CPU_GRAIN / (work > 0 ? work : 1);
  emlx_cpu_dyn_for(units, grain, units_task, &j);
  return 0;
}
