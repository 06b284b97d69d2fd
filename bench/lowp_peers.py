"""Runs bench_lowp (EMLX's f16 and bf16 products) next to ggml's MUL_MAT with
f16 / bf16 weights on the same shapes, interleaved, and prints the ratios
(issue 14: goal EMLX >= 1x ggml's bf16/f16 matmul, and >= 0.9x our own f32).

Each round runs, shape by shape: the EMLX case at every ISA level asked for
(EMLX_ISA=avx512, avx2, ...: EMLX's kernels only; ggml's ISA is fixed when it
is built, and the header line says what it was built with), then ggml's
MUL_MAT, timed by ggml's own test-backend-ops perf mode through a
--test-file that names our shapes (give --ggml PATH/TO/test-backend-ops;
skipped with a printed reason when absent). The figures are medians over
the rounds of each round's figure (EMLX: its median over --reps; ggml: its
mean over the runs it chose), min..max in brackets.

Shapes: ggml's MUL_MAT computes x @ W^T with W [N, K] (K contiguous), f32
x (converted to the weight's type inside the op: that is in its time) and
an f32 result; EMLX's cases are a @ b with both operands of the low type
and a result of that type, with the weight as [K, N] (x @ W) or [N, K]
(x @ W^T, suffix _wt). Same multiply-adds, same weight bytes.

Usage:
  /opt/peers/bin/python bench/lowp_peers.py --bin build/emlx_bench_bench_lowp \\
      --ggml /opt/ggml/build/bin/test-backend-ops [--isa avx512,avx2] [--rounds 3] \\
      [--reps 11] [--case lowp_bf16_2048]...
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile

GGML_TYPE = {"f16": 1, "bf16": 30}
# case -> (dtype, M, K, N); the f32 twins have no ggml peer here.
SHAPE_RE = re.compile(r"^lowp_(bf16|f16|f32)_(?:(2048)|m(\d+)_(4096))(_wt)?$")


def shape_of(case):
    m = SHAPE_RE.match(case)
    if not m:
        return None
    dt = m.group(1)
    if m.group(2):
        return dt, 2048, 2048, 2048
    return dt, int(m.group(3)), 4096, 4096


def ggml_line(dt, M, K, N):
    tid = GGML_TYPE[dt]
    return (f"29 0 {N} {M} 1 1 0 2 {tid} {K} {N} 1 1 2 {2 * K} {2 * K * N} {2 * K * N} "
            f"0 {K} {M} 1 1 4 {4 * K} {4 * K * M} {4 * K * M} {dt}_m{M}_k{K}_n{N}")


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_ggml(path, dt, M, K, N, timeout):
    """(wall ms per run, CPU ms per run over all its threads), or None."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(ggml_line(dt, M, K, N) + "\n")
        tf = f.name
    try:
        c0 = child_cpu()
        r = subprocess.run([path, "perf", "-b", "CPU", "--test-file", tf], capture_output=True,
                           text=True, timeout=timeout)
        cpu = child_cpu() - c0
        m = re.search(r"(\d+) runs -\s+([0-9.]+) us/run", r.stdout)
        if m:
            return float(m.group(2)) / 1e3, cpu * 1e3 / (int(m.group(1)) + 1)
        print(f"# ggml {dt} M={M}: no timing in its output")
    except subprocess.TimeoutExpired:
        print(f"# ggml {dt} M={M}: over {timeout} s, skipped")
    finally:
        os.unlink(tf)
    return None


def run_emlx(binary, case, isa, reps, threads, warmup):
    """(median wall ms, CPU ms per repetition over all threads: the run's CPU
    time less that of a one-repetition run, over the repetitions and warm-ups
    beyond one), checksum, simd."""
    env = dict(os.environ)
    if isa != "default":
        env["EMLX_ISA"] = isa
    cmd = [binary, "--case", case, "--reps", str(reps), "--warmup", str(warmup)]
    if threads:
        cmd += ["--threads", str(threads)]
    c0 = child_cpu()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout
    c1 = child_cpu()
    # the same program with one repetition, no warm-up: its set-up, to subtract
    base = [binary, "--case", case, "--reps", "1", "--warmup", "0"] + cmd[8:]
    subprocess.run(base, capture_output=True, text=True, check=True, env=env)
    cpu = max(0.0, (c1 - c0) - (child_cpu() - c1)) * 1e3 / max(1, reps + warmup - 1)
    for line in out.splitlines():
        if line.startswith("# emlx"):
            simd = re.search(r"simd=(\S+)", line)
        if line.startswith("case="):
            kv = dict(p.split("=", 1) for p in line.split())
            return (float(kv["median_ms"]), cpu), kv.get("checksum"), simd.group(1) if simd else "?"
    raise RuntimeError(f"no case line from {cmd}: {out}")


