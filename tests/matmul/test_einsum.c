/* test_einsum.c — einsum against a brute-force f64 evaluator.
 *
 * Each case gives the subscripts under test and an equivalent fully explicit
 * form (letters only, with "->", ellipses spelled out) that the reference
 * evaluates by looping over every assignment of every label: out[...] +=
 * product of the operands' elements (a size-1 axis is read at index 0, which
 * is broadcasting). Values are multiples of 1/4 so f32 sums are exact. */
#include <stdlib.h>

#include "test_util.h"

static tu_rng rng = {777};

#define MAXOP 4

/* Reference einsum of explicit subscripts over row-major doubles. Returns
 * the output (malloc'd) and its shape. */
static double *ref_einsum(const char *expl, int nops, double *const *vals,
                          const int64_t *const *shapes, const int *ndims, int64_t *oshape,
                          int *ondim) {
  int64_t size[128];
  for (int i = 0; i < 128; i++)
    size[i] = 1;
  const char *arrow = strstr(expl, "->");
  const char *p = expl;
  char labels[MAXOP][16];
  for (int o = 0; o < nops; o++) {
    int n = 0;
    while (*p != ',' && p != arrow)
      labels[o][n++] = *p++;
    labels[o][n] = '\0';
    p++;
    for (int j = 0; j < n; j++)
      if (shapes[o][j] != 1)
        size[(int)labels[o][j]] = shapes[o][j];
  }
  const char *out = arrow + 2;
  *ondim = (int)strlen(out);
  for (int j = 0; j < *ondim; j++)
    oshape[j] = size[(int)out[j]];
  char all[64];
  int nall = 0;
  for (const char *q = expl; *q; q++)
    if ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z')) {
      bool seen = false;
      for (int k = 0; k < nall; k++)
        seen = seen || all[k] == *q;
      if (!seen)
        all[nall++] = *q;
    }
  int64_t asz[64];
  for (int k = 0; k < nall; k++)
    asz[k] = size[(int)all[k]];
  int64_t total = tu_numel(asz, nall), nout = tu_numel(oshape, *ondim);
  double *r = calloc((size_t)(nout + 1), sizeof *r);
  int64_t idx[64], val[128];
  for (int64_t t = 0; t < total; t++) {
    tu_unravel(t, asz, nall, idx);
    for (int k = 0; k < nall; k++)
      val[(int)all[k]] = idx[k];
    double prod = 1;
    for (int o = 0; o < nops; o++) {
      int64_t off = 0;
      for (int j = 0; j < ndims[o]; j++)
        off = off * shapes[o][j] + (shapes[o][j] == 1 ? 0 : val[(int)labels[o][j]]);
      prod *= vals[o][off];
    }
    int64_t oi[64];
    for (int j = 0; j < *ondim; j++)
      oi[j] = val[(int)out[j]];
    r[tu_ravel(oi, oshape, *ondim)] += prod;
  }
  return r;
}

typedef struct ecase {
  const char *subs, *expl;
  int nops;
  int ndim[MAXOP];
  int64_t shape[MAXOP][6];
} ecase;

static void run_case(const ecase *c, emlx_dtype d) {
  double *vals[MAXOP];
  emlx_array *ops[MAXOP];
  const int64_t *shapes[MAXOP];
  for (int o = 0; o < c->nops; o++) {
    int64_t n = tu_numel(c->shape[o], c->ndim[o]);
    vals[o] = malloc((size_t)(n + 1) * sizeof(double));
    for (int64_t i = 0; i < n; i++)
      vals[o][i] =
          tu_is_int(d) ? (double)tu_randint(&rng, -9, 9) : (double)tu_randint(&rng, -8, 8) * 0.25;
    ops[o] = tu_make(d, c->shape[o], c->ndim[o], vals[o]);
    shapes[o] = c->shape[o];
  }
  int64_t oshape[64];
  int ond;
  double *ref = ref_einsum(c->expl, c->nops, vals, shapes, c->ndim, oshape, &ond);
  emlx_array *r = emlx_einsum(c->subs, ops, c->nops);
  char msg[128];
  snprintf(msg, sizeof msg, "einsum \"%s\"", c->subs);
  if (c->nops >= 3 && (d == EMLX_FLOAT16 || d == EMLX_BFLOAT16)) {
    /* Pairwise intermediates are rounded to the dtype (as MLX does). */
    double *got = tu_read(r);
    double e = got ? tu_nmse(got, ref, tu_numel(oshape, ond)) : 1.0;
    CHECK_MSG(got && e < 1e-3, "%s [%s]: nmse %g", msg, tu_dname(d), e);
    free(got);
  } else {
    tu_check_array(r, d, oshape, ond, ref, 1.0, msg);
  }
  emlx_release(r);
  for (int o = 0; o < c->nops; o++) {
    emlx_release(ops[o]);
    free(vals[o]);
  }
  free(ref);
}

