"""Error prefixes: the failure points of recorded runs, pooled for error-prefix evaluation.

A prefix is (run, root turn j, kind, remaining budget T - j): the run's records up to the end
of turn j, in which the failure happened, and what it had left. ``dealroom eval recover``
forks each one (``dealroom resume RUN --from-turn j``) and lets policies play on from there.
Kinds, read from the root's own events:

    cell_error   the cell of turn j raised (or timed out, or crashed the REPL)
    failed_wave  an llm_batch wave of turn j had failed calls
    no_code      the reply of turn j had no ```python block, so nothing ran
    low_budget   the first turn after which at most ``near`` of the turn budget is left and
                 no section of the memo has been written
    tool_error   (tool loop) a tool call of turn j failed
    failed_run   every turn of a run that failed: judged, with a pass rate below ``tau``
    turn=J       turn J of every run (``turn=3``): a point that exists whatever happened

The last two always exist on offline sweeps, where scripted policies seldom raise. Sources are
run folders, sweeps or folders of them at any depth, each optionally with a selector
(``SWEEP:root=scripted,max_turns=16``, as ``eval passk`` takes).

    POOL/pool.json        what was pooled: sources, kinds, ``near``, counts by kind
    POOL/prefixes.jsonl   one :class:`Prefix` per line
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from dealroom._util.files import read_json, write_json_atomic, write_text_atomic
from dealroom.errors import ConfigError
from dealroom.eval._passk import DEFAULT_TAU
from dealroom.eval._results import load_rows, parse_source
from dealroom.runs import RunFolder, ScoresRecord, find_runs, fork_point, read_jsonl, root_replies

PREFIX_KINDS = ("cell_error", "failed_wave", "no_code", "low_budget", "tool_error",
                "failed_run")
"""The kinds pooled by default; ``turn=J`` (any J >= 1) is asked for by name."""
TURN_KIND = re.compile(r"turn=([1-9]\d*)")
POOL_FILE = "pool.json"
PREFIXES_FILE = "prefixes.jsonl"


@dataclass(frozen=True)
class Prefix:
    """One failure point of one run, which a fork can continue."""

    id: str
    """``p00001``, ... in pool order."""
    run: str
    """The run folder, absolute."""
    turn: int
    """The root turn j of the failure; a continuation plays turn j + 1 on."""
    kind: str
    """One of :data:`PREFIX_KINDS`, or ``turn=J``."""
    remaining: int
    """Turns left after turn j: T - j."""
    max_turns: int
    """The run's turn budget T."""
    harness: str
    room: str
    root: str | None
    """The policy that played the prefix."""
    sub: str | None
    detail: str
    """The failure in a line (the error's last line, the wave's failed calls, ...)."""
    passed: list[str] | None
    """Criteria the original run passed (its ``scores.json``); None when it was not judged."""
    pass_rate: float | None


@dataclass
class PrefixPool:
    """A pool folder: its prefixes and how they were pooled."""

    path: Path
    prefixes: list[Prefix]
    info: dict[str, Any]

    @classmethod
    def load(cls, path: Path) -> PrefixPool:
        """The pool in ``path`` (written by :func:`pool_prefixes`)."""
        path = Path(path)
        info = read_json(path / POOL_FILE, ConfigError,
                         f"{path} is not a prefix pool ({POOL_FILE} is missing): make one with "
                         "`dealroom eval prefixes SWEEP --out POOL`")
        names = {f.name for f in fields(Prefix)}
        try:
            prefixes = [Prefix(**{k: v for k, v in row.items() if k in names})
                        for row in read_jsonl(path / PREFIXES_FILE)]
        except (TypeError, FileNotFoundError) as exc:
            raise ConfigError(f"{path / PREFIXES_FILE} is not a list of prefixes ({exc})") from None
        return cls(path, prefixes, info)


def check_kinds(kinds: list[str]) -> None:
    """A ConfigError naming the kinds that are neither of :data:`PREFIX_KINDS` nor ``turn=J``."""
    unknown = sorted(k for k in kinds if k not in PREFIX_KINDS and not TURN_KIND.fullmatch(k))
    if unknown:
        raise ConfigError(f"unknown prefix kind {', '.join(unknown)}: kinds are "
                          f"{', '.join(PREFIX_KINDS)} and turn=J (J a turn, from 1)")


def pool_prefixes(paths: Sequence[str | Path], out: Path, kinds: list[str] | None = None,
                  near: float = 0.25, tau: float = DEFAULT_TAU) -> PrefixPool:
    """Pool the failure points of the runs under ``paths`` (run folders, sweeps, folders of
    them, each optionally ``:KEY=VALUE,...``-selected) into the new folder ``out``; ``kinds``
    (default :data:`PREFIX_KINDS`) selects which, ``near`` is the share of the turn budget
    left that counts as nearly spent, ``tau`` the pass rate below which a run failed."""
    kinds = list(kinds or PREFIX_KINDS)
    check_kinds(kinds)
    if not 0 < near < 1:
        raise ConfigError("--near is a share of the turn budget, between 0 and 1")
    if not 0 <= tau <= 1:
        raise ConfigError(f"--tau is a pass rate between 0 and 1, got {tau}")
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"{out} already holds files: give --out a new folder")
    runs = source_runs(paths)
    found = [p for run in runs for p in run_prefixes(run, kinds, near, tau)]
    prefixes = [Prefix(id=f"p{n:05d}", **p) for n, p in enumerate(found, 1)]
    info = {"version": 1, "sources": [_source_name(p) for p in paths],
            "runs": len(runs), "kinds": kinds, "near": near, "tau": tau,
            "counts": {k: sum(p.kind == k for p in prefixes) for k in kinds},
            "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / PREFIXES_FILE,
                      "".join(json.dumps(asdict(p)) + "\n" for p in prefixes))
    write_json_atomic(out / POOL_FILE, info)
    return PrefixPool(out, prefixes, info)


