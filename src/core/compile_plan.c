/* compile_plan.c — the compiler's steps (steps 4 and 5 of compile.c):
 * regions of fusable candidates become fused steps (fuse_partition.c's partition,
 * plans from the plan cache), a reduction fed by a region's one output
 * takes the region as its prologue, every other node becomes a kernel step;
 * then each step records the values that die after it. See program.h. */
#include "params_control.h"
#include "program.h"

static emlx_node *proto_of(const emlx_node *n) {
  emlx_node *p = calloc(1, sizeof *p + ((n->params_size + 15u) & ~(size_t)15u));
  if (!p)
    return NULL;
  atomic_init(&p->refcount, 0);
  atomic_init(&p->state, EMLX_NODE_DONE);
  atomic_flag_clear(&p->lock);
  p->prim = n->prim;
  p->ninputs = n->ninputs;
  p->noutputs = n->noutputs;
  p->params_size = n->params_size;
  memcpy(p->params, n->params, n->params_size);
  emlx__params_retain(p->prim, p->params); /* released with the step (compile.c) */
  return p;
}

static int *dup_ints(const int *src, int n) {
  int *d = malloc((size_t)(n ? n : 1) * sizeof(int));
  if (d && n)
    memcpy(d, src, (size_t)n * sizeof(int));
  return d;
}

/* A fused step for region r, or 0 when it must run as separate kernels. */
static int fused_step(compiler *c, const emlx_fuse_region *g, const int *region_of, int r,
                      const unsigned char *leaves, const cnode *reducer, step *s) {
  emlx_fuse_desc d;
  const cnode *anchor = &c->cn[g->members[g->nmembers - 1]];
  const value_info *shape = &c->p->vals[anchor->out[0]];
  d.ndim = shape->ndim;
  d.ninputs = d.nops = d.noutputs = 0;
  d.params_len = 0;
  int in_ids[EMLX_FUSE_MAX_INPUTS], out_ids[EMLX_FUSE_MAX_OUTPUTS];
  /* external inputs first (their ids number before the ops) */
  for (int m = 0; m < g->nmembers; m++) {
    const cnode *cn = &c->cn[g->members[m]];
    for (int k = 0; k < cn->nin; k++) {
      int v = cn->in[k];
      int prod = c->p->vals[v].producer;
      if (prod >= 0 && region_of[prod] == r)
        continue;
      int j = 0;
      while (j < d.ninputs && in_ids[j] != v)
        j++;
      if (j < d.ninputs)
        continue;
      if (j == EMLX_FUSE_MAX_INPUTS)
        return 0;
      const value_info *vi = &c->p->vals[v];
      int64_t size = 1;
      for (int q = 0; q < vi->ndim; q++)
        size *= vi->shape[q];
      in_ids[j] = v;
      d.in_dtype[j] = (int32_t)vi->dtype;
      d.in_class[j] = size == 1 ? EMLX_FUSE_IN_SCALAR : EMLX_FUSE_IN_STRIDED;
      d.ninputs++;
    }
  }
  for (int m = 0; m < g->nmembers; m++) {
    const cnode *cn = &c->cn[g->members[m]];
    int32_t args[3];
    for (int k = 0; k < cn->nin; k++) {
      int v = cn->in[k];
      int prod = c->p->vals[v].producer;
      if (prod >= 0 && region_of[prod] == r) {
        int mi = 0;
        while (g->members[mi] != prod)
          mi++;
        args[k] = d.ninputs + mi;
      } else {
        int j = 0;
        while (in_ids[j] != v)
          j++;
        args[k] = j;
      }
    }
    if (emlx__fuse_desc_add_op(&d, cn->node->prim, c->p->vals[cn->out[0]].dtype, cn->nin, args,
                               cn->node->params, cn->node->params_size) < 0)
      return 0;
    if (leaves[cn->out[0]]) {
      if (d.noutputs == EMLX_FUSE_MAX_OUTPUTS)
        return 0;
      d.out_value[d.noutputs] = d.ninputs + m;
      out_ids[d.noutputs++] = cn->out[0];
    }
  }
  s->plan = emlx__fuse_plan_get(emlx__backend(EMLX_CPU), &d);
  if (!s->plan) {
    emlx_clear_error();
    return 0;
  }
  s->kind = STEP_FUSED;
  s->nin = d.ninputs;
  s->nout = d.noutputs;
  s->in = dup_ints(in_ids, d.ninputs);
  if (reducer) { /* the step yields the reduction's value instead */
    const value_info *x = &c->p->vals[out_ids[0]];
    s->kind = STEP_FUSED_REDUCE;
    s->nout = 1;
    s->proto = proto_of(reducer->node);
    s->like = emlx__array_alloc(x->dtype, x->shape, x->ndim, EMLX_CPU);
    s->out = dup_ints(reducer->out, 1);
    return s->in && s->out && s->proto && s->like ? 1 : -1;
  }
  s->out = dup_ints(out_ids, d.noutputs);
  return s->in && s->out ? 1 : -1;
}

