"""The RLM engine's logic, run against an in-process sandbox double and scripted models."""

import asyncio
from types import SimpleNamespace

import pytest
from inprocess import InProcessSandbox

from dealroom.errors import ModelError
from dealroom.harness import Deliverables, RunEvents
from dealroom.harness._common._budget import BudgetTracker
from dealroom.harness.rlm import _subcalls as subcalls
from dealroom.harness.rlm import _subs as subs
from dealroom.harness.rlm._engine import Episode, RunContext
from dealroom.harness.rlm._replay import Replay
from dealroom.harness.rlm._scripted import scripted_root
from dealroom.harness.rlm._settings import RLMSettings
from dealroom.harness.rlm._slices import SubPlan, cut_to_tokens
from dealroom.measure import CoverageProbe, DocText
from dealroom.models import ScriptedModel
from dealroom.room import count_tokens
from dealroom.runs import RunFolder, RunRecorder
from dealroom.types import Budget

PAGES = {
    "D00001": ["Master Services Agreement with Acme Corp.", "Acme may terminate on a change "
               "of control of the Company without consent."],
    "D00002": ["Schedule 4: termination fee of $2,500,000 payable to Acme."],
    "D00003": ["Board minutes approving the annual budget."],
}


class FakeRoom:
    name = "toy"

    def __init__(self):
        self.docs = [
            SimpleNamespace(id=i, title=f"Doc {i}", path=f"documents/01 Contracts/{i}.md",
                            category="01 Contracts", folder="01 Contracts",
                            tokens=sum(len(p.split()) for p in pages), pages=len(pages),
                            locate=lambda page: (page, ""))  # prints no page labels
            for i, pages in PAGES.items()
        ]
        self.totals = {"docs": 3, "tokens": 40, "categories": 1}

    def doc(self, doc_id):
        return next(d for d in self.docs if d.id == doc_id)

    def text(self, doc_id, pages=None):
        first, last = (1, len(PAGES[doc_id])) if pages is None else pages
        return "\f".join(PAGES[doc_id][first - 1:last])

    def page_tokens(self, doc_id, first=1, last=None):
        return [count_tokens(p) for p in PAGES[doc_id]][first - 1:last]

    def token_offset(self, doc_id, page, n, text=None):
        return len(cut_to_tokens(PAGES[doc_id][page - 1], n)[0])

    def page_spans(self, doc_id, first=1, last=None):
        spans, pos = [], 0
        for page in PAGES[doc_id]:
            spans.append((pos, pos + len(page)))
            pos += len(page) + 1
        return spans[first - 1:last]

    def tree(self):
        return "01 Contracts/ (3 documents)"


def make_ctx(tmp_path, root, sub, replay=None, **settings):
    room = FakeRoom()
    probe = CoverageProbe([DocText(d, "01 Contracts", "01 Contracts", "\f".join(p))
                           for d, p in PAGES.items()])
    folder = RunFolder.create(tmp_path / "run", {"harness": "rlm"})
    return RunContext(
        room=room, room_dir=tmp_path, root=root, sub=sub, settings=RLMSettings(**settings),
        events=RunEvents(RunRecorder(folder), probe), replay=replay or Replay(),
        scratch=tmp_path, instructions="Review.", sandbox_factory=InProcessSandbox,
        deliverables=Deliverables(folder),
    )


def run_episode(ctx, budget=None):
    tracker = BudgetTracker(budget or ctx.settings.budget())
    result = asyncio.run(Episode(ctx, agent="root", depth=0, tracker=tracker).run())
    recorder = ctx.events.recorder
    recorder.close()
    return result, RunFolder.open(recorder.path).events(), tracker


def finding_sub(messages):
    """Names the document, as the prompt asks: the slice holds all three."""
    content = messages[-1]["content"]
    if "change of control" in content:
        return "ISSUE: Acme may terminate on change of control | SEVERITY: high | " \
               "AMOUNT: $2.5 million | DOC: D00001 | PAGE: 2"
    return "NONE"


