"""Plots of an error analysis (`gpuparanoia error`, gpuparanoia.error_analysis) as SVG files.

Each function takes the report: the JSON document (schema gpuparanoia-error/1) as a dict, the path
of its file, or error_analysis()'s result (the same keys, numpy arrays), and writes one SVG file.
`gpuparanoia error --out DIR` runs this file as a script (python3 - --json FILE --out DIR): the
program embeds its text, so that the command and the package draw the same plots.
"""

import json
import math
import os
import sys

NO_MATPLOTLIB = 77  # the exit status `gpuparanoia error` reads as "matplotlib is not installed"

SERIES_STYLE = {
    "unit": {"color": "C0", "linestyle": "-", "marker": "o"},
    "float32-fma-chain": {"color": "C1", "linestyle": "-", "marker": "s"},
    "float32-pairwise": {"color": "C2", "linestyle": "-", "marker": "^"},
}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    # Text as SVG text, not glyph outlines: files a tenth the size, drawn several times faster.
    matplotlib.rcParams["svg.fonttype"] = "none"
    import matplotlib.pyplot as plt

    return plt


def load(report):
    """The report as a dict: a dict is returned as it is, a path (str or os.PathLike) is read."""
    if isinstance(report, dict):
        return report
    with open(os.fspath(report), encoding="utf-8") as f:
        return json.load(f)


def _values(xs):
    """A statistic's entries as floats, None (JSON null: not computed) as NaN."""
    if xs is None:
        return None
    return [math.nan if x is None else float(x) for x in xs]


def _positive(xs):
    """For a log axis: zeros (an exact result) and NaN left out as NaN."""
    return [x if x > 0 else math.nan for x in xs]


def _style(doc, s):
    """A series' line style: its kind's, or for a what-if a colour of its own, the same in every plot."""
    if s["kind"] in SERIES_STYLE:
        return dict(SERIES_STYLE[s["kind"]])
    labels = list(dict.fromkeys(x["label"] for x in doc["series"] if x["kind"] == "what-if"))
    return {"color": "C{}".format(3 + labels.index(s["label"])), "linestyle": "--", "marker": "x"}


def _distributions(doc):
    return [d["name"] for d in doc["distributions"]]


def _series(doc, distribution, kinds):
    return [s for s in doc["series"] if s["distribution"] == distribution and s["kind"] in kinds]


def _grid(plt, doc, title):
    names = _distributions(doc)
    cols = min(2, len(names))
    rows = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 4.2 * rows), squeeze=False)
    for ax in axes.flat[len(names):]:
        ax.set_visible(False)
    fig.suptitle(title)
    # Margins fixed in inches (the title, the axis labels, the panels' titles) rather than measured by
    # tight_layout, which took half of a plot's time.
    w, h = fig.get_size_inches()
    fig.subplots_adjust(left=0.85 / w, right=1 - 0.25 / w, bottom=0.6 / h, top=1 - 0.75 / h, wspace=1.1 / 6.4,
                        hspace=1.0 / (4.2 - 1.0))
    return fig, list(zip(names, axes.flat))


def _finish(ax, name, ylabel, log_y=True):
    from matplotlib.ticker import FuncFormatter, NullFormatter, NullLocator

    # Plain tick labels (K as an integer, errors as 1e-05) and no minor ticks on K: mathtext labels
    # and minor ticks were most of a plot's drawing time.
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: "{:d}".format(int(v)) if v >= 1 else ""))
    ax.xaxis.set_minor_locator(NullLocator())
    # A panel whose every error is zero (all exact) has nothing a log axis can show.
    if log_y and any(y > 0 for line in ax.get_lines() for y in line.get_ydata()):
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: "{:.0e}".format(v)))
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("K")
    ax.set_ylabel(ylabel)
    ax.set_title(name)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="x-small")


def _save(plt, fig, path):
    fig.savefig(path, format="svg")
    plt.close(fig)
    return path


def _title(doc):
    u = doc["unit"]
    return "{} ({} x {} -> {}), {} trials".format(u["label"], u["a_format"], u["b_format"], u["d_format"], doc["trials"])


