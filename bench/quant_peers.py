"""Runs bench_quant (EMLX's fast quantized matmul kernels) and its peers on
the same shapes in one run, and prints the ratios (issue 15):

  - MLX CPU mx.quantized_matmul (goal: EMLX >= 10x faster), same formats,
    f32 x, f32 scales and biases as mx.quantize gives for f32 weights,
    rotating over as many copies of W as bench_quant (--copies);
  - ggml's MUL_MAT with q4_0 / q8_0 weights and f32 activations (goal >= 1x),
    timed by ggml's own test-backend-ops perf mode through a --test-file
    that names exactly one of our shapes per process (give --ggml
    PATH/TO/test-backend-ops; skipped with a printed reason when absent).
    Its perf mode runs a warm-up and then repeats for at least 1 s, so an
    M = 512 case costs its set-up plus about two products; each process
    runs under --ggml-timeout and --ggml-cases picks the cases;
  - the streaming read bandwidth bench_quant measures (decode goal >= 85%).

Usage:
  /opt/peers/bin/python bench/quant_peers.py --bin build/emlx_bench_bench_quant \\
      [--ggml /path/to/test-backend-ops] [--reps 21] [--mlx-prefill-reps 1] [--no-prefill]
      [--prefill-only] [--rounds R] [--ggml-cases q4_0_m512,q8_0_m512] [--no-mlx]
      [--cases qmm_affine4_g64_m1,qmm_affine8_g64_m1] [--ggml-rows-x 4] [--copies 1]
  --cases: only these EMLX cases (short rounds for interleaving with ggml);
  --prefill-only: only the M = 512 cases (EMLX's f32 and bf16 x, ggml, MLX);
  --ggml-rows-x R: ggml's W with R times the rows, its time per 14336 (its
  perf mode reuses one W, which a large L3 partly holds; R = 4 streams as
  much W as bench_quant's 4 copies);
  --copies C: the copies of W bench_quant's dense cases and MLX take in
  turn (default 4; 1: one W reused, as ggml's perf mode does, so with
  --ggml-rows-x 1 every side finds the same share of W in the L3);
  --rounds R: R rounds, each running EMLX's cases and then ggml's, so both
  see the same load; a case's figure is then the median over the rounds of
  its per-round median (min .. max over rounds).
Times are medians (min .. max in brackets); on a busy machine use --reps high
and read the minima too. The load average is printed before and after.
"""
import argparse
import os
import re
import statistics
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


def time_mlx(reps, prefill_reps, do_prefill, ncopies=4):
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
        for _ in range(ncopies):
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
                q = copies[i % ncopies]
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


GGML_TYPES = {"q4_0": (2, 18), "q8_0": (8, 34)}  # ggml type id, bytes per block of 32


def ggml_line(name, rows_x=1):
    """One MUL_MAT line of test-export-graph-ops' format: W (rows_x * N, K)
    of the type, x (M, K) f32, out (M, rows_x * N) f32; name is TYPE_mM."""
    tname, m = name.rsplit("_m", 1)
    tid, blk = GGML_TYPES[tname]
    M, nb1, n = int(m), K // 32 * blk, N * rows_x
    return (f"29 0 {n} {M} 1 1 0 2 {tid} {K} {n} 1 1 {blk} {nb1} {nb1 * n} {nb1 * n} "
            f"0 {K} {M} 1 1 4 {4 * K} {4 * K * M} {4 * K * M} {name}")


def time_ggml(path, names, timeout, rows_x=1):
    """ms per product of each named case, one test-backend-ops process per
    case (each under its own time limit); a case over the limit is left
    out with a printed line. rows_x > 1: W has rows_x times N rows and the
    time is per N of them (ggml's perf mode repeats one product over the
    same buffers, so a W near the L3's size is partly read from it; rows_x
    copies' worth streams from memory, as bench_quant's 4 copies do)."""
    if not path or not os.path.exists(path):
        print(f"# ggml skipped: no test-backend-ops at {path!r} (give --ggml)")
        return {}
    out = {}
    fd, tf = tempfile.mkstemp(suffix=".txt")
    os.close(fd)
    for name in names:
        with open(tf, "w") as f:
            f.write(ggml_line(name, rows_x) + "\n")
        try:
            r = subprocess.run([path, "perf", "-b", "CPU", "--test-file", tf], capture_output=True,
                               text=True, timeout=timeout)
            m = re.search(r"(\d+) runs -\s+([0-9.]+) us/run", r.stdout)
            if m:
                out[name] = float(m.group(2)) / 1e3 / rows_x
            else:
                print(f"# ggml {name}: no timing in its output")
        except subprocess.TimeoutExpired:
            print(f"# ggml {name}: over {timeout} s, skipped")
    os.unlink(tf)
    return out


def load():
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def spread(vals):
    """(median, min, max) of a list."""
    return statistics.median(vals), min(vals), max(vals)


PREFILL = ("qmm_affine4_g64_m512", "qmm_affine8_g64_m512", "qmm_mxfp4_m512",
           "qmm_affine4_g64_m512_bf16", "qmm_affine8_g64_m512_bf16", "qmm_mxfp4_m512_bf16")
