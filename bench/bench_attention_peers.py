#!/usr/bin/env python3
"""bench_attention_peers.py — the attention benchmark side by side, one run.

Runs emlx_bench_bench_attention (the stream figure and the EMLX cases), then
the same shapes in torch (F.scaled_dot_product_attention, enable_gqa), MLX
(mx.fast.scaled_dot_product_attention) and, for the decode shapes, ggml's
FLASH_ATTN_EXT through test-backend-ops perf with a generated --test-file;
prints medians with min..max and the ratios the issue asks for:

  decode  q {1,32,1,128}, K/V {1,8,4096,128}, f32 and bf16:
          EMLX K/V bytes/s vs the stream bandwidth (goal >= 80%), vs ggml (>= 1x)
  prefill causal, 512 tokens, 32/8 heads, D 128:  vs torch (>= 1.5x), vs MLX (>= 3x)

    python3 bench/bench_attention_peers.py --bench build/emlx_bench_bench_attention \
        [--ggml /path/to/test-backend-ops] [--reps 21] [--rounds R] [--decode-only | --prefill-only] [--no-mlx]

--decode-only leaves out the prefill cases (MLX's prefill takes most of a
round's minutes); --prefill-only leaves out the decode cases, and --no-mlx
leaves out MLX, so that EMLX's prefill and torch's alternate within seconds.

With --rounds R, EMLX and the peers run in turn R times (the load of a
shared machine drifts between them); each figure is then the median over
rounds of that round's figure, with its min..max, and the load average at
the start and the end is printed. Cold decode: pct_cold_stream pairs each
rep with a cold read of as many bytes (see bench_attention.c).

torch runs with OMP_WAIT_POLICY=PASSIVE and as many threads as EMLX. Peers
missing from the Python environment are reported as skipped.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

DEC_Q, DEC_KV = (1, 32, 1, 128), (1, 8, 4096, 128)
PRE_Q, PRE_KV = (1, 32, 512, 128), (1, 8, 512, 128)
SCALE = 1 / 128 ** 0.5


def stats(times):
    times = sorted(times)
    return statistics.median(times), times[0], times[-1]


def timeit(fn, reps, warmup=3):
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e3)
    return stats(out)


DECODE_CASES = ("stream", "sdpa_decode_f32", "sdpa_decode_bf16", "kv_decode_bf16",
                "sdpa_decode_cold_f32", "sdpa_decode_cold_bf16", "sdpa_decode_rot_f32",
                "sdpa_decode_rot_bf16")


PREFILL_CASES = ("sdpa_prefill_f32", "sdpa_prefill_bf16")


def run_emlx(path, reps, only=None):
    cmd = [path, "--reps", str(reps)]
    for c in {"decode": DECODE_CASES, "prefill": PREFILL_CASES}.get(only, ()):
        cmd += ["--case", c]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    rows = {}
    for line in res.stdout.splitlines():
        if line.startswith("#") or " ratio " in line:
            continue
        kv = dict(x.split("=", 1) for x in line.split() if "=" in x)
        rows[kv["case"]] = kv
    threads = int(re.search(r"threads=(\d+)", res.stdout).group(1))
    return rows, threads


def shapes(only):
    """(case, q shape, K/V shape, causal) of the timed peer cases: all, or
    only those of one kind ("decode", "prefill")"""
    cases = (("decode", DEC_Q, DEC_KV, False), ("prefill", PRE_Q, PRE_KV, True))
    return tuple(c for c in cases if only in (None, c[0]))


def run_torch(reps, threads, only=None):
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        return {"skipped": str(e)}
    torch.set_num_threads(threads)
    out = {}
    g = torch.Generator().manual_seed(0)
    for dt_name, dt in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        for case, qs, kvs, causal in shapes(only):
            q = torch.randn(qs, generator=g).to(dt)
            k = torch.randn(kvs, generator=g).to(dt)
            v = torch.randn(kvs, generator=g).to(dt)
            with torch.no_grad():
                f = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=SCALE, enable_gqa=True)
                out[f"sdpa_{case}_{dt_name}"] = timeit(f, reps)
    out["version"] = torch.__version__
    return out


def run_mlx(reps, only=None):
    try:
        import mlx.core as mx
    except ImportError as e:
        return {"skipped": str(e)}
    out = {}
    for dt_name, dt in (("f32", mx.float32), ("bf16", mx.bfloat16)):
        for case, qs, kvs, causal in shapes(only):
            q = mx.random.normal(qs).astype(dt)
            k = mx.random.normal(kvs).astype(dt)
            v = mx.random.normal(kvs).astype(dt)
            mx.eval(q, k, v)
            kw = {"mask": "causal"} if causal else {}
            f = lambda: mx.eval(mx.fast.scaled_dot_product_attention(q, k, v, scale=SCALE, **kw))
            out[f"sdpa_{case}_{dt_name}"] = timeit(f, reps)
    out["version"] = mx.__version__
    return out


# ggml's generic-op test file: op type ne[4] nparams params... nsrc {type ne[4] nb[4]}... name
GGML_OP_FLASH_ATTN_EXT = 74  # index in enum ggml_op of the ggml tree used (checked below)
GGML_TYPES = {"f32": (0, 4), "f16": (1, 2), "bf16": (30, 2)}


def ggml_op_index(ggml_bin):
    hdr = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(ggml_bin))), "include", "ggml.h")
    try:
        s = open(hdr).read()
    except OSError:
        return GGML_OP_FLASH_ATTN_EXT
    body = re.search(r"enum ggml_op \{(.*?)\};", s, re.S).group(1)
    names = [x.strip().split("=")[0].strip() for x in re.sub(r"//.*", "", body).split(",") if x.strip()]
    return names.index("GGML_OP_FLASH_ATTN_EXT")


def run_ggml(ggml_bin, reps):
    if not ggml_bin or not os.path.exists(ggml_bin):
        return {"skipped": "test-backend-ops not found (--ggml)"}
    import struct

    op = ggml_op_index(ggml_bin)
    scale_bits = struct.unpack("<i", struct.pack("<f", SCALE))[0]
    out = {}
    for dt_name, kv_type in (("f32", "f32"), ("bf16", "bf16"), ("f16", "f16")):
        t, es = GGML_TYPES[kv_type]
        D, Tkv, Nkv, Nq = 128, 4096, 8, 32
        q = f"0 {D} 1 {Nq} 1 4 {D*4} {D*4} {D*Nq*4}"
        kv = f"{t} {D} {Tkv} {Nkv} 1 {es} {D*es} {D*Tkv*es} {D*Tkv*Nkv*es}"
        line = f"{op} 0 {D} {Nq} 1 1 4 {scale_bits} 0 0 0 3 {q} {kv} {kv} -\n"
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(line)
            path = f.name
        times = []
        for _ in range(max(3, reps // 4)):
            res = subprocess.run([ggml_bin, "perf", "-b", "CPU", "--test-file", path], capture_output=True, text=True)
            m = re.search(r"([\d.]+) us/run", res.stdout)
            if not m:
                out[f"sdpa_decode_{dt_name}"] = None
                out["error_" + dt_name] = (res.stdout + res.stderr)[-300:]
                break
            times.append(float(m.group(1)) / 1e3)
        os.unlink(path)
        if times:
            out[f"sdpa_decode_{dt_name}"] = stats(times)
    return out


def fmt(t):
    return "%.3f ms (%.3f..%.3f)" % t if t else "-"


def spread(v):
    v = sorted(v)
    return statistics.median(v), v[0], v[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default="build/emlx_bench_bench_attention")
    ap.add_argument("--ggml", default=os.environ.get("GGML_TEST_BACKEND_OPS"))
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--rounds", type=int, default=1,
                    help="run emlx and the peers this many times in turn; lines give the median "
                         "over rounds (min..max) of each round's figure")
    ap.add_argument("--decode-only", action="store_true",
                    help="only the decode cases (EMLX's hot, cold, rotating and KV-cache ones, "
                         "the peers' decode shapes): rounds of seconds, not minutes")
    ap.add_argument("--prefill-only", action="store_true",
                    help="only the prefill cases, EMLX's and the peers'")
    ap.add_argument("--no-mlx", action="store_true",
                    help="leave MLX out (its prefill takes most of a round), so EMLX's runs and "
                         "torch's alternate within seconds")
    a = ap.parse_args()
    if a.decode_only and a.prefill_only:
        ap.error("--decode-only and --prefill-only exclude each other")
    only = "decode" if a.decode_only else "prefill" if a.prefill_only else None
    load0 = os.getloadavg()
    R = {}  # (case, what) -> per-round values

    def add(case, what, v):
        R.setdefault((case, what), []).append(v)

    threads, skipped = None, {}
    for rnd in range(a.rounds):
        print(f"# round {rnd + 1} of {a.rounds}, load {os.getloadavg()[0]:.1f}", flush=True)
        rows, threads = run_emlx(a.bench, a.reps, only)
        stream = float(rows["stream"]["gb_s"]) if "stream" in rows else None
        if stream:
            add("stream", "gb_s", stream)
        peers = (("torch", run_torch(a.reps, threads, only)),
                 ("mlx", {"skipped": "--no-mlx"} if a.no_mlx else run_mlx(a.reps, only)),
                 ("ggml", run_ggml(a.ggml, a.reps) if only != "prefill" else {}))
        for name, r in peers:
            if "skipped" in r:
                skipped[name] = r["skipped"]
        for case in ("sdpa_decode_f32", "sdpa_decode_bf16", "sdpa_prefill_f32", "sdpa_prefill_bf16"):
            e = rows.get(case)
            if not e:
                continue
            med = float(e["median_ms"])
            add(case, "emlx_ms", med)
            if "decode" in case and stream:
                add(case, "pct_stream", 100 * float(e["gb_s"]) / stream)
            for name, r in peers:
                t = r.get(case)
                if t:
                    add(case, name + "_ms", t[0])
                    add(case, name + "/emlx", t[0] / med)
        for case in ("sdpa_decode_cold_f32", "sdpa_decode_cold_bf16"):
            e = rows.get(case)
            if e:
                add(case, "emlx_ms", float(e["median_ms"]))
                add(case, "emlx_min_ms", float(e["min_ms"]))
                for k in ("pct_stream", "pct_cold_stream", "pct_cold_best"):
                    if k in e:
                        add(case, k, float(e[k]))
        for case in ("sdpa_decode_rot_f32", "sdpa_decode_rot_bf16"):
            e = rows.get(case)
            if e:
                add(case, "emlx_ms", float(e["median_ms"]))
                for k in ("pct_stream", "pct_rot_stream", "pct_rot_best"):
                    if k in e:
                        add(case, k, float(e[k]))
        if "kv_decode_bf16" in rows:
            add("kv_decode_bf16", "emlx_ms", float(rows["kv_decode_bf16"]["median_ms"]))
            add("kv_decode_bf16", "pct_stream", float(rows["kv_decode_bf16"]["pct_stream"]))
        g16 = dict(peers)["ggml"].get("sdpa_decode_f16")
        if g16:
            add("sdpa_decode_f16", "ggml_ms", g16[0])
        for k, v in dict(peers)["ggml"].items():
            if k.startswith("error_"):
                print(f"# ggml {k[6:]}: {v}")
    load1 = os.getloadavg()
    for name, why in skipped.items():
        print(f"# {name}: skipped ({why})")
    print(f"\n# threads={threads}, {a.rounds} round(s) of {a.reps} reps; load average "
          f"{load0[0]:.1f} at the start, {load1[0]:.1f} at the end")
    print("# each figure: median over rounds (min..max) of the round's median; "
          "peer/emlx > 1: emlx faster")
    last = None
    for (case, what), v in R.items():
        if case != last:
            print(f"{case}:")
            last = case
        m, lo, hi = spread(v)
        unit = "x" if "/" in what else ""
        print(f"    {what:16s} {m:10.3f}{unit} ({lo:.3f}..{hi:.3f})")


if __name__ == "__main__":
    sys.exit(main())
