# gpuparanoia.error_analysis (`gpuparanoia error`) held to oracles that are not its own code: numpy's
# binary32 arithmetic for the binary32 columns, math.fsum for the exact result, gpuparanoia.matmul
# (the model as `model dot` runs it) for the unit's outputs, the bounds on every trial, and the sign
# of CDNA3's bias that MMA-Sim reports.
import importlib.util
import json
import math
import pathlib
import subprocess

import numpy as np
import pytest

import gpuparanoia

DISTRIBUTIONS = ["normal", "uniform-positive", "cancellation", "ml"]


def trial_inputs(unit, k, distribution, trial, seed):
    i = gpuparanoia.error_inputs(k, distribution, trial, seed=seed, instruction=unit)
    return i["a"], i["b"], i["c"]


@pytest.mark.parametrize(
    "unit, ks",
    [("hopper:HMMA.16816.F32", [16, 64, 1024]), ("cdna3:v_mfma_f32_32x32x8_f16", [8, 128, 2048])],
)
def test_columns_agree_with_numpy_and_matmul(unit, ks):
    trials, seed = 3, 11
    r = gpuparanoia.error_analysis(
        instruction=unit, ks=ks, trials=trials, seed=seed, samples=True, distributions=DISTRIBUTIONS
    )
    assert r["schema"] == "gpuparanoia-error/1" and list(r["ks"]) == ks
    by = {(s["kind"], s["distribution"]): s for s in r["series"]}
    for dist in DISTRIBUTIONS:
        for ki, k in enumerate(ks):
            for t in range(trials):
                a, b, c = trial_inputs(unit, k, dist, t, seed)
                a32, b32, c32 = a.astype(np.float32), b.astype(np.float32), np.float32(c)
                # binary16 products are exact in binary32 (11 + 11 significant bits, exponents within
                # range): fma(a, b, s) then rounds once, as the sum s + a*b does, so the FMA chain is
                # the sequential binary32 sum of c and the exact products.
                p = a32 * b32
                assert np.array_equal(p.astype(np.float64), a.astype(np.float64) * b.astype(np.float64))
                chain = np.cumsum(np.concatenate([[c32], p]), dtype=np.float32)[-1]
                pairwise = np.add.reduce(np.concatenate([[c32], p]).astype(np.float32))
                exact = math.fsum([float(c)] + list(a.astype(np.float64) * b.astype(np.float64)))
                unit_d = gpuparanoia.matmul(a.reshape(1, k), b.reshape(k, 1), c.reshape(1, 1), instruction=unit)
                where = f"{dist} K={k} trial {t}"
                assert by[("float32-fma-chain", dist)]["d"][ki, t] == chain, where
                assert by[("float32-pairwise", dist)]["d"][ki, t] == pairwise, where
                assert by[("unit", dist)]["d"][ki, t] == unit_d[0, 0], where
                assert by[("unit", dist)]["exact"][ki, t] == exact, where


def test_pairwise_order_beyond_numpys_block():
    # K = 16384: numpy's recursive halving over several levels, and beyond its 8192-element buffer.
    k = 16384
    r = gpuparanoia.error_analysis(
        instruction="hopper:HMMA.16816.F32", ks=[k], trials=2, samples=True, distributions=["normal"]
    )
    pw = next(s for s in r["series"] if s["kind"] == "float32-pairwise")
    for t in range(2):
        a, b, c = trial_inputs("hopper:HMMA.16816.F32", k, "normal", t, 1)
        x = np.concatenate([[np.float32(c)], a.astype(np.float32) * b.astype(np.float32)])
        assert pw["d"][0, t] == np.add.reduce(x)


def test_cdna3_bias_is_negative():
    # MMA-Sim (Xie et al., "MMA-Sim: Bit-Accurate Reference Model of Tensor Cores and Matrix Cores"),
    # section VI-C (b) and Figure 2: v_mfma_f32_32x32x8_f16 on C ~ N(0,1), A, B ~ 1000 N(0,1) gives
    # deviations D_RD - D_real "biased to the negative direction", the RZ variant's symmetric.
    r = gpuparanoia.error_analysis(
        instruction="cdna3:v_mfma_f32_32x32x8_f16",
        ks=[8],
        trials=400,
        distributions=["large-products"],
        what_if="round_down_alignment=false",
    )
    unit = next(s for s in r["series"] if s["kind"] == "unit")
    rz = next(s for s in r["series"] if s["kind"] == "what-if")
    assert unit["mean_signed_rel"][0] < 0
    assert abs(rz["mean_signed_rel"][0]) < abs(unit["mean_signed_rel"][0]) / 2