static int kernel_step(const cnode *cn, step *s) {
  s->kind = STEP_KERNEL;
  s->proto = proto_of(cn->node);
  s->nin = cn->nin;
  s->nout = cn->node->noutputs;
  s->in = dup_ints(cn->in, cn->nin);
  s->out = dup_ints(cn->out, s->nout);
  return s->proto && s->in && s->out ? 0 : -1;
}

int emlx__compile_build_steps(compiler *c, const unsigned char *is_output) {
  emlx_program *p = c->p;
  int *region_of = malloc((c->ncn ? c->ncn : 1) * sizeof(int));
  emlx_fuse_vertex *v = calloc(c->ncn ? c->ncn : 1, sizeof *v);
  int *in_store = NULL;
  size_t total = 0;
  for (size_t j = 0; j < c->ncn; j++)
    total += (size_t)c->cn[j].nin;
  in_store = malloc((total ? total : 1) * sizeof(int));
  emlx_fuse_region *regions = NULL;
  int nregions = 0, rc = -1;
  unsigned char *done = calloc(c->ncn ? c->ncn : 1, 1), *leaves = NULL;
  int *readers = NULL;
  p->steps = calloc(c->ncn ? c->ncn : 1, sizeof *p->steps);
  if (!region_of || !v || !in_store || !done || !p->steps)
    goto out;
  size_t used = 0;
  for (size_t j = 0; j < c->ncn; j++) {
    const cnode *cn = &c->cn[j];
    const value_info *o = &p->vals[cn->out[0]];
    v[j].fusable = cn->fusable;
    v[j].reducer = !cn->fusable && cn->nin == 1 && cn->node->noutputs == 1 &&
                   emlx__fuse_is_reduction(cn->node->prim);
    v[j].ndim = o->ndim;
    v[j].shape = o->shape;
    v[j].nin = cn->nin;
    v[j].in = in_store + used;
    for (int k = 0; k < cn->nin; k++)
      in_store[used++] = p->vals[cn->in[k]].producer;
  }
  if (emlx__fusion_on() && emlx__fuse_group(v, c->ncn, region_of, &regions, &nregions) != 0)
    goto out;
  if (!emlx__fusion_on())
    for (size_t j = 0; j < c->ncn; j++)
      region_of[j] = -1;
  /* The values that leave their region: program outputs, and values read by
   * a node of another region (or of none). */
  leaves = malloc(p->nvalues ? p->nvalues : 1);
  readers = calloc(p->nvalues ? p->nvalues : 1, sizeof(int));
  if (!leaves || !readers)
    goto out;
  memcpy(leaves, is_output, p->nvalues);
  for (size_t j = 0; j < c->ncn; j++)
    for (int k = 0; k < c->cn[j].nin; k++) {
      int x = c->cn[j].in[k], prod = p->vals[x].producer;
      readers[x]++;
      bool reduces = regions && region_of[j] >= 0 && regions[region_of[j]].reducer == (int)j;
      if (prod >= 0 && (region_of[j] < 0 || reduces || region_of[j] != region_of[prod]))
        leaves[x] = 1;
    }
  for (size_t j = 0; j < c->ncn; j++) {
    if (done[j])
      continue;
    int r = region_of[j];
    step *s = &p->steps[p->nsteps];
    if (r >= 0) {
      const emlx_fuse_region *g = &regions[r];
      /* A reduction feeds on the region when the region's only value
       * leaving it is the reduction's input, read by nothing else. */
      bool pro = g->reducer >= 0;
      if (pro) {
        int x = c->cn[g->reducer].in[0];
        pro = !is_output[x] && readers[x] == 1;
        for (int m = 0; m < g->nmembers && pro; m++)
          pro = c->cn[g->members[m]].out[0] == x || !leaves[c->cn[g->members[m]].out[0]];
      }
      if ((int)j == g->reducer && !pro) {
        if (kernel_step(&c->cn[j], s) != 0) {
          p->nsteps++;
          goto out;
        }
        p->nsteps++;
        continue;
      }
      if ((int)j != (pro ? g->reducer : g->members[g->nmembers - 1]))
        continue; /* a region is one step, at its last member or its reduction */
      int f = fused_step(c, g, region_of, r, leaves, pro ? &c->cn[g->reducer] : NULL, s);
      if (f < 0)
        goto out;
      if (f > 0) {
        p->nsteps++;
        p->info.fused_regions++;
        p->info.fused_ops += (size_t)g->nmembers + (pro ? 1 : 0);
        continue;
      }
      /* Not fusable after all: its members (and reduction) run as kernels. */
      for (int m = 0; m <= g->nmembers; m++) {
        int q = m < g->nmembers ? g->members[m] : pro ? g->reducer : -1;
        if (q < 0)
          break;
        if (kernel_step(&c->cn[q], &p->steps[p->nsteps]) != 0) {
          p->nsteps++;
          goto out;
        }
        p->nsteps++;
        done[q] = 1;
      }
      continue;
    }
    if (kernel_step(&c->cn[j], s) != 0) {
      p->nsteps++;
      goto out;
    }
    p->nsteps++;
  }
  rc = 0;
out:
  emlx__fuse_regions_free(regions, nregions);
  free(region_of);
  free(v);
  free(in_store);
  free(done);
  free(leaves);
  free(readers);
  return rc;
}

