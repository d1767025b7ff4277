"""Forking a run at a root turn: a new run folder that holds the first turns of another.

    SOURCE/trajectory.jsonl   e0 e1 ... e(n-1) | root model_call of turn J+1 ...
    NEW/trajectory.jsonl      e0 e1 ... e(n-1)            (``forked_from.events`` = n)
    NEW/config.json           the source's, with the new policy and ``forked_from``

The new folder is an interrupted run whose records end after the root's turn J, so the
harness's resume replays turns 1..J from them (root replies, sub-call and child results) and
the new policy takes turn J+1 (``dealroom resume RUN --from-turn J --out NEW``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dealroom._util.files import write_text_atomic
from dealroom.errors import ConfigError, InputError
from dealroom.runs._folder import TRAJECTORY, RunFolder

ENDING = {"submitted", "finished"}
"""``run_end`` statuses in which the root itself ended the episode at its last turn."""


def root_replies(events: list[dict[str, Any]]) -> dict[int, str]:
    """Turn → the root's recorded reply, for every root turn whose model call succeeded."""
    return {e["turn"]: e["output"] for e in events
            if e.get("type") == "model_call" and e.get("agent") == "root"
            and e.get("role") == "root" and e.get("error") is None}


def fork_point(events: list[dict[str, Any]], turn: int) -> int:
    """How many of ``events`` (in ``seq`` order) come before the root's turn ``turn + 1``; a
    ConfigError says why the run cannot be continued after turn ``turn``."""
    replies = root_replies(events)
    if not replies:
        raise ConfigError("the run recorded no reply of its root: there is nothing to fork")
    last = max(replies)
    if not 1 <= turn <= last:
        raise InputError(f"the run has {last} root turn(s): --from-turn takes 1 to {last}")
    if turn not in replies:
        raise ConfigError(f"the root's call of turn {turn} failed, so that turn has no reply "
                          f"to replay: fork at turn {turn - 1}")
    for n, e in enumerate(events):
        if e.get("agent") != "root":
            continue
        if e.get("type") == "run_end":
            ended = e.get("ended") or e.get("status")
            if ended in ENDING and e.get("turns") == turn:
                raise ConfigError(f"the root ended the episode at turn {turn} "
                                  f"({ended}): fork at an earlier turn")
            return n
        if e.get("type") == "model_call" and e.get("role") == "root" and e["turn"] > turn:
            return n
    return len(events)


def fork_run_folder(source: RunFolder, out: Path, turn: int,
                    config: dict[str, Any], cut: int | None = None) -> RunFolder:
    """Create ``out`` holding ``source``'s events up to the end of root turn ``turn`` and
    ``config`` with ``forked_from`` added (check ``out`` with :meth:`RunFolder.check_new`
    before opening models); ``cut``: how many events to copy, where the caller knows
    (``dealroom ask`` keeps a last turn that ended the episode)."""
    events = source.events()
    cut = fork_point(events, turn) if cut is None else cut
    forked_from = {"run": str(source.path.resolve()), "turn": turn, "events": cut,
                   "root": source.config.get("root")}
    folder = RunFolder.create(out, {**config, "forked_from": forked_from})
    lines = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events[:cut])
    write_text_atomic(folder.path / TRAJECTORY, lines)
    return folder


def check_fork_copied(folder: RunFolder, events: list[dict[str, Any]]) -> None:
    """Raise ConfigError when ``folder`` is a fork killed before its copy of the source's
    records was written (``events`` are the folder's)."""
    forked = folder.config.get("forked_from")
    if isinstance(forked, dict) and len(events) < forked.get("events", 0):
        raise ConfigError(f"{folder.path} is a fork stopped before it copied the records of "
                          f"{forked.get('run')}: delete it and fork again")
