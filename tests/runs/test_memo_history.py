"""The memo history: line edits that rebuild the memo as of every turn, written as turns end."""

import doctest
import json
import random

import pytest

from dealroom.errors import ConfigError
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
