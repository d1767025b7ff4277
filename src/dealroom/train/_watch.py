"""The training watch: signs that a policy is finding its way around the task, not through it.

A policy optimized against the judged reward tries whatever raises it. The sandbox shows the
worker an allow-list without the answer key and the rubric, and BudgetMix is audited, so an
attempt gains nothing; the watch is defence in depth, and makes attempts visible, step by
step, before they become a habit:

- ``hidden_touches``: rollouts whose records hold what only a read of a hidden file can give —
  a *canary* or the rubric's text — or, lexically, whose code names a hidden part of the room
  (``answer_key/``, ``task.json``) or whose REPL answered a cell with a refused read of one;
- ``reward_gap``: the step's reward mean above the latest held-out pass rate by more than
  ``watch_gap`` (a reward that does not carry over is the sign of a shortcut).

Canaries: :func:`plant_canaries` gives ``task.json`` and each JSON file under ``answer_key/`` of
a training room a ``"canary"`` key (``DEALROOM-CANARY-<random>``, first in the file; kept when
there already). However a rollout reaches such a file — a path spelled with ``chr()``, base64,
hex and ``exec``, ``glob`` or ``os.walk``, ``getattr(__builtins__, ...)`` — printing it puts the
canary in the cell's output, a sub-agent's prompt or the memo; reading only the criteria puts a
criterion's ``match_criteria`` there, which no agent is ever shown. The watch searches every
file of the run folder — every string of the trajectory (cells, outputs, tool calls, model
calls' prompts and answers), the token records (decoded with the policy's tokenizer), the memo
history and the deliverables — after undoing the usual disguises (:mod:`._watch_text`).

Each sign is a row of ``CKPT/watch.jsonl`` and a warning on stderr; with ``stop_on_watch``
training stops with ``TrainingWatchError`` instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import stat
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dealroom._util.files import write_json_atomic
from dealroom.errors import DealroomError
from dealroom.room import ANSWER_KEY, deliverable_text
from dealroom.room import TASK_FILE as TASK
from dealroom.runs import TOKENS, TRAJECTORY, RunFolder
from dealroom.train._watch_text import Needles

WATCH = "watch.jsonl"
CANARY = "canary"
"""The key of a hidden file's canary."""
CANARY_PREFIX = "DEALROOM-CANARY-"
RUBRIC_MIN = 40
"""A criterion's ``match_criteria`` this long or longer is a tripwire too."""
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


def plant_canaries(room: Path) -> dict[str, str]:
    """Give each hidden JSON file of ``room`` (``task.json``, ``answer_key/**/*.json``) a
    canary, first in the file, keeping one planted before; return :func:`room_canaries`."""
    for path in _hidden_files(Path(room)):
        data = _json(path)
        if not isinstance(data, dict) or _is_canary(data.get(CANARY)):
            continue
        mode = stat.S_IMODE(path.stat().st_mode)
        planted = {CANARY: CANARY_PREFIX + secrets.token_hex(12)}
        try:
            write_json_atomic(path, planted | {k: v for k, v in data.items() if k != CANARY})
            path.chmod(mode)
        except OSError as exc:  # a read-only room: the rubric's text still watches it
            warnings.warn(f"the training watch cannot plant a canary in {path}: "
                          f"{exc.strerror}", stacklevel=2)
    return room_canaries(room)


def room_canaries(room: Path) -> dict[str, str]:
    """What only a read of the room's hidden files gives, to where it comes from: each file's
    canary, and each criterion's ``match_criteria`` of :data:`RUBRIC_MIN` characters or more."""
    found: dict[str, str] = {}
    room = Path(room)
    for path in _hidden_files(room):
        data = _json(path)
        if not isinstance(data, dict):
            continue
        name = path.relative_to(room).as_posix()
        if _is_canary(data.get(CANARY)):
            found[data[CANARY]] = f"the canary of {name}"
        if name == TASK and isinstance(data.get("criteria"), list):
            for c in data["criteria"]:
                text = c.get("match_criteria") if isinstance(c, dict) else None
                if isinstance(text, str) and len(text.strip()) >= RUBRIC_MIN:
                    found[text.strip()] = f"the rubric's text of criterion {c.get('id')}"
    return found


