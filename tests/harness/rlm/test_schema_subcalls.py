"""Schema-typed answers from sub-calls (issue 40, item 3): ``llm(..., schema=S)`` and
``llm_batch`` items with ``schema`` return the validated value, from a loopback endpoint that
honours ``response_format`` and from one that answers in prose around JSON; an answer that
does not match is asked again once, then fails that item alone."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from test_rlm_engine import make_ctx

from dealroom.harness import run_agent
from dealroom.harness._common._budget import BudgetTracker
from dealroom.harness.rlm._engine import Episode
from dealroom.harness.rlm._replay import Replay
from dealroom.harness.rlm._scripted import scripted_root
from dealroom.models import ScriptedModel, open_model
from dealroom.runs import RunFolder
from dealroom.testing import MockOpenAIServer

SCHEMA = {"type": "object", "properties": {"party": {"type": "string"},
                                           "amount": {"type": "integer"}},
          "required": ["party", "amount"]}
GOOD = '{"party": "Acme", "amount": 2500000}'
ASK = ("```python\nS = " + repr(SCHEMA) + "\n"
       "r = llm('Who is owed what?', text='Acme is owed $2,500,000.', schema=S)\n"
       "print('GOT', isinstance(r, dict), r['party'], r['amount'], r.unsent)\n```")
SUBMIT = "```python\nsubmit()\n```"


def user_text(request: dict) -> str:
    return request["messages"][-1]["content"]


def run(tmp_path: Path, reply, cells: list[str], replay: Replay | None = None, **spec):
    """An episode of ``cells`` whose sub-agent is a loopback server answering ``reply``:
    (what the root was shown after its first cell, the run's events, the requests)."""
    root = ScriptedModel([*cells, SUBMIT])
    with MockOpenAIServer(reply) as srv:
        async def go():
            async with open_model(srv.spec.replace(**spec) if spec else srv.spec) as sub:
                ctx = make_ctx(tmp_path, root, sub, replay=replay)
                await Episode(ctx, agent="root", depth=0,
                              tracker=BudgetTracker(ctx.settings.budget())).run()
                ctx.events.recorder.close()
                return ctx.events.recorder.path

        path = asyncio.run(go())
        requests = list(srv.requests)
    subs = [e for e in RunFolder.open(path).events()
            if e["type"] == "model_call" and e["role"] == "sub"]
    return root.messages[1][-1]["content"], subs, requests


def test_an_endpoint_that_honours_response_format_is_asked_with_it(tmp_path):
    def honours(request):
        return GOOD if request.get("response_format") else "Acme is owed 2.5 million."

    shown, subs, requests = run(tmp_path, honours, [ASK], schema_via="response_format")
    assert "GOT True Acme 2500000 []" in shown
    form = requests[0]["response_format"]
    assert form["type"] == "json_schema" and form["json_schema"]["schema"] == SCHEMA
    assert "JSON Schema" not in user_text(requests[0]) and len(requests) == 1
    call = subs[0]
    assert call["output"] == GOOD and call["parsed"] == json.loads(GOOD)
    assert call["error"] is None and call["input"]["schema"] == SCHEMA
    assert call["provider"]["schema"] == {"via": "response_format", "rejected": []}


@pytest.mark.parametrize("answer", [
    f"Sure. Here it is:\n```json\n{GOOD}\n```\nAnything else?",
    f'<think>Maybe {{"party": 1}}?</think>The answer is {GOOD}, as asked.',
])
def test_an_endpoint_without_it_gets_the_schema_in_the_prompt_and_prose_is_read(tmp_path,
                                                                                 answer):
    def prose(request):
        assert "response_format" not in request
        return answer if "JSON Schema" in user_text(request) else "Acme, 2.5 million."

    shown, subs, requests = run(tmp_path, prose, [ASK])  # a mock server: not one that honours
    assert "GOT True Acme 2500000 []" in shown and len(requests) == 1
    assert json.dumps(SCHEMA) in user_text(requests[0])
    assert subs[0]["parsed"] == json.loads(GOOD) and subs[0]["provider"]["schema"]["via"] == \
        "prompt"


def test_an_answer_that_does_not_match_is_asked_again_once_with_the_reason(tmp_path):
    from dealroom.models import Prices

    answers = iter(['{"party": "Acme", "amount": "2.5m"}', GOOD])
    prices = Prices(input=2, output=8)
    shown, subs, requests = run(tmp_path, lambda request: next(answers), [ASK],
                                schema_via="response_format", prices=prices)
    assert "GOT True Acme 2500000" in shown and len(requests) == 2
    assert "'2.5m' is not of type 'integer'" in user_text(requests[1])
    assert requests[1]["response_format"] == requests[0]["response_format"]
    call = subs[0]
    assert call["output"] == GOOD and call["parsed"]["amount"] == 2500000
    assert call["usage"]["calls"] == 2  # both attempts counted
    assert call["usage"]["input_tokens"] > 2 * len(user_text(requests[0]).split()) // 2
    usage = call["usage"]  # priced on both attempts' tokens, the first's answer included
    assert usage["cost_usd"] == pytest.approx(prices.cost(usage["input_tokens"], 0,
                                                          usage["output_tokens"]))
    _, [once], _ = run(tmp_path / "once", lambda request: GOOD, [ASK],
                       schema_via="response_format", prices=prices)
    assert once["usage"]["calls"] == 1
    for key in ("input_tokens", "output_tokens", "cost_usd"):  # the re-ask is the larger
        assert usage[key] > 2 * once["usage"][key]
    [rejected] = call["provider"]["schema"]["rejected"]
    assert rejected["output"] == '{"party": "Acme", "amount": "2.5m"}'


def test_an_answer_that_never_matches_fails_its_item_alone(tmp_path):
    def reply(request):
        return "I cannot say." if "second item" in user_text(request) else GOOD

    batch = ("```python\nS = " + repr(SCHEMA) + "\n"
             "r = llm_batch([{'prompt': p, 'text': 'Acme.', 'schema': S} for p in "
             "('first item', 'second item', 'third item')])\n"
             "print('GOT', [type(x).__name__ for x in r], r[1].error)\n```")
    shown, subs, requests = run(tmp_path, reply, [batch])
    assert "GOT ['SubDict', 'SubcallError', 'SubDict']" in shown
    assert "answer does not match the schema after asking again" in shown
    assert len(requests) == 4  # the failing item asked twice, no more
    failed = [e for e in subs if e["error"]]
    assert len(failed) == 1 and failed[0]["output"] == "I cannot say."
    assert failed[0]["parsed"] is None and failed[0]["usage"]["calls"] == 2


def test_a_pydantic_model_is_converted_in_the_repl(tmp_path):
    cell = ("```python\nfrom pydantic import BaseModel\n"
            "class Owed(BaseModel):\n    party: str\n    amount: int\n"
            "r = llm('Who is owed what?', text='Acme.', schema=Owed)\n"
            "print('GOT', Owed(**r))\n```")
    shown, subs, requests = run(tmp_path, lambda request: GOOD, [cell],
                                schema_via="response_format")
    assert "GOT party='Acme' amount=2500000" in shown
    assert requests[0]["response_format"]["json_schema"]["name"] == "Owed"
    assert subs[0]["input"]["schema"]["title"] == "Owed"


def test_a_bad_schema_is_a_bad_call_and_nothing_is_sent(tmp_path):
    cell = ("```python\nr = llm_batch([{'prompt': 'x', 'schema': {'type': 'nonsense'}}])\n"
            "print('GOT', r[0].error)\n```")
    shown, _, requests = run(tmp_path, lambda request: GOOD, [cell])
    assert "GOT bad call: schema is not a valid JSON Schema" in shown and not requests


def test_a_replayed_schema_call_gives_the_value_without_asking(tmp_path):
    _, first, _ = run(tmp_path / "a", lambda request: GOOD, [ASK],
                      schema_via="response_format")
    sub = ScriptedModel([])  # any call would fail
    root = ScriptedModel([ASK, SUBMIT])
    ctx = make_ctx(tmp_path / "b", root, sub, replay=Replay.from_events(first))
    asyncio.run(Episode(ctx, agent="root", depth=0,
                        tracker=BudgetTracker(ctx.settings.budget())).run())
    assert "GOT True Acme 2500000" in root.messages[1][-1]["content"] and not sub.calls


def test_the_scripted_root_takes_findings_as_fields_from_a_sub_that_takes_schemas(
        generated_room, tmp_path, monkeypatch):
    """The oracle takes schemas: the memo's findings come from fields, and the memo is the
    one the line format gives."""
    run_agent(generated_room, tmp_path / "typed", root="scripted", sub="oracle")
    from dealroom.models import OracleModel

    monkeypatch.setattr(OracleModel, "schema_via", "prompt")
    run_agent(generated_room, tmp_path / "lines", root="scripted", sub="oracle")
    typed, lines = RunFolder.open(tmp_path / "typed"), RunFolder.open(tmp_path / "lines")
    subs = [e for e in typed.events() if e["type"] == "model_call" and e["role"] == "sub"]
    assert subs and all(isinstance(e["parsed"], dict) for e in subs)
    assert any(e["parsed"]["findings"] for e in subs)
    assert not any("schema" in e["input"] for e in lines.events() if e["type"] == "model_call")
    memo = (tmp_path / "typed" / "output" / "memo.md").read_text()
    assert "Key Findings" in memo
    assert memo == (tmp_path / "lines" / "output" / "memo.md").read_text()
    assert json.loads((tmp_path / "typed" / "metrics.json").read_text())["behaviour"][
        "non_findings"] == 0


def test_a_schema_call_runs_in_the_real_sandbox(generated_room, tmp_path):
    cell = ("```python\nfrom pydantic import BaseModel\n"
            "class Owed(BaseModel):\n    party: str\n    amount: int\n"
            "print('GOT', llm('Who?', text='Acme.', schema=Owed), llm.schema_via)\n```")
    root = ScriptedModel([cell, SUBMIT], name="cells")
    with MockOpenAIServer(lambda request: f"Here: {GOOD}") as srv:
        run_agent(generated_room, tmp_path / "run", root=root, sub=f"mock@{srv.base_url}",
                  max_turns=3)
    assert "GOT {'party': 'Acme', 'amount': 2500000} prompt" in root.messages[1][-1]["content"]


def test_scripted_root_cells_stay_the_line_format_for_a_sub_without_schemas(tmp_path):
    sub = ScriptedModel(["NONE"], cycle=True, context_window=4096)
    ctx = make_ctx(tmp_path, scripted_root(), sub)
    root = ctx.root
    asyncio.run(Episode(ctx, agent="root", depth=0,
                        tracker=BudgetTracker(ctx.settings.budget())).run())
    assert sub.calls and all(c.response_format is None for c in sub.calls)
    assert "One line per issue: ISSUE:" in sub.calls[0].messages[-1]["content"]
    assert root.name == "scripted"


NAMED = ("```python\nS = " + repr(SCHEMA) + "\n"
         "print('VIA', llm.models['fast']['schema_via'], llm.models['strong']['schema_via'])\n"
         "one = llm('Who is owed what?', text='Acme.', schema=S, model='strong')\n"
         "both = llm_batch([{'prompt': 'first', 'text': 'Acme.', 'schema': S, 'model': m}\n"
         "                  for m in ('fast', 'strong')])\n"
         "print('GOT', one['amount'], [r['party'] for r in both])\n```")


def test_a_schema_goes_to_the_named_model_asked_its_own_way(generated_room, tmp_path):
    """``strong`` honours ``response_format`` (its spec says so); ``fast`` ignores it and
    answers in prose around JSON, so its calls carry the schema in the prompt."""
    def strong_reply(request):
        return GOOD if request.get("response_format") else "Acme, 2.5 million."

    def fast_reply(request):
        assert "response_format" not in request
        return f"Sure: {GOOD} - hope it helps." if "JSON Schema" in user_text(request) else "?"

    root = ScriptedModel([NAMED, SUBMIT], name="cells")
    with MockOpenAIServer(fast_reply, model="fast-m") as fast, \
            MockOpenAIServer(strong_reply, model="strong-m") as strong:
        run_agent(generated_room, tmp_path / "run", root=root, max_turns=3,
                  sub={"fast": f"fast-m@{fast.base_url}#price_input=0.1,price_output=0.4",
                       "strong": f"strong-m@{strong.base_url}#schema_via=response_format,"
                                 "price_input=2,price_output=8"})
        fast_requests, strong_requests = list(fast.requests), list(strong.requests)
    shown = root.messages[1][-1]["content"]
    assert "VIA prompt response_format" in shown and "GOT 2500000 ['Acme', 'Acme']" in shown
    assert len(strong_requests) == 2 and len(fast_requests) == 1
    assert all(r["response_format"]["json_schema"]["schema"] == SCHEMA for r in strong_requests)
    assert all("JSON Schema" not in user_text(r) for r in strong_requests)
    assert json.dumps(SCHEMA) in user_text(fast_requests[0])
    folder = RunFolder.open(tmp_path / "run")
    subs = [e for e in folder.events() if e["type"] == "model_call" and e["role"] == "sub"]
    via = {e["model"]: e["provider"]["schema"]["via"] for e in subs}
    assert via == {folder.config["subs"]["fast"]: "prompt",
                   folder.config["subs"]["strong"]: "response_format"}
    assert all(e["parsed"] == json.loads(GOOD) for e in subs)


def test_the_re_ask_is_held_to_its_model_s_cost_cap(tmp_path):
    """A re-ask is a call like any other: a model at its cap does not make it, and the item
    fails with the cap's reason."""
    from dealroom.harness.rlm._schema import SchemaAsk
    from dealroom.harness.rlm._subs import SubModel
    from dealroom.harness.rlm._subwindow import SubWindow
    from dealroom.models import Prices
    from dealroom.types import Budget

    sub = ScriptedModel(['{"party": "Acme"}'], cycle=True, prices=Prices(input=2, output=8))
    model = SubModel("strong", sub, SubWindow(sub), cap=0.0)
    ask = SchemaAsk(SCHEMA, "prompt")
    tracker = BudgetTracker(Budget())
    result = asyncio.run(ask.ask(sub.chat, [{"role": "user", "content": "Who?"}], tracker,
                                 model, 64))
    assert len(sub.calls) == 1 and result.text == '{"party": "Acme"}'
    assert ask.error is not None and "'amount' is a required property" in ask.error
    assert "model 'strong' is at its cost cap" in ask.error
    assert ask.answer({"ok": True, "text": result.text})["ok"] is False


def test_a_reply_cut_at_its_cap_keeps_its_complete_findings_and_raw_line_breaks(tmp_path):
    """As llama.cpp's grammar writes them: raw line breaks inside strings, and a reply cut at
    the reply cap mid-finding, whose complete findings are kept (as whole lines of prose are)."""
    from dealroom.models import FINDINGS_SCHEMA
    from dealroom.testing import chat_completion_body

    cut = ('{ "findings": [{"issue": "Consent on a change\nof control", "severity": "high", '
           '"amount": null, "document": "D00001", "page": 2}, {"issue": "Termination fee of')
    usage = {"prompt_tokens": 40, "completion_tokens": 64, "total_tokens": 104}
    cell = ("```python\nr = llm('List the issues.', text='Acme may terminate.', schema="
            + repr(FINDINGS_SCHEMA) + ")\n"
            "print('GOT', [f['issue'] for f in r['findings']])\n```")
    shown, [call], requests = run(
        tmp_path, lambda request: chat_completion_body(cut, usage=usage, finish_reason="length"),
        [cell], schema_via="response_format")
    assert "GOT ['Consent on a change\\nof control']" in shown, shown
    assert len(requests) == 1 and call["error"] is None
    assert call["parsed"]["findings"][0]["page"] == 2
