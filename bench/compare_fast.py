#!/usr/bin/env python3
"""compare_fast.py — EMLX's fused kernels beside MLX's mx.fast and ggml, in one run.

    python3 bench/compare_fast.py --build-dir build [--ggml-dir DIR] [--reps N] [--rounds R]
                                  [--cases rope_trad_f32_1x32x512x128,...] [--no-mlx]

1. runs <build-dir>/emlx_bench_bench_fast: each kernel's median (p10, p90)
   and its ratio to the streaming bandwidth measured in the same program;
2. times the same shapes with MLX (mx.fast.rms_norm, mx.fast.rope, and
   silu(g) * u under mx.compile for swiglu: mx.fast has no swiglu), the
   median of --reps runs of call + mx.eval, in this process;
3. with --ggml-dir (a ggml checkout built in DIR/build), runs ggml's
   test-backend-ops in perf mode on the CPU backend: RMS_NORM and SWIGLU on
   exactly these shapes, through a test file written to a temporary
   directory (its op and enum numbers are read from DIR/include/ggml.h; f32
   only, as ggml's CPU RMS_NORM aborts on bf16), and
   ROPE from ggml's own perf list, whose f32 case ne=[128, 32, 512, 1] mode 0
   (interleaved pairs) holds the same elements as (1, 32, 512, 128).

Prints one line per case and impl, then the ratios peer / emlx (higher is
better for emlx). With --rounds R the three run in turn R times (on a shared
machine the load drifts between them) and the table gives, per case, the
median over rounds of each round's figure with its min..max, and the load
average at the start and the end. --cases limits every impl to the named
cases and --no-mlx leaves MLX out: with both, a round of one case takes
seconds, so ours and ggml's alternate closely (a busy machine's load moves
within the minutes a full round takes). MLX and ggml come from wherever they are installed; this
script installs and builds nothing.
"""
import argparse
import os
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import time

CASES = {
    # name: (kind, dtype, shape)
    "rms_norm_f32_4096x4096": ("rms", "f32", (4096, 4096)),
    "rms_norm_bf16_4096x4096": ("rms", "bf16", (4096, 4096)),
    "rope_f32_1x32x512x128": ("rope", "f32", (1, 32, 512, 128)),
    "rope_trad_f32_1x32x512x128": ("rope_trad", "f32", (1, 32, 512, 128)),
    "rope_bf16_1x32x512x128": ("rope", "bf16", (1, 32, 512, 128)),
    "swiglu_f32_4096x14336": ("swiglu", "f32", (4096, 14336)),
    "swiglu_bf16_4096x14336": ("swiglu", "bf16", (4096, 14336)),
}
# the cases ggml's perf mode times (f32 only)
GGML_CASES = ("rms_norm_f32_4096x4096", "rope_trad_f32_1x32x512x128", "swiglu_f32_4096x14336")


def parse_line(line):
    out = {}
    for tok in line.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            out[k] = v
    return out


def run_emlx(build_dir, reps, cases):
    exe = os.path.join(build_dir, "emlx_bench_bench_fast")
    args = [exe, "--reps", str(reps)]
    for name in cases:
        args += ["--case", name]
    res = subprocess.run(args, capture_output=True, text=True, check=True)
    rows = {}
    for line in res.stdout.splitlines():
        print(line)
        if line.startswith("case="):
            d = parse_line(line)
            rows[d["case"]] = d
    return rows