def test_scripted_root_reviews_every_document_and_writes_a_cited_memo(tmp_path):
    sub = ScriptedModel([finding_sub], cycle=True, context_window=4096)
    ctx = make_ctx(tmp_path, scripted_root(), sub)
    result, events, _ = run_episode(ctx)
    assert result.status == "submitted"
    assert "[D00001 p.2]" in result.memo and "severity: high" in result.memo
    assert "## Executive Summary" in result.memo and "## Recommended Next Steps" in result.memo
    subs = [e for e in events if e["type"] == "model_call" and e["role"] == "sub"]
    assert {r["id"] for e in subs for r in e["input"]["docs"]} == set(PAGES)
    assert ctx.events.probe.summary()["coverage"] == pytest.approx(1.0)
    assert (tmp_path / "run" / "output" / "memo.md").read_text() == result.memo
    assert [e["seq"] for e in events] == list(range(len(events)))


def test_malformed_reply_and_failing_cell_get_an_error_and_the_episode_goes_on(tmp_path):
    root = ScriptedModel(["I think we should look.", "```python\n1/0\n```",
                          "```python\nsubmit()\n```"])
    ctx = make_ctx(tmp_path, root, ScriptedModel(["x"]))
    result, events, _ = run_episode(ctx)
    assert result.status == "submitted" and result.turns == 3
    assert "no ```python code block" in root.messages[1][-1]["content"]
    assert "ZeroDivisionError" in root.messages[2][-1]["content"]
    assert root.messages[2][-1]["content"].startswith("Turn 3 of 30.")


def test_a_failed_sub_call_does_not_sink_the_batch(tmp_path):
    sub = ScriptedModel(["first", ModelError("HTTP 500 after 3 attempts"), "third"])
    root = ScriptedModel([
        "```python\nr = llm_batch(['a', 'b', 'c'])\n"
        "print([type(x).__name__ for x in r], r[1].error)\n```",
        "```python\nsubmit()\n```",
    ])
    ctx = make_ctx(tmp_path, root, sub)
    _, events, _ = run_episode(ctx)
    seen = root.messages[1][-1]["content"]
    assert "['SubResult', 'SubcallError', 'SubResult']" in seen and "HTTP 500" in seen
    wave = next(e for e in events if e["type"] == "wave")
    assert (wave["ok"], wave["failed"]) == (2, 1)


def test_budget_runs_out_and_the_memo_is_kept(tmp_path):
    sub = ScriptedModel(["finding"], cycle=True)
    root = ScriptedModel([
        "```python\nmemo.section('Findings', 'Draft.')\n"
        "r = llm_batch([{'prompt': 'read', 'docs': ['D00001']}] * 200)\nprint(r)\n```",
    ], cycle=True)
    ctx = make_ctx(tmp_path, root, sub, max_tokens=6000)
    result, events, tracker = run_episode(ctx)
    assert result.status == "budget_exhausted"
    assert "Draft." in result.memo
    assert tracker.spent.total_tokens <= 6000
    cell = next(e for e in events if e["type"] == "cell")
    assert "SubcallError('budget exhausted" in cell["output"]
    wave = next(e for e in events if e["type"] == "wave")
    assert wave["ok"] > 0 and wave["failed"] > 0


def test_depth_two_child_inherits_a_carved_budget(tmp_path):
    child_and_subs = ScriptedModel([
        "```python\nsubmit('child found: change of control [D00001 p.2]')\n```",
    ], cycle=True)
    root = ScriptedModel([
        "```python\nans = rlm('Check D00001', docs=['D00001'], budget={'max_tokens': 10**9})\n"
        "print(ans)\n```",
        "```python\nsubmit()\n```",
    ])
    ctx = make_ctx(tmp_path, root, child_and_subs, depth=2)
    result, events, tracker = run_episode(ctx, Budget(max_turns=5, max_tokens=50_000))
    assert "child found" in root.messages[1][-1]["content"]
    start = next(e for e in events if e["type"] == "child_start")
    assert start["budget"]["max_tokens"] <= 50_000  # capped by what the parent had left
    child_calls = [e for e in events if e["type"] == "model_call" and e["role"] == "child_root"]
    assert child_calls and child_calls[0]["agent"] == "root/c1-0" and child_calls[0]["depth"] == 1
    spent_by_child = sum(e["usage"]["input_tokens"] + e["usage"]["output_tokens"]
                         for e in child_calls)
    assert tracker.spent.total_tokens >= spent_by_child


def test_rlm_is_refused_at_depth_one(tmp_path):
    root = ScriptedModel(["```python\nrlm('x')\n```", "```python\nsubmit()\n```"])
    ctx = make_ctx(tmp_path, root, ScriptedModel(["x"]))
    run_episode(ctx)
    assert "not available at depth 0" in root.messages[1][-1]["content"]


