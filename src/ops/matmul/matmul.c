/* matmul.c — constructors of matmul and tensordot (Nx's dot/6).
 *
 * matmul makes one MATMUL node whose inputs are a (..., M, K) and b (..., K,
 * N) broadcast (as views) to the output's batch shape; the kernel reads any
 * strides, so transposed and broadcast operands are never copied here.
 * tensordot is a composition: transpose each operand to (batch, free,
 * contract) or (batch, contract, free), reshape to a batched matrix, matmul,
 * reshape to the output's axes. */
#include <stdlib.h>
#include <string.h>

#include "matmul_ops.h"

int emlx__matmul_dtype(emlx_dtype a, emlx_dtype b, const char *op, emlx_dtype *out) {
  emlx_dtype d = emlx_promote_types(a, b);
  if (!emlx_dtype_is_valid(d))
    return EMLX_FAIL("%s: invalid dtype", op);
  if (d == EMLX_BOOL)
    return EMLX_FAIL("%s: bool operands are not supported (cast to an integer or float dtype)", op);
  *out = d;
  return 0;
}

static int check_pair(emlx_array *a, emlx_array *b, const char *op) {
  if (!a || !b)
    return EMLX_FAIL("%s: input array is NULL", op);
  if (a->device != b->device)
    return EMLX_FAIL("%s: mismatched devices (%s and %s)", op, emlx_device_name(a->device),
                     emlx_device_name(b->device));
  return 0;
}

/* The MATMUL node for a (..., M, K), b (..., K, N) of one dtype, ranks >= 2. */
static emlx_array *matmul_node(emlx_array *a, emlx_array *b) {
  int na = a->ndim, nb = b->ndim;
  int64_t batch[EMLX_MAX_NDIM];
  int nbatch = emlx__broadcast_shapes(a->shape, na - 2, b->shape, nb - 2, batch, "matmul");
  if (nbatch < 0)
    return NULL;
  if (nbatch + 2 > EMLX_MAX_NDIM)
    return EMLX_FAIL_NULL("matmul: result rank is too large");
  int64_t sa[EMLX_MAX_NDIM], sb[EMLX_MAX_NDIM], so[EMLX_MAX_NDIM];
  memcpy(sa, batch, (size_t)nbatch * sizeof *sa);
  memcpy(sb, batch, (size_t)nbatch * sizeof *sb);
  memcpy(so, batch, (size_t)nbatch * sizeof *so);
  sa[nbatch] = a->shape[na - 2];
  sa[nbatch + 1] = a->shape[na - 1];
  sb[nbatch] = b->shape[nb - 2];
  sb[nbatch + 1] = b->shape[nb - 1];
  so[nbatch] = sa[nbatch];
  so[nbatch + 1] = sb[nbatch + 1];
  emlx_array *ab = emlx_broadcast_to(a, sa, nbatch + 2);
  emlx_array *bb = ab ? emlx_broadcast_to(b, sb, nbatch + 2) : NULL;
  emlx_array *out = NULL;
  if (ab && bb) {
    emlx_array *in[2] = {ab, bb};
    out = emlx__op(EMLX_PRIM_MATMUL, in, 2, NULL, 0, a->dtype, so, nbatch + 2);
  }
  emlx_release(ab);
  emlx_release(bb);
  return out;
}

