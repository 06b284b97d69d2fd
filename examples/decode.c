/* decode.c — a Llama/Qwen-shaped decoder running prefill and greedy decode on
 * the EMLX C API (`make demo` builds and runs it).
 *
 * The model: 8 layers, hidden 2048, 16 query heads and 4 KV heads of 128
 * (grouped-query attention), a SwiGLU MLP of 5632, vocabulary 32000, RMSNorm
 * before attention and MLP and before the output projection, RoPE
 * (split-half, base 10000). Weights are deterministic pseudo-random values
 * made at start-up (no downloads), by default quantized as the
 * mlx-community 4-bit models are (mlx_lm.convert -q): every linear layer,
 * the LM head and the embedding table in 4-bit affine, group 64, bf16
 * scales and biases, stored (out, in) and quantized along `in`; the
 * products run through emlx_quantized_matmul (x @ W^T, W never dequantized
 * in memory) and the embedding looks up packed rows and dequantizes only
 * those (MLX's QuantizedEmbedding). The RMSNorm weights stay bf16.
 * `--weights bf16` keeps every weight dense bf16 ({in, out}, emlx_matmul)
 * instead. Activations are bf16, the attention softmax is f32.
 *
 * Per layer the fused kernels of emlx/fast.h (rms_norm, rope, swiglu) and
 * the matmuls; attention is one fused node of emlx/fast_attention.h,
 * emlx_kv_cache_sdpa_update, over a preallocated KV cache ({1, KV heads,
 * T_max, 128} per layer): it writes the new rows in place and runs flash
 * attention (causal, grouped-query, K/V never copied) over the valid prefix.
 *
 * It prints the prefill and decode speed (tokens/s, ms per token) and the
 * peak of emlx's memory counters, with a progress line while decoding, and
 * checks itself: the last logits are finite, and a second run from the same
 * prompt decodes the same tokens (greedy decode is deterministic). It also
 * reports whether the KV cache kept its buffer over the decode steps (the
 * update in place). With 4-bit weights it also checks the quantized
 * product against the dense one (the LM head dequantized, emlx_matmul).
 *
 *   emlx_decode [--layers N] [--prompt N] [--gen N] [--threads N]
 *               [--weights q4|bf16] [--json]
 *
 * --json: stdout holds one JSON object (the figures of both runs, for
 * bench/decode_peers.py); the human-readable lines go to stderr.
 *
 * Exit status 0, or 1 with a message. */
#include <emlx.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the model's shape -------------------------------------------------------- */
#define HIDDEN 2048
#define NQ 16
#define NKV 4
#define HEAD 128
#define INTER 5632
#define VOCAB 32000
#define ROPE_BASE 10000.0f
#define EPS 1e-5f

#define QGROUP 64
#define QBITS 4

/* A weight matrix: dense bf16 {in, out} (w), or 4-bit affine (q, scales,
 * biases: {out, in} quantized along in). */
typedef struct lin {
  emlx_array *w, *q, *scales, *biases;
} lin;

typedef struct layer {
  emlx_array *attn_norm, *mlp_norm;
  lin wq, wk, wv, wo, wg, wu, wd;
} layer;

typedef struct model {
  int nlayers;
  bool quantized;
  lin embed; /* {VOCAB, HIDDEN}: a row per token (quantized along HIDDEN) */
  emlx_array *final_norm;
  lin lm_head;
  layer *layers;
} model;

typedef struct cache {
  int64_t tmax;
  emlx_array **k, **v; /* per layer {1, NKV, tmax, HEAD} */
} cache;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(const char *what) {
  fprintf(stderr, "\nemlx_decode: %s: %s\n", what, emlx_last_error());
  return 1;
}

/* ---- temporaries: every handle a forward pass makes, released at its end ----- */
#define MAX_TMP 2048
typedef struct tmp {
  emlx_array *a[MAX_TMP];
  int n;
  bool failed;
} tmp;

static emlx_array *K(tmp *t, emlx_array *a) {
  if (!a || t->n == MAX_TMP) {
    t->failed = true;
    if (a)
      emlx_release(a);
    return NULL;
  }
  t->a[t->n++] = a;
  return a;
}

