"""Judging a run "as of turn t": its memo history judged turn by turn (``--by-turn``).

Each root turn gets the verdicts on the memo as it stood at the end of that turn (from
``memo_history.jsonl``, :meth:`~dealroom.runs.RunFolder.memo_at`); a memo state is judged once
however many turns it lasted. ``scores_by_turn.json`` holds, per turn 1..turns, the pass rate,
all-pass, counts and the pass rate by criterion type: what truncated Pass@(K,T) reads (a turn
past the run's last is judged as its final memo).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Unpack

from dealroom._util.files import json_safe, write_json_atomic
from dealroom.judge._run import (
    JudgeOptions,
    _ready,
    check_judge_options,
    memo_deliverables,
    open_judge,
)
from dealroom.judge._scores import Judge
from dealroom.room import load_task
from dealroom.runs import RunFolder


def run_turns(folder: RunFolder) -> int:
    """Root turns the run took: its ``run_end``'s, else the last root turn recorded."""
    events = folder.events()
    ends = [e for e in events if e.get("type") == "run_end" and e.get("agent") == "root"]
    if ends:
        return int(ends[-1].get("turns", 0))
    turns = [e.get("turn") or 0 for e in events
             if e.get("agent") == "root" and e.get("type") in ("model_call", "cell")]
    return max(turns, default=0)


async def ajudge_by_turn(run_dir: Path, judge: Judge | str = "reference",
                         out: Path | None = None,
                         **options: Unpack[JudgeOptions]) -> dict[str, Any]:
    """Judge the memo of ``run_dir`` as of each root turn; write ``scores_by_turn.json`` (or
    ``out``) and return it."""
    check_judge_options(options.get("batch", 1), options.get("retries", 2))
    folder = RunFolder.open(run_dir)
    task = load_task(folder.room)
    judge = _ready(judge, task, folder.room)
    history = dict(folder.memo_history())
    turns = run_turns(folder)
    rows, seen, memo = [], {}, ""
    async with open_judge(judge, **options) as ready:
        for turn in range(1, turns + 1):
            memo = history.get(turn, memo)
            if memo not in seen:
                seen[memo] = await ready(task, memo_deliverables(task, memo))
            scores = seen[memo]
            rows.append({"turn": turn, "pass_rate": scores.pass_rate,
                         "pass_rate_positive": scores.pass_rate_positive,
                         "all_pass": scores.all_pass, "n_passed": scores.n_passed,
                         "n_criteria": scores.n_criteria, "n_errors": scores.n_errors,
                         "memo_chars": len(memo),
                         "pass_rate_by_type": {k: v["pass_rate"]
                                               for k, v in scores.by_type().items()}})
    name = next(iter(seen.values())).judge.get("name") if seen else getattr(judge, "name", "")
    result = json_safe({"run": folder.name, "judge": {"name": name}, "turns": turns,
                        "by_turn": rows})
    write_json_atomic(Path(out) if out else folder.scores_by_turn_path(), result)
    return result


def judge_by_turn(run_dir: Path, judge: Judge | str = "reference",
                  **options: Unpack[JudgeOptions]) -> dict[str, Any]:
    """Sync front door of :func:`ajudge_by_turn`."""
    return asyncio.run(ajudge_by_turn(run_dir, judge, **options))
