# matmul reproduces every tensor-core set captured on NVIDIA hardware in the repository
# (tests_mma/golden/nvidia-tensor-cores, its README), given the values as float32 arrays. The model
# reproduces the same sets bit for bit (unittests/mma_golden_test.cpp), so matmul equals `model dot`
# on them as well.
import numpy as np
import pytest

import gpuparanoia

# GPU, input folder and file tag, output, the instruction (as unittests/golden_sets.hpp), c zero.
SETS = [
    ("V100", "fp16", "fp32", "volta:HMMA.884.F32.F32", False),
    ("V100", "fp16", "fp16", "volta:HMMA.884.F16.F16", False),
    ("A100", "fp16", "fp32", "ampere:HMMA.16816.F32", False),
    ("A100", "fp16", "fp16", "ampere:HMMA.16816.F16", False),
    ("A100", "bf16", "fp32", "ampere:HMMA.16816.F32.BF16", False),
    ("A100", "tf32", "fp32", "ampere:HMMA.1688.F32.TF32", False),
    ("H100", "fp16", "fp32", "hopper:HMMA.16816.F32", False),
    ("H100", "fp16", "fp16", "hopper:HMMA.16816.F16", False),
    ("H100", "bf16", "fp32", "hopper:HMMA.16816.F32.BF16", False),
    ("H100", "tf32", "fp32", "hopper:HMMA.1688.F32.TF32", False),
    ("H100", "E4M3", "fp32", "hopper:QGMMA.64x8x32.F32.E4M3.E4M3", True),
]


def hex_rows(path):
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    return np.array([[int(x, 16) for x in r] for r in rows], dtype=np.uint32).view(np.float32)


def binary_rows(path):
    return np.array([int(line.strip(), 2) for line in path.read_text().splitlines() if line.strip()], dtype=np.uint32)


def test_the_list_matches_the_folder(source_dir):
    """Every captured set of the folder is tested here."""
    root = source_dir / "tests_mma" / "golden" / "nvidia-tensor-cores"
    on_disk = {(p.parent.parent.name, p.parent.name, p.stem.split("_")[-1]) for p in root.glob("*/*/d_*.txt")}
    assert on_disk == {(g, i, o) for g, i, o, _, _ in SETS}


@pytest.mark.parametrize("gpu,inp,out,instruction,c_zero", SETS, ids=[f"{s[0]}-{s[1]}-{s[2]}" for s in SETS])
def test_captured_set(source_dir, gpu, inp, out, instruction, c_zero):
    folder = source_dir / "tests_mma" / "golden" / "nvidia-tensor-cores" / gpu / inp
    a = hex_rows(folder / f"a_{gpu}_{inp}.txt")
    b = hex_rows(folder / f"b_{gpu}_{inp}.txt")
    n, k = a.shape
    assert n == 5000 and b.shape == (n, k)
    c = np.zeros(n, np.float32) if c_zero else binary_rows(folder / f"c_{gpu}_fp32.txt").view(np.float32)
    d = binary_rows(folder / f"d_{gpu}_{out}.txt").view(np.float32)
    if out == "fp16":
        # The binary16 c and d of the capture: c rounded to nearest even, d exact (README).
        c, d = c.astype(np.float16), d.astype(np.float16)
    # Where the capture's K is the model's fused block and the instruction's K larger (A100's WMMA
    # captures), each row is padded with products -0 * +0: a zero product takes no part in the
    # alignment, adds nothing, and keeps the sign of a sum of zeros; a second block adds nothing to
    # the first block's exact result.
    ins_k = next(i["k"] for i in gpuparanoia.instructions() if i["id"] == instruction)
    if k < ins_k:
        a = np.concatenate([a, np.full((n, ins_k - k), -0.0, np.float32)], axis=1)
        b = np.concatenate([b, np.zeros((n, ins_k - k), np.float32)], axis=1)
    # Lines in blocks of 50: d's diagonal holds each line's dot product.
    got = np.concatenate([np.diagonal(gpuparanoia.matmul(a[i:i + 50], b[i:i + 50].T, np.diag(c[i:i + 50]),
                                                         instruction=instruction)) for i in range(0, n, 50)])
    assert got.dtype == d.dtype
    same = (got.view(np.uint32 if out == "fp32" else np.uint16) == d.view(np.uint32 if out == "fp32" else np.uint16))
    bad = np.flatnonzero(~same)
    assert bad.size == 0, f"{bad.size} cases differ, first line {bad[0] + 1}: hardware {d[bad[0]]!r}, matmul {got[bad[0]]!r}"
