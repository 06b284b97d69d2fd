#!/usr/bin/env python3
"""Writes math_edges_ref.h: the correctly rounded results of the unary
transcendentals at the ends of their range, for test_math_edges.c.

For every function and float format (f64, f32, f16, bf16) the inputs are the
format's special values (+-0, the smallest and largest subnormal, the
smallest normal, the largest finite value, +-inf, NaN) plus the function's
own thresholds, found by bisection over the format's values: the last input
whose correctly rounded result is finite (overflow), non-zero or normal
(underflow), or not yet saturated (tanh, erf, sigmoid reaching 1), with its
neighbours. Results are computed with mpmath at 2200 bits (enough for the
argument reduction of sin/cos/tan at the largest f64) and rounded to the
format, subnormals and overflow included; special inputs follow C99 Annex F.

    pip install mpmath && python3 tests/elementwise/math_edges_gen.py
"""
import math
import os
import struct

import mpmath
from mpmath import mp, mpf

mp.prec = 2200

# name: (precision p, emin, emax)
FORMATS = {
    "f64": (53, -1022, 1023),
    "f32": (24, -126, 127),
    "f16": (11, -14, 15),
    "bf16": (8, -126, 127),
}
INF = float("inf")
NAN = float("nan")


def max_finite(fmt):
    p, _, emax = FORMATS[fmt]
    return (2.0 - 2.0 ** (1 - p)) * 2.0**emax


def min_sub(fmt):
    p, emin, _ = FORMATS[fmt]
    return 2.0 ** (emin - p + 1)


def round_to(v, fmt):
    """The format's value nearest the real v (ties to even), as a float."""
    p, emin, emax = FORMATS[fmt]
    if v == 0:
        return 0.0
    neg = v < 0
    a = -v if neg else v
    e = int(mpmath.floor(mpmath.log(a, 2)))
    # log2 may be off by one right at a power of two: fix e exactly
    while mpf(2) ** e > a:
        e -= 1
    while mpf(2) ** (e + 1) <= a:
        e += 1
    q = mpf(2) ** ((e if e >= emin else emin) - p + 1)
    m = a / q
    fl = mpmath.floor(m)
    frac = m - fl
    if frac > 0.5 or (frac == 0.5 and int(fl) % 2 == 1):
        fl += 1
    r = fl * q
    if r > max_finite(fmt):
        out = INF
    else:
        out = float(r)  # exact: r has at most p <= 53 bits
    return -out if neg else out


def values(fmt):
    """Every non-negative finite value of the format, as a callable index."""
    p, emin, emax = FORMATS[fmt]
    nsub = 2 ** (p - 1)  # subnormals and zero per binade-like block

    def at(k):  # k-th non-negative value, 0 -> 0.0
        if k < nsub:
            return k * min_sub(fmt)
        b, m = divmod(k - nsub, nsub)
        return (1.0 + m / nsub) * 2.0 ** (emin + b)

    count = nsub * (emax - emin + 2)
    return at, count


def index_of(x, fmt):
    at, count = values(fmt)
    lo, hi = 0, count - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if at(mid) <= x:
            lo = mid
        else:
            hi = mid - 1
    return lo


def last_true(pred, lo, hi, fmt):
    """The largest non-negative format value in [lo, hi] with pred true,
    pred being true at lo and monotone (true, then false)."""
    at, _ = values(fmt)
    a, b = index_of(lo, fmt), index_of(hi, fmt)
    while a < b:
        mid = (a + b + 1) // 2
        if pred(at(mid)):
            a = mid
        else:
            b = mid - 1
    return a


def around(k, fmt, sign=1.0):
    at, count = values(fmt)
    return [sign * at(j) for j in (k - 1, k, k + 1) if 0 <= j < count]


# ---- the functions: exact value at a finite non-zero x (None: NaN) -----------
def real(z):
    if isinstance(z, mpmath.mpc):
        return None if z.imag != 0 else z.real
    return z


def safe(f):
    def g(x):
        try:
            return real(f(mpf(x)))
        except (ValueError, ZeroDivisionError):
            return None

    return g