def source_runs(paths: Sequence[str | Path]) -> list[Path]:
    """The run folders of ``paths``, each once: found at any depth, or, for a source with a
    selector, the recorded runs of the episodes it selects."""
    found: dict[Path, None] = {}
    for given in paths:
        path, filters = parse_source(str(given))
        if not filters:
            runs = find_runs([path])
        else:
            runs = [Path(r.run) for r in load_rows(str(given))
                    if (Path(r.run) / "config.json").is_file()]
        for run in runs:
            found.setdefault(run)
    if not found:
        raise ConfigError(f"no recorded runs in {', '.join(map(str, paths))}")
    return list(found)


def _source_name(given: str | Path) -> str:
    path, filters = parse_source(str(given))
    rest = ",".join(f"{k}={v}" for k, v in filters.items())
    return str(path.resolve()) + (f":{rest}" if rest else "")


def run_prefixes(run_dir: Path, kinds: list[str], near: float,
                 tau: float = DEFAULT_TAU) -> list[dict[str, Any]]:
    """The failure points of one run (fields of :class:`Prefix` but ``id``), in turn order;
    only those a fork can continue: the turn has a recorded reply, did not end the episode,
    and leaves at least one turn. A fork's own prefix (its source's turns) is skipped."""
    folder = RunFolder.open(run_dir)
    config = folder.config
    if config.get("harness") == "repl":
        return []
    events = folder.events()
    max_turns = int((config.get("settings") or {}).get("max_turns") or 0)
    forked = config.get("forked_from")
    start = int(forked["turn"]) if forked else 0
    harness = config.get("harness", "rlm")
    scores = folder.scores()
    found = failure_points(events, max_turns, near, harness) + \
        chosen_points(events, kinds, scores, tau)
    points = [(t, k, d) for t, k, d in found
              if k in kinds and start < t < max_turns and _forkable(events, t)]
    passed = None if scores is None else sorted(
        r["id"] for r in scores.get("criteria_results", []) if r.get("verdict") == "pass")
    common = {"run": str(folder.path.resolve()), "max_turns": max_turns,
              "harness": harness, "room": str(config.get("room", "")),
              "root": config.get("root"), "sub": config.get("sub"), "passed": passed,
              "pass_rate": None if scores is None else scores.get("pass_rate")}
    return [{"turn": t, "kind": k, "remaining": max_turns - t, "detail": d, **common}
            for t, k, d in sorted(points)]


def failure_points(events: list[dict[str, Any]], max_turns: int, near: float,
                   harness: str = "rlm") -> list[tuple[int, str, str]]:
    """(turn, kind, detail) of every failure of the root in ``events``, each (turn, kind) once;
    ``no_code`` only for the RLM harness (a tool-loop reply without tools ends its episode)."""
    replies = root_replies(events)
    points: dict[tuple[int, str], str] = {}
    turn, cells, memo_turn, last = 0, set(), math.inf, max(replies, default=0)
    for e in events:
        if e.get("agent") != "root":
            continue
        kind = e.get("type")
        if kind == "model_call" and e.get("role") == "root":
            turn = e["turn"]
        elif kind == "cell":
            cells.add(e["turn"])
            if e.get("error"):
                points.setdefault((e["turn"], "cell_error"), _last_line(e["error"]))
        elif kind == "wave" and e.get("failed"):
            points.setdefault((turn, "failed_wave"),
                              f"{e['failed']} of {e['calls']} calls failed")
        elif kind == "tool" and e.get("error"):
            points.setdefault((e["turn"], "tool_error"), _last_line(e["error"]))
        elif kind == "memo" and e.get("sections"):
            memo_turn = min(memo_turn, turn)
    if harness == "rlm":
        done = last if RunFolder.ended(events) else last - 1  # the last may be cut mid-turn
        for t in replies:
            if t not in cells and t <= done:
                points[(t, "no_code")] = "the reply had no ```python block"
    low = next((t for t in sorted(replies) if 1 <= max_turns - t <= near * max_turns), None)
    if low is not None and low < memo_turn:
        points[(low, "low_budget")] = f"{max_turns - low} of {max_turns} turns left, no memo"
    return [(t, k, d) for (t, k), d in points.items()]


def chosen_points(events: list[dict[str, Any]], kinds: list[str], scores: ScoresRecord | None,
                  tau: float) -> list[tuple[int, str, str]]:
    """The points that need no failure event: every turn of a failed run (judged, pass rate
    below ``tau``) when ``failed_run`` is asked for, and turn J for each ``turn=J`` asked for."""
    replies = sorted(root_replies(events))
    points = []
    rate = (scores or {}).get("pass_rate")
    if "failed_run" in kinds and isinstance(rate, int | float) and rate < tau:
        points += [(t, "failed_run", f"the run's pass rate {rate:.0%} is below {tau:.0%}")
                   for t in replies]
    for kind in kinds:
        match = TURN_KIND.fullmatch(kind)
        if match and int(match[1]) in replies:
            points.append((int(match[1]), kind, f"turn {match[1]}, chosen by turn"))
    return points


def _forkable(events: list[dict[str, Any]], turn: int) -> bool:
    try:
        fork_point(events, turn)
    except ConfigError:
        return False
    return True


def _last_line(text: str) -> str:
    lines = [x for x in str(text).strip().splitlines() if x.strip()]
    return lines[-1][:200] if lines else ""
