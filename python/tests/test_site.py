# The results site (gpuparanoia.site) built from the repository's results/: every page there, every
# relative link and image resolving on disk, the comparisons saying what `gpuparanoia compare` says,
# escaping, and the notes where Graphviz or the plots are missing.
import html.parser
import json
import pathlib
import shutil
import subprocess
import sys
import urllib.parse

import pytest

jinja2 = pytest.importorskip("jinja2", reason="the site needs Jinja2 (python3-jinja2)")
import gpuparanoia  # noqa: E402
import gpuparanoia.site as site  # noqa: E402


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.images, self.rows = [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("a", "link") and "href" in a:
            self.links.append(a["href"])
        if tag in ("img", "script") and "src" in a:
            (self.images if tag == "img" else self.links).append(a["src"])
        if tag == "tr" and a.get("class") == "device":
            self.rows.append(a["data-name"])


def parse(path):
    p = Links()
    p.feed(path.read_text())
    return p


@pytest.fixture(scope="module")
def built(source_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    pages = site.build([source_dir / "results"], out)
    return out, pages


def audit_files(source_dir):
    return sorted(p for p in (source_dir / "results").rglob("*.json")
                  if json.loads(p.read_text()).get("schema") == "gpuparanoia-result/1")


def test_every_result_has_a_row_and_a_page(built, source_dir):
    out, pages = built
    rows = parse(out / "index.html").rows
    audits = audit_files(source_dir)
    assert len(audits) >= 10
    names = [json.loads(p.read_text())["device"]["name"] for p in audits]
    for name in names:
        assert name in rows
    for page in pages:
        assert (out / page).is_file(), page
    linked = {h for h in parse(out / "index.html").links if h.endswith(".html")}
    assert len(linked - {"index.html"}) >= len(audits)


def test_every_link_and_image_resolves(built):
    out, _ = built
    pages = sorted(out.glob("*.html"))
    for page in pages:
        p = parse(page)
        for target in p.links + p.images:
            url = urllib.parse.urlparse(target)
            assert not url.scheme and not url.netloc, f"{page.name}: {target} is not relative"
            assert (out / urllib.parse.unquote(url.path)).is_file(), f"{page.name}: {target} does not resolve"


def test_summation_trees_are_drawn(built, source_dir):
    out, _ = built
    page = (out / "lavapipe-mesa-26.1.6--vulkan-0.html").read_text()
    tree = "(((((((p0+p1)+p2)+p3)+p4)+p5)+p6)+p7)+c"
    assert tree in page
    dot = (out / "lavapipe-mesa-26.1.6--vulkan-0-tree1.dot").read_text()
    # The DOT's edges are the tree's: each of p0..p7 and c goes into a sum, 8 sums.
    assert sorted(line.split(" -> ")[0].strip() for line in dot.splitlines() if " -> " in line and "s" not in
                  line.split(" -> ")[0]) == sorted([f"p{i}" for i in range(8)] + ["c"])
    if shutil.which("dot"):
        svg = (out / "lavapipe-mesa-26.1.6--vulkan-0-tree1.svg").read_text()
        assert svg.count('class="node"') == 8 + 9
        assert 'src="lavapipe-mesa-26.1.6--vulkan-0-tree1.svg"' in page


def test_comparisons_say_what_compare_says(built, source_dir, binary):
    out, _ = built
    a = source_dir / "results" / "pocl-3.1" / "opencl-0-0.json"
    b = source_dir / "results" / "rusticl-mesa-22.3.6" / "opencl-1-0.json"
    page = out / "compare--pocl-3.1--opencl-0-0--rusticl-mesa-22.3.6--opencl-1-0.html"
    assert page.name in parse(out / "pocl-3.1--opencl-0-0.html").links
    assert page.name in parse(out / "rusticl-mesa-22.3.6--opencl-1-0.html").links
    run = subprocess.run([binary, "compare", str(a), str(b)], capture_output=True, text=True)
    assert run.returncode == 1, run.stderr  # differences found
    text = html.unescape(page.read_text())
    # compare's text: a block per difference, "WHERE\n  A: value\n  B: value".
    blocks = [b.splitlines() for b in run.stdout.split("\n\n")]
    differences = [(b[0], b[1][len("  A: "):], b[2][len("  B: "):]) for b in blocks if len(b) == 3 and b[1].startswith("  A: ")]
    assert len(differences) > 10
    for where, va, vb in differences:
        assert f"<tr><td><code>{where}</code></td><td>{va}</td><td>{vb}</td></tr>" in text, where
    assert f"{len(differences)} differences" in text


def test_chosen_comparison(source_dir, tmp_path):
    a = source_dir / "results" / "pocl-3.1" / "opencl-0-0.json"
    b = source_dir / "results" / "lavapipe-mesa-22.3.6" / "vulkan-0.json"
    pages = site.build([a, b], tmp_path, compare=[(a, b)])
    assert "compare--pocl-3.1--opencl-0-0--lavapipe-mesa-22.3.6--vulkan-0.html" in pages
    with pytest.raises(ValueError):
        site.build([a], tmp_path / "again", compare=[(a, b)])


def test_names_are_escaped(source_dir, tmp_path):
    doc = json.loads((source_dir / "results" / "pocl-3.1" / "opencl-0-0.json").read_text())
    evil = '<script>alert("x")</script> & "quoted"'
    doc["device"]["name"] = evil
    doc["findings"][0]["verdict"] = "<img src=x onerror=alert(1)>"
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "evil.json").write_text(json.dumps(doc))
    (tmp_path / "in" / "broken.json").write_text("{not json")
    site.build([tmp_path / "in"], tmp_path / "out")
    for page in (tmp_path / "out").glob("*.html"):
        text = page.read_text()
        assert "<script>alert" not in text and "<img src=x" not in text, page.name
    index = (tmp_path / "out" / "index.html").read_text()
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#34;quoted&#34;" in index
    assert parse(tmp_path / "out" / "index.html").rows == [evil]  # the attribute reads back as the name
    assert "broken.json" in index and "not readable as JSON" in index


def test_missing_tools_leave_a_note(source_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot on it
    monkeypatch.setitem(sys.modules, "gpuparanoia.plot", None)  # its import fails: no matplotlib
    monkeypatch.delattr(gpuparanoia, "plot", raising=False)  # nor taken from an earlier import
    error = {"schema": "gpuparanoia-error/1", "unit": {"label": "hopper:HMMA.16816.F32", "command": "model dot",
             "a_format": "binary16", "b_format": "binary16", "c_format": "binary32", "d_format": "binary32"},
             "ks": [16, 32], "trials": 2, "seed": 1, "distributions": [],
             "series": [{"label": "unit", "kind": "unit", "distribution": "normal", "max_rel": [1e-7, None]}]}
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "error.json").write_text(json.dumps(error))
    shutil.copy(source_dir / "results" / "lavapipe-mesa-26.1.6" / "vulkan-0.json", tmp_path / "in")
    site.build([tmp_path / "in"], tmp_path / "out")
    index = (tmp_path / "out" / "index.html").read_text()
    assert "Graphviz is not installed" in index and "gpuparanoia.plot" in index
    assert not list((tmp_path / "out").glob("*.svg"))
    device = (tmp_path / "out" / "in--vulkan-0.html").read_text()
    assert "Graphviz is not installed" in device and 'href="in--vulkan-0-tree1.dot"' in device
    assert "plots need gpuparanoia.plot" in (tmp_path / "out" / "in--error.html").read_text()


def test_error_analysis_page(binary, tmp_path):
    """An error analysis of `gpuparanoia error`: its page, its table of K, its plots where matplotlib is."""
    (tmp_path / "in").mkdir()
    run = subprocess.run([binary, "error", "--instruction", "cdna3:v_mfma_f32_32x32x8_f16", "--ks", "8", "64",
                          "--trials", "2", "--what-if", "F=26", "--json", str(tmp_path / "in" / "cdna3.json")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    doc = json.loads((tmp_path / "in" / "cdna3.json").read_text())
    site.build([tmp_path / "in"], tmp_path / "out")
    page = (tmp_path / "out" / "in--cdna3.html").read_text()
    assert "cdna3:v_mfma_f32_32x32x8_f16" in parse(tmp_path / "out" / "index.html").rows
    assert "<th>K = 8</th><th>K = 64</th>" in page
    unit = next(s for s in doc["series"] if s["kind"] == "unit")
    assert f"<td>{unit['label']}</td><td>{unit['distribution']}</td><td>{unit['max_rel'][0]:.3g}</td>" in page
    images = parse(tmp_path / "out" / "in--cdna3.html").images
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert not images and "matplotlib" in page
        return
    assert images == ["in--cdna3-error.svg", "in--cdna3-bias.svg", "in--cdna3-what-if.svg"]
    for image in images:
        assert (tmp_path / "out" / image).read_text().lstrip().startswith("<?xml")


def test_fit_beside_the_published_model(binary, source_dir, tmp_path):
    """A fit of captured dot products (H100's fp16 captures, fitted by `gpuparanoia fit`) with the
    capture set's set.json beside it: its row, its candidates, the published settings beside the fit."""
    golden = source_dir / "tests_mma" / "golden" / "nvidia-tensor-cores" / "H100" / "fp16"
    formats = ["--a-format", "binary16", "--b-format", "binary16", "--c-format", "binary32", "--d-format", "binary32"]
    convert = subprocess.run([binary, "captures", "convert", *formats] + [
        x for k, f in zip("abcd", ("a_H100_fp16", "b_H100_fp16", "c_H100_fp32", "d_H100_fp32"))
        for x in (f"--{k}", str(golden / f"{f}.txt"))], capture_output=True, text=True)
    assert convert.returncode == 0, convert.stderr
    folder = tmp_path / "in" / "H100-fp16-fp32"
    folder.mkdir(parents=True)
    (folder / "captures.txt").write_text(convert.stdout)
    fit = subprocess.run([binary, "fit", *formats, "--json", str(folder / "fit.json"), str(folder / "captures.txt")],
                         capture_output=True, text=True)
    assert fit.returncode == 0, fit.stderr
    doc = json.loads((folder / "fit.json").read_text())
    published = {"model": "models/H100.m", "model_dot": "--algorithm fda --F 24 <published>", "mispredictions": 17}
    (folder / "set.json").write_text(json.dumps({"set": folder.name, "gpu": "H100", "input": "fp16", "output": "fp32",
                                                 "lines": doc["lines"], "published": published}))
    site.build([tmp_path / "in"], tmp_path / "out")
    assert parse(tmp_path / "out" / "index.html").rows == ["H100 fp16 → fp32"]
    page = (tmp_path / "out" / "H100-fp16-fp32--fit.html").read_text()
    assert f"<code>{html.escape(doc['candidates'][0]['model_dot'], quote=True)}</code>" in page
    assert "<code>--algorithm fda --F 24 &lt;published&gt;</code>" in page
    assert f"17 of {doc['lines']} lines" in page
    assert "set.json" not in (tmp_path / "out" / "index.html").read_text()  # a companion, not a file left out


def _svg_images(out, page):
    images = parse(out / page).images
    for image in images:
        assert (out / image).read_text().lstrip().startswith("<?xml"), image
    return images


def test_fit_page_shows_the_error_plots_of_its_unit(built, source_dir):
    """results/matlab-tensor-core: a fit's page draws the error.json beside it (the unit the fit
    identified, the published settings as its what-if), which has no row of its own; a fit without
    one says why."""
    pytest.importorskip("matplotlib", reason="the plots need matplotlib (python3-matplotlib)")
    out, pages = built
    folder = source_dir / "results" / "matlab-tensor-core" / "B200-E4M3-fp32"
    error = json.loads((folder / "error.json").read_text())
    page = (out / "B200-E4M3-fp32--fit.html").read_text()
    images = [i for i in _svg_images(out, "B200-E4M3-fp32--fit.html") if "-unit" in i]
    assert images == ["B200-E4M3-fp32--fit-unit1-error.svg", "B200-E4M3-fp32--fit-unit1-bias.svg",
                      "B200-E4M3-fp32--fit-unit1-what-if.svg"]
    assert f"The unit: {html.escape(error['unit']['command'], quote=True)}</figcaption>" in page
    assert "its what-if <code>F=25,out_rounding=rz</code> is the published model, models/B200TC.m" in page
    assert not any("--error" in p for p in pages)  # no page, nor row, of its own
    assert "gpuparanoia-error" not in (out / "index.html").read_text()
    assert "No error analysis: no candidate of the fit reproduces every line" in \
        (out / "H100-E4M3-fp16--fit.html").read_text()
    assert not [i for i in parse(out / "H100-E4M3-fp16--fit.html").images if "-unit" in i]


def test_audit_page_shows_the_error_plots_of_its_units(binary, source_dir, tmp_path):
    """An audit X.json with the error analyses of its units in X.error/ (lavapipe 26's cooperative
    matrices, as `gpuparanoia error --profile` states them): plotted on the audit's page, no row of
    their own."""
    pytest.importorskip("matplotlib", reason="the plots need matplotlib (python3-matplotlib)")
    (tmp_path / "in").mkdir()
    audit = source_dir / "results" / "lavapipe-mesa-26.1.6" / "vulkan-0.json"
    shutil.copy(audit, tmp_path / "in")
    (tmp_path / "in" / "vulkan-0.error").mkdir()
    for acc in ("binary16", "binary32"):
        run = subprocess.run([binary, "error", "--profile", str(audit), "--config",
                              f"8x8x8:binary16,binary16,{acc},{acc}", "--ks", "8,64", "--trials", "2",
                              "--json", str(tmp_path / "in" / "vulkan-0.error" / f"{acc}.json")],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
    pages = site.build([tmp_path / "in"], tmp_path / "out")
    assert pages == ["index.html", "in--vulkan-0.html"]
    assert len(parse(tmp_path / "out" / "index.html").rows) == 1
    images = [i for i in _svg_images(tmp_path / "out", "in--vulkan-0.html") if "-unit" in i]
    assert images == [f"in--vulkan-0-unit{i}-{kind}.svg" for i in (1, 2) for kind in ("error", "bias")]
    page = (tmp_path / "out" / "in--vulkan-0.html").read_text()
    assert "--c-format binary16" in page and "--c-format binary32" in page


def test_command_line(source_dir, tmp_path):
    run = subprocess.run([sys.executable, "-m", "gpuparanoia.site", str(source_dir / "results" / "pocl-3.1"),
                          str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "index.html").is_file()
    run = subprocess.run([sys.executable, "-m", "gpuparanoia.site", str(tmp_path / "absent"), str(tmp_path)],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "not found" in run.stderr
