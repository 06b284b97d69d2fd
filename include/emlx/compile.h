/* emlx/compile.h — fusion at eval, and programs compiled once and replayed.
 *
 * Fusion. When an eval runs, maximal regions of elementwise work of one
 * shape (the unary and binary ops of ops.h and elementwise.h, where, clip,
 * isclose, astype, copy) become one fused kernel: a tile interpreter walks
 * the region's shape in tiles of about a thousand elements, reads each
 * region input (any dtype, any strides: broadcast, transposed and sliced
 * views are read in place), runs the region's micro-ops (the very SIMD loops
 * the unfused kernels use) over the tile and stores the outputs (outputs of
 * 16 MiB or more in all with non-temporal stores). One pass over memory for
 * a whole chain; no run-time compiler. A region holds at most 64 ops and
 * reads at most 96 outside values; a longer chain becomes several regions.
 *
 * A reduction over axes (sum, max, product, min, all, any) whose input is a
 * region's only output, read by nothing else, takes the region as its
 * prologue: the reduction reads the values as the tile interpreter produces
 * them, and they never reach memory (sum(x*x) reads x once). The folds and
 * their order are those of the unfused reduction, so the result is too (up
 * to the caveat below).
 *
 * A region's outputs are the values something outside it still needs: a
 * requested array, an array the caller holds, an input of a node outside the
 * region. Values used only inside the region are never written to memory and
 * stay lazy (they are dropped with the graph as usual). Fused results are the
 * results of the unfused kernels: the same loops run on the same dtypes, so
 * integer and bool results are bit-identical, and so are float ones except
 * where a vector function picks its argument reduction per vector of lanes
 * (SLEEF's AVX-512 sin, cos and tan): which elements share a vector then
 * decides the last bit, as it does between a strided and a contiguous
 * unfused input (within 1 ulp either way).
 *
 * Plans are cached under a structural key — the region's ops, parameters,
 * dtypes, ranks and the contiguity class of each input (dense, scalar,
 * strided) — never object identity, so structurally identical call sites share
 * one plan. The cache is an LRU bounded by a number of plans (default 1024);
 * an eviction frees the plan once no eval uses it.
 *
 * Fusion is on by default. EMLX_FUSION=0 in the environment (read once, at
 * the first eval) or emlx_set_fusion_enabled(false) turns it off: every node
 * then runs its own kernel, for debugging and for tests that compare the two.
 *
 * Programs. emlx_compile calls a trace function once on placeholder inputs
 * (templates: dtype + shape), simplifies the graph it built (common
 * subexpressions merged, constant subgraphs evaluated once, no-op astype /
 * copy / reshape / broadcast / transpose removed), fuses elementwise regions
 * and plans buffers by liveness (each intermediate is freed after its last
 * use, and a kernel may write into an input that dies with it). The result is
 * an emlx_program: emlx_program_run replays its steps on new inputs of the
 * same templates without creating graph nodes. A program is immutable and may
 * be run from many threads at once. */
#ifndef EMLX_COMPILE_H
#define EMLX_COMPILE_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- fusion at eval ------------------------------------------------------- */

/* Turns fusion on or off for the process; returns the previous setting. */
EMLX_API bool emlx_set_fusion_enabled(bool enabled);
EMLX_API bool emlx_fusion_enabled(void);

typedef struct emlx_fusion_stats {
  uint64_t regions;   /* fused regions run (evals and programs) */
  uint64_t fused_ops; /* ops those regions covered */
  uint64_t hits;      /* plan cache lookups that found a plan */
  uint64_t misses;    /* lookups that built a new plan */
  uint64_t evictions; /* plans dropped because the cache was full */
  size_t cached;      /* plans in the cache now */
  size_t capacity;    /* the most plans the cache keeps */
} emlx_fusion_stats;

EMLX_API emlx_fusion_stats emlx_fusion_stats_get(void);
/* Sets the plan cache's bound (at least 1; evicts at once when lowered);
 * returns the previous bound. */
EMLX_API size_t emlx_set_fusion_cache_capacity(size_t plans);
/* Drops every cached plan (counted as evictions) and zeroes no counter. */
EMLX_API void emlx_fusion_cache_clear(void);

/* ---- programs ------------------------------------------------------------- */

/* An input template: dtype and shape (shape has ndim entries; may be NULL
 * when ndim is 0). */
typedef struct emlx_template {
  emlx_dtype dtype;
  int ndim;
  const int64_t *shape;
} emlx_template;

/* Builds the outputs from the inputs with emlx ops. inputs are borrowed;
 * outputs[i] (noutputs of them) receive new references. Returns 0, or
 * non-zero to fail the compile (after setting an error, or with a generic
 * message if it did not). */
