"""The root's history kept inside its window: counted in the root model's own tokens,
compacted before it passes ``compact_at``, a length refusal compacts and sends again, and
resume, fork and export reproduce what the model saw."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from dealroom.harness import resume_run, run_agent
from dealroom.harness.rlm._context import COMPACT_SYSTEM
from dealroom.models import ScriptedModel
from dealroom.report._trace import trace_items
from dealroom.runs import RunFolder, agent_segments
from dealroom.testing import ServedModelServer

TURNS = 40
LINE = "Clause {n}: USD 1,234,567.89 due 2031-06-30 under s. 14.2(b)(iii); ref #A-{n}-77.\n"


def policy(request: dict) -> str:
    """A root that sets a variable, prints near the output limit every turn, and checks the
    variable at the end; a compaction request gets a summary."""
    messages = request["messages"]
    if messages[0]["content"] == COMPACT_SYSTEM:
        turns = re.search(r"turns (\d+) to (\d+)", messages[1]["content"]).groups()
        return f"Turns {turns[0]}-{turns[1]}: printed clause tables; x holds 41."
    turns = re.findall(r"Turn (\d+)", messages[-1]["content"])
    if not turns:
        return "pong"
    turn = int(turns[-1])
    if turn == 1:
        return "```python\nx = 41\nprint('set x')\n```"
    if turn == TURNS:
        return ("```python\nprint('x is', x, 'turns in history', len(history), "
                "history[0].code.strip())\nsubmit()\n```")
    return f"Turn {turn}.\n```python\nprint(''.join({LINE!r}.format(n=i) for i in range(60)))\n```"


@pytest.fixture(scope="module")
def bpe():
    pytest.importorskip("transformers")
    from dealroom.testing import smollm2_count

    return smollm2_count()


def _run(room, out, server, **settings):
    return run_agent(room, out, root=f"qwen@{server.base_url}#context_window=16000",
                     sub=ScriptedModel(["x"], cycle=True), max_turns=TURNS, output_limit=8000,
                     **settings)


def events_of(run):
    return RunFolder.open(run).events()


@pytest.mark.parametrize("tokenize", [True, False])
def test_a_long_episode_over_a_16k_window_compacts_and_keeps_its_repl(
        small_room, tmp_path, bpe, tokenize) -> None:
    with ServedModelServer(policy, model="qwen", context_window=16000, count=bpe,
                           tokenize=tokenize) as server:
        result = _run(small_room, tmp_path / "run", server)
        refusals = server.refusals
        sent = [server.prompt_tokens(r["messages"]) for r in server.requests]
    assert result.status == "submitted" and result.turns == TURNS
    assert refusals <= 2
    events = events_of(tmp_path / "run")
    cells = [e for e in events if e["type"] == "cell"]
    assert len(cells) == TURNS
    assert "x is 41 turns in history 39 x = 41" in cells[-1]["output"]
    compactions = [e for e in events if e["type"] == "compaction"]
    assert compactions and all(c["summary"] for c in compactions)
    shown = [i for i in trace_items(events, TURNS) if i["k"] == "compaction"]
    assert [i["summary"] for i in shown] == [c["summary"] for c in compactions]
    assert all(c["usage"]["input_tokens"] > 0 for c in compactions)
    assert sum(bpe(c["output"]) for c in cells) > 4 * 16000  # about 4 windows of history
    assert max(sent) <= 16000
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    total = sum(e["usage"]["input_tokens"] for e in events
                if e["type"] in ("model_call", "compaction") and e["role"] == "root")
    assert metrics["usage"]["by_role"]["root"]["input_tokens"] == total


def test_without_compaction_the_endpoint_refuses_and_the_run_ends(small_room, tmp_path,
                                                                   bpe) -> None:
    with ServedModelServer(policy, model="qwen", context_window=16000, count=bpe) as server:
        result = _run(small_room, tmp_path / "run", server, compact_at=0)
    assert result.status == "error" and result.turns < TURNS
    failed = [e for e in events_of(tmp_path / "run") if e["type"] == "model_call" and e["error"]]
    assert failed[-1]["provider"]["kind"] == "context_length"


def test_a_length_refusal_compacts_and_sends_again(small_room, tmp_path) -> None:
    from dealroom.room import count_tokens

    # the server counts twice what words-v1 does and says nothing of it (no /tokenize, no
    # usage) until it refuses
    with ServedModelServer(policy, model="qwen", context_window=16000, tokenize=False,
                           report_usage=False, count=lambda t: 2 * count_tokens(t)) as server:
        result = _run(small_room, tmp_path / "run", server, compact_at=0.95)
        refusals = server.refusals
    assert result.status == "submitted" and result.turns == TURNS
    assert 1 <= refusals <= 2
    reasons = [e["reason"] for e in events_of(tmp_path / "run") if e["type"] == "compaction"]
    assert any(r.startswith("refused") for r in reasons)


def test_resume_and_export_reproduce_the_compaction(small_room, tmp_path, bpe,
                                                    tiny_model_dir) -> None:
    from dealroom.train import export_sft

    with ServedModelServer(policy, model="qwen", context_window=16000, count=bpe) as server:
        _run(small_room, tmp_path / "run", server)
        whole = events_of(tmp_path / "run")
        first = next(e for e in whole if e["type"] == "compaction")
        cut = shutil.copytree(tmp_path / "run", tmp_path / "cut")
        lines = (cut / "trajectory.jsonl").read_text().splitlines()
        after = next(i for i, x in enumerate(lines) if json.loads(x)["type"] == "cell"
                     and json.loads(x)["turn"] == first["turn"] + 2)
        (cut / "trajectory.jsonl").write_text("\n".join(lines[:after + 1]) + "\n")
        (cut / "metrics.json").unlink()
        before = len(server.requests)
        assert resume_run(cut, sub=ScriptedModel(["x"], cycle=True)).status == "submitted"
        resent = server.requests[before:]
    calls_after = [e for e in whole[after + 1:] if e["type"] in ("model_call", "compaction")]
    assert len(resent) == len(calls_after)  # the replayed turns asked nothing again
    resumed = events_of(cut)
    assert [e["summary"] for e in resumed if e["type"] == "compaction"] == \
        [e["summary"] for e in whole if e["type"] == "compaction"]
    segments = agent_segments(whole)
    assert len(segments) == 1 + len([e for e in whole if e["type"] == "compaction"])
    calls = [e for e in whole if e["type"] == "model_call" and e["role"] == "root"]
    assert sum(len(s.calls) for s in segments) == len(calls)
    (tmp_path / "runs").mkdir()
    shutil.copytree(tmp_path / "run", tmp_path / "runs" / "r1")
    (tmp_path / "runs" / "r1" / "scores.json").write_text(json.dumps(
        {"pass_rate": 1.0, "n_errors": 0, "n_criteria": 1}))
    result = export_sft([tmp_path / "runs"], tmp_path / "DS", tokenizer=f"hf:{tiny_model_dir}",
                        max_length=200_000)
    assert result.rows == len(segments)
    rows = [json.loads(x) for x in (tmp_path / "DS" / "tokenized.jsonl").read_text()
            .splitlines()]
    assert [t for r in rows for t in r["turns"]] == list(range(len(calls)))


@pytest.mark.slow
def test_the_embedded_local_model_as_root_keeps_going_through_compaction(small_room,
                                                                        tmp_path) -> None:
    """SmolLM2-135M as root (4,096-token window): its answers are poor, but 20 turns run,
    compacting as its history fills the window (its short replies fill it slowly: compaction
    starts at half of it here), with no crash."""
    result = run_agent(small_room, tmp_path / "run", root="local",
                       sub=ScriptedModel(["x"], cycle=True), max_turns=20, max_errors=0,
                       output_limit=4000, compact_at=0.5)
    assert result.status in ("max_turns", "submitted") and result.status != "error"
    events = events_of(tmp_path / "run")
    calls = [e for e in events if e["type"] == "model_call" and e["role"] == "root"]
    assert all(e["error"] is None for e in calls)
    if result.status == "max_turns":
        assert result.turns == 20 and [e for e in events if e["type"] == "compaction"]
