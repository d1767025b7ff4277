import json

import pytest

from dealroom.errors import ConfigError
from dealroom.eval import RunLog, RunRecorder


def test_events_are_appended_and_read_back(tmp_path):
    run = tmp_path / "run"
    rec = RunRecorder.create(run, {"room": "r"})
    rec.event("run_start")
    rec.event("cell", turn=1, code="print(1)")
    rec.write_memo("# Memo\n")
    log = RunLog.read(run)
    assert [e["seq"] for e in log.events] == [0, 1]
    assert log.events[1]["code"] == "print(1)"
    assert log.config["room"] == "r" and log.config["version"] == 1
    assert (run / "output" / "memo.md").read_text() == "# Memo\n"
    assert not log.ended


def test_torn_last_line_is_ignored_and_resume_continues_seq(tmp_path):
    run = tmp_path / "run"
    rec = RunRecorder.create(run, {})
    rec.event("run_start")
    with open(run / "trajectory.jsonl", "a") as fh:
        fh.write('{"seq": 1, "ty')  # a crash mid-write
    log = RunLog.read(run)
    assert len(log.events) == 1
    again = RunRecorder.reopen(log)
    assert again.event("cell")["seq"] == 1


def test_refuses_a_folder_with_files(tmp_path):
    (tmp_path / "x").write_text("keep me")
    with pytest.raises(ConfigError, match="already holds files"):
        RunRecorder.create(tmp_path, {})
    assert (tmp_path / "x").read_text() == "keep me"


def test_reopen_cuts_the_torn_line_so_the_file_stays_valid(tmp_path):
    run = tmp_path / "run"
    RunRecorder.create(run, {}).event("run_start")
    with open(run / "trajectory.jsonl", "a") as fh:
        fh.write('{"seq": 1, "ty')
    RunRecorder.reopen(RunLog.read(run)).event("cell", turn=1)
    lines = (run / "trajectory.jsonl").read_text().splitlines()
    assert [json.loads(x)["type"] for x in lines] == ["run_start", "cell"]
