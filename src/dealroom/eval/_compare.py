"""``dealroom eval compare A B``: the paired difference of two sets of episodes.

Episodes are paired by room, and by turn budget, depth and seed when both sets have runs with
those values in common (so two policies of one sweep pair room by room and sample by sample,
while ``SWEEP:max_turns=4`` against ``SWEEP:max_turns=30`` pairs room and seed). Several
episodes of one side under one key (e.g. several sub-agents) are averaged. The difference is
A - B in the headline pass rate (each episode's ``scores.json`` ``headline``; the total's
mean difference beside it): its mean over pairs, a 95% bootstrap interval that resamples rooms
(pairs of one room are not independent), and the two-sided sign test over pairs; the same per
criterion type, and per (K,T) cell for Pass@k (rooms paired; each side's Pass@k per room is
the mean over its policies, in the sweep's setting: visible or truncation).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dealroom._util.files import json_safe
from dealroom.errors import ConfigError
from dealroom.eval._metrics import cluster_bootstrap_ci, pass_at_k, sign_test
from dealroom.eval._passk import (
    DEFAULT_TAU,
    kind_of,
    resolve_setting,
    sample_cells,
    warn_few_rooms,
)
from dealroom.eval._results import Row, judged, load_rows, sweep_spec

PAIRED_ON = ("max_turns", "depth", "seed")
"""Dimensions added to the room in the pairing key when both sides share values of them."""


def compare(a: str | Path, b: str | Path, *, tau: float | None = DEFAULT_TAU,
            setting: str | None = None) -> dict[str, Any]:
    """``{pairs, mean_diff, ci_low, ci_high, p_value, rooms, paired_on, a, b, by_type, cells,
    headline_kind, mean_diff_total}``
    for A - B; a ConfigError when the two share no room. ``setting`` of the Pass@k cells:
    ``visible`` or ``truncation`` (default: each sweep's, as ``passk``)."""
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
    rooms = len({k[0] for k in keys})
    total = _difference([(k[0], _mean(r.pass_rate_total for r in side_a[k]),
                          _mean(r.pass_rate_total for r in side_b[k])) for k in keys])
    warn_few_rooms([(rooms, result["ci_low"], result["ci_high"])], "differences")
    return json_safe({**result, "rooms": rooms, "paired_on": paired_on,
                      "a": _describe(a, rows_a), "b": _describe(b, rows_b), "by_type": by_type,
                      "cells": _cells(a, b, rows_a, rows_b, shared, tau, setting),
                      "tau": tau, "headline_kind": kind_of(rows_a + rows_b),
                      "mean_diff_total": total["mean_diff"]})


def _keyed(rows: list[Row], on: list[str]) -> dict[tuple[Any, ...], list[Row]]:
    out: dict[tuple[Any, ...], list[Row]] = defaultdict(list)
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


def _cells(a: str | Path, b: str | Path, rows_a: list[Row], rows_b: list[Row],
           rooms: set[str], tau: float | None, setting: str | None) -> list[dict[str, Any]]:
    """Per turn budget T both sides have and k up to the samples of every policy there: each
    side's Pass@k per room (averaged over its policies, as ``passk`` computes them in the
    sweep's setting), and A - B paired by room."""
    side_a = _per_room(rows_a, a, rooms, tau, setting)
    side_b = _per_room(rows_b, b, rooms, tau, setting)
    cells = []
    for turns in sorted(set(side_a) & set(side_b)):
        shared = sorted(set(side_a[turns]) & set(side_b[turns]))
        most = min(min(len(s) for p in side[turns].values() for s in p)
                   for side in (side_a, side_b) if shared)
        for k in range(1, most + 1):
            pairs = [(room, _mean(pass_at_k(len(s), sum(s), k) for s in side_a[turns][room]),
                      _mean(pass_at_k(len(s), sum(s), k) for s in side_b[turns][room]))
                     for room in shared]
            cells.append({"max_turns": turns, "k": k, "a": _mean(x for _, x, _ in pairs),
                          "b": _mean(y for _, _, y in pairs), **_difference(pairs)})
    return cells


def _per_room(rows: list[Row], source: str | Path, rooms: set[str], tau: float | None,
              setting: str | None) -> dict[int, dict[str, list[list[bool]]]]:
    """T → room → the successes of each policy's samples there."""
    spec = sweep_spec(source) or {}
    setting = resolve_setting(spec, setting, source)
    out: dict[int, dict[str, list[list[bool]]]] = defaultdict(lambda: defaultdict(list))
    for (_, _, _, turns), by_room in sample_cells(rows, spec, setting, tau).items():
        for room, samples in by_room.items():
            if room in rooms:
                out[turns][room].append(samples)
    return out


def _describe(source: str | Path, rows: list[Row]) -> dict[str, Any]:
    return {"source": str(source), "episodes": len(rows),
            "policies": sorted({f"{r.root} / {r.sub} / d{r.depth}" for r in rows}),
            "simulated": any(r.simulated for r in rows)}


def _mean(values: Iterable[float]) -> float:
    present = [v for v in values if not math.isnan(v)]
    return sum(present) / len(present) if present else math.nan
