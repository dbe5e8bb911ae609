# scalar equals `gpuparanoia model scalar` bit for bit, flags included, and refuses what it cannot do.
import subprocess
import zlib

import numpy as np
import pytest

import gpuparanoia
from conftest import hex_line, storage_dtype
from test_matmul_model_dot import random_bits

OPS = {"add": 2, "sub": 2, "mul": 2, "div": 2, "sqrt": 1, "fma": 3}
CASES = [(op, fmt, rounding) for op in OPS for fmt in ("binary32", "binary16", "bfloat16", "e4m3", "e2m1", "binary64")
         for rounding in ("rne", "rz", "ru")]


def model_scalar(binary, options, lines):
    run = subprocess.run([binary, "model", "scalar", "--flags", *options], input="".join(lines), capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    pairs = [line.split() for line in run.stdout.splitlines()]
    return [int(d, 16) for d, _ in pairs], [int(f, 16) for _, f in pairs]


@pytest.mark.parametrize("op,fmt,rounding", CASES, ids=["-".join(c) for c in CASES])
def test_equals_model_scalar(op, fmt, rounding, binary, formats):
    rng = np.random.default_rng(zlib.crc32(f"{op} {fmt} {rounding}".encode()))
    operands = [random_bits(rng, formats[fmt], (40,)) for _ in range(OPS[op])]
    d, flags = gpuparanoia.scalar(op, *operands, format=fmt, rounding=rounding, bits=True, flags=True)
    assert d.shape == (40,) and d.dtype == storage_dtype(formats[fmt])
    lines = [hex_line(t) for t in zip(*operands)]
    expected, expected_flags = model_scalar(binary, ["--op", op, "--format", fmt, "--rounding", rounding], lines)
    assert [int(x) for x in d] == expected
    assert [int(x) for x in flags] == expected_flags


def test_cvt_and_options_equal_model_scalar(binary, formats):
    rng = np.random.default_rng(3)
    x = random_bits(rng, formats["binary32"], (64,))
    for options in (dict(), dict(saturate=True), dict(ftz=["in", "out"]), dict(canonical_nan=True)):
        d = gpuparanoia.scalar("cvt", x, format="e4m3", from_format="binary32", bits=True, **options)
        cli = ["--op", "cvt", "--format", "e4m3", "--from", "binary32"]
        cli += ["--saturate"] if options.get("saturate") else []
        cli += ["--ftz", "in,out"] if options.get("ftz") else []
        cli += ["--canonical-nan"] if options.get("canonical_nan") else []
        assert [int(v) for v in d] == model_scalar(binary, cli, [hex_line([v]) for v in x])[0], options


def test_values_broadcast():
    d = gpuparanoia.scalar("add", np.float32([1, 2, 3]), np.float32([[0.5], [1e-8]]))
    assert d.dtype == np.float32 and d.shape == (2, 3)
    assert np.array_equal(d, np.float32([[1.5, 2.5, 3.5], [1, 2, 3]]))
    # Directed rounding: 1 + 1e-8 rounds up to the next float32.
    up = gpuparanoia.scalar("add", np.float32(1), np.float32(1e-8), rounding="ru")
    assert up.shape == () and up == np.nextafter(np.float32(1), np.float32(2))
    assert gpuparanoia.scalar("sqrt", np.float16([4, 2]), format="binary16").dtype == np.float16


@pytest.mark.parametrize("call,kind,message", [
    (lambda: gpuparanoia.scalar("pow", np.float32(1), np.float32(2)), ValueError, r"unknown op 'pow'"),
    (lambda: gpuparanoia.scalar("add", np.float32(1)), ValueError, r"add takes 2 operands, not 1"),
    (lambda: gpuparanoia.scalar("add", 1, 2, format="binary33"), ValueError, r"format: unknown format 'binary33'"),
    (lambda: gpuparanoia.scalar("add", 1.0, 2.0, rounding="up"), ValueError, r"rounding: unknown rounding 'up'"),
    (lambda: gpuparanoia.scalar("cvt", 1.0), ValueError, r"cvt needs from_format"),
    (lambda: gpuparanoia.scalar("add", 1.0, 2.0, from_format="binary16"), ValueError, r"from_format applies to cvt"),
    (lambda: gpuparanoia.scalar("add", 1.0, 2.0, ftz=["both"]), ValueError, r"ftz: 'in' and 'out', not 'both'"),
    (lambda: gpuparanoia.scalar("add", np.int32(1), 2.0), TypeError, r"operand 0: dtype int32"),
    (lambda: gpuparanoia.scalar("add", np.zeros(3), np.zeros(4)), ValueError, r"do not broadcast"),
    (lambda: gpuparanoia.scalar("add", np.float32([1, 0.1]), 1.0, format="binary16"), ValueError,
     r"operand 0\[1\] = .*0\.1.* is not exact in binary16"),
    (lambda: gpuparanoia.scalar("add", np.uint32([0x1ffff]), np.uint16(0), format="binary16"), ValueError,
     r"operand 0\[0\] = .*131071.* not a bit pattern of binary16 \(16 bits\)"),
])
def test_errors(call, kind, message):
    with pytest.raises(kind, match=message):
        call()