emlx_array *emlx_matmul(emlx_array *a, emlx_array *b) {
  if (check_pair(a, b, "matmul") != 0)
    return NULL;
  if (a->ndim == 0 || b->ndim == 0)
    return EMLX_FAIL_NULL("matmul: operands must have at least one dimension (got ranks %d and %d)",
                          a->ndim, b->ndim);
  emlx_dtype dt;
  if (emlx__matmul_dtype(a->dtype, b->dtype, "matmul", &dt) != 0)
    return NULL;
  int64_t ka = a->shape[a->ndim - 1];
  int64_t kb = b->ndim == 1 ? b->shape[0] : b->shape[b->ndim - 2];
  if (ka != kb)
    return EMLX_FAIL_NULL("matmul: inner dimensions differ (%lld vs %lld)", (long long)ka,
                          (long long)kb);
  emlx_array *ca = emlx__cast(a, dt);
  emlx_array *cb = ca ? emlx__cast(b, dt) : NULL;
  emlx_array *a2 = NULL, *b2 = NULL, *r = NULL, *out = NULL;
  if (!cb)
    goto done;
  /* 1-D operands: a vector on the left is a (1, K) row, on the right a
   * (K, 1) column; the added axis leaves the result again. */
  int64_t row[2] = {1, ka}, col[2] = {kb, 1};
  a2 = a->ndim == 1 ? emlx_reshape(ca, row, 2) : emlx_retain(ca);
  b2 = a2 ? (b->ndim == 1 ? emlx_reshape(cb, col, 2) : emlx_retain(cb)) : NULL;
  if (!b2)
    goto done;
  r = matmul_node(a2, b2);
  if (!r)
    goto done;
  if (a->ndim == 1 || b->ndim == 1) {
    int64_t shape[EMLX_MAX_NDIM];
    int nd = 0;
    for (int i = 0; i < r->ndim; i++) {
      if (a->ndim == 1 && i == r->ndim - 2)
        continue;
      if (b->ndim == 1 && i == r->ndim - 1)
        continue;
      shape[nd++] = r->shape[i];
    }
    out = emlx_reshape(r, shape, nd);
  } else {
    out = emlx_retain(r);
  }
done:
  emlx_release(ca);
  emlx_release(cb);
  emlx_release(a2);
  emlx_release(b2);
  emlx_release(r);
  return out;
}

/* ---- tensordot ---------------------------------------------------------- */

/* rank[ax]: where axis ax comes in a's memory order (0 = slowest). For a
 * lazy array the producer's row-major layout is assumed. */
static void memory_rank(const emlx_array *a, int *rank) {
  int order[EMLX_MAX_NDIM];
  for (int i = 0; i < a->ndim; i++)
    order[i] = i;
  if (emlx__ready(a)) { /* insertion sort by decreasing |stride|, stable */
    for (int i = 1; i < a->ndim; i++) {
      int ax = order[i], j = i;
      int64_t s = llabs(a->strides[ax]);
      while (j > 0 && llabs(a->strides[order[j - 1]]) < s) {
        order[j] = order[j - 1];
        j--;
      }
      order[j] = ax;
    }
  }
  for (int i = 0; i < a->ndim; i++)
    rank[order[i]] = i;
}

/* Normalises and checks one operand's axis lists; fills role[ax] (0 free,
 * 1 contract, 2 batch). */
static int normalize_roles(const emlx_array *a, const char *which, const int *contract,
                           int ncontract, const int *batch, int nbatch, int *c, int *bt,
                           int *role) {
  for (int i = 0; i < a->ndim; i++)
    role[i] = 0;
  for (int i = 0; i < ncontract + nbatch; i++) {
    bool is_c = i < ncontract;
    int ax = is_c ? contract[i] : batch[i - ncontract];
    if (ax < 0)
      ax += a->ndim;
    if (ax < 0 || ax >= a->ndim)
      return EMLX_FAIL("tensordot: %s axis %d is out of range for rank %d", which,
                       is_c ? contract[i] : batch[i - ncontract], a->ndim);
    if (role[ax])
      return EMLX_FAIL("tensordot: %s axis %d is listed twice", which, ax);
    role[ax] = is_c ? 1 : 2;
    if (is_c)
      c[i] = ax;
    else
      bt[i - ncontract] = ax;
  }
  return 0;
}

/* Transposes x to (batch, first, second) with `first`/`second` groups of
 * axes, and reshapes it to (batch sizes..., prod(first), prod(second)). */
