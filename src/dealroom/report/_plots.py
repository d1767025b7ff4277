"""The report's plots, drawn with matplotlib as SVG when the report is built ([report] extra).

Each function takes one entry of :func:`~dealroom.report._figures.plot_data` and returns the
SVG text. Text stays text (``svg.fonttype: none``) and ids are fixed (``svg.hashsalt``), so
a report is the same bytes each time it is built from the same runs. The data artists have
ids starting ``data-`` (the browser tests count their marks).

Every plot says n and the setting (and tau where a success threshold is used) in a line at
its foot; text is at least :data:`SMALL` points (12 px at the report's 620 px); legends sit
below the axes,
never on the data; intervals are 95% bootstrap intervals over rooms (seeded); points of a
scatter at one place are spread sideways and counted, and each links to its episode's trace.
Margins are set in inches (a layout engine would triple the drawing time).
"""

from __future__ import annotations

import io
import math
import re
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dealroom.errors import MissingDependency
from dealroom.report._sources import tau_text
from dealroom.report._where import where_tokens

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.collections import QuadMesh
    from matplotlib.typing import ColorType

SMALL = 9
"""The smallest text of a plot, in points: ticks, legends, the foot line, counts."""
TITLE = 10.5
"""A panel's title, in points."""
RC: dict[str, Any] = {"svg.fonttype": "none", "svg.hashsalt": "dealroom", "font.size": 10,
      "xtick.labelsize": SMALL, "ytick.labelsize": SMALL, "legend.fontsize": SMALL,
      "axes.spines.top": False, "axes.spines.right": False}
MARKERS = "osD^vP*X"
WIDTH = 6.4
"""Figure width in inches."""
DODGE = 0.015
"""How far apart points at one place are spread, as a share of the x axis."""
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_XMLNS = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')


class Layout:
    """A figure of ``rows`` x ``cols`` panels with margins in inches: a title band, the
    panels, their tick labels, a legend of ``legend`` rows below them, and the foot line."""

    def __init__(self, rows: int = 1, cols: int = 1, *, panel: float = 2.8, legend: int = 0,
                 left: float = 0.7, right: float = 0.25, top: float = 0.45,
                 below: float = 0.55, gap: float = 0.75, width: float = WIDTH) -> None:
        try:
            from matplotlib.figure import Figure
        except ImportError:
            raise MissingDependency("matplotlib", extra="report",
                                    feature="the report's plots") from None
        self.legend_h = 0.19 * legend + (0.08 if legend else 0)
        self.foot_h = 0.5
        self.width = width
        self.height = top + rows * panel + (rows - 1) * gap + below + self.legend_h + self.foot_h
        self.left, self.below = left, below
        self.fig = Figure(figsize=(width, self.height))
        self.fig.subplots_adjust(
            left=left / width, right=1 - right / width, top=1 - top / self.height,
            bottom=(below + self.legend_h + self.foot_h) / self.height,
            wspace=0.35, hspace=gap / panel)
        axes = self.fig.subplots(rows, cols, squeeze=False)
        self.axes = list(axes.flat)

    def legend(self, handles: list, labels: list[str], ncol: int = 1) -> None:
        """The legend below the panels (outside every axes); the parts every label shares
        are said once, in its title."""
        if handles:
            labels, common = short_labels(labels)
            self.fig.legend(handles, labels, loc="upper left", fontsize=SMALL, frameon=False,
                            title=f"all: {common}" if common else None,
                            title_fontsize=SMALL, alignment="left",
                            ncol=ncol, borderaxespad=0, handlelength=1.6,
                            bbox_to_anchor=(self.left / self.width,
                                            (self.legend_h + self.foot_h) / self.height))

    def foot(self, d: dict[str, Any], extra: str = "") -> None:
        """The line stating n, the setting and tau where one is used (and ``extra`` on a
        line below)."""
        tau = d.get("tau")
        used = "" if isinstance(tau, str) else f" · tau {tau_text(tau)}"
        text = f"n = {d['n']} runs · setting {d.get('setting') or '–'}{used}"
        self.fig.text(0.08 / self.width, 0.29 / self.height, text, fontsize=SMALL, color="0.2")
        if extra:
            self.fig.text(0.08 / self.width, 0.09 / self.height, extra, fontsize=SMALL,
                          color="0.35")

    def svg(self) -> str:
        import matplotlib

        with matplotlib.rc_context(RC):  # type: ignore[arg-type]  # keys typed as Literal
            buffer = io.StringIO()
            self.fig.savefig(buffer, format="svg",
                             metadata={"Date": None, "Creator": "dealroom"})
        text = buffer.getvalue()
        text = _METADATA.sub("", text[text.index("<svg"):]).replace(' target="_blank"', "")
        text = text.replace("<a xlink:href=", "<a href=")  # a trace opens in this page
        return _XMLNS.sub("", text)  # inline in HTML: no namespaces, so no URL at all


