"""The memo history: the root's memo as it stood at the end of each turn in which it changed.

``memo_history.jsonl`` holds one record per such turn, ``{"turn", "ops", "chars"}``: ``ops``
are the line edits from the previous state (``[first, last, [lines]]``: lines ``first:last``
of the previous memo replaced by ``lines``), so a memo that grows by a finding a turn costs a
finding a line, not the whole memo again. ``chars`` checks the rebuilt text. Replaying the
records gives the memo "as of turn t", which is what truncated Pass@(K,T) and
``dealroom judge --by-turn`` judge.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from dealroom.errors import ConfigError, InputError
from dealroom.runs._check import MEMO_RECORD
from dealroom.runs._jsonl import read_jsonl

MEMO_HISTORY = "memo_history.jsonl"


def memo_delta(old: str, new: str) -> list[list[Any]]:
    """The line edits that turn ``old`` into ``new``.

    >>> memo_delta("a\\nb\\n", "a\\nx\\nb\\n")
    [[1, 1, ['x\\n']]]
    """
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [[i1, i2, b[j1:j2]] for tag, i1, i2, j1, j2 in matcher.get_opcodes()
            if tag != "equal"]


def apply_delta(old: str, ops: list[list[Any]]) -> str:
    """``old`` with :func:`memo_delta`'s edits applied.

    >>> apply_delta("a\\nb\\n", [[1, 1, ["x\\n"]]])
    'a\\nx\\nb\\n'
    """
    lines = old.splitlines(keepends=True)
    for first, last, new in sorted(ops, key=lambda op: op[0], reverse=True):
        lines[first:last] = new
    return "".join(lines)


def read_memo_history(path: Path) -> list[tuple[int, str]]:
    """``(turn, memo)`` for each recorded turn, in order (none when the file is absent)."""
    path = Path(path)
    if not path.is_file():
        return []
    out: list[tuple[int, str]] = []
    memo = ""
    for record in read_jsonl(path):
        MEMO_RECORD.read(record, str(path))
        try:
            memo = apply_delta(memo, record.get("ops") or [])
        except (TypeError, ValueError) as exc:
            raise InputError(f"{path} is damaged at turn {record['turn']}: its edits cannot "
                             f"be applied ({exc})") from None
        if len(memo) != record.get("chars", len(memo)):
            raise ConfigError(f"{path} is damaged at turn {record.get('turn')}: the memo it "
                              "rebuilds has the wrong length")
        out.append((int(record["turn"]), memo))
    return out


def memo_at(history: list[tuple[int, str]], turn: int) -> str:
    """The memo as it stood at the end of ``turn`` ("" before it was first written).

    >>> memo_at([(3, "draft"), (5, "final")], 4)
    'draft'
    """
    text = ""
    for recorded, memo in history:
        if recorded > turn:
            break
        text = memo
    return text