static void tmp_release(tmp *t) {
  for (int i = 0; i < t->n; i++)
    emlx_release(t->a[i]);
  t->n = 0;
}

/* ---- deterministic weights ------------------------------------------------------ */
static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* bf16 of a float (nearest even; the values here are finite) */
static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/* A bf16 {rows, cols} of uniform values in [-a, a) (a = 1 / sqrt(rows):
 * a layer keeps its activations' scale), or all `fill` when fill != 0. */
static emlx_array *weight(uint64_t seed, int64_t rows, int64_t cols, float fill) {
  int64_t n = rows * cols;
  uint16_t *buf = malloc((size_t)n * sizeof(uint16_t));
  if (!buf)
    return NULL;
  float a = 1.0f / sqrtf((float)rows);
  uint64_t s = seed;
  for (int64_t i = 0; i < n; i += 4) {
    uint64_t z = splitmix(&s);
    for (int k = 0; k < 4 && i + k < n; k++) {
      float u = (float)((z >> (16 * k)) & 0xFFFF) * (1.0f / 32768.0f) - 1.0f;
      buf[i + k] = to_bf16(fill != 0.0f ? fill : u * a);
    }
  }
  int64_t shape[2] = {rows, cols};
  emlx_array *w = emlx_from_blob(buf, EMLX_BFLOAT16, shape, cols == 1 ? 1 : 2, EMLX_CPU);
  free(buf);
  return w;
}

/* A bf16 weight w of rows x cols (taken over): kept dense as it is, or
 * (quantized) transposed first when `transpose`, then quantized along its
 * last axis (MLX's layout). 0 or -1. */
static int make_weight(lin *L, bool quantized, bool transpose, emlx_array *w) {
  if (!w)
    return -1;
  if (!quantized) {
    L->w = w;
    return 0;
  }
  if (transpose) {
    const int perm[2] = {1, 0};
    emlx_array *wt = emlx_transpose(w, perm, 2);
    emlx_release(w);
    if (!wt)
      return -1;
    w = wt;
  }
  int rc = emlx_quantize(w, QGROUP, QBITS, EMLX_QUANT_AFFINE, &L->q, &L->scales, &L->biases);
  emlx_release(w);
  if (rc != 0)
    return -1;
  emlx_array *outs[3] = {L->q, L->scales, L->biases};
  return emlx_eval(outs, 3);
}

/* The weight of a linear layer from in to out features: the bf16 {in, out}
 * of weight(), or {out, in} quantized along in. */
static int make_lin(lin *L, bool quantized, uint64_t seed, int64_t in, int64_t out) {
  return make_weight(L, quantized, true, weight(seed, in, out, 0));
}

/* The embedding table {VOCAB, HIDDEN} (a row per token): bf16, or quantized
 * along HIDDEN as it is. */
static int make_embed(lin *E, bool quantized, uint64_t seed) {
  return make_weight(E, quantized, false, weight(seed, VOCAB, HIDDEN, 0));
}

static void lin_free(lin *L) {
  emlx_release(L->w);
  emlx_release(L->q);
  emlx_release(L->scales);
  emlx_release(L->biases);
}