_PART = re.compile(r"( / | · )")


def short_labels(labels: list[str]) -> tuple[list[str], str]:
    """Series labels without the parts (``policy / sub / harness / depth · source · setting ·
    T``) that every one of them shares, and those parts joined.

    >>> short_labels(["a / oracle / rlm · vis · T=4", "b / oracle / rlm · vis · T=8"])
    (['a · T=4', 'b · T=8'], 'oracle / rlm · vis')
    """
    split = [_PART.split(label) for label in labels]
    if len(labels) < 2 or len({len(parts) for parts in split}) != 1:
        return labels, ""
    tokens = range(0, len(split[0]), 2)
    same = {i for i in tokens if len({parts[i] for parts in split}) == 1}
    if len(same) == len(tokens):
        return labels, ""

    def join(parts: list[str], keep: Callable[[int], bool]) -> str:
        kept = [(parts[i - 1] if i else "", parts[i]) for i in tokens if keep(i)]
        return "".join(sep + token for sep, token in kept)[len(kept[0][0]) if kept else 0:]

    return ([join(parts, lambda i: i not in same) for parts in split],
            join(split[0], lambda i: i in same))


def _legend_rows(labels: list[str]) -> tuple[int, int]:
    """(rows, columns) of a legend, its title included: two columns when every label is
    short."""
    shown, common = short_labels(labels)
    ncol = 2 if all(len(s) <= 34 for s in shown) and len(labels) > 1 else 1
    return math.ceil(len(labels) / ncol) + bool(common), ncol


def _series_layout(labels: list[str], **kwargs: Any) -> tuple[Layout, int]:
    rows, ncol = _legend_rows(labels)
    return Layout(legend=rows, **kwargs), ncol


# -- scatters ------------------------------------------------------------------------------------


def _spread(points: list[list[Any]], shift: float) -> tuple[list[float], list[Any], Counter]:
    """Each point's offset along x (in units of :data:`DODGE`): the series' ``shift`` plus its
    place among the points at the same spot; and the count per spot."""
    counts = Counter((p[0], p[1]) for p in points)
    seen: Counter = Counter()
    offsets = []
    for p in points:
        spot = (p[0], p[1])
        offsets.append(shift + seen[spot] - (counts[spot] - 1) / 2)
        seen[spot] += 1
    return offsets, [p[2] if len(p) > 2 else None for p in points], counts


def _scatter(d: dict[str, Any], xlabel: str, ylabel: str, *, logx: bool = False,
             title: str = "", labels: dict[str, str] | None = None,
             bounds: tuple[float | None, float | None] = (None, None)) -> str:
    """Points per series, spread sideways at one place but never past ``bounds`` (the values
    x can take: coverage is at most 100%, a cost at least 0)."""
    names = list(d["series"])
    shown = [(labels or {}).get(n, n) for n in names]
    lay, ncol = _series_layout(shown, top=0.5 + 0.19 * title.count("\n"))
    ax = lay.axes[0]
    xs_all = [p[0] for pts in d["series"].values() for p in pts]
    if logx:
        _log_axis(ax, xs_all)
        lo, hi = (math.log10(v) for v in ax.get_xlim())
    else:
        lo, hi = min(xs_all), max(xs_all)
    span = (hi - lo) or 1.0

    def place(x: float, o: float) -> float:
        return x * 10 ** (o * DODGE * span) if logx else x + o * DODGE * span

    spread = [_spread(d["series"][n], 0.5 * (i - (len(names) - 1) / 2))
              for i, n in enumerate(names)]
    shift = _inside(d["series"], names, [s[0] for s in spread], place, bounds)
    for i, name in enumerate(names):
        points = d["series"][name]
        offsets, urls, counts = spread[i]
        xs = [place(p[0], o + shift.get(p[0], 0.0))
              for p, o in zip(points, offsets, strict=True)]
        marks = ax.scatter(xs, [p[1] for p in points], label=shown[i], alpha=0.8, s=22,
                           marker=MARKERS[i % len(MARKERS)], gid=f"data-{i}")
        marks.set_urls([u or None for u in urls])
        for (x, y), c in counts.items():
            if c > 1:
                ax.annotate(f"×{c}", (x, y), xytext=(5, 4), textcoords="offset points",
                            fontsize=SMALL, color="0.25")
    ax.set(xlabel=xlabel, ylabel=ylabel)
    ax.set_title(title, fontsize=SMALL)
    handles, names = ax.get_legend_handles_labels()
    lay.legend(handles, names, ncol=ncol)
    lay.foot(d, "points at one place spread sideways, ×n counts them; a click opens the trace")
    return lay.svg()


