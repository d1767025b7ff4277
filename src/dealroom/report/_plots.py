"""The report's plots, drawn with matplotlib as SVG when the report is built ([report] extra).

Each function takes one entry of :func:`~dealroom.report._figures.plot_data` and returns the
SVG text. Text stays text (``svg.fonttype: none``) and ids are fixed (``svg.hashsalt``), so
a report is the same bytes each time it is built from the same runs. The data artists have
ids starting ``data-`` (the browser tests count their marks).
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable
from typing import Any

from dealroom.errors import MissingDependency

RC: dict[str, Any] = {"svg.fonttype": "none", "svg.hashsalt": "dealroom", "font.size": 9,
      "axes.spines.top": False, "axes.spines.right": False}
MARKERS = "osD^vP*X"
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_XMLNS = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')


def _figure(width: float = 5.6, height: float = 3.6, bottom: float = 0.14) -> Any:
    """A figure with fixed margins (a layout engine would triple the drawing time)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependency("matplotlib", extra="report", feature="the report's plots") \
            from None
    fig = Figure(figsize=(width, height))
    fig.subplots_adjust(left=0.12, right=0.96, bottom=bottom, top=0.9, wspace=0.45,
                        hspace=0.6)
    return fig


def _svg(fig: Any) -> str:
    import matplotlib

    with matplotlib.rc_context(RC):  # type: ignore[arg-type]  # keys typed as Literal
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": "dealroom"})
    text = buffer.getvalue()
    text = _METADATA.sub("", text[text.index("<svg"):])
    return _XMLNS.sub("", text)  # inline in HTML: no namespaces, so no URL at all


def _scatter(data: dict[str, Any], xlabel: str, ylabel: str, *, logx: bool = False,
             title: str = "") -> str:
    fig = _figure()
    ax = fig.add_subplot()
    for i, (name, points) in enumerate(data["series"].items()):
        xs, ys = zip(*points, strict=True)
        ax.scatter(xs, ys, label=name, marker=MARKERS[i % len(MARKERS)], alpha=0.75, s=22,
                   gid=f"data-{i}")
    if logx:
        from matplotlib.ticker import LogLocator, NullFormatter

        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend(fontsize=7, loc="lower right")
    return _svg(fig)


def pass_coverage(d: dict[str, Any]) -> str:
    return _scatter(d, "coverage (share of the room's tokens read, log scale)",
                    "criteria pass rate", logx=True,
                    title=f"Spearman {_r(d['spearman'])}, Pearson on log {_r(d['pearson_log'])}")


def pass_cost(d: dict[str, Any]) -> str:
    return _scatter(d, "cost per room (USD)", "criteria pass rate",
                    title=f"Spearman {_r(d['spearman'])}, Pearson {_r(d['pearson'])}")


def delegation(d: dict[str, Any]) -> str:
    return _scatter(d, "room size (documents)", "sub-calls per episode",
                    title=f"Pearson r = {_r(d['pearson'])}")


def _policy_panels(policies: dict[str, Any], base: float, per_row: float) -> tuple[Any, Any]:
    """A figure with one panel per policy, two to a row (spare panels hidden), and the
    ``(ax, (policy, data))`` pairs to draw."""
    rows = math.ceil(len(policies) / 2)
    fig = _figure(5.6, base + per_row * rows, bottom=0.12)
    axes = fig.subplots(rows, min(2, len(policies)), squeeze=False)
    for ax in axes.flat[len(policies):]:
        ax.set_visible(False)
    return fig, list(zip(axes.flat, policies.items(), strict=False))


def passk_curves(d: dict[str, Any]) -> str:
    from matplotlib.ticker import MaxNLocator

    fig, panels = _policy_panels(d["policies"], 2.4, 1.6)
    for n, (ax, (name, turns)) in enumerate(panels):
        for i, (t, points) in enumerate(turns.items()):
            ks, values = zip(*points, strict=True)
            ax.plot(ks, values, marker=MARKERS[i % len(MARKERS)], label=f"T = {t}",
                    gid=f"data-{n}-{i}")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set(title=name, xlabel="K (samples)", ylabel="Pass@(K,T)", ylim=(-0.02, 1.02))
        ax.title.set_fontsize(8)
        ax.legend(fontsize=7)
    return _svg(fig)


def passk_heatmap(d: dict[str, Any]) -> str:
    """The K x T grid of each policy's Pass@(K,T)."""
    fig, panels = _policy_panels(d["policies"], 2.2, 1.8)
    for n, (ax, (name, turns)) in enumerate(panels):
        ts = list(turns)
        ks = sorted({k for points in turns.values() for k, _ in points})
        grid = [[dict(map(tuple, turns[t])).get(k, math.nan) for k in ks] for t in ts]
        _heat(fig, ax, grid, ks, ts, "K (samples)", "T (turns)", (0.0, 1.0), f"data-{n}",
              "Pass@(K,T)")
        ax.set_title(name, fontsize=8)
    return _svg(fig)


def passk_diff(d: dict[str, Any]) -> str:
    fig = _figure()
    ax = fig.add_subplot()
    _heat(fig, ax, d["diff"], d["k"], d["turns"], "K (samples)", "T (turns)", (-1.0, 1.0),
          "data-0", "difference", cmap="RdBu")
    ax.set_title(f"Pass@(K,T): {d['a']} minus {d['b']}", fontsize=8)
    return _svg(fig)