def ggml_build_flags(path):
    """What the ggml build was compiled for (its CMakeCache, when found)."""
    cache = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(path))), "CMakeCache.txt")
    try:
        text = open(cache).read()
    except OSError:
        return "unknown (no CMakeCache.txt next to it)"
    keys = ["GGML_NATIVE", "GGML_AVX2", "GGML_AVX512", "GGML_AVX512_BF16", "GGML_F16C", "GGML_FMA",
            "GGML_LLAMAFILE", "GGML_OPENMP"]
    got = []
    for k in keys:
        m = re.search(rf"^{k}:BOOL=(\S+)", text, re.M)
        if m:
            got.append(f"{k}={m.group(1)}")
    return " ".join(got)


def fmt(v):
    if not v:
        return "-"
    return f"{statistics.median(v):.3f} ({min(v):.3f}..{max(v):.3f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/emlx_bench_bench_lowp")
    ap.add_argument("--ggml", default=os.environ.get("GGML_TEST_BACKEND_OPS"))
    ap.add_argument("--isa", default="default",
                    help="comma-separated EMLX_ISA levels to run EMLX at (default: the machine's)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--case", action="append")
    ap.add_argument("--no-ggml", action="store_true")
    ap.add_argument("--ggml-timeout", type=int, default=600)
    a = ap.parse_args()

    cases = a.case or [l.split()[0] for l in subprocess.run(
        [a.bin, "--list"], capture_output=True, text=True, check=True).stdout.splitlines()
        if l.startswith("lowp_")]
    isas = a.isa.split(",")
    have_ggml = not a.no_ggml and a.ggml and os.path.exists(a.ggml)
    if not have_ggml:
        print(f"# ggml skipped: {'--no-ggml' if a.no_ggml else 'no test-backend-ops at %r (give --ggml)' % a.ggml}")
    else:
        print(f"# ggml: {a.ggml}; build: {ggml_build_flags(a.ggml)}")
    try:
        print(f"# load average at start: {os.getloadavg()}")
    except OSError:
        pass

    em = {}    # (case, isa) -> [ms]
    simd = {}  # isa -> what the program reported
    gg = {}    # (dt, M, K, N) -> [ms]
    emc, ggc = {}, {}  # the same keys -> [CPU ms per repetition / run]
    for rnd in range(a.rounds):
        done_ggml = set()
        for case in cases:
            shp = shape_of(case)
            for isa in isas:
                ms, _, s = run_emlx(a.bin, case, isa, a.reps, a.threads, a.warmup)
                em.setdefault((case, isa), []).append(ms[0])
                emc.setdefault((case, isa), []).append(ms[1])
                simd[isa] = s
            if have_ggml and shp and shp[0] in GGML_TYPE and shp not in done_ggml:
                done_ggml.add(shp)
                t = run_ggml(a.ggml, *shp, a.ggml_timeout)
                if t is not None:
                    gg.setdefault(shp, []).append(t[0])
                    ggc.setdefault(shp, []).append(t[1])
        print(f"# round {rnd + 1}/{a.rounds} done; load {os.getloadavg()}", flush=True)

    print(f"# load average at end: {os.getloadavg()}")
    print("# EMLX levels: " + ", ".join(f"{i}: simd={simd.get(i)}" for i in isas))
    hdr = f"{'case':24} {'isa':8} {'emlx ms (min..max)':>28} {'ggml ms (min..max)':>28} " \
          f"{'ggml/emlx':>9} {'f32/this':>9} {'cpu ms emlx':>11} {'cpu ggml':>9} {'cpu g/e':>8}"
    print(hdr)
    for case in cases:
        shp = shape_of(case)
        for isa in isas:
            v = em[(case, isa)]
            g = gg.get(shp) if shp else None
            r = f"{statistics.median(g) / statistics.median(v):.2f}x" if g else "-"
            twin = re.sub(r"_(bf16|f16)_", "_f32_", case)
            tw = em.get((twin, isa)) if twin != case else None
            tr = f"{statistics.median(tw) / statistics.median(v):.2f}x" if tw else "-"
            ec = statistics.median(emc[(case, isa)])
            gc = ggc.get(shp) if shp else None
            gcs = f"{statistics.median(gc):.1f}" if gc else "-"
            cr = f"{statistics.median(gc) / ec:.2f}x" if gc else "-"
            print(f"{case:24} {isa:8} {fmt(v):>28} {fmt(g):>28} {r:>9} {tr:>9} {ec:>11.1f} "
                  f"{gcs:>9} {cr:>8}")
            print(f"ratio case={case} isa={isa} emlx_ms={statistics.median(v):.4f} "
                  f"ggml_ms={statistics.median(g) if g else float('nan'):.4f} ggml_over_emlx={r} "
                  f"f32_over_this={tr} rounds={len(v)}")
    print("(ratios of medians; ggml/emlx > 1: EMLX is faster; f32/this: our f32 twin's time "
          "over this case's; cpu: CPU time per repetition summed over threads (EMLX: less a "
          "one-repetition run's; ggml: its whole process over its runs), a second view that "
          "holds up better under load)")


if __name__ == "__main__":
    sys.exit(main())