def run_mlx(reps, cases):
    try:
        import mlx.core as mx
        import mlx.nn as nn
    except ImportError:
        print("# mlx: not installed, skipped (pip install 'mlx[cpu]')")
        return {}
    dts = {"f32": mx.float32, "bf16": mx.bfloat16}
    swiglu = mx.compile(lambda g, u: nn.silu(g) * u)
    out = {}
    for name, (kind, dt, shape) in CASES.items():
        if name not in cases:
            continue
        mx.random.seed(1)
        x = mx.random.uniform(-1, 1, shape).astype(dts[dt])
        if kind == "rms":
            w = mx.random.uniform(0, 1, (shape[-1],)).astype(dts[dt])
            fn = lambda: mx.fast.rms_norm(x, w, 1e-5)
        elif kind.startswith("rope"):
            trad = kind == "rope_trad"
            fn = lambda: mx.fast.rope(x, 128, traditional=trad, base=10000.0, scale=1.0, offset=0)
        else:
            u = mx.random.uniform(-1, 1, shape).astype(dts[dt])
            fn = lambda: swiglu(x, u)
        mx.eval(x)
        for _ in range(3):
            mx.eval(fn())
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            mx.eval(fn())
            ts.append((time.perf_counter() - t0) * 1e3)
        ts.sort()
        out[name] = ts
        print("case=%s impl=mlx-%s reps=%d median_ms=%.4f p10_ms=%.4f p90_ms=%.4f" %
              (name, mx.__version__, reps, statistics.median(ts), ts[len(ts) // 10],
               ts[len(ts) - 1 - len(ts) // 10]))
        sys.stdout.flush()
    return out


def enum_index(header, enum_name, member):
    body = re.search(r"enum\s+%s\s*\{(.*?)\}" % enum_name, header, re.S).group(1)
    body = re.sub(r"//[^\n]*|/\*.*?\*/", "", body, flags=re.S)
    names = [re.match(r"\s*(\w+)", m).group(1) for m in body.split(",") if m.strip()]
    return names.index(member)


def ggml_line_us(text, pattern):
    """us/run of the first perf line whose case string matches pattern."""
    for line in text.splitlines():
        if re.search(pattern, line) and "us/run" in line:
            return float(re.search(r"([\d.]+) us/run", line).group(1))
    return None


def run_ggml(ggml_dir, cases):
    exe = os.path.join(ggml_dir, "build", "bin", "test-backend-ops")
    header = open(os.path.join(ggml_dir, "include", "ggml.h")).read()
    op_rms = enum_index(header, "ggml_op", "GGML_OP_RMS_NORM")
    op_glu = enum_index(header, "ggml_op", "GGML_OP_GLU")
    swiglu = enum_index(header, "ggml_glu_op", "GGML_GLU_OP_SWIGLU")
    # f32 only: ggml's CPU RMS_NORM aborts on bf16 (ggml-cpu/ops.cpp), killing the run
    types = {"f32": (0, 4)}  # GGML_TYPE_F32
    eps_bits = struct.unpack("<i", struct.pack("<f", 1e-5))[0]
    lines, names = [], []
    for dt, (t, es) in types.items():
        # RMS_NORM of [4096, 4096] (ggml's ne is innermost first)
        nb = "%d %d %d %d" % (es, es * 4096, es * 4096 * 4096, es * 4096 * 4096)
        lines.append("%d %d 4096 4096 1 1 1 %d 1 %d 4096 4096 1 1 %s rms_%s" %
                     (op_rms, t, eps_bits, t, nb, dt))
        # SWIGLU of two [14336, 4096] operands (split form)
        nb = "%d %d %d %d" % (es, es * 14336, es * 14336 * 4096, es * 14336 * 4096)
        src = "%d 14336 4096 1 1 %s" % (t, nb)
        lines.append("%d %d 14336 4096 1 1 2 %d 0 2 %s %s swiglu_%s" %
                     (op_glu, t, swiglu, src, src, dt))
        names += ["rms_" + dt, "swiglu_" + dt]
    wanted = [n for n in GGML_CASES if n in cases]
    out, text = {}, ""
    if any(n != "rope_trad_f32_1x32x512x128" for n in wanted):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "fast_ops.txt")
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
            res = subprocess.run([exe, "perf", "-b", "CPU", "--test-file", path],
                                 capture_output=True, text=True)
            text += res.stdout + res.stderr
        for name, case in (("rms_norm_f32_4096x4096", "rms_f32"), ("swiglu_f32_4096x14336", "swiglu_f32")):
            us = ggml_line_us(text, r"name=%s\b|%s" % (case, case))
            if us is not None and name in wanted:
                out[name] = us / 1e3
    if "rope_trad_f32_1x32x512x128" in wanted:
        res = subprocess.run([exe, "perf", "-b", "CPU", "-o", "ROPE", "-p",
                              r"type=f32,ne_a=\[128,32,512,1\],n_dims=128,mode=0,.*ff=0,v=0,inplace=0"],
                             capture_output=True, text=True)
        text += res.stdout + res.stderr
        us = ggml_line_us(res.stdout, r"ROPE\(type=f32,ne_a=\[128,32,512,1\]")
        if us is not None:
            out["rope_trad_f32_1x32x512x128"] = us / 1e3
    for name, ms in out.items():
        print("case=%s impl=ggml median_ms=%.4f (test-backend-ops perf)" % (name, ms))
    if len(out) < len(wanted):
        print("# ggml: some cases gave no perf line; its output:\n" + text[-2000:])
    return out


def spread(v):
    v = sorted(v)
    return statistics.median(v), v[0], v[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--ggml-dir", default=os.environ.get("GGML_DIR"))
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--rounds", type=int, default=1,
                    help="run emlx, MLX and ggml this many times in turn; the table gives the "
                         "median over rounds (min..max) of each round's median and ratio")
    ap.add_argument("--cases", default=",".join(CASES),
                    help="comma-separated case names (default: all)")
    ap.add_argument("--no-mlx", action="store_true", help="leave MLX out")
    a = ap.parse_args()
    cases = [c for c in a.cases.split(",") if c]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        ap.error("unknown case(s): %s (known: %s)" % (", ".join(unknown), ", ".join(CASES)))
    if not a.ggml_dir:
        print("# ggml: --ggml-dir (or GGML_DIR) not given, skipped")
    load0 = os.getloadavg()
    em, ml, gg, bw = {}, {}, {}, {}
    for r in range(a.rounds):
        print("# round %d of %d, load %.1f" % (r + 1, a.rounds, os.getloadavg()[0]))
        emlx = run_emlx(a.build_dir, a.reps, cases)
        mlx = {} if a.no_mlx else run_mlx(a.reps, cases)
        ggml = run_ggml(a.ggml_dir, cases) if a.ggml_dir else {}
        for name in CASES:
            if name not in emlx:
                continue
            e = float(emlx[name]["median_ms"])
            em.setdefault(name, []).append(e)
            if "bw_ratio" in emlx[name]:
                bw.setdefault(name, []).append(float(emlx[name]["bw_ratio"]))
            if name in mlx:
                ml.setdefault(name, []).append(statistics.median(mlx[name]) / e)
            if name in ggml:
                gg.setdefault(name, []).append(ggml[name] / e)
    load1 = os.getloadavg()
    print("\n# %d round(s) of %d reps; load average %.1f at the start, %.1f at the end" %
          (a.rounds, a.reps, load0[0], load1[0]))
    print("# columns: median over rounds (min..max); ratios peer / emlx, higher is better for emlx")
    print("%-28s %22s %22s %22s %18s" % ("case", "emlx ms", "mlx/emlx", "ggml/emlx", "bw_ratio"))
    f3 = lambda v: "%.3f (%.3f..%.3f)" % spread(v)
    f2 = lambda v: "%.2fx (%.2f..%.2f)" % spread(v) if v else "-"
    for name in CASES:
        if name not in em:
            continue
        b = "%.2f (%.2f..%.2f)" % spread(bw[name]) if name in bw else "-"
        print("%-28s %22s %22s %22s %18s" % (name, f3(em[name]), f2(ml.get(name)), f2(gg.get(name)), b))


if __name__ == "__main__":
    main()