static emlx_array *to_matrix(emlx_array *x, const int *batch, int nbatch, const int *first,
                             int nfirst, const int *second, int nsecond) {
  int perm[EMLX_MAX_NDIM], n = 0;
  int64_t shape[EMLX_MAX_NDIM];
  int64_t p1 = 1, p2 = 1;
  for (int i = 0; i < nbatch; i++) {
    perm[n++] = batch[i];
    shape[i] = x->shape[batch[i]];
  }
  for (int i = 0; i < nfirst; i++) {
    perm[n++] = first[i];
    p1 *= x->shape[first[i]];
  }
  for (int i = 0; i < nsecond; i++) {
    perm[n++] = second[i];
    p2 *= x->shape[second[i]];
  }
  shape[nbatch] = p1;
  shape[nbatch + 1] = p2;
  emlx_array *t = emlx_transpose(x, perm, n);
  emlx_array *r = t ? emlx_reshape(t, shape, nbatch + 2) : NULL;
  emlx_release(t);
  return r;
}

/* Swaps the last two axes (a view). */
static emlx_array *swap_last(emlx_array *x) {
  int perm[EMLX_MAX_NDIM];
  for (int i = 0; i < x->ndim; i++)
    perm[i] = i;
  perm[x->ndim - 2] = x->ndim - 1;
  perm[x->ndim - 1] = x->ndim - 2;
  return emlx_transpose(x, perm, x->ndim);
}

/* True when, in memory order, every axis of `lo` comes before every axis of
 * `hi` and each group keeps its listed order (so the reshape is a view). */
static bool groups_in_order(const int *rank, const int *lo, int nlo, const int *hi, int nhi) {
  for (int i = 1; i < nlo; i++)
    if (rank[lo[i]] < rank[lo[i - 1]])
      return false;
  for (int i = 1; i < nhi; i++)
    if (rank[hi[i]] < rank[hi[i - 1]])
      return false;
  return nlo == 0 || nhi == 0 || rank[lo[nlo - 1]] < rank[hi[0]];
}