static const ecase cases[] = {
    {"ij,jk->ik", "ij,jk->ik", 2, {2, 2}, {{3, 4}, {4, 5}}},
    {"ij,jk", "ij,jk->ik", 2, {2, 2}, {{3, 4}, {4, 5}}},
    {"ba,ac", "ba,ac->bc", 2, {2, 2}, {{3, 4}, {4, 5}}},
    {"ij,kj->ik", "ij,kj->ik", 2, {2, 2}, {{3, 4}, {5, 4}}},
    {"ji,jk->ik", "ji,jk->ik", 2, {2, 2}, {{4, 3}, {4, 5}}},
    {"bij,bjk->bik", "bij,bjk->bik", 2, {3, 3}, {{2, 3, 4}, {2, 4, 5}}},
    {"bij,bjk->kib", "bij,bjk->kib", 2, {3, 3}, {{2, 3, 4}, {2, 4, 5}}},
    {"ii->", "ii->", 1, {2}, {{4, 4}}},
    {"ii", "ii->", 1, {2}, {{4, 4}}},
    {"ii->i", "ii->i", 1, {2}, {{4, 4}}},
    {"iij->ji", "iij->ji", 1, {3}, {{3, 3, 2}}},
    {"ij->", "ij->", 1, {2}, {{3, 4}}},
    {"ij->j", "ij->j", 1, {2}, {{3, 4}}},
    {"ij->ji", "ij->ji", 1, {2}, {{3, 4}}},
    {"ij", "ij->ij", 1, {2}, {{3, 4}}},
    {"i,j->ij", "i,j->ij", 2, {1, 1}, {{3}, {4}}},
    {"i,j", "i,j->ij", 2, {1, 1}, {{3}, {4}}},
    {"i,i->", "i,i->", 2, {1, 1}, {{5}, {5}}},
    {"i,i", "i,i->", 2, {1, 1}, {{5}, {5}}},
    {"i,i->i", "i,i->i", 2, {1, 1}, {{5}, {5}}},
    {"...ij,...jk->...ik", "xij,xjk->xik", 2, {3, 3}, {{5, 2, 3}, {5, 3, 4}}},
    {"...ij,...jk->...ik", "xij,jk->xik", 2, {3, 2}, {{5, 2, 3}, {3, 4}}},
    {"...ij,...jk", "xyij,yjk->xyik", 2, {4, 3}, {{2, 1, 2, 3}, {3, 3, 4}}},
    {"...ij,...jk->ik", "xij,jk->ik", 2, {3, 2}, {{5, 2, 3}, {3, 4}}},
    {"i...,i...->...", "ix,ix->x", 2, {2, 2}, {{3, 4}, {3, 4}}},
    {"a...b,b...->...a", "axyb,bxy->xya", 2, {4, 3}, {{2, 3, 4, 5}, {5, 3, 4}}},
    {"ij,jk,kl->il", "ij,jk,kl->il", 3, {2, 2, 2}, {{2, 3}, {3, 4}, {4, 5}}},
    {"ij,jk,kl->li", "ij,jk,kl->li", 3, {2, 2, 2}, {{6, 2}, {2, 7}, {7, 3}}},
    {"ab,bc,cd,de->ae", "ab,bc,cd,de->ae", 4, {2, 2, 2, 2}, {{2, 3}, {3, 4}, {4, 2}, {2, 3}}},
    {"ijk,jl,kl->il", "ijk,jl,kl->il", 3, {3, 2, 2}, {{2, 3, 4}, {3, 5}, {4, 5}}},
    {"ij,ij->ij", "ij,ij->ij", 2, {2, 2}, {{3, 1}, {1, 4}}},
    {"ij,jk->ik", "ij,jk->ik", 2, {2, 2}, {{2, 1}, {3, 4}}},
    {"i,i", "i,i->", 2, {1, 1}, {{3}, {1}}},
    {"Ab,bc", "Ab,bc->Ac", 2, {2, 2}, {{2, 3}, {3, 4}}},
    {"bA,aB", "bA,aB->ABab", 2, {2, 2}, {{2, 3}, {4, 5}}},
    {" i j , j k -> i k ", "ij,jk->ik", 2, {2, 2}, {{2, 3}, {3, 4}}},
    {"ij,jk->ik", "ij,jk->ik", 2, {2, 2}, {{2, 0}, {0, 4}}},
    {"i->", "i->", 1, {1}, {{0}}},
    {"->", "->", 1, {0}, {{0}}},
    {"ij,jk->ki", "ij,jk->ki", 2, {2, 2}, {{1, 6}, {6, 1}}},
    {"iji,jk->k", "iji,jk->k", 2, {3, 2}, {{3, 2, 3}, {2, 4}}},
    {"bii,bi->b", "bii,bi->b", 2, {3, 2}, {{2, 3, 3}, {2, 3}}},
};