def test_replay_repeats_no_model_call_and_gives_the_same_memo(tmp_path):
    sub = ScriptedModel([finding_sub], cycle=True, context_window=4096)
    first, events, _ = run_episode(make_ctx(tmp_path / "a", scripted_root(), sub))
    calls_before = len(sub.calls)
    replay = Replay.from_events(events)
    second, _, _ = run_episode(make_ctx(tmp_path / "b", scripted_root(), sub, replay=replay))
    assert len(sub.calls) == calls_before
    assert second.memo == first.memo


def test_printed_output_is_truncated_for_the_root(tmp_path):
    root = ScriptedModel(["```python\nprint('x' * 10000)\n```", "```python\nsubmit()\n```"])
    ctx = make_ctx(tmp_path, root, ScriptedModel(["x"]), output_limit=500)
    run_episode(ctx)
    seen = root.messages[1][-1]["content"]
    assert "characters cut" in seen and len(seen) < 700


def test_a_batch_over_the_cap_is_refused_before_anything_is_built(tmp_path, monkeypatch):
    planned = []
    monkeypatch.setattr(subcalls, "plan_sub_input", lambda *a, **k: planned.append(1))
    sub = ScriptedModel(["x"], cycle=True)
    root = ScriptedModel([
        f"```python\nllm_batch(['x'] * {subcalls.MAX_BATCH + 1})\n```", "```python\nsubmit()\n```",
    ])
    run_episode(make_ctx(tmp_path, root, sub))
    seen = root.messages[1][-1]["content"]
    assert f"at most {subcalls.MAX_BATCH:,}" in seen
    assert f"llm_batch(calls[i:i + {subcalls.MAX_BATCH}])" in seen
    assert planned == [] and sub.calls == []


def test_under_a_token_budget_only_admitted_calls_are_built(tmp_path, monkeypatch):
    planned, read = [], []
    real_plan, real_messages = subcalls.plan_sub_input, SubPlan.messages
    monkeypatch.setattr(subcalls, "plan_sub_input",
                        lambda *a, **k: planned.append(1) or real_plan(*a, **k))
    monkeypatch.setattr(SubPlan, "messages", lambda self, room: read.append(1)
                        or real_messages(self, room))
    root = ScriptedModel([
        "```python\nr = llm_batch([{'prompt': 'read', 'docs': ['D00001']}] * 5000)\n"
        "print(sum(isinstance(x, SubcallError) for x in r), r[-1])\n```",
        "```python\nsubmit()\n```",
    ])
    sub = ScriptedModel(["finding"], cycle=True)
    _, events, tracker = run_episode(make_ctx(tmp_path, root, sub, max_tokens=6000))
    sent = [e for e in events if e["type"] == "model_call" and e["role"] == "sub"]
    assert 0 < len(sent) == len(sub.calls) == len(read) <= len(planned) <= len(sent) + 2
    seen = root.messages[1][-1]["content"]
    assert f"{5000 - len(sent)} [sub-call failed: budget exhausted" in seen
    assert tracker.spent.total_tokens <= 6000


def test_a_batch_is_read_and_sent_a_window_at_a_time(tmp_path, monkeypatch):
    monkeypatch.setattr(subs, "SEND_WINDOW", 8)
    live, peak = [0], [0]
    real_messages = SubPlan.messages

    def messages(self, room):
        live[0] += 1
        peak[0] = max(peak[0], live[0])
        return real_messages(self, room)

    monkeypatch.setattr(SubPlan, "messages", messages)
    sub = ScriptedModel([lambda m: "ok"], cycle=True, delay=0.01)
    sub.chat = _counting(sub.chat, live)
    root = ScriptedModel(["```python\nr = llm_batch([{'prompt': 'p', 'docs': ['D00002']}] * 50)"
                          "\nprint(len(r))\n```", "```python\nsubmit()\n```"])
    run_episode(make_ctx(tmp_path, root, sub))
    assert "50" in root.messages[1][-1]["content"]
    assert peak[0] == 8


def _counting(chat, live):
    async def wrapped(messages, **kwargs):
        try:
            return await chat(messages, **kwargs)
        finally:
            live[0] -= 1

    return wrapped