def _inside(series: dict[str, list[list[Any]]], names: list[str], offsets: list[list[float]],
            place: Callable[[float, float], float],
            bounds: tuple[float | None, float | None]) -> dict[float, float]:
    """x value → the shift of its points' offsets that keeps the spread within ``bounds``
    (all of them moved one way, so they stay apart)."""
    at: dict[float, list[float]] = {}
    for name, offs in zip(names, offsets, strict=True):
        for p, o in zip(series[name], offs, strict=True):
            at.setdefault(p[0], []).append(o)
    low, high = bounds
    shift = {}
    for x, offs in at.items():
        if high is not None and place(x, max(offs)) > high:
            shift[x] = -max(offs)
        elif low is not None and place(x, min(offs)) < low:
            shift[x] = -min(offs)
    return shift


def _log_axis(ax: Axes, xs: list[float]) -> None:
    """A log x axis over whole decades around ``xs`` with labels at 1, 2 and 5 of each decade
    (1 of each when it spans more than three), as percentages."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    present = [x for x in xs if x > 0]
    low = 10 ** math.floor(math.log10(min(present)))
    high = 10 ** math.ceil(math.log10(max(present)))
    if high <= low:  # one power of ten (coverage 100%, say): the decade below it too
        low = high / 10
    ax.set_xscale("log")
    ax.set_xlim(low / 1.3, high * 1.3)
    subs = (1.0,) if high / low > 1000 else (1.0, 2.0, 5.0)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{100 * v:g}%"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.tick_params(axis="x", labelsize=SMALL)


def _stats(source: str, parts: list[tuple[str, float | None, str]], n: int) -> str:
    """``source: Spearman 0.71 (n = 12), ...``; a statistic that is undefined (too few or
    constant values) is left out, and a source with none says so."""
    shown = [f"{name} {_r(v)}{extra}" for name, v, extra in parts if _ok(v)]
    return f"{source}: " + (", ".join(shown) if shown else f"n = {n}, no correlation "
                            "(too few points or one value)")


def pass_coverage(d: dict[str, Any]) -> str:
    title = "\n".join(_stats(source, [
        ("Spearman", s["spearman"], f" (n = {s['n']}, {s['zero_coverage']} at zero coverage)"),
        ("Pearson on log", s["pearson_log"], f" (n = {s['n_log']})")], s["n"])
        for source, s in d["stats"].items())
    return _scatter(d, "coverage (share of the room's tokens read, log scale)",
                    "criteria pass rate", logx=True, title=title, bounds=(None, 1.0))


def pass_cost(d: dict[str, Any]) -> str:
    title = "\n".join(_stats(source, [("Spearman", s["spearman"], ""),
                                       ("Pearson", s["pearson"], f" (n = {s['n']})")], s["n"])
                      for source, s in d["stats"].items())
    return _scatter(d, "cost per room (USD)", "criteria pass rate", title=title,
                    bounds=(0.0, None))


def delegation(d: dict[str, Any]) -> str:
    labels = {n: f"{n} (r = {_r(r)})" if _ok(r) else n for n, r in d["pearson"].items()}
    return _scatter(d, "room size (documents)", "sub-calls per episode",
                    title="sub-calls against room size, Pearson r per series and T",
                    labels=labels, bounds=(0.0, None))


# -- curves and bars -----------------------------------------------------------------------------


def _panels(names: list[str], legend: int, panel: float, **kwargs: Any) -> Layout:
    rows = math.ceil(len(names) / 2)
    lay = Layout(rows, min(2, len(names)), panel=panel, legend=legend, **kwargs)
    for ax in lay.axes[len(names):]:
        ax.set_visible(False)
    return lay


def _colors(keys: list[str]) -> dict[str, Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    return {k: cmap(i % 10) for i, k in enumerate(keys)}


def passk_curves(d: dict[str, Any]) -> str:
    """A panel per (policy, source, setting), a line per T with its interval as a band."""
    from matplotlib.ticker import MaxNLocator

    names = list(d["policies"])
    turns = sorted({t for ts in d["policies"].values() for t in ts}, key=int)
    color = _colors(turns)
    rows, ncol = _legend_rows([f"T = {t}" for t in turns])
    lay = _panels(names, rows, 2.0, top=0.55, gap=1.0)
    handles: dict[str, Any] = {}
    for n, (ax, name) in enumerate(zip(lay.axes, names, strict=False)):
        for i, (t, points) in enumerate(d["policies"][name].items()):
            ks, values = [p[0] for p in points], [p[1] for p in points]
            (line,) = ax.plot(ks, values, marker=MARKERS[turns.index(t) % len(MARKERS)], ms=4,
                              color=color[t], gid=f"data-{n}-{i}")
            _band(ax, ks, points, color[t])
            handles.setdefault(f"T = {t}", line)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        every_k = {p[0] for points in d["policies"][name].values() for p in points}
        if len(every_k) == 1:  # one K: an axis of whole numbers around it, not 0.945 to 1.05
            ax.set_xlim(min(every_k) - 1, min(every_k) + 1)
        ax.set(xlabel="K (samples)", ylabel="Pass@(K,T)", ylim=(-0.02, 1.02))
        ax.set_title(_wrap(name), fontsize=TITLE)
    order = [f"T = {t}" for t in turns if f"T = {t}" in handles]
    lay.legend([handles[k] for k in order], order, ncol=ncol)
    lay.foot(d, "bands: 95% bootstrap over rooms")
    return lay.svg()


def _band(ax: Axes, xs: list[Any], points: list[list[Any]], color: ColorType) -> None:
    """The interval ``[.., low, high]`` of each point as a band (where it is defined)."""
    spans = [(x, p[2], p[3]) for x, p in zip(xs, points, strict=True)
             if len(p) > 3 and _ok(p[2]) and _ok(p[3])]
    if spans:
        ax.fill_between([s[0] for s in spans], [s[1] for s in spans], [s[2] for s in spans],
                        color=color, alpha=0.18, linewidth=0)


def passk_heatmap(d: dict[str, Any]) -> str:
    """The K x T grid of each (policy, source, setting)'s Pass@(K,T)."""
    names = list(d["policies"])
    lay = _panels(names, 0, 1.9, top=0.55, right=1.0, gap=1.0)
    mesh = None
    for n, (ax, name) in enumerate(zip(lay.axes, names, strict=False)):
        turns = d["policies"][name]
        ts = list(turns)
        ks = sorted({p[0] for points in turns.values() for p in points})
        grid = [[{p[0]: p[1] for p in turns[t]}.get(k, math.nan) for k in ks] for t in ts]
        mesh = _heat(ax, grid, ks, ts, "K (samples)", "T (turns)", (0.0, 1.0), f"data-{n}")
        ax.set_title(_wrap(name), fontsize=TITLE)
    _colorbar(lay, mesh, "Pass@(K,T)")
    lay.foot(d)
    return lay.svg()


