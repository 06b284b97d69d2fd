/* einsum.c — Einstein summation, built on the other ops.
 *
 * The subscripts are parsed into integer labels (letters 0..51 in ASCII
 * order, then one label per broadcast ellipsis axis). Each operand is then
 * simplified on its own: repeated labels become a diagonal view (DIAG_VIEW),
 * size-1 axes whose label is larger elsewhere are squeezed away (that is
 * exactly broadcasting), and labels that no other operand and not the output
 * need are summed. The operands are then contracted pairwise with tensordot
 * (which becomes one batched matmul), each time choosing the pair whose
 * result is smallest (numpy's "greedy" order); the last term is transposed
 * into the output's order. */
#include <stdlib.h>
#include <string.h>

#include "matmul_ops.h"
#include "params_matmul.h"

#define NLETTERS 52
#define MAX_LABELS (NLETTERS + EMLX_MAX_NDIM)

typedef struct term {
  emlx_array *x; /* owned */
  int n;
  int lab[EMLX_MAX_NDIM];
} term;

typedef struct spec {
  int nterms;
  int nlab[EMLX_MAX_NDIM * 4];   /* letter labels per term */
  bool ell[EMLX_MAX_NDIM * 4];   /* term has "..." */
  int ellpos[EMLX_MAX_NDIM * 4]; /* letters before the "..." */
  int lab[EMLX_MAX_NDIM * 4][EMLX_MAX_NDIM];
  bool explicit_out;
  bool out_ell;
  int out_ellpos;
  int nout;
  int out[EMLX_MAX_NDIM];
} spec;

static int letter_label(char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return 26 + (c - 'a');
  return -1;
}

/* Parses one term (letters and at most one "..."), spaces already gone. */
static int parse_term(const char *s, size_t len, int *labels, int *nlab, bool *ell, int *ellpos) {
  *nlab = 0;
  *ell = false;
  *ellpos = 0;
  for (size_t i = 0; i < len;) {
    if (s[i] == '.') {
      if (*ell || i + 3 > len || s[i + 1] != '.' || s[i + 2] != '.')
        return EMLX_FAIL("einsum: malformed ellipsis in subscripts");
      *ell = true;
      *ellpos = *nlab;
      i += 3;
      continue;
    }
    int l = letter_label(s[i]);
    if (l < 0)
      return EMLX_FAIL("einsum: invalid character '%c' in subscripts", s[i]);
    if (*nlab >= EMLX_MAX_NDIM)
      return EMLX_FAIL("einsum: too many labels in one term");
    labels[(*nlab)++] = l;
    i++;
  }
  return 0;
}

static int parse(const char *subscripts, int noperands, spec *sp) {
  size_t n = strlen(subscripts);
  char *s = malloc(n + 1);
  if (!s)
    return EMLX_FAIL("einsum: out of memory");
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (subscripts[i] != ' ')
      s[m++] = subscripts[i];
  s[m] = '\0';
  int rc = -1;
  char *arrow = strstr(s, "->");
  size_t in_len = arrow ? (size_t)(arrow - s) : m;
  if (arrow && strstr(arrow + 2, "->")) {
    emlx__set_error("einsum: more than one '->' in subscripts");
    goto done;
  }
  sp->nterms = 0;
  for (size_t start = 0;;) {
    size_t end = start;
    while (end < in_len && s[end] != ',')
      end++;
    if (sp->nterms >= noperands) {
      emlx__set_error("einsum: subscripts name more operands than the %d given", noperands);
      goto done;
    }
    int t = sp->nterms++;
    if (parse_term(s + start, end - start, sp->lab[t], &sp->nlab[t], &sp->ell[t], &sp->ellpos[t]) !=
        0)
      goto done;
    if (end >= in_len)
      break;
    start = end + 1;
  }
  if (sp->nterms != noperands) {
    emlx__set_error("einsum: subscripts name %d operands but %d were given", sp->nterms, noperands);
    goto done;
  }
  sp->explicit_out = arrow != NULL;
  if (arrow) {
    if (parse_term(arrow + 2, strlen(arrow + 2), sp->out, &sp->nout, &sp->out_ell,
                   &sp->out_ellpos) != 0)
      goto done;
  }
  rc = 0;
done:
  free(s);
  return rc;
}

