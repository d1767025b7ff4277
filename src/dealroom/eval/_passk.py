"""``dealroom eval passk`` and ``eval table``: Pass@(K,T) and pass rates with intervals.

Success of an episode: a criteria pass rate of at least ``tau`` (default 0.5), or, with
``all_pass``, every criterion passed (LAB's score). Pass@(K,T) is computed in both settings of
the related paper: ``visible`` — from the runs made with budget T, which were told "Turn k of
T"; ``truncation`` — from the runs at the largest T, each judged on its memo as of turn T
(``scores_by_turn.json``). Truncation needs no budget-hidden sweep: on a budget-visible one it
reads the runs at the largest T as of each smaller T (runs that were told a larger budget).

A :class:`~dealroom.errors.DealroomWarning` says when the visible setting is asked of a
budget-hidden sweep, and when an interval rests on 3 rooms or fewer (its bounds are then the
lowest and highest room, not an interval).
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dealroom._util.files import json_safe
from dealroom.errors import ConfigError, DealroomWarning
from dealroom.eval._metrics import as_of, bootstrap_ci, mean_pass_at_k, pass_at_k
from dealroom.eval._results import Row, judged, load_rows, sweep_spec, with_headline

SETTINGS = ("visible", "truncation")
DEFAULT_TAU = 0.5
GROUPS = ("root", "sub", "depth", "max_turns", "room", "size", "seed", "type")
"""What ``eval table --by`` groups on (``size``: room-size bucket; ``type``: criterion type)."""
FEW_ROOMS = 3
"""An interval over this many rooms or fewer is degenerate (see :func:`warn_few_rooms`)."""


def success(value: float, all_pass: bool | None, tau: float | None) -> bool:
    """An episode succeeded: all criteria passed (``tau`` None), or a pass rate >= ``tau``.

    >>> success(0.6, False, 0.5), success(0.6, False, None), success(float("nan"), None, 0.5)
    (True, False, False)
    """
    if tau is None:
        return bool(all_pass)
    return not math.isnan(value) and value >= tau


def passk(source: str | Path, *, tau: float | None = DEFAULT_TAU, setting: str | None = None,
          k: int | None = None, headline: str = "headline") -> list[dict[str, Any]]:
    """Pass@(K,T) per (policy, T, k): ``{root, sub, depth, max_turns, k, pass_at_k, ci_low,
    ci_high, rooms}`` (plus ``setting``, ``tau``, ``samples``, ``simulated``); ``tau=None`` for
    all-pass.

    ``headline``: success from each episode's ``scores.json`` headline (``headline``: the
    positive criteria's rate where its rubric has negatives, else the total), the pass rate
    over all criteria (``total``) or over positive criteria (``positive``); each row also gives
    ``pass_at_k_total`` and ``pass_at_k_positive`` beside it (NaN where the scores hold no such
    rate) and names its ``headline`` and ``headline_kind`` (:func:`kind_of`).

    ``pass_at_k`` is the mean over rooms of the unbiased estimate from that room's samples, and
    ``ci_low``/``ci_high`` its 95% bootstrap interval over those rooms (seeded; NaN with one
    room); ``rooms`` counts the rooms with at least k samples. ``k`` (default: the most samples of
    any cell) larger than the samples recorded is a ConfigError.
    """
    spec = sweep_spec(source) or {}
    setting = resolve_setting(spec, setting, source)
    loaded = load_rows(source)
    rows = judged(with_headline(loaded, headline))
    cells = sample_cells(rows, spec, setting, tau)
    beside = {rate: _rate_cells(loaded, rate, spec, setting, tau)
              for rate in ("total", "positive")}
    most = max((len(s) for rooms in cells.values() for s in rooms.values()), default=0)
    k = k or most
    if k > most:
        raise ConfigError(f"k = {k} is more than the {most} samples recorded per (room, policy, "
                          "T): give a smaller --k, or a sweep with more samples")
    out = []
    for (root, sub, depth, turns), rooms in sorted(cells.items(), key=_order):
        simulated = any(r.simulated for r in rows if r.policy == (root, sub, depth))
        for kk in range(1, k + 1):
            value, used = mean_pass_at_k(list(rooms.values()), kk)
            _, low, high = bootstrap_ci([pass_at_k(len(o), sum(o), kk)
                                         for _, o in sorted(rooms.items()) if len(o) >= kk])
            out.append({"root": root, "sub": sub, "depth": depth, "max_turns": turns, "k": kk,
                        "pass_at_k": value, "ci_low": low, "ci_high": high, "rooms": used,
                        "setting": setting, "tau": tau,
                        "samples": max(len(s) for s in rooms.values()),
                        "simulated": simulated, "headline": headline,
                        "headline_kind": kind_of(rows),
                        **{f"pass_at_k_{rate}": _beside(cells_, (root, sub, depth, turns), kk)
                           for rate, cells_ in beside.items()}})
    return json_safe(out)


def resolve_setting(spec: dict[str, Any], setting: str | None, source: str | Path) -> str:
    """``setting``, or the sweep's (``budget_visible``); a DealroomWarning when ``visible`` is
    asked of a sweep whose runs were not told their budget."""
    setting = setting or ("visible" if spec.get("budget_visible", True) else "truncation")
    if setting not in SETTINGS:
        raise ConfigError(f"--setting must be visible or truncation, got {setting!r}")
    if setting == "visible" and spec.get("budget_visible") is False:
        warnings.warn(DealroomWarning(
            f"{source} is a budget-hidden sweep (budget_visible = false): its runs were not told "
            "their turn budget, so the visible setting reads them as if they had been; "
            "--setting truncation is this sweep's"), stacklevel=2)
    return setting


def warn_few_rooms(intervals: list[tuple[int, float, float]], what: str) -> None:
    """A DealroomWarning when an interval ``(rooms, low, high)`` rests on 2 to
    :data:`FEW_ROOMS` rooms: a percentile bootstrap over so few rooms gives the lowest and
    highest room's value as its bounds (equal rooms: zero width), so it is not an interval."""
    few = [n for n, low, high in intervals
           if 2 <= n <= FEW_ROOMS and not (math.isnan(low) or math.isnan(high))]
    if few:
        warnings.warn(DealroomWarning(
            f"degenerate intervals ({len(few)} of {len(intervals)} {what} over {max(few)} rooms "
            "or fewer): a 95% bootstrap interval over so few rooms is only the range of their "
            "values; read it as no interval, or add rooms"), stacklevel=3)


