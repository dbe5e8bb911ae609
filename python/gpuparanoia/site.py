"""The results site: a static, browsable site of result files (README, The results site).

    python3 -m gpuparanoia.site RESULTS... OUT [--compare A B]...

RESULTS are folders (searched for *.json) or files: audits (gpuparanoia-result/1), fits of captured
dot products (gpuparanoia-fit/1, with the published model beside them where a set.json accompanies
the fit) and error analyses (gpuparanoia-error/1; that of a result's unit, error.json beside a
fit.json or in the folder X.error/ beside an audit X.json, drawn on the result's page); other JSON
is listed as left out. OUT receives
index.html (every result, sortable and filterable), a page per result and comparison pages. What
the pages say comes from the compiled reports (gpuparanoia._core: compare, result_headlines,
finding_tree, summation_tree_dot), so that the site and the command line say the same; Jinja2
renders them with autoescaping. Graphviz draws the summation trees and gpuparanoia.plot the error
analyses where they are installed; where not, the pages say so.
"""
import argparse
import concurrent.futures
import dataclasses
import itertools
import json
import multiprocessing
import os
import pathlib
import re
import shutil
import sys

import jinja2

from . import _core

TEMPLATES = pathlib.Path(__file__).resolve().parent / "templates"
STATIC = ("site.css", "site.js")
KINDS = {"gpuparanoia-result/1": "audit", "gpuparanoia-fit/1": "fit", "gpuparanoia-error/1": "error analysis"}
# Comparison pages: each audit against at most this many others of its backend and build variant.
COMPARISONS_PER_RESULT = 4


@dataclasses.dataclass(eq=False)
class Entry:
    path: pathlib.Path
    doc: dict
    kind: str
    page: str = ""
    name: str = ""
    backend: str = ""
    config: str = ""
    driver: str = ""
    models: list = dataclasses.field(default_factory=list)
    companion: dict | None = None  # a fit's set.json: the captured set and the published model
    errors: list = dataclasses.field(default_factory=list)  # the error analyses of its unit (Entry)
    comparisons: list = dataclasses.field(default_factory=list)  # (page, other Entry)


def _json_files(results):
    for r in map(pathlib.Path, results):
        yield from sorted(r.rglob("*.json")) if r.is_dir() else [r]


def _describe(e):
    """The name, backend, configuration, driver and identified models an index row shows."""
    d = e.doc
    if e.kind == "audit":
        dev = d.get("device") if isinstance(d.get("device"), dict) else {}
        e.name = str(dev.get("name") or e.path.stem)
        e.backend = str(dev.get("backend", ""))
        dev_id = str(dev.get("id", ""))
        e.config = dev_id.partition("+")[2] or "default"
        e.driver = str(dev.get("driver", ""))
        e.models = _core.result_headlines(d)
    elif e.kind == "fit":
        s = e.companion or {}
        e.name = f"{s['gpu']} {s.get('input', '')} → {s.get('output', '')}".strip() if "gpu" in s else e.path.parent.name
        e.backend = "captured dot products"
        e.config = str(d.get("config", ""))
        e.driver = str(s.get("set", e.path.parent.name))
        first = (d.get("candidates") or [{}])[0]
        lead = "fit" if d.get("classes") else "no candidate reproduces every line; closest"
        e.models = [f"{lead}: {first.get('description', '?')} ({first.get('mismatches', '?')} mismatches)"]
    else:
        unit = d.get("unit") if isinstance(d.get("unit"), dict) else {}
        e.name = str(unit.get("label") or e.path.stem)
        e.backend = "error analysis"
        e.config = ",".join(str(unit.get(f"{x}_format", "?")) for x in "abcd")
        e.models = [str(unit.get("command", ""))]


def _owner(path):
    """The result file an error analysis belongs to, the analysis of its unit: error.json beside a
    fit.json, any file of the folder X.error/ beside an audit X.json; None for one of its own."""
    if path.name == "error.json" and (path.parent / "fit.json").is_file():
        return (path.parent / "fit.json").resolve()
    folder = path.parent
    if folder.suffix == ".error" and (folder.parent / f"{folder.stem}.json").is_file():
        return (folder.parent / f"{folder.stem}.json").resolve()
    return None


