"""A version-1 run folder written before dealroom.runs existed still opens and resumes."""

import json
import shutil
from pathlib import Path

from dealroom.harness import resume_run
from dealroom.models import ScriptedModel
from dealroom.runs import RunFolder

FIXTURE = Path(__file__).parent / "fixtures" / "v1-killed-run"


def reader(messages):
    content = messages[-1]["content"]
    return ("ISSUE: Acme may terminate on a change of control | SEVERITY: high | "
            "AMOUNT: $2,500,000 | PAGE: 2") if "Change of Control" in content else "NONE"


def test_a_killed_version_1_run_resumes_to_the_uninterrupted_memo(small_room, tmp_path):
    run = Path(shutil.copytree(FIXTURE / "run", tmp_path / "run"))
    config = json.loads((run / "config.json").read_text())
    (run / "config.json").write_text(json.dumps({**config, "room": str(small_room)}))
    folder = RunFolder.open(run)
    assert folder.version == 2 and "concurrency" not in folder.config  # read as version 2
    before = folder.events()
    assert len(before) == 12 and not RunFolder.ended(before)  # the torn line is left out
    sub = ScriptedModel([reader], cycle=True, name="reader", model="reader",
                        context_window=4096)
    result = resume_run(run, sub=sub)
    assert result.status == "submitted"
    assert (run / "output" / "memo.md").read_text() == \
        (FIXTURE / "uninterrupted_memo.md").read_text()
    assert len(sub.calls) == 2  # the two sub-calls the kill cut off, nothing repeated
    events = RunFolder.open(run).events()
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert events[12]["type"] == "resumed" and events[12]["previous_events"] == 12
    assert json.loads((run / "metrics.json").read_text())["behaviour"]["sub_calls"] == 4
