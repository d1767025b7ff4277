"""Both harnesses against replies as served models send them (issue 36): a reply cut inside a
block the chat template opened never runs code and is a turn that tells the model why (RLM
and tool loop, against llama-cpp-python's real server and stand-ins); every call carries a
reply cap, recorded with it."""

from __future__ import annotations

import asyncio

import pytest
from support.llama import DRAFT, draft_grammar

from dealroom.harness import run_agent_async
from dealroom.models import ScriptedModel, open_model, reply_cap
from dealroom.runs import RunFolder
from dealroom.testing import Completion, ServedModelServer

SUB = ScriptedModel(["x"], cycle=True)


def _run(room, out, spec, **options):
    """run_agent with a client of ``spec`` opened (and closed) on the run's event loop."""
    async def go():
        client = open_model(spec)
        try:
            return await run_agent_async(room, out, root=client, **options)
        finally:
            await client.aclose()

    return asyncio.run(go())


def _roots(run):
    return [e for e in RunFolder.open(run).events()
            if e["type"] == "model_call" and e["role"] == "root"]


def _cells(run):
    return [e for e in RunFolder.open(run).events() if e["type"] == "cell"]


@pytest.mark.slow  # two root calls of ~800 prompt tokens: 30 s to minutes on a busy CPU
def test_a_real_reply_cut_inside_the_template_opened_block_never_runs_its_draft(
        small_room, tmp_path, llama_think_server) -> None:
    spec = llama_think_server.spec(draft_grammar(), options="reasoning=open",
                                   max_output_tokens=60)
    result = _run(small_room, tmp_path / "run", spec, sub=SUB, max_turns=2)
    assert result.status == "max_turns" and result.turns == 2
    assert not any("DRAFT_IN_THINK_RAN" in (c.get("output") or "") for c in _cells(tmp_path /
                                                                                  "run"))
    calls = _roots(tmp_path / "run")
    for call in calls:
        assert call["output"] == "" and DRAFT in call["reasoning"]
        assert call["provider"]["reasoning"] == "unclosed"
        assert call["provider"]["finish_reason"] == "length"
        assert call["provider"]["max_tokens"] == 60
    told = calls[1]["input"]["messages"][-1]["content"]
    assert "ended inside its reasoning" in told


def test_every_root_call_carries_the_reply_cap_the_window_reserves(small_room,
                                                                   tmp_path) -> None:
    replies = iter(["```python\nprint(1)\n```", "```python\nsubmit()\n```"])
    with ServedModelServer(lambda req: next(replies), context_window=8192,
                           record=True) as server:
        spec = server.spec.replace(context_window=8192)
        result = _run(small_room, tmp_path / "run", spec, sub=SUB)
        sent = [r.get("max_tokens") for r in server.requests]
    assert result.status == "submitted"
    assert sent == [reply_cap(8192)] * 2 == [2048] * 2
    assert [c["provider"]["max_tokens"] for c in _roots(tmp_path / "run")] == [2048] * 2


def test_the_spec_changes_the_reply_cap(small_room, tmp_path) -> None:
    with ServedModelServer(lambda req: "```python\nsubmit()\n```", record=True) as server:
        _run(small_room, tmp_path / "run", server.spec.replace(max_output_tokens=300), sub=SUB)
        assert [r["max_tokens"] for r in server.requests] == [300]


def test_a_real_call_without_a_cap_is_cut_at_the_default_one(llama_server) -> None:
    import asyncio

    spec = llama_server.spec(draft_grammar(), context_window=256, stream=False)

    async def go():
        client = open_model(spec)
        try:
            return await client.chat([{"role": "user", "content": "hi"}], temperature=0.0)
        finally:
            await client.aclose()

    result = asyncio.run(go())
    assert result.finish_reason == "length" and not result.usage_estimated
    assert result.usage.output_tokens == reply_cap(256) == 64
    assert result.record()["max_tokens"] == 64


# -- the tool loop --------------------------------------------------------------------------

TOOL = '```tool\n{"name": "list", "arguments": {}}\n```'


