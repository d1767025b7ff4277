"""Rejection sampling over judged runs: per room, the best runs that clear the bars.

Every run is either kept or left out with a reason, checked in this order:

=================  ===================================================================
``unreadable``     a file of the run cannot be read, is damaged, has fields of the wrong
                   type or a pass rate or coverage outside [0, 1] (``why`` says which)
``no_root``        the folder holds no agent run (a REPL session)
``unfinished``     the root's episode did not end (resume it, then judge it)
``not_judged``     no ``scores.json`` (run ``dealroom judge RUN``)
``judge_errors``   the judge could not score some criteria (``n_errors`` > 0)
``below_pass_rate``  pass rate under ``min_pass_rate``
``below_room_median``  pass rate under the median of its room's judged runs (``room_median``,
                   on by default: half a room's samples, the worse half, are rejected)
``no_coverage``    ``min_coverage`` asked for and the run measured none
``below_coverage`` coverage under ``min_coverage``
``not_top_k``      cleared the bars, but ``top_k`` better runs of its room did too
=================  ===================================================================

The room median is taken over the room's cleanly judged agent runs (those past
``judge_errors``); a run *at* the median is kept, so a room whose runs all score alike keeps
them all. Within a room (the run's ``config.json`` ``room``) runs are ranked by pass rate, then
coverage, then folder path; the first ``top_k`` are kept. Given a reward spec (``reward``,
docs/training.md "The reward"), the reward takes the pass rate's place in the ranking and the
room median (a run whose reward cannot be had, its room's task unreadable or a reward function
failing, is ``unreadable``); the bars stay on the pass rate and coverage. Every entry says in
``simulated`` which of its models were simulators (root ``scripted``, sub ``oracle``): such a
run teaches the harness's script, not a model's behaviour.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dealroom.errors import ConfigError, DealroomError, InputError
from dealroom.runs import RunFolder, ScoresRecord
from dealroom.train._reward import Reward, RewardError


@dataclass
class Selection:
    """Which runs an export keeps and why the others were left out."""

    kept: list[dict[str, Any]] = field(default_factory=list)
    """``{run, room, pass_rate, coverage, simulated, rank, why}`` per kept run, in input
    order."""
    left_out: list[dict[str, Any]] = field(default_factory=list)
    """``{run, room, pass_rate, coverage, simulated, reason, why}`` per run left out."""
    medians: dict[str, float] = field(default_factory=dict)
    """Room → the median pass rate (or reward) of its judged runs (with ``room_median``)."""
    reward: dict[str, Any] | None = None
    """The reward spec runs were ranked by (``{kind, evidence_weight}``); None: pass rate."""

    @property
    def simulated(self) -> list[dict[str, Any]]:
        """The kept runs whose root or sub-agent was a simulator."""
        return [r for r in self.kept if r["simulated"]]


def check_bars(min_pass_rate: float | None, min_coverage: float | None,
               top_k: int | None) -> None:
    """Raise ConfigError for a bar outside [0, 1] or a ``top_k`` below 1."""
    for name, value in (("min_pass_rate", min_pass_rate), ("min_coverage", min_coverage)):
        if value is not None and not 0 <= value <= 1:
            raise ConfigError(f"{name} is a share between 0 and 1, got {value}")
    if top_k is not None and top_k < 1:
        raise ConfigError(f"top_k must be at least 1, got {top_k}")


def select_runs(runs: list[Path], *, min_pass_rate: float | None = None,
                min_coverage: float | None = None, top_k: int | None = None,
                room_median: bool = True, reward: Any = None) -> Selection:
    """Keep, per room, the ``top_k`` best judged runs at or above the bars and, with
    ``room_median``, at or above the room's median pass rate (see above). ``reward``: a
    reward spec (``pass+evidence``, a table, ...) ranking the runs instead of the pass rate."""
    from dealroom.train._reward import reward_of

    check_bars(min_pass_rate, min_coverage, top_k)
    scorer = reward_of(reward) if reward is not None else None
    selection = Selection(reward=scorer.to_dict() if scorer else None)
    eligible: dict[str, list[dict[str, Any]]] = defaultdict(list)
    what = "reward" if scorer else "pass rate"
    rows = [_row(Path(run), scorer) for run in runs]
    if room_median:
        selection.medians = _medians(rows)
    for row in rows:
        reason, why = _rejected(row, min_pass_rate, min_coverage)
        median = selection.medians.get(row["room"])
        if not reason and median is not None and row["score"] < median:
            reason, why = "below_room_median", (
                f"{what} {row['score']:.3f} < {median:.3f}, the median of room "
                f"{row['room_name']}'s judged runs")
        if reason:
            selection.left_out.append({**_public(row), "reason": reason, "why": why})
        else:
            eligible[row["room"]].append(row)
    for room_runs in eligible.values():
        room_runs.sort(key=lambda r: (-r["score"], -_or(r["coverage"]), r["run"]))
        for rank, row in enumerate(room_runs, 1):
            if top_k is not None and rank > top_k:
                why = (f"rank {rank} of {len(room_runs)} in room {row['room_name']}, "
                       f"below the best {top_k}")
                selection.left_out.append({**_public(row), "reason": "not_top_k", "why": why})
            else:
                why = _kept_why(row, rank, len(room_runs), min_pass_rate, min_coverage,
                                selection.medians.get(row["room"]), scorer is not None)
                selection.kept.append({**_public(row), "rank": rank, "why": why})
    order = {str(Path(r)): n for n, r in enumerate(runs)}
    selection.kept.sort(key=lambda r: order[r["run"]])
    selection.left_out.sort(key=lambda r: order[r["run"]])
    return selection


def _medians(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Room → median pass rate over its cleanly judged agent runs."""
    scored: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        reason, _ = _rejected(row, None, None)
        if not reason:
            scored[row["room"]].append(row["score"])
    return {room: statistics.median(rates) for room, rates in scored.items()}


