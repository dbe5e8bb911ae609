# matmul equals `gpuparanoia model dot` bit for bit: random tiles of every instruction of the
# table, in raw bits, with subnormals, infinities, NaNs and cancelling products.
import zlib

import numpy as np
import pytest

import gpuparanoia
from conftest import hex_line, model_dot, storage_dtype

INSTRUCTIONS = gpuparanoia.instructions()


def random_bits(rng, fmt, shape):
    """Bit patterns of fmt: mostly normal numbers of moderate exponent, with zeros, subnormals,
    the top binade (infinities and NaNs where the format has them) and raw random patterns."""
    e, m, pad = fmt["exp_bits"], fmt["man_bits"], fmt["pad_bits"]
    emax_field = (1 << e) - 1
    sign = rng.integers(0, 2, shape, dtype=np.uint64) if fmt["signed"] else np.zeros(shape, np.uint64)
    mid = max(1, emax_field // 2)
    spread = max(1, min(mid - 1, 6))
    field = rng.integers(mid - spread, mid + spread + 1, shape).astype(np.uint64)
    frac = rng.integers(0, 1 << m, shape, dtype=np.uint64) if m else np.zeros(shape, np.uint64)
    kind = rng.random(shape)
    field = np.where(kind < 0.08, 0, field)  # subnormals
    frac = np.where(kind < 0.02, 0, frac)  # zeros
    field = np.where((kind >= 0.08) & (kind < 0.12), emax_field, field)  # infinities, NaNs, top binade
    bits = (sign << np.uint64(e + m)) | (field << np.uint64(m)) | frac
    raw = rng.integers(0, 1 << (e + m + (1 if fmt["signed"] else 0)), shape, dtype=np.uint64)
    bits = np.where((kind >= 0.12) & (kind < 0.18), raw, bits)
    return (bits << np.uint64(pad)).astype(storage_dtype(fmt))


def scale_bits(rng, fmt, shape):
    """Scale factors near 1 (ue8m0 127, ue4m3 0x38), now and then far from it or NaN."""
    one = (1 << (fmt["exp_bits"] - 1)) - 1 << fmt["man_bits"]
    near = one + rng.integers(-12, 13, shape)
    raw = rng.integers(0, 1 << (fmt["exp_bits"] + fmt["man_bits"] + fmt["signed"]), shape)
    return np.where(rng.random(shape) < 0.1, raw, near).astype(np.uint8)


def tile(rng, formats, ins, m, n, k):
    a = random_bits(rng, formats[ins["a_format"]], (m, k))
    b = random_bits(rng, formats[ins["b_format"]], (k, n))
    c = random_bits(rng, formats[ins["c_format"]], (m, n))
    # Cancellation: in half the rows, product 1 is minus product 0.
    sign = 1 << (formats[ins["a_format"]]["exp_bits"] + formats[ins["a_format"]]["man_bits"] + formats[ins["a_format"]]["pad_bits"])
    if k >= 2 and formats[ins["a_format"]]["signed"]:
        b[1, :] = b[0, :]
        a[::2, 1] = a[::2, 0] ^ a.dtype.type(sign)
    sa = sb = None
    if ins["scale_format"]:
        s = -(-k // ins["scale_block"])  # scale_count: one per started block
        sa = scale_bits(rng, formats[ins["scale_format"]], (m, s))
        sb = scale_bits(rng, formats[ins["scale_format"]], (s, n))
    return a, b, c, sa, sb


def lines_of(a, b, c, sa, sb):
    m, n = c.shape
    out = []
    for i in range(m):
        for j in range(n):
            fields = [c[i, j], *a[i, :], *b[:, j]]
            if sa is not None:
                fields += [*sa[i, :], *sb[:, j]]
            out.append(hex_line(fields))
    return out


@pytest.mark.parametrize("ins", INSTRUCTIONS, ids=[i["id"] for i in INSTRUCTIONS])
def test_random_tiles_equal_model_dot(ins, binary, formats):
    rng = np.random.default_rng(zlib.crc32(ins["id"].encode()))
    m, n, k = 8, 6, ins["k"]
    a, b, c, sa, sb = tile(rng, formats, ins, m, n, k)
    d = gpuparanoia.matmul(a, b, c, instruction=ins["id"], a_scale=sa, b_scale=sb, bits=True)
    assert d.shape == (m, n) and d.dtype == storage_dtype(formats[ins["d_format"]])
    expected = model_dot(binary, ["--instruction", ins["id"]], lines_of(a, b, c, sa, sb))
    assert [int(x) for x in d.ravel()] == expected
    # The same d from each thread count.
    assert np.array_equal(d, gpuparanoia.matmul(a, b, c, instruction=ins["id"], a_scale=sa, b_scale=sb, bits=True, threads=1))


# The chaining does not depend on the instruction: one of each algorithm, with and without scale
# factors, among those whose c and d formats agree (model dot reads each step's c in c's format).
CHAINABLE = list({(i["algorithm"], i["scale_format"]): i for i in reversed(INSTRUCTIONS)
                  if i["c_format"] == i["d_format"]}.values())


@pytest.mark.parametrize("ins", CHAINABLE, ids=[i["id"] for i in CHAINABLE])
def test_longer_k_chains_the_instruction(ins, binary, formats):
    """K = 3 instruction Ks: three instructions in order, each d the next one's c."""
    rng = np.random.default_rng(zlib.crc32(b"chain " + ins["id"].encode()))
    m, n, k = 4, 5, ins["k"]
    a, b, c, sa, sb = tile(rng, formats, ins, m, n, 3 * k)
    d = gpuparanoia.matmul(a, b, c, instruction=ins["id"], a_scale=sa, b_scale=sb, bits=True)
    s = sa.shape[1] // 3 if sa is not None else 0
    acc = c
    for t in range(3):
        part = slice(t * k, (t + 1) * k)
        scales = (sa[:, t * s:(t + 1) * s], sb[t * s:(t + 1) * s, :]) if sa is not None else (None, None)
        out = model_dot(binary, ["--instruction", ins["id"]], lines_of(a[:, part], b[part, :], acc, *scales))
        acc = np.array(out, dtype=c.dtype).reshape(m, n)
    assert np.array_equal(d, acc)
