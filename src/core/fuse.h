/* fuse.h — fused elementwise regions: their description, the plan cache and
 * the two users (eval, programs).
 *
 * A region is a set of elementwise nodes of one output shape, in dependency
 * order. Its description (emlx_fuse_desc) is plain data: the external inputs
 * (dtype, contiguity class), the ops (prim, output dtype, the values they
 * read, params) and which op results leave the region. The description's
 * bytes are the plan cache's key, so two structurally equal regions share a
 * plan whatever arrays they came from. The backend compiles a description
 * into a plan (for the CPU: the inner loops of each op and a scratch-tile
 * assignment) and runs a plan on arrays. */
#ifndef EMLX_FUSE_H
#define EMLX_FUSE_H

#include "internal.h"
#include "ptrmap.h"

#define EMLX_FUSE_MAX_OPS 64
#define EMLX_FUSE_MAX_INPUTS 96
#define EMLX_FUSE_MAX_OUTPUTS EMLX_FUSE_MAX_OPS
#define EMLX_FUSE_MAX_PARAMS 2048

/* How an external input is laid out relative to the region's shape. */
enum {
  EMLX_FUSE_IN_DENSE = 0,   /* the region's shape, row-major contiguous */
  EMLX_FUSE_IN_SCALAR = 1,  /* one element, broadcast everywhere */
  EMLX_FUSE_IN_STRIDED = 2, /* anything else (broadcast rows, views) */
};

/* Values are numbered: 0..ninputs-1 the external inputs, then ninputs + k
 * the result of op k. */
typedef struct emlx_fuse_op {
  int32_t prim;
  int32_t dtype; /* of the result */
  int32_t nargs;
  int32_t args[3];
  uint32_t params_offset; /* into desc.params, 16-byte aligned */
  uint32_t params_size;
} emlx_fuse_op;

typedef struct emlx_fuse_desc {
  /* key part: these fields, then the used entries of the arrays below */
  int32_t ndim;
  int32_t ninputs;
  int32_t nops;
  int32_t noutputs;
  uint32_t params_len;
  int32_t in_dtype[EMLX_FUSE_MAX_INPUTS];
  int32_t in_class[EMLX_FUSE_MAX_INPUTS];
  int32_t out_value[EMLX_FUSE_MAX_OUTPUTS]; /* op results, distinct */
  emlx_fuse_op ops[EMLX_FUSE_MAX_OPS];
  _Alignas(16) unsigned char params[EMLX_FUSE_MAX_PARAMS];
} emlx_fuse_desc;

/* Appends an op reading values args[0..nargs) with the given params; returns
 * its value id, or -1 when the description is full. */
int emlx__fuse_desc_add_op(emlx_fuse_desc *d, emlx_prim prim, emlx_dtype dtype, int nargs,
                           const int32_t *args, const void *params, size_t params_size);
/* The class of `a` read through a region of the given shape. */
int emlx__fuse_input_class(const emlx_array *a, const int64_t *shape, int ndim);

/* A cached, compiled plan; reference counted so eviction never frees a plan
 * in use. */
typedef struct emlx_fuse_plan emlx_fuse_plan;

/* The plan for d from the cache (a hit) or compiled now (a miss), with one
 * reference for the caller; NULL with an error. */
emlx_fuse_plan *emlx__fuse_plan_get(const emlx_backend *be, const emlx_fuse_desc *d);
void emlx__fuse_plan_release(emlx_fuse_plan *p);
/* Runs the plan: inputs as described, outputs (noutputs arrays of the
 * region's shape, no data yet) get buffers and values. donor_refs[k] > 0
 * lets output take input k's buffer when input k's refcount equals it (the
 * caller's own references) and nothing reads input k after the output is
 * written. 0, or -1 with an error and no output buffer kept. */
int emlx__fuse_plan_run(const emlx_fuse_plan *p, emlx_array *const *inputs,
                        emlx_array *const *outputs, const long *donor_refs);
int emlx__fuse_plan_nops(const emlx_fuse_plan *p);
/* The backend's fuse_reduce on this plan (see internal.h). */
int emlx__fuse_plan_reduce(const emlx_fuse_plan *p, emlx_array *const *inputs,
                           const emlx_node *reduce, const emlx_array *like, emlx_array *out);

/* Whether the backend can run prim with these dtypes inside a region. */
bool emlx__fuse_supports(const emlx_backend *be, emlx_prim prim, const void *params,
                         size_t params_size, const emlx_dtype *in, int nin, emlx_dtype out);

/* The reductions over axes that may take a region as their prologue: sum,
 * max, product, min, all, any. */
bool emlx__fuse_is_reduction(emlx_prim prim);

/* Counts a fused region run (for emlx_fusion_stats). */
void emlx__fuse_count_region(int nops);

/* eval's side: partitions the walk's order into fused regions and runs one.
 * (fuse_partition.c, fuse_run.c) */
typedef struct emlx_fuse_region {
  int nmembers;
  int *members; /* indices into order, ascending; the last one is the anchor */
  int reducer;  /* a reduction (sum, max, product, min, all, any) reading a member,
                   its first reader from outside, or -1:
                   the region runs at its position and may feed it directly */
} emlx_fuse_region;

/* A vertex of the graph to partition, in dependency order: whether it may
 * join a region, its shape, and its inputs as vertex indices (-1: not a
 * vertex). */
typedef struct emlx_fuse_vertex {
  bool fusable;
  bool reducer; /* not fusable, but may take a region as its prologue (one input) */
  int ndim;
  const int64_t *shape;
  int nin;
  const int *in;
} emlx_fuse_vertex;

/* Groups vertices into regions (the rule at the top of fuse_partition.c): region_of[i]
 * gets the region index of vertex i or -1, *regions the regions of two or
 * more members. 0, or -1 out of memory (then nothing is grouped). */
int emlx__fuse_group(const emlx_fuse_vertex *v, size_t n, int *region_of,
                     emlx_fuse_region **regions, int *nregions);

/* Fills region_of[i] (the region index of order[i], or -1) and *regions with
 * the regions of two or more nodes; index maps each node of order to its
 * position there (the walk's map, eval.c). 0, or -1 out of memory (then
 * nothing is fused). */
int emlx__fuse_partition(emlx_array *const *order, size_t n, const emlx_ptrmap *index,
                         int *region_of, emlx_fuse_region **regions, int *nregions);
void emlx__fuse_regions_free(emlx_fuse_region *regions, int nregions);
/* Runs region r of order at its anchor: 1 done (outputs READY, their nodes
 * DONE), 0 not run and nothing changed (a member was claimed elsewhere, or
 * the region cannot be fused: run the members one by one), -1 failed with
 * an error (every member lazy again). */
int emlx__fuse_run_region(const emlx_fuse_region *r, emlx_array *const *order);

/* eval.c's hooks for it: wake threads waiting for a node, count nodes
 * computed. */
void emlx__eval_notify(void);
void emlx__eval_count_computed(uint64_t n);

/* 1 when fusion is on (the API switch, EMLX_FUSION at first use). */
bool emlx__fusion_on(void);

#endif
