"""rlm_batch with named sub-agent models, and fair admission of the children's sub-calls: a
child runs on the named model its item gives and calls it by default, each named model has its
own gate, each child's usage is its own line of ``metrics.json``'s ``by_child``, and a child
with a few calls is admitted ahead of the queues of children that send many."""

from __future__ import annotations

import asyncio
import json
import re

from dealroom.harness import run_agent
from dealroom.harness.rlm import _engine as engine
from dealroom.harness.rlm import _subs as sub_models
from dealroom.harness.rlm._prompt import SUB_SYSTEM
from dealroom.models import Prices, ScriptedModel
from dealroom.runs import RunFolder

WAIT = 0.01
"""Seconds a fake call sleeps between looks at what it waits for."""


def child_task(messages) -> str:
    return re.search(r"Your task:\n(.*)\n", messages[1]["content"]).group(1)


def child_turn(messages, task: str, calls: int) -> str:
    """A child reads with one llm_batch of ``calls`` calls (no model: its default), then
    submits what they said."""
    if sum(m["role"] == "assistant" for m in messages) == 0:
        return (f"```python\nr = llm_batch([{{'prompt': '{task} p{{}}'.format(i), 'docs': "
                f"['D00001']}} for i in range({calls})])\n```")
    return f"```python\nsubmit('{task}: ' + r[0])\n```"


async def wait_for(check) -> None:
    for _ in range(500):  # bounded: a test that cannot get there fails on what it asserts
        if check():
            return
        await asyncio.sleep(WAIT)


def test_children_run_on_their_named_sub_each_model_with_its_own_gate(
        small_room, tmp_path, monkeypatch):
    monkeypatch.setattr(sub_models, "SEND_WINDOW", 2)  # each model's slots
    flight, most = {"fast": 0, "strong": 0}, {"fast": 0, "strong": 0, "both": 0}

    def model(name: str) -> ScriptedModel:
        async def reply(messages):
            if messages[0]["content"] != SUB_SYSTEM:  # a child's root turn
                return child_turn(messages, child_task(messages), 6)
            flight[name] += 1
            most[name] = max(most[name], flight[name])
            await wait_for(lambda: sum(flight.values()) >= 4)  # one gate for both: never
            most["both"] = max(most["both"], sum(flight.values()))
            await asyncio.sleep(WAIT)
            flight[name] -= 1
            return f"read by {name}"

        price = 1.0 if name == "fast" else 20.0
        return ScriptedModel([reply], cycle=True, name=f"{name}-m", context_window=8192,
                             prices=Prices(price, price, 4 * price))

    root = ScriptedModel(["```python\nr = rlm_batch([{'task': 'a', 'sub': 'strong'}, 'b', "
                          "{'task': 'c', 'sub': 'nope'}])\nprint(r[:2], r[2].error)\n```",
                          "```python\nsubmit()\n```"])
    result = run_agent(small_room, tmp_path / "run", root=root, depth=2,
                       sub={"fast": model("fast"), "strong": model("strong")})
    assert result.status == "submitted"
    seen = root.messages[1][-1]["content"]
    assert "['a: read by strong', 'b: read by fast']" in seen
    assert "unknown model 'nope': this run's sub-agent models are fast, strong" in seen
    assert most == {"fast": 2, "strong": 2, "both": 4}  # each its own gate of 2 slots
    events = RunFolder.open(tmp_path / "run").events()
    on = {e["agent"]: {x["model"] for x in events if x["type"] == "model_call"
                       and x["agent"] == e["agent"]} for e in events if e["type"] == "child_start"}
    assert on == {"root/c1-0": {"strong-m"}, "root/c1-1": {"fast-m"}}  # its turns and calls
    usage = json.loads((tmp_path / "run" / "metrics.json").read_text())["usage"]
    by_child = usage["by_child"]
    assert sorted(by_child) == ["root/c1-0", "root/c1-1"]
    assert by_child["root/c1-0"]["calls"] == by_child["root/c1-1"]["calls"] == 2 + 6
    assert by_child["root/c1-0"]["cost_usd"] > 10 * by_child["root/c1-1"]["cost_usd"] > 0
    assert usage["by_sub"]["strong"]["calls"] == 8


