"""A committed version-1 run folder (``fixtures/v1-run``, see ``fixtures/make_v1_run.py``:
a scripted run, judged, on a generated two-document room) opens, forks and, once cut as a
kill cuts it, resumes with the code of today."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dealroom.harness import fork_run, resume_run
from dealroom.room import generate_room
from dealroom.runs import RunFolder

FIXTURES = Path(__file__).parent / "fixtures"
ROOM = {"docs": 2, "seed": 3, "secret": "tests"}
"""The room the fixture was made on (as in ``fixtures/make_v1_run.py``)."""


@pytest.fixture
def v1_run(tmp_path) -> Path:
    """A copy of the fixture beside its room (``config.json`` names ``../v1-room``)."""
    generate_room(tmp_path / "v1-room", **ROOM)
    return Path(shutil.copytree(FIXTURES / "v1-run", tmp_path / "v1-run"))


def test_the_committed_version_1_run_opens_as_it_is():
    folder = RunFolder.open(FIXTURES / "v1-run")
    assert folder.version == 2 and folder.config["root"] == "scripted"  # migrated on read
    free = {"input": 0.0, "cached_input": 0.0, "output": 0.0}
    assert folder.config["models"] == {"root": {"name": "scripted", "prices": free},
                                       "sub": {"name": "oracle", "prices": free}}
    assert folder.config["settings"]["max_turns"] == 6
    assert folder.deliverables == {"memo": "memo.md"}
    events = folder.events()
    assert [e["seq"] for e in events] == list(range(20)) and RunFolder.ended(events)
    assert {e["type"] for e in events} == {"run_start", "model_call", "sandbox", "cell", "memo",
                                           "wave", "run_end"}
    assert (folder.metrics() or {})["status"] == "submitted"
    assert (folder.scores() or {})["pass_rate"] == 1.0
    assert folder.memo_at(5) == folder.read_deliverable("memo")


def test_the_version_1_run_forks_after_turn_2(v1_run, tmp_path):
    fork = tmp_path / "fork"
    result = fork_run(v1_run, 2, fork)
    assert result.status == "submitted"
    folder = RunFolder.open(fork)
    assert folder.config["forked_from"]["turn"] == 2 and RunFolder.ended(folder.events())
    assert folder.read_deliverable("memo") == RunFolder.open(v1_run).read_deliverable("memo")


def test_the_version_1_run_cut_in_turn_5_resumes(v1_run):
    trajectory = v1_run / "trajectory.jsonl"
    lines = trajectory.read_text().splitlines(keepends=True)
    trajectory.write_text("".join(lines[:17]) + lines[17][:40])  # turn 5's cell, torn
    history = v1_run / "memo_history.jsonl"
    history.write_text("".join(history.read_text().splitlines(keepends=True)[:3]))
    (v1_run / "metrics.json").unlink()
    (v1_run / "scores.json").unlink()
    assert not RunFolder.ended(RunFolder.open(v1_run).events())
    result = resume_run(v1_run)
    assert result.status == "submitted"
    events = RunFolder.open(v1_run).events()
    assert [e["type"] for e in events[17:]] == ["resumed", "sandbox", "cell", "memo",
                                              "run_end"]
    assert RunFolder.open(v1_run).read_deliverable("memo") == \
        (FIXTURES / "v1-run" / "output" / "memo.md").read_text()
