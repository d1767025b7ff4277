"""The report's sources, kept apart: each is a sweep or a set of runs, with a setting (budget
``visible``, or ``truncation`` when the runs were not told their budget) and a kind of episode
(``episode``: a sampled episode; ``continuation``: a recovery's continuation of a prefix).

Continuations are never pooled with sampled episodes: a recovery folder (``recover.json``)
gives its own figures (:func:`dealroom.eval.recovery_report`), not Pass@k.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dealroom.errors import DealroomError
from dealroom.eval import parse_source, recovery_report, sweep_spec

RECOVERY_SPEC = "recover.json"
"""What marks a recovery folder (``dealroom eval recover``)."""


@dataclass
class Source:
    """One source as given to ``dealroom report``."""

    spec: str
    """As given (folder and selector)."""
    label: str
    """A short unique name: the folder's name (and selector)."""
    setting: str | None
    """``visible`` or ``truncation`` for a sweep; None for runs (each run's own)."""
    recovery: dict[str, Any] | None = None
    """A recovery folder's figures (``{"note": ...}`` when they cannot be computed)."""

    @property
    def kind(self) -> str:
        return "continuation" if self.recovery is not None else "episode"


def describe(sources: list[str]) -> list[Source]:
    """Each source's label, setting and (for a recovery folder) figures."""
    out = []
    for spec in sources:
        path, filters = parse_source(spec)
        label = path.resolve().name or str(path)
        if filters:
            label += ":" + ",".join(f"{k}={v}" for k, v in filters.items())
        recorded = sweep_spec(spec)
        setting = None if recorded is None else (
            "visible" if recorded.get("budget_visible", True) else "truncation")
        out.append(Source(spec, label, setting, _recovery(path)))
    counts = Counter(s.label for s in out)
    for n, s in enumerate(out):
        if counts[s.label] > 1:
            s.label = f"{s.label}#{n + 1}"
    return out


def _recovery(path: Path) -> dict[str, Any] | None:
    """A recovery folder's figures (:func:`dealroom.eval.recovery_report`); None for any
    other folder."""
    if not (path / RECOVERY_SPEC).is_file():
        return None
    try:
        return recovery_report(path)
    except DealroomError as exc:
        return {"note": f"the figures of the recovery {path} could not be computed: {exc}"}


def run_setting(config: dict[str, Any]) -> str:
    """A run's setting from its config: ``truncation`` when its budget was hidden."""
    settings = config.get("settings") or {}
    return "visible" if settings.get("budget_visible", True) else "truncation"


def behind(episodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs behind a figure: per (source, setting, kind), how many."""
    counts = Counter((e["source"], e["setting"], e["kind"]) for e in episodes)
    return [{"source": s, "setting": t, "kind": k, "runs": n}
            for (s, t, k), n in counts.items()]


def behind_text(rows: list[dict[str, Any]]) -> str:
    """``behind``'s rows in words: "sweep-a (visible): 18 episodes; ..."."""
    return "; ".join(f"{r['source']} ({r['setting']}): {r['runs']} "
                     f"{r['kind']}{'s' if r['runs'] != 1 else ''}" for r in rows)


def settings_of(rows: list[dict[str, Any]]) -> str:
    return ", ".join(sorted({r["setting"] for r in rows})) or "–"


def tau_text(tau: float | str | None) -> str:
    if tau is None:
        return "all-pass"
    if isinstance(tau, str):
        return tau
    return "–" if isinstance(tau, float) and math.isnan(tau) else f"{tau:g}"
