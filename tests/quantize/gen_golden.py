#!/usr/bin/env python3
"""Writes the golden vectors of tests/quantize/test_quantize_golden.c, made by
MLX itself (mx.quantize, mx.dequantize, mx.quantized_matmul, mx.gather_qmm on
the CPU), so that EMLX's formats are checked bit for bit against MLX's.

    pip install "mlx[cpu]" numpy && python3 tests/quantize/gen_golden.py

quant_golden.bin: one record per (mode, bits, group size, input dtype):
  header  u32 magic 0x51524543 ("CERQ"), u8 mode (0 affine, 1 mxfp4,
          2 mxfp8, 3 nvfp4), u8 bits, u8 dtype (0 f32, 1 f16, 2 bf16),
          u8 0, u16 group, u16 0, u32 rows, u32 K
  then    input [rows][K] (dtype), packed words [rows][K*bits/32] (u32),
          scales [rows][K/group] (dtype; u8 for mx/nv), biases (affine only,
          dtype), dequantize(...) with its default dtype [rows][K] (the input
          dtype for affine, bf16 for the others).
f16 and bf16 inputs cover every mode and bit width at group 64 and every
group size at 4 bits (f32 covers everything), to keep the file small.
The rows are groups of known trouble: random normals, a constant group, zeros,
exact ties of the rounding (half-steps for affine, e2m1 midpoints for fp),
huge and tiny magnitudes (subnormals included), NaN and +-Inf, one-sided
groups.

qmm_golden.bin: one record per quantized_matmul / gather_qmm case:
  header  u32 magic 0x524d4d51 ("QMMR"), u8 mode, u8 bits, u8 x dtype,
          u8 transpose, u16 group, u16 kind (0 qmm, 1 gather_qmm),
          u32 batch (x batch for qmm; x matrices for gather), u32 M, u32 K,
          u32 N, u32 experts (w batch), u32 count (gather outputs; 0 for qmm)
  then    x [batch][M][K] (x dtype), w packed [experts][...] (u32), scales,
          biases (affine), lhs [count] u32, rhs [count] u32 (gather only),
          out (x dtype for every case here: weights are quantized from x's
          dtype) [batch or count][M][N].
"""
import os
import struct

import mlx.core as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = {"affine": 0, "mxfp4": 1, "mxfp8": 2, "nvfp4": 3}
DTYPES = [(0, mx.float32), (1, mx.float16), (2, mx.bfloat16)]
ROWS = 12
K = 128


def raw(a):
    """Bytes of an mx array in its own dtype (bf16 through a uint16 view)."""
    if a.dtype == mx.bfloat16:
        return np.array(a.view(mx.uint16)).tobytes()
    return np.array(a).tobytes()


def rows_for(mode, bits, group, dt, rng):
    big = {mx.float32: 3e38, mx.float16: 6e4, mx.bfloat16: 3e38}[dt]
    tiny = {mx.float32: 1e-40, mx.float16: 1e-7, mx.bfloat16: 1e-40}[dt]
    r = []
    r.append(rng.standard_normal(K))  # plain
    r.append(np.full(K, 0.7312))  # constant groups
    r.append(np.zeros(K))  # zeros
    if mode == "affine":  # values on half-steps of an exact scale: ties
        n_bins = (1 << bits) - 1
        t = np.array([(j % (2 * n_bins)) * 0.5 for j in range(K)])
        for g in range(0, K, group):
            t[g] = 0.0
            t[g + 1] = n_bins
        r.append(t)
        r.append(-t)
    else:  # e2m1 midpoints with amax 6: scale exactly 1
        pat = [6, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, -0.25, -0.75, -1.25, -1.75, -2.5, -3.5, -5, 0.1]
        t = np.array([pat[j % 16] for j in range(K)], dtype=np.float64)
        r.append(t)
        r.append(t * 2.0**-3 * 1.0625)
    r.append(rng.standard_normal(K) * big / 8)  # huge
    r.append(rng.standard_normal(K) * tiny)  # tiny (subnormal)
    x = rng.standard_normal(K)
    x[3] = np.nan
    x[group + 5 if group + 5 < K else 9] = np.nan
    r.append(x)  # NaN
    x = rng.standard_normal(K)
    x[0] = np.inf
    x[min(K - 1, group + 1)] = -np.inf
    r.append(x)  # Inf
    r.append(np.abs(rng.standard_normal(K)) + 3.0)  # one-sided positive
    r.append(-np.abs(rng.standard_normal(K)) * 1e-3 - 1e-3)  # one-sided negative, small
    x = rng.standard_normal(K) * np.exp(rng.uniform(-20, 20, K))
    r.append(x)  # wide range inside a group
    a = np.stack(r).astype(np.float32)
    assert a.shape == (ROWS, K)
    return mx.array(a).astype(dt)