FUNCS = {
    "exp": safe(mpmath.exp),
    "expm1": safe(mpmath.expm1),
    "log": safe(lambda x: mpmath.log(x) if x > 0 else None),
    "log1p": safe(lambda x: mpmath.log1p(x) if x > -1 else None),
    "sqrt": safe(lambda x: mpmath.sqrt(x) if x >= 0 else None),
    "rsqrt": safe(lambda x: 1 / mpmath.sqrt(x) if x > 0 else None),
    "sin": safe(mpmath.sin),
    "cos": safe(mpmath.cos),
    "tan": safe(mpmath.tan),
    "asin": safe(lambda x: mpmath.asin(x) if abs(x) <= 1 else None),
    "acos": safe(lambda x: mpmath.acos(x) if abs(x) <= 1 else None),
    "atan": safe(mpmath.atan),
    "sinh": safe(mpmath.sinh),
    "cosh": safe(mpmath.cosh),
    "tanh": safe(mpmath.tanh),
    "asinh": safe(mpmath.asinh),
    "acosh": safe(lambda x: mpmath.acosh(x) if x >= 1 else None),
    "atanh": safe(lambda x: mpmath.atanh(x) if abs(x) < 1 else None),
    "erf": safe(mpmath.erf),
    "erf_inv": safe(lambda x: mpmath.erfinv(x) if abs(x) < 1 else None),
    "sigmoid": safe(lambda x: 1 / (1 + mpmath.exp(-x))),
}

# C99 Annex F (and the header's own rules) at +-0, +-inf; NaN gives NaN.
PI2 = mpmath.pi / 2
SPECIAL = {
    #          +0      -0      +inf     -inf
    "exp": (1, 1, INF, 0.0),
    "expm1": (0.0, -0.0, INF, -1),
    "log": (-INF, -INF, INF, NAN),
    "log1p": (0.0, -0.0, INF, NAN),
    "sqrt": (0.0, -0.0, INF, NAN),
    "rsqrt": (INF, -INF, 0.0, NAN),
    "sin": (0.0, -0.0, NAN, NAN),
    "cos": (1, 1, NAN, NAN),
    "tan": (0.0, -0.0, NAN, NAN),
    "asin": (0.0, -0.0, NAN, NAN),
    "acos": (PI2, PI2, NAN, NAN),
    "atan": (0.0, -0.0, PI2, -PI2),
    "sinh": (0.0, -0.0, INF, -INF),
    "cosh": (1, 1, INF, INF),
    "tanh": (0.0, -0.0, 1, -1),
    "asinh": (0.0, -0.0, INF, -INF),
    "acosh": (NAN, NAN, INF, NAN),
    "atanh": (0.0, -0.0, NAN, NAN),
    "erf": (0.0, -0.0, 1, -1),
    "erf_inv": (0.0, -0.0, NAN, NAN),
    "sigmoid": (0.5, 0.5, 1, 0.0),
}
# Finite inputs whose exact result is infinite (poles).
POLES = {"atanh": {1.0: INF, -1.0: -INF}, "erf_inv": {1.0: INF, -1.0: -INF},
         "log1p": {-1.0: -INF}}


def reference(name, x, fmt):
    if x != x:
        return NAN
    if x == 0 or math.isinf(x):
        i = (0 if x == 0 else 2) + (1 if math.copysign(1.0, x) < 0 else 0)
        v = SPECIAL[name][i]
        if isinstance(v, float) and (v != v or math.isinf(v) or v == 0):
            return v
        return round_to(mpf(v), fmt)
    if x in POLES.get(name, {}):
        return POLES[name][x]
    v = FUNCS[name](x)
    if v is None:
        return NAN
    r = round_to(v, fmt)
    if r == 0 and v < 0:
        return -0.0
    return r


def cr(name, fmt):
    f = FUNCS[name]
    return lambda x: round_to(f(x), fmt)


