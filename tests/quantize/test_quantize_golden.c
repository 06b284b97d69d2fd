/* test_quantize_golden.c — EMLX's quantization against MLX's own results.
 *
 * quant_golden.bin and qmm_golden.bin are written by gen_golden.py with
 * mlx[cpu] (record layout in that script). For every mode x bits x group
 * size x input dtype it checks, bit for bit: the packed words, scales and
 * biases of emlx_quantize on MLX's input, and emlx_dequantize of MLX's packed
 * weights against mx.dequantize. For quantized_matmul and gather_qmm it
 * checks the outputs against MLX's (tolerance: MLX accumulates in the
 * input's dtype) and against an f64 dequantize-then-matmul computed here
 * with the independent decoder of quant_test_util.h. */
#include "quant_test_util.h"

typedef struct reader {
  const unsigned char *p, *end;
} reader;

static unsigned char *slurp(const char *name, size_t *n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/quantize/%s", EMLX_SOURCE_DIR, name);
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc((size_t)sz);
  *n = fread(buf, 1, (size_t)sz, f);
  fclose(f);
  return buf;
}

static const void *take(reader *r, size_t n) {
  if ((size_t)(r->end - r->p) < n)
    return NULL;
  const void *q = r->p;
  r->p += n;
  return q;
}

static emlx_dtype dt_of(int code) {
  return code == 0 ? EMLX_FLOAT32 : code == 1 ? EMLX_FLOAT16 : EMLX_BFLOAT16;
}

static const char *const MODE_NAMES[] = {"affine", "mxfp4", "mxfp8", "nvfp4"};

/* Compares the bytes of a with ref (n bytes); reports the first difference. */
static bool same_bytes(emlx_array *a, const void *ref, size_t n, const char *what, int mode,
                       int bits, int gs, emlx_dtype dt) {
  unsigned char *got = tu_read_raw(a);
  if (!got)
    return false;
  size_t es = tu_dsize(emlx_array_dtype(a));
  size_t bad = n;
  long nbad = 0;
  for (size_t i = 0; i < n; i += es) {
    if (memcmp(got + i, (const char *)ref + i, es) != 0) {
      if (bad == n)
        bad = i;
      nbad++;
    }
  }
  bool ok = CHECK_MSG(nbad == 0,
                      "%s %s bits=%d group=%d %s: %ld elements differ from MLX, first at element "
                      "%zu",
                      what, MODE_NAMES[mode], bits, gs, tu_dname(dt), nbad, bad / (es ? es : 1));
  if (!ok && es <= 4) {
    uint32_t g = 0, r = 0;
    memcpy(&g, got + bad, es);
    memcpy(&r, (const char *)ref + bad, es);
    fprintf(stderr, "    got 0x%x, MLX 0x%x\n", g, r);
  }
  free(got);
  return ok;
}

static void test_quant_records(void) {
  size_t n;
  unsigned char *buf = slurp("quant_golden.bin", &n);
  if (!CHECK_MSG(buf != NULL, "quant_golden.bin is readable"))
    return;
  reader r = {buf, buf + n};
  int records = 0;
  while (r.p < r.end) {
    const unsigned char *h = take(&r, 20);
    if (!CHECK(h != NULL))
      break;
    uint32_t magic, rows, k;
    uint16_t gs;
    memcpy(&magic, h, 4);
    int mode = h[4], bits = h[5];
    emlx_dtype dt = dt_of(h[6]);
    memcpy(&gs, h + 8, 2);
    memcpy(&rows, h + 12, 4);
    memcpy(&k, h + 16, 4);
    if (!CHECK(magic == 0x51524543u))
      break;
    size_t es = tu_dsize(dt), sdsize = mode == 0 ? es : 1;
    size_t nel = (size_t)rows * k, nw = nel * (size_t)bits / 32, ns = nel / gs;
    const void *in = take(&r, nel * es), *wq = take(&r, nw * 4), *sc = take(&r, ns * sdsize);
    const void *bi = mode == 0 ? take(&r, ns * es) : NULL;
    emlx_dtype odt = mode == 0 ? dt : EMLX_BFLOAT16;
    const void *deq = take(&r, nel * tu_dsize(odt));
    if (!CHECK(in && wq && sc && deq && (mode != 0 || bi)))
      break;
    records++;
    int64_t shape[2] = {rows, k}, qshape[2] = {rows, (int64_t)(k * bits / 32)},
            sshape[2] = {rows, (int64_t)(k / gs)};
    emlx_array *w = emlx_from_blob(in, dt, shape, 2, EMLX_CPU);
    emlx_array *gq = NULL, *gsc = NULL, *gbi = NULL;
    CHECK_OK(emlx_quantize(w, gs, bits, (emlx_quantization_mode)mode, &gq, &gsc,
                           mode == 0 ? &gbi : NULL));
    if (gq && gsc) {
      same_bytes(gq, wq, nw * 4, "packed words", mode, bits, gs, dt);
      same_bytes(gsc, sc, ns * sdsize, "scales", mode, bits, gs, dt);
      if (mode == 0)
        same_bytes(gbi, bi, ns * es, "biases", mode, bits, gs, dt);
    }
    /* dequantize MLX's packed weights */
    emlx_array *mq = emlx_from_blob(wq, EMLX_UINT32, qshape, 2, EMLX_CPU);
    emlx_array *ms = emlx_from_blob(sc, mode == 0 ? dt : EMLX_UINT8, sshape, 2, EMLX_CPU);
    emlx_array *mb = mode == 0 ? emlx_from_blob(bi, dt, sshape, 2, EMLX_CPU) : NULL;
    emlx_array *d = emlx_dequantize(mq, ms, mb, gs, bits, (emlx_quantization_mode)mode);
    if (CHECK(d != NULL) && CHECK(emlx_array_dtype(d) == odt))
      same_bytes(d, deq, nel * tu_dsize(odt), "dequantized", mode, bits, gs, dt);
    emlx_release(d);
    emlx_release(mq);
    emlx_release(ms);
    emlx_release(mb);
    emlx_release(gq);
    emlx_release(gsc);
    emlx_release(gbi);
    emlx_release(w);
  }
  CHECK_MSG(records == 18 + 2 * 8 + 9, "every golden record was read (%d)", records);
  free(buf);
}