def quant_records():
    out = bytearray()
    rng = np.random.default_rng(15)
    cases = []
    for bits in (2, 3, 4, 5, 6, 8):
        for group in (32, 64, 128):
            cases.append(("affine", bits, group))
    cases += [("mxfp4", 4, 32), ("mxfp8", 8, 32), ("nvfp4", 4, 16)]
    for mode, bits, group in cases:
        for dcode, dt in DTYPES:
            # f16/bf16: every mode and bit width at group 64 (the mx/nv modes
            # at their own group), every group size at 4 bits; f32: all.
            if dcode != 0 and mode == "affine" and group != 64 and bits != 4:
                continue
            w = rows_for(mode, bits, group, dt, rng)
            res = mx.quantize(w, group_size=group, bits=bits, mode=mode)
            wq, scales = res[0], res[1]
            biases = res[2] if mode == "affine" else None
            deq = mx.dequantize(wq, scales, biases, group_size=group, bits=bits, mode=mode)
            mx.eval(wq, scales, deq)
            assert wq.dtype == mx.uint32 and wq.shape == (ROWS, K * bits // 32)
            assert deq.dtype == (dt if mode == "affine" else mx.bfloat16)
            out += struct.pack("<IBBBBHHII", 0x51524543, MODES[mode], bits, dcode, 0, group, 0, ROWS, K)
            out += raw(w) + raw(wq) + raw(scales)
            if biases is not None:
                out += raw(biases)
            out += raw(deq)
    return out


def qmm_records():
    out = bytearray()
    rng = np.random.default_rng(16)
    cases = []
    for bits in (2, 3, 4, 5, 6, 8):
        cases.append(("affine", bits, 64, mx.float32))
    cases += [("affine", 4, 32, mx.float16), ("affine", 4, 128, mx.bfloat16)]
    cases += [("mxfp4", 4, 32, mx.float32), ("mxfp8", 8, 32, mx.float32), ("nvfp4", 4, 16, mx.float32)]
    cases += [("mxfp4", 4, 32, mx.float16)]
    dcode_of = {mx.float32: 0, mx.float16: 1, mx.bfloat16: 2}
    for mode, bits, group, dt in cases:
        for transpose in (True, False):
            batch, M, Kd = 2, 3, 128
            N = 32 if transpose else max(group, 32)
            x = mx.array(rng.standard_normal((batch, M, Kd)).astype(np.float32)).astype(dt)
            wshape = (batch, N, Kd) if transpose else (batch, Kd, N)
            wf = mx.array(rng.standard_normal(wshape).astype(np.float32)).astype(dt)
            res = mx.quantize(wf, group_size=group, bits=bits, mode=mode)
            wq, scales = res[0], res[1]
            biases = res[2] if mode == "affine" else None
            y = mx.quantized_matmul(x, wq, scales, biases, transpose=transpose, group_size=group, bits=bits, mode=mode)
            mx.eval(y)
            assert y.dtype == dt and y.shape == (batch, M, N)
            out += struct.pack("<IBBBBHHIIIIII", 0x524D4D51, MODES[mode], bits, dcode_of[dt], int(transpose), group, 0,
                               batch, M, Kd, N, batch, 0)
            out += raw(x) + raw(wq) + raw(scales)
            if biases is not None:
                out += raw(biases)
            out += raw(y)
    # gather_qmm: 4 experts, x with 3 matrices, 5 (lhs, rhs) pairs.
    for mode, bits, group in (("affine", 4, 64), ("affine", 3, 32), ("mxfp4", 4, 32), ("nvfp4", 4, 16)):
        for transpose in (True, False):
            E, B, M, Kd, N = 4, 3, 2, 64, 64
            x = mx.array(rng.standard_normal((B, M, Kd)).astype(np.float32))
            wshape = (E, N, Kd) if transpose else (E, Kd, N)
            wf = mx.array(rng.standard_normal(wshape).astype(np.float32))
            res = mx.quantize(wf, group_size=group, bits=bits, mode=mode)
            wq, scales = res[0], res[1]
            biases = res[2] if mode == "affine" else None
            lhs = mx.array([2, 0, 1, 1, 0], dtype=mx.uint32)
            rhs = mx.array([3, 3, 0, 2, 1], dtype=mx.uint32)
            y = mx.gather_qmm(x, wq, scales, biases, lhs_indices=lhs, rhs_indices=rhs, transpose=transpose,
                              group_size=group, bits=bits, mode=mode)
            mx.eval(y)
            assert y.shape == (5, M, N)
            out += struct.pack("<IBBBBHHIIIIII", 0x524D4D51, MODES[mode], bits, 0, int(transpose), group, 1,
                               B, M, Kd, N, E, 5)
            out += raw(x) + raw(wq) + raw(scales)
            if biases is not None:
                out += raw(biases)
            out += raw(lhs) + raw(rhs) + raw(y)
    return out


def main():
    mx.set_default_device(mx.cpu)
    q = quant_records()
    m = qmm_records()
    with open(os.path.join(HERE, "quant_golden.bin"), "wb") as f:
        f.write(q)
    with open(os.path.join(HERE, "qmm_golden.bin"), "wb") as f:
        f.write(m)
    print(f"quant_golden.bin {len(q)} bytes, qmm_golden.bin {len(m)} bytes (mlx {mx.__version__})")


if __name__ == "__main__":
    main()
