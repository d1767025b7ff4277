"""The memo history: the root's memo as it stood at the end of each turn in which it changed.

``memo_history.jsonl`` holds one record per such turn, ``{"turn", "ops", "chars"}``: ``ops``
are the line edits from the previous state (``[first, last, [lines]]``: lines ``first:last``
of the previous memo replaced by the text of ``lines`` joined; a large replacement is one
string of many lines), so a memo that grows by a finding a turn costs a finding a line, not the
whole memo again. ``chars`` checks the rebuilt text. Replaying the records gives the memo "as
of turn t", which is what truncated Pass@(K,T) and ``dealroom judge --by-turn`` judge.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

from dealroom.errors import ConfigError, InputError
from dealroom.runs._check import MEMO_RECORD
from dealroom.runs._jsonl import read_jsonl

MEMO_HISTORY = "memo_history.jsonl"

DIFF_LINES = 1_000
"""Most lines, old and new together, of the changed middle that :func:`memo_delta` diffs line
by line; a larger middle is recorded as one replacement (its cost stays linear in the memo)."""
_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
"""Line breaks of :meth:`str.splitlines` other than ``\\n``."""


def memo_delta(old: str, new: str) -> list[list[Any]]:
    """The line edits that turn ``old`` into ``new``, in time linear in their size.

    The lines both share at the start and at the end are found on the texts (compared in
    growing slices, never cut into lines); the middle between them is diffed line by line
    (:class:`difflib.SequenceMatcher`) when it holds at most :data:`DIFF_LINES` lines, and
    replaced whole otherwise.

    >>> memo_delta("a\\nb\\n", "a\\nx\\nb\\n")
    [[1, 1, ['x\\n']]]
    """
    if not (_newlines_only(old) and _newlines_only(new)):  # other line breaks: cut into lines
        a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
        head = _shared(a, b, len(a), len(b), 0, forward=True)
        tail = _shared(a, b, len(a), len(b), head, forward=False)
        return _edits(head, "".join(a[head:len(a) - tail]), "".join(b[head:len(b) - tail]),
                      newlines_only=False)
    shared = _shared(old, new, len(old), len(new), 0, forward=True)
    head = old.rfind("\n", 0, shared) + 1  # whole lines only
    tail = _line_tail(old, new, _shared(old, new, len(old), len(new), head, forward=False))
    return _edits(old.count("\n", 0, head), old[head:len(old) - tail],
                  new[head:len(new) - tail], newlines_only=True)


def _shared(a: Any, b: Any, la: int, lb: int, skip: int, *, forward: bool) -> int:
    """How many items (characters or lines) ``a`` and ``b`` share at their start (at their
    end, not counting the first ``skip``): slices of growing size compared, then halved."""
    def same(lo: int, hi: int) -> bool:
        if forward:
            return bool(a[lo:hi] == b[lo:hi])
        return bool(a[la - hi:la - lo] == b[lb - hi:lb - lo])

    n = min(la, lb) - skip
    lo, step = 0, 1024
    while lo < n:
        hi = min(lo + step, n)
        if not same(lo, hi):
            while hi - lo > 1:  # a[:lo] is shared, a[lo:hi] is not
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if same(lo, mid) else (lo, mid)
            return lo
        lo, step = hi, step * 2
    return n


def _line_tail(old: str, new: str, shared: int) -> int:
    """The shared end of ``old`` and ``new`` (``shared`` characters) cut to whole lines."""
    at_old, at_new = len(old) - shared, len(new) - shared
    if (at_old == 0 or old[at_old - 1] == "\n") and (at_new == 0 or new[at_new - 1] == "\n"):
        return shared
    cut = old.find("\n", at_old)
    return 0 if cut < 0 else len(old) - cut - 1


def _edits(first: int, old: str, new: str, *, newlines_only: bool) -> list[list[Any]]:
    """The edits that turn the middle ``old`` (from line ``first`` on) into ``new``."""
    if old == new:
        return []
    if newlines_only:
        count_old = old.count("\n") + (bool(old) and not old.endswith("\n"))
        count_new = new.count("\n") + (bool(new) and not new.endswith("\n"))
    else:
        count_old, count_new = len(old.splitlines()), len(new.splitlines())
    if count_old + count_new > DIFF_LINES:
        return [[first, first + count_old, [new] if new else []]]
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    if not a or not b:
        return [[first, first + len(a), b]]
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [[first + i1, first + i2, b[j1:j2]]
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _newlines_only(text: str) -> bool:
    """Whether ``\\n`` is the only line break of ``text`` (an ASCII text is searched for the
    other ASCII ones, faster than with :data:`_BREAKS`)."""
    if text.isascii():
        return not any(c in text for c in "\r\x0b\x0c\x1c\x1d\x1e")
    return _BREAKS.search(text) is None


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