static int model_init(model *m, int nlayers, bool quantized, bool progress) {
  m->nlayers = nlayers;
  m->quantized = quantized;
  m->layers = calloc((size_t)nlayers, sizeof(layer));
  if (!m->layers)
    return -1;
  uint64_t seed = 1;
  if (make_embed(&m->embed, quantized, seed++) != 0)
    return -1;
  m->final_norm = weight(seed++, HIDDEN, 1, 1.0f);
  if (!m->final_norm || make_lin(&m->lm_head, quantized, seed++, HIDDEN, VOCAB) != 0)
    return -1;
  for (int l = 0; l < nlayers; l++) {
    layer *L = &m->layers[l];
    L->attn_norm = weight(seed++, HIDDEN, 1, 1.0f);
    if (!L->attn_norm || make_lin(&L->wq, quantized, seed++, HIDDEN, NQ * HEAD) != 0 ||
        make_lin(&L->wk, quantized, seed++, HIDDEN, NKV * HEAD) != 0 ||
        make_lin(&L->wv, quantized, seed++, HIDDEN, NKV * HEAD) != 0 ||
        make_lin(&L->wo, quantized, seed++, NQ * HEAD, HIDDEN) != 0)
      return -1;
    L->mlp_norm = weight(seed++, HIDDEN, 1, 1.0f);
    if (!L->mlp_norm || make_lin(&L->wg, quantized, seed++, HIDDEN, INTER) != 0 ||
        make_lin(&L->wu, quantized, seed++, HIDDEN, INTER) != 0 ||
        make_lin(&L->wd, quantized, seed++, INTER, HIDDEN) != 0)
      return -1;
    if (progress)
      fprintf(stderr, "\rweights: layer %d/%d", l + 1, nlayers);
  }
  if (progress)
    fprintf(stderr, "\n");
  return 0;
}

static void model_free(model *m) {
  lin_free(&m->embed);
  emlx_release(m->final_norm);
  lin_free(&m->lm_head);
  for (int l = 0; m->layers && l < m->nlayers; l++) {
    layer *L = &m->layers[l];
    emlx_release(L->attn_norm);
    emlx_release(L->mlp_norm);
    lin *all[7] = {&L->wq, &L->wk, &L->wv, &L->wo, &L->wg, &L->wu, &L->wd};
    for (int i = 0; i < 7; i++)
      lin_free(all[i]);
  }
  free(m->layers);
}

static int cache_init(cache *c, int nlayers, int64_t tmax) {
  c->tmax = tmax;
  c->k = calloc((size_t)nlayers, sizeof(emlx_array *));
  c->v = calloc((size_t)nlayers, sizeof(emlx_array *));
  if (!c->k || !c->v)
    return -1;
  int64_t shape[4] = {1, NKV, tmax, HEAD};
  for (int l = 0; l < nlayers; l++) {
    c->k[l] = emlx_zeros(shape, 4, EMLX_BFLOAT16, EMLX_CPU);
    c->v[l] = emlx_zeros(shape, 4, EMLX_BFLOAT16, EMLX_CPU);
    if (!c->k[l] || !c->v[l] || emlx_eval(&c->k[l], 1) != 0 || emlx_eval(&c->v[l], 1) != 0)
      return -1;
  }
  return 0;
}

static void cache_free(cache *c, int nlayers) {
  for (int l = 0; c->k && l < nlayers; l++) {
    emlx_release(c->k[l]);
    emlx_release(c->v[l]);
  }
  free(c->k);
  free(c->v);
}

/* ---- attention ------------------------------------------------------------------ */
/* Causal GQA attention of q {1, NQ, T, HEAD} (roped) over the cache of one
 * layer after writing k, v {1, NKV, T, HEAD} at positions [pos, pos + T),
 * in one fused node (emlx_kv_cache_sdpa_update, emlx/fast_attention.h): the
 * flash kernel reads the valid prefix of the cache in place, the four query
 * heads of a KV head sharing its rows. Replaces *kc, *vc by the updated
 * caches; the old handles are released before the eval, so the update
 * writes into their buffers instead of copying them. Returns
 * {1, NQ, T, HEAD}. */
static emlx_array *attend(tmp *t, emlx_array *q, emlx_array *k, emlx_array *v, emlx_array **kc,
                          emlx_array **vc, int64_t pos, int64_t T) {
  (void)T;
  emlx_array *o = NULL, *nk = NULL, *nv = NULL;
  int rc =
      emlx_kv_cache_sdpa_update(q, k, v, *kc, *vc, pos, 1.0f / sqrtf((float)HEAD), &o, &nk, &nv);
  if (rc != 0) {
    t->failed = true;
    return NULL;
  }
  emlx_release(*kc);
  emlx_release(*vc);
  *kc = nk;
  *vc = nv;
  return K(t, o);
}

