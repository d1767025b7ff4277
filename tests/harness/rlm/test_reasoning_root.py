"""A reasoning root: code is read from the answer only, the reasoning is kept in the records,
the viewer and the training rows, and the history keeps or drops it as configured."""

from __future__ import annotations

import json
import shutil

import pytest

from dealroom.harness import fork_run, resume_run, run_agent
from dealroom.models import ScriptedModel
from dealroom.report._trace import trace_items
from dealroom.runs import RunFolder
from dealroom.testing import Completion, ServedModelServer

DRAFTED = ("<think>I could start with\n```python\nprint('DRAFT')\nx = 0\n```\nbut better set x "
           "first.</think>\n\nSetting x.\n```python\nx = 1\nprint('REAL', x)\n```")
REPLIES = [
    DRAFTED,
    "<think>Now check it.</think>```python\nprint('x is', x)\n```",
    "```python\nsubmit()\n```",
]


def events_of(run):
    return RunFolder.open(run).events()


def roots(events):
    return [e for e in events if e["type"] == "model_call" and e["role"] == "root"]


def test_code_drafted_in_the_reasoning_never_runs_and_the_reasoning_is_kept(
        small_room, tmp_path) -> None:
    result = run_agent(small_room, tmp_path / "run", root=ScriptedModel(REPLIES),
                       sub=ScriptedModel(["x"], cycle=True))
    assert result.status == "submitted"
    events = events_of(tmp_path / "run")
    cells = [e for e in events if e["type"] == "cell"]
    assert "DRAFT" not in cells[0]["code"] and "REAL 1" in cells[0]["output"]
    assert "x is 1" in cells[1]["output"]
    first = roots(events)[0]
    assert "print('DRAFT')" in first["reasoning"] and "DRAFT" not in first["output"]
    assert first["provider"]["reasoning"] == "inline"
    replies = [i for i in trace_items(events, 30) if i["k"] == "reply"]
    assert "DRAFT" in replies[0]["think"] and replies[2]["think"] is None


def _history_run(small_room, out, policy):
    root = ScriptedModel(REPLIES)
    run_agent(small_room, out, root=root, sub=ScriptedModel(["x"], cycle=True),
              reasoning_history=policy)
    return root.messages


@pytest.mark.parametrize("policy", ["drop", "keep"])
def test_the_history_drops_or_keeps_earlier_reasoning(small_room, tmp_path, policy) -> None:
    sent = _history_run(small_room, tmp_path / "run", policy)
    earlier = [m["content"] for m in sent[2] if m["role"] == "assistant"]
    assert len(earlier) == 2
    if policy == "drop":
        assert earlier == ["Setting x.\n```python\nx = 1\nprint('REAL', x)\n```",
                           "```python\nprint('x is', x)\n```"]
    else:
        assert earlier == REPLIES[:2]
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["settings"]["reasoning_history"] == policy


@pytest.mark.parametrize("policy", ["drop", "keep"])
def test_resume_and_fork_rebuild_the_history_the_policy_gave(small_room, tmp_path,
                                                             policy) -> None:
    whole = _history_run(small_room, tmp_path / "run", policy)
    cut = shutil.copytree(tmp_path / "run", tmp_path / "cut")
    lines = (cut / "trajectory.jsonl").read_text().splitlines()
    keep = [i for i, x in enumerate(lines) if json.loads(x)["type"] == "cell"][1]
    (cut / "trajectory.jsonl").write_text("\n".join(lines[:keep + 1]) + "\n")
    (cut / "metrics.json").unlink(missing_ok=True)
    again = ScriptedModel(REPLIES[2:])
    assert resume_run(cut, root=again, sub=ScriptedModel(["x"], cycle=True)).status == \
        "submitted"
    assert again.messages[0] == whole[2]
    forked = ScriptedModel(REPLIES[2:])
    fork_run(tmp_path / "run", 2, tmp_path / "fork", root=forked,
             sub=ScriptedModel(["x"], cycle=True))
    assert forked.messages[0] == whole[2]


def test_a_reply_cut_inside_its_reasoning_is_a_turn_without_code(small_room, tmp_path) -> None:
    script = iter([Completion("", reasoning="```python\nprint('DRAFT')\n```\nthinking on and",
                              finish_reason="length"),
                   Completion("```python\nsubmit()\n```", reasoning="Short now.")])
    with ServedModelServer(lambda req: next(script)) as server:
        result = run_agent(small_room, tmp_path / "run", root=f"mock@{server.base_url}",
                           sub=ScriptedModel(["x"], cycle=True))
        told = server.requests[1]["messages"][-1]["content"]
    assert result.status == "submitted" and result.turns == 2
    assert "ended inside its reasoning" in told
    events = events_of(tmp_path / "run")
    assert not [e for e in events if e["type"] == "cell" and "DRAFT" in e["code"]]
    assert roots(events)[0]["provider"]["finish_reason"] == "length"


def test_a_sub_agents_answer_never_holds_its_reasoning(small_room, tmp_path) -> None:
    root = ScriptedModel(["```python\nprint(llm('Read it', docs=['D00002']))\nsubmit()\n```"])
    sub = ScriptedModel(["<think>maybe it is SECRET-DRAFT</think>\n\nChange of control."])
    run_agent(small_room, tmp_path / "run", root=root, sub=sub)
    events = events_of(tmp_path / "run")
    cell = next(e for e in events if e["type"] == "cell")
    assert "Change of control." in cell["output"] and "SECRET" not in cell["output"]
    call = next(e for e in events if e["type"] == "model_call" and e["role"] == "sub")
    assert "SECRET-DRAFT" in call["reasoning"]
