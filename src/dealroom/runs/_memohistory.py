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


DIFF_LINES = 1_000
"""Most lines, old and new together, of the changed middle that :func:`memo_delta` diffs line
by line; a larger middle is recorded as one replacement (its cost stays linear in the memo)."""


def memo_delta(old: str, new: str) -> list[list[Any]]:
    """The line edits that turn ``old`` into ``new``, in time linear in their size.

    The lines both share at the start and at the end are left alone; the middle between them is
    diffed line by line (:class:`difflib.SequenceMatcher`) when it holds at most
    :data:`DIFF_LINES` lines, and replaced whole otherwise.

    >>> memo_delta("a\\nb\\n", "a\\nx\\nb\\n")
    [[1, 1, ['x\\n']]]
    """
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    head, tail = _common_ends(a, b)
    a_mid, b_mid = a[head:len(a) - tail], b[head:len(b) - tail]
    if not a_mid and not b_mid:
        return []
    if not a_mid or not b_mid or len(a_mid) + len(b_mid) > DIFF_LINES:
        return [[head, head + len(a_mid), b_mid]]
    matcher = difflib.SequenceMatcher(None, a_mid, b_mid, autojunk=False)
    return [[head + i1, head + i2, b_mid[j1:j2]]
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _common_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many lines ``a`` and ``b`` share at their start, and then at their end."""
    n = min(len(a), len(b))
    head = next((i for i in range(n) if a[i] != b[i]), n)
    tail = next((i for i in range(n - head) if a[-1 - i] != b[-1 - i]), n - head)
    return head, tail


def apply_delta(old: str, ops: list[list[Any]]) -> str:
    """``old`` with :func:`memo_delta`'s edits applied, in one pass; a ValueError for edits that
    overlap or reach past ``old``.

    >>> apply_delta("a\\nb\\n", [[1, 1, ["x\\n"]]])
    'a\\nx\\nb\\n'
    """
    lines = old.splitlines(keepends=True)
    out: list[str] = []
    done = 0
    for first, last, new in sorted(ops, key=lambda op: op[0]):
        if not (isinstance(first, int) and isinstance(last, int)
                and done <= first <= last <= len(lines)):
            raise ValueError(f"the edit of lines {first!r}:{last!r} overlaps another or "
                             f"reaches past the memo's {len(lines)} lines")
        out += lines[done:first]
        out += new
        done = last
    out += lines[done:]
    return "".join(out)


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
