"""The memo history: line edits that rebuild the memo as of every turn, written as turns end."""

import doctest
import json
import random

import pytest

from dealroom.errors import ConfigError, InputError
from dealroom.runs import (
    MEMO_HISTORY,
    RunFolder,
    RunRecorder,
    _memohistory,
    apply_delta,
    memo_delta,
)


def test_the_docstrings_examples_hold():
    assert doctest.testmod(_memohistory).failed == 0


def test_deltas_rebuild_any_edit():
    rng = random.Random(7)
    memo = ""
    for _ in range(200):
        lines = memo.splitlines(keepends=True)
        for _ in range(rng.randint(1, 4)):
            at = rng.randint(0, len(lines))
            if lines and rng.random() < 0.3:
                del lines[min(at, len(lines) - 1)]
            else:
                lines.insert(at, f"line {rng.randint(0, 50)}" + "\n" * rng.randint(0, 1))
        new = "".join(lines)
        assert apply_delta(memo, memo_delta(memo, new)) == new
        memo = new


def test_turns_are_recorded_once_and_a_reopened_recorder_continues(tmp_path):
    folder = RunFolder.create(tmp_path / "run", {})
    rec = RunRecorder(folder)
    rec.memo_turn(2, "# M\n")
    rec.memo_turn(2, "# M\nlater in turn 2\n")  # a turn already recorded adds nothing
    rec.memo_turn(3, "# M\n")  # unchanged: nothing
    rec.memo_turn(5, "# M\n## A\n")
    rec.close()
    assert folder.memo_history() == [(2, "# M\n"), (5, "# M\n## A\n")]
    assert [folder.memo_at(t) for t in (1, 2, 4, 5, 9)] == ["", "# M\n", "# M\n", "# M\n## A\n",
                                                           "# M\n## A\n"]
    with open(tmp_path / "run" / MEMO_HISTORY, "a") as fh:
        fh.write('{"turn": 6, "ops"')  # torn by a kill
    again = RunRecorder.reopen(folder, [])
    again.memo_turn(5, "ignored\n")
    again.memo_turn(6, "# M\n## A\n## B\n")
    again.close()
    assert folder.memo_history()[-1] == (6, "# M\n## A\n## B\n")
    records = [json.loads(x) for x in (tmp_path / "run" / MEMO_HISTORY).read_text().splitlines()]
    assert records[-1]["ops"] == [[2, 2, ["## B\n"]]]  # the edit, not the memo again


def test_a_damaged_history_is_named(tmp_path):
    folder = RunFolder.create(tmp_path / "run", {})
    (tmp_path / "run" / MEMO_HISTORY).write_text(
        json.dumps({"turn": 1, "ops": [[0, 0, ["abc\n"]]], "chars": 99}) + "\n")
    with pytest.raises(ConfigError, match="damaged at turn 1"):
        folder.memo_history()


def random_memo(rng, chars):
    """Short random lines, some of them repeated, about ``chars`` characters in all."""
    lines, size = [], 0
    while size < chars:
        line = "".join(rng.choice("ab ") for _ in range(rng.randint(0, 12))) + "\n"
        lines.append(line)
        size += len(line)
    return "".join(lines)


def test_large_random_memos_round_trip_exactly():
    rng = random.Random(37)
    for chars in (100_000, 200_000, 1_000_000):
        old, new = random_memo(rng, chars), random_memo(rng, chars)
        assert apply_delta(old, memo_delta(old, new)) == new
        assert apply_delta(new, memo_delta(new, old)) == old
    base = random_memo(rng, 1_000_000)
    lines = base.splitlines(keepends=True)
    for _ in range(20):  # edits near the ends, in the middle, far apart, whole lines or not
        edited = list(lines)
        for _ in range(rng.randint(1, 3)):
            at = rng.randint(0, len(edited))
            edited[at:at + rng.randint(0, 3000)] = [random_memo(rng, rng.randint(0, 2000))]
        new = "".join(edited) + rng.choice(["", "no newline at the end"])
        assert apply_delta(base, memo_delta(base, new)) == new


def test_deltas_rebuild_texts_with_every_kind_of_line_break(monkeypatch):
    rng = random.Random(11)
    pieces = ["a", "b", "\n", "\n", "\r", "\r\n", "\u2028", "\x85", "\x0c", "x\n", "é"]
    for n in range(3000):
        monkeypatch.setattr(_memohistory, "DIFF_LINES", rng.choice([0, 2, 1000]))
        old = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        edited = list(old)
        for _ in range(rng.randint(0, 3)):
            at = rng.randint(0, len(edited))
            edited[at:at + rng.randint(0, 3)] = rng.choices(pieces, k=rng.randint(0, 3))
        new = "".join(edited) if n % 2 else "".join(rng.choices(pieces, k=rng.randint(0, 30)))
        assert apply_delta(old, memo_delta(old, new)) == new, (old, new)


def test_a_large_change_is_one_replacement_between_the_shared_head_and_tail():
    rng = random.Random(5)
    head, tail = random_memo(rng, 50_000), random_memo(rng, 50_000)
    old_mid, new_mid = random_memo(rng, 100_000), random_memo(rng, 100_000)
    first = len(head.splitlines())
    ops = memo_delta(head + old_mid + tail, head + new_mid + tail)
    assert ops == [[first, first + len(old_mid.splitlines()), [new_mid]]], "one string"
    assert memo_delta(head + tail, head + "one finding\n" + tail) == [
        [first, first, ["one finding\n"]]], "a small change is still the lines it changed"


def test_edits_that_overlap_or_reach_past_the_memo_are_refused(tmp_path):
    with pytest.raises(ValueError, match="overlaps another or reaches past"):
        apply_delta("a\nb\nc\n", [[0, 2, ["x\n"]], [1, 3, ["y\n"]]])
    with pytest.raises(ValueError, match="reaches past the memo's 1 lines"):
        apply_delta("a\n", [[0, 5, []]])
    folder = RunFolder.create(tmp_path / "run", {})
    (tmp_path / "run" / MEMO_HISTORY).write_text(
        json.dumps({"turn": 1, "ops": [[0, 0, ["a\n"]]], "chars": 2}) + "\n"
        + json.dumps({"turn": 2, "ops": [[3, 4, ["b\n"]]], "chars": 2}) + "\n")
    with pytest.raises(InputError, match="damaged at turn 2: its edits cannot be applied"):
        folder.memo_history()