def thresholds(name, fmt):
    """The function's own range-end inputs in this format."""
    big = max_finite(fmt)
    tiny = min_sub(fmt)
    r = cr(name, fmt)
    xs = []
    fin = lambda y: not math.isinf(y)
    if name in ("exp", "expm1", "sinh", "cosh"):
        k = last_true(lambda x: fin(r(x)), tiny, big, fmt)
        xs += around(k, fmt)
        if name in ("sinh", "cosh"):
            xs += around(k, fmt, -1.0)
    if name == "exp":  # underflow: last -x giving a non-zero, a normal result
        k = last_true(lambda x: r(-x) != 0, tiny, big, fmt)
        xs += around(k, fmt, -1.0)
        _, emin, _ = FORMATS[fmt]
        k = last_true(lambda x: abs(r(-x)) >= 2.0**emin, tiny, big, fmt)
        xs += around(k, fmt, -1.0)
    if name == "expm1":  # reaching -1
        k = last_true(lambda x: r(-x) != -1.0, tiny, big, fmt)
        xs += around(k, fmt, -1.0)
    if name == "sigmoid":
        k = last_true(lambda x: r(-x) != 0, tiny, big, fmt)
        xs += around(k, fmt, -1.0)
        k = last_true(lambda x: r(x) != 1.0, tiny, big, fmt)
        xs += around(k, fmt)
    if name in ("tanh", "erf"):
        k = last_true(lambda x: r(x) != 1.0, tiny, big, fmt)
        xs += around(k, fmt) + around(k, fmt, -1.0)
    if name in ("asinh", "acosh"):  # x*x overflows past sqrt(max)
        k = index_of(float(mpmath.sqrt(big)), fmt)
        xs += around(k, fmt) + [big / 2, big]
        if name == "asinh":
            xs += around(k, fmt, -1.0) + [-big]
    if name == "log1p":
        xs += [big, big / 2, -1.0, -1.0 + 2.0 ** -FORMATS[fmt][0], -1.0 - 2.0 ** (1 - FORMATS[fmt][0])]
    if name in ("atanh", "erf_inv", "asin", "acos"):
        p = FORMATS[fmt][0]
        xs += [1.0, -1.0, 1.0 - 2.0**-p, -(1.0 - 2.0**-p), 1.0 + 2.0 ** (1 - p)]
    if name == "acosh":
        xs += [1.0, 1.0 + 2.0 ** (1 - FORMATS[fmt][0]), 1.0 - 2.0 ** -FORMATS[fmt][0]]
    if name in ("log", "sqrt", "rsqrt"):
        xs += [-1.0, 1.0]
    return xs


def inputs(name, fmt):
    p, emin, _ = FORMATS[fmt]
    big, tiny = max_finite(fmt), min_sub(fmt)
    maxsub = 2.0**emin - tiny
    base = [0.0, -0.0, tiny, -tiny, maxsub, -maxsub, 2.0**emin, -(2.0**emin), big, -big, INF, -INF,
            NAN]
    seen, out = set(), []
    for x in base + thresholds(name, fmt):
        key = struct.pack("<d", x) if x == x else b"nan"
        if key not in seen:
            seen.add(key)
            out.append(x)
    return out


def c_double(x):
    if x != x:
        return "NAN"
    if math.isinf(x):
        return "INFINITY" if x > 0 else "-INFINITY"
    return float.hex(x).replace("0x0.0p+0", "0x0p+0")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    rows = []
    for name in FUNCS:
        for fmt in FORMATS:
            for x in inputs(name, fmt):
                rows.append((name, fmt, x, reference(name, x, fmt)))
    with open(os.path.join(here, "math_edges_ref.h"), "w") as f:
        f.write("/* math_edges_ref.h — generated by math_edges_gen.py (mpmath %s); do not\n"
                " * edit. The correctly rounded result of each unary function at the ends of\n"
                " * its range, per float format: {function, format, input, result}. */\n"
                % mpmath.__version__)
        f.write("static const me_case me_cases[] = {\n")
        for name, fmt, x, ref in rows:
            f.write('    {"%s", ME_%s, %s, %s},\n' % (name, fmt.upper(), c_double(x), c_double(ref)))
        f.write("};\n")
    print("wrote %d cases" % len(rows))


if __name__ == "__main__":
    main()
