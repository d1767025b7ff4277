"""``--max-seconds`` ends a run even while the host works on what the root wrote, or while
every sub-call waits, and the run still writes its ``run_end`` and ``metrics.json``."""

import asyncio
import gc
import json
import threading

import pytest
from support.hostile import HostileServer

import dealroom.models._budget as budget_module
import dealroom.runs._recorder as recorder_module
from dealroom.harness import run_agent, run_agent_async
from dealroom.models import ScriptedModel
from dealroom.runs import RunFolder


def events_of(run):
    return [json.loads(x) for x in (run / "trajectory.jsonl").read_text().splitlines()]


def ended_with_its_records(run, result, status="budget_exhausted"):
    assert result.status == status, result.reason
    events = events_of(run)
    assert events[-1]["type"] == "run_end" and events[-1]["status"] == status
    assert events[-1]["ended"] == "budget_exhausted"
    assert json.loads((run / "metrics.json").read_text())["status"] == status
    return events


@pytest.fixture
def host_work_that_never_ends(monkeypatch):
    """The memo history's delta blocks until the test lets it go (or for ten minutes, past
    the test's time-out): only the run's clock can end the run meanwhile."""
    entered, release, left = threading.Event(), threading.Event(), threading.Event()

    def delta(old, new):
        entered.set()
        release.wait(600)
        left.set()
        return [[0, len(old.splitlines()), new.splitlines(keepends=True)]]

    monkeypatch.setattr(recorder_module, "memo_delta", delta)
    yield entered, release, left
    release.set()


@pytest.mark.parametrize("harness", ["toolloop", "rlm"])
def test_the_clock_ends_a_run_whose_host_work_on_the_memo_does_not(
        harness, small_room, tmp_path, host_work_that_never_ends):
    entered, release, left = host_work_that_never_ends
    if harness == "toolloop":
        root = ScriptedModel(['```tool\n{"name": "write", "arguments": {"text": "# Memo\\n"}}\n'
                              '```'], cycle=True)
        options = {"max_seconds": 1}
    else:  # the sandbox starts within the budget, then the first cell writes the memo
        root = ScriptedModel(["```python\nmemo.write('# Memo\\n')\n```"], cycle=True)
        options = {"max_seconds": 8, "sub": ScriptedModel(["x"])}
    run = tmp_path / "run"
    result = run_agent(small_room, run, harness=harness, root=root, max_turns=50, **options)
    assert entered.is_set() and not left.is_set(), "the delta was still being worked out"
    assert "stopped 5 s past it" in result.reason
    ended_with_its_records(run, result)
    assert (run / "output" / "memo.md").read_text() == "# Memo\n"
    release.set()
    assert left.wait(60)
    assert not (run / "memo_history.jsonl").exists(), "what ends after the run is dropped"


def test_large_random_memos_are_recorded_and_rebuilt_exactly(small_room, tmp_path):
    write = ("import random\nrng = random.Random({seed})\n"
             "memo.write(''.join(''.join(rng.choice('ab ') for _ in range(rng.randint(0, 12)))"
             " + '\\n' for _ in range(200_000)))")
    root = ScriptedModel([f"```python\n{write.format(seed=seed)}\n```" for seed in (1, 2)]
                         + ["```python\nsubmit()\n```"])
    run = tmp_path / "run"
    result = run_agent(small_room, run, root=root, sub=ScriptedModel(["x"]), max_turns=5,
                       max_seconds=600)
    assert result.status == "submitted", result.reason
    history = RunFolder.open(run).memo_history()
    assert [turn for turn, _ in history] == [1, 2]
    assert history[-1][1] == (run / "output" / "memo.md").read_text()
    assert len(history[0][1]) > 1_000_000 and history[0][1] != history[1][1]


def test_a_run_whose_every_sub_call_waits_for_the_reply_budget_ends_with_its_records(
        small_room, tmp_path, monkeypatch):
    """64 calls, each answered by a reply that declares 8 MiB and stalls after 2: the first
    holds the whole byte budget, the others wait for it until the clock cuts the wave."""
    monkeypatch.setattr(budget_module, "REPLY_BUDGET_BYTES", 8 * 2**20)
    root = ScriptedModel([
        "```python\nr = llm_batch([{'prompt': f'q{i}'} for i in range(64)])\n```",
    ], cycle=True)
    run = tmp_path / "run"
    logged = []

    async def go():
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _, context: logged.append(context["message"]))
        async with HostileServer("huge_stalled", size=8 * 2**20) as srv:
            result = await run_agent_async(small_room, run, root=root,
                                           sub=f"m@{srv.base_url}#timeout=600,deadline=600",
                                           max_turns=3, max_seconds=8, concurrency=64)
            budget = budget_module.reply_budget()
        gc.collect()  # a task whose exception nobody took would be logged now
        await asyncio.sleep(0)
        return result, budget

    result, budget = asyncio.run(go())
    events = ended_with_its_records(run, result, "degraded")  # every sub-call failed
    assert "seconds budget used up; 64 of 64 sub-calls failed" in result.reason
    assert budget.waited >= 32, "the calls waited for the byte budget"
    subs = [e for e in events if e["type"] == "model_call" and e["role"] == "sub"]
    assert len(subs) == 64 and all(e["error"] for e in subs), "every call cut, and recorded"
    assert not [m for m in logged if "never retrieved" in m], logged