def passk_diff(d: dict[str, Any]) -> str:
    lay = Layout(right=1.0, top=0.6)
    ax = lay.axes[0]
    mesh = _heat(ax, d["diff"], d["k"], d["turns"], "K (samples)", "T (turns)", (-1.0, 1.0),
                 "data-0", cmap="RdBu")
    ax.set_title(f"Pass@(K,T): {_wrap(d['a'])}\nminus {_wrap(d['b'])}", fontsize=TITLE)
    _colorbar(lay, mesh, "difference")
    lay.foot(d)
    return lay.svg()


def root_share(d: dict[str, Any]) -> str:
    """Horizontal bars per (series, T): the root's share of input and output tokens."""
    names = list(d["shares"])
    lay = Layout(panel=max(1.2, 0.42 * len(names)), legend=1, left=2.4, right=0.3, top=0.7)
    ax = lay.axes[0]
    height = 0.38
    for i, label in enumerate(("input tokens", "output tokens")):
        values = [math.nan if d["shares"][n][i] is None else 100 * d["shares"][n][i]
                  for n in names]
        ys = [j + (i - 0.5) * height for j in range(len(names))]
        bars = ax.barh(ys, values, height, label=label, gid=f"data-{i}")
        _zeros(ax, ys, values, bars.patches[0].get_facecolor(), horizontal=True)
    ticks, common = short_labels(names)
    ax.set_yticks(range(len(names)), [_wrap(n) for n in ticks], fontsize=SMALL)
    ax.invert_yaxis()
    ax.set(xlabel="root's share of tokens (%)")
    ax.set_title("the root's share of the tokens, per series and T"
                 + (f"\n(all: {common})" if common else ""), fontsize=TITLE)
    handles, labels = ax.get_legend_handles_labels()
    lay.legend(handles, labels, ncol=2)
    lay.foot(d)
    return lay.svg()


