/* demo.c — a short tour of the EMLX C API (`make demo` builds and runs it).
 *
 * Builds two arrays from host memory, chains lazy ops on them (a broadcast
 * add, exp, reductions over axes, transpose and slice views, a round trip
 * through bfloat16), evaluates, reads the results back and checks them
 * against the same maths done here in plain C. Prints the allocator's
 * counters and the SIMD level the kernels run with. Uses only <emlx.h>.
 *
 * Ownership: every emlx_array * an EMLX call returns is released exactly once;
 * this demo keeps them all in one list and releases the list at the end.
 * Exit status: 0, or 1 with emlx_last_error() on the first failure. */
#include <emlx.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HANDLES 32

static emlx_array *handles[MAX_HANDLES];
static int nhandles;

/* Records a handle for the final release; NULL (a failed call) stays NULL. */
static emlx_array *keep(emlx_array *a) {
  if (a != NULL && nhandles < MAX_HANDLES) {
    handles[nhandles++] = a;
  }
  return a;
}

static void release_all(void) {
  while (nhandles > 0) {
    emlx_release(handles[--nhandles]);
  }
}

static int fail(const char *what) {
  fprintf(stderr, "demo: %s failed: %s\n", what, emlx_last_error());
  release_all();
  return 1;
}

static void print_shape(const emlx_array *a) {
  const int64_t *shape = emlx_shape(a);
  printf("(");
  for (int i = 0; i < emlx_ndim(a); i++) {
    printf(i ? ", %lld" : "%lld", (long long)shape[i]);
  }
  printf(emlx_ndim(a) == 1 ? ",)" : ")");
}

/* Reads a float32 array back row-major into out (capacity cap elements) and
 * prints it. Returns 0 or -1. */
static int show(const char *name, emlx_array *a, float *out, size_t cap) {
  size_t nbytes = emlx_nbytes(a);
  if (emlx_array_dtype(a) != EMLX_FLOAT32 || nbytes > cap * sizeof(float)) {
    fprintf(stderr, "demo: %s: unexpected dtype %s or size %zu bytes\n", name,
            emlx_dtype_name(emlx_array_dtype(a)), nbytes);
    return -1;
  }
  if (emlx_to_blob(a, out, nbytes) != 0) {
    return -1;
  }
  printf("%-22s %-8s shape ", name, emlx_dtype_name(emlx_array_dtype(a)));
  print_shape(a);
  printf(" = [");
  for (int64_t i = 0; i < emlx_size(a); i++) {
    printf(i ? ", %.6g" : "%.6g", (double)out[i]);
  }
  printf("]\n");
  return 0;
}

/* |got - want| within a relative tolerance, for every element. */
static int close_to(const float *got, const double *want, int n, double rtol, const char *name) {
  for (int i = 0; i < n; i++) {
    double err = fabs((double)got[i] - want[i]);
    if (err > rtol * fabs(want[i]) + 1e-6) {
      fprintf(stderr, "demo: %s[%d] = %.9g, expected %.9g\n", name, i, (double)got[i], want[i]);
      return 0;
    }
  }
  return 1;
}

static void print_memory(const char *when) {
  emlx_memory_stats m = emlx_memory_info();
  printf("memory %-14s active %zu B, peak %zu B, cache %zu B\n", when, m.active_memory,
         m.peak_memory, m.cache_memory);
}

