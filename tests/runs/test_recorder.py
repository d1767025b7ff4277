"""Events appended as the run goes, and a trajectory torn by a kill continued cleanly."""

import json
import re

import pytest
from support.events import fields

from dealroom.errors import ConfigError
from dealroom.runs import RUN_VERSION, RunFolder, RunRecorder


def test_events_are_appended_and_read_back(tmp_path):
    run = tmp_path / "run"
    rec = RunRecorder(RunFolder.create(run, {"room": "r"}))
    rec.event("run_start", **fields("run_start"))
    rec.event("cell", **fields("cell"))
    folder = RunFolder.open(run)
    events = folder.events()
    assert [e["seq"] for e in events] == [0, 1]
    assert events[1]["code"] == "print(1)"
    assert folder.config["room"] == "r" and folder.config["version"] == RUN_VERSION
    assert not RunFolder.ended(events)
    assert rec.written == events


def test_torn_last_line_is_ignored_and_resume_continues_seq(tmp_path):
    run = tmp_path / "run"
    rec = RunRecorder(RunFolder.create(run, {}))
    rec.event("run_start", **fields("run_start"))
    with open(run / "trajectory.jsonl", "a") as fh:
        fh.write('{"seq": 1, "ty')  # a crash mid-write
    folder = RunFolder.open(run)
    events = folder.events()
    assert len(events) == 1
    again = RunRecorder.reopen(folder, events)
    assert again.event("cell", **fields("cell"))["seq"] == 1


def test_refuses_a_folder_with_files(tmp_path):
    (tmp_path / "x").write_text("keep me")
    with pytest.raises(ConfigError, match="already holds files"):
        RunFolder.create(tmp_path, {})
    assert (tmp_path / "x").read_text() == "keep me"


def test_reopen_cuts_the_torn_line_so_the_file_stays_valid(tmp_path):
    run = tmp_path / "run"
    RunRecorder(RunFolder.create(run, {})).event("run_start", **fields("run_start"))
    with open(run / "trajectory.jsonl", "a") as fh:
        fh.write('{"seq": 1, "ty')
    folder = RunFolder.open(run)
    RunRecorder.reopen(folder, folder.events()).event("cell", **fields("cell"))
    lines = (run / "trajectory.jsonl").read_text().splitlines()
    assert [json.loads(x)["type"] for x in lines] == ["run_start", "cell"]


def test_a_resumed_trajectory_continues_the_clock(tmp_path):
    run = tmp_path / "run"
    folder = RunFolder.create(run, {})
    (run / "trajectory.jsonl").write_text(json.dumps({"seq": 0, "t": 50.0, "type": "x"}) + "\n")
    event = RunRecorder.reopen(folder, folder.events()).event("resumed", previous_events=1)
    assert event["seq"] == 1 and 50.0 <= event["t"] < 60.0


@pytest.mark.parametrize("kind,changes,message", [
    ("cell", {"turn": "1"}, "'cell' event written with turn '1', not an integer"),
    ("cell", {"secs": 0.1}, "'cell' event written with secs, a key its record does not name"),
    ("run_end", {"status": None}, "'run_end' event written with status None, not a string"),
    ("memo", {"sections": 1.0}, "'memo' event written with sections 1.0, not an integer"),
    ("model_call", {"usage": []}, "'model_call' event written with usage [], not an object"),
])
def test_an_event_with_a_wrong_field_is_refused_and_nothing_is_written(tmp_path, kind, changes,
                                                                       message):
    rec = RunRecorder(RunFolder.create(tmp_path / "run", {}))
    with pytest.raises(ValueError, match=re.escape(message)):
        rec.event(kind, **fields(kind, **changes))
    rec.event("memo", **fields("memo"))
    assert [e["seq"] for e in RunFolder.open(tmp_path / "run").events()] == [0]


def test_an_event_missing_a_field_or_of_an_unknown_type_is_refused(tmp_path):
    rec = RunRecorder(RunFolder.create(tmp_path / "run", {}))
    cell = fields("cell")
    del cell["seconds"]
    with pytest.raises(ValueError, match="'cell' event written without seconds"):
        rec.event("cell", **cell)
    with pytest.raises(ValueError, match="event of type 'cel' written: the types are run_start"):
        rec.event("cel", **fields("cell"))
    assert rec.written == []
