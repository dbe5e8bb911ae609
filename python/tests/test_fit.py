# fit searches what `gpuparanoia fit` searches and finds the same: an instruction recovered from
# its own outputs, one output off leaving the closest candidates, and arrays it refuses.
import json
import subprocess

import numpy as np
import pytest

import gpuparanoia
from conftest import hex_line, model_dot

INSTRUCTION = "volta:HMMA.884.F32.F32"
FORMATS = dict(a_format="binary16", b_format="binary16", c_format="binary32", d_format="binary32")


def captures(binary, n=300, k=4, seed=5):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((n, k)) * 2.0 ** rng.integers(-6, 6, (n, k))).astype(np.float16).view(np.uint16)
    b = (rng.standard_normal((n, k)) * 2.0 ** rng.integers(-6, 6, (n, k))).astype(np.float16).view(np.uint16)
    c = (rng.standard_normal(n) * 4).astype(np.float32).view(np.uint32)
    lines = [hex_line([c[i], *a[i], *b[i]]) for i in range(n)]
    d = np.array(model_dot(binary, ["--instruction", INSTRUCTION], lines), dtype=np.uint32)
    return a, b, c, d, lines


def command_line_fit(binary, tmp_path, lines, d):
    path = tmp_path / "captures.txt"
    path.write_text("".join(line.rstrip("\n") + f" {int(x):08x}\n" for line, x in zip(lines, d)))
    out = tmp_path / "fit.json"
    subprocess.run([binary, "fit", "--config", "1x1x4:binary16,binary16,binary32,binary32", "--json", str(out), str(path)],
                   capture_output=True, text=True)
    return json.loads(out.read_text())


def test_fit_recovers_the_instruction_as_the_command_line_does(binary, tmp_path):
    a, b, c, d, lines = captures(binary)
    r = gpuparanoia.fit(a, b, c, d, **FORMATS)
    assert r["lines"] == 300 and r["complete"] and r["survivors"] > 0 and r["closest"] == []
    truth = next(i for i in gpuparanoia.instructions() if i["id"] == INSTRUCTION)
    assert r["classes"][0]["algorithm"] == truth["algorithm"]
    doc = command_line_fit(binary, tmp_path, lines, d)
    assert doc["survivors"] == r["survivors"]
    assert len(doc["classes"]) == len(r["classes"])
    assert doc["candidates"][0]["parameters"] == r["classes"][0]["parameters"]
    assert [x["candidates"] for x in doc["classes"]] == [x["candidates"] for x in r["classes"]]


def test_one_output_off_leaves_the_closest(binary, tmp_path):
    a, b, c, d, lines = captures(binary)
    d = d.copy()
    d[0] ^= 1
    r = gpuparanoia.fit(a, b, c, d, **FORMATS, threads=2)
    assert r["survivors"] == 0 and r["classes"] == []
    assert r["closest"][0]["mismatches"] == 1
    doc = command_line_fit(binary, tmp_path, lines, d)
    assert [x["mismatches"] for x in doc["candidates"]] == [x["mismatches"] for x in r["closest"]]
    assert [x["parameters"] for x in doc["candidates"]] == [x["parameters"] for x in r["closest"]]


def test_fit_refuses_what_is_not_raw_bits():
    a = np.zeros((3, 4), np.uint16)
    c = np.zeros(3, np.uint32)
    with pytest.raises(TypeError):
        gpuparanoia.fit(a.astype(np.float32), a, c, c, **FORMATS)
    with pytest.raises(ValueError):
        gpuparanoia.fit(a, a[:2], c, c, **FORMATS)
    with pytest.raises(ValueError):
        gpuparanoia.fit(a.astype(np.uint32) + 0x10000, a, c, c, **FORMATS)
    with pytest.raises(ValueError):
        gpuparanoia.fit(a, a, c, c, a_format="binary99", b_format="binary16", c_format="binary32", d_format="binary32")