CellKey = tuple[str, str | None, int, int]
"""A Pass@(K,T) cell: (root, sub, depth, T)."""


def kind_of(rows: list[Row]) -> str:
    """What the rows' ``pass_rate`` is: ``positive``, ``total``, or ``mixed`` (episodes whose
    rubrics differ in having negative criteria)."""
    kinds = {r.headline_kind for r in rows}
    return kinds.pop() if len(kinds) == 1 else "mixed" if kinds else "total"


def _rate_cells(rows: list[Row], rate: str, spec: dict[str, Any], setting: str,
                tau: float | None) -> dict[CellKey, dict[str, list[bool]]]:
    """:func:`sample_cells` of the ``rate`` pass rate ({} where none is recorded)."""
    scored = judged(with_headline(rows, rate))
    try:
        return sample_cells(scored, spec, setting, tau) if scored else {}
    except ConfigError:
        return {}


def _beside(cells: dict[CellKey, dict[str, list[bool]]], key: CellKey,
            k: int) -> float:
    rooms = cells.get(key)
    return mean_pass_at_k(list(rooms.values()), k)[0] if rooms else math.nan


def sample_cells(rows: list[Row], spec: dict[str, Any], setting: str,
           tau: float | None) -> dict[CellKey, dict[str, list[bool]]]:
    """(root, sub, depth, T) → room → the samples' successes at T."""
    cells: dict[CellKey, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    if setting == "visible":
        for r in rows:
            cells[(r.root, r.sub, r.depth, r.max_turns)][r.room].append(
                success(r.pass_rate, r.all_pass, tau))
        return cells
    budgets = sorted(set(spec.get("max_turns") or {r.max_turns for r in rows}))
    top = max(r.max_turns for r in rows) if rows else 0
    at_top = [r for r in rows if r.max_turns == top]
    if at_top and not any(r.by_turn for r in at_top):
        raise ConfigError(f"the runs at T = {top} were not judged by turn "
                          "(dealroom judge RUN --by-turn): truncation needs their memo history "
                          "judged turn by turn")
    for r in (r for r in at_top if r.by_turn):  # a run not judged by turn is no sample
        for turns in (t for t in budgets if t <= top):
            ok = success(as_of(r.by_turn, turns), _all_pass_at(r, turns), tau)
            cells[(r.root, r.sub, r.depth, turns)][r.room].append(ok)
    return cells


def _all_pass_at(row: Row, turns: int) -> bool:
    return bool(row.by_turn_all_pass[min(turns, len(row.by_turn_all_pass)) - 1])


def _order(item: tuple[CellKey, object]) -> tuple[str, str, int, int]:
    (root, sub, depth, turns), _ = item
    return root, sub or "", depth, turns


# -- eval table ---------------------------------------------------------------------------------


def table(source: str | Path, by: Iterable[str] = ("root", "sub", "depth", "max_turns"),
          headline: str = "headline") -> list[dict[str, Any]]:
    """Per group: episodes, rooms, criteria pass rate with its 95% bootstrap interval over rooms
    (each room's mean), LAB's all-pass rate, and mean coverage, cost and sub-calls.

    ``headline``: each episode's ``scores.json`` headline (``headline``), the pass rate over
    all criteria (``total``) or positive ones (``positive``); ``pass_rate_total`` and
    ``pass_rate_positive`` (means over episodes) stand beside it, and ``headline_kind``
    (:func:`kind_of`) says what it is.

    ``by``: any of :data:`GROUPS`; ``type`` splits each group by criterion type (the pass rate
    of that type's criteria).
    """
    by = list(by)
    unknown = sorted(set(by) - set(GROUPS))
    if unknown:
        raise ConfigError(f"--by {', '.join(unknown)}: group by {', '.join(GROUPS)}")
    rows = judged(with_headline(load_rows(source), headline))
    groups: dict[tuple[Any, ...], list[tuple[Row, float]]] = defaultdict(list)
    for r in rows:
        items = r.by_type.items() if "type" in by else [(None, r.pass_rate)]
        for kind, value in items:
            key = tuple(kind if g == "type" else r.value(g) for g in by)
            groups[key].append((r, value))
    out = []
    for key, members in sorted(groups.items(), key=lambda kv: tuple(map(_sort_key, kv[0]))):
        per_room: dict[str, list[float]] = defaultdict(list)
        for r, value in members:
            per_room[r.room].append(value)
        rate, low, high = bootstrap_ci([sum(v) / len(v) for v in per_room.values()])
        episodes = [r for r, _ in members]
        out.append({**dict(zip(by, key, strict=True)), "episodes": len(members),
                    "rooms": len(per_room), "pass_rate": rate, "ci_low": low, "ci_high": high,
                    "headline": headline, "headline_kind": kind_of(episodes),
                    "pass_rate_total": _mean(r.pass_rate_total for r in episodes),
                    "pass_rate_positive": _mean(r.pass_rate_positive for r in episodes),
                    "all_pass": _mean(float(bool(r.all_pass)) for r in episodes),
                    "evidence_f1": _mean(r.evidence_f1 for r in episodes),
                    "coverage": _mean(r.coverage for r in episodes),
                    "cost_usd": _mean(r.cost_usd for r in episodes),
                    "sub_calls": _mean(r.sub_calls for r in episodes),
                    "simulated": any(r.simulated for r in episodes)})
    warn_few_rooms([(r["rooms"], r["ci_low"], r["ci_high"]) for r in out], "groups")
    return json_safe(out)


def _sort_key(value: Any) -> tuple[int, Any]:
    """Numbers in numeric order (T = 4 before 16), then text; None first."""
    if value is None:
        return (0, "")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (1, value)
    return (2, str(value))


def _mean(values: Iterable[float]) -> float:
    present = [v for v in values if v is not None and not math.isnan(v)]
    return sum(present) / len(present) if present else math.nan