/* A DIAG_VIEW node: input axis j goes to output axis group[j]. */
static emlx_array *diag_view(emlx_array *x, const int *group) {
  int nout = 0;
  int64_t shape[EMLX_MAX_NDIM];
  for (int j = 0; j < x->ndim; j++) {
    int g = group[j];
    if (g == nout) {
      shape[nout++] = x->shape[j];
    } else if (shape[g] != x->shape[j]) {
      return EMLX_FAIL_NULL("einsum: a repeated label spans axes of sizes %lld and %lld",
                            (long long)shape[g], (long long)x->shape[j]);
    }
  }
  size_t psize = sizeof(emlx_diag_view_params) + (size_t)x->ndim * sizeof(int32_t);
  emlx_diag_view_params *p = calloc(1, psize);
  if (!p)
    return EMLX_FAIL_NULL("einsum: out of memory");
  p->ndim_in = x->ndim;
  for (int j = 0; j < x->ndim; j++)
    p->group[j] = group[j];
  emlx_array *out = emlx__op(EMLX_PRIM_DIAG_VIEW, &x, 1, p, psize, x->dtype, shape, nout);
  free(p);
  return out;
}

static void term_replace(term *t, emlx_array *x) {
  emlx_release(t->x);
  t->x = x;
}

/* Sums the given axes of t (positions), keeping t's dtype (integer sums
 * widen in emlx_sum; the low bits are the wrapped result). */
static int term_sum(term *t, const int *axes, int naxes) {
  if (naxes == 0)
    return 0;
  emlx_dtype dt = t->x->dtype;
  emlx_array *s = emlx_sum(t->x, axes, naxes, false);
  emlx_array *c = s ? emlx__cast(s, dt) : NULL;
  emlx_release(s);
  if (!c)
    return -1;
  term_replace(t, c);
  bool drop[EMLX_MAX_NDIM] = {false};
  for (int i = 0; i < naxes; i++)
    drop[axes[i]] = true;
  int n = 0;
  for (int i = 0; i < t->n; i++)
    if (!drop[i])
      t->lab[n++] = t->lab[i];
  t->n = n;
  return 0;
}

/* Occurrences of label l in the terms other than skip1 and skip2. */
static int used_elsewhere(const term *terms, int nterms, int skip1, int skip2, int l) {
  int c = 0;
  for (int i = 0; i < nterms; i++) {
    if (i == skip1 || i == skip2)
      continue;
    for (int k = 0; k < terms[i].n; k++)
      c += terms[i].lab[k] == l;
  }
  return c;
}

/* Diagonal, broadcast squeeze and early sums of one operand. */
static int simplify_term(term *terms, int nterms, int ti, const bool *keep, const int64_t *size) {
  term *t = &terms[ti];
  int group[EMLX_MAX_NDIM], uniq[EMLX_MAX_NDIM], nu = 0;
  for (int j = 0; j < t->n; j++) {
    int g = 0;
    while (g < nu && uniq[g] != t->lab[j])
      g++;
    if (g == nu)
      uniq[nu++] = t->lab[j];
    group[j] = g;
  }
  if (nu < t->n) {
    emlx_array *d = diag_view(t->x, group);
    if (!d)
      return -1;
    term_replace(t, d);
    memcpy(t->lab, uniq, (size_t)nu * sizeof(int));
    t->n = nu;
  }
  int sq[EMLX_MAX_NDIM], nsq = 0;
  for (int j = 0; j < t->n; j++)
    if (t->x->shape[j] == 1 && size[t->lab[j]] != 1)
      sq[nsq++] = j;
  if (nsq > 0) {
    emlx_array *s = emlx_squeeze(t->x, sq, nsq);
    if (!s)
      return -1;
    term_replace(t, s);
    int n = 0;
    for (int j = 0, k = 0; j < t->n; j++) {
      if (k < nsq && sq[k] == j) {
        k++;
        continue;
      }
      t->lab[n++] = t->lab[j];
    }
    t->n = n;
  }
  int axes[EMLX_MAX_NDIM], na = 0;
  for (int j = 0; j < t->n; j++)
    if (!keep[t->lab[j]] && used_elsewhere(terms, nterms, ti, -1, t->lab[j]) == 0)
      axes[na++] = j;
  return term_sum(t, axes, na);
}

/* Labels the contraction of terms i and j keeps, in the order batch (in
 * both), free of i, free of j; returns their count and the result's size
 * (saturating). */
