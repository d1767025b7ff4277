"""Forking a run after root turn J (``dealroom resume RUN --from-turn J --out NEW``): the REPL
state, the conversation and the budget are those of the original at that turn."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from support.cli import dealroom

from dealroom.errors import ConfigError, ModelError
from dealroom.harness import fork_run, resume_run, run_agent
from dealroom.harness.rlm import scripted_policy
from dealroom.models import ScriptedModel
from dealroom.testing import MockOpenAIServer

DUMP = '''```python
import json as _json
def _enc(x):
    if isinstance(x, SubcallError):
        return repr(x)
    raise TypeError(type(x).__name__)
_state = {}
for _k, _v in sorted(globals().items()):
    if not _k.startswith("_"):
        try:
            _state[_k] = _json.loads(_json.dumps(_v, default=_enc))
        except (TypeError, ValueError):
            pass
_state["__memo__"] = memo.render()
_state["__budget__"] = [budget.turns_used, budget.turns_left, budget.tokens_used]
print("STATE " + _json.dumps(_state, sort_keys=True))
```'''
SUBMIT = "```python\nsubmit()\n```"
J = 4  # outline, parser, plan, one wave of four calls (one of them fails)


def sub_reply(messages):
    """Findings for every document shown; the call that carries D00003 fails."""
    content = messages[-1]["content"]
    docs = re.findall(r"^=== (D\d{5}) \|", content, re.M)
    if "D00003" in docs:
        raise ModelError("provider down", model="sub")
    return "\n".join(f"ISSUE: clause in {d} needs consent | SEVERITY: high | AMOUNT: $1,000 | "
                     f"DOC: {d} | PAGE: 1" for d in docs) or "NONE"


def sub_model():
    return ScriptedModel([sub_reply], cycle=True, name="sub", context_window=8192)


def original_policy(messages):
    turn = sum(m["role"] == "assistant" for m in messages) + 1
    if turn <= J:
        return scripted_policy(messages)
    return DUMP if turn == J + 1 else SUBMIT


def events(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "trajectory.jsonl").read_text().splitlines()]


def state_at(run: Path, turn: int) -> dict:
    cell = next(e for e in events(run) if e["type"] == "cell" and e["turn"] == turn)
    return json.loads(cell["output"].split("STATE ", 1)[1])


@pytest.fixture(scope="module")
def original(small_room, tmp_path_factory):
    run = tmp_path_factory.mktemp("fork") / "original"
    root = ScriptedModel([original_policy], cycle=True, name="scripted")
    result = run_agent(small_room, run, root=root, sub=sub_model(), max_turns=10,
                       output_limit=1_000_000)
    # one of the four sub-calls fails at the provider: above 10%, so the run ends degraded
    assert result.status == "degraded" and "submit" in result.reason and result.turns == J + 2
    return run, root


def test_a_fork_rebuilds_the_repl_state_conversation_and_budget_of_turn_j(original, tmp_path):
    run, root = original
    policy = ScriptedModel([DUMP, SUBMIT], name="policy-b")
    sub = sub_model()
    result = fork_run(run, J, tmp_path / "fork", root=policy, sub=sub)

    # the failed sub-call was copied from the source: the fork's fixture, not its own fault
    assert result.status == "submitted" and result.turns == J + 2
    want = state_at(run, J + 1)
    assert {"findings", "failed", "wave_no", "calls", "results"} <= set(want)
    assert any("SubcallError" in str(r) for r in want["results"]), "the failed call is there"
    assert state_at(tmp_path / "fork", J + 1) == want
    assert policy.messages[0] == root.messages[J], "the new policy sees what the original saw"
    assert sub.calls == [], "turns 1..J were replayed from the records, failed call included"
    assert (tmp_path / "fork" / "output" / "memo.md").read_text() == \
        (run / "output" / "memo.md").read_text()


def test_a_fork_records_where_it_came_from_and_copies_the_prefix(original, tmp_path):
    run, _ = original
    fork_run(run, J, tmp_path / "fork", root=ScriptedModel([DUMP, SUBMIT], name="policy-b"),
             sub=sub_model())
    config = json.loads((tmp_path / "fork" / "config.json").read_text())
    source = events(run)
    cut = next(n for n, e in enumerate(source)
               if e["type"] == "model_call" and e["role"] == "root" and e["turn"] == J + 1)
    assert config["forked_from"] == {"run": str(run.resolve()), "turn": J, "events": cut,
                                     "root": "scripted"}
    assert config["root"] == "policy-b" and config["settings"]["max_turns"] == 10
    forked = events(tmp_path / "fork")
    assert forked[:cut] == source[:cut]
    assert forked[cut]["type"] == "resumed" and forked[cut]["previous_events"] == cut
    after = forked[cut + 1:]
    assert [e["turn"] for e in after if e["type"] == "cell"] == [J + 1, J + 2]
    assert [e["seq"] for e in forked] == list(range(len(forked)))


def test_max_turns_moves_the_budget_and_too_small_is_refused(original, tmp_path):
    run, _ = original
    policy = ScriptedModel([DUMP, "no code", "no code"], name="p")
    result = fork_run(run, J, tmp_path / "fork", root=policy, sub=sub_model(), max_turns=7)
    assert result.status == "max_turns" and result.turns == 7
    assert state_at(tmp_path / "fork", J + 1)["__budget__"][:2] == [J + 1, 2]
    assert "Turn 5 of 7." in policy.messages[0][-1]["content"]
    with pytest.raises(ConfigError, match="leaves no turn after turn 4"):
        fork_run(run, J, tmp_path / "x", root=policy, max_turns=4)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(("turn", "message"), [
    (0, "takes 1 to 6"), (7, "takes 1 to 6"), (6, r"ended the episode at turn 6 \(submitted\)")])
def test_turns_that_cannot_be_forked_are_refused(original, tmp_path, turn, message):
    run, _ = original
    with pytest.raises(ConfigError, match=message):
        fork_run(run, turn, tmp_path / "fork", root=ScriptedModel([SUBMIT]))
    assert not (tmp_path / "fork").exists()


def test_a_used_out_folder_and_a_repl_session_are_refused(original, small_room, tmp_path):
    run, _ = original
    with pytest.raises(ConfigError, match="already holds files"):
        fork_run(run, J, run, root=ScriptedModel([SUBMIT]))
    repl = tmp_path / "repl"
    repl.mkdir()
    (repl / "config.json").write_text(json.dumps({"harness": "repl", "room": str(small_room)}))
    with pytest.raises(ConfigError, match="REPL session"):
        fork_run(repl, 1, tmp_path / "fork", root=ScriptedModel([SUBMIT]))


def test_a_fork_killed_before_its_copy_is_refused_by_resume(original, tmp_path):
    run, _ = original
    fork_run(run, J, tmp_path / "fork", root=ScriptedModel([DUMP, SUBMIT]), sub=sub_model())
    broken = tmp_path / "broken"
    broken.mkdir()
    shutil.copy(tmp_path / "fork" / "config.json", broken / "config.json")
    with pytest.raises(ConfigError, match="stopped before it copied"):
        resume_run(broken, root=ScriptedModel([SUBMIT]), sub=sub_model())


def test_a_resumed_run_counts_what_the_killed_attempt_spent(original, tmp_path):
    """Without the carry a resumed run's budget started at zero tokens again."""
    run, _ = original
    cut = tmp_path / "cut"
    shutil.copytree(run, cut)
    lines = (cut / "trajectory.jsonl").read_text().splitlines()
    first = next(n for n, x in enumerate(lines)
                 if '"role": "root"' in x and f'"turn": {J + 1},' in x)
    (cut / "trajectory.jsonl").write_text("\n".join(lines[:first]) + "\n")
    (cut / "metrics.json").unlink()
    resume_run(cut, root=ScriptedModel([DUMP, SUBMIT]), sub=sub_model())
    assert state_at(cut, J + 1)["__budget__"] == state_at(run, J + 1)["__budget__"]


