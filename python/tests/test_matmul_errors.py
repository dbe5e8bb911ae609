# matmul's refusals: each a Python exception that names what is wrong; nothing converted silently.
import numpy as np
import pytest

import gpuparanoia

HMMA = "hopper:HMMA.16816.F32"
FDA = dict(algorithm="fda", a_format="binary16", b_format="binary16", c_format="binary32", d_format="binary32")


def ones(m, n, dtype=np.float16):
    return np.ones((m, n), dtype)


def test_values_in_and_out():
    """float16 values in, float32 out: 16 products of 1 * 1 plus c."""
    d = gpuparanoia.matmul(ones(2, 16), ones(16, 3), np.full((2, 3), 0.5, np.float32), instruction=HMMA)
    assert d.dtype == np.float32 and d.shape == (2, 3) and np.all(d == 16.5)
    assert gpuparanoia.matmul(ones(2, 16), ones(16, 3), instruction="hopper:HMMA.16816.F16").dtype == np.float16
    assert gpuparanoia.matmul(ones(2, 16), ones(16, 3), instruction=HMMA, bits=True).dtype == np.uint32
    # float32 and float64 arrays holding binary16 values are the same operands.
    assert np.array_equal(d, gpuparanoia.matmul(ones(2, 16, np.float64), ones(16, 3, np.float32),
                                                np.full((2, 3), 0.5), instruction=HMMA))


@pytest.mark.parametrize("bad,kind,words", [
    (np.ones((2, 16), np.int64), TypeError, ["a:", "int64"]),
    (np.ones((2, 16), np.complex64), TypeError, ["a:", "complex64"]),
    (np.ones((2, 16), bool), TypeError, ["a:", "bool"]),
    (np.ones((2, 16), ">f4"), TypeError, ["a:", "big-endian"]),
    (np.ones(16, np.float16), ValueError, ["a must be 2-D", "(16,)"]),
    (np.ones((2, 16, 1), np.float16), ValueError, ["a must be 2-D", "(2, 16, 1)"]),
    ("text", TypeError, ["a:"]),
])
def test_wrong_dtype_or_rank(bad, kind, words):
    with pytest.raises(kind) as e:
        gpuparanoia.matmul(bad, ones(16, 3), instruction=HMMA)
    for w in words:
        assert w in str(e.value)


def test_shapes():
    with pytest.raises(ValueError, match=r"a is 2 x 16 and b is 8 x 3"):
        gpuparanoia.matmul(ones(2, 16), ones(8, 3), instruction=HMMA)
    with pytest.raises(ValueError, match=r"K = 24 is not a multiple of hopper:HMMA.16816.F32's K = 16"):
        gpuparanoia.matmul(ones(2, 24), ones(24, 3), instruction=HMMA)
    with pytest.raises(ValueError, match=r"c is 3 x 2.*c must be 2 x 3"):
        gpuparanoia.matmul(ones(2, 16), ones(16, 3), ones(3, 2, np.float32), instruction=HMMA)
    with pytest.raises(ValueError, match=r"K > 0"):
        gpuparanoia.matmul(ones(2, 0), ones(0, 3), instruction=HMMA)


def test_values_not_exact():
    a = ones(2, 16, np.float32)
    a[1, 5] = 0.1
    with pytest.raises(ValueError, match=r"a\[1, 5\] = .*0\.1.* is not exact in binary16"):
        gpuparanoia.matmul(a, ones(16, 3), instruction=HMMA)
    # Rounded on request: to nearest even, as numpy rounds to float16.
    assert np.array_equal(gpuparanoia.matmul(a, ones(16, 3), instruction=HMMA, round_inputs="rne"),
                          gpuparanoia.matmul(a.astype(np.float16), ones(16, 3), instruction=HMMA))
    with pytest.raises(ValueError, match=r"b\[0, 0\] = .*70000.* is not exact in binary16"):
        gpuparanoia.matmul(ones(2, 16), np.full((16, 3), 70000, np.float32), instruction=HMMA)
    e4m3 = "ada:QMMA.16832.F32.E4M3.E4M3"
    with pytest.raises(ValueError, match=r"a\[0, 0\] = .*inf.* e4m3"):
        gpuparanoia.matmul(np.full((1, 32), np.inf, np.float32), ones(32, 1), instruction=e4m3)
    with pytest.raises(ValueError, match=r"round_inputs"):
        gpuparanoia.matmul(ones(2, 16), ones(16, 3), instruction=HMMA, round_inputs="rz")


def test_bit_patterns_wider_than_the_format():
    with pytest.raises(ValueError, match=r"a\[0, 3\] = .*256.* not a bit pattern of e4m3 \(8 bits\)"):
        a = np.zeros((1, 32), np.uint16)
        a[0, 3] = 0x100
        gpuparanoia.matmul(a, np.zeros((32, 1), np.uint8), instruction="ada:QMMA.16832.F32.E4M3.E4M3")
    with pytest.raises(ValueError, match=r"not a bit pattern of e2m1 \(4 bits\)"):
        gpuparanoia.matmul(np.full((1, 64), 0x10, np.uint8), np.zeros((64, 1), np.uint8),
                           instruction="blackwell:UTCQMMMA.F32.E2M1.E2M1")


