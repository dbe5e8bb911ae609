#!/usr/bin/env python3
"""results/matlab-tensor-core (scripts/matlab-captures): every committed fit reproduces its
committed capture lines, the published settings mispredict what set.json says, and the script
refuses a set whose files do not correspond.

Usage: matlab_captures_test.py REPO GPUPARANOIA"""

import json
import lzma
import shlex
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
BINARY = sys.argv[2] if len(sys.argv) > 2 else "gpuparanoia"
RESULTS = REPO / "results" / "matlab-tensor-core"
GOLDEN = REPO / "tests_mma" / "golden" / "nvidia-tensor-cores"


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def capture_lines(doc):
    """The set's capture lines: its captures.txt.xz, or the golden files converted."""
    data = doc["data"]
    if "captures" in data:
        return lzma.decompress((RESULTS / doc["set"] / data["captures"]).read_bytes()).decode().splitlines()
    g = data["golden"]
    cmd = [BINARY, "captures", "convert", "--config", doc["config"]]
    for key in "abcd":
        if key in g:
            cmd += [f"--{key}", str(REPO / g[key])]
    r = run(cmd, check=True)
    return r.stdout.splitlines()


def mispredicted(options, lines):
    """The lines `model dot OPTIONS` mispredicts, counted against the captured d (a model of its own
    would not be an oracle: the captured hardware outputs are)."""
    r = run([BINARY, "model", "dot", *shlex.split(options)],
            input="".join(line.rsplit(" ", 1)[0] + "\n" for line in lines), check=True)
    got = r.stdout.split()
    assert len(got) == len(lines), (options, len(got), len(lines))
    return sum(g.lower() != line.split()[-1].lower() for g, line in zip(got, lines))


class CommittedSets(unittest.TestCase):
    def test_every_set(self):
        sets = sorted(p.parent for p in RESULTS.glob("*/set.json"))
        self.assertGreater(len(sets), 20, "the committed sets")
        readme = (RESULTS / "README.md").read_text()
        for d in sets:
            with self.subTest(set=d.name):
                doc = json.loads((d / "set.json").read_text())
                fit = json.loads((d / "fit.json").read_text())
                self.assertEqual(doc["set"], d.name)
                self.assertEqual(fit["schema"], "gpuparanoia-fit/1")
                self.assertEqual(fit["files"], [f"{d.name}/captures.txt"])
                self.assertIn(f"| {doc['gpu']} {doc['input']} → {doc['output']}", readme)
                lines = capture_lines(doc)
                self.assertEqual(len(lines), doc["lines"])
                self.assertEqual(fit["lines"], doc["lines"])
                self.assertEqual(len(lines[0].split()), 2 + 2 * doc["K"])
                first = fit["candidates"][0]
                if fit.get("classes"):
                    self.assertEqual(first["class"], 1)
                    self.assertEqual(mispredicted(first["model_dot"], lines), 0, first["model_dot"])
                else:
                    # No candidate: the closest one mispredicts the number the fit states.
                    self.assertEqual(mispredicted(first["model_dot"], lines), first["mismatches"])
                # The published models' settings and the table's instruction mispredict what set.json
                # and the README say.
                for stated in [doc["published"], *doc.get("published_others", []), doc["table"]]:
                    if "mispredictions" in stated:
                        self.assertEqual(mispredicted(stated["model_dot"], lines), stated["mispredictions"])


def options(text):
    """`model dot` options as {option: value}."""
    f = shlex.split(text)
    return {f[i]: f[i + 1] for i in range(0, len(f) - 1, 2) if f[i].startswith("--")}


