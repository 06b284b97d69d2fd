"""Makes tests/quantize/qmm_fast_mlx.bin: a few small quantized matmuls
computed by MLX itself (mx.quantize + mx.quantized_matmul on the CPU), for
test_qmm_fast.c to check the fast kernels and its own reference against.

Run: /opt/peers/bin/python tests/quantize/gen_qmm_fast_mlx.py
(any Python with mlx[cpu] and numpy; mlx 0.32 made the committed file).

Format (little-endian): b"QMMFAST1", int32 ncases, then per case int32
mode (0 affine, 1 mxfp4, 2 mxfp8, 3 nvfp4), bits, group_size, transpose, M,
N, K; float32 x [M][K]; uint32 w words; scales (float32 for affine, uint8
otherwise); float32 biases (affine only); float32 out [M][N].
"""
import os
import struct

import mlx.core as mx
import numpy as np

MODES = {"affine": 0, "mxfp4": 1, "mxfp8": 2, "nvfp4": 3}
CASES = [  # mode, bits, group, transpose, M, N, K
    ("affine", 4, 64, True, 3, 24, 128),
    ("affine", 4, 32, False, 2, 64, 24),
    ("affine", 4, 128, True, 20, 16, 256),
    ("affine", 8, 64, True, 1, 16, 128),
    ("affine", 8, 32, False, 3, 32, 16),
    ("affine", 2, 64, True, 2, 16, 128),
    ("affine", 3, 32, True, 2, 16, 96),
    ("affine", 5, 64, False, 2, 64, 16),
    ("affine", 6, 128, True, 2, 8, 256),
    ("mxfp4", 4, 32, True, 3, 24, 128),
    ("mxfp4", 4, 32, False, 2, 64, 24),
    ("mxfp8", 8, 32, True, 2, 16, 96),
    ("nvfp4", 4, 16, True, 18, 16, 64),
    ("nvfp4", 4, 16, False, 2, 48, 16),
]


def main():
    rng = np.random.default_rng(15)
    out = bytearray(b"QMMFAST1")
    out += struct.pack("<i", len(CASES))
    for mode, bits, gs, tr, M, N, K in CASES:
        wshape = (N, K) if tr else (K, N)
        w = mx.array(rng.standard_normal(wshape).astype(np.float32) * 0.1)
        x = mx.array(rng.uniform(-1, 1, (M, K)).astype(np.float32))
        q = mx.quantize(w, group_size=gs, bits=bits, mode=mode)
        wq, scales = q[0], q[1]
        biases = q[2] if mode == "affine" else None
        y = mx.quantized_matmul(x, wq, scales, biases, transpose=tr, group_size=gs,
                                bits=bits, mode=mode)
        mx.eval(y)
        out += struct.pack("<7i", MODES[mode], bits, gs, int(tr), M, N, K)
        out += np.asarray(x, dtype=np.float32).tobytes()
        out += np.asarray(wq).astype(np.uint32).tobytes()
        if mode == "affine":
            out += np.asarray(scales).astype(np.float32).tobytes()
            out += np.asarray(biases).astype(np.float32).tobytes()
        else:
            out += np.asarray(scales).astype(np.uint8).tobytes()
        out += np.asarray(y, dtype=np.float32).tobytes()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "qmm_fast_mlx.bin")
    with open(path, "wb") as f:
        f.write(out)
    print(f"{path}: {len(CASES)} cases, {len(out)} bytes")


if __name__ == "__main__":
    main()