def test_toolloop_runs_fork_too(small_room, tmp_path):
    write = '```tool\n{"name": "write", "arguments": {"text": "# Memo\\n\\nDraft [D00001]"}}\n```'
    first = ScriptedModel(['```tool\n{"name": "list", "arguments": {}}\n```', write,
                           '```tool\n{"name": "read", "arguments": {"doc": "D00002"}}\n```',
                           "done"], name="a")
    run_agent(small_room, tmp_path / "run", harness="toolloop", root=first)
    other = ScriptedModel(["stop here"], name="b")
    result = fork_run(tmp_path / "run", 2, tmp_path / "fork", root=other)
    assert result.status == "finished" and result.turns == 3
    assert other.messages[0] == first.messages[2]
    assert (tmp_path / "fork" / "output" / "memo.md").read_text() == "# Memo\n\nDraft [D00001]"


def test_cli_resume_from_turn(original, tmp_path):
    run, _ = original
    cmd = ["resume", str(run)]
    with MockOpenAIServer(lambda request: "NONE") as server:
        done = dealroom(*cmd, "--from-turn", str(J), "--out", str(tmp_path / "fork"), "--root",
                        "scripted", "--sub", f"mock@{server.base_url}")
        assert done.returncode == 0, done.stderr
        assert not any("D0000" in json.dumps(r) for r in server.requests), "nothing re-read"
    assert json.loads((tmp_path / "fork" / "config.json").read_text())["forked_from"]["turn"] == J
    lonely = dealroom(*cmd, "--from-turn", "2")
    assert lonely.returncode == 1 and "--from-turn needs --out" in lonely.stderr
    stray = dealroom(*cmd, "--out", str(tmp_path / "x"))
    assert stray.returncode == 1 and "--out and --root go with --from-turn" in stray.stderr
