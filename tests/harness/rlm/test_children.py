"""rlm_batch: children side by side against a loopback endpoint, in order, each failure its
own, budgets carved evenly, and every agent's sub-calls admitted fairly."""

from __future__ import annotations

import asyncio
import re

import pytest

from dealroom.errors import InputError
from dealroom.harness import run_agent
from dealroom.harness.rlm import RLMSettings
from dealroom.harness.rlm import _subs as sub_models
from dealroom.harness.rlm._fair import FairGate
from dealroom.harness.rlm._prompt import SUB_SYSTEM
from dealroom.models import ScriptedModel
from dealroom.runs import RunFolder
from dealroom.testing import MockOpenAIServer


def child_task(request) -> str:
    first = request["messages"][1]["content"]
    return re.search(r"Your task:\n(.*)\n", first).group(1)


def turn_of(request) -> int:
    return sum(m["role"] == "assistant" for m in request["messages"]) + 1


def served(request) -> str:
    """Children and sub-agents as served models do: a child reads with one llm_batch of
    ``calls=N`` calls (after ``after=K`` turns that only print), then submits."""
    messages = request["messages"]
    if len(messages) < 2 or "child agent" not in messages[1]["content"]:
        return "read: " + request["messages"][-1]["content"][-40:]  # a sub-call
    task, turn = child_task(request), turn_of(request)
    wait = int((re.search(r"after=(\d+)", task) or [0, 0])[1])
    if turn <= wait:
        return "```python\nprint('looking around')\n```"
    if turn == wait + 1:
        n = int(re.search(r"calls=(\d+)", task).group(1))
        return (f"```python\nr = llm_batch([{{'prompt': '{task} p{{}}'.format(i), 'docs': "
                f"['D00001']}} for i in range({n})])\nprint(len(r))\n```")
    return f"```python\nsubmit('answer to {task}')\n```"


def root_of(*cells: str) -> ScriptedModel:
    return ScriptedModel([f"```python\n{c}\n```" for c in cells])


def events_of(run):
    return RunFolder.open(run).events()


def test_children_run_side_by_side_within_the_limit_and_answer_in_order(small_room, tmp_path):
    root = root_of("r = rlm_batch([f'task {i} calls=1' for i in range(6)])\nprint(r)",
                   "submit()")
    with MockOpenAIServer(served, latency=0.2) as server:
        result = run_agent(small_room, tmp_path / "run", root=root, depth=2,
                           sub=f"mock@{server.base_url}#context_window=8000",
                           child_concurrency=3)
    assert result.status == "submitted"
    seen = root.messages[1][-1]["content"]
    assert str([f"answer to task {i} calls=1" for i in range(6)]) in seen
    events = events_of(tmp_path / "run")
    open_now, most = set(), 0
    for e in events:  # how many children were running at once, in the records' order
        if e["type"] == "child_start":
            open_now.add(e["agent"])
        elif e["type"] == "child_end":
            open_now.discard(e["agent"])
        most = max(most, len(open_now))
    assert most == 3
    starts = [e for e in events if e["type"] == "child_start"]
    assert [e["agent"] for e in starts] == [f"root/c1-{i}" for i in range(6)]
    assert {e["parent"] for e in starts} == {"root"}
    assert [e["call_id"] for e in starts] == [f"root/t1/s{i}" for i in range(6)]


def test_a_failed_child_is_its_own_subcall_error(small_room, tmp_path):
    def sub(messages):
        first = messages[1]["content"]
        if "child agent" in first and "broken" in first:
            raise ValueError("the child's model fell over")
        return "```python\nsubmit('fine')\n```"

    root = root_of("r = rlm_batch(['ok one', 'broken', {'task': 'other', 'sub': 'strong'},"
                   " 'ok two'])\nprint([type(x).__name__ for x in r], r[1].error, r[2].error)",
                   "submit()")
    run_agent(small_room, tmp_path / "run", root=root, depth=2,
              sub=ScriptedModel([sub], cycle=True))
    seen = root.messages[1][-1]["content"]
    assert "['str', 'SubcallError', 'SubcallError', 'str']" in seen
    assert "the child failed" in seen and "fell over" in seen
    assert "unknown model 'strong': this run's sub-agent models are default" in seen
    ends = {e["agent"]: e for e in events_of(tmp_path / "run") if e["type"] == "child_end"}
    assert ends["root/c1-1"]["error"] and ends["root/c1-0"]["error"] is None


def test_children_without_a_budget_share_what_is_left_evenly(small_room, tmp_path):
    root = root_of("r = rlm_batch([{'task': 'a', 'budget': {'max_tokens': 10000}}, 'b', 'c',"
                   " 'd'])", "submit()")
    run_agent(small_room, tmp_path / "run", root=root, depth=2, max_tokens=100_000,
              sub=ScriptedModel(["```python\nsubmit('x')\n```"], cycle=True))
    budgets = [e["budget"]["max_tokens"] for e in events_of(tmp_path / "run")
               if e["type"] == "child_start"]
    assert budgets[0] == 10_000
    assert budgets[1] == budgets[2] == budgets[3] > 25_000
    assert sum(budgets) <= 100_000