/* Per step, the intermediate values read or written there for the last
 * time (program outputs, inputs and constants are never freed by a step),
 * and apart from them the inputs read there for the last time (die_in: only
 * a run that owns its inputs frees those). */
int emlx__compile_plan_lifetimes(emlx_program *p, const unsigned char *is_output) {
  int *last = malloc((p->nvalues ? p->nvalues : 1) * sizeof(int));
  int *count = calloc(p->nsteps ? p->nsteps : 1, sizeof(int));
  int *count_in = calloc(p->nsteps ? p->nsteps : 1, sizeof(int));
  if (!last || !count || !count_in) {
    free(last);
    free(count);
    free(count_in);
    return -1;
  }
  for (size_t v = 0; v < p->nvalues; v++)
    last[v] = -1;
  for (size_t i = 0; i < p->nsteps; i++) {
    const step *s = &p->steps[i];
    for (int k = 0; k < s->nout; k++)
      last[s->out[k]] = (int)i;
    for (int k = 0; k < s->nin; k++)
      last[s->in[k]] = (int)i;
  }
  for (size_t v = 0; v < p->nvalues; v++) {
    if (last[v] < 0 || is_output[v])
      continue;
    if (v < p->ninputs)
      count_in[last[v]]++;
    else if (!p->vals[v].fixed)
      count[last[v]]++;
  }
  int rc = 0;
  for (size_t i = 0; i < p->nsteps && rc == 0; i++) {
    p->steps[i].die = malloc((size_t)(count[i] ? count[i] : 1) * sizeof(int));
    p->steps[i].die_in = malloc((size_t)(count_in[i] ? count_in[i] : 1) * sizeof(int));
    if (!p->steps[i].die || !p->steps[i].die_in)
      rc = -1;
  }
  for (size_t v = 0; v < p->nvalues && rc == 0; v++) {
    if (last[v] < 0 || is_output[v])
      continue;
    step *s = &p->steps[last[v]];
    if (v < p->ninputs)
      s->die_in[s->ndie_in++] = (int)v;
    else if (!p->vals[v].fixed)
      s->die[s->ndie++] = (int)v;
  }
  free(last);
  free(count);
  free(count_in);
  return rc;
}