def load(results):
    """The entries of the result files found, and (path, why) for each file left out."""
    entries, left_out = [], []
    for path in _json_files(results):
        try:
            doc = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, ValueError) as err:
            left_out.append((str(path), f"not readable as JSON: {err}"))
            continue
        kind = KINDS.get(doc.get("schema")) if isinstance(doc, dict) else None
        if kind is None:
            if not (path.name == "set.json" and (path.parent / "fit.json").is_file()):
                left_out.append((str(path), "not a result, fit or error analysis (no known schema)"))
            continue
        e = Entry(path=path, doc=doc, kind=kind)
        if kind == "fit" and (path.parent / "set.json").is_file():
            try:
                e.companion = json.loads((path.parent / "set.json").read_text())
            except (OSError, UnicodeDecodeError, ValueError) as err:
                left_out.append((str(path.parent / "set.json"), f"not readable as JSON: {err}"))
        try:
            _describe(e)
        except (ValueError, TypeError, KeyError) as err:
            left_out.append((str(path), f"left out: {err}"))
            continue
        entries.append(e)
    # An error analysis of a result's unit is shown on that result's page, not in a row of its own.
    by_path = {e.path.resolve(): e for e in entries if e.kind != "error analysis"}
    for e in [e for e in entries if e.kind == "error analysis"]:
        if (owner := by_path.get(_owner(e.path))) is not None:
            owner.errors.append(e)
            entries.remove(e)
    used = set()
    for e in entries:
        stem = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{e.path.parent.name}--{e.path.stem}").strip("-.") or "result"
        page, n = stem, 1
        while page in used:
            n += 1
            page = f"{stem}-{n}"
        used.add(page)
        e.page = page + ".html"
    return entries, left_out


class Tools:
    """What the machine has for pictures: Graphviz's dot (drawn by the compiled reports' draw_svg),
    gpuparanoia.plot (matplotlib); the notes where one is missing or fails."""

    def __init__(self):
        self.notes = []
        try:
            from . import plot  # noqa: PLC0415 (optional: matplotlib)

            self.plot, self.plot_missing = plot, ""
        except ImportError as err:
            self.plot, self.plot_missing = None, str(err)
            self.notes.append(f"Plots of error analyses need gpuparanoia.plot and matplotlib (Debian: "
                              f"python3-matplotlib): {err}.")

    def tree_svg(self, dot_file, svg):
        """The SVG of the DOT file, drawn without a shell; why not, or an empty string."""
        note = _core.draw_svg(dot_file, svg)
        if note and note + "." not in self.notes:
            self.notes.append(note + ".")
        return note


def _trees(e):
    """(where, tree text) of the summation trees a result names: findings, or a fit's candidates."""
    if e.kind == "audit":
        for f in e.doc.get("findings") or []:
            if isinstance(f, dict) and (text := _core.finding_tree(f)):
                yield f"{f.get('probe', '')} [{f.get('config', '')}]", text
    elif e.kind == "fit":
        for i, c in enumerate(e.doc.get("candidates") or []):
            text = (c.get("parameters") or {}).get("tree") if c.get("algorithm") == "tree" else None
            if isinstance(text, str):
                yield f"candidate {i + 1} (class {c.get('class', '-')})", text


def _draw_trees(e, out, tools):
    drawn, seen = [], {}
    for where, text in _trees(e):
        if text in seen:  # the same tree named by several findings: drawn once
            seen[text]["where"].append(where)
            continue
        try:
            dot_text = _core.summation_tree_dot(text)
        except ValueError as err:
            drawn.append({"where": [where], "text": text, "svg": None, "note": str(err), "dot": None})
            continue
        stem = f"{e.page[:-5]}-tree{len(drawn) + 1}"
        (out / f"{stem}.dot").write_text(dot_text)
        note = tools.tree_svg(out / f"{stem}.dot", out / f"{stem}.svg")
        item = {"where": [where], "text": text, "dot": f"{stem}.dot", "svg": None if note else f"{stem}.svg",
                "note": note}
        seen[text] = item
        drawn.append(item)
    return drawn


# The plots of an error analysis (gpuparanoia.plot), each beside the page: (function, file suffix, caption).
PLOTS = (
    ("plot_error", "error", "Relative error against K: the unit, binary32 FMA chains and pairwise sums, the bounds"),
    ("plot_bias", "bias", "Bias: the mean signed relative error against K"),
    ("plot_what_if", "what-if", "The unit beside its what-if variants"),
)


def _error_figures(e, stem, out, tools, jobs):
    """The error analysis's plots as (file, caption), the caption naming the unit, and a note where
    they cannot be drawn; the files named after the page `stem`, each appended to `jobs` as
    (function, document, path) for _draw (which may change the note)."""
    if tools.plot is None:
        return [], f"plots need gpuparanoia.plot and matplotlib (Debian: python3-matplotlib): {tools.plot_missing}"
    figures = []
    unit = e.doc.get("unit") if isinstance(e.doc.get("unit"), dict) else {}
    for function, suffix, caption in PLOTS:
        if suffix == "what-if" and not any(s.get("kind") == "what-if" for s in e.doc.get("series") or []):
            continue
        name = f"{stem}-{suffix}.svg"
        jobs.append((function, e.doc, str(out / name)))
        figures.append((name, f"{caption}. The unit: {unit.get('command') or unit.get('label', '?')}"))
    return figures, ""


def _draw_one(job):
    """One plot of _error_figures' jobs (in a worker process): None, or why it was not drawn."""
    function, doc, path = job
    try:
        from . import plot  # noqa: PLC0415

        getattr(plot, function)(doc, path)
        return None
    except ImportError as err:
        return f"plots need matplotlib (Debian: python3-matplotlib): {err}"
    except Exception as err:  # noqa: BLE001 (a plot that fails is a note on the page, not the site's end)
        return f"the plots could not be drawn: {type(err).__name__}: {err}"