/* ---- the forward pass -------------------------------------------------------------- */
/* x @ W: emlx_matmul of the bf16 {in, out}, or emlx_quantized_matmul of the
 * quantized {out, in} (x @ W^T). */
static emlx_array *linear(tmp *t, emlx_array *x, const lin *L) {
  if (L->w)
    return K(t, emlx_matmul(x, L->w));
  return K(t, emlx_quantized_matmul(x, L->q, L->scales, L->biases, true, QGROUP, QBITS,
                                    EMLX_QUANT_AFFINE));
}

/* The embedding rows of ids {T}: {T, HIDDEN} bf16. Quantized: the packed
 * rows, their scales and biases taken, then only those dequantized. */
static emlx_array *embed(tmp *t, const lin *E, emlx_array *ids) {
  if (E->w)
    return K(t, emlx_take(E->w, ids, 0, NULL));
  emlx_array *q = K(t, emlx_take(E->q, ids, 0, NULL));
  emlx_array *s = K(t, emlx_take(E->scales, ids, 0, NULL));
  emlx_array *b = K(t, emlx_take(E->biases, ids, 0, NULL));
  if (t->failed)
    return NULL;
  return K(t, emlx_dequantize(q, s, b, QGROUP, QBITS, EMLX_QUANT_AFFINE));
}

/* Logits {1, T, VOCAB} (bf16) of tokens[0..T) at positions pos.. pos + T. */
static emlx_array *forward(tmp *t, const model *m, cache *c, const int32_t *tokens, int64_t T,
                           int64_t pos) {
  int64_t ts[1] = {T};
  emlx_array *ids = K(t, emlx_from_blob(tokens, EMLX_INT32, ts, 1, EMLX_CPU));
  emlx_array *x2 = embed(t, &m->embed, ids); /* {T, HIDDEN} */
  int64_t xs[3] = {1, T, HIDDEN};
  emlx_array *x = K(t, emlx_reshape(x2, xs, 3));
  const int tr[4] = {0, 2, 1, 3};
  for (int l = 0; l < m->nlayers && !t->failed; l++) {
    const layer *L = &m->layers[l];
    emlx_array *h = K(t, emlx_fast_rms_norm(x, L->attn_norm, EPS));
    int64_t qs[4] = {1, T, NQ, HEAD}, ks[4] = {1, T, NKV, HEAD};
    emlx_array *q = K(t, emlx_reshape(linear(t, h, &L->wq), qs, 4));
    emlx_array *k = K(t, emlx_reshape(linear(t, h, &L->wk), ks, 4));
    emlx_array *v = K(t, emlx_reshape(linear(t, h, &L->wv), ks, 4));
    /* {1, H, T, HEAD}: rope turns axis -2 (T) by pos + t */
    emlx_array *qt =
        K(t, emlx_fast_rope(K(t, emlx_transpose(q, tr, 4)), HEAD, false, ROPE_BASE, 1.0f, pos));
    emlx_array *kt =
        K(t, emlx_fast_rope(K(t, emlx_transpose(k, tr, 4)), HEAD, false, ROPE_BASE, 1.0f, pos));
    emlx_array *vt = K(t, emlx_transpose(v, tr, 4));
    emlx_array *a = attend(t, qt, kt, vt, &c->k[l], &c->v[l], pos, T);
    emlx_array *a2 = K(t, emlx_reshape(K(t, emlx_transpose(a, tr, 4)), xs, 3));
    emlx_array *x1 = K(t, emlx_add(x, linear(t, a2, &L->wo)));
    emlx_array *h2 = K(t, emlx_fast_rms_norm(x1, L->mlp_norm, EPS));
    emlx_array *g = linear(t, h2, &L->wg), *u = linear(t, h2, &L->wu);
    emlx_array *mlp = linear(t, K(t, emlx_fast_swiglu(g, u)), &L->wd);
    x = K(t, emlx_add(x1, mlp));
  }
  emlx_array *xn = K(t, emlx_fast_rms_norm(x, m->final_norm, EPS));
  return linear(t, xn, &m->lm_head);
}