def _hidden_files(room: Path) -> list[Path]:
    key = room / ANSWER_KEY
    files = sorted(p for p in key.rglob("*.json") if p.is_file()) if key.is_dir() else []
    return [p for p in [room / TASK, *files] if p.is_file() and not p.is_symlink()]


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _is_canary(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(CANARY_PREFIX)


Decode = Callable[[list[int]], str]
"""Token ids -> text: the policy's tokenizer, to read ``tokens.jsonl``."""


def hidden_touch(run_dir: Path, canaries: Mapping[str, str] | None = None, *,
                 decode: Decode | None = None) -> str | None:
    """Where the run's records first hold what only a read of a hidden file gives (``canaries``,
    by default the run's room's :func:`room_canaries`), in any form the watch undoes
    (:mod:`._watch_text`: case, escapes, zero-width characters, reversal, rot13, base64, hex,
    a split over events), in any file of the run (``tokens.jsonl`` read with ``decode``);
    else the first line of its agent code (REPL cells, tool arguments) that names a hidden
    part of the room, or of a cell's output that reports a refused read of one; None when
    there is none. Sub-agents' answers are searched for canaries, never for names (the
    oracle's mention the answer key)."""
    if canaries is None:
        canaries = _canaries_of(run_dir)
    needles = Needles(canaries)
    return (_leak(Path(run_dir), needles, decode) if needles else None) or _named(run_dir)


def _canaries_of(run_dir: Path) -> dict[str, str]:
    try:
        return room_canaries(RunFolder(run_dir).room)
    except (DealroomError, OSError):
        return {}


def _leak(run_dir: Path, needles: Needles, decode: Decode | None) -> str | None:
    """The first record or file of the run holding one of the ``needles``, in words."""
    by_field: dict[str, list[str]] = {}
    for event in RunFolder(run_dir).events():
        if (what := needles.find(_strings(event))) is not None:
            where = f"{event.get('agent') or 'root'} turn {event.get('turn')}"
            return f"{where}: its {event.get('type')} record holds {what}"
        for name, text in _fields(event):
            by_field.setdefault(name, []).append(text)
    for name, texts in by_field.items():  # a tripwire split over events, field by field
        if (what := needles.find(texts)) is not None:
            return f"{TRAJECTORY}'s {name} fields, joined over its records, hold {what}"
    for path in sorted(p for p in run_dir.rglob("*") if p.is_file()):
        if path.name == TRAJECTORY and path.parent == run_dir:
            continue
        if (what := needles.find(_file_texts(path, decode))) is not None:
            return f"{path.relative_to(run_dir).as_posix()} holds {what}"
    return None


def _file_texts(path: Path, decode: Decode | None) -> Iterator[str]:
    """The text of a file of the run: a record file's strings (``tokens.jsonl``'s ids
    decoded), a deliverable's text, any other file's bytes as text."""
    if path.suffix == ".jsonl":
        with path.open(encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if line.strip():
                    yield from _line_texts(_json_line(line), path.name == TOKENS, decode)
        return
    texts = [_deliverable(path)] if path.suffix.lower() in (".docx", ".pdf", ".xlsx") else []
    with contextlib.suppress(OSError):
        texts.append(path.read_bytes().decode("utf-8", "replace"))
    yield from texts


def _deliverable(path: Path) -> str:
    try:
        return deliverable_text(path)
    except (DealroomError, OSError, ValueError):
        return ""


def _line_texts(record: Any, tokens: bool, decode: Decode | None) -> Iterator[str]:
    yield from _strings(record)
    if tokens and decode is not None and isinstance(record, dict):
        prompt = record.get("prompt_ids") or []
        fresh = prompt[int(record.get("prompt_reused") or 0):]
        for ids in (fresh, record.get("completion_ids") or []):
            if isinstance(ids, list) and ids and all(isinstance(i, int) for i in ids):
                yield decode(ids)


def _json_line(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return line


def _fields(value: Any, name: str = "") -> Iterator[tuple[str, str]]:
    """Every string in a JSON value with where it is (``input.prompt``; list items share
    their list's name)."""
    if isinstance(value, str):
        yield name, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _fields(item, f"{name}.{key}" if name else str(key))
    elif isinstance(value, list):
        for item in value:
            yield from _fields(item, name)


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value (keys included), decoded."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _named(run_dir: Path) -> str | None:
    """The lexical signs: agent code naming a hidden part, a refused read of one."""
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


def _room_of(run: Path) -> str:
    try:
        return os.fspath(RunFolder(run).room)
    except (DealroomError, OSError):
        return ""


def step_signs(step: int, runs: list[Path], reward_mean: float | None,
               heldout_pass_rate: float | None, gap: float, *,
               decode: Decode | None = None) -> list[Sign]:
    """The signs of one step: its rollouts' hidden touches, and a reward gap over the latest
    held-out pass rate larger than ``gap``."""
    signs = []
    by_room: dict[str, dict[str, str]] = {}
    for run in runs:
        room = _room_of(run)
        if room not in by_room:
            by_room[room] = _canaries_of(run)
        touched = hidden_touch(run, by_room[room], decode=decode)
        if touched:
            signs.append(Sign(step, "hidden_touch", touched, str(run)))
    if reward_mean is not None and heldout_pass_rate is not None \
            and reward_mean - heldout_pass_rate > gap:
        signs.append(Sign(step, "reward_gap", f"reward mean {reward_mean:.3f} is "
                          f"{reward_mean - heldout_pass_rate:.3f} above the held-out pass "
                          f"rate {heldout_pass_rate:.3f} (watch_gap {gap})"))
    return signs