def test_a_child_with_few_calls_is_admitted_ahead_of_the_queues_of_busy_ones(
        small_room, tmp_path, monkeypatch):
    """Four children hold every slot with 32 calls (24 waiting) when a fifth asks for 8: its
    first is admitted after at most one call of each busy child, not after their queues."""
    monkeypatch.setattr(sub_models, "SEND_WINDOW", 8)
    starts: list[str] = []  # sub-calls in the order they reached the model
    state = {"busy": 0, "released": False, "flight": 0}
    bigs = [f"big{i}" for i in range(4)]
    batch = engine.Episode._llm_batch

    async def spy(self, calls, turn):  # marks when a child's batch reaches the host
        if self.task == "small":
            starts.append("ARRIVED")
            asyncio.get_running_loop().call_later(0.05, lambda: state.update(released=True))
        elif self.task in bigs:
            state["busy"] += 1
        return await batch(self, calls, turn)

    monkeypatch.setattr(engine.Episode, "_llm_batch", spy)

    async def reply(messages):
        if messages[0]["content"] != SUB_SYSTEM:
            task = child_task(messages)
            if task == "small":  # asks once every busy child's calls fill the slots
                await wait_for(lambda: state["busy"] == 4 and state["flight"] == 8)
            return child_turn(messages, task, 8 if task == "small" else 40)
        starts.append(re.search(r"(big\d|small) p", messages[-1]["content"]).group(1))
        state["flight"] += 1
        if not state["released"]:  # the busy children hold the slots until it asks
            await wait_for(lambda: state["released"])
        state["flight"] -= 1
        return "read"

    root = ScriptedModel([f"```python\nr = rlm_batch({bigs + ['small']!r})\n```",
                          "```python\nsubmit()\n```"])
    run_agent(small_room, tmp_path / "run", root=root, depth=2, child_concurrency=5,
              sub=ScriptedModel([reply], cycle=True))
    assert starts.count("small") == 8 and len(starts) == 4 * 40 + 8 + 1
    after = starts[starts.index("ARRIVED") + 1:]
    assert after.index("small") <= len(bigs)  # a FIFO would have let the 24 waiting go first


def test_a_repl_started_ahead_is_that_of_the_child_s_named_sub(small_room, tmp_path):
    """One child at a time: the second child's REPL starts while the first works, and tells
    it the slice size and default of the model its item names, not the run's default."""
    def model(name: str, window: int) -> ScriptedModel:
        def reply(messages):
            if sum(m["role"] == "assistant" for m in messages) == 0:
                return ("```python\nprint('TOLD', llm.context_tokens, "
                        "[n for n, m in llm.models.items() if m['default']])\n```")
            told = messages[-1]["content"].split("TOLD ", 1)[1].splitlines()[0]
            return f"```python\nsubmit({told!r})\n```"

        return ScriptedModel([reply], cycle=True, name=f"{name}-m", context_window=window)

    root = ScriptedModel(["```python\nimport json\nprint('OUT', json.dumps([rlm_batch(['b', "
                          "{'task': 'a', 'sub': 'strong'}]), llm.models['fast']['slice_tokens'],"
                          " llm.models['strong']['slice_tokens']]))\n```",
                          "```python\nsubmit()\n```"])
    run_agent(small_room, tmp_path / "run", root=root, depth=2, child_concurrency=1,
              sub={"fast": model("fast", 8192), "strong": model("strong", 32768)})
    seen = root.messages[1][-1]["content"].split("OUT ", 1)[1].splitlines()[0]
    (on_fast, on_strong), fast, strong = json.loads(seen)
    assert on_fast == f"{fast} ['fast']" and on_strong == f"{strong} ['strong']"
    assert strong > fast