def test_names():
    with pytest.raises(ValueError, match=r"unknown instruction 'hopper:HMMA.9'"):
        gpuparanoia.matmul(ones(2, 16), ones(16, 3), instruction="hopper:HMMA.9")
    with pytest.raises(ValueError, match=r"unknown algorithm 'fdx'"):
        gpuparanoia.matmul(ones(2, 16), ones(16, 3), **{**FDA, "algorithm": "fdx"})
    with pytest.raises(ValueError, match=r"c_format: unknown format 'binary17'"):
        gpuparanoia.matmul(ones(2, 16), ones(16, 3), **{**FDA, "c_format": "binary17"})
    with pytest.raises(ValueError, match=r"algorithm= needs d_format"):
        gpuparanoia.matmul(ones(2, 16), ones(16, 3), **{**FDA, "d_format": None})
    with pytest.raises(ValueError, match=r"needs one of instruction="):
        gpuparanoia.matmul(ones(2, 16), ones(16, 3))
    with pytest.raises(ValueError, match=r"needs one of instruction="):
        gpuparanoia.matmul(ones(2, 16), ones(16, 3), instruction=HMMA, algorithm="fda")
    with pytest.raises(ValueError, match=r"a_format, F: the formats and parameters of hopper:HMMA.16816.F32"):
        gpuparanoia.matmul(ones(2, 16), ones(16, 3), instruction=HMMA, a_format="binary16", F=25)


@pytest.mark.parametrize("parameters,kind,message", [
    (dict(F2=3), ValueError, r"F2: unknown parameter \(known: F, block"),
    (dict(F="25"), ValueError, r"F: must be an integer, not \"25\""),
    (dict(F=25.0), ValueError, r"F: must be an integer, not 25"),
    (dict(F=2**70), ValueError, r"F: must be an integer"),
    (dict(F=99), ValueError, r"F must lie in 0..40"),
    (dict(out_rounding="nearest"), ValueError, r"out_rounding: unknown rounding 'nearest'"),
    (dict(nan="quiet"), ValueError, r"nan: nvidia or format, not 'quiet'"),
    (dict(align_floor="none"), ValueError, r"align_floor: must be null or an integer"),
    (dict(round_down_alignment=True), ValueError, r"round_down_alignment: not a parameter of fda"),
    (dict(tree="p0+c"), ValueError, r"tree: not a parameter of fda"),
    (dict(scale_block=16), ValueError, r"scale_block: needs scale_format"),
    (dict(scale_format="e4m3"), ValueError, r"scale_format: ue8m0 or ue4m3, not 'e4m3'"),
    (dict(F={"x": 1}), TypeError, r"F: None, a bool, an int, a str or a list of str, not dict"),
    (dict(flush=["inputs", 3]), TypeError, r"flush: a list of strings"),
])
def test_bad_parameters(parameters, kind, message):
    with pytest.raises(kind, match=message):
        gpuparanoia.matmul(ones(2, 16), ones(16, 3), **FDA, **parameters)


def test_scale_factors():
    mx = "blackwell:UTCQMMMA.SF.F32.E2M1.E2M1.E8"
    ins = next(i for i in gpuparanoia.instructions() if i["id"] == mx)
    k, s = ins["k"], ins["k"] // ins["scale_block"]
    a, b = np.zeros((2, k), np.uint8), np.zeros((k, 3), np.uint8)
    with pytest.raises(ValueError, match=r"takes block scale factors: a_scale \(M x %d\)" % s):
        gpuparanoia.matmul(a, b, instruction=mx)
    with pytest.raises(ValueError, match=r"a_scale is 2 x %d and b_scale %d x 3" % (s, s + 1)):
        gpuparanoia.matmul(a, b, instruction=mx, a_scale=np.full((2, s), 127, np.uint8),
                           b_scale=np.full((s + 1, 3), 127, np.uint8))
    with pytest.raises(ValueError, match=r"takes no scale factors"):
        gpuparanoia.matmul(ones(2, 16), ones(16, 3), instruction=HMMA, a_scale=np.ones((2, 1), np.uint8),
                           b_scale=np.ones((1, 3), np.uint8))
    # With scales of 2^0 and 2^1 the products double.
    a[:, 0], b[0, :] = 0x2, 0x2  # e2m1 1.0
    d = gpuparanoia.matmul(a, b, instruction=mx, a_scale=np.full((2, s), 127, np.uint8),
                           b_scale=np.full((s, 3), 128, np.uint8))
    assert np.all(d == 2.0)


def test_threads():
    with pytest.raises(ValueError, match=r"threads: a positive int"):
        gpuparanoia.matmul(ones(2, 16), ones(16, 3), instruction=HMMA, threads=0)
    with pytest.raises(ValueError, match=r"threads: a positive int"):
        gpuparanoia.matmul(ones(2, 16), ones(16, 3), instruction=HMMA, threads="all")