def by_type(d: dict[str, Any]) -> str:
    """A panel per T, bars per series with their intervals."""
    turns = list(d["rates"])
    names = list(dict.fromkeys(n for series in d["rates"].values() for n in series))
    color = _colors(names)
    rows, ncol = _legend_rows(names)
    lay = Layout(len(turns), panel=2.0, legend=rows, below=0.75)
    width = 0.8 / max(1, len(names))
    for ax, t in zip(lay.axes, turns, strict=True):
        for i, name in enumerate(names):
            cells = d["rates"][t].get(name)
            if cells is None:
                continue
            xs = [j + i * width - 0.4 + width / 2 for j in range(len(d["types"]))]
            means = [c[0] if _ok(c[0]) else math.nan for c in cells]  # none: no bar
            errs = [[m - c[1] if _ok(c[1]) and _ok(m) else 0.0
                     for m, c in zip(means, cells, strict=True)],
                    [c[2] - m if _ok(c[2]) and _ok(m) else 0.0
                     for m, c in zip(means, cells, strict=True)]]
            ax.bar(xs, means, width, yerr=errs, capsize=2, color=color[name], label=name,
                   error_kw={"elinewidth": 0.8, "ecolor": "0.2"}, gid=f"data-{t}-{i}")
            _zeros(ax, xs, means, color[name], width=width)
        ax.set_xticks(range(len(d["types"])), d["types"], rotation=20, ha="right", fontsize=SMALL)
        ax.set(ylabel="pass rate", ylim=(0, 1.05))
        ax.set_title(f"pass rate per criterion type, T = {t}", fontsize=TITLE)
    handles, labels = lay.axes[0].get_legend_handles_labels()
    seen = dict(zip(labels, handles, strict=True))
    for ax in lay.axes[1:]:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, h)
    lay.legend(list(seen.values()), list(seen), ncol=ncol)
    lay.foot(d, "whiskers: 95% bootstrap over rooms")
    return lay.svg()


def _zeros(ax: Axes, places: list[float], values: list[float], color: ColorType, *,
           horizontal: bool = False, width: float = 0.38) -> None:
    """A bar of 0 as a visible mark (a thick stroke on the axis), so a zero is not read as
    a missing value."""
    at = [x for x, v in zip(places, values, strict=True) if v == 0]
    if not at:
        return
    if horizontal:
        ax.vlines([0.0] * len(at), [y - width / 2 for y in at], [y + width / 2 for y in at],
                  colors=[color], linewidth=3, clip_on=False, zorder=3, gid="zero-marks")
    else:
        ax.hlines([0.0] * len(at), [x - width / 2 for x in at], [x + width / 2 for x in at],
                  colors=[color], linewidth=3, clip_on=False, zorder=3, gid="zero-marks")


def depth(d: dict[str, Any]) -> str:
    lay = Layout(legend=2, left=0.9, right=2.2, panel=3.0)
    ax = lay.axes[0]
    xs, ys = [p[0] for p in d["pairs"]], [p[1] for p in d["pairs"]]
    ax.plot([0, 1], [0, 1], color="0.7", lw=1, ls="--", label="same at both depths")
    ax.scatter(xs, ys, s=26, gid="data-0", label="room × policy")
    ax.set(xlabel="pass rate at depth 1", ylabel="pass rate at depth 2", xlim=(-0.02, 1.02),
           ylim=(-0.02, 1.02))
    ax.set_title("depth 1 against depth 2, per room", fontsize=TITLE)
    handles, labels = ax.get_legend_handles_labels()
    lay.legend(handles, labels, ncol=1)
    lay.foot(d)
    return lay.svg()


