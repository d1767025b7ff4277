"""The training watch: signs that a policy is finding its way around the task, not through it.

A policy optimized against the judged reward tries whatever raises it. The sandbox hides the
answer key and the rubric, and BudgetMix is audited, so an attempt gains nothing; the watch
makes attempts visible, step by step, before they become a habit:

- ``hidden_touches``: rollouts whose code names a hidden part of the room (``answer_key/``,
  ``task.json``) or whose REPL answered a cell with a refused read of one;
- ``reward_gap``: the step's reward mean above the latest held-out pass rate by more than
  ``watch_gap`` (a reward that does not carry over is the sign of a shortcut).

Each sign is a row of ``CKPT/watch.jsonl`` and a warning on stderr; with ``stop_on_watch``
training stops with ``TrainingWatchError`` instead.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dealroom.errors import DealroomError
from dealroom.room import ANSWER_KEY
from dealroom.room import TASK_FILE as TASK
from dealroom.runs import RunFolder

WATCH = "watch.jsonl"
_NAMED = re.compile(rf"{re.escape(ANSWER_KEY)}|{re.escape(TASK)}")
_REFUSED = re.compile(r"(PermissionError|FileNotFoundError|Permission denied|No such file)[^\n]*"
                      rf"({re.escape(ANSWER_KEY)}|{re.escape(TASK)})")


class TrainingWatchError(DealroomError):
    """A watched sign (see ``dealroom.train._watch``) stopped training (``stop_on_watch``)."""


@dataclass(frozen=True)
class Sign:
    """One thing the watch saw."""

    step: int
    kind: str
    """``hidden_touch`` or ``reward_gap``."""
    detail: str
    run: str | None = None

    def to_dict(self) -> dict[str, Any]:
        row = {"step": self.step, "kind": self.kind, "detail": self.detail}
        return row | ({"run": self.run} if self.run else {})


def hidden_touch(run_dir: Path) -> str | None:
    """The first line of the run's agent code (REPL cells, tool arguments) that names a hidden
    part of the room, or of a cell's output that reports a refused read of one; None when
    there is none. Sub-agents' answers are not agent code and are not read."""
    for event in RunFolder(run_dir).events():
        if event.get("type") == "cell":
            texts = [(str(event.get("code") or ""), _NAMED),
                     (f"{event.get('output') or ''}\n{event.get('error') or ''}", _REFUSED)]
        elif event.get("type") == "tool":
            texts = [(json.dumps(event.get("arguments") or {}), _NAMED)]
        else:
            continue
        for text, pattern in texts:
            found = pattern.search(text)
            if found:
                start = text.rfind("\n", 0, found.start()) + 1
                line = text[start:].split("\n", 1)[0].strip()
                return f"{event.get('agent') or 'root'} turn {event.get('turn')}: {line[:200]}"
    return None


def step_signs(step: int, runs: list[Path], reward_mean: float | None,
               heldout_pass_rate: float | None, gap: float) -> list[Sign]:
    """The signs of one step: its rollouts' hidden touches, and a reward gap over the latest
    held-out pass rate larger than ``gap``."""
    signs = []
    for run in runs:
        touched = hidden_touch(run)
        if touched:
            signs.append(Sign(step, "hidden_touch", touched, str(run)))
    if reward_mean is not None and heldout_pass_rate is not None \
            and reward_mean - heldout_pass_rate > gap:
        signs.append(Sign(step, "reward_gap", f"reward mean {reward_mean:.3f} is "
                          f"{reward_mean - heldout_pass_rate:.3f} above the held-out pass "
                          f"rate {heldout_pass_rate:.3f} (watch_gap {gap})"))
    return signs