static void test_cases(void) {
  emlx_dtype ds[] = {EMLX_FLOAT32, EMLX_FLOAT64, EMLX_BFLOAT16,
                     EMLX_FLOAT16, EMLX_INT32,   EMLX_INT8};
  for (size_t t = 0; t < sizeof ds / sizeof ds[0]; t++)
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
      run_case(&cases[i], ds[t]);
}

static void test_promotion_and_views(void) {
  double v[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  emlx_array *a = tu_make(EMLX_INT32, (int64_t[]){3, 4}, 2, v);
  emlx_array *b = tu_make(EMLX_FLOAT32, (int64_t[]){4, 3}, 2, v);
  emlx_array *bt = emlx_transpose(b, NULL, 0); /* (3, 4) view */
  emlx_array *ops[2] = {a, bt};
  emlx_array *r = emlx_einsum("ij,ij->i", ops, 2);
  double ref[3] = {0};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      ref[i] += v[i * 4 + j] * v[j * 3 + i];
  int64_t s3[1] = {3};
  tu_check_array(r, EMLX_FLOAT32, s3, 1, ref, 0.0, "int32 x f32 transposed view -> f32");
  emlx_release(r);
  emlx_release(a);
  emlx_release(b);
  emlx_release(bt);
}

static void test_errors(void) {
  double v[64] = {0};
  emlx_array *a = tu_make(EMLX_FLOAT32, (int64_t[]){3, 4}, 2, v);
  emlx_array *b = tu_make(EMLX_FLOAT32, (int64_t[]){4, 4}, 2, v);
  emlx_array *bo = tu_make(EMLX_BOOL, (int64_t[]){3, 4}, 2, v);
  emlx_array *ab[2] = {a, b}, *aa[2] = {a, a}, *one[1] = {a}, *nul[2] = {a, NULL};
  emlx_array *bb[1] = {bo};
  CHECK_NULL_ERR(emlx_einsum(NULL, one, 1));
  CHECK_NULL_ERR(emlx_einsum("ij", NULL, 1));
  CHECK_NULL_ERR(emlx_einsum("ij", one, 0));
  CHECK_NULL_ERR(emlx_einsum("ij,jk", nul, 2));
  CHECK_NULL_ERR(emlx_einsum("ij,jk", one, 1));    /* two terms, one operand */
  CHECK_NULL_ERR(emlx_einsum("ij", ab, 2));        /* one term, two operands */
  CHECK_NULL_ERR(emlx_einsum("ijk", one, 1));      /* rank 2, three labels */
  CHECK_NULL_ERR(emlx_einsum("i", one, 1));        /* rank 2, one label */
  CHECK_NULL_ERR(emlx_einsum("ij,jk->ik", aa, 2)); /* j: 4 vs 3 */
  CHECK_NULL_ERR(emlx_einsum("ij,ij->ij", ab, 2)); /* i: 3 vs 4 */
  CHECK_NULL_ERR(emlx_einsum("ii->i", one, 1));    /* diagonal of 3 x 4 */
  CHECK_NULL_ERR(emlx_einsum("ij->k", one, 1));    /* output label not in inputs */
  CHECK_NULL_ERR(emlx_einsum("ij->ii", one, 1));   /* repeated output label */
  CHECK_NULL_ERR(emlx_einsum("i1->i", one, 1));    /* bad character */
  CHECK_NULL_ERR(emlx_einsum("i..j->i", one, 1));  /* bad ellipsis */
  CHECK_NULL_ERR(emlx_einsum("...i...->i", one, 1));
  CHECK_NULL_ERR(emlx_einsum("ij->i->j", one, 1));
  CHECK_NULL_ERR(emlx_einsum("ij", bb, 1)); /* bool */
  emlx_release(a);
  emlx_release(b);
  emlx_release(bo);
}

int main(void) {
  test_cases();
  test_promotion_and_views();
  test_errors();
  return tu_finish();
}