@pytest.mark.parametrize(
    "unit, what_if",
    [
        ("hopper:HMMA.16816.F32", ["out_rounding=rne", "F=3", "out_rounding=rd,F=8"]),
        ("cdna3:v_mfma_f32_32x32x8_f16", ["round_down_alignment=false", "F=6"]),
        ("ampere:HMMA.16816.F16", ["out_rounding=rz"]),  # a binary16 accumulator between calls
        ("ada:QMMA.16832.F32.E4M3.E4M3", ["F=4"]),
        ("ampere:DMMA.884", []),  # sfma in binary64
    ],
)
def test_bounds_hold_on_every_trial(unit, what_if):
    r = gpuparanoia.error_analysis(
        instruction=unit, k_max=1024, trials=4, distributions=DISTRIBUTIONS, what_if=what_if, samples=True
    )
    checked = 0
    for s in r["series"]:
        for key in ("bound_deterministic", "bound_probabilistic"):
            if s[key] is None:
                continue
            # The bounds bound |d - exact| / (|c| + sum |a_i b_i|): every trial's, not the relative error.
            assert np.all(s["normwise"] <= s[key][:, None]), (s["label"], s["distribution"], key)
            assert np.all(s["max_normwise"] <= s[key])
            checked += 1
    assert checked >= 2 * len(DISTRIBUTIONS) * (1 + len(what_if))


def test_a_bound_can_fail():
    # The check above can fail: a unit with too few alignment bits is far beyond the bound of one
    # that keeps more (the bound of F=24 applied to F=3's errors).
    r = gpuparanoia.error_analysis(
        instruction="hopper:HMMA.16816.F32", ks=[256], trials=4, distributions=["normal"], what_if="F=3"
    )
    unit, few = r["series"][0], r["series"][1]
    assert few["max_normwise"][0] > unit["bound_deterministic"][0]


def test_cli_json_is_the_functions(binary, tmp_path):
    out = tmp_path / "e.json"
    args = ["--instruction", "hopper:HMMA.16816.F32", "--ks", "16,64", "--trials", "3", "--seed", "5"]
    run = subprocess.run([binary, "error", *args, "--what-if", "F=20", "--json", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    doc = json.loads(out.read_text())
    r = gpuparanoia.error_analysis(instruction="hopper:HMMA.16816.F32", ks=[16, 64], trials=3, seed=5, what_if="F=20")
    assert set(doc) >= {"schema", "unit", "ks", "trials", "seed", "distributions", "series"}
    assert doc["unit"]["k_instruction"] == 16 and doc["unit"]["d_format"] == "binary32"
    assert doc["unit"]["command"] == "gpuparanoia model dot --instruction hopper:HMMA.16816.F32"
    assert [s["kind"] for s in doc["series"][:4]] == ["unit", "what-if", "float32-fma-chain", "float32-pairwise"]
    assert doc["series"][1]["what_if"] == {"F": 20}
    for s, t in zip(doc["series"], r["series"]):
        assert s["max_rel"] == list(t["max_rel"]) and s["mean_signed_rel"] == list(t["mean_signed_rel"])


def test_cli_usage_errors(binary, tmp_path):
    for args in (
        ["--instruction", "hopper:NOPE"],
        ["--instruction", "hopper:HMMA.16816.F32", "--ks", "24"],
        ["--instruction", "hopper:HMMA.16816.F32", "--what-if", "G=3"],
        ["--instruction", "hopper:HMMA.16816.F32", "--distributions", "cauchy"],
        ["--instruction", "hopper:HMMA.16816.F32", "--trials", "0"],
        [],
    ):
        run = subprocess.run([binary, "error", *args, "--out", str(tmp_path / "x")], capture_output=True, text=True)
        assert run.returncode == 2, (args, run.stderr)
        assert run.stderr.startswith("gpuparanoia: ")
        assert not (tmp_path / "x").exists()  # nothing run, nothing written


def load_plot(source_dir):
    spec = importlib.util.spec_from_file_location("plot", source_dir / "python" / "gpuparanoia" / "plot.py")
    plot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plot)
    return plot


def test_plots_are_svg(source_dir, tmp_path):
    pytest.importorskip("matplotlib", reason="python3-matplotlib is not installed")
    plot = load_plot(source_dir)
    r = gpuparanoia.error_analysis(instruction="cdna3:v_mfma_f32_32x32x8_f16", ks=[8, 64], trials=2, what_if="F=26")
    paths = plot.plot_all(r, tmp_path)
    assert [pathlib.Path(p).name for p in paths] == ["error_vs_k.svg", "bias_vs_k.svg", "what_if.svg"]
    for p in paths:
        text = pathlib.Path(p).read_text()
        assert "<svg" in text and "</svg>" in text


def test_cli_out_draws_the_plots(binary, tmp_path):
    pytest.importorskip("matplotlib", reason="python3-matplotlib is not installed")
    import sys

    args = ["--instruction", "hopper:HMMA.16816.F32", "--ks", "16,32", "--trials", "2", "--out", str(tmp_path)]
    env = {"GPUPARANOIA_PYTHON": sys.executable, "PATH": "/usr/bin:/bin"}
    run = subprocess.run([binary, "error", *args], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["bias_vs_k.svg", "error.csv", "error.json", "error.txt", "error_vs_k.svg", "what_if.svg"]
    assert "plots: error_vs_k.svg" in (tmp_path / "error.txt").read_text()
    # Without matplotlib's Python, the report says so and the command still succeeds.
    other = tmp_path / "none"
    env["GPUPARANOIA_PYTHON"] = str(tmp_path / "no-python")
    run = subprocess.run([binary, "error", *args[:-1], str(other)], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert "plots not drawn" in (other / "error.txt").read_text()
    assert not list(other.glob("*.svg"))
