#!/usr/bin/env python3
"""gen_fast_golden.py — golden outputs of MLX's mx.fast for tests/fast/test_fast_golden.c.

Writes tests/fast/fast_golden.h: for each case, the inputs (already rounded
to the case's dtype), the parameters, and MLX's output, all as float32
values printed with 9 significant digits (exact round trips).

  /opt/peers/bin/python tests/fast/gen_fast_golden.py   # needs mlx (pip install "mlx[cpu]")

What each EMLX function is compared with:
  rms_norm, layer_norm(_no_bias)  mx.fast.rms_norm / mx.fast.layer_norm
  rope (axis -2 is T)             mx.fast.rope(x, offset=int)
  rope_ids ({B, T, H, D})         mx.fast.rope on x transposed to {B, H, T, D}
                                  with offset=mx.array(offsets), transposed back
  rope_with_freqs                 the same with freqs= instead of base
  rope_positions                  mx.fast.rope of each token alone ({1, H, 1, D})
                                  at offset=positions[b, t]
  swiglu                          g * mx.sigmoid(g) * u (mx.fast has no swiglu)
The test itself needs no Python.
"""
import os

import mlx.core as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fast_golden.h")
DT = {"f32": (mx.float32, "EMLX_FLOAT32"), "f16": (mx.float16, "EMLX_FLOAT16"),
      "bf16": (mx.bfloat16, "EMLX_BFLOAT16")}

rng = np.random.default_rng(20261201)
cases = []


def arr(shape, dt, lo=-1.0, hi=1.0):
    a = mx.array(rng.uniform(lo, hi, size=shape).astype(np.float32)).astype(DT[dt][0])
    return a


def vals(a):
    return np.array(a.astype(mx.float32)).reshape(-1)


def add(name, op, dt, x, out, **kw):
    cases.append(dict(name=name, op=op, dt=dt, x=x, out=out, **kw))


for dt in DT:
    # rms_norm: odd row length, weight, and a row of a different scale
    x = arr((2, 3, 37), dt, -2, 2)
    w = arr((37,), dt, 0.5, 1.5)
    add(f"rms_norm_{dt}", "FG_RMS", dt, x, mx.fast.rms_norm(x, w, 1e-5), w=w, eps=1e-5)
    x = arr((2, 65), dt, -3, 3)
    add(f"rms_norm_noweight_{dt}", "FG_RMS", dt, x, mx.fast.rms_norm(x, None, 1e-6), eps=1e-6)
    # layer_norm with and without bias; a shifted input (mean far from 0)
    x = arr((4, 33), dt, 1, 3)
    w = arr((33,), dt, 0.5, 1.5)
    b = arr((33,), dt, -0.5, 0.5)
    add(f"layer_norm_{dt}", "FG_LN", dt, x, mx.fast.layer_norm(x, w, b, 1e-5), w=w, b=b, eps=1e-5)
    add(f"layer_norm_no_bias_{dt}", "FG_LN_NOBIAS", dt, x,
        mx.fast.layer_norm(x, w, None, 1e-5), w=w, eps=1e-5)

    # rope, T on axis -2: {B, H, T, D}
    for trad in (False, True):
        x = arr((2, 3, 5, 16), dt)
        add(f"rope_{'trad' if trad else 'half'}_{dt}", "FG_ROPE", dt, x,
            mx.fast.rope(x, 16, traditional=trad, base=10000.0, scale=1.0, offset=5),
            dims=16, trad=trad, base=10000.0, scale=1.0, offset=5)
        # dims < D (the rest untouched), a scale, rank 3 and a large offset
        x = arr((2, 7, 20), dt)
        add(f"rope_partial_{'trad' if trad else 'half'}_{dt}", "FG_ROPE", dt, x,
            mx.fast.rope(x, 12, traditional=trad, base=500000.0, scale=0.5, offset=1000),
            dims=12, trad=trad, base=500000.0, scale=0.5, offset=1000)
        # rank 5: axes 1..2 are heads, T is axis -2
        x = arr((1, 2, 2, 3, 8), dt)
        add(f"rope_rank5_{'trad' if trad else 'half'}_{dt}", "FG_ROPE", dt, x,
            mx.fast.rope(x, 8, traditional=trad, base=10000.0, scale=1.0, offset=2),
            dims=8, trad=trad, base=10000.0, scale=1.0, offset=2)

        # rope_ids on {B, T, H, D}: MLX on {B, H, T, D}, transposed both ways
        x = arr((2, 5, 3, 12), dt)
        offs = np.array([3, 11], dtype=np.int32)
        ref = mx.fast.rope(x.transpose(0, 2, 1, 3), 10, traditional=trad, base=10000.0,
                           scale=1.0, offset=mx.array(offs)).transpose(0, 2, 1, 3)
        add(f"rope_ids_{'trad' if trad else 'half'}_{dt}", "FG_ROPE_IDS", dt, x, ref,
            dims=10, trad=trad, base=10000.0, scale=1.0, ints=offs)

        # rope_with_freqs: MLX's freqs are the reciprocals of inverse frequencies
        freqs = mx.array((10000.0 ** (np.arange(0, 12, 2) / 12.0) *
                          np.linspace(1, 4, 6)).astype(np.float32))
        ref = mx.fast.rope(x.transpose(0, 2, 1, 3), 12, traditional=trad, base=None,
                           scale=1.0, offset=mx.array(offs), freqs=freqs).transpose(0, 2, 1, 3)
        add(f"rope_freqs_{'trad' if trad else 'half'}_{dt}", "FG_ROPE_FREQS", dt, x, ref,
            dims=12, trad=trad, scale=1.0, ints=offs, freqs=freqs)

        # rope_positions on {B, T, H, D}: arbitrary positions, each token alone
        pos = np.array([[0, 0, 1, 2, 3], [7, 3, 9, 100, 4]], dtype=np.int32)
        outs = []
        for bi in range(2):
            row = []
            for ti in range(5):
                tok = x[bi, ti].reshape(1, 3, 1, 12)
                r = mx.fast.rope(tok, 8, traditional=trad, base=1000000.0, scale=1.0,
                                 offset=int(pos[bi, ti]))
                row.append(r.reshape(1, 3, 12))
            outs.append(mx.concatenate(row, axis=0))
        ref = mx.stack(outs, axis=0)
        add(f"rope_positions_{'trad' if trad else 'half'}_{dt}", "FG_ROPE_POS", dt, x, ref,
            dims=8, trad=trad, base=1000000.0, scale=1.0, ints=pos.reshape(-1))

    # swiglu: odd size, a wide range so both tails of sigmoid are hit
    g = arr((3, 67), dt, -12, 12)
    u = arr((3, 67), dt, -2, 2)
    add(f"swiglu_{dt}", "FG_SWIGLU", dt, g, g * mx.sigmoid(g) * u, u=u)