static int pair_result(const term *terms, int nterms, int i, int j, const bool *keep,
                       const int64_t *size, double *elems) {
  double e = 1;
  int n = 0;
  bool seen[MAX_LABELS] = {false};
  for (int s = 0; s < 2; s++) {
    const term *t = &terms[s ? j : i];
    for (int k = 0; k < t->n; k++) {
      int l = t->lab[k];
      if (seen[l])
        continue;
      seen[l] = true;
      if (keep[l] || used_elsewhere(terms, nterms, i, j, l) > 0) {
        e *= (double)size[l];
        n++;
      }
    }
  }
  *elems = e;
  return n;
}

static int position(const term *t, int l) {
  for (int k = 0; k < t->n; k++)
    if (t->lab[k] == l)
      return k;
  return -1;
}

/* Contracts terms[i] and terms[j] into terms[i]. */
static int contract_pair(term *terms, int nterms, int i, int j, const bool *keep) {
  term *a = &terms[i], *b = &terms[j];
  int ca[EMLX_MAX_NDIM], cb[EMLX_MAX_NDIM], ba[EMLX_MAX_NDIM], bb[EMLX_MAX_NDIM];
  int nc = 0, nb = 0, lab[2 * EMLX_MAX_NDIM], n = 0;
  for (int k = 0; k < a->n; k++) {
    int l = a->lab[k], pb = position(b, l);
    if (pb < 0)
      continue;
    if (keep[l] || used_elsewhere(terms, nterms, i, j, l) > 0) {
      ba[nb] = k;
      bb[nb++] = pb;
      lab[n++] = l;
    } else {
      ca[nc] = k;
      cb[nc++] = pb;
    }
  }
  for (int k = 0; k < a->n; k++)
    if (position(b, a->lab[k]) < 0)
      lab[n++] = a->lab[k];
  for (int k = 0; k < b->n; k++)
    if (position(a, b->lab[k]) < 0)
      lab[n++] = b->lab[k];
  if (n > EMLX_MAX_NDIM)
    return EMLX_FAIL("einsum: an intermediate result would have rank %d", n);
  emlx_array *r = emlx_tensordot(a->x, b->x, ca, cb, nc, ba, bb, nb);
  if (!r)
    return -1;
  term_replace(a, r);
  memcpy(a->lab, lab, (size_t)n * sizeof(int));
  a->n = n;
  return 0;
}

/* Labels, sizes and the output list from the parsed spec; -1 on error. */
static int bind_labels(const spec *sp, emlx_array *const *ops, term *terms, int64_t *size, int *out,
                       int *nout, bool *keep) {
  int nell = 0;
  for (int t = 0; t < sp->nterms; t++) {
    int nd = ops[t]->ndim, ne = nd - sp->nlab[t];
    if (ne < 0 || (!sp->ell[t] && ne != 0))
      return EMLX_FAIL("einsum: operand %d has rank %d but its subscripts name %d axes", t, nd,
                       sp->nlab[t]);
    if (ne > nell)
      nell = ne;
  }
  for (int l = 0; l < MAX_LABELS; l++)
    size[l] = -1;
  int count[MAX_LABELS] = {0};
  for (int t = 0; t < sp->nterms; t++) {
    term *tm = &terms[t];
    int nd = ops[t]->ndim, ne = nd - sp->nlab[t], k = 0;
    for (int j = 0; j < sp->nlab[t]; j++) {
      if (sp->ell[t] && j == sp->ellpos[t])
        for (int e = 0; e < ne; e++)
          tm->lab[k++] = NLETTERS + nell - ne + e;
      tm->lab[k++] = sp->lab[t][j];
    }
    if (sp->ell[t] && sp->ellpos[t] == sp->nlab[t])
      for (int e = 0; e < ne; e++)
        tm->lab[k++] = NLETTERS + nell - ne + e;
    tm->n = nd;
    for (int j = 0; j < nd; j++) {
      int l = tm->lab[j];
      int64_t d = ops[t]->shape[j];
      count[l]++;
      if (size[l] < 0 || size[l] == 1)
        size[l] = d;
      else if (d != size[l] && d != 1)
        return EMLX_FAIL("einsum: label sizes disagree (%lld vs %lld)", (long long)size[l],
                         (long long)d);
    }
  }
  *nout = 0;
  if (sp->explicit_out) {
    for (int j = 0; j <= sp->nout; j++) {
      if (sp->out_ell && j == sp->out_ellpos)
        for (int e = 0; e < nell; e++)
          out[(*nout)++] = NLETTERS + e;
      if (j == sp->nout)
        break;
      int l = sp->out[j];
      if (count[l] == 0)
        return EMLX_FAIL("einsum: output label '%c' does not occur in the inputs",
                         l < 26 ? 'A' + l : 'a' + (l - 26));
      for (int k = 0; k < *nout; k++)
        if (out[k] == l)
          return EMLX_FAIL("einsum: output label repeated");
      out[(*nout)++] = l;
    }
  } else {
    for (int e = 0; e < nell; e++)
      out[(*nout)++] = NLETTERS + e;
    for (int l = 0; l < NLETTERS; l++)
      if (count[l] == 1)
        out[(*nout)++] = l;
  }
  for (int l = 0; l < MAX_LABELS; l++)
    keep[l] = false;
  for (int k = 0; k < *nout; k++)
    keep[out[k]] = true;
  return 0;
}