def grid(d: dict[str, Any]) -> str:
    lay = Layout(left=1.8, right=1.0, top=0.6)
    ax = lay.axes[0]
    mesh = _heat(ax, d["pass_rate"], d["subs"], d["roots"], "sub-agent", "root", (0.0, 1.0),
                 "data-0")
    gaps = [f"{who} gap {_r(d[key], 1)} pts" for who, key in
            (("root", "root_gap_points"), ("sub", "sub_gap_points")) if _ok(d[key])]
    ax.set_title(f"{d['source']}, T = {d['max_turns']}, depth {d['depth']}"
                 + (":\n" + ", ".join(gaps) if gaps else ""), fontsize=TITLE)
    _colorbar(lay, mesh, "pass rate")
    lay.foot(d)
    return lay.svg()


def by_turn(d: dict[str, Any]) -> str:
    names = list(d["series"])
    color = _colors(names)
    lay, ncol = _series_layout(names)
    ax = lay.axes[0]
    for i, name in enumerate(names):
        points = d["series"][name]
        turns = [p[0] for p in points]
        ax.plot(turns, [p[1] for p in points], marker=MARKERS[i % len(MARKERS)], ms=3,
                label=name, color=color[name], gid=f"data-{i}")
        _band(ax, turns, points, color[name])
    ax.set(xlabel="root turn", ylabel="pass rate of the memo as of the turn", ylim=(-0.02, 1.02))
    ax.set_title("pass rate per turn (memo history), per series and T", fontsize=TITLE)
    handles, names = ax.get_legend_handles_labels()
    lay.legend(handles, names, ncol=ncol)
    lay.foot(d, "bands: 95% bootstrap over rooms")
    return lay.svg()


def _heat(ax: Axes, values: list[list[float]], xs: list, ys: list, xlabel: str, ylabel: str,
          limits: tuple[float, float], gid: str, cmap: str = "viridis") -> QuadMesh:
    import numpy as np

    data = np.array([[math.nan if v is None else v for v in row] for row in values], float)
    mesh = ax.pcolormesh(data, cmap=cmap, vmin=limits[0], vmax=limits[1], gid=gid)
    for (i, j), v in np.ndenumerate(data):
        if not math.isnan(v):
            ax.text(j + 0.5, i + 0.5, f"{v:.2f}", ha="center", va="center", fontsize=SMALL,
                    color="white" if cmap == "viridis" and v < 0.6 else "black")
    ax.set_xticks([j + 0.5 for j in range(len(xs))], [str(x) for x in xs], fontsize=SMALL)
    ax.set_yticks([i + 0.5 for i in range(len(ys))], [str(y) for y in ys], fontsize=SMALL)
    ax.set(xlabel=xlabel, ylabel=ylabel)
    return mesh


def _colorbar(lay: Layout, mesh: QuadMesh | None, label: str) -> None:
    """One colour bar in the right margin, its label inside the figure."""
    if mesh is None:
        return
    box = lay.fig.subplotpars
    cax = lay.fig.add_axes((1 - 0.8 / lay.width, box.bottom, 0.12 / lay.width,
                            box.top - box.bottom))
    lay.fig.colorbar(mesh, cax=cax, label=label)
    cax.tick_params(labelsize=SMALL)


def _wrap(name: str) -> str:
    """A series name on two lines: the policy, then source, setting (and T)."""
    head, _, rest = name.partition(" · ")
    return f"{head}\n{rest}" if rest else head


def _ok(value: object) -> bool:
    return isinstance(value, int | float) and not math.isnan(value)


def _r(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{value:.{digits}f}"


PLOTS: dict[str, tuple[str, str, Callable[[dict[str, Any]], str]]] = {
    "pass_coverage": ("pass_coverage", "Pass rate against coverage", pass_coverage),
    "pass_cost": ("pass_cost", "Pass rate against cost per room", pass_cost),
    "passk_curves": ("passk_curves", "Pass@(K,T) curves: a panel per policy, source and "
                                     "setting, a line per turn budget T", passk_curves),
    "passk_heatmap": ("passk_curves", "Pass@(K,T) as a K x T grid", passk_heatmap),
    "passk_diff": ("passk_diff", "Pass@(K,T): the difference of two policies", passk_diff),
    "delegation": ("delegation", "Sub-calls against room size", delegation),
    "root_share": ("root_share", "The root's share of tokens", root_share),
    "by_type": ("by_type", "Pass rate per criterion type, a panel per T", by_type),
    "depth": ("depth", "Depth 1 against depth 2 per room", depth),
    "grid": ("grid", "The root x sub grid", grid),
    "by_turn": ("by_turn", "Pass rate per turn", by_turn),
    "where": ("where", "Where the tokens went: root, each sub-agent model, children",
              where_tokens),
}
"""Plot id → (its entry of the plot data, caption, drawing function), in report order."""