def fl(v):
    return ", ".join("%.9g" % float(t) for t in v)


with open(OUT, "w") as f:
    f.write("/* fast_golden.h — MLX %s's mx.fast outputs for test_fast_golden.c; generated by\n"
            " * gen_fast_golden.py (do not edit). Values are float32, already rounded to\n"
            " * each case's dtype. */\n" % mx.__version__)
    f.write("#include <stdint.h>\n\n")
    for i, c in enumerate(cases):
        for key in ("x", "w", "b", "u", "freqs", "out"):
            if key in c:
                v = vals(c[key])
                f.write("static const float fg_%d_%s[%d] = {%s};\n" % (i, key, len(v), fl(v)))
        if "ints" in c:
            f.write("static const int64_t fg_%d_ints[%d] = {%s};\n" %
                    (i, len(c["ints"]), ", ".join(str(int(t)) for t in c["ints"])))
    f.write("\nstatic const fg_case fg_cases[] = {\n")
    for i, c in enumerate(cases):
        shape = list(c["x"].shape)
        def ref(key):
            return "fg_%d_%s" % (i, key) if key in c else "NULL"
        f.write("    {\"%s\", %s, %s, %d, {%s}, %d, %d, %.9ef, %.9ef, %.9ef, %d, %d, %s, %s, %s, %s, %s, "
                "%s, %s},\n" % (
                    c["name"], c["op"], DT[c["dt"]][1], len(shape), ", ".join(map(str, shape)),
                    c.get("dims", 0), int(c.get("trad", False)), c.get("base", 0.0),
                    c.get("scale", 0.0), c.get("eps", 0.0), c.get("offset", 0),
                    len(c["ints"]) if "ints" in c else 0, ref("ints"), ref("x"), ref("w"),
                    ref("b"), ref("u"), ref("freqs"), ref("out")))
    f.write("};\n")
print("wrote", OUT, len(cases), "cases")
