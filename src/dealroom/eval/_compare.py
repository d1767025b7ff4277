"""``dealroom eval compare A B``: the paired difference of two sets of episodes.

Episodes are paired by room, and by turn budget, depth and seed when both sets have runs with
those values in common (so two policies of one sweep pair room by room and sample by sample,
while ``SWEEP:max_turns=4`` against ``SWEEP:max_turns=30`` pairs room and seed). Several
episodes of one side under one key (e.g. several sub-agents) are averaged. The difference is
A - B in criteria pass rate: its mean over pairs, a 95% bootstrap interval that resamples rooms
(pairs of one room are not independent), and the two-sided sign test over pairs; the same per
criterion type, and per (K,T) cell for Pass@k (rooms paired).
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from dealroom._util.files import json_safe
from dealroom.errors import ConfigError
from dealroom.eval._metrics import cluster_bootstrap_ci, mean_pass_at_k, pass_at_k, sign_test
from dealroom.eval._passk import DEFAULT_TAU, success
from dealroom.eval._results import Row, judged, load_rows

PAIRED_ON = ("max_turns", "depth", "seed")
"""Dimensions added to the room in the pairing key when both sides share values of them."""


def compare(a: str | Path, b: str | Path, *, tau: float | None = DEFAULT_TAU) -> dict[str, Any]:
    """``{pairs, mean_diff, ci_low, ci_high, p_value, rooms, paired_on, a, b, by_type, cells}``
    for A - B; a ConfigError when the two share no room."""
    rows_a, rows_b = judged(load_rows(a)), judged(load_rows(b))
    shared = {r.room for r in rows_a} & {r.room for r in rows_b}
    if not shared:
        raise ConfigError(f"{a} and {b} share no room: there is nothing to pair "
                          "(compare episodes of the same rooms)")
    paired_on = ["room"] + [d for d in PAIRED_ON
                            if {r.value(d) for r in rows_a} & {r.value(d) for r in rows_b}]
    side_a, side_b = _keyed(rows_a, paired_on), _keyed(rows_b, paired_on)
    keys = sorted(set(side_a) & set(side_b), key=lambda k: tuple(map(str, k)))
    result = _difference([(k[0], _mean(r.pass_rate for r in side_a[k]),
                           _mean(r.pass_rate for r in side_b[k])) for k in keys])
    types = sorted({t for k in keys for r in side_a[k] + side_b[k] for t in r.by_type})
    by_type = {t: _difference([(k[0], _mean(r.by_type.get(t, math.nan) for r in side_a[k]),
                                _mean(r.by_type.get(t, math.nan) for r in side_b[k]))
                               for k in keys]) for t in types}
    return json_safe({**result, "rooms": len({k[0] for k in keys}), "paired_on": paired_on,
                      "a": _describe(a, rows_a), "b": _describe(b, rows_b), "by_type": by_type,
                      "cells": _cells(rows_a, rows_b, shared, tau), "tau": tau})


def _keyed(rows: list[Row], on: list[str]) -> dict[tuple, list[Row]]:
    out: dict[tuple, list[Row]] = defaultdict(list)
    for r in rows:
        out[tuple(r.value(d) for d in on)].append(r)
    return out


def _difference(pairs: list[tuple[str, float, float]]) -> dict[str, Any]:
    """Mean of A - B over the pairs (room, a, b) with both defined, room-bootstrap interval,
    sign test."""
    kept = [(room, x - y) for room, x, y in pairs if not (math.isnan(x) or math.isnan(y))]
    diffs = [d for _, d in kept]
    mean, low, high = cluster_bootstrap_ci(diffs, [room for room, _ in kept])
    return {"pairs": len(kept), "mean_diff": mean, "ci_low": low, "ci_high": high,
            "p_value": sign_test(diffs), "a_better": sum(d > 0 for d in diffs),
            "b_better": sum(d < 0 for d in diffs), "ties": sum(d == 0 for d in diffs)}


def _cells(rows_a: list[Row], rows_b: list[Row], rooms: set[str],
           tau: float | None) -> list[dict[str, Any]]:
    """Per turn budget both sides ran and k up to their samples: Pass@k of A and of B over the
    shared rooms, and the difference paired by room."""
    def samples(rows: list[Row]) -> dict[int, dict[str, list[bool]]]:
        out: dict[int, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
        for r in rows:
            if r.room in rooms:
                out[r.max_turns][r.room].append(success(r.pass_rate, r.all_pass, tau))
        return out

    sa, sb = samples(rows_a), samples(rows_b)
    cells = []
    for turns in sorted(set(sa) & set(sb)):
        shared = sorted(set(sa[turns]) & set(sb[turns]))
        most = min(max(len(sa[turns][r]) for r in shared), max(len(sb[turns][r]) for r in shared))
        for k in range(1, most + 1):
            pairs = [(r, pass_at_k(len(sa[turns][r]), sum(sa[turns][r]), k),
                      pass_at_k(len(sb[turns][r]), sum(sb[turns][r]), k)) for r in shared]
            cells.append({"max_turns": turns, "k": k,
                          "a": mean_pass_at_k([sa[turns][r] for r in shared], k)[0],
                          "b": mean_pass_at_k([sb[turns][r] for r in shared], k)[0],
                          **_difference(pairs)})
    return cells


def _describe(source: str | Path, rows: list[Row]) -> dict[str, Any]:
    return {"source": str(source), "episodes": len(rows),
            "policies": sorted({f"{r.root} / {r.sub} / d{r.depth}" for r in rows}),
            "simulated": any(r.simulated for r in rows)}


def _mean(values: Any) -> float:
    present = [v for v in values if not math.isnan(v)]
    return sum(present) / len(present) if present else math.nan