DECODE = ("qmm_affine4_g64_m1", "qmm_affine8_g64_m1", "qmm_mxfp4_m1", "qmm_affine8_g64_f16s_m1",
          "qmm_affine4_g64_f16s_m1",
          "qmm_affine4_g64_m8", "qmm_affine8_g64_m8", "qmm_mxfp4_m8",
          "gather_8x2048_top2_t64", "separate_8x2048_top2_t64", "dot_ceiling")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/emlx_bench_bench_quant")
    ap.add_argument("--ggml", default=os.environ.get("GGML_TEST_BACKEND_OPS"))
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--mlx-prefill-reps", type=int, default=1)
    ap.add_argument("--no-prefill", action="store_true")
    ap.add_argument("--prefill-only", action="store_true")
    ap.add_argument("--no-mlx", action="store_true")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--ggml-cases", default=None,
                    help="comma-separated TYPE_mM names (q4_0_m1, q4_0_m512, q8_0_m1, q8_0_m512)")
    ap.add_argument("--ggml-timeout", type=int, default=240)
    ap.add_argument("--ggml-rows-x", type=int, default=1,
                    help="ggml's W with this many times N rows, its time per N rows (4: as much "
                         "W as bench_quant's 4 copies, so it streams from memory as ours does)")
    ap.add_argument("--copies", type=int, default=4, choices=(1, 2, 3, 4),
                    help="copies of W that bench_quant's dense cases and MLX take in turn (1: "
                         "one W reused, as ggml's perf mode does with --ggml-rows-x 1)")
    ap.add_argument("--cases", default=None,
                    help="comma-separated EMLX cases (bench_quant names), instead of the sets above")
    a = ap.parse_args()

    if a.ggml_cases:
        gnames = [c for c in a.ggml_cases.split(",") if c]
        for c in gnames:
            if c.rsplit("_m", 1)[0] not in GGML_TYPES:
                ap.error(f"--ggml-cases: unknown type in {c!r}")
    else:
        ms = (512,) if a.prefill_only else (1,) if a.no_prefill else (1, 512)
        gnames = [f"{t}_m{m}" for t in GGML_TYPES for m in ms]

    cmd = [a.bin, "--reps", str(a.reps), "--copies", str(a.copies)]
    if a.cases:
        for c in a.cases.split(","):
            cmd += ["--case", c]
    elif a.no_prefill:
        for c in DECODE:
            cmd += ["--case", c]
    elif a.prefill_only:
        for c in PREFILL:
            cmd += ["--case", c]
    print(f"# {load()} (start)")
    rounds_e, rounds_g = [], []
    for r in range(a.rounds):
        t = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        print(t.rstrip())
        rounds_e.append(parse_emlx(t))
        rounds_g.append(time_ggml(a.ggml, gnames, a.ggml_timeout, a.ggml_rows_x))
        print(f"# round {r + 1}: ggml " +
              " ".join(f"{k}={v:.2f}ms" for k, v in rounds_g[-1].items()) + f"; {load()}")
    e = {}
    for name in rounds_e[0]:
        vs = [re_[name] for re_ in rounds_e if name in re_]
        e[name] = dict(vs[0])
        if len(vs) > 1 and "median_ms" in vs[0]:
            med, lo, hi = spread([v["median_ms"] for v in vs])
            e[name].update(median_ms=med, min_ms=lo, max_ms=hi)
            if "bw_frac" in vs[0]:
                e[name]["bw_frac"] = statistics.median(v["bw_frac"] for v in vs)
    gg = {}
    for name in gnames:
        vs = [rg[name] for rg in rounds_g if name in rg]
        if vs:
            gg[name] = spread(vs)
    mlx = {} if a.no_mlx else time_mlx(a.reps, a.mlx_prefill_reps, not a.no_prefill, a.copies)
    print(f"# {load()} (end)")

    bw = e.get("read_bw", {}).get("gbps")
    print(f"\nread bandwidth (best 40 MB read): {bw} GB/s")
    dc = e.get("dot_ceiling")
    if dc:
        print(f"integer decode ceiling (vpdpbusd alone, {dc['threads']:.0f} threads, "
              f"{dc['dots_per_ns']:.2f} a ns): M = 1 {dc['m1_gbps']:.0f} GB/s, "
              f"M = 8 {dc['m8_gbps']:.1f} GB/s" +
              (f" = {dc['m8_frac']:.2f} of the read bandwidth" if "m8_frac" in dc else ""))
    print(f"(EMLX and MLX: {a.copies} cop{'y' if a.copies == 1 else 'ies'} of W in turn)")
    if a.ggml_rows_x > 1:
        print(f"(ggml: W of {a.ggml_rows_x} x {N} rows, its time per {N})")
    print(f"{'case':28} {'emlx ms (min..max)':>26} {'MLX ms':>22} {'MLX/emlx':>9} "
          f"{'ggml ms (min..max)':>24} {'ggml/emlx':>9} {'bw frac':>8}")
    ggmap = {"affine4_g64": "q4_0", "affine8_g64": "q8_0"}
    for name, v in e.items():
        if name == "read_bw" or "median_ms" not in v:
            continue
        em = f"{v['median_ms']:.3f} ({v['min_ms']:.3f}..{v['max_ms']:.3f})"
        base = name[:-5] if name.endswith("_bf16") else name
        ml = mlx.get(base)
        mls = f"{ml[0]:.2f} ({ml[1]:.2f})" if ml else "-"
        mr = f"{ml[0] / v['median_ms']:.1f}x" if ml else "-"
        gk = None
        for tag, gt in ggmap.items():
            if tag in base:
                gk = f"{gt}_m{base.rsplit('_m', 1)[1]}"
        g = gg.get(gk) if gk else None
        gs = f"{g[0]:.2f} ({g[1]:.2f}..{g[2]:.2f})" if g else "-"
        gr = f"{g[0] / v['median_ms']:.2f}x" if g else "-"
        bf = f"{v['bw_frac']:.2f}" if "bw_frac" in v else "-"
        print(f"{name:28} {em:>26} {mls:>22} {mr:>9} {gs:>24} {gr:>9} {bf:>8}")
    print("(ratios use medians; MLX column: median (min); _bf16: x in bfloat16, against the "
          "peers' f32 x)")


if __name__ == "__main__":
    sys.exit(main())
