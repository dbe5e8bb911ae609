# Profiles from Python: profile() reads a built-in device or a profile or result file into a dict
# of the profile files' schema, and matmul's and scalar's profile= compute with what it says.
import json
import zlib

import numpy as np
import pytest

import gpuparanoia
from conftest import model_dot
from test_matmul_algorithm import option_list
from test_matmul_model_dot import lines_of, tile

INSTRUCTIONS = gpuparanoia.instructions()
# Every instruction with scale factors, and a spread of the others.
SAMPLE = [i for n, i in enumerate(INSTRUCTIONS) if i["scale_format"] or n % 9 == 0]
LAVAPIPE_26 = "results/lavapipe-mesa-26.1.6/vulkan-0.json"


def entry_options(entry):
    """`model dot` options for an MMA entry of a profile: its algorithm, formats and parameters."""
    formats = entry["config"].split(":")[1].split(",")
    options = ["--algorithm", entry["algorithm"]]
    for key, f in zip(("a", "b", "c", "d"), formats):
        options += [f"--{key}-format", f]
    # An empty list (a tree that flushes nothing) is the option left out.
    return options + option_list({k: v for k, v in entry["parameters"].items() if v != []})


@pytest.mark.parametrize("ins", SAMPLE, ids=[i["id"] for i in SAMPLE])
def test_builtin_profile_is_its_instruction(ins, binary, formats):
    """An instruction's device, by name and as profile()'s dict, computes as the instruction; its
    entry's algorithm and parameters, given to `model dot`, too (scale factors included)."""
    rng = np.random.default_rng(zlib.crc32(ins["id"].encode()))
    m, n, k = 3, 4, 2 * ins["k"]
    a, b, c, sa, sb = tile(rng, formats, ins, m, n, k)
    want = gpuparanoia.matmul(a, b, c, instruction=ins["id"], a_scale=sa, b_scale=sb, bits=True)
    doc = gpuparanoia.profile(ins["id"])
    assert doc["name"] == ins["id"] and len(doc["mma"]) == 1
    entry = doc["mma"][0]
    assert entry["instruction"] == ins["id"]
    for profile in (doc, "ref:" + ins["id"], ins["id"]):
        got = gpuparanoia.matmul(a, b, c, profile=profile, a_scale=sa, b_scale=sb, bits=True)
        assert np.array_equal(got, want)
    got = gpuparanoia.matmul(a, b, c, profile=doc, config=entry["config"], a_scale=sa, b_scale=sb, bits=True)
    assert np.array_equal(got, want)
    # One instruction's K per evaluation in `model dot`: the first half of K.
    h = ins["k"]
    ha, hb = a[:, :h], b[:h, :]
    hs = h // ins["scale_block"] if ins["scale_format"] else 0
    hsa, hsb = (sa[:, :hs], sb[:hs, :]) if ins["scale_format"] else (None, None)
    first = gpuparanoia.matmul(ha, hb, c, instruction=ins["id"], a_scale=hsa, b_scale=hsb, bits=True)
    assert [int(x) for x in first.ravel()] == model_dot(binary, entry_options(entry), lines_of(ha, hb, c, hsa, hsb))


def test_result_file_profile(binary, source_dir, formats, tmp_path):
    """lavapipe 26's result: each identified MMA configuration computes with its entry's model, by
    path, by dict and from a copy of the file elsewhere."""
    path = source_dir / LAVAPIPE_26
    doc = gpuparanoia.profile(path)
    assert doc["name"] == "vulkan-0" and "measured on" in doc["description"]
    result = json.loads(path.read_text())
    entries = [e for e in result["profile"]["mma"] if e.get("algorithm")]
    assert entries and [e["config"] for e in doc["mma"]] == [e["config"] for e in entries]
    copy = tmp_path / "device.json"
    copy.write_text(path.read_text())
    for entry in entries:
        fa, fb, fc, _ = entry["config"].split(":")[1].split(",")
        k = int(entry["config"].split(":")[0].split("x")[2])
        ins = {"a_format": fa, "b_format": fb, "c_format": fc, "scale_format": None}
        rng = np.random.default_rng(zlib.crc32(entry["config"].encode()))
        a, b, c, _, _ = tile(rng, formats, ins, 4, 3, k)
        want = model_dot(binary, entry_options(entry), lines_of(a, b, c, None, None))
        for profile in (str(path), path, copy, doc, result):
            d = gpuparanoia.matmul(a, b, c, profile=profile, config=entry["config"], bits=True)
            assert [int(x) for x in d.ravel()] == want