/* The quantized path against a dense reference: an activation (the
 * embedding rows of 4 tokens) times the LM head by emlx_quantized_matmul and
 * by emlx_matmul with the transposed emlx_dequantize of the same weights.
 * Returns max |q - dense| / max |dense| (the two differ by the bf16
 * rounding of the dequantized weights and of the results), or -1. */
static double check_quantized(const model *m) {
  tmp *t = calloc(1, sizeof *t);
  if (!t)
    return -1;
  const int32_t toks[4] = {1, 2, 3, 4};
  int64_t ts[1] = {4};
  const int perm[2] = {1, 0};
  emlx_array *x = embed(t, &m->embed, K(t, emlx_from_blob(toks, EMLX_INT32, ts, 1, EMLX_CPU)));
  emlx_array *q = linear(t, x, &m->lm_head);
  emlx_array *w = K(t, emlx_dequantize(m->lm_head.q, m->lm_head.scales, m->lm_head.biases, QGROUP,
                                       QBITS, EMLX_QUANT_AFFINE));
  emlx_array *d = K(t, emlx_astype(K(t, emlx_matmul(x, K(t, emlx_transpose(w, perm, 2)))),
                                   EMLX_FLOAT32));
  emlx_array *qf = K(t, emlx_astype(q, EMLX_FLOAT32));
  emlx_array *err = K(t, emlx_max(K(t, emlx_abs(K(t, emlx_subtract(qf, d)))), NULL, 0, false));
  emlx_array *ref = K(t, emlx_max(K(t, emlx_abs(d)), NULL, 0, false));
  double e = -1, r = 0;
  if (!t->failed && emlx_item_f64(err, &e) == 0 && emlx_item_f64(ref, &r) == 0 && r > 0)
    e /= r;
  else
    e = -1;
  tmp_release(t);
  free(t);
  return e;
}

/* Evaluates logits and the caches; returns the greedy next token of the last
 * position (or -1), and with `finite` whether every last logit is finite. */
static int32_t step_eval(tmp *t, emlx_array *logits, cache *c, int nlayers, int64_t T,
                         bool *finite) {
  if (t->failed)
    return -1;
  int64_t s0[3] = {0, T - 1, 0}, s1[3] = {1, T, VOCAB};
  emlx_array *last = K(t, emlx_slice(logits, s0, s1, NULL, 3));
  emlx_array *am = K(t, emlx_argmax_all(last, false, NULL));
  emlx_array *fin = finite ? K(t, emlx_all(K(t, emlx_isfinite(last)), NULL, 0, false)) : NULL;
  if (t->failed)
    return -1;
  emlx_array *outs[2 + 2 * 64];
  int n = 0;
  outs[n++] = am;
  if (fin)
    outs[n++] = fin;
  for (int l = 0; l < nlayers && n < (int)(sizeof outs / sizeof outs[0]) - 1; l++) {
    outs[n++] = c->k[l];
    outs[n++] = c->v[l];
  }
  if (emlx_eval(outs, (size_t)n) != 0)
    return -1;
  int64_t tok;
  if (emlx_item_i64(am, &tok) != 0)
    return -1;
  if (fin) {
    double f;
    if (emlx_item_f64(fin, &f) != 0)
      return -1;
    *finite = f != 0.0;
  }
  return (int32_t)tok;
}

typedef struct run_result {
  double prefill_s, decode_s;
  int32_t *tokens; /* gen */
  bool finite;
  bool in_place; /* every decode step wrote the KV cache into its buffer */
} run_result;

