"""A sub-agent slower than the cell time-out: waiting for sub-calls is bounded by the run's
budget, not the cell's clock, so every wave's answers are used; a call sent again after its
cell was cut is answered from the records; the memo's account is true."""

from __future__ import annotations

import json

from dealroom.harness import run_agent
from dealroom.models import ScriptedModel
from dealroom.runs import RunFolder
from dealroom.testing import MockOpenAIServer


def test_a_sub_agent_slower_than_the_cell_timeout_completes_every_wave(generated_room,
                                                                       tmp_path) -> None:
    with MockOpenAIServer("ISSUE: none | SEVERITY: low | PAGE: 1", latency=3.0) as server:
        result = run_agent(generated_room, tmp_path / "run", root="scripted",
                           sub=f"slow@{server.base_url}#context_window=8000,hedge=0",
                           cell_timeout=1, max_turns=9, concurrency=10)
    events = RunFolder.open(tmp_path / "run").events()
    waves = [e for e in events if e["type"] == "wave"]
    cells = [e for e in events if e["type"] == "cell"]
    assert result.status == "submitted"
    assert len(waves) >= 3 and all(w["failed"] == 0 for w in waves)
    assert max(w["seconds"] for w in waves) > 4  # past the old ceiling of 4 x the time-out
    assert not any(c["timed_out"] for c in cells)
    memo = (tmp_path / "run" / "output" / "memo.md").read_text()
    assert "never sent" not in memo and "We reviewed all 20 documents" in memo
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["behaviour"]["sub_calls_failed"] == 0


def test_a_cell_that_sleeps_while_calls_are_out_is_still_cut(small_room, tmp_path) -> None:
    root = ScriptedModel([
        "```python\nimport threading, time\nt = threading.Thread(target=time.sleep, args=(60,))"
        "\nt.start()\nprint(llm('read', docs=['D00002']))\nt.join()\n```",
        "```python\nsubmit()\n```",
    ])
    result = run_agent(small_room, tmp_path / "run", root=root,
                       sub=ScriptedModel(["answer"], cycle=True, delay=2.0), cell_timeout=1)
    cell = next(e for e in RunFolder.open(tmp_path / "run").events() if e["type"] == "cell")
    assert result.status == "submitted" and cell["timed_out"]


def test_a_call_sent_again_after_its_cell_was_cut_is_answered_from_the_records(
        small_room, tmp_path) -> None:
    sub = ScriptedModel(["slow answer"], cycle=True, delay=0.5)
    cut = ("```python\nimport threading, time\nr = llm_batch([{'prompt': 'read', 'docs': "
           "['D00002']}])\nwhile True:\n    pass\n```")
    again = "```python\nprint(llm_batch([{'prompt': 'read', 'docs': ['D00002']}]))\n```"
    root = ScriptedModel([cut, again, "```python\nsubmit()\n```"])
    run_agent(small_room, tmp_path / "run", root=root, sub=sub, cell_timeout=2)
    events = RunFolder.open(tmp_path / "run").events()
    cells = [e for e in events if e["type"] == "cell"]
    assert cells[0]["timed_out"] and "slow answer" in cells[1]["output"]
    assert len(sub.calls) == 1  # the second cell's call was answered from the records
