"""``dealroom ask``: follow-up questions on a finished run, answered in the REPL the run left."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dealroom.errors import ConfigError, InputError
from dealroom.harness import ask_run, run_agent
from dealroom.testing import MockOpenAIServer, ScriptedModel

ANSWER_CELL = """```python
print(len(findings), len(calls), len(answers))
submit(f"{len(findings)} findings over {len(calls)} calls after {len(answers)} asks; "
       "see [D00001 p.1] and [D99999 p.2]")
```"""


@pytest.fixture(scope="module")
def finished(generated_room, tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("asked") / "run"
    result = run_agent(generated_room, run, root="scripted", sub="oracle")
    assert result.status == "submitted"
    return run


def ask_cli(run: Path, question: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dealroom", "ask", str(run), question, *extra],
                          capture_output=True, text=True, timeout=300)


def test_a_question_is_answered_in_a_new_process_from_the_runs_variables(finished, tmp_path):
    run = shutil.copytree(finished, tmp_path / "run")
    memo = (run / "output" / "memo.md").read_bytes()
    trajectory = (run / "trajectory.jsonl").read_bytes()
    with MockOpenAIServer(ANSWER_CELL) as root:
        first = ask_cli(run, "Which contracts need consent?", "--root", f"mock@{root.base_url}",
                        "--json")
        second = ask_cli(run, "And who signs?", "--root", f"mock@{root.base_url}", "--json")
    assert first.returncode == 0, first.stderr
    answer = json.loads(first.stdout)
    findings = sum(1 for line in memo.decode().splitlines() if "[D0" in line)
    assert answer["number"] == 1 and answer["status"] == "submitted" and answer["turns"] == 1
    assert answer["question"] == "Which contracts need consent?"
    assert answer["answer"].startswith(f"{answer['answer'].split()[0]} findings over ")
    assert int(answer["answer"].split()[0]) > 0 and findings > 0  # the run's `findings` list
    assert "after 0 asks" in answer["answer"]
    assert [c["ok"] for c in answer["citations"]] == [True, False]
    assert answer["citations"][1]["why"] == "no such document in the room"
    assert json.loads((run / "asks" / "1" / "answer.json").read_text()) == answer
    assert json.loads(second.stdout)["number"] == 2
    assert "after 1 asks" in json.loads(second.stdout)["answer"]  # `answers` holds ask 1
    # the run itself is unchanged; each ask has its own records with the question in them
    assert (run / "output" / "memo.md").read_bytes() == memo
    assert (run / "trajectory.jsonl").read_bytes() == trajectory
    asked = [json.loads(x) for x in (run / "asks" / "1" / "trajectory.jsonl").read_text()
             .splitlines()]
    config = json.loads((run / "asks" / "1" / "config.json").read_text())
    segment = asked[config["forked_from"]["events"]:]
    calls = [e for e in segment if e["type"] == "model_call"]
    assert [c["role"] for c in calls] == ["root"]  # no sub-call repeated, one root turn
    assert "Which contracts need consent?" in calls[0]["input"]["messages"][-1]["content"]
    assert config["ask"] == {"number": 1, "question": "Which contracts need consent?",
                             "after_turn": config["forked_from"]["turn"]}


def test_a_changed_room_is_refused(finished, generated_room, tmp_path):
    room = shutil.copytree(generated_room, tmp_path / "room")
    manifest = json.loads((room / "room.json").read_text())
    manifest["documents"][0]["sha256"] = "0" * 64
    (room / "room.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="its documents changed"):
        ask_run(finished, "Anything?", root=ScriptedModel(["x"]), room=room)
    assert not (finished / "asks").exists()


def test_an_unfinished_run_is_refused(finished, tmp_path):
    run = shutil.copytree(finished, tmp_path / "run")
    lines = (run / "trajectory.jsonl").read_text().splitlines()
    (run / "trajectory.jsonl").write_text("\n".join(lines[:-3]) + "\n")
    with pytest.raises(ConfigError, match="has not finished: resume it"):
        ask_run(run, "Anything?", root=ScriptedModel(["x"]))


def test_a_replay_that_diverges_says_at_which_turn(small_room, tmp_path):
    tools = tmp_path / "tools.py"
    tools.write_text("def check(x: int) -> int:\n    \"\"\"Doubles.\"\"\"\n    return 2 * x\n")
    run = tmp_path / "run"
    cells = ["```python\nv = check(2)\nprint(v)\n```", "```python\nsubmit()\n```"]
    run_agent(small_room, run, root=ScriptedModel(cells), sub=ScriptedModel(["x"]),
              tools=[str(tools)])
    (run / "tools" / "sandbox" / "tools.py").write_text(
        "def check(x: int) -> int:\n    \"\"\"Now fails.\"\"\"\n    raise ValueError(x)\n")
    with pytest.raises(Exception, match="the replay diverges at turn 1"):
        ask_run(run, "What is v?", root=ScriptedModel(["```python\nsubmit(str(v))\n```"]),
                sub=ScriptedModel(["x"]))


def test_revise_makes_the_answers_memo_the_runs_newest_version(small_room, tmp_path):
    cells = ["```python\nmemo.section('Findings', '- Acme may terminate [D00002 p.2]')\n```",
             "```python\nsubmit()\n```"]
    run = tmp_path / "run"
    run_agent(small_room, run, root=ScriptedModel(cells), sub=ScriptedModel(["x"]))
    revising = ScriptedModel(["```python\nmemo.section('Leases', '- Lease ends 2027 "
                              "[D00001 p.1]')\nsubmit('Added the lease [D00001 p.1]')\n```"])
    result = ask_run(run, "Add the lease", root=revising, sub=ScriptedModel(["x"]), revise=True)
    assert result.revised and result.answer == "Added the lease [D00001 p.1]"
    memo = (run / "output" / "memo.md").read_text()
    assert "Lease ends 2027" in memo and "Acme may terminate" in memo
    history = [json.loads(x) for x in (run / "memo_history.jsonl").read_text().splitlines()]
    assert history[-1]["turn"] == 3


def test_the_viewer_shows_the_asks_under_the_run_each_with_its_turns(small_room, tmp_path):
    from dealroom.report import write_trace

    run = tmp_path / "run"
    run_agent(small_room, run, root=ScriptedModel(["```python\nx = 41\nsubmit()\n```"]),
              sub=ScriptedModel(["x"]))
    ask_run(run, "What is x + 1?", root=ScriptedModel(["```python\nsubmit(str(x + 1))\n```"]),
            sub=ScriptedModel(["x"]))
    index = write_trace(run, tmp_path / "view")
    meta = (index.parent / "data" / "meta.js").read_text()
    assert '"question":"What is x + 1?"' in meta and '"answer":"42"' in meta
    asked = (index.parent / "asks" / "1" / "data" / "meta.js").read_text()
    assert '"ask":{"number":1,"question":"What is x + 1?","after_turn":1}' in asked
    assert (index.parent / "asks" / "1" / "index.html").is_file()


def test_a_run_with_named_subs_is_asked_with_the_same_names(generated_room, tmp_path):
    run = tmp_path / "run"
    run_agent(generated_room, run, root="scripted", sub={"fast": "oracle", "strong": "oracle"},
              max_turns=3)
    cell = ("```python\nr = llm('Which contracts need consent?', docs=['D00001'], "
            "model='strong')\nsubmit(f'strong said {len(r)} chars')\n```")
    result = ask_run(run, "Ask the strong one.", root=ScriptedModel([cell]))
    assert result.answer is not None and result.answer.startswith("strong said "), result
    config = json.loads((run / "asks" / "1" / "config.json").read_text())
    assert config["subs"] == json.loads((run / "config.json").read_text())["subs"]