def test_rlm_batch_is_refused_at_depth_one_and_bad_items_are_named(small_room, tmp_path):
    root = root_of("rlm_batch(['x'])", "rlm_batch([{'tsk': 'x'}])", "submit()")
    run_agent(small_room, tmp_path / "run", root=root, sub=ScriptedModel(["x"], cycle=True))
    assert "rlm_batch() is not available at depth 0" in root.messages[1][-1]["content"]
    root = root_of("rlm_batch([{'task': 'x', 'budgets': {}}])",
                   "print(rlm_batch(['deeper']))", "submit()")
    child = ScriptedModel(["```python\nrlm_batch(['x'])\n```",
                           "```python\nsubmit('refused')\n```"], cycle=True)
    run_agent(small_room, tmp_path / "run2", root=root, depth=2, sub=child)
    assert "unknown keys ['budgets']" in root.messages[1][-1]["content"]
    assert "['refused']" in root.messages[2][-1]["content"]  # a child at the deepest level:
    assert "rlm_batch() is not available at depth 1 with max depth 2" in \
        child.messages[1][-1]["content"]


def test_children_share_the_run_s_sub_call_limit(small_room, tmp_path, monkeypatch):
    monkeypatch.setattr(sub_models, "SEND_WINDOW", 4)  # a model's limit when its client names none
    flight = {"now": 0, "most": 0}

    async def model(messages):
        if messages[0]["content"] != SUB_SYSTEM:
            return served({"messages": messages})
        flight["now"] += 1
        flight["most"] = max(flight["most"], flight["now"])
        await asyncio.sleep(0.02)
        flight["now"] -= 1
        return "read"

    root = root_of("r = rlm_batch(['big1 calls=40', 'big2 calls=40', 'small calls=2'])",
                   "submit()")
    run_agent(small_room, tmp_path / "run", root=root, depth=2,
              sub=ScriptedModel([model], cycle=True))
    subs = [e["agent"] for e in events_of(tmp_path / "run")
            if e["type"] == "model_call" and e["role"] == "sub"]
    assert len(subs) == 82 and flight["most"] == 4  # 3 children, 4 calls in flight at most


def test_child_concurrency_is_a_checked_setting():
    assert RLMSettings().child_concurrency == 4
    with pytest.raises(InputError, match="child_concurrency"):
        RLMSettings(child_concurrency=0)


def test_the_gate_admits_waiting_agents_round_robin():
    async def main() -> list[str]:
        gate, order = FairGate(1), []
        hold = asyncio.Event()

        async def call(key: str) -> None:
            order.append(key)
            if key == "first":
                await hold.wait()

        first = asyncio.ensure_future(gate.run("A", call("first")))
        await asyncio.sleep(0)
        waiting = [asyncio.ensure_future(gate.run(k, call(k))) for k in "AAAAABB"]
        await asyncio.sleep(0)
        hold.set()
        await asyncio.gather(first, *waiting)
        return order[1:]

    assert asyncio.run(main()) == ["A", "B", "A", "B", "A", "A", "A"]


def test_a_cancelled_wait_gives_no_slot_away():
    async def main() -> int:
        gate = FairGate(1)
        hold = asyncio.Event()
        first = asyncio.ensure_future(gate.run("A", hold.wait()))
        await asyncio.sleep(0)
        waiter = asyncio.ensure_future(gate.run("B", asyncio.sleep(0)))
        await asyncio.sleep(0)
        waiter.cancel()
        hold.set()
        await first
        return gate.busy + gate.waiting

    assert asyncio.run(main()) == 0


def test_the_next_child_s_repl_starts_ahead_and_each_one_started_is_closed(tmp_path):
    from inprocess import InProcessSandbox
    from test_rlm_engine import make_ctx, run_episode

    log: list[str] = []

    class Logged(InProcessSandbox):
        async def start(self):
            log.append(f"start {self.episode.agent}")
            await super().start()

        async def close(self):
            log.append(f"close {self.episode.agent}")
            await super().close()

    def child(messages):
        log.append("reply " + child_task({"messages": messages}))
        return "```python\nsubmit('done')\n```"

    root = root_of("r = rlm_batch(['t0', 't1', {'task': 't2', 'sub': 'nope'}, 't3'])",
                   "submit()")
    ctx = make_ctx(tmp_path, root, ScriptedModel([child], cycle=True), depth=2,
                   child_concurrency=2)
    ctx.sandbox_factory = Logged
    run_episode(ctx)
    assert log.index("start root/c1-3") < log.index("close root/c1-1")  # ahead of its turn
    assert "reply t2" not in log and "start root/c1-2" not in log  # refused: no REPL
    started = sorted(x.split()[1] for x in log if x.startswith("start"))
    assert started == sorted(x.split()[1] for x in log if x.startswith("close"))
    assert started == ["root", "root/c1-0", "root/c1-1", "root/c1-3"]