emlx_array *emlx_einsum(const char *subscripts, emlx_array *const *operands, int noperands) {
  if (!subscripts)
    return EMLX_FAIL_NULL("einsum: subscripts are NULL");
  if (noperands < 1 || noperands > EMLX_MAX_NDIM * 4 || !operands)
    return EMLX_FAIL_NULL("einsum: invalid operand count %d", noperands);
  emlx_dtype dt = EMLX_BOOL;
  for (int i = 0; i < noperands; i++) {
    if (!operands[i])
      return EMLX_FAIL_NULL("einsum: operand %d is NULL", i);
    if (operands[i]->device != operands[0]->device)
      return EMLX_FAIL_NULL("einsum: operands are on different devices");
    dt = i == 0 ? operands[0]->dtype : emlx_promote_types(dt, operands[i]->dtype);
  }
  if (emlx__matmul_dtype(dt, dt, "einsum", &dt) != 0)
    return NULL;
  spec *sp = calloc(1, sizeof *sp);
  term *terms = calloc((size_t)noperands, sizeof *terms);
  emlx_array *result = NULL;
  if (!sp || !terms) {
    emlx__set_error("einsum: out of memory");
    goto done;
  }
  if (parse(subscripts, noperands, sp) != 0)
    goto done;
  int64_t size[MAX_LABELS];
  int out[MAX_LABELS], nout;
  bool keep[MAX_LABELS];
  if (bind_labels(sp, operands, terms, size, out, &nout, keep) != 0)
    goto done;
  int nterms = noperands;
  for (int t = 0; t < nterms; t++) {
    terms[t].x = emlx__cast(operands[t], dt);
    if (!terms[t].x)
      goto done;
  }
  /* Twice: squeezing a later operand can leave a label to one earlier term. */
  for (int pass = 0; pass < 2; pass++)
    for (int t = 0; t < nterms; t++)
      if (simplify_term(terms, nterms, t, keep, size) != 0)
        goto done;
  while (nterms > 1) {
    int bi = 0, bj = 1;
    double best = -1, best_in = 0;
    for (int i = 0; i < nterms; i++)
      for (int j = i + 1; j < nterms; j++) {
        double e, in = (double)terms[i].x->size + (double)terms[j].x->size;
        pair_result(terms, nterms, i, j, keep, size, &e);
        if (best < 0 || e < best || (e == best && in < best_in)) {
          best = e;
          best_in = in;
          bi = i;
          bj = j;
        }
      }
    if (contract_pair(terms, nterms, bi, bj, keep) != 0)
      goto done;
    emlx_release(terms[bj].x);
    for (int k = bj; k < nterms - 1; k++)
      terms[k] = terms[k + 1];
    terms[--nterms].x = NULL;
  }
  /* Labels left that the output does not name (single operand): sum them. */
  int axes[EMLX_MAX_NDIM], na = 0;
  for (int j = 0; j < terms[0].n; j++)
    if (!keep[terms[0].lab[j]])
      axes[na++] = j;
  if (term_sum(&terms[0], axes, na) != 0)
    goto done;
  int perm[EMLX_MAX_NDIM];
  for (int k = 0; k < nout; k++)
    perm[k] = position(&terms[0], out[k]);
  if (terms[0].n != nout) {
    emlx__set_error("einsum: internal error: %d labels left for %d outputs", terms[0].n, nout);
    goto done;
  }
  result = emlx_transpose(terms[0].x, perm, nout);
done:
  if (terms)
    for (int t = 0; t < noperands; t++)
      emlx_release(terms[t].x);
  free(terms);
  free(sp);
  return result;
}
