"""What both harnesses share: the room's task read once and strictly, the run's metrics."""

import json
import shutil

import pytest

from dealroom.errors import RoomError
from dealroom.harness import run_agent
from dealroom.measure import metrics_from_run
from dealroom.models import ScriptedModel


@pytest.fixture
def room(small_room, tmp_path):
    return shutil.copytree(small_room, tmp_path / "room")


@pytest.mark.parametrize("harness", ["rlm", "toolloop"])
def test_a_corrupt_task_stops_the_run_before_its_folder_exists(room, tmp_path, harness):
    (room / "task.json").write_text('{"instructions": "Review')
    with pytest.raises(RoomError, match=r"task.json cannot be read"):
        run_agent(room, tmp_path / "run", harness=harness, root="scripted",
                  sub=ScriptedModel(["x"]))
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("harness", ["rlm", "toolloop"])
def test_the_instructions_reach_the_root_and_the_rubric_does_not(room, tmp_path, harness):
    task = {"instructions": "Look only at the leases, please.", "deliverables": {"memo": "memo.md"},
            "criteria": [{"id": "C-001", "title": "SECRET-RUBRIC-TITLE", "match_criteria": "x"}]}
    (room / "task.json").write_text(json.dumps(task))
    root = ScriptedModel(["```python\nsubmit()\n```", "done"])
    run_agent(room, tmp_path / "run", harness=harness, root=root, sub=ScriptedModel(["x"]))
    first = "\n".join(m["content"] for m in root.messages[0])
    assert "Look only at the leases, please." in first and "SECRET-RUBRIC-TITLE" not in first


def test_metrics_written_at_the_end_are_those_of_the_records(small_room, tmp_path):
    sub = ScriptedModel(["ISSUE: x | SEVERITY: low | AMOUNT: none | PAGE: 1"], cycle=True)
    result = run_agent(small_room, tmp_path / "run", root="scripted", sub=sub, max_turns=8)
    stored = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert stored == result.metrics == metrics_from_run(tmp_path / "run")
    assert stored["behaviour"]["sub_calls"] == 4 and stored["status"] == "submitted"


def test_resume_refuses_settings_it_does_not_know(small_room, tmp_path):
    from dealroom.errors import ConfigError
    from dealroom.harness import resume_run

    run = tmp_path / "run"
    run_agent(small_room, run, harness="toolloop", root="scripted", max_turns=2)
    config = json.loads((run / "config.json").read_text())
    config["settings"]["warp_speed"] = 9
    (run / "config.json").write_text(json.dumps(config))
    lines = (run / "trajectory.jsonl").read_text().splitlines()
    (run / "trajectory.jsonl").write_text("\n".join(lines[:2]) + "\n")
    with pytest.raises(ConfigError, match=r"records settings this dealroom does not know "
                                          r"\(warp_speed\)"):
        resume_run(run)
