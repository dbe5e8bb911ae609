# matmul's algorithm= form equals `model dot --algorithm` given the same parameters as options
# (the keywords with dashes), and the instruction form where the parameters are an instruction's.
import zlib

import numpy as np
import pytest

import gpuparanoia
from conftest import model_dot
from test_matmul_model_dot import lines_of, random_bits, scale_bits, tile

# (algorithm, a, b, c, d formats, K, parameters)
CASES = [
    ("fda", "binary16", "binary16", "binary32", "binary32", 16, dict(F=25, block=16, align_floor=-133)),
    ("fda", "bfloat16", "bfloat16", "binary32", "binary32", 8, dict(F=24, out_rounding="rne", nan="format")),
    ("fda", "binary16", "binary16", "binary32", "binary32", 8, dict(F=13, out_fraction_bits=13, align_floor=None)),
    ("cofda", "binary16", "binary16", "binary16", "binary16", 16, dict(F=24, block=8)),
    ("sfma", "binary64", "binary64", "binary64", "binary64", 4, dict(rounding="rne")),
    ("gps", "binary16", "binary16", "binary32", "binary32", 8, dict(group=4)),
    ("fdrda", "binary16", "binary16", "binary32", "binary32", 8, dict(round_down_alignment=False)),
    ("gfdrda", "e4m3fnuz", "e5m2fnuz", "binary32", "binary32", 32, dict(block=16)),
    ("gdfs", "e2m1", "e2m1", "binary32", "binary32", 64, dict(scale_format="ue4m3", scale_block=16)),
    ("fda", "e4m3", "e4m3", "binary32", "binary32", 64, dict(F=25, scale_format="ue8m0")),
    ("tree", "binary16", "binary16", "binary32", "binary32", 4,
     dict(tree="((p0+p1)+(p2+p3))+c", sums="binary16", products="exact", rounding="rz", flush=["inputs"])),
]


def option_list(parameters):
    out = []
    for key, v in parameters.items():
        value = "none" if v is None else ("true" if v else "false") if isinstance(v, bool) else \
            ",".join(v) if isinstance(v, list) else str(v)
        out += ["--" + key.replace("_", "-"), value]
    return out


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}-{c[4]}-{i}" for i, c in enumerate(CASES)])
def test_algorithm_equals_model_dot(case, binary, formats):
    alg, af, bf, cf, df, k, parameters = case
    rng = np.random.default_rng(zlib.crc32(repr(case).encode()))
    m, n = 5, 4
    a, b = random_bits(rng, formats[af], (m, k)), random_bits(rng, formats[bf], (k, n))
    c = random_bits(rng, formats[cf], (m, n))
    sa = sb = None
    if "scale_format" in parameters:
        s = k // parameters.get("scale_block", 32)
        sa = scale_bits(rng, formats[parameters["scale_format"]], (m, s))
        sb = scale_bits(rng, formats[parameters["scale_format"]], (s, n))
    d = gpuparanoia.matmul(a, b, c, algorithm=alg, a_format=af, b_format=bf, c_format=cf, d_format=df,
                           a_scale=sa, b_scale=sb, bits=True, **parameters)
    options = ["--algorithm", alg, "--a-format", af, "--b-format", bf, "--c-format", cf, "--d-format", df]
    assert [int(x) for x in d.ravel()] == model_dot(binary, options + option_list(parameters), lines_of(a, b, c, sa, sb))


def test_algorithm_with_an_instructions_parameters_is_the_instruction(formats):
    """hopper:HMMA.16816.F32 is fda with F = 25, 16-product blocks and the alignment floor -133."""
    rng = np.random.default_rng(7)
    a, b = random_bits(rng, formats["binary16"], (6, 64)), random_bits(rng, formats["binary16"], (64, 7))
    c = random_bits(rng, formats["binary32"], (6, 7))
    by_name = gpuparanoia.matmul(a, b, c, instruction="hopper:HMMA.16816.F32", bits=True)
    by_parameters = gpuparanoia.matmul(a, b, c, algorithm="fda", a_format="binary16", b_format="binary16",
                                       c_format="binary32", d_format="binary32", F=25, block=16, align_floor=-133,
                                       bits=True)
    assert np.array_equal(by_name, by_parameters)


@pytest.mark.parametrize("ins", gpuparanoia.instructions(), ids=lambda i: i["id"])
def test_instructions_parameters_are_the_instruction(ins, formats):
    """instructions()'s parameters, given to algorithm= with the row's formats, compute the row."""
    rng = np.random.default_rng(zlib.crc32(ins["id"].encode()))
    a, b, c, sa, sb = tile(rng, formats, ins, 2, 3, ins["k"])
    by_name = gpuparanoia.matmul(a, b, c, instruction=ins["id"], a_scale=sa, b_scale=sb, bits=True)
    by_parameters = gpuparanoia.matmul(a, b, c, algorithm=ins["algorithm"], a_format=ins["a_format"],
                                       b_format=ins["b_format"], c_format=ins["c_format"], d_format=ins["d_format"],
                                       a_scale=sa, b_scale=sb, bits=True, **ins["parameters"])
    assert np.array_equal(by_name, by_parameters)