typedef int (*emlx_trace_fn)(void *ctx, emlx_array *const *inputs, size_t ninputs,
                             emlx_array **outputs, size_t noutputs);

typedef struct emlx_program emlx_program;

/* Traces fn once on placeholders of the templates and compiles the graph it
 * returns. NULL with an error when a template is invalid, fn fails, returns a
 * NULL output, or the graph evaluates a placeholder-dependent value inside the
 * trace (an output must stay lazy: call no eval, item or to_blob on values
 * derived from the inputs). Outputs may be inputs or constants. */
EMLX_API emlx_program *emlx_compile(emlx_trace_fn fn, void *ctx, const emlx_template *inputs,
                                    size_t ninputs, size_t noutputs);

/* Runs the program on inputs matching its templates (dtype and shape; any
 * strides) and evaluates the results: outputs[i] receive new, ready
 * references. Inputs are borrowed and never modified. Non-zero with an error
 * (outputs untouched) on a template mismatch or a kernel failure such as the
 * memory limit. Safe to call concurrently on one program. */
EMLX_API int emlx_program_run(const emlx_program *p, emlx_array *const *inputs, size_t ninputs,
                              emlx_array **outputs, size_t noutputs);

EMLX_API emlx_program *emlx_program_retain(emlx_program *p);
EMLX_API void emlx_program_release(emlx_program *p); /* NULL-safe */

/* What the compiler made of the trace. */
typedef struct emlx_program_info {
  size_t ninputs, noutputs;
  size_t traced_ops;    /* nodes the trace built (reachable from the outputs) */
  size_t steps;         /* kernels a run executes (a fused region is one) */
  size_t fused_regions; /* steps that are fused regions */
  size_t fused_ops;     /* ops inside those regions */
  size_t constants;     /* constant values evaluated at compile time */
  size_t cse_merged;    /* nodes removed as common subexpressions */
  size_t noops_removed; /* no-op nodes removed */
  int64_t work;         /* estimated element-operations of one run (the measure of
                           emlx_eval_within); INT64_MAX when it holds a loop */
} emlx_program_info;

EMLX_API int emlx_program_get_info(const emlx_program *p, emlx_program_info *info);

/* The template of input i / output i (shape valid while p lives); non-zero
 * with an error when i is out of range. */
EMLX_API int emlx_program_input_template(const emlx_program *p, size_t i, emlx_template *t);
EMLX_API int emlx_program_output_template(const emlx_program *p, size_t i, emlx_template *t);

/* ---- control flow ----------------------------------------------------------- */
/* Loops and branches are graph nodes whose kernels run programs, so they
 * work in a plain lazy eval and inside a trace (a compiled program replays
 * them as one step), and nest (a loop in a branch of a cond in a loop). A
 * node holds a reference to each of its programs. Results are lazy like any
 * op's; out[i] receive new references. Each returns 0, or non-zero with an
 * error (nothing made) when the programs do not fit the values.
 *
 * emlx_while: the state is n values (n >= 1). The kernel runs cond on the
 * state (n inputs of the state's templates, one rank-0 output of a real or
 * integer dtype, true when non-zero); while it is true, body (n inputs ->
 * n outputs, all of the state's templates) computes the next state. The
 * state lives in the engine's buffers: from the second iteration on, a body
 * value that dies with the iteration lends its buffer to the body's kernels
 * (updated in place, e.g. slice_update into a cache). out[i] is the final
 * state value i (the initial one when cond is false at once). */
EMLX_API int emlx_while(const emlx_program *cond, const emlx_program *body,
                        emlx_array *const *state, size_t n, emlx_array **out);

/* emlx_cond: evaluates the predicates (rank-0, real or integer; true when
 * non-zero) and runs only branches[k] for the first true preds[k], or
 * branches[nclauses] (the else) when none is: each branch takes the nops
 * operands (of its input templates) and returns nout values; every branch's
 * outputs have the same templates. nclauses may be 0 (the else always runs). */
EMLX_API int emlx_cond(emlx_array *const *preds, size_t nclauses,
                       const emlx_program *const *branches, emlx_array *const *operands,
                       size_t nops, emlx_array **out, size_t nout);

/* A lazy call of p on inputs (emlx_cond without predicates): out receives
 * its nout results, computed when evaluated, on whichever thread or queue
 * evaluates them. */
EMLX_API int emlx_program_call(const emlx_program *p, emlx_array *const *inputs, size_t n,
                               emlx_array **out, size_t nout);

/* A bound on the iterations of one emlx_while run: past it the loop fails
 * with an error (never aborts). 0 (the default) means no bound. Returns the
 * previous bound. */
EMLX_API uint64_t emlx_set_while_max_iterations(uint64_t max);

#ifdef __cplusplus
}
#endif
#endif