class ErrorAnalyses(unittest.TestCase):
    def test_every_fitted_unit_has_its_error_analysis(self):
        sets = sorted(p.parent for p in RESULTS.glob("*/set.json"))
        written = 0
        for d in sets:
            with self.subTest(set=d.name):
                doc = json.loads((d / "set.json").read_text())
                fit = json.loads((d / "fit.json").read_text())
                stated = doc["error_analysis"]
                if not fit.get("classes"):  # nothing fits: no unit to analyse
                    self.assertFalse((d / "error.json").exists())
                    self.assertIn("none", stated)
                    continue
                written += 1
                unit = fit["candidates"][0]["model_dot"]
                error = json.loads((d / "error.json").read_text())
                self.assertEqual(error["schema"], "gpuparanoia-error/1")
                self.assertEqual(error["unit"]["command"], f"gpuparanoia model dot {unit}")
                self.assertEqual(stated["unit"], unit)
                self.assertEqual((error["trials"], error["seed"]), (10, 1))
                self.assertEqual(error["ks"], [doc["K"] << i for i in range(len(error["ks"]))])  # K up to 8192
                self.assertEqual(error["ks"][-1], 8192)
                kinds = {s["kind"] for s in error["series"]}
                self.assertEqual(kinds - {"what-if"}, {"unit", "float32-fma-chain", "float32-pairwise"})
                what_ifs = {s["label"] for s in error["series"] if s["kind"] == "what-if"}
                published = doc["published"]
                if "what_if_published" in stated:
                    # The published settings that mispredict, as what-ifs of the unit: each KEY=VALUE
                    # the published option, differing from the unit's.
                    self.assertEqual(what_ifs, {stated["what_if_published"]["what_if"]})
                    self.assertGreater(published["mispredictions"], 0)
                    pub, mine = options(published["model_dot"]), options(unit)
                    for kv in stated["what_if_published"]["what_if"].split(","):
                        key, value = kv.split("=")
                        option = "--" + key.replace("_", "-")
                        self.assertEqual(pub[option], value)
                        self.assertNotEqual(mine.get(option), value)
                else:
                    self.assertEqual(what_ifs, set())
                    self.assertFalse(published.get("mispredictions") and "published_not_shown" not in stated)
                for s in error["series"]:
                    self.assertEqual(len(s["max_rel"]), len(error["ks"]))
                    self.assertTrue(all(v is not None and v >= 0 for v in s["max_rel"]), (s["label"], s["max_rel"]))
        self.assertGreater(written, 25)

    def test_recomputed_equals_committed(self):
        # B200's E4M3 set (its published settings a what-if), by the script's --error-only from a copy
        # of its fit, and at two small K by the command line: the committed numbers, by the seed.
        name = "B200-E4M3-fp32"
        committed = json.loads((RESULTS / name / "error.json").read_text())
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / name).mkdir()
            for f in ("set.json", "fit.json"):
                (tmp / name / f).write_bytes((RESULTS / name / f).read_bytes())
            r = run([sys.executable, str(REPO / "scripts" / "matlab-captures"), "--error-only", BINARY, "--out",
                     str(tmp), "--only", name])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(json.loads((tmp / name / "error.json").read_text()), committed)
            self.assertEqual(json.loads((tmp / name / "set.json").read_text()),
                             json.loads((RESULTS / name / "set.json").read_text()))
            fit = json.loads((RESULTS / name / "fit.json").read_text())
            r = run([BINARY, "error", *shlex.split(fit["candidates"][0]["model_dot"]), "--ks", "64,256", "--trials",
                     "10", "--seed", "1", "--what-if", "F=25,out_rounding=rz", "--json", str(tmp / "small.json")])
            self.assertEqual(r.returncode, 0, r.stderr)
            small = json.loads((tmp / "small.json").read_text())
        columns = ("max_rel", "mean_rel", "mean_signed_rel", "correctly_rounded", "max_normwise")
        at = [committed["ks"].index(k) for k in small["ks"]]
        self.assertEqual(len(small["series"]), len(committed["series"]))
        for mine, theirs in zip(small["series"], committed["series"]):
            self.assertEqual((mine["label"], mine["distribution"]), (theirs["label"], theirs["distribution"]))
            for column in columns:
                self.assertEqual(mine[column], [theirs[column][i] for i in at], (mine["label"], column))


class B200Fp8(unittest.TestCase):
    def test_the_published_settings_disagree_with_the_fit(self):
        # The B200's E4M3 mma.sync captures: FDA over one block of 32 with F = 30 or 31 and a
        # round-to-nearest output reproduces them; the published RZ datapath (F = 25) does not.
        doc = json.loads((RESULTS / "B200-E4M3-fp32" / "set.json").read_text())
        fit = json.loads((RESULTS / "B200-E4M3-fp32" / "fit.json").read_text())
        self.assertEqual(doc["published"]["mispredictions"], 1793)
        fda = {(c["parameters"].get("F"), c["parameters"].get("out_rounding")) for c in fit["candidates"]
               if c["algorithm"] == "fda" and "class" in c}
        self.assertIn((30, "rne"), fda)
        self.assertIn((31, "rne"), fda)
        self.assertFalse(any(r == "rz" for _, r in fda))


class Refusal(unittest.TestCase):
    def test_files_that_do_not_correspond_are_refused(self):
        script = REPO / "scripts" / "matlab-captures"
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "LICENCE").write_text("licence\n")
            good = tmp / "model_validation" / "V100" / "fp16"
            bad = tmp / "model_validation" / "A2" / "fp16"  # A100's files as an A2's: tests_mma/golden has none
            for folder, src, gpu in ((good, GOLDEN / "V100" / "fp16", "V100"), (bad, GOLDEN / "A100" / "fp16", "A100")):
                folder.mkdir(parents=True)
                for f in src.glob(f"*_{gpu}_*.txt"):
                    if f.name != f"d_{gpu}_fp16.txt":  # the binary32 outputs alone: their fits take a second
                        (folder / f.name.replace(gpu, folder.parent.name)).write_bytes(f.read_bytes())
            # The binary32 d, each line moved one down: the counts agree, the values do not.
            d = (bad / "d_A2_fp32.txt").read_text().splitlines()
            (bad / "d_A2_fp32.txt").write_text("\n".join(d[-1:] + d[:-1]) + "\n")
            out = tmp / "out"
            r = run([sys.executable, str(script), str(tmp), BINARY, "--out", str(out)])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("A2-fp16-fp32: skipped: the files do not correspond", r.stderr)
            self.assertFalse((out / "A2-fp16-fp32").exists())
            readme = (out / "README.md").read_text()
            self.assertIn("- A2-fp16-fp32: the files do not correspond", readme)
            # The set beside it, whose files do correspond, is fitted and reproduced.
            self.assertIn("V100-fp16-fp32: fitted", r.stderr)
            fit = json.loads((out / "V100-fp16-fp32" / "fit.json").read_text())
            self.assertGreater(len(fit["classes"]), 0)
            # ... and its unit's error analysis written beside the fit.
            error = json.loads((out / "V100-fp16-fp32" / "error.json").read_text())
            self.assertEqual(error["unit"]["command"], f"gpuparanoia model dot {fit['candidates'][0]['model_dot']}")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