/* f64 reference of one product: x [M][K] (doubles) times the quantized
 * matrix wm (packed matrix index e). */
static void ref_product(const double *x, int64_t M, int64_t K, int64_t N, const uint32_t *w,
                        const double *sc, const double *bi, const uint8_t *sb, int64_t e,
                        bool transpose, int gs, int bits, int mode, double *out, double *mag) {
  int64_t rows = transpose ? N : K, cols = transpose ? K : N;
  const uint32_t *wm = w + e * rows * cols * bits / 32;
  int64_t so = e * rows * (cols / gs);
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double s = 0, a = 0;
      for (int64_t k = 0; k < K; k++) {
        int64_t r = transpose ? n : k, c = transpose ? k : n;
        double v = qt_value(wm, sc ? sc + so : NULL, bi ? bi + so : NULL, sb ? sb + so : NULL, r, c,
                            cols, gs, bits, mode);
        s += x[m * K + k] * v;
        a += fabs(x[m * K + k] * v);
      }
      out[m * N + n] = s;
      mag[m * N + n] = a;
    }
}

static double *to_doubles(const void *p, emlx_dtype dt, size_t n) {
  double *d = malloc(n * sizeof *d);
  for (size_t i = 0; i < n; i++)
    d[i] = tu_load((const char *)p + i * tu_dsize(dt), dt);
  return d;
}