def test_profile_round_trip(tmp_path):
    """profile()'s dict, written to a file, reads back to the same dict."""
    scaled = next(i["id"] for i in INSTRUCTIONS if i["scale_format"])
    for name in ("nvidia-g70", "ieee-binary16", "hopper:HMMA.16816.F32", scaled):
        doc = gpuparanoia.profile(name)
        path = tmp_path / "p.json"
        path.write_text(json.dumps(doc))
        assert gpuparanoia.profile(path) == doc
    listed = tmp_path / "two.json"
    listed.write_text(json.dumps([gpuparanoia.profile("nvidia-g70"), gpuparanoia.profile("ati-r520")]))
    assert [p["name"] for p in gpuparanoia.profile(listed)] == ["nvidia-g70", "ati-r520"]


def test_scalar_profile_g70_adder():
    """Daumas et al. 2006, section 2.3: the G70's chopped adder with two guard bits gives 1.5 - 2^-i
    == 1.5 exactly when i >= 26; an IEEE unit rounds 1.5 - 2^-25 to 1.5."""
    one_half = np.float32(1.5)
    for i, want in ((24, 1.5 - 2.0 ** -23), (25, 1.5 - 2.0 ** -23), (26, 1.5), (30, 1.5)):
        got = gpuparanoia.scalar("sub", one_half, np.float32(2.0 ** -i), profile="nvidia-g70")
        assert got == np.float32(want), i
    assert gpuparanoia.scalar("sub", one_half, np.float32(2.0 ** -25)) == one_half
    assert gpuparanoia.scalar("sub", one_half, np.float32(2.0 ** -25), profile="ieee-binary32") == one_half


def test_scalar_profile_of_a_result(source_dir):
    """lavapipe 26 flushes binary32 subnormals (its result says so); its binary32 fma is unfused: the
    host's float32 multiply then add."""
    path = source_dir / LAVAPIPE_26
    tiny = np.float32(2.0 ** -140)
    assert gpuparanoia.scalar("mul", tiny, np.float32(1), profile=path) == 0
    assert gpuparanoia.scalar("mul", tiny, np.float32(1)) == tiny
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal(200).astype(np.float32) for _ in range(3))
    unfused = (a * b) + c  # numpy: float32 multiply, then float32 add, each rounded
    assert np.array_equal(gpuparanoia.scalar("fma", a, b, c, profile=path).view(np.uint32), unfused.view(np.uint32))
    fused = gpuparanoia.scalar("fma", a, b, c)
    assert not np.array_equal(fused, unfused)


def test_profile_errors(source_dir, tmp_path):
    a = np.ones((16, 16), np.float16)
    b = np.ones((16, 8), np.float16)
    cases = [
        (dict(profile="no-such-device"), ValueError, "neither a file nor a built-in device"),
        (dict(profile=tmp_path / "missing.json"), ValueError, "missing.json"),
        (dict(profile=source_dir / LAVAPIPE_26), ValueError, "name one"),
        (dict(profile=source_dir / LAVAPIPE_26, config="16x8x16:binary16,binary16,binary32,binary32"), ValueError,
         "has no configuration"),
        (dict(profile="nvidia-g70"), ValueError, "no MMA configuration"),
        (dict(profile={"name": "x", "mma": [{"config": "bad"}]}), ValueError, "config"),
        (dict(profile={"name": "x", "mma": [], "frequency": 1}), ValueError, "frequency"),
        (dict(profile={"name": float("nan")}), ValueError, "not a JSON document"),
        (dict(profile=3), TypeError, "profile"),
        (dict(profile="hopper:HMMA.16816.F32", config=16), TypeError, "config"),
        (dict(config="16x8x16:binary16,binary16,binary32,binary32", instruction="hopper:HMMA.16816.F32"), ValueError,
         "config= names a configuration of profile="),
        (dict(profile="hopper:HMMA.16816.F32", instruction="hopper:HMMA.16816.F32"), ValueError, "one of"),
        (dict(profile="hopper:HMMA.16816.F32", F=24), ValueError, "belong to algorithm="),
    ]
    for kwargs, error, words in cases:
        with pytest.raises(error, match=words):
            gpuparanoia.matmul(a, b, **kwargs)
    twice = tmp_path / "two.json"
    twice.write_text(json.dumps([gpuparanoia.profile("nvidia-g70"), gpuparanoia.profile("ati-r520")]))
    with pytest.raises(ValueError, match="holds 2 profiles"):
        gpuparanoia.scalar("add", np.float32(1), np.float32(2), profile=twice)
    with pytest.raises(ValueError, match="the profile's unit's"):
        gpuparanoia.scalar("add", np.float32(1), np.float32(2), profile="nvidia-g70", rounding="rz")
    with pytest.raises(ValueError, match="no unit for binary64"):
        gpuparanoia.scalar("add", np.float64(1), np.float64(2), format="binary64", profile="nvidia-g70")
    with pytest.raises(ValueError, match="neither a file"):
        gpuparanoia.profile("no-such-device")
