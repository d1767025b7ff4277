"""Events appended as the run goes, and a trajectory torn by a kill continued cleanly."""

import json

import pytest

from dealroom.errors import ConfigError
from dealroom.runs import RunFolder, RunRecorder


def test_events_are_appended_and_read_back(tmp_path):
    run = tmp_path / "run"
    rec = RunRecorder(RunFolder.create(run, {"room": "r"}))
    rec.event("run_start")
    rec.event("cell", turn=1, code="print(1)")
    folder = RunFolder.open(run)
    events = folder.events()
    assert [e["seq"] for e in events] == [0, 1]
    assert events[1]["code"] == "print(1)"
    assert folder.config["room"] == "r" and folder.config["version"] == 1
    assert not RunFolder.ended(events)
    assert rec.written == events


def test_torn_last_line_is_ignored_and_resume_continues_seq(tmp_path):
    run = tmp_path / "run"
    rec = RunRecorder(RunFolder.create(run, {}))
    rec.event("run_start")
    with open(run / "trajectory.jsonl", "a") as fh:
        fh.write('{"seq": 1, "ty')  # a crash mid-write
    folder = RunFolder.open(run)
    events = folder.events()
    assert len(events) == 1
    again = RunRecorder.reopen(folder, events)
    assert again.event("cell")["seq"] == 1


def test_refuses_a_folder_with_files(tmp_path):
    (tmp_path / "x").write_text("keep me")
    with pytest.raises(ConfigError, match="already holds files"):
        RunFolder.create(tmp_path, {})
    assert (tmp_path / "x").read_text() == "keep me"


def test_reopen_cuts_the_torn_line_so_the_file_stays_valid(tmp_path):
    run = tmp_path / "run"
    RunRecorder(RunFolder.create(run, {})).event("run_start")
    with open(run / "trajectory.jsonl", "a") as fh:
        fh.write('{"seq": 1, "ty')
    folder = RunFolder.open(run)
    RunRecorder.reopen(folder, folder.events()).event("cell", turn=1)
    lines = (run / "trajectory.jsonl").read_text().splitlines()
    assert [json.loads(x)["type"] for x in lines] == ["run_start", "cell"]


def test_a_resumed_trajectory_continues_the_clock(tmp_path):
    run = tmp_path / "run"
    folder = RunFolder.create(run, {})
    (run / "trajectory.jsonl").write_text(json.dumps({"seq": 0, "t": 50.0, "type": "x"}) + "\n")
    event = RunRecorder.reopen(folder, folder.events()).event("resumed", previous_events=1)
    assert event["seq"] == 1 and 50.0 <= event["t"] < 60.0
