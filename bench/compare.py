#!/usr/bin/env python3
"""bench/compare.py — runs EMLX's benchmark programs and numpy side by side.

For each case, in one run: the EMLX program (build/emlx_bench_<area>) times
the case and prints its line; then this script rebuilds the same inputs in
numpy (same generator, sizes and seeds as bench/bench_harness.h), times every
numpy variant of the case with the same warm-up and repetitions, and checks
that the two results' checksums agree. It ends with a table and one
machine-readable `ratio` line per case.

    python3 bench/compare.py [--bin build/emlx_bench_bench_core] [--case NAME]...

To add a case: a row in the area's C table (bench/<area>.c) and an entry in
CASES below with the same name, inputs and seeds. See bench/README.md.
"""

import argparse
import gc
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

# EMLX_ISA=avx2 (or scalar) stands for a machine without AVX-512 (or AVX2):
# numpy's and torch's peers are held to the same level (their dispatched
# kernels above it are turned off before they load), so both sides run
# what such a machine would. Variables already set are left alone.
_NPY_ABOVE = {"avx2": "X86_V4 AVX512_ICL AVX512_SPR AVX512F AVX512_SKX AVX512_CLX AVX512_CNL",
              "scalar": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR AVX2 FMA3 AVX512F AVX512_SKX "
                        "AVX512_CLX AVX512_CNL"}
if os.environ.get("EMLX_ISA") in _NPY_ABOVE and "NPY_DISABLE_CPU_FEATURES" not in os.environ:
    os.environ["NPY_DISABLE_CPU_FEATURES"] = _NPY_ABOVE[os.environ["EMLX_ISA"]]
