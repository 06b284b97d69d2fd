#!/usr/bin/env python3
"""decode_peers.py — the decode demo (examples/decode.c) against the same
model in MLX and in torch, side by side in one run.

The model is the demo's: a Llama-shaped decoder, 8 layers, hidden 2048, 16
query / 4 KV heads of 128 (GQA), SwiGLU MLP 5632, vocabulary 32000, RMSNorm
(eps 1e-5), split-half RoPE (base 10000), untied embedding and LM head, bf16
activations; a prompt of 128 tokens (prefill), then 32 greedy decode steps of
one token over a KV cache. Weights are pseudo-random (uniform, +-1/sqrt(in)),
made at start-up by each implementation.

  emlx-q4    the demo binary, default weights: every linear layer, the LM head
             and the embedding 4-bit affine, group 64, bf16 scales/biases
             (as mlx_lm.convert -q makes them), emlx_quantized_matmul
  emlx-bf16  the demo binary, --weights bf16
  mlx-q4     MLX: mx.quantize'd weights (4-bit, group 64, the same layers),
             float32 activations, scales and biases: MLX's CPU
             quantized_matmul is about 8x slower with bf16 ones (its bf16
             path converts element by element; measured 66 ms vs 7.7 ms of
             CPU for x {1, 2048} @ W^T {5632, 2048}), so float32 is MLX's
             fast configuration on a CPU. Even so MLX's CPU quantized
             matmul is a plain single-threaded loop (no reuse of unpacked
             weights across the rows of a prefill): an MLX process takes
             minutes. --mlx-bf16 adds mlx-q4bf16, the bf16 model mlx-lm
             would run (about 8x slower again).
             mx.quantized_matmul, QuantizedEmbedding's lookup (dequantize the
             rows taken), mx.fast.rms_norm, mx.fast.rope,
             mx.fast.scaled_dot_product_attention (GQA, "causal" for the
             prefill), mlx-lm's KVCache (step 256, slice assignment), the
             SwiGLU mx.compile'd as mlx-lm does; one mx.eval per step
  torch-bf16 torch: bf16 weights (torch has no CPU 4-bit matmul, so the fair
             comparison for it is emlx-bf16; the q4 ratio is also printed),
             F.linear, F.embedding, F.rms_norm, RoPE from cos/sin tables,
             F.scaled_dot_product_attention (enable_gqa, is_causal for the
             prefill), a preallocated KV cache written in place; no_grad
  torch-f32  (--torch-f32) the same with float32 weights and activations

Every implementation runs in its own process, as the demo does: make the
weights, run prefill + decode twice; the second (warm) run's figures are
used (the first one is the demo's printed one: it pays first-touch costs).
Processes are interleaved: each round runs every implementation once, in a
rotated order. Reports the median and min..max over the rounds of prefill
and decode tokens/s, and the ratios ours / peer of the medians.

Threads: all use --threads (default: the demo's, one per core). torch:
torch.set_num_threads, OMP_WAIT_POLICY=PASSIVE. MLX's CPU ops run on its
stream thread; its dense float matmuls (the attention's products through
the composed SDPA on CPU) go to BLAS: the wheel bundles a reference BLAS,
so the MLX process is started with LD_PRELOAD of Debian's OpenBLAS
(--openblas, OPENBLAS_NUM_THREADS = threads) unless --no-openblas.

  /opt/peers/bin/python bench/decode_peers.py --demo build/emlx_decode [--rounds 3]
      [--layers 8 --prompt 128 --gen 32] [--threads N] [--torch-f32] [--only emlx-q4,mlx-q4]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HIDDEN, NQ, NKV, HEAD, INTER, VOCAB = 2048, 16, 4, 128, 5632, 32000
ROPE_BASE, EPS = 10000.0, 1e-5
GROUP, BITS = 64, 4
SCALE = HEAD ** -0.5


def prompt_tokens(n):
    return [(i * 7919 + 13) % VOCAB for i in range(n)]


# ---- MLX -------------------------------------------------------------------------
def mlx_worker(a):
    import mlx.core as mx

    dt = mx.float32 if a.mlx_dtype == "f32" else mx.bfloat16  # the model's dtype
    mx.random.seed(0)

    def uniform(shape, fan_in):
        lim = fan_in ** -0.5
        return mx.random.uniform(-lim, lim, shape, dtype=mx.float32).astype(dt)

    def qlin(out_f, in_f):  # {out, in} quantized along in, as nn.QuantizedLinear
        w = uniform((out_f, in_f), in_f)
        q = mx.quantize(w, group_size=GROUP, bits=BITS)
        mx.eval(q)
        return q

    t0 = time.perf_counter()
    embed = qlin(VOCAB, HIDDEN)
    lm_head = qlin(VOCAB, HIDDEN)
    final_norm = mx.ones((HIDDEN,), dtype=dt)
    layers = []
    for _ in range(a.layers):
        layers.append(
            dict(
                attn_norm=mx.ones((HIDDEN,), dtype=dt),
                mlp_norm=mx.ones((HIDDEN,), dtype=dt),
                wq=qlin(NQ * HEAD, HIDDEN),
                wk=qlin(NKV * HEAD, HIDDEN),
                wv=qlin(NKV * HEAD, HIDDEN),
                wo=qlin(HIDDEN, NQ * HEAD),
                wg=qlin(INTER, HIDDEN),
                wu=qlin(INTER, HIDDEN),
                wd=qlin(HIDDEN, INTER),
            )
        )
    mx.eval(final_norm, [l["attn_norm"] for l in layers], [l["mlp_norm"] for l in layers])
    init_s = time.perf_counter() - t0

    def lin(x, w):
        q, s, b = w
        return mx.quantized_matmul(x, q, s, b, transpose=True, group_size=GROUP, bits=BITS)

    def emb(ids):  # nn.QuantizedEmbedding
        q, s, b = embed
        return mx.dequantize(q[ids], s[ids], b[ids], group_size=GROUP, bits=BITS)

    @mx.compile
    def swiglu(g, u):  # mlx-lm's (nn.silu(gate) * x)
        return g * mx.sigmoid(g) * u

    class KVCache:  # mlx-lm's KVCache
        step = 256

        def __init__(self):
            self.keys = self.values = None
            self.offset = 0

        def update_and_fetch(self, k, v):
            prev = self.offset
            if self.keys is None or prev + k.shape[2] > self.keys.shape[2]:
                n = ((self.step + k.shape[2] - 1) // self.step) * self.step
                ks, vs = (1, NKV, n, HEAD), (1, NKV, n, HEAD)
                nk, nv = mx.zeros(ks, k.dtype), mx.zeros(vs, v.dtype)
                if self.keys is not None:
                    if prev % self.step != 0:
                        self.keys = self.keys[..., :prev, :]
                        self.values = self.values[..., :prev, :]
                    self.keys = mx.concatenate([self.keys, nk], axis=2)
                    self.values = mx.concatenate([self.values, nv], axis=2)
                else:
                    self.keys, self.values = nk, nv
            self.offset += k.shape[2]
            self.keys[..., prev : self.offset, :] = k
            self.values[..., prev : self.offset, :] = v
            return self.keys[..., : self.offset, :], self.values[..., : self.offset, :]

    def forward(tokens, caches):
        T = len(tokens)
        x = emb(mx.array(tokens, dtype=mx.int32))[None]
        for L, c in zip(layers, caches):
            off = c.offset
            h = mx.fast.rms_norm(x, L["attn_norm"], EPS)
            q = lin(h, L["wq"]).reshape(1, T, NQ, HEAD).transpose(0, 2, 1, 3)
            k = lin(h, L["wk"]).reshape(1, T, NKV, HEAD).transpose(0, 2, 1, 3)
            v = lin(h, L["wv"]).reshape(1, T, NKV, HEAD).transpose(0, 2, 1, 3)
            q = mx.fast.rope(q, HEAD, traditional=False, base=ROPE_BASE, scale=1.0, offset=off)
            k = mx.fast.rope(k, HEAD, traditional=False, base=ROPE_BASE, scale=1.0, offset=off)
            k, v = c.update_and_fetch(k, v)
            o = mx.fast.scaled_dot_product_attention(
                q, k, v, scale=SCALE, mask="causal" if T > 1 else None
            )
            x = x + lin(o.transpose(0, 2, 1, 3).reshape(1, T, NQ * HEAD), L["wo"])
            h = mx.fast.rms_norm(x, L["mlp_norm"], EPS)
            x = x + lin(swiglu(lin(h, L["wg"]), lin(h, L["wu"])), L["wd"])
        x = mx.fast.rms_norm(x[:, -1:, :], final_norm, EPS)
        return lin(x, lm_head).reshape(VOCAB)

    def one_run():
        caches = [KVCache() for _ in layers]
        t0 = time.perf_counter()
        logits = forward(prompt_tokens(a.prompt), caches)
        nxt = mx.argmax(logits)
        mx.eval(nxt)
        tok = nxt.item()
        prefill = time.perf_counter() - t0
        toks = []
        t0 = time.perf_counter()
        for _ in range(a.gen):
            toks.append(tok)
            logits = forward([tok], caches)
            nxt = mx.argmax(logits)
            mx.eval(nxt)
            tok = nxt.item()
        decode = time.perf_counter() - t0
        finite = bool(mx.all(mx.isfinite(logits)).item())
        return prefill, decode, toks, finite

    mx.reset_peak_memory()
    r1, r2 = one_run(), one_run()
    return dict(
        impl="mlx",
        weights="q4",
        activations=a.mlx_dtype,
        mlx=mx.__version__,
        init_s=init_s,
        prefill_s=[r1[0], r2[0]],
        decode_s=[r1[1], r2[1]],
        peak_bytes=mx.get_peak_memory(),
        finite=r1[3] and r2[3],
        deterministic=r1[2] == r2[2],
    )


# ---- torch -----------------------------------------------------------------------
def torch_worker(a):
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(a.threads)
    dt = torch.float32 if a.torch_dtype == "f32" else torch.bfloat16
    g = torch.Generator().manual_seed(0)

    def lin_w(out_f, in_f):  # {out, in}, as nn.Linear
        lim = in_f ** -0.5
        return (torch.rand((out_f, in_f), generator=g) * (2 * lim) - lim).to(dt)

    t0 = time.perf_counter()
    embed = lin_w(VOCAB, HIDDEN)
    lm_head = lin_w(VOCAB, HIDDEN)
    final_norm = torch.ones(HIDDEN, dtype=dt)
    layers = []
    for _ in range(a.layers):
        layers.append(
            dict(
                attn_norm=torch.ones(HIDDEN, dtype=dt),
                mlp_norm=torch.ones(HIDDEN, dtype=dt),
                wq=lin_w(NQ * HEAD, HIDDEN),
                wk=lin_w(NKV * HEAD, HIDDEN),
                wv=lin_w(NKV * HEAD, HIDDEN),
                wo=lin_w(HIDDEN, NQ * HEAD),
                wg=lin_w(INTER, HIDDEN),
                wu=lin_w(INTER, HIDDEN),
                wd=lin_w(HIDDEN, INTER),
            )
        )
    init_s = time.perf_counter() - t0
    tmax = a.prompt + a.gen
    inv = 1.0 / (ROPE_BASE ** (torch.arange(0, HEAD, 2, dtype=torch.float32) / HEAD))
    ang = torch.outer(torch.arange(tmax, dtype=torch.float32), inv)
    cos = torch.cat([ang.cos(), ang.cos()], -1).to(dt)
    sin = torch.cat([ang.sin(), ang.sin()], -1).to(dt)

    def rope(x, off):  # split-half, x {1, H, T, D}
        T = x.shape[2]
        c, s = cos[off : off + T], sin[off : off + T]
        x1, x2 = x[..., : HEAD // 2], x[..., HEAD // 2 :]
        return x * c + torch.cat([-x2, x1], -1) * s

    def forward(tokens, kc, vc, off):
        T = len(tokens)
        x = F.embedding(torch.tensor(tokens), embed)[None]
        for L, kl, vl in zip(layers, kc, vc):
            h = F.rms_norm(x, (HIDDEN,), L["attn_norm"], EPS)
            q = F.linear(h, L["wq"]).view(1, T, NQ, HEAD).transpose(1, 2)
            k = F.linear(h, L["wk"]).view(1, T, NKV, HEAD).transpose(1, 2)
            v = F.linear(h, L["wv"]).view(1, T, NKV, HEAD).transpose(1, 2)
            q, k = rope(q, off), rope(k, off)
            kl[:, :, off : off + T] = k
            vl[:, :, off : off + T] = v
            o = F.scaled_dot_product_attention(
                q, kl[:, :, : off + T], vl[:, :, : off + T], is_causal=T > 1, scale=SCALE,
                enable_gqa=True,
            )
            x = x + F.linear(o.transpose(1, 2).reshape(1, T, NQ * HEAD), L["wo"])
            h = F.rms_norm(x, (HIDDEN,), L["mlp_norm"], EPS)
            x = x + F.linear(F.silu(F.linear(h, L["wg"])) * F.linear(h, L["wu"]), L["wd"])
        x = F.rms_norm(x[:, -1:], (HIDDEN,), final_norm, EPS)
        return F.linear(x, lm_head).view(VOCAB)

    def one_run():
        kc = [torch.zeros((1, NKV, tmax, HEAD), dtype=dt) for _ in layers]
        vc = [torch.zeros((1, NKV, tmax, HEAD), dtype=dt) for _ in layers]
        with torch.no_grad():
            t0 = time.perf_counter()
            logits = forward(prompt_tokens(a.prompt), kc, vc, 0)
            tok = int(torch.argmax(logits))
            prefill = time.perf_counter() - t0
            toks = []
            t0 = time.perf_counter()
            for i in range(a.gen):
                toks.append(tok)
                logits = forward([tok], kc, vc, a.prompt + i)
                tok = int(torch.argmax(logits))
            decode = time.perf_counter() - t0
        return prefill, decode, toks, bool(torch.isfinite(logits).all())

    r1, r2 = one_run(), one_run()
    import resource

    return dict(
        impl="torch",
        weights=a.torch_dtype,
        torch=torch.__version__,
        init_s=init_s,
        prefill_s=[r1[0], r2[0]],
        decode_s=[r1[1], r2[1]],
        peak_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        finite=r1[3] and r2[3],
        deterministic=r1[2] == r2[2],
    )


# ---- the driver ------------------------------------------------------------------
def find_openblas():
    for p in (
        "/usr/lib/x86_64-linux-gnu/libopenblas.so.0",
        "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0",
        "/usr/lib/x86_64-linux-gnu/libopenblas.so",
    ):
        if os.path.exists(p):
            return p
    return None


def run_impl(name, a, openblas):
    shape = ["--layers", str(a.layers), "--prompt", str(a.prompt), "--gen", str(a.gen)]
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    if name.startswith("emlx"):
        cmd = [a.demo, *shape, "--threads", str(a.threads), "--json"]
        cmd += ["--weights", "bf16" if name == "emlx-bf16" else "q4"]
    else:
        me = os.path.abspath(__file__)
        cmd = [sys.executable, me, "--worker", name.split("-")[0], *shape, "--threads", str(a.threads)]
        if name.startswith("torch"):
            cmd += ["--torch-dtype", name.split("-")[1]]
        if name.startswith("mlx"):
            cmd += ["--mlx-dtype", "bf16" if name == "mlx-q4bf16" else "f32"]
        if name.startswith("mlx") and openblas:
            env["LD_PRELOAD"] = openblas
            env["OPENBLAS_NUM_THREADS"] = str(a.threads)
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if res.returncode != 0:
        raise SystemExit(f"{name} failed ({res.returncode}): {' '.join(cmd)}\n{res.stderr[-3000:]}")
    out = json.loads(res.stdout.strip().splitlines()[-1])
    if not (out["finite"] and out["deterministic"]):
        raise SystemExit(f"{name}: its own checks failed: {out}")
    return out


def demo_threads(demo):
    res = subprocess.run([demo, "--layers", "1", "--prompt", "1", "--gen", "1", "--json"],
                         capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])["threads"]


def med(xs):
    xs = sorted(xs)
    return statistics.median(xs), xs[0], xs[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", choices=["mlx", "torch"], help=argparse.SUPPRESS)
    ap.add_argument("--torch-dtype", default="bf16", help=argparse.SUPPRESS)
    ap.add_argument("--mlx-dtype", default="f32", help=argparse.SUPPRESS)
    ap.add_argument("--demo", default="build/emlx_decode")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--gen", type=int, default=32)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--torch-f32", action="store_true", help="also torch with float32 weights")
    ap.add_argument("--mlx-bf16", action="store_true",
                    help="also MLX with bf16 activations, scales and biases (mlx-lm's dtype)")
    ap.add_argument("--no-openblas", action="store_true", help="MLX with its bundled BLAS")
    ap.add_argument("--only", default="", help="comma-separated implementations")
    a = ap.parse_args()

    if a.worker:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        if a.threads < 1:
            a.threads = os.cpu_count() or 1
        out = mlx_worker(a) if a.worker == "mlx" else torch_worker(a)
        print(json.dumps(out))
        return

    if a.threads < 1:
        a.threads = demo_threads(a.demo)
    openblas = None if a.no_openblas else find_openblas()
    impls = ["emlx-q4", "emlx-bf16", "mlx-q4", "torch-bf16"]
    impls += (["mlx-q4bf16"] if a.mlx_bf16 else []) + (["torch-f32"] if a.torch_f32 else [])
    if a.only:
        impls = [i for i in impls if i in a.only.split(",")]
    load0 = os.getloadavg()
    print(f"# decode_peers: {a.layers} layers, hidden {HIDDEN}, {NQ}/{NKV} heads of {HEAD}, "
          f"MLP {INTER}, vocab {VOCAB}; prompt {a.prompt}, gen {a.gen}; {a.threads} threads; "
          f"{a.rounds} rounds; MLX BLAS: {openblas or 'bundled reference BLAS'}; "
          f"load {load0[0]:.1f} {load0[1]:.1f} {load0[2]:.1f}", flush=True)
    rows = {i: [] for i in impls}
    info = {}
    for r in range(a.rounds):
        order = impls[r % len(impls):] + impls[: r % len(impls)]
        for name in order:
            out = run_impl(name, a, openblas)
            info[name] = out
            pre = a.prompt / out["prefill_s"][1]
            dec = a.gen / out["decode_s"][1]
            rows[name].append((pre, dec))
            print(f"round {r + 1} {name:10s} prefill {pre:8.1f} tok/s  decode {dec:7.2f} tok/s  "
                  f"(first run {a.prompt / out['prefill_s'][0]:.1f} / {a.gen / out['decode_s'][0]:.2f}) "
                  f"peak {out['peak_bytes'] / 1e9:.2f} GB", flush=True)
    load1 = os.getloadavg()
    print(f"\n# medians over {a.rounds} rounds (warm run of each process), min..max; "
          f"load at the end {load1[0]:.1f} {load1[1]:.1f} {load1[2]:.1f}")
    print(f"{'impl':10s} {'prefill tok/s':>28s} {'decode tok/s':>26s} {'ms/token':>9s}")
    m = {}
    for name in impls:
        p, d = med([x[0] for x in rows[name]]), med([x[1] for x in rows[name]])
        m[name] = (p[0], d[0])
        print(f"{name:10s} {p[0]:9.1f} ({p[1]:7.1f}..{p[2]:7.1f})  {d[0]:8.2f} ({d[1]:6.2f}..{d[2]:6.2f})"
              f" {1e3 / d[0]:9.1f}")
    pairs = [("emlx-q4", "mlx-q4"), ("emlx-q4", "mlx-q4bf16"), ("emlx-q4", "torch-bf16"), ("emlx-bf16", "torch-bf16"),
             ("emlx-q4", "torch-f32"), ("emlx-bf16", "torch-f32"), ("emlx-q4", "emlx-bf16")]
    print("\n# ratios ours / peer (medians; per-round ratio range in brackets)")
    for x, y in pairs:
        if x in m and y in m:
            rp = [u[0] / v[0] for u, v in zip(rows[x], rows[y])]
            rd = [u[1] / v[1] for u, v in zip(rows[x], rows[y])]
            print(f"{x:10s} / {y:10s}  prefill {m[x][0] / m[y][0]:5.2f}x [{min(rp):.2f}..{max(rp):.2f}]"
                  f"  decode {m[x][1] / m[y][1]:5.2f}x [{min(rd):.2f}..{max(rd):.2f}]")


if __name__ == "__main__":
    main()