@pytest.mark.parametrize("shape", ["field", "closing"])
def test_the_tool_loop_goes_on_after_a_reply_cut_inside_its_reasoning(small_room, tmp_path,
                                                                      shape) -> None:
    replies = iter([Completion("", reasoning=f"maybe\n{TOOL}\nthen", finish_reason="length"),
                    Completion("Done: no tool needed.", reasoning="short")])
    with ServedModelServer(lambda req: next(replies), reasoning=shape, record=True) as server:
        spec = server.spec.replace(reasoning="open") if shape == "closing" else server.spec
        result = _run(small_room, tmp_path / "run", spec, harness="toolloop", sub=None,
                      max_turns=5)
        told = server.requests[1]["messages"][-1]["content"]
    assert result.status == "finished" and result.turns == 2
    assert "ended inside its reasoning" in told
    events = RunFolder.open(tmp_path / "run").events()
    assert not [e for e in events if e["type"] == "tool"]  # the drafted call never ran


@pytest.mark.slow  # two calls of a few hundred prompt tokens
def test_the_tool_loop_on_the_real_re_templated_server_is_not_ended_by_a_cut(
        small_room, tmp_path, llama_think_server) -> None:
    spec = llama_think_server.spec(draft_grammar(), options="reasoning=open",
                                   max_output_tokens=60)
    result = _run(small_room, tmp_path / "run", spec, harness="toolloop", sub=None,
                  max_turns=2)
    assert result.status == "max_turns" and result.turns == 2
    calls = _roots(tmp_path / "run")
    assert [c["provider"]["reasoning"] for c in calls] == ["unclosed"] * 2


# -- an over-long prompt, as llama-cpp-python's server answers it -------------------------------

class EmptyStreamWhenTooLong(ServedModelServer):
    """Answers a streamed request whose prompt passes the window with HTTP 200 and a stream
    that breaks off empty, and the same request unstreamed with HTTP 400
    ``context_length_exceeded``, as llama-cpp-python's server does (a reply cap that does not
    fit beside the prompt is lowered, silently)."""

    def _refusal(self, body):
        refused = super()._refusal({**body, "max_tokens": 0})  # a cap is lowered to fit
        if refused is not None and refused.status == 400 and body.get("stream"):
            from aiohttp import web

            return web.Response(status=200, body=b"", content_type="text/event-stream")
        return refused


def test_an_over_long_root_prompt_in_an_empty_stream_compacts_and_is_not_resent(
        small_room, tmp_path) -> None:
    turns = iter(["```python\nprint('word ' * 1000)\n```"] * 2  # turn 3 passes the window
                 + ["```python\nsubmit()\n```"])

    def reply(body):
        if body["messages"][0]["content"].startswith("You condense"):
            return "Turn 1 printed many words."
        return next(turns)

    with EmptyStreamWhenTooLong(reply, context_window=2600, reasoning="field",
                                record=True) as server:
        result = _run(small_room, tmp_path / "run", server.spec, sub=SUB, output_limit=20_000)
        streamed = [bool(r.get("stream")) for r in server.requests]
    assert result.status == "submitted"
    events = RunFolder.open(tmp_path / "run").events()
    compactions = [e for e in events if e["type"] == "compaction"]
    assert compactions and compactions[0]["reason"].startswith("refused")
    assert streamed.count(False) <= 3  # each empty stream asked again once, unstreamed
    assert len(server.requests) <= 8  # never the same prompt five times over


def test_a_resumed_tool_loop_replays_a_cut_reply_as_a_turn(small_room, tmp_path) -> None:
    from dealroom.harness import resume_run

    replies = iter([Completion("", reasoning=f"maybe\n{TOOL}", finish_reason="length"),
                    Completion(TOOL), Completion("Done.")])
    with ServedModelServer(lambda req: next(replies), reasoning="field") as server:
        whole = _run(small_room, tmp_path / "whole", server.spec, harness="toolloop",
                     sub=None, max_turns=5)
    assert whole.status == "finished" and whole.turns == 3
    lines = (tmp_path / "whole" / "trajectory.jsonl").read_text().splitlines()
    first = next(i for i, x in enumerate(lines) if '"model_call"' in x)
    run = tmp_path / "cut"
    run.mkdir()
    (run / "config.json").write_text((tmp_path / "whole" / "config.json").read_text())
    (run / "trajectory.jsonl").write_text("\n".join(lines[:first + 1]) + "\n")
    rest = ScriptedModel([TOOL, "Done."])
    result = resume_run(run, root=rest, allow_model_change=True)  # to watch its calls
    assert result.status == "finished" and result.turns == 3 and len(rest.calls) == 2
    assert "ended inside its reasoning" in rest.calls[0].messages[-1]["content"]