static int run(const model *m, int64_t nprompt, int64_t ngen, bool progress, run_result *r) {
  cache c = {0};
  int rc = 1;
  tmp *t = calloc(1, sizeof *t);
  int32_t *prompt = malloc((size_t)nprompt * sizeof(int32_t));
  if (!t || !prompt || cache_init(&c, m->nlayers, nprompt + ngen) != 0) {
    fail("cache");
    goto done;
  }
  uint64_t s = 42;
  for (int64_t i = 0; i < nprompt; i++)
    prompt[i] = (int32_t)(splitmix(&s) % VOCAB);
  double t0 = now_s();
  emlx_array *logits = forward(t, m, &c, prompt, nprompt, 0);
  int32_t next = step_eval(t, logits, &c, m->nlayers, nprompt, NULL);
  tmp_release(t);
  r->prefill_s = now_s() - t0;
  if (next < 0) {
    fail("prefill");
    goto done;
  }
  const void *kbuf = emlx_data(c.k[0]);
  r->in_place = kbuf != NULL;
  t0 = now_s();
  for (int64_t i = 0; i < ngen; i++) {
    r->tokens[i] = next;
    bool last = i == ngen - 1;
    logits = forward(t, m, &c, &r->tokens[i], 1, nprompt + i);
    next = step_eval(t, logits, &c, m->nlayers, 1, last ? &r->finite : NULL);
    tmp_release(t);
    if (next < 0) {
      fail("decode");
      goto done;
    }
    r->in_place = r->in_place && emlx_data(c.k[0]) == kbuf;
    if (progress) {
      double el = now_s() - t0;
      fprintf(stderr, "\rdecode %lld/%lld tokens  %.1f tokens/s  %.1f ms/token   ",
              (long long)(i + 1), (long long)ngen, (double)(i + 1) / el,
              el * 1e3 / (double)(i + 1));
    }
  }
  r->decode_s = now_s() - t0;
  if (progress)
    fprintf(stderr, "\n");
  rc = 0;
done:
  if (t)
    tmp_release(t);
  free(t);
  free(prompt);
  cache_free(&c, m->nlayers);
  return rc;
}

static int usage(const char *prog) {
  fprintf(stderr,
          "usage: %s [--layers 1..64] [--prompt N] [--gen N] [--threads N] "
          "[--weights q4|bf16] [--json]\n",
          prog);
  return 2;
}

/* A whole decimal number in [lo, hi] -> *v; 0, or -1. */
static int parse_long(const char *s, long lo, long hi, long *v) {
  char *end;
  long x = strtol(s, &end, 10);
  if (end == s || *end != '\0' || x < lo || x > hi)
    return -1;
  *v = x;
  return 0;
}