def _draw(jobs):
    """The plots, on every core (each a second or so of matplotlib): {path: why not} for those that
    failed."""
    if not jobs:
        return {}
    workers = min(len(jobs), os.cpu_count() or 1)
    if workers > 1:
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            notes = list(pool.map(_draw_one, jobs))
    else:
        notes = [_draw_one(job) for job in jobs]
    return {job[2]: note for job, note in zip(jobs, notes) if note}


def _comparisons(entries, chosen, out, env):
    """Comparison pages: each audit against others of its backend and build variant (bounded), and
    the chosen pairs; each linked from both device pages."""
    audits = [e for e in entries if e.kind == "audit"]
    by_path = {e.path.resolve(): e for e in audits}
    pairs, count = [], {id(e): 0 for e in audits}
    group_of = lambda e: (e.backend, e.config)  # noqa: E731
    for _, group in itertools.groupby(sorted(audits, key=group_of), key=group_of):
        for a, b in itertools.combinations(list(group), 2):
            if count[id(a)] < COMPARISONS_PER_RESULT and count[id(b)] < COMPARISONS_PER_RESULT:
                pairs.append((a, b))
                count[id(a)] += 1
                count[id(b)] += 1
    for pa, pb in chosen:
        a, b = by_path.get(pathlib.Path(pa).resolve()), by_path.get(pathlib.Path(pb).resolve())
        if a is None or b is None:
            raise ValueError(f"--compare {pa} {pb}: both must be audit results among RESULTS")
        if (a, b) not in pairs and (b, a) not in pairs:
            pairs.append((a, b))
    pages = []
    for a, b in pairs:
        c = _core.compare(a.doc, b.doc)
        page = f"compare--{a.page[:-5]}--{b.page[:-5]}.html"
        (out / page).write_text(env.get_template("compare.html").render(a=a, b=b, c=c, title=f"{a.name} against {b.name}"))
        a.comparisons.append((page, b))
        b.comparisons.append((page, a))
        pages.append(page)
    return pages


def build(results, out, compare=()):
    """Writes the site of the result files and folders `results` into the folder `out`; `compare`:
    pairs of audit result paths to compare beside those of one backend and variant. Returns the
    pages written (file names under out)."""
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=True,
                             lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    for name in STATIC:
        shutil.copyfile(TEMPLATES / name, out / name)
    entries, left_out = load(results)
    tools = Tools()
    pages = _comparisons(entries, compare, out, env)
    # (entry, figures, note) of each error analysis a page shows, its own or its unit's, the plots
    # drawn together (in parallel) before the pages are written.
    jobs, analyses_of = [], {}
    for e in entries:
        analyses_of[id(e)] = [
            (a, *_error_figures(a, e.page[:-5] + (f"-unit{i + 1}" if a is not e else ""), out, tools, jobs))
            for i, a in enumerate([e] if e.kind == "error analysis" else e.errors)]
    failed = _draw(jobs)
    for note in dict.fromkeys(failed.values()):
        if note.startswith("plots need matplotlib") and note + "." not in tools.notes:
            tools.notes.append(note + ".")
    for e in entries:
        trees = _draw_trees(e, out, tools)
        analyses = []
        for a, figures, note in analyses_of[id(e)]:
            notes = [failed[str(out / name)] for name, _ in figures if str(out / name) in failed]
            analyses.append((a, [f for f in figures if str(out / f[0]) not in failed], note or (notes[0] if notes else "")))
        findings = [f for f in e.doc.get("findings") or [] if isinstance(f, dict)] if e.kind == "audit" else []
        (out / e.page).write_text(env.get_template("device.html").render(
            e=e, title=e.name, trees=trees, analyses=analyses, findings=findings,
            published=any(f.get("published") for f in findings),
            profile=json.dumps(e.doc.get("profile"), indent=2, sort_keys=True) if e.kind == "audit" else "",
            document=json.dumps({k: v for k, v in e.doc.items() if k not in ("findings", "profile")}, indent=2)))
        pages.append(e.page)
    (out / "index.html").write_text(env.get_template("index.html").render(
        title="gpuparanoia results", entries=entries, left_out=left_out, notes=tools.notes))
    return ["index.html", *pages]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m gpuparanoia.site", description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", metavar="RESULTS... OUT", help="result folders or files, then the site's folder")
    ap.add_argument("--compare", nargs=2, action="append", default=[], metavar=("A", "B"),
                    help="also compare these two audit results (repeatable)")
    args = ap.parse_args(argv)
    if len(args.paths) < 2:
        ap.error("give RESULTS... and OUT")
    *results, out = args.paths
    missing = [r for r in results if not pathlib.Path(r).exists()]
    if missing:
        ap.error(f"not found: {', '.join(missing)}")
    try:
        pages = build(results, out, args.compare)
    except ValueError as err:
        ap.error(str(err))
    print(f"gpuparanoia.site: {len(pages)} pages in {out}/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