emlx_array *emlx_tensordot(emlx_array *a, emlx_array *b, const int *contract_a,
                           const int *contract_b, int ncontract, const int *batch_a,
                           const int *batch_b, int nbatch) {
  if (check_pair(a, b, "tensordot") != 0)
    return NULL;
  if (ncontract < 0 || nbatch < 0 || (ncontract > 0 && (!contract_a || !contract_b)) ||
      (nbatch > 0 && (!batch_a || !batch_b)))
    return EMLX_FAIL_NULL("tensordot: invalid axis lists");
  if (ncontract + nbatch > a->ndim || ncontract + nbatch > b->ndim)
    return EMLX_FAIL_NULL("tensordot: %d axes listed for operands of rank %d and %d",
                          ncontract + nbatch, a->ndim, b->ndim);
  emlx_dtype dt;
  if (emlx__matmul_dtype(a->dtype, b->dtype, "tensordot", &dt) != 0)
    return NULL;
  int ca[EMLX_MAX_NDIM], cb[EMLX_MAX_NDIM], ba[EMLX_MAX_NDIM], bb[EMLX_MAX_NDIM];
  int role_a[EMLX_MAX_NDIM], role_b[EMLX_MAX_NDIM];
  if (normalize_roles(a, "left", contract_a, ncontract, batch_a, nbatch, ca, ba, role_a) != 0 ||
      normalize_roles(b, "right", contract_b, ncontract, batch_b, nbatch, cb, bb, role_b) != 0)
    return NULL;
  for (int i = 0; i < ncontract; i++)
    if (a->shape[ca[i]] != b->shape[cb[i]])
      return EMLX_FAIL_NULL("tensordot: contracted axes %d and %d differ in size (%lld vs %lld)",
                            ca[i], cb[i], (long long)a->shape[ca[i]], (long long)b->shape[cb[i]]);
  for (int i = 0; i < nbatch; i++)
    if (a->shape[ba[i]] != b->shape[bb[i]])
      return EMLX_FAIL_NULL("tensordot: batch axes %d and %d differ in size (%lld vs %lld)", ba[i],
                            bb[i], (long long)a->shape[ba[i]], (long long)b->shape[bb[i]]);
  int fa[EMLX_MAX_NDIM], fb[EMLX_MAX_NDIM], nfa = 0, nfb = 0;
  for (int i = 0; i < a->ndim; i++)
    if (!role_a[i])
      fa[nfa++] = i;
  for (int i = 0; i < b->ndim; i++)
    if (!role_b[i])
      fb[nfb++] = i;
  if (nbatch + nfa + nfb > EMLX_MAX_NDIM)
    return EMLX_FAIL_NULL("tensordot: result rank %d is too large", nbatch + nfa + nfb);

  /* The order of the contracted pairs does not change the sum: follow a's
   * memory order so that a's reshape is a view when it can be. */
  int rank_a[EMLX_MAX_NDIM], rank_b[EMLX_MAX_NDIM];
  memory_rank(a, rank_a);
  memory_rank(b, rank_b);
  for (int i = 1; i < ncontract; i++)
    for (int j = i; j > 0 && rank_a[ca[j]] < rank_a[ca[j - 1]]; j--) {
      int t = ca[j];
      ca[j] = ca[j - 1];
      ca[j - 1] = t;
      t = cb[j];
      cb[j] = cb[j - 1];
      cb[j - 1] = t;
    }

  emlx_array *xa = emlx__cast(a, dt);
  emlx_array *xb = xa ? emlx__cast(b, dt) : NULL;
  emlx_array *ma = NULL, *mb = NULL, *prod = NULL, *out = NULL;
  if (!xb)
    goto done;
  /* a as (batch, M, K): either directly, or as the transpose of (batch, K, M)
   * when the contracted axes lead in memory (then matmul reads it with a
   * transpose flag instead of copying). The same for b as (batch, K, N). */
  if (!groups_in_order(rank_a, fa, nfa, ca, ncontract) &&
      groups_in_order(rank_a, ca, ncontract, fa, nfa)) {
    emlx_array *t = to_matrix(xa, ba, nbatch, ca, ncontract, fa, nfa);
    ma = t ? swap_last(t) : NULL;
    emlx_release(t);
  } else {
    ma = to_matrix(xa, ba, nbatch, fa, nfa, ca, ncontract);
  }
  if (!groups_in_order(rank_b, cb, ncontract, fb, nfb) &&
      groups_in_order(rank_b, fb, nfb, cb, ncontract)) {
    emlx_array *t = to_matrix(xb, bb, nbatch, fb, nfb, cb, ncontract);
    mb = t ? swap_last(t) : NULL;
    emlx_release(t);
  } else {
    mb = to_matrix(xb, bb, nbatch, cb, ncontract, fb, nfb);
  }
  if (!ma || !mb)
    goto done;
  prod = matmul_node(ma, mb);
  if (!prod)
    goto done;
  int64_t shape[EMLX_MAX_NDIM];
  int nd = 0;
  for (int i = 0; i < nbatch; i++)
    shape[nd++] = a->shape[ba[i]];
  for (int i = 0; i < nfa; i++)
    shape[nd++] = a->shape[fa[i]];
  for (int i = 0; i < nfb; i++)
    shape[nd++] = b->shape[fb[i]];
  out = emlx_reshape(prod, shape, nd);
done:
  emlx_release(xa);
  emlx_release(xb);
  emlx_release(ma);
  emlx_release(mb);
  emlx_release(prod);
  return out;
}

emlx_array *emlx_tensordot_n(emlx_array *a, emlx_array *b, int n) {
  if (check_pair(a, b, "tensordot") != 0)
    return NULL;
  if (n < 0 || n > a->ndim || n > b->ndim)
    return EMLX_FAIL_NULL("tensordot: cannot contract %d axes of operands of rank %d and %d", n,
                          a->ndim, b->ndim);
  int ca[EMLX_MAX_NDIM], cb[EMLX_MAX_NDIM];
  for (int i = 0; i < n; i++) {
    ca[i] = a->ndim - n + i;
    cb[i] = i;
  }
  return emlx_tensordot(a, b, ca, cb, n, NULL, NULL, 0);
}