def simulators(config: dict[str, Any]) -> list[str]:
    """The run's models that are simulators: its ``simulators`` (the ``oracle`` sub-agent)
    and a ``scripted`` root (a fixed program, not a model)."""
    found = [f"sub {name}" if name == config.get("sub") else str(name)
             for name in config.get("simulators") or []]
    root = str(config.get("root") or "")
    if root.split(":")[0] == "scripted":
        found.append(f"root {root}")
    return found


def _row(run: Path, reward: Reward | None = None) -> dict[str, Any]:
    """The run's figures; ``unreadable`` holds why when a file of it cannot be used.
    ``score`` is what it is ranked by: its ``reward`` (with ``terms``) when one is given,
    else its pass rate."""
    try:
        folder = RunFolder.open(run)
        config = folder.config
        scores = folder.scores() or {}  # both typed: their kinds are checked on read
        coverage = ((folder.metrics() or {}).get("coverage") or {}).get("coverage")
        if coverage is not None and math.isnan(coverage):
            coverage = None  # a room without tokens: no coverage measured
        _check_share(scores.get("pass_rate"), f"{folder.scores_path()} pass_rate")
        _check_share(coverage, f"{folder.path / 'metrics.json'} coverage")
        ended = RunFolder.ended(folder.events())
        rewarded = _rewarded(reward, scores, folder) if reward and scores else {}
    except (DealroomError, OSError, RewardError) as exc:
        return {"run": str(run), "room": "", "room_name": "?", "pass_rate": None,
                "coverage": None, "simulated": [], "unreadable": unreadable(exc)}
    room = str(config.get("room", ""))
    return {"run": str(run), "room": room, "room_name": Path(room).name or "?",
            "harness": config.get("harness"), "ended": ended,
            "judged": bool(scores), "n_errors": scores.get("n_errors") or 0,
            "pass_rate": scores.get("pass_rate"), "coverage": coverage,
            "score": rewarded.get("reward", scores.get("pass_rate")), **rewarded,
            "simulated": simulators(dict(config)), "unreadable": ""}


def _rewarded(reward: Reward, scores: ScoresRecord, folder: RunFolder) -> dict[str, Any]:
    """``{reward, terms}`` of a judged run (its room's task tells the negative criteria)."""
    from dealroom.judge import Scores
    from dealroom.room import load_task

    value, terms = reward(Scores.from_dict(scores, load_task(folder.room)), folder.path)
    return {"reward": value, "terms": terms}


def unreadable(exc: DealroomError | OSError | RewardError) -> str:
    """Why a run cannot be used, in words: the error's, or the file and the system's."""
    if isinstance(exc, OSError):
        return f"cannot read {exc.filename or 'a file of the run'}: {exc.strerror or exc}"
    return str(exc)


def _check_share(value: float | None, where: str) -> None:
    """Raise InputError unless ``value`` is None or a share in [0, 1] (NaN is not)."""
    if value is not None and not 0 <= value <= 1:
        raise InputError(f"{where} is {value!r}, not a share between 0 and 1: the run folder "
                         "is damaged or was edited")


def _rejected(row: dict[str, Any], min_pass_rate: float | None,
              min_coverage: float | None) -> tuple[str, str]:
    """The reason code and words for leaving a run out ("" when it clears every check)."""
    if row["unreadable"]:
        return "unreadable", row["unreadable"]
    if row["harness"] == "repl" or not row["harness"]:
        return "no_root", "a REPL session: no root agent to learn from"
    if not row["ended"]:
        return "unfinished", "the root's episode did not end: resume it, then judge it"
    if not row["judged"] or row["pass_rate"] is None:
        return "not_judged", "no scores.json: judge it with `dealroom judge RUN`"
    if row["n_errors"]:
        return "judge_errors", (f"the judge could not score {row['n_errors']} criteria, so "
                                "its pass rate is not a measurement")
    if min_pass_rate is not None and row["pass_rate"] < min_pass_rate:
        return "below_pass_rate", f"pass rate {row['pass_rate']:.3f} < {min_pass_rate:g}"
    if min_coverage is not None and row["coverage"] is None:
        return "no_coverage", "no coverage measured (metrics.json has none)"
    if min_coverage is not None and row["coverage"] < min_coverage:
        return "below_coverage", f"coverage {row['coverage']:.3f} < {min_coverage:g}"
    return "", ""


def _kept_why(row: dict[str, Any], rank: int, of: int, min_pass_rate: float | None,
              min_coverage: float | None, median: float | None, rewarded: bool = False) -> str:
    bars = [f"{b:g}" for b in (min_pass_rate,) if b is not None]
    median_bar = [f"{median:.3f} (room median)"] if median is not None else []
    if not rewarded:
        bars += median_bar
    parts = [f"pass rate {row['pass_rate']:.3f}" + "".join(f" >= {b}" for b in bars)]
    if rewarded:
        parts.append(f"reward {row['score']:.3f}" + "".join(f" >= {b}" for b in median_bar))
    if row["coverage"] is not None:
        parts.append(f"coverage {row['coverage']:.3f}"
                     + (f" >= {min_coverage:g}" if min_coverage is not None else ""))
    parts.append(f"rank {rank} of {of} in room {row['room_name']}")
    return ", ".join(parts)


def _public(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in ("run", "room", "pass_rate", "coverage", "reward", "terms",
                                "simulated") if k in row}


def _or(value: float | None) -> float:
    return -1.0 if value is None else value
