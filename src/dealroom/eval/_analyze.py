"""``dealroom eval analyze``: the source's analyses over a sweep (SPEC.md, the seeds' figures).

* coverage against pass rate (:func:`coverage_pass`, which ``dealroom report`` uses too):
  Spearman's rho over every judged run whose coverage was measured, zero coverage included, and
  Pearson's r on log10 coverage over those above 0 (the source plots it on a log scale);
* cost against pass rate (Spearman and Pearson; offline policies cost nothing: NaN);
* sub-calls against room size in documents (the source's delegation correlation, 0.17 -> 0.84
  after SFT), over all episodes, per root, per turn budget T and per root and T;
* the root's share of input and output tokens (source: 3.8% and 1.1%), pooled, per root and
  per T;
* incremental memo: the share of runs whose memo had sections before the last wave returned,
  and the turn of the first memo write (the first turn whose memo held a section);
* depth 1 against depth 2 per room and policy: better, worse or same at depth 2, and how many
  of the worse wrote no report (source: 4 better, 10 worse, in 4 of the 10 no report);
* the root x sub grid at the largest T and depth 1: the root gap is the mean over sub-agents of
  (best root - worst root), the sub gap the mean over roots of (best sub - worst sub), in
  points (source: ~38 and ~8 over 4 roots x 3 subs).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from dealroom._util.files import json_safe
from dealroom.eval._metrics import pearson_log, spearman
from dealroom.eval._results import Row, judged, load_rows
from dealroom.measure import correlation, ratio


def analyze(source: str | Path) -> dict[str, Any]:
    """The analyses above as one JSON-ready dict."""
    rows = judged(load_rows(source))
    return json_safe({
        "episodes": len(rows),
        "real_documents": sum(r.real for r in rows),
        "simulated": any(r.simulated for r in rows),
        "coverage_pass": _coverage(rows),
        "cost_pass": _pair(rows, "cost_usd"),
        "delegation": _delegation(rows),
        "root_share": _share(rows),
        "memo": _memo(rows),
        "depth": _depth(rows),
        "grid": _grid(rows),
    })


COVERAGE_INCLUDED = ("judged runs with a measured coverage, zero coverage included; Pearson "
                     "on log10 coverage over those with coverage > 0")


def coverage_pass(coverage: Sequence[float], pass_rate: Sequence[float]) -> dict[str, Any]:
    """Coverage against pass rate over judged runs (pairs with a NaN pass rate are left out):
    ``n`` (runs with a measured coverage), ``unmeasured`` (runs without), ``zero_coverage``,
    ``n_log`` (runs with coverage > 0), ``included`` (these rules in words), Spearman's rho over
    the ``n`` runs and Pearson's r of log10 coverage over the ``n_log``.

    >>> c = coverage_pass([0.0, 0.01, 0.1, float("nan")], [0.1, 0.2, 0.4, 0.9])
    >>> c["n"], c["unmeasured"], c["zero_coverage"], c["n_log"], c["spearman"]
    (3, 1, 1, 2, 1.0)
    """
    judged_ = [(c, p) for c, p in zip(coverage, pass_rate, strict=True) if _ok(p)]
    have = [(c, p) for c, p in judged_ if _ok(c)]
    xs, ys = [c for c, _ in have], [p for _, p in have]
    return {"n": len(have), "unmeasured": len(judged_) - len(have),
            "zero_coverage": sum(x == 0 for x in xs), "n_log": sum(x > 0 for x in xs),
            "included": COVERAGE_INCLUDED, "spearman": spearman(xs, ys),
            "pearson_log": pearson_log(xs, ys)}


def _coverage(rows: list[Row]) -> dict[str, Any]:
    return coverage_pass([r.coverage for r in rows], [r.pass_rate for r in rows])


def _pair(rows: list[Row], key: str) -> dict[str, Any]:
    have = [r for r in rows if not math.isnan(getattr(r, key))]
    xs, ys = [getattr(r, key) for r in have], [r.pass_rate for r in have]
    return {"n": len(have), "included": f"judged runs with a measured {key}",
            "spearman": spearman(xs, ys), "pearson": correlation(xs, ys)}


def _delegation(rows: list[Row]) -> dict[str, Any]:
    def corr(group: list[Row]) -> float:
        return correlation([r.sub_calls for r in group], [r.docs for r in group])

    return {"n": len(rows), "included": "every judged run", "pearson_sub_calls_docs": corr(rows),
            **_split(rows, corr)}


def _share(rows: list[Row]) -> dict[str, Any]:
    def pooled(group: list[Row]) -> dict[str, float]:
        return {"input": ratio(sum(r.root_input_tokens for r in group),
                               sum(r.input_tokens for r in group)),
                "output": ratio(sum(r.root_output_tokens for r in group),
                                sum(r.output_tokens for r in group))}

    return {"n": len(rows), **pooled(rows), **_split(rows, pooled)}


def _split(rows: list[Row], figure: Any) -> dict[str, Any]:
    """``figure`` of the rows per root (``by_root``), per turn budget (``by_max_turns``, keyed
    by T) and per root and T (``by_root_max_turns``: root -> T -> figure)."""
    by_root: dict[str, list[Row]] = defaultdict(list)
    by_t: dict[int, list[Row]] = defaultdict(list)
    both: dict[str, dict[int, list[Row]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        by_root[r.root].append(r)
        by_t[r.max_turns].append(r)
        both[r.root][r.max_turns].append(r)
    return {"by_root": {k: figure(v) for k, v in sorted(by_root.items())},
            "by_max_turns": {str(t): figure(v) for t, v in sorted(by_t.items())},
            "by_root_max_turns": {root: {str(t): figure(v) for t, v in sorted(ts.items())}
                                  for root, ts in sorted(both.items())}}


def _memo(rows: list[Row]) -> dict[str, Any]:
    waved = [r for r in rows if r.memo_incremental is not None]
    first = [r.first_memo_turn for r in rows if r.first_memo_turn is not None]
    return {"runs_with_waves": len(waved),
            "incremental_rate": ratio(sum(bool(r.memo_incremental) for r in waved), len(waved)),
            "first_write_turn_mean": statistics.fmean(first) if first else math.nan,
            "first_write_turn_median": statistics.median(first) if first else math.nan,
            "never_written": sum(r.first_memo_turn is None for r in rows)}


def _depth(rows: list[Row]) -> dict[str, Any] | None:
    """Depth 1 against depth 2, per (root, sub, T, room): each room's mean pass rate."""
    cells: dict[tuple[Any, ...], dict[int, list[Row]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        cells[(r.root, r.sub, r.max_turns, r.room)][r.depth].append(r)
    pairs = [(key, d[1], d[2]) for key, d in sorted(cells.items(), key=lambda kv: str(kv[0]))
             if 1 in d and 2 in d]
    if not pairs:
        return None
    better = worse = same = no_memo = 0
    for _, one, two in pairs:
        diff = _mean(r.pass_rate for r in two) - _mean(r.pass_rate for r in one)
        better += diff > 0
        same += diff == 0
        if diff < 0:
            worse += 1
            no_memo += any(r.first_memo_turn is None for r in two)
    return {"pairs": len(pairs), "better": better, "worse": worse, "same": same,
            "worse_without_memo": no_memo}


def _grid(rows: list[Row]) -> dict[str, Any] | None:
    top = max((r.max_turns for r in rows), default=0)
    depth = min((r.depth for r in rows), default=1)
    chosen = [r for r in rows if r.max_turns == top and r.depth == depth]
    roots = sorted({r.root for r in chosen})
    subs = sorted({r.sub or "" for r in chosen})
    if len(roots) < 2 and len(subs) < 2:
        return None
    cell = {(root, sub): _mean(r.pass_rate for r in chosen if r.root == root
                               and (r.sub or "") == sub) for root in roots for sub in subs}
    root_gap = _mean(_spread([cell[(root, sub)] for root in roots]) for sub in subs)
    sub_gap = _mean(_spread([cell[(root, sub)] for sub in subs]) for root in roots)
    return {"max_turns": top, "depth": depth, "roots": roots, "subs": subs,
            "pass_rate": [[cell[(root, sub)] for sub in subs] for root in roots],
            "root_gap_points": 100 * root_gap if len(roots) > 1 else math.nan,
            "sub_gap_points": 100 * sub_gap if len(subs) > 1 else math.nan}


def _spread(values: list[float]) -> float:
    present = [v for v in values if not math.isnan(v)]
    return max(present) - min(present) if len(present) > 1 else math.nan


def _mean(values: Iterable[float]) -> float:
    present = [v for v in values if not math.isnan(v)]
    return sum(present) / len(present) if present else math.nan


def _ok(value: object) -> bool:
    return isinstance(value, int | float) and not math.isnan(value)