int main(int argc, char **argv) {
  long nlayers = 8, nprompt = 128, ngen = 32, threads = 0;
  bool quantized = true, json = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--json")) {
      json = true;
      continue;
    }
    if (!v)
      return usage(argv[0]);
    i++;
    int bad = 0;
    if (!strcmp(a, "--layers"))
      bad = parse_long(v, 1, 64, &nlayers);
    else if (!strcmp(a, "--prompt"))
      bad = parse_long(v, 1, 65536, &nprompt);
    else if (!strcmp(a, "--gen"))
      bad = parse_long(v, 1, 65536, &ngen);
    else if (!strcmp(a, "--threads"))
      bad = parse_long(v, 0, 4096, &threads);
    else if (!strcmp(a, "--weights") && (!strcmp(v, "q4") || !strcmp(v, "bf16")))
      quantized = !strcmp(v, "q4");
    else
      bad = -1;
    if (bad)
      return usage(argv[0]);
  }
  if (nprompt + ngen > 65536)
    return usage(argv[0]);
  /* --json: the object alone on stdout, the report on stderr */
  FILE *out = json ? stderr : stdout;
  if (threads > 0 && emlx_set_num_threads((int)threads) < 0)
    return fail("threads");
  const char *wname = quantized ? "4-bit affine (group 64) weights" : "bf16 weights";
  fprintf(out, "model: %ld layers, hidden %d, %d/%d heads of %d, MLP %d, vocab %d, %s\n", nlayers,
          HIDDEN, NQ, NKV, HEAD, INTER, VOCAB, wname);
  fprintf(out, "engine: simd %s, %d threads\n", emlx_simd_level(), emlx_num_threads());
  model m = {0};
  double t0 = now_s();
  if (model_init(&m, (int)nlayers, quantized, !json) != 0) {
    model_free(&m);
    return fail("weights");
  }
  double t_init = now_s() - t0;
  double linear_params = (double)VOCAB * HIDDEN * 2 +
                         (double)nlayers * ((double)HIDDEN * (NQ + 2 * NKV) * HEAD +
                                            (double)NQ * HEAD * HIDDEN + 3.0 * HIDDEN * INTER);
  double norm_params = (double)HIDDEN * (2.0 * (double)nlayers + 1.0);
  /* q4: half a byte a value plus a bf16 scale and bias per 64 */
  double bytes_per = quantized ? (double)QBITS / 8.0 + 4.0 / QGROUP : 2.0;
  double wbytes = linear_params * bytes_per + norm_params * 2.0;
  fprintf(out, "weights: %.0fM parameters (%.2f GB) made in %.1f s\n",
          (linear_params + norm_params) / 1e6, wbytes / 1e9, t_init);
  emlx_reset_peak_memory();
  run_result r1 = {0}, r2 = {0};
  r1.tokens = calloc((size_t)ngen, sizeof(int32_t));
  r2.tokens = calloc((size_t)ngen, sizeof(int32_t));
  int rc = !r1.tokens || !r2.tokens || run(&m, nprompt, ngen, !json, &r1) != 0;
  emlx_memory_stats mem = emlx_memory_info();
  if (!rc) {
    fprintf(out, "prefill: %ld tokens in %.3f s: %.1f tokens/s\n", nprompt, r1.prefill_s,
            (double)nprompt / r1.prefill_s);
    fprintf(out, "decode:  %ld tokens in %.3f s: %.2f tokens/s, %.1f ms/token\n", ngen,
            r1.decode_s, (double)ngen / r1.decode_s, r1.decode_s * 1e3 / (double)ngen);
    fprintf(out, "memory:  peak %.2f GB, active %.2f GB, cache %.2f GB\n",
            (double)mem.peak_memory / 1e9, (double)mem.active_memory / 1e9,
            (double)mem.cache_memory / 1e9);
    fprintf(out, "tokens:");
    for (int64_t i = 0; i < ngen && i < 16; i++)
      fprintf(out, " %d", r1.tokens[i]);
    fprintf(out, "%s\n", ngen > 16 ? " ..." : "");
    /* the checks: finite logits, and the same tokens from a second run */
    rc = run(&m, nprompt, ngen, false, &r2) != 0;
    bool same = !rc && memcmp(r1.tokens, r2.tokens, (size_t)ngen * sizeof(int32_t)) == 0;
    fprintf(out, "check:   last logits finite: %s; greedy decode deterministic over two runs: %s\n",
            r1.finite ? "yes" : "NO", same ? "yes" : "NO");
    fprintf(out, "kv cache: updated in place (same buffer every step): %s\n",
            r1.in_place ? "yes" : "no");
    rc = rc || !r1.finite || !same;
    if (quantized) {
      double e = check_quantized(&m);
      bool ok = e >= 0 && e < 2e-2;
      fprintf(out, "check:   quantized_matmul agrees with dequantize + matmul (LM head): %s "
              "(max error %.2g of the largest logit)\n",
              ok ? "yes" : "NO", e);
      rc = rc || !ok;
    }
    if (json && !rc)
      printf("{\"impl\": \"emlx\", \"weights\": \"%s\", \"layers\": %ld, \"prompt\": %ld, "
             "\"gen\": %ld, \"threads\": %d, \"simd\": \"%s\", \"init_s\": %.4f, "
             "\"prefill_s\": [%.6f, %.6f], \"decode_s\": [%.6f, %.6f], "
             "\"peak_bytes\": %.0f, \"weight_bytes\": %.0f, \"finite\": %s, "
             "\"deterministic\": %s, \"kv_in_place\": %s}\n",
             quantized ? "q4" : "bf16", nlayers, nprompt, ngen, emlx_num_threads(),
             emlx_simd_level(), t_init, r1.prefill_s, r2.prefill_s, r1.decode_s, r2.decode_s,
             (double)mem.peak_memory, wbytes, r1.finite ? "true" : "false",
             same ? "true" : "false", r1.in_place ? "true" : "false");
  }
  free(r1.tokens);
  free(r2.tokens);
  model_free(&m);
  return rc ? 1 : 0;
}