def root_share(d: dict[str, Any]) -> str:
    fig = _figure(bottom=0.3)
    ax = fig.add_subplot()
    names = list(d["shares"])
    width = 0.38
    for i, label in enumerate(("input tokens", "output tokens")):
        values = [100 * (d["shares"][n][i] or 0.0) for n in names]
        ax.bar([j + (i - 0.5) * width for j in range(len(names))], values, width, label=label,
               gid=f"data-{i}")
    ax.set_xticks(range(len(names)), names, rotation=15, ha="right", fontsize=7)
    ax.set(ylabel="root's share of tokens (%)", title="the root's share of the tokens")
    ax.legend(fontsize=7)
    return _svg(fig)


def by_type(d: dict[str, Any]) -> str:
    fig = _figure(bottom=0.22)
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(d["rates"]))
    for i, (name, rates) in enumerate(d["rates"].items()):
        ax.bar([j + i * width - 0.4 + width / 2 for j in range(len(d["types"]))],
               [0.0 if r is None or math.isnan(r) else r for r in rates], width, label=name,
               gid=f"data-{i}")
    ax.set_xticks(range(len(d["types"])), d["types"], rotation=20, ha="right", fontsize=7)
    ax.set(ylabel="pass rate", ylim=(0, 1.05), title="pass rate per criterion type")
    ax.legend(fontsize=7)
    return _svg(fig)


def depth(d: dict[str, Any]) -> str:
    fig = _figure(4.6, 4.2, bottom=0.12)
    ax = fig.add_subplot()
    xs, ys = [p[0] for p in d["pairs"]], [p[1] for p in d["pairs"]]
    ax.plot([0, 1], [0, 1], color="0.7", lw=1, ls="--", label="same at both depths")
    ax.scatter(xs, ys, s=26, gid="data-0", label="a room and policy")
    ax.set(xlabel="pass rate at depth 1", ylabel="pass rate at depth 2", xlim=(-0.02, 1.02),
           ylim=(-0.02, 1.02), title="depth 1 against depth 2, per room")
    ax.legend(fontsize=7)
    return _svg(fig)


def grid(d: dict[str, Any]) -> str:
    fig = _figure()
    fig.subplots_adjust(left=0.3)
    ax = fig.add_subplot()
    _heat(fig, ax, d["pass_rate"], d["subs"], d["roots"], "sub-agent", "root", (0.0, 1.0),
          "data-0", "pass rate")
    ax.set_title(f"T = {d['max_turns']}, depth {d['depth']}: root gap "
                 f"{_r(d['root_gap_points'], 1)} pts, sub gap {_r(d['sub_gap_points'], 1)} pts",
                 fontsize=8)
    return _svg(fig)


def by_turn(d: dict[str, Any]) -> str:
    fig = _figure()
    ax = fig.add_subplot()
    for i, (name, points) in enumerate(d["series"].items()):
        turns, rates = zip(*points, strict=True)
        ax.plot(turns, rates, marker=MARKERS[i % len(MARKERS)], ms=3, label=name,
                gid=f"data-{i}")
    ax.set(xlabel="root turn", ylabel="pass rate of the memo as of the turn", ylim=(-0.02, 1.02),
           title="pass rate per turn (memo history)")
    ax.legend(fontsize=7)
    return _svg(fig)


def _heat(fig: Any, ax: Any, values: list[list[float]], xs: list, ys: list, xlabel: str,
          ylabel: str, limits: tuple[float, float], gid: str, label: str,
          cmap: str = "viridis") -> None:
    import numpy as np

    data = np.array([[math.nan if v is None else v for v in row] for row in values], float)
    mesh = ax.pcolormesh(data, cmap=cmap, vmin=limits[0], vmax=limits[1], gid=gid)
    for (i, j), v in np.ndenumerate(data):
        if not math.isnan(v):
            ax.text(j + 0.5, i + 0.5, f"{v:.2f}", ha="center", va="center", fontsize=7,
                    color="white" if cmap == "viridis" and v < 0.6 else "black")
    ax.set_xticks([j + 0.5 for j in range(len(xs))], [str(x) for x in xs], fontsize=7)
    ax.set_yticks([i + 0.5 for i in range(len(ys))], [str(y) for y in ys], fontsize=7)
    ax.set(xlabel=xlabel, ylabel=ylabel)
    fig.colorbar(mesh, ax=ax, label=label)


def _r(value: Any, digits: int = 2) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{value:.{digits}f}"


PLOTS: dict[str, tuple[str, str, Callable[[dict[str, Any]], str]]] = {
    "pass_coverage": ("pass_coverage", "Pass rate against coverage", pass_coverage),
    "pass_cost": ("pass_cost", "Pass rate against cost per room", pass_cost),
    "passk_curves": ("passk_curves", "Pass@(K,T) curves, one per turn budget T", passk_curves),
    "passk_heatmap": ("passk_curves", "Pass@(K,T) as a K x T grid", passk_heatmap),
    "passk_diff": ("passk_diff", "Pass@(K,T): the difference of two policies", passk_diff),
    "delegation": ("delegation", "Sub-calls against room size", delegation),
    "root_share": ("root_share", "The root's share of tokens", root_share),
    "by_type": ("by_type", "Pass rate per criterion type", by_type),
    "depth": ("depth", "Depth 1 against depth 2 per room", depth),
    "grid": ("grid", "The root x sub grid", grid),
    "by_turn": ("by_turn", "Pass rate per turn", by_turn),
}
"""Plot id → (its entry of the plot data, caption, drawing function), in report order."""