def _max_and_mean(ax, ks, doc, s, label_mean):
    """A series' largest relative error (its style) and its mean (dotted, its colour)."""
    style = _style(doc, s)
    label = "unit" if s["kind"] == "unit" else s["label"]
    ax.plot(ks, _positive(_values(s["max_rel"])), label=label + " max", **style)
    ax.plot(ks, _positive(_values(s["mean_rel"])), label=label + " mean" if label_mean else None,
            color=style["color"], linestyle=":", alpha=0.7)


def plot_error(report, path):
    """Error against K, log-log, per distribution: the largest relative error of the unit, of its
    what-ifs, of the binary32 FMA chain and of the pairwise binary32 sum, and the unit's two bounds
    (which bound |d - exact| / (|c| + sum |a_i b_i|), never more than the relative error where no
    term cancels)."""
    doc = load(report)
    plt = _pyplot()
    ks = list(doc["ks"])
    fig, panels = _grid(plt, doc, "Error against K: " + _title(doc))
    for name, ax in panels:
        for s in _series(doc, name, ("unit", "float32-fma-chain", "float32-pairwise")):
            _max_and_mean(ax, ks, doc, s, True)
            if s["kind"] == "unit":
                for key, dash, what in (("bound_deterministic", "--", "deterministic bound (normwise)"),
                                        ("bound_probabilistic", "-.", "probabilistic bound (normwise)")):
                    b = _values(s.get(key))
                    if b is not None:
                        ax.plot(ks, _positive(b), color="k", linestyle=dash, label=what)
        for s in _series(doc, name, ("what-if",)):
            ax.plot(ks, _positive(_values(s["max_rel"])), label=s["label"] + " max", **_style(doc, s))
        _finish(ax, name, "relative error")
    return _save(plt, fig, path)


def plot_bias(report, path):
    """The mean signed relative error (d - exact) / |exact| against K, per distribution, of every
    series (the unit, its what-ifs, the binary32 references)."""
    doc = load(report)
    plt = _pyplot()
    ks = list(doc["ks"])
    fig, panels = _grid(plt, doc, "Bias against K: " + _title(doc))
    for name, ax in panels:
        floor = math.inf
        for s in _series(doc, name, ("unit", "what-if", "float32-fma-chain", "float32-pairwise")):
            style = _style(doc, s)
            ys = _values(s["mean_signed_rel"])
            floor = min([floor] + [abs(y) for y in ys if y == y and y != 0])
            ax.plot(ks, ys, label="unit" if s["kind"] == "unit" else s["label"], **style)
        ax.axhline(0, color="k", linewidth=0.8)
        ax.set_yscale("symlog", linthresh=floor if math.isfinite(floor) else 1e-9)
        _finish(ax, name, "mean signed relative error", log_y=False)
    return _save(plt, fig, path)


def plot_what_if(report, path):
    """The unit and its what-if variants side by side: largest and mean relative error against K,
    per distribution, the binary32 FMA chain for scale."""
    doc = load(report)
    plt = _pyplot()
    ks = list(doc["ks"])
    fig, panels = _grid(plt, doc, "What if: " + _title(doc))
    for name, ax in panels:
        for s in _series(doc, name, ("unit", "what-if", "float32-fma-chain")):
            _max_and_mean(ax, ks, doc, s, False)
        _finish(ax, name, "relative error (dotted: mean)")
    return _save(plt, fig, path)


def plot_all(report, out_dir):
    """error_vs_k.svg, bias_vs_k.svg and what_if.svg in out_dir; their paths."""
    doc = load(report)
    os.makedirs(out_dir, exist_ok=True)
    return [
        plot_error(doc, os.path.join(out_dir, "error_vs_k.svg")),
        plot_bias(doc, os.path.join(out_dir, "bias_vs_k.svg")),
        plot_what_if(doc, os.path.join(out_dir, "what_if.svg")),
    ]


def main(argv):
    import argparse

    p = argparse.ArgumentParser(description="SVG plots of a gpuparanoia error report")
    p.add_argument("--json", required=True, help="the report (schema gpuparanoia-error/1)")
    p.add_argument("--out", required=True, help="the folder the SVG files go to")
    args = p.parse_args(argv)
    try:
        _pyplot()
    except ImportError as e:
        print("plot.py: matplotlib is not installed: {}".format(e), file=sys.stderr)
        return NO_MATPLOTLIB
    for path in plot_all(args.json, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