int main(void) {
  printf("EMLX %d.%d.%d demo: SIMD level %s, %d threads, default device %s\n", EMLX_VERSION_MAJOR,
         EMLX_VERSION_MINOR, EMLX_VERSION_PATCH, emlx_simd_level(), emlx_num_threads(),
         emlx_device_name(emlx_default_device()));

  /* x: 2x3 from host memory; b: a row of 3 that broadcasts over x's rows. */
  const float xs[6] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 2.5f};
  const float bs[3] = {-1.0f, 0.0f, 1.0f};
  const int64_t xshape[2] = {2, 3};
  const int64_t bshape[1] = {3};
  emlx_array *x = keep(emlx_from_blob(xs, EMLX_FLOAT32, xshape, 2, EMLX_CPU));
  emlx_array *b = keep(emlx_from_blob(bs, EMLX_FLOAT32, bshape, 1, EMLX_CPU));
  if (x == NULL || b == NULL) {
    return fail("emlx_from_blob");
  }

  /* Lazy graph: nothing is computed until eval / to_blob / item. */
  const int axis1[1] = {1};
  const int axis0[1] = {0};
  emlx_array *y = keep(emlx_add(x, b));                    /* (2, 3) */
  emlx_array *e = keep(emlx_exp(y));                       /* (2, 3) */
  emlx_array *total = keep(emlx_sum(e, NULL, 0, false));   /* ()     */
  emlx_array *rows = keep(emlx_sum(e, axis1, 1, true));    /* (2, 1) */
  emlx_array *colmax = keep(emlx_max(y, axis0, 1, false)); /* (3,)   */
  emlx_array *xt = keep(emlx_transpose(x, NULL, 0));       /* (3, 2) view */
  const int64_t start[2] = {0, 1}, stop[2] = {3, 2}, step[2] = {2, 1};
  emlx_array *corner = keep(emlx_slice(xt, start, stop, step, 2)); /* (2, 1) view */
  emlx_array *ybf = keep(emlx_astype(y, EMLX_BFLOAT16));
  emlx_array *yback = keep(emlx_astype(ybf, EMLX_FLOAT32));
  if (!y || !e || !total || !rows || !colmax || !xt || !corner || !ybf || !yback) {
    return fail("building the graph");
  }
  printf("built a lazy graph; exp evaluated yet? %s\n", emlx_is_evaluated(e) ? "yes" : "no");

  emlx_array *const outputs[] = {total, rows, colmax, corner, yback};
  if (emlx_eval(outputs, sizeof outputs / sizeof outputs[0]) != 0) {
    return fail("emlx_eval");
  }

  /* The same maths on the host, in double. */
  double want_y[6], want_e[6], want_total = 0.0, want_rows[2] = {0.0, 0.0};
  double want_colmax[3], want_corner[2];
  for (int i = 0; i < 6; i++) {
    want_y[i] = (double)xs[i] + (double)bs[i % 3];
    want_e[i] = exp(want_y[i]);
    want_total += want_e[i];
    want_rows[i / 3] += want_e[i];
  }
  for (int j = 0; j < 3; j++) {
    want_colmax[j] = fmax(want_y[j], want_y[3 + j]);
  }
  /* xt[r][c] = x[c][r]; the slice takes rows 0 and 2 of column 1: x[1][0], x[1][2]. */
  want_corner[0] = (double)xs[3 + 0];
  want_corner[1] = (double)xs[3 + 2];

  float buf[6];
  int ok = 1;
  if (show("x", x, buf, 6) != 0 || show("y = x + b", y, buf, 6) != 0) {
    return fail("reading back");
  }
  ok &= close_to(buf, want_y, 6, 1e-6, "y");
  if (show("exp(y)", e, buf, 6) != 0) {
    return fail("reading back");
  }
  ok &= close_to(buf, want_e, 6, 1e-5, "exp(y)");
  if (show("sum(exp(y), 1, keep)", rows, buf, 6) != 0) {
    return fail("reading back");
  }
  ok &= close_to(buf, want_rows, 2, 1e-5, "row sums");
  if (show("max(y, 0)", colmax, buf, 6) != 0) {
    return fail("reading back");
  }
  ok &= close_to(buf, want_colmax, 3, 0.0, "column max");
  if (show("x.T[0:3:2, 1:2]", corner, buf, 6) != 0) {
    return fail("reading back");
  }
  ok &= close_to(buf, want_corner, 2, 0.0, "slice");
  printf("the slice is a view of x: %s\n", emlx_shares_buffer(corner, x) ? "yes" : "no");

  double got_total = 0.0;
  if (emlx_item_f64(total, &got_total) != 0) {
    return fail("emlx_item_f64");
  }
  printf("%-22s %-8s = %.6g (expected %.6g)\n", "sum(exp(y))",
         emlx_dtype_name(emlx_array_dtype(total)), got_total, want_total);
  if (fabs(got_total - want_total) > 1e-5 * want_total) {
    fprintf(stderr, "demo: sum(exp(y)) = %.9g, expected %.9g\n", got_total, want_total);
    ok = 0;
  }

  /* bfloat16 keeps 8 significant bits: the round trip is within 2^-8. */
  if (show("y -> bf16 -> f32", yback, buf, 6) != 0) {
    return fail("reading back");
  }
  ok &= close_to(buf, want_y, 6, 1.0 / 256.0, "bf16 round trip");

  print_memory("(arrays live)");
  release_all();
  print_memory("(released)");
  if (!ok) {
    fprintf(stderr, "demo: results differ from the reference\n");
    return 1;
  }
  printf("demo: all results match the host reference\n");
  return 0;
}
