"""The LLM judge against a scripted OpenAI-compatible endpoint on loopback."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dealroom.judge import Scores, agreement, judge_run, llm_judge, parse_verdicts
from dealroom.judge._llm import prompt_tokens
from dealroom.models import open_model
from dealroom.testing import Fault, MockOpenAIServer, chat_completion_body

IDS = re.compile(r'"id": "(C-\d{3})"')


def _ids(request: dict[str, Any]) -> list[str]:
    """Criterion ids asked for in the last user message (the rubric or a correction)."""
    last = request["messages"][-1]["content"]
    if "Give verdicts for" in last:
        return re.findall(r"C-\d{3}", last.split("Give verdicts for")[1].split(" only")[0])
    return IDS.findall(last)


def _is_retry(request: dict[str, Any]) -> bool:
    return "could not be used" in request["messages"][-1]["content"]


def _good(ids: list[str], verdict: str = "pass") -> str:
    return json.dumps(
        {"results": [{"id": i, "verdict": verdict, "reasoning": f"{i} ok"} for i in ids]}
    )


def _judge(
    task: dict,
    reply: Callable[[dict], Any],
    memo: str = "memo",
    window: int | None = None,
    **kw: Any,
) -> tuple[Scores, MockOpenAIServer]:
    async def go() -> tuple[Scores, MockOpenAIServer]:
        async with MockOpenAIServer(reply) as srv:
            spec = srv.spec if window is None else srv.spec.replace(context_window=window)
            model = open_model(spec)
            try:
                scores = await llm_judge(model, **kw)(task, {"memo": memo})
            finally:
                await model.aclose()
            return scores, srv

    return asyncio.run(go())


def test_one_call_per_criterion_at_temperature_zero(task: dict, gold: str) -> None:
    scores, srv = _judge(task, lambda req: _good(_ids(req)), memo="The memo text.")
    assert srv.calls == len(task["criteria"])
    assert scores.n_passed == scores.n_criteria == len(task["criteria"])
    for request in srv.requests:
        assert request["temperature"] == 0
        prompt = json.dumps(request["messages"])
        assert "The memo text." in prompt
        assert task["instructions"][:40] in prompt
        assert gold[:60] not in prompt and "answer_key" not in prompt  # never the answer key
        assert len(_ids(request)) == 1


def test_batches_cut_the_number_of_calls(task: dict) -> None:
    scores, srv = _judge(task, lambda req: _good(_ids(req), "fail"), batch=5)
    assert srv.calls == -(-len(task["criteria"]) // 5)
    assert scores.n_passed == 0 and scores.n_errors == 0
    assert [r.id for r in scores.criteria_results] == [c["id"] for c in task["criteria"]]


def test_malformed_json_is_repaired(task: dict) -> None:
    def reply(req: dict) -> str:
        items = ",\n".join(
            f"{{'id': '{i}', 'verdict': 'PASS', 'reasoning': 'fine',}}" for i in _ids(req)
        )
        return f'Sure! Here are my verdicts:\n```json\n{{"results": [{items}],}}\n```\nDone.'

    scores, srv = _judge(task, reply, batch=4)
    assert scores.n_passed == len(task["criteria"])
    assert srv.calls == -(-len(task["criteria"]) // 4)  # no retries needed


def test_partial_replies_are_completed_by_asking_again(task: dict) -> None:
    def reply(req: dict) -> str:
        ids = _ids(req)
        if not _is_retry(req):  # first ask: leave out the last criterion of the batch
            return _good(ids[:-1])
        return _good(ids)

    scores, srv = _judge(task, reply, batch=3)
    batches = -(-len(task["criteria"]) // 3)
    assert scores.n_passed == len(task["criteria"]) and scores.n_errors == 0
    assert srv.calls == 2 * batches
    retries = [r for r in srv.requests if _is_retry(r)]
    assert len(retries) == batches
    for retry in retries:  # a fresh, bounded prompt for the missing criterion only
        assert (
            len(retry["messages"]) == 2 and len(IDS.findall(retry["messages"][-1]["content"])) == 1
        )


def test_reply_cut_off_keeps_its_whole_objects(task: dict) -> None:
    def reply(req: dict) -> Any:
        ids = _ids(req)
        if not _is_retry(req):
            text = _good(ids)
            return chat_completion_body(text[: text.index(ids[-1]) + 12], finish_reason="length")
        return _good(ids)

    scores, srv = _judge(task, reply, batch=len(task["criteria"]))
    assert scores.n_passed == len(task["criteria"])
    assert srv.calls == 2
    assert _ids(srv.requests[1]) == [task["criteria"][-1]["id"]]


def test_refusals_become_judge_errors_counted_apart(task: dict) -> None:
    refused = {"C-003", "C-007"}

    def reply(req: dict) -> str:
        ids = _ids(req)
        if set(ids) & refused:
            return "I'm sorry, but I can't help with evaluating legal documents."
        return _good(ids)

    scores, srv = _judge(task, reply, retries=2)
    verdicts = {r.id: r for r in scores.criteria_results}
    assert {i for i, r in verdicts.items() if r.verdict == "error"} == refused
    assert "after 3 attempt(s)" in verdicts["C-003"].reasoning
    assert scores.n_errors == 2
    assert scores.n_passed == len(task["criteria"]) - 2
    assert scores.pass_rate == pytest.approx((len(task["criteria"]) - 2) / len(task["criteria"]))
    assert not scores.all_pass
    assert srv.calls == len(task["criteria"]) - 2 + 2 * 3


def test_invalid_verdict_words_are_not_passes(task: dict) -> None:
    def reply(req: dict) -> str:
        return json.dumps({"verdict": "partially", "reasoning": "some of it"})

    scores, _ = _judge(task, reply, retries=0)
    assert scores.n_errors == scores.n_criteria and scores.n_passed == 0


def test_endpoint_failure_is_an_error_for_its_criteria(task: dict) -> None:
    def reply(req: dict) -> Any:
        if "C-002" in _ids(req):
            return Fault.http(400, "bad request")
        return _good(_ids(req))

    scores, _ = _judge(task, reply)
    verdicts = {r.id: r for r in scores.criteria_results}
    assert verdicts["C-002"].verdict == "error"
    assert "judge call failed" in verdicts["C-002"].reasoning
    assert scores.n_errors == 1


def test_batches_are_halved_to_fit_the_context_window(task: dict) -> None:
    memo = "The memo says a great deal. " * 300  # about 2,100 tokens
    whole, srv = _judge(task, lambda req: _good(_ids(req)), memo=memo, batch=14, window=32_768)
    assert srv.calls == 1 and whole.n_passed == 14
    split, srv = _judge(task, lambda req: _good(_ids(req)), memo=memo, batch=14, window=4_600)
    assert split.n_passed == 14 and srv.calls > 1
    for request in srv.requests:  # every call fits: none kept the whole batch
        assert len(_ids(request)) < 14
        assert prompt_tokens(request["messages"]) + request["max_tokens"] <= 4_600


def test_a_deliverable_too_long_for_the_judge_is_an_error_not_a_fail(task: dict) -> None:
    memo = "The memo says a great deal. " * 2_000
    scores, srv = _judge(task, lambda req: _good(_ids(req)), memo=memo, window=4_096)
    assert srv.calls == 0 and scores.n_errors == 14
    assert "context window" in scores.criteria_results[0].reasoning


def test_judge_usage_is_summed(task: dict) -> None:
    scores, srv = _judge(task, lambda req: _good(_ids(req)))
    assert scores.usage.calls == srv.calls
    assert scores.usage.input_tokens > 0 and scores.usage.output_tokens > 0


TWO = ["C-001", "C-002"]


@pytest.mark.parametrize(
    ("text", "ids", "found", "problem"),
    [
        ('{"verdict": "pass", "reasoning": "ok"}', ["C-001"], {"C-001": "pass"}, None),
        (
            '{"C-001": "fail", "C-002": {"verdict": "Passed"}}',
            TWO,
            {"C-001": "fail", "C-002": "pass"},
            None,
        ),
        ('[{"verdict": "no"}, {"verdict": "yes"}]', TWO, {"C-001": "fail", "C-002": "pass"}, None),
        (
            '{"results": [{"id": "C-001", "verdict": "pass"}, {"id": "C-002", "verd',
            TWO,
            {"C-001": "pass"},
            "no valid verdict for C-002",
        ),
        (
            '{"results": [{"id": "C-009", "verdict": "pass"}]}',
            TWO,
            {},
            "no valid verdict for C-001, C-002",
        ),
        (
            '{"C-001": {"verdict": "pass", "reasoning": "ok"}, "C-002": {"verdict": "fa',
            TWO,
            {"C-001": "pass"},
            "no valid verdict for C-002",
        ),
        ("I cannot comply.", TWO, {}, "no JSON object in the reply"),
        ("", TWO, {}, "the reply was empty"),
    ],
)
def test_parse_verdicts_shapes(text: str, ids: list, found: dict, problem: str | None) -> None:
    got, why = parse_verdicts(text, ids)
    assert {k: v[0] for k, v in got.items()} == found
    assert why == problem


def test_judge_run_compares_with_the_reference(
    tmp_path: Path, gold: str, task: dict, run_maker
) -> None:
    run = run_maker(tmp_path / "run", gold)
    wrong = {"C-001", "C-002"}

    def reply(req: dict) -> str:
        return "\n".join(_good([i], "fail" if i in wrong else "pass") for i in _ids(req))

    async def go() -> Scores:
        async with MockOpenAIServer(reply) as srv:
            from dealroom.judge import ajudge_run

            return await ajudge_run(run, srv.spec, compare="reference", batch=2)

    scores = asyncio.run(go())
    saved = json.loads((run / "scores.json").read_text())
    ref = json.loads((run / "scores.reference.json").read_text())
    assert saved["judge"]["name"] == "llm" and ref["judge"]["name"] == "reference"
    assert ref["n_passed"] == len(task["criteria"])
    n = len(task["criteria"])
    assert saved["agreement"]["n"] == n
    assert saved["agreement"]["agreement"] == pytest.approx((n - 2) / n)
    assert scores.extra["agreement"]["with"] == "reference"
    # the reference says all pass: chance agreement is 1 - (n-2)/n... kappa is 0 here
    assert saved["agreement"]["kappa"] == pytest.approx(0.0)
    assert saved["usage"]["calls"] >= -(-n // 2)


def test_judge_run_missing_memo_is_judged_empty(tmp_path: Path, task: dict, run_maker) -> None:
    run = run_maker(tmp_path / "run", None)
    scores = judge_run(run)
    assert scores.extra["deliverables_missing"] == ["memo"]
    negatives = sum(1 for c in task["criteria"] if c["expect"].get("negative"))
    assert scores.n_passed == negatives
    assert json.loads((run / "scores.json").read_text())["n_passed"] == negatives


def test_agreement_kappa_undefined_and_errors_excluded() -> None:
    from dealroom.judge import CriterionResult as R

    a = Scores([R("C-1", "", "pass", ""), R("C-2", "", "error", "")])
    b = Scores([R("C-1", "", "pass", ""), R("C-2", "", "fail", "")])
    result = agreement(a, b)
    assert result["n"] == 1 and result["excluded"] == 1
    assert result["agreement"] == 1.0 and result["kappa"] != result["kappa"]  # NaN
    with pytest.raises(ValueError):
        agreement([a], [a, b])


def test_fitting_counts_each_deliverable_once(task: dict, monkeypatch) -> None:
    from types import SimpleNamespace

    from dealroom.judge import _llm

    memo = "The memo says a great deal about Acme. " * 500
    counted: list[int] = []
    real = _llm.count_tokens
    monkeypatch.setattr(_llm, "count_tokens", lambda text: counted.append(len(text)) or real(text))
    chunks = _llm.batches(task["criteria"], 1, ["memo"])
    model = SimpleNamespace(context_window=6_000)
    kept, errors = _llm.fit(model, task, {"memo": memo}, chunks, None)
    assert sum(n >= len(memo) for n in counted) == 1  # not once per criterion
    monkeypatch.setattr(_llm, "count_tokens", real)
    for chunk in chunks:  # the same decision as sizing each whole prompt
        need = prompt_tokens(_llm.build_messages(task, {"memo": memo}, chunk)) + \
            _llm.reply_budget(1, None)
        assert (chunk in kept) == (need <= 6_000) and (chunk[0]["id"] in errors) != (chunk in kept)


def test_verdicts_are_asked_for_with_a_schema_keyed_by_criterion(task: dict) -> None:
    def reply(req: dict) -> str:
        keys = list(req["response_format"]["json_schema"]["schema"]["properties"])
        return json.dumps({i: {"verdict": "pass", "reasoning": "ok"} for i in keys})

    scores, srv = _judge(task, reply, batch=4)
    assert scores.n_passed == len(task["criteria"]) and scores.n_errors == 0
    for request in srv.requests:
        schema = request["response_format"]["json_schema"]["schema"]
        assert schema["required"] == _ids(request) and schema["additionalProperties"] is False
        item = schema["properties"][_ids(request)[0]]
        assert item["properties"]["verdict"]["enum"] == ["pass", "fail"]
    assert scores.to_dict()["judge"]["structured_output"] == {"json_schema": srv.calls}
    judged_by = scores.to_dict()["judge"]["models"]["judge"]  # which endpoint and model judged
    assert (judged_by["base_url"], judged_by["model"]) == (srv.base_url, srv.model)


@pytest.mark.parametrize(
    "refuse, used", [(("json_schema",), "json_object"), (("response_format",), "none")]
)
def test_an_endpoint_refusing_the_schema_is_judged_leniently(
    task: dict, refuse: tuple, used: str
) -> None:
    async def go() -> tuple[Scores, MockOpenAIServer]:
        reply = lambda req: _good(_ids(req))  # noqa: E731
        async with MockOpenAIServer(reply, refuse=refuse, refuse_status=500) as srv:
            async with open_model(srv.spec) as model:
                scores = await llm_judge(model, batch=len(task["criteria"]))(task, {"memo": "m"})
            return scores, srv

    scores, srv = asyncio.run(go())
    assert scores.n_passed == len(task["criteria"]) and scores.n_errors == 0
    assert scores.judge["structured_output"] == {used: 1}


def test_structured_output_can_be_turned_off(task: dict) -> None:
    scores, srv = _judge(task, lambda req: _good(_ids(req)), batch=4, structured=False)
    assert all("response_format" not in r for r in srv.requests)
    assert scores.judge["structured_output"] == {"none": srv.calls}


@pytest.mark.slow
def test_the_embedded_model_judges_every_criterion_through_the_cli(tmp_path: Path) -> None:
    import subprocess
    import sys

    from dealroom.room import generate_room, load_task

    room = tmp_path / "room"
    generate_room(room, docs=12, seed=1, tokens=40_000)
    criteria = load_task(room)["criteria"]
    memo = tmp_path / "memo.md"
    memo.write_text("# Memo\n\n" + "\n".join(f"- {c['title']}" for c in criteria[::2]))
    out = tmp_path / "scores.json"
    done = subprocess.run(
        [sys.executable, "-m", "dealroom", "judge", "--room", str(room), "--memo", str(memo),
         "--judge", "local", "--batch", "5", "--out", str(out)],
        capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stderr
    scores = json.loads(out.read_text())
    assert scores["n_criteria"] == len(criteria) and scores["n_errors"] == 0
    assert scores["judge"]["structured_output"] == {"json_object": -(-len(criteria) // 5)}


def test_a_verdict_drafted_in_the_reasoning_is_not_the_verdict(task: dict) -> None:
    def reply(req: dict) -> str:  # a reasoning model served without a reasoning parser
        ids = _ids(req)
        return f"<think>First guess: {_good(ids, 'fail')}. Check again.</think>\n\n{_good(ids)}"

    scores, _ = _judge(task, reply, batch=4)
    assert scores.n_passed == len(task["criteria"]) and scores.n_errors == 0
    assert all("First guess" not in r.reasoning for r in scores.criteria_results)