static void test_qmm_records(void) {
  size_t n;
  unsigned char *buf = slurp("qmm_golden.bin", &n);
  if (!CHECK_MSG(buf != NULL, "qmm_golden.bin is readable"))
    return;
  reader r = {buf, buf + n};
  int records = 0;
  while (r.p < r.end) {
    const unsigned char *h = take(&r, 36);
    if (!CHECK(h != NULL))
      break;
    uint32_t magic, v[6];
    uint16_t gs, kind;
    memcpy(&magic, h, 4);
    int mode = h[4], bits = h[5];
    emlx_dtype dt = dt_of(h[6]);
    bool transpose = h[7] != 0;
    memcpy(&gs, h + 8, 2);
    memcpy(&kind, h + 10, 2);
    memcpy(v, h + 12, sizeof v);
    if (!CHECK(magic == 0x524D4D51u))
      break;
    int64_t B = v[0], M = v[1], K = v[2], N = v[3], E = v[4], count = v[5];
    int64_t rows = transpose ? N : K, cols = transpose ? K : N;
    size_t es = tu_dsize(dt);
    size_t nw = (size_t)(E * rows * cols * bits / 32), ns = (size_t)(E * rows * (cols / gs));
    emlx_dtype sdt = mode == 0 ? dt : EMLX_UINT8;
    const void *x = take(&r, (size_t)(B * M * K) * es), *wq = take(&r, nw * 4);
    const void *sc = take(&r, ns * tu_dsize(sdt)), *bi = mode == 0 ? take(&r, ns * es) : NULL;
    const void *li = kind ? take(&r, (size_t)count * 4) : NULL;
    const void *ri = kind ? take(&r, (size_t)count * 4) : NULL;
    int64_t nout = kind ? count : B;
    const void *y = take(&r, (size_t)(nout * M * N) * es);
    if (!CHECK(x && wq && sc && y))
      break;
    records++;
    int64_t xs[3] = {B, M, K}, ws[3] = {E, rows, cols * bits / 32}, ss[3] = {E, rows, cols / gs};
    emlx_array *ax = emlx_from_blob(x, dt, xs, 3, EMLX_CPU);
    emlx_array *aw = emlx_from_blob(wq, EMLX_UINT32, ws, 3, EMLX_CPU);
    emlx_array *as = emlx_from_blob(sc, sdt, ss, 3, EMLX_CPU);
    emlx_array *ab = bi ? emlx_from_blob(bi, dt, ss, 3, EMLX_CPU) : NULL;
    emlx_array *al = NULL, *ar = NULL, *out;
    if (kind) {
      al = emlx_from_blob(li, EMLX_UINT32, &count, 1, EMLX_CPU);
      ar = emlx_from_blob(ri, EMLX_UINT32, &count, 1, EMLX_CPU);
      out = emlx_gather_qmm(ax, aw, as, ab, al, ar, transpose, gs, bits,
                            (emlx_quantization_mode)mode, false);
    } else {
      out =
          emlx_quantized_matmul(ax, aw, as, ab, transpose, gs, bits, (emlx_quantization_mode)mode);
    }
    double *got = out ? tu_read(out) : NULL;
    if (CHECK_MSG(got != NULL, "%s %s bits=%d", kind ? "gather_qmm" : "quantized_matmul",
                  MODE_NAMES[mode], bits) &&
        CHECK(emlx_array_dtype(out) == dt)) {
      double *xd = to_doubles(x, dt, (size_t)(B * M * K));
      double *sd = mode == 0 ? to_doubles(sc, dt, ns) : NULL;
      double *bd = mode == 0 ? to_doubles(bi, dt, ns) : NULL;
      double *yd = to_doubles(y, dt, (size_t)(nout * M * N));
      double *ref = malloc((size_t)(M * N) * sizeof *ref), *mag = malloc((size_t)(M * N) * 8);
      /* rounding of the output + f32 accumulation; MLX accumulates in dt */
      double eps_out = dt == EMLX_FLOAT32 ? 0x1p-24 : dt == EMLX_FLOAT16 ? 0x1p-11 : 0x1p-8;
      double eps_mlx = dt == EMLX_FLOAT32 ? 1e-5 : dt == EMLX_FLOAT16 ? 2e-2 : 1e-1;
      double worst_ref = 0, worst_mlx = 0;
      for (int64_t i = 0; i < nout; i++) {
        int64_t xi = kind ? ((const uint32_t *)li)[i] : i,
                wi = kind ? ((const uint32_t *)ri)[i] : i;
        ref_product(xd + xi * M * K, M, K, N, wq, sd, bd, mode == 0 ? NULL : sc, wi, transpose, gs,
                    bits, mode, ref, mag);
        for (int64_t j = 0; j < M * N; j++) {
          double gv = got[i * M * N + j];
          double e1 = fabs(gv - ref[j]) / (1e-5 * mag[j] + eps_out * fabs(ref[j]) + 1e-30);
          double e2 = fabs(gv - yd[i * M * N + j]) / (eps_mlx * mag[j] + 1e-30);
          worst_ref = e1 > worst_ref ? e1 : worst_ref;
          worst_mlx = e2 > worst_mlx ? e2 : worst_mlx;
        }
      }
      CHECK_MSG(worst_ref <= 1.0,
                "%s %s bits=%d g=%d %s transpose=%d: vs f64 reference %.3g of "
                "tolerance",
                kind ? "gather_qmm" : "qmm", MODE_NAMES[mode], bits, gs, tu_dname(dt), transpose,
                worst_ref);
      CHECK_MSG(worst_mlx <= 1.0, "%s %s bits=%d g=%d %s transpose=%d: vs MLX %.3g of tolerance",
                kind ? "gather_qmm" : "qmm", MODE_NAMES[mode], bits, gs, tu_dname(dt), transpose,
                worst_mlx);
      free(xd);
      free(sd);
      free(bd);
      free(yd);
      free(ref);
      free(mag);
    }
    free(got);
    emlx_release(out);
    emlx_release(ax);
    emlx_release(aw);
    emlx_release(as);
    emlx_release(ab);
    emlx_release(al);
    emlx_release(ar);
  }
  CHECK_MSG(records == 24 + 8, "every qmm golden record was read (%d)", records);
  free(buf);
}

int main(void) {
  test_quant_records();
  test_qmm_records();
  return tu_finish();
}