# torch likewise: its ATen kernels and oneDNN's are capped before it loads.
_TORCH_CAP = {"avx2": {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
              "scalar": {"ATEN_CPU_CAPABILITY": "default", "ONEDNN_MAX_CPU_ISA": "SSE41"}}
for _k, _v in _TORCH_CAP.get(os.environ.get("EMLX_ISA", ""), {}).items():
    os.environ.setdefault(_k, _v)

try:
    import numpy as np
except ImportError:
    sys.stderr.write(
        "compare.py: numpy is not installed; the comparison needs it.\n"
        "  install it with `scripts/deps.sh --python` (what `make bench` runs)\n"
        "  or `python3 -m pip install numpy`.\n")
    sys.exit(2)

DEFAULT_REPS = 21    # as BENCH_DEFAULT_REPS in bench_harness.h
DEFAULT_WARMUP = 3   # as BENCH_DEFAULT_WARMUP
CHECKSUM_SAMPLES = 64
M16 = 16 << 20
M64 = 64 << 20


# ---- inputs: the mirror of bench_harness.h ---------------------------------

@dataclass(frozen=True)
class Input:
    dtype: str                  # a numpy dtype name
    shape: Tuple[int, ...]
    seed: int
    dist: str = "sym"           # "sym" [-1, 1), "u01" [0, 1), "int" [lo, hi)
    lo: int = 0
    hi: int = 0


def splitmix64(seed: int, start: int, count: int) -> "np.ndarray":
    """Outputs start+1 .. start+count of splitmix64 from state seed."""
    z = np.arange(start + 1, start + count + 1, dtype=np.uint64)
    z *= np.uint64(0x9E3779B97F4A7C15)
    z += np.uint64(seed)
    z ^= z >> np.uint64(30)
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(27)
    z *= np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return z


def make_input(spec: Input) -> "np.ndarray":
    n = math.prod(spec.shape)
    out = np.empty(n, dtype=spec.dtype)
    chunk = 1 << 22
    for start in range(0, n, chunk):
        z = splitmix64(spec.seed, start, min(chunk, n - start))
        if spec.dist == "u01":
            v = (z >> np.uint64(40)).astype(np.float64) * 2.0**-24
        elif spec.dist == "sym":
            v = ((z >> np.uint64(40)).astype(np.float64) - 2.0**23) * 2.0**-23
        elif spec.dist == "int":
            v = (z % np.uint64(spec.hi - spec.lo)).astype(np.int64) + spec.lo
        else:
            raise ValueError(f"unknown dist {spec.dist!r}")
        out[start:start + len(z)] = v.astype(spec.dtype)
    return out.reshape(spec.shape)


def checksum(a) -> float:
    """Sum of up to 64 evenly spread elements, as bench_checksum() in C."""
    flat = np.asarray(a).reshape(-1)
    n = flat.size
    k = min(n, CHECKSUM_SAMPLES)
    if k == 0:
        return 0.0
    idx = (np.arange(k, dtype=np.int64) * n) // k
    return math.fsum(float(x) for x in flat[idx].astype(np.float64))


# ---- cases ---------------------------------------------------------------
#
# A numpy variant is a function of the inputs that returns the callable to
# time (prepared buffers live in its closure). "expr" is what a numpy user
# writes; "out" writes into preallocated outputs. The best variant is the
# numpy figure. A variant that is no peer on this machine returns None and
# says why on stderr.

Variant = Callable[..., Optional[Callable[[], object]]]


@dataclass
class Case:
    area: str                   # the C program: build/emlx_bench_<area>
    inputs: List[Input]
    numpy: Dict[str, Variant]
    rtol: float = 1e-5          # checksum tolerance, relative to max(1, |numpy|)
    numpy_threads: int = 1      # threads numpy uses for this case
    notes: str = ""


def _add_out(a, b):
    o = np.empty_like(a)
    return lambda: np.add(a, b, out=o)


def _exp2p1_out(x):
    o = np.empty_like(x)
    two, one = x.dtype.type(2), x.dtype.type(1)

    def run():
        np.exp(x, out=o)
        np.multiply(o, two, out=o)
        return np.add(o, one, out=o)
    return run


def _unary_out(fn):
    def variant(x):
        o = np.empty_like(x)
        return lambda: fn(x, out=o)
    return variant


def _sum_out(axis):
    def variant(a):
        o = np.empty(a.shape[1 - axis], a.dtype)
        return lambda: np.sum(a, axis=axis, out=o)
    return variant


CASES: Dict[str, Case] = {
    "add_f32_16M": Case(
        area="bench_core",
        inputs=[Input("float32", (M16,), 1), Input("float32", (M16,), 2)],
        numpy={"expr": lambda a, b: lambda: a + b, "out": _add_out},
    ),
    "exp2p1_f32_16M": Case(
        area="bench_core",
        inputs=[Input("float32", (M16,), 3)],
        numpy={"expr": lambda x: lambda: np.exp(x) * 2 + 1, "out": _exp2p1_out},
    ),
    "sum_f32_64M": Case(
        area="bench_core",
        inputs=[Input("float32", (M64,), 4, "u01")],
        numpy={"expr": lambda a: lambda: a.sum()},
        rtol=1e-5,
    ),
    "exp_f32_16M": Case(
        area="bench_core",
        inputs=[Input("float32", (M16,), 5)],
        numpy={"expr": lambda x: lambda: np.exp(x), "out": _unary_out(np.exp)},
    ),
    "sum_inner_f32_4096": Case(
        area="bench_core",
        inputs=[Input("float32", (4096, 4096), 6, "u01")],
        numpy={"expr": lambda a: lambda: a.sum(axis=1), "out": _sum_out(1)},
    ),
    "sum_outer_f32_4096": Case(
        area="bench_core",
        inputs=[Input("float32", (4096, 4096), 7, "u01")],
        numpy={"expr": lambda a: lambda: a.sum(axis=0), "out": _sum_out(0)},
    ),
}


# ---- indexing family (bench/bench_indexing.c) ------------------------------

def _idx_take_out(axis):
    """np.take into a preallocated output; mode="clip" (EMLX's default
    clamps too), since mode="raise" buffers the output."""
    def variant(a, i):
        o = np.empty(i.shape + a.shape[1:], a.dtype)
        return lambda: np.take(a, i, axis=axis, out=o, mode="clip")
    return variant


def _idx_concat_out(*xs):
    o = np.empty(sum(x.shape[0] for x in xs), xs[0].dtype)
    return lambda: np.concatenate(xs, out=o)


def _idx_pad_manual(a):
    def run():
        o = np.zeros((a.shape[0] + 2, a.shape[1] + 2), a.dtype)
        o[1:-1, 1:-1] = a
        return o
    return run


def _idx_pad_out(a):
    o = np.zeros((a.shape[0] + 2, a.shape[1] + 2), a.dtype)  # border stays 0

    def run():
        o[1:-1, 1:-1] = a
        return o
    return run


def _idx_scatter_add(a, i, u):
    def run():
        o = a.copy()
        np.add.at(o, i, u)
        return o
    return run


_IDX_M1 = 1 << 20
_IDX_M2 = 2 << 20
CASES.update({
    "take_f32_1M": Case(
        area="bench_indexing",
        inputs=[Input("float32", (_IDX_M1,), 101),
                Input("int64", (_IDX_M1,), 102, "int", 0, _IDX_M1)],
        numpy={"expr": lambda a, i: lambda: np.take(a, i), "fancy": lambda a, i: lambda: a[i],
               "out": _idx_take_out(0)},
    ),
    "take_f32_1M_i32": Case(
        area="bench_indexing",
        inputs=[Input("float32", (_IDX_M1,), 103),
                Input("int32", (_IDX_M1,), 104, "int", 0, _IDX_M1)],
        numpy={"expr": lambda a, i: lambda: np.take(a, i), "fancy": lambda a, i: lambda: a[i],
               "out": _idx_take_out(0)},
    ),
    "take_rows_f32": Case(
        area="bench_indexing",
        inputs=[Input("float32", (32768, 256), 105),
                Input("int64", (32768,), 106, "int", 0, 32768)],
        numpy={"expr": lambda a, i: lambda: np.take(a, i, axis=0),
               "fancy": lambda a, i: lambda: a[i], "out": _idx_take_out(0)},
    ),
    "concat_f32_8x2M": Case(
        area="bench_indexing",
        inputs=[Input("float32", (_IDX_M2,), 111 + k) for k in range(8)],
        numpy={"expr": lambda *xs: lambda: np.concatenate(xs), "out": _idx_concat_out},
    ),
    "pad_f32_4096": Case(
        area="bench_indexing",
        inputs=[Input("float32", (4096, 4096), 121)],
        numpy={"expr": lambda a: lambda: np.pad(a, 1), "manual": _idx_pad_manual,
               "out": _idx_pad_out},
    ),
    "scatter_add_f32_1M": Case(
        area="bench_indexing",
        inputs=[Input("float32", (65536,), 131), Input("int32", (_IDX_M1,), 132, "int", 0, 65536),
                Input("float32", (_IDX_M1,), 133, "int", -8, 8)],
        numpy={"expr": _idx_scatter_add},
    ),
})


# ---- matmul family (bench/bench_matmul.c) ---------------------------------
# numpy's matmul calls its bundled OpenBLAS, threaded over all cores. numpy
# has no bf16: the bf16 case's peers are numpy's f32 product of the same
# values (variant "numpy_f32": bf16 against f32, named as such) and torch's
# bf16 matmul (oneDNN) where it is fast. Its inputs are made in f32 (small
# integers, exact in bf16) and converted before timing.
#
# torch's bf16 matmul is fast only on CPUs with AVX-512 (oneDNN's bf16
# kernels); elsewhere it falls back to a scalar loop (55 s for this product
# on an AVX2 machine, times 24 calls). So torch is a peer only when a 512^3
# probe (1/64 of the work) runs within 8x numpy's f32 time for it, and not
# when EMLX_ISA caps EMLX below AVX-512: that run stands for a machine whose
# torch would not have those kernels either (and torch is capped with it).

_TORCH_BF16_PROBE_FACTOR = 8.0


class _MmTorchResult:
    """A torch result that becomes a numpy array only when checksummed."""
    def __init__(self, t):
        self.t = t

    def __array__(self, dtype=None, copy=None):
        a = self.t.float().numpy()
        return a if dtype is None else a.astype(dtype)


def _round_bf16(a):
    """f32 values rounded to the nearest bf16 (ties to even), as f32."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return u.astype(np.uint32).view(np.float32)


class _MmBf16Result:
    """An f32 product checksummed as the bf16 it stands for."""
    def __init__(self, a):
        self.a = a

    def __array__(self, dtype=None, copy=None):
        r = _round_bf16(self.a)
        return r if dtype is None else r.astype(dtype)


def _mm_np_f32_as_bf16(a, b):
    o = np.empty_like(a @ b)
    def run():
        np.matmul(a, b, out=o)
        return _MmBf16Result(o)
    return run


def _best_of(f, n):
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def _mm_torch_bf16(a, b):
    """The torch bf16 peer, or None (with the reason on stderr) where torch
    is not a fair or not a finishing peer on this machine."""
    isa = os.environ.get("EMLX_ISA", "")
    if isa and isa != "avx512":
        sys.stderr.write(f"compare.py: EMLX_ISA={isa}: matmul_bf16_2048's torch peer is skipped "
                         "(torch's bf16 matmul below AVX-512 is its slow path); peer: numpy f32\n")
        return None
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import torch
    except ImportError:
        sys.stderr.write("compare.py: torch is not installed (pip install torch); "
                         "matmul_bf16_2048's peer is numpy f32 alone\n")
        return None
    torch.set_num_threads(_MM_THREADS)
    pa, pb = a[:512, :512], b[:512, :512]
    ta, tb = torch.from_numpy(pa).to(torch.bfloat16), torch.from_numpy(pb).to(torch.bfloat16)
    t_torch = _best_of(lambda: torch.matmul(ta, tb), 2)
    t_np = _best_of(lambda: pa @ pb, 3)
    if t_torch > _TORCH_BF16_PROBE_FACTOR * t_np:
        sys.stderr.write(f"compare.py: torch's bf16 matmul is on its slow path here (512^3: "
                         f"{t_torch * 1e3:.1f} ms against numpy f32's {t_np * 1e3:.1f} ms); "
                         "matmul_bf16_2048's peer is numpy f32 alone\n")
        return None
    ta = torch.from_numpy(a).to(torch.bfloat16)
    tb = torch.from_numpy(b).to(torch.bfloat16)
    return lambda: _MmTorchResult(torch.matmul(ta, tb))


def _mm_out(a, b):
    o = np.empty_like(a @ b)  # once, outside the timing
    return lambda: np.matmul(a, b, out=o)


_MM_THREADS = os.cpu_count() or 1
CASES.update({
    "matmul_f32_2048": Case(
        area="bench_matmul",
        inputs=[Input("float32", (2048, 2048), 11), Input("float32", (2048, 2048), 12)],
        numpy={"expr": lambda a, b: lambda: a @ b, "out": _mm_out},
        rtol=1e-4, numpy_threads=_MM_THREADS,
    ),
    "matmul_bf16_2048": Case(
        area="bench_matmul",
        inputs=[Input("float32", (2048, 2048), 13, "int", -4, 4),
                Input("float32", (2048, 2048), 14, "int", -4, 4)],
        numpy={"numpy_f32": _mm_np_f32_as_bf16, "torch_bf16": _mm_torch_bf16},
        rtol=1e-9, numpy_threads=_MM_THREADS,
        notes="peers: numpy f32 (the same values), torch bf16 where fast",
    ),
    "matmul_f32_2048_int": Case(
        area="bench_matmul",
        inputs=[Input("float32", (2048, 2048), 13, "int", -4, 4),
                Input("float32", (2048, 2048), 14, "int", -4, 4)],
        numpy={"expr": lambda a, b: lambda: a @ b, "out": _mm_out},
        rtol=1e-9, numpy_threads=_MM_THREADS,
    ),
    "gemv_f32_4096": Case(
        area="bench_matmul",
        inputs=[Input("float32", (4096, 4096), 15), Input("float32", (4096,), 16)],
        numpy={"expr": lambda a, x: lambda: a @ x, "out": _mm_out},
        rtol=1e-4, numpy_threads=_MM_THREADS,
    ),
    "matmul_f32_batch4096_16": Case(
        area="bench_matmul",
        inputs=[Input("float32", (4096, 16, 16), 17), Input("float32", (4096, 16, 16), 18)],
        numpy={"expr": lambda a, b: lambda: a @ b, "out": _mm_out},
        rtol=1e-4, numpy_threads=_MM_THREADS,
    ),
})

# ---- reduce family (bench/bench_reduce.c) ----------------------------------
# numpy's default argsort (quicksort, AVX-512 x86-simd-sort where available)
# is not stable: it orders ties differently, so it cannot share a checksum
# with EMLX's stable argsort; the stable variant is the peer of that case.

def _red_cumsum_out(x):
    o = np.empty_like(x)
    return lambda: np.cumsum(x, out=o)


def _red_axis_out(fn, axis):
    def variant(a):
        o = np.empty(a.shape[1 - axis], dtype=a.dtype)
        return lambda: fn(a, axis=axis, out=o)
    return variant


_RED_M1 = 1 << 20
_RED_SQ = (4096, 4096)
_RED_M256 = 256 << 20
_RED_SQ16K = (16384, 16384)

CASES.update({
    "argsort_f32_1M": Case(
        area="bench_reduce",
        inputs=[Input("float32", (_RED_M1,), 201)],
        numpy={"stable": lambda x: lambda: np.argsort(x, kind="stable")},
        notes="EMLX's argsort is stable; numpy's default quicksort is not (see above)",
    ),
    "cumsum_f32_16M": Case(
        area="bench_reduce",
        inputs=[Input("float32", (M16,), 203)],
        numpy={"expr": lambda x: lambda: np.cumsum(x), "out": _red_cumsum_out},
        rtol=1e-3,  # f32 running sums of 16M terms, summed in a different order
    ),
    "product_inner_f32_4096": Case(
        area="bench_reduce",
        inputs=[Input("float32", _RED_SQ, 204, "int", -1, 2)],
        numpy={"expr": lambda a: lambda: a.prod(axis=1), "out": _red_axis_out(np.prod, 1)},
    ),
    "product_outer_f32_4096": Case(
        area="bench_reduce",
        inputs=[Input("float32", _RED_SQ, 205, "int", -1, 2)],
        numpy={"expr": lambda a: lambda: a.prod(axis=0), "out": _red_axis_out(np.prod, 0)},
    ),
    "min_inner_f32_4096": Case(
        area="bench_reduce",
        inputs=[Input("float32", _RED_SQ, 206)],
        numpy={"expr": lambda a: lambda: a.min(axis=1), "out": _red_axis_out(np.min, 1)},
    ),
    "min_outer_f32_4096": Case(
        area="bench_reduce",
        inputs=[Input("float32", _RED_SQ, 207)],
        numpy={"expr": lambda a: lambda: a.min(axis=0), "out": _red_axis_out(np.min, 0)},
    ),
    "sum_i32_256M": Case(
        area="bench_reduce",
        inputs=[Input("int32", (_RED_M256,), 208, "int", -1000, 1000)],
        numpy={"expr": lambda x: lambda: x.sum(dtype=np.int32)},
    ),
    "sum_astype_i64_256M": Case(
        area="bench_reduce",
        inputs=[Input("int32", (_RED_M256,), 208, "int", -1000, 1000)],
        numpy={"expr": lambda x: lambda: x.astype(np.int64).sum(),
               "dtype": lambda x: lambda: x.sum(dtype=np.int64)},
    ),
    "sum_i32_rows_16K": Case(
        area="bench_reduce",
        inputs=[Input("int32", _RED_SQ16K, 209, "int", -1000, 1000)],
        numpy={"expr": lambda x: lambda: x.sum(axis=1, dtype=np.int32)},
    ),
    "sum_astype_i64_rows_16K": Case(
        area="bench_reduce",
        inputs=[Input("int32", _RED_SQ16K, 209, "int", -1000, 1000)],
        numpy={"dtype": lambda x: lambda: x.sum(axis=1, dtype=np.int64)},
    ),
    "sum_i32_cols_16K": Case(
        area="bench_reduce",
        inputs=[Input("int32", _RED_SQ16K, 209, "int", -1000, 1000)],
        numpy={"expr": lambda x: lambda: x.sum(axis=0, dtype=np.int32)},
    ),
    "sum_astype_i64_cols_16K": Case(
        area="bench_reduce",
        inputs=[Input("int32", _RED_SQ16K, 209, "int", -1000, 1000)],
        numpy={"dtype": lambda x: lambda: x.sum(axis=0, dtype=np.int64)},
    ),
    "sum_u8_astype_i64_256M": Case(
        area="bench_reduce",
        inputs=[Input("uint8", (_RED_M256,), 210, "int", 0, 200)],
        numpy={"dtype": lambda x: lambda: x.sum(dtype=np.int64)},
    ),
})

# ---- model ops (bench/bench_model_ops.c) -------------------------------------
# numpy has no softmax / logsumexp: its peers are the max-subtracted
# expressions a numpy user writes (scipy's logsumexp is the same algorithm).

def _mo_softmax(x):
    def run():
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    return run


def _mo_softmax_out(x):
    o = np.empty_like(x)
    m = np.empty((x.shape[0], 1), x.dtype)
    s = np.empty((x.shape[0], 1), x.dtype)

    def run():
        np.max(x, axis=-1, keepdims=True, out=m)
        np.subtract(x, m, out=o)
        np.exp(o, out=o)
        np.sum(o, axis=-1, keepdims=True, out=s)
        return np.divide(o, s, out=o)
    return run


def _mo_logsumexp(x):
    def run():
        m = x.max(axis=-1, keepdims=True)
        return (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))[:, 0]
    return run


def _mo_layer_norm(x):
    def run():
        m = x.mean(axis=-1, keepdims=True)
        v = x.var(axis=-1, keepdims=True)
        return (x - m) / np.sqrt(v + np.float32(1e-5))
    return run


_MO_SQ = (4096, 4096)
_MO_LN = (16384, 768)

CASES.update({
    "softmax_f32_4096": Case(
        area="bench_model_ops",
        inputs=[Input("float32", _MO_SQ, 601)],
        numpy={"expr": _mo_softmax, "out": _mo_softmax_out},
    ),
    "logsumexp_f32_4096": Case(
        area="bench_model_ops",
        inputs=[Input("float32", _MO_SQ, 602)],
        numpy={"expr": _mo_logsumexp},
    ),
    "mean_ln_f32_16384x768": Case(
        area="bench_model_ops",
        inputs=[Input("float32", _MO_LN, 603)],
        numpy={"expr": lambda x: lambda: x.mean(axis=-1)},
    ),
    "mean_outer_f32_16384x768": Case(
        area="bench_model_ops",
        inputs=[Input("float32", _MO_LN, 606)],
        numpy={"expr": lambda x: lambda: x.mean(axis=0)},
    ),
    "var_ln_f32_16384x768": Case(
        area="bench_model_ops",
        inputs=[Input("float32", _MO_LN, 604)],
        numpy={"expr": lambda x: lambda: x.var(axis=-1)},
    ),
    "layer_norm_f32_16384x768": Case(
        area="bench_model_ops",
        inputs=[Input("float32", _MO_LN, 605)],
        numpy={"expr": _mo_layer_norm},
        rtol=1e-4,
    ),
})

# ---- conv family (bench/bench_conv.c) --------------------------------------
# numpy has no convolution: its peer is what a numpy user writes, an im2col
# through sliding_window_view and one tensordot / matmul (its OpenBLAS
# threads over every core). torch's conv2d / max_pool2d (oneDNN, channels-last
# memory format, 2 threads) is the second peer when torch is installed.

def _conv_np_tensordot(x, w):
    def run():
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(1, 2))
        return np.tensordot(win, w, axes=([3, 4, 5], [3, 1, 2]))  # (8, 56, 56, 64)
    return run


def _conv_np_matmul(x, w):
    wm = np.ascontiguousarray(w.reshape(w.shape[0], -1).T)  # (kh kw ci, co)

    def run():
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(1, 2))
        cols = win.transpose(0, 1, 2, 4, 5, 3).reshape(-1, wm.shape[0])
        return (cols @ wm).reshape(x.shape[0], x.shape[1], x.shape[2], -1)
    return run


class _TorchNHWC:
    """An NCHW torch result that becomes an NHWC numpy array when checksummed."""
    def __init__(self, t):
        self.t = t

    def __array__(self, dtype=None, copy=None):
        a = self.t.permute(0, 2, 3, 1).contiguous().numpy()
        return a if dtype is None else a.astype(dtype)


def _torch():
    # torch's OpenMP threads spin between calls by default, against ours
    # and numpy's in the same run; passive waiting is set before it loads.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(2)
    return torch


def _conv_torch(x, w):
    torch = _torch()
    if torch is None:
        return _conv_np_matmul(x, w)
    tx = torch.from_numpy(x).permute(0, 3, 1, 2)  # NCHW view, channels-last memory
    tw = torch.from_numpy(w).permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last)
    f = torch.nn.functional.conv2d
    return lambda: _TorchNHWC(f(tx, tw, padding=1))


def _pool_np(x):
    def run():
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=-np.inf)
        win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(1, 2))
        return win[:, ::2, ::2].max(axis=(-2, -1))
    return run


def _pool_torch(x):
    torch = _torch()
    if torch is None:
        return _pool_np(x)
    tx = torch.from_numpy(x).permute(0, 3, 1, 2)
    f = torch.nn.functional.max_pool2d
    return lambda: _TorchNHWC(f(tx, 3, 2, padding=1))


CASES.update({
    "conv2d_f32_n8_c64_56": Case(
        area="bench_conv",
        inputs=[Input("float32", (8, 56, 56, 64), 301), Input("float32", (64, 3, 3, 64), 302)],
        numpy={"tensordot": _conv_np_tensordot, "matmul": _conv_np_matmul,
               "torch": _conv_torch},
        rtol=1e-4, numpy_threads=os.cpu_count() or 1,
        notes="numpy: im2col + BLAS; torch variant: conv2d, 2 threads",
    ),
    "maxpool2d_f32_112": Case(
        area="bench_conv",
        inputs=[Input("float32", (8, 112, 112, 64), 303)],
        numpy={"expr": _pool_np, "torch": _pool_torch},
        rtol=1e-6, notes="torch variant: max_pool2d, 2 threads",
    ),
})

# ---- fft family (bench/bench_fft.c) ----------------------------------------
# The complex64 inputs are f32 arrays with a trailing axis of 2 (real,
# imaginary), read as complex64 by a view on both sides. numpy (2.x) keeps
# complex64 in single precision (pocketfft, one thread). The results'
# checksums are over their real parts.

class _FftReal:
    """A complex result that becomes its real part when checksummed."""
    def __init__(self, z):
        self.z = z

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(self.z).real
        return a if dtype is None else a.astype(dtype)


def _fft_c64(f):
    return f.view(np.complex64).reshape(f.shape[:-1])


def _fft_np(fn, **kw):
    def variant(f):
        z = _fft_c64(f)
        return lambda: _FftReal(fn(z, **kw))
    return variant


CASES.update({
    "fft_c64_1M": Case(
        area="bench_fft",
        inputs=[Input("float32", (1 << 20, 2), 401)],
        numpy={"expr": _fft_np(np.fft.fft)},
        rtol=1e-4,
    ),
    "fft_c64_1000x1024": Case(
        area="bench_fft",
        inputs=[Input("float32", (1024, 1000, 2), 402)],
        numpy={"expr": _fft_np(np.fft.fft, axis=-1)},
        rtol=1e-4,
    ),
    "fft_c64_10007": Case(
        area="bench_fft",
        inputs=[Input("float32", (10007, 2), 403)],
        numpy={"expr": _fft_np(np.fft.fft)},
        rtol=1e-4,
    ),
    "fft2_c64_1024": Case(
        area="bench_fft",
        inputs=[Input("float32", (1024, 1024, 2), 404)],
        numpy={"expr": _fft_np(np.fft.fft2)},
        rtol=1e-4,
    ),
})


# ---- linalg family (bench/bench_linalg.c) ----------------------------------
# numpy.linalg calls LAPACK in its bundled OpenBLAS (threaded over every
# core), EMLX calls it in Debian's OpenBLAS. Each variant computes what the
# EMLX case computes (svd with U and Vt, eigh with eigenvectors) and returns
# the part whose checksum is free of sign conventions (see bench_linalg.c).

_LA_THREADS = os.cpu_count() or 1
CASES.update({
    "svd_f32_512": Case(
        area="bench_linalg",
        inputs=[Input("float32", (512, 512), 501)],
        numpy={"expr": lambda a: lambda: np.linalg.svd(a)[1]},
        rtol=1e-4, numpy_threads=_LA_THREADS,
    ),
    "qr_f32_512": Case(
        area="bench_linalg",
        inputs=[Input("float32", (512, 512), 502)],
        numpy={"expr": lambda a: lambda: np.linalg.qr(a)[0]},
        rtol=1e-3, numpy_threads=_LA_THREADS,
    ),
    "eigh_f32_512": Case(
        area="bench_linalg",
        inputs=[Input("float32", (512, 512), 503)],
        numpy={"expr": lambda a: lambda: np.linalg.eigh(a)[0]},
        rtol=1e-4, numpy_threads=_LA_THREADS,
    ),
    "solve_f32_512": Case(
        area="bench_linalg",
        inputs=[Input("float32", (512, 512), 504), Input("float32", (512,), 505)],
        numpy={"expr": lambda a, b: lambda: np.linalg.solve(a, b)},
        rtol=1e-2, numpy_threads=_LA_THREADS,  # f32 solve of a random matrix (cond ~ 1e3)
    ),
    "solve_f32_512x512": Case(
        area="bench_linalg",
        inputs=[Input("float32", (512, 512), 506), Input("float32", (512, 512), 507)],
        numpy={"expr": lambda a, b: lambda: np.linalg.solve(a, b)},
        rtol=1e-2, numpy_threads=_LA_THREADS,
    ),
})

# ---- math family (bench/bench_math.c) --------------------------------------
# numpy has no erf: its peer is scipy.special.erf (float32 in, float32 out),
# or, without scipy, math.erf through np.frompyfunc (slow; said on stderr).

def _math_unary_out(fn):
    def variant(x):
        o = np.empty_like(x)
        return lambda: fn(x, out=o)
    return variant


def _math_erf(out):
    try:
        import scipy.special as sps
    except ImportError:
        sys.stderr.write("compare.py: scipy is not installed (pip install scipy); "
                         "erf_f32_16M falls back to math.erf per element\n")
        f = np.frompyfunc(math.erf, 1, 1)
        return lambda x: lambda: f(x).astype(np.float32)
    if out:
        return _math_unary_out(sps.erf)
    return lambda x: lambda: sps.erf(x)


def _math_add_bcast_out(a, b):
    o = np.empty_like(a)
    return lambda: np.add(a, b, out=o)


CASES.update({
    "tanh_f32_16M": Case(
        area="bench_math",
        inputs=[Input("float32", (M16,), 301)],
        numpy={"expr": lambda x: lambda: np.tanh(x), "out": _math_unary_out(np.tanh)},
    ),
    "sin_f32_16M": Case(
        area="bench_math",
        inputs=[Input("float32", (M16,), 305)],
        numpy={"expr": lambda x: lambda: np.sin(x), "out": _math_unary_out(np.sin)},
    ),
    "cos_f32_16M": Case(
        area="bench_math",
        inputs=[Input("float32", (M16,), 306)],
        numpy={"expr": lambda x: lambda: np.cos(x), "out": _math_unary_out(np.cos)},
    ),
    "erf_f32_16M": Case(
        area="bench_math",
        inputs=[Input("float32", (M16,), 302)],
        numpy={"expr": _math_erf(False), "out": _math_erf(True)},
        notes="peer: scipy.special.erf (numpy has no erf)",
    ),
    "add_bcast_f32_4096": Case(
        area="bench_math",
        inputs=[Input("float32", (4096, 4096), 303), Input("float32", (4096,), 304)],
        numpy={"expr": lambda a, b: lambda: a + b, "out": _math_add_bcast_out},
    ),
})


# ---- fusion family (bench/bench_fusion.c) ---------------------------------
# Each expression is timed three ways on the EMLX side (eager fused, compiled
# program, eager unfused: `_fused`, `_prog`, `_nofuse`), all against the same
# peers: numpy as written and with out= buffers (scipy.special.erf for GELU,
# which numpy lacks), and MLX's compiled function (mx.compile, then mx.eval
# on the result, on MLX's CPU device) as the variant "mlx_compile". The
# ratio line compares with the fastest peer; each peer's own line is printed
# above it. Without mlx (pip install "mlx[cpu]") the MLX variant is skipped,
# with the reason on stderr.

_MLX_STATE: Dict[str, object] = {}


def _mlx():
    """mlx.core, or None (the reason printed once)."""
    if "mx" not in _MLX_STATE:
        try:
            import mlx.core as mx
            mx.set_default_device(mx.cpu)
            _MLX_STATE["mx"] = mx
        except Exception as e:  # ImportError, or a broken install
            _MLX_STATE["mx"] = None
            sys.stderr.write(f"compare.py: mlx is not importable ({e}); the mx.compile peer "
                             "of the fusion cases is skipped (pip install \"mlx[cpu]\")\n")
    return _MLX_STATE["mx"]


def _fz_mlx(fn):
    """Variants {"mlx_compile": ...} timing mx.compile(fn(mx)) on the inputs,
    or {} when mlx is missing."""
    if _mlx() is None:
        return {}

    def variant(*xs):
        mx = _mlx()
        f = mx.compile(fn(mx))
        args = [mx.array(x) for x in xs]
        mx.eval(*args)

        def run():
            r = f(*args)
            mx.eval(r)
            return r
        return run
    return {"mlx_compile": variant}


def _fz_erf():
    try:
        import scipy.special as sps
        return sps.erf
    except ImportError:
        sys.stderr.write("compare.py: scipy is not installed (pip install scipy); the GELU "
                         "numpy peer uses math.erf per element (slow)\n")
        f = np.frompyfunc(math.erf, 1, 1)
        return lambda x, out=None: f(x).astype(np.float32)


_FZ_R2 = 0.7071067811865476  # 1 / sqrt(2), as M_SQRT1_2


def _fz_gelu_np(x):
    erf = _fz_erf()
    return lambda: 0.5 * x * (1 + erf(x * np.float32(_FZ_R2)))


def _fz_gelu_out(x):
    erf = _fz_erf()
    o, h = np.empty_like(x), np.empty_like(x)

    def run():
        np.multiply(x, np.float32(_FZ_R2), out=o)
        erf(o, out=o)
        np.add(o, 1, out=o)
        np.multiply(x, 0.5, out=h)
        return np.multiply(h, o, out=o)
    return run


def _fz_silu_out(x):
    o = np.empty_like(x)

    def run():
        np.negative(x, out=o)
        np.exp(o, out=o)
        np.add(o, 1, out=o)
        return np.divide(x, o, out=o)
    return run


def _fz_chain20(xp, x, sigmoid, rsqrt):
    """The 20 ops of bench_fusion.c's ex_chain20 in module xp (numpy or mlx)."""
    f32 = np.float32 if xp is np else (lambda v: v)
    t = x * f32(1.5)
    t = t + f32(0.25)
    t = xp.sin(t)
    t = t * t
    t = t + f32(1.0)
    t = xp.sqrt(t)
    t = xp.log(t)
    t = t - f32(0.1)
    t = xp.exp(t)
    t = t * f32(0.5)
    t = xp.tanh(t)
    t = xp.maximum(t, f32(0.3))
    t = t + x
    t = xp.abs(t)
    t = t + f32(1.0)
    t = rsqrt(t)
    t = t * f32(3.0)
    t = sigmoid(t)
    t = t - f32(0.5)
    return t * t


def _fz_chain20_out(x):
    o = np.empty_like(x)

    def run():
        np.multiply(x, 1.5, out=o)
        np.add(o, 0.25, out=o)
        np.sin(o, out=o)
        np.multiply(o, o, out=o)
        np.add(o, 1.0, out=o)
        np.sqrt(o, out=o)
        np.log(o, out=o)
        np.subtract(o, 0.1, out=o)
        np.exp(o, out=o)
        np.multiply(o, 0.5, out=o)
        np.tanh(o, out=o)
        np.maximum(o, 0.3, out=o)
        np.add(o, x, out=o)
        np.abs(o, out=o)
        np.add(o, 1.0, out=o)
        np.sqrt(o, out=o)
        np.divide(1.0, o, out=o)
        np.multiply(o, 3.0, out=o)
        np.negative(o, out=o)  # sigmoid: 1 / (1 + exp(-t))
        np.exp(o, out=o)
        np.add(o, 1.0, out=o)
        np.divide(1.0, o, out=o)
        np.subtract(o, 0.5, out=o)
        return np.multiply(o, o, out=o)
    return run


def _fz_np_sigmoid(t):
    return 1 / (1 + np.exp(-t))


def _fz_graph100(xp, a, b):
    """bench_fusion.c's ex_graph100: 100 ops in turn."""
    f32 = np.float32 if xp is np else (lambda v: v)
    t = a
    for i in range(100):
        k = i % 5
        if k == 0:
            t = t * f32(0.75)
        elif k == 1:
            t = t + b
        elif k == 2:
            t = xp.maximum(t, f32(-1.5))
        elif k == 3:
            t = t - f32(0.125)
        else:
            t = xp.tanh(t)
    return t


_FZ_EXP2P1 = {"expr": lambda x: lambda: np.exp(x) * 2 + 1, "out": _exp2p1_out,
              **_fz_mlx(lambda mx: lambda x: mx.exp(x) * 2 + 1)}
_FZ_GELU = {"expr": _fz_gelu_np, "out": _fz_gelu_out,
            **_fz_mlx(lambda mx: lambda x: 0.5 * x * (1 + mx.erf(x * _FZ_R2)))}
_FZ_SILU = {"expr": lambda x: lambda: x / (1 + np.exp(-x)), "out": _fz_silu_out,
            **_fz_mlx(lambda mx: lambda x: x * mx.sigmoid(x))}
_FZ_CHAIN20 = {"expr": lambda x: lambda: _fz_chain20(np, x, _fz_np_sigmoid,
                                                     lambda t: 1 / np.sqrt(t)),
               "out": _fz_chain20_out,
               **_fz_mlx(lambda mx: lambda x: _fz_chain20(mx, x, mx.sigmoid, mx.rsqrt))}
_FZ_GRAPH100 = {"expr": lambda a, b: lambda: _fz_graph100(np, a, b),
                **_fz_mlx(lambda mx: lambda a, b: _fz_graph100(mx, a, b))}
_FZ_NOTES = "peers: numpy (1 thread), mx.compile (MLX cpu)"

for _mode in ("fused", "prog", "nofuse"):
    CASES.update({
        f"exp2p1_{_mode}_f32_16M": Case(
            area="bench_fusion", inputs=[Input("float32", (M16,), 601)],
            numpy=_FZ_EXP2P1, notes=_FZ_NOTES),
        f"gelu_{_mode}_f32_16M": Case(
            area="bench_fusion", inputs=[Input("float32", (M16,), 602)],
            numpy=_FZ_GELU, rtol=1e-4, notes=_FZ_NOTES + "; numpy's erf: scipy.special.erf"),
        f"silu_{_mode}_f32_16M": Case(
            area="bench_fusion", inputs=[Input("float32", (M16,), 603)],
            numpy=_FZ_SILU, rtol=1e-4, notes=_FZ_NOTES),
        f"chain20_{_mode}_f32_16M": Case(
            area="bench_fusion", inputs=[Input("float32", (M16,), 604)],
            numpy=_FZ_CHAIN20, rtol=1e-4, notes=_FZ_NOTES),
        f"graph100_{_mode}_f32_1K": Case(
            area="bench_fusion",
            inputs=[Input("float32", (1024,), 611), Input("float32", (1024,), 612)],
            numpy=_FZ_GRAPH100, rtol=1e-4, notes=_FZ_NOTES + "; per-op: median / 100"),
    })


# ---- timing --------------------------------------------------------------

@dataclass
class Result:
    median_ms: float
    min_ms: float
    checksum: float
    variant: str = ""
    fields: Dict[str, str] = field(default_factory=dict)


def median(xs: List[float]) -> float:
    s = sorted(xs)
    m = len(s) // 2
    return s[m] if len(s) % 2 else 0.5 * (s[m - 1] + s[m])


def time_numpy(run: Callable[[], object], warmup: int, reps: int) -> Result:
    """Same protocol as bench_rep(): the first run gives the checksum; each
    timed run includes freeing what it allocated."""
    chk = None
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(warmup):
            r = run()
            if chk is None:
                chk = checksum(r)
            del r
        times = []
        for _ in range(reps):
            t0 = time.perf_counter_ns()
            r = run()
            del r
            times.append((time.perf_counter_ns() - t0) * 1e-6)
            if chk is None:
                chk = checksum(run())
    finally:
        if gc_was_enabled:
            gc.enable()
    return Result(median(times), min(times), chk)


# ---- the EMLX side -------------------------------------------------------

def parse_line(line: str) -> Dict[str, str]:
    out = {}
    for tok in line.split():
        k, sep, v = tok.partition("=")
        if sep:
            out[k] = v
    return out


_printed_headers = set()


def run_emlx(binary: str, name: str, args) -> Tuple[Optional[Result], List[str]]:
    """Runs one case in its program; prints the program's header line (the
    first time) and the case's line; returns the result and the header."""
    cmd = [binary, "--case", name, "--reps", str(args.reps), "--warmup", str(args.warmup)]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    header = [ln for ln in p.stdout.splitlines() if ln.startswith("#")]
    for ln in header:
        if ln not in _printed_headers:
            print(ln)
            _printed_headers.add(ln)
    if p.returncode != 0:
        sys.stderr.write(f"compare.py: {' '.join(cmd)} failed (exit {p.returncode}):\n"
                         f"{p.stderr}{p.stdout}")
        return None, header
    for ln in p.stdout.splitlines():
        f = parse_line(ln)
        if f.get("case") == name and f.get("impl") == "emlx":
            print(ln)
            return Result(float(f["median_ms"]), float(f["min_ms"]), float(f["checksum"]),
                          fields=f), header
    sys.stderr.write(f"compare.py: no line for case {name} from {binary}\n{p.stdout}")
    return None, header



def binary_for(area: str, args) -> str:
    for b in args.bin:
        if os.path.basename(b) == f"emlx_bench_{area}":
            return b
    return os.path.join(args.build_dir, f"emlx_bench_{area}")


def list_binary_cases(binary: str) -> Optional[List[str]]:
    try:
        p = subprocess.run([binary, "--list"], capture_output=True, text=True)
    except OSError:
        return None
    if p.returncode != 0:
        return None
    return [ln.split("\t")[0] for ln in p.stdout.splitlines() if ln.strip()]


# ---- main ----------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(
        description="Run EMLX benchmarks and numpy side by side; report time ratios.")
    ap.add_argument("--bin", action="append", default=[], metavar="PATH",
                    help="an EMLX benchmark program, named emlx_bench_<area> "
                         "(repeatable; default: BUILD_DIR/emlx_bench_<area>, "
                         "e.g. build/emlx_bench_bench_core); without --case, "
                         "runs the cases of the programs given")
    ap.add_argument("--build-dir", default="build", help="where the programs are (default: build)")
    ap.add_argument("--case", action="append", default=[], metavar="NAME",
                    help="run only this case (repeatable; default: all)")
    ap.add_argument("--reps", type=int, default=DEFAULT_REPS, help="timed repetitions")
    ap.add_argument("--warmup", type=int, default=DEFAULT_WARMUP, help="untimed repetitions first")
    ap.add_argument("--threads", type=int, default=0,
                    help="EMLX pool threads (default: the engine's)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="run each case this many times on both sides, keeping each "
                         "side's lowest median (for a noisy machine)")
    ap.add_argument("--numpy-only", action="store_true", help="skip the EMLX programs")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 also when a case is slower than numpy")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    args = ap.parse_args()
    if args.reps < 1 or args.warmup < 0 or args.rounds < 1:
        ap.error("--reps and --rounds must be >= 1, --warmup >= 0")

    if args.list:
        for name, c in CASES.items():
            print(f"{name}\t{c.area}")
        return 0
    unknown = [n for n in args.case if n not in CASES]
    if unknown:
        ap.error(f"unknown case(s): {', '.join(unknown)} (see --list)")
    bin_areas = set()
    for b in args.bin:
        stem = os.path.basename(b)
        if not stem.startswith("emlx_bench_"):
            ap.error(f"--bin {b}: a program is named emlx_bench_<area>")
        bin_areas.add(stem[len("emlx_bench_"):])
    # Without --case: every case, or with --bin only the cases of those programs.
    names = args.case or [n for n, c in CASES.items() if not bin_areas or c.area in bin_areas]
    if not names:
        ap.error(f"no case in CASES belongs to {', '.join(sorted(bin_areas))}")

    binaries = {}
    if not args.numpy_only:
        for area in sorted({CASES[n].area for n in names}):
            b = binary_for(area, args)
            listed = list_binary_cases(b)
            if listed is None:
                sys.stderr.write(
                    f"compare.py: cannot run {b}; build it first:\n"
                    f"  cmake -S . -B {args.build_dir} -DCMAKE_BUILD_TYPE=Release && "
                    f"cmake --build {args.build_dir} -j\n"
                    f"  (or pass --bin PATH, or --numpy-only)\n")
                return 2
            missing = [n for n in names if CASES[n].area == area and n not in listed]
            if missing:
                sys.stderr.write(f"compare.py: {b} lacks case(s) {', '.join(missing)}\n")
                return 2
            binaries[area] = b

    load = os.getloadavg()[0]
    if os.environ.get("NPY_DISABLE_CPU_FEATURES"):
        print(f"# EMLX_ISA={os.environ.get('EMLX_ISA', '')}; numpy's kernels disabled: "
              f"{os.environ['NPY_DISABLE_CPU_FEATURES']}; torch capped: "
              f"ATEN_CPU_CAPABILITY={os.environ.get('ATEN_CPU_CAPABILITY', '')} "
              f"ONEDNN_MAX_CPU_ISA={os.environ.get('ONEDNN_MAX_CPU_ISA', '')}")
    print(f"# numpy {np.__version__} (elementwise and reductions run on 1 thread); "
          f"python {sys.version.split()[0]}; cores={os.cpu_count()}; load={load:.2f}")
    print(f"# reps={args.reps} warmup={args.warmup} rounds={args.rounds}; "
          "times are the median of the reps (the lowest over the rounds)")
    if load > 0.5:
        print(f"# warning: load average {load:.2f}: another job is running; numbers may be noisy")
    sys.stdout.flush()

    rows = []
    emlx_header = ""
    for name in names:
        case = CASES[name]
        inputs = [make_input(s) for s in case.inputs]
        in_chk = sum(checksum(x) for x in inputs)
        emlx = best = None
        # Each round runs the EMLX program, then numpy; the lower median of
        # the rounds stands for each side.
        for _ in range(args.rounds):
            if not args.numpy_only:
                r, header = run_emlx(binaries[case.area], name, args)
                if header and not emlx_header:
                    emlx_header = header[0]
                if r is None:
                    emlx = None
                    break
                if emlx is None or r.median_ms < emlx.median_ms:
                    emlx = r
            for vname, variant in case.numpy.items():
                run = variant(*inputs)
                if run is None:  # not a peer on this machine (the variant said why)
                    continue
                r = time_numpy(run, args.warmup, args.reps)
                r.variant = vname
                print(f"case={name} impl=numpy variant={vname} threads={case.numpy_threads} "
                      f"reps={args.reps} median_ms={r.median_ms:.4f} min_ms={r.min_ms:.4f} "
                      f"checksum={r.checksum:.17g} in_checksum={in_chk:.17g}")
                sys.stdout.flush()
                if best is None or r.median_ms < best.median_ms:
                    best = r
        del inputs
        check = "-"
        if emlx is not None:
            e_in = float(emlx.fields.get("in_checksum", "nan"))
            if not math.isclose(e_in, in_chk, rel_tol=1e-9, abs_tol=1e-9):
                check = "INPUTS-DIFFER"
            elif abs(emlx.checksum - best.checksum) <= case.rtol * max(1.0, abs(best.checksum)):
                check = "ok"
            else:
                check = "MISMATCH"
        rows.append((name, emlx, best, check))

    print()
    print("time ratio = emlx / numpy (lower is better; < 1 means EMLX is faster); "
          "speedup = numpy / emlx")
    if emlx_header:
        f = parse_line(emlx_header)
        print(f"emlx_num_threads={f.get('threads', '?')} simd={f.get('simd', '?')}; "
              "numpy: 1 thread for elementwise ops and reductions (see the threads column)")
    w = max(len(n) for n in names)
    vw = max([7] + [len(best.variant) for _, _, best, _ in rows])
    hdr = (f"{'case':<{w}} {'emlx ms':>9} {'numpy ms':>9} {'variant':>{vw}} {'threads':>7} "
           f"{'ratio':>6} {'speedup':>7}  check")
    print(hdr)
    print("-" * len(hdr))
    status = 0
    slower = []
    for name, emlx, best, check in rows:
        e_thr = emlx.fields.get("threads", "?") if emlx else "-"
        thr = f"{e_thr}/{CASES[name].numpy_threads}"
        if emlx is None:
            print(f"{name:<{w}} {'-':>9} {best.median_ms:>9.3f} {best.variant:>{vw}} {thr:>7} "
                  f"{'-':>6} {'-':>7}  {'FAILED' if not args.numpy_only else '-'}")
            if not args.numpy_only:
                status = 1
            continue
        ratio = emlx.median_ms / best.median_ms
        speedup = best.median_ms / emlx.median_ms
        flag = "" if ratio <= 1.0 else "  SLOWER"
        print(f"{name:<{w}} {emlx.median_ms:>9.3f} {best.median_ms:>9.3f} {best.variant:>{vw}} "
              f"{thr:>7} {ratio:>6.3f} {speedup:>6.2f}x  {check}{flag}")
        if check != "ok":
            status = 1
        if ratio > 1.0:
            slower.append(name)
    print("(threads: emlx/numpy; ratio: emlx/numpy time; speedup: numpy/emlx time)")
    for name, emlx, best, check in rows:
        if emlx is not None:
            print(f"ratio case={name} emlx_ms={emlx.median_ms:.4f} numpy_ms={best.median_ms:.4f} "
                  f"time_ratio={emlx.median_ms / best.median_ms:.4f} "
                  f"speedup={best.median_ms / emlx.median_ms:.4f} "
                  f"numpy_variant={best.variant} emlx_threads={emlx.fields.get('threads', '?')} "
                  f"numpy_threads={CASES[name].numpy_threads} check={check}")
    if not args.numpy_only:
        print("goal (no case slower than numpy): " +
              ("met" if not slower else "NOT met: " + ", ".join(slower)))
        if slower and args.strict:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
