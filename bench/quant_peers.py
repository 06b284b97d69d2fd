"""Runs bench_quant (EMLX's fast quantized matmul kernels) and its peers on
the same shapes in one run, and prints the ratios (issue 15):

  - MLX CPU mx.quantized_matmul (goal: EMLX >= 10x faster), same formats,
    f32 x, f32 scales and biases as mx.quantize gives for f32 weights,
    rotating over 4 copies of W like bench_quant;
  - ggml's MUL_MAT with q4_0 / q8_0 weights and f32 activations (goal >= 1x),
    timed by ggml's own test-backend-ops perf mode through a --test-file
    that names our shapes (give --ggml PATH/TO/test-backend-ops; skipped
    with a printed reason when absent);
  - the streaming read bandwidth bench_quant measures (decode goal >= 85%).

Usage:
  /opt/peers/bin/python bench/quant_peers.py --bin build/emlx_bench_bench_quant \\
      [--ggml /path/to/test-backend-ops] [--reps 21] [--mlx-prefill-reps 1] [--no-prefill]
Times are medians (min .. max in brackets); on a busy machine use --reps high
and read the minima too.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

N, K = 14336, 4096


def parse_emlx(text):
    res = {}
    for line in text.splitlines():
        if not line.startswith("case="):
            continue
        kv = dict(p.split("=", 1) for p in line.split())
        res[kv["case"]] = {k: float(v) for k, v in kv.items()
                           if k != "case" and re.match(r"^[0-9.eE+-]+$", v)}
    return res


def time_mlx(reps, prefill_reps, do_prefill):
    try:
        import mlx.core as mx
        import numpy as np
    except ImportError as e:
        print(f"# MLX skipped: {e}")
        return {}
    mx.set_default_device(mx.cpu)
    rng = np.random.default_rng(0)
    out = {}
    fmts = [("affine4_g64", "affine", 4, 64), ("affine8_g64", "affine", 8, 64),
            ("mxfp4", "mxfp4", 4, 32)]
    xs = {1: mx.array(rng.uniform(-1, 1, (1, K)).astype(np.float32)),
          512: mx.array(rng.uniform(-1, 1, (512, K)).astype(np.float32))}
    for tag, mode, bits, gs in fmts:
        copies = []
        for _ in range(4):
            w = mx.array((rng.standard_normal((N, K)) * 0.02).astype(np.float32))
            q = mx.quantize(w, group_size=gs, bits=bits, mode=mode)
            mx.eval(*q)
            copies.append(q)
            del w
        for M in (1, 512):
            if M == 512 and not do_prefill:
                continue
            r = reps if M == 1 else prefill_reps
            ts = []
            for i in range(r + 1):
                q = copies[i % 4]
                b = q[2] if mode == "affine" else None
                t0 = time.perf_counter()
                y = mx.quantized_matmul(xs[M], q[0], q[1], b, transpose=True, group_size=gs,
                                        bits=bits, mode=mode)
                mx.eval(y)
                if i:
                    ts.append(time.perf_counter() - t0)
            ts.sort()
            out[f"qmm_{tag}_m{M}"] = (ts[len(ts) // 2] * 1e3, ts[0] * 1e3, ts[-1] * 1e3)
        del copies
    return out


def time_ggml(path, do_prefill, timeout):
    if not path or not os.path.exists(path):
        print(f"# ggml skipped: no test-backend-ops at {path!r} (give --ggml)")
        return {}
    lines = []
    for tname, tid, blk in (("q4_0", 2, 18), ("q8_0", 8, 34)):
        for M in ((1, 512) if do_prefill else (1,)):
            nb1 = K // 32 * blk
            lines.append(f"29 0 {N} {M} 1 1 0 2 {tid} {K} {N} 1 1 {blk} {nb1} {nb1 * N} {nb1 * N} "
                         f"0 {K} {M} 1 1 4 {4 * K} {4 * K * M} {4 * K * M} {tname}_m{M}")
    out = {}
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        tf = f.name
    for line in lines:  # one case per process, each under its own time limit
        name = line.split()[-1]
        with open(tf, "w") as f:
            f.write(line + "\n")
        try:
            r = subprocess.run([path, "perf", "-b", "CPU", "--test-file", tf], capture_output=True,
                               text=True, timeout=timeout)
            m = re.search(r"(\d+) runs -\s+([0-9.]+) us/run", r.stdout)
            if m:
                out[name] = float(m.group(2)) / 1e3
            else:
                print(f"# ggml {name}: no timing in its output")
        except subprocess.TimeoutExpired:
            print(f"# ggml {name}: over {timeout} s, skipped")
    os.unlink(tf)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/emlx_bench_bench_quant")
    ap.add_argument("--ggml", default=os.environ.get("GGML_TEST_BACKEND_OPS"))
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--mlx-prefill-reps", type=int, default=1)
    ap.add_argument("--no-prefill", action="store_true")
    ap.add_argument("--ggml-timeout", type=int, default=240)
    a = ap.parse_args()

    cmd = [a.bin, "--reps", str(a.reps)]
    if a.no_prefill:
        for c in ("qmm_affine4_g64_m1", "qmm_affine8_g64_m1", "qmm_mxfp4_m1",
                  "gather_8x2048_top2_t64", "separate_8x2048_top2_t64"):
            cmd += ["--case", c]
    t = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    print(t.rstrip())
    e = parse_emlx(t)
    mlx = time_mlx(a.reps, a.mlx_prefill_reps, not a.no_prefill)
    gg = time_ggml(a.ggml, not a.no_prefill, a.ggml_timeout)

    bw = e.get("read_bw", {}).get("gbps")
    print(f"\nread bandwidth (best 40 MB read): {bw} GB/s")
    print(f"{'case':28} {'emlx ms (min..max)':>26} {'MLX ms':>22} {'MLX/emlx':>9} "
          f"{'ggml ms':>9} {'ggml/emlx':>9} {'bw frac':>8}")
    ggmap = {"affine4_g64": "q4_0", "affine8_g64": "q8_0"}
    for name, v in e.items():
        if name == "read_bw":
            continue
        em = f"{v['median_ms']:.3f} ({v['min_ms']:.3f}..{v['max_ms']:.3f})"
        ml = mlx.get(name)
        mls = f"{ml[0]:.2f} ({ml[1]:.2f})" if ml else "-"
        mr = f"{ml[0] / v['median_ms']:.1f}x" if ml else "-"
        gk = None
        for tag, gt in ggmap.items():
            if tag in name:
                gk = f"{gt}_m{name.rsplit('_m', 1)[1]}"
        g = gg.get(gk) if gk else None
        gs = f"{g:.3f}" if g else "-"
        gr = f"{g / v['median_ms']:.2f}x" if g else "-"
        bf = f"{v['bw_frac']:.2f}" if "bw_frac" in v else "-"
        print(f"{name:28} {em:>26} {mls:>22} {mr:>9} {gs:>9} {gr:>9} {bf:>8}")
    print("(ratios use medians; MLX column: median (min))")


if __name__ == "__main__":
    sys.exit(main())
