"""Fixtures of the report's tests: a judged scripted run, a hand-written run with a child
and a judge error, and a sweep of copies of the scripted run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dealroom.runs import memo_delta


@pytest.fixture(scope="session")
def scripted_run(generated_room, tmp_path_factory) -> Path:
    """A scripted run (oracle sub-agent) on the generated room, judged and judged by turn."""
    from dealroom.harness import run_agent
    from dealroom.judge import judge_by_turn, judge_run

    run = tmp_path_factory.mktemp("runs") / "scripted"
    run_agent(generated_room, run, root="scripted", sub="oracle")
    judge_run(run)
    judge_by_turn(run)
    return run


def _event(seq: int, kind: str, agent: str = "root", **fields) -> dict:
    depth = agent.count("/")
    return {"seq": seq, "t": seq / 10, "type": kind, "agent": agent, "depth": depth, **fields}


USAGE = {"input_tokens": 120, "cached_input_tokens": 0, "output_tokens": 30, "cost_usd": 0.002,
         "calls": 1}


@pytest.fixture
def child_run(generated_room, tmp_path) -> Path:
    """A run folder written by hand: a root turn that sends one sub-call and starts a child
    (which runs one turn of its own), a memo citing D00002 p.2, and scores with a judge error."""
    run = tmp_path / "child-run"
    (run / "output").mkdir(parents=True)
    config = {"version": 1, "harness": "rlm", "room": str(generated_room), "root": "scripted",
              "sub": "oracle", "settings": {"depth": 2, "max_turns": 4},
              "deliverables": {"memo": "memo.md"}}
    (run / "config.json").write_text(json.dumps(config))
    sub_input = {"prompt": "List the issues.", "text": None, "truncated": False,
                 "docs": [{"id": "D00002", "pages": [1, 3], "chars": [0, 900]}]}
    events = [
        _event(0, "run_start", room="g20", docs=20, tokens=1000),
        _event(1, "model_call", role="root", model="scripted", call_id="root/t1", turn=1,
               wave=None, input={"messages": []}, output="```python\nprint(1)\n```",
               usage=USAGE, error=None, latency_s=0.5, provider={}, tokens=None),
        _event(2, "model_call", agent="root", role="sub", model="oracle", call_id="root/t1/s0",
               turn=1, wave=1, input=sub_input, output="ISSUE: change of control",
               usage=USAGE, error=None, latency_s=0.25, provider={}, tokens=None),
        _event(3, "wave", wave=1, calls=1, ok=1, failed=0, seconds=0.25),
        _event(4, "child_start", call_id="root/t1/s1", task="read the litigation folder",
               budget={"max_turns": 2}),
        _event(5, "model_call", agent="root/c1-0", role="child_root", model="scripted",
               call_id="root/c1-0/t1", turn=1, wave=None, input={"messages": []},
               output="child reply", usage=USAGE, error=None, latency_s=0.1, provider={},
               tokens=None),
        _event(6, "cell", agent="root/c1-0", turn=1, code="print('child cell')",
               output="child output", error=None, timed_out=False, crashed=False, seconds=0.01),
        _event(7, "child_end", call_id="root/t1/s1", status="submitted", reason="",
               text="the child's answer", turns=1),
        _event(8, "cell", turn=1, code="print(room.tree())", output="x" * 10 +
               "\n[... 5,000 of 9,000 characters cut ...]\n" + "y" * 10, error=None,
               timed_out=False, crashed=False, seconds=0.02),
        _event(9, "memo", sections=1, chars=60),
        _event(10, "run_end", status="submitted", reason="the agent called submit()", turns=1,
               ended="submitted"),
    ]
    (run / "trajectory.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    memo = "# Memo\n\n- Change of control at Acme [D00002 p.2]\n"
    (run / "output" / "memo.md").write_text(memo)
    (run / "memo_history.jsonl").write_text(json.dumps(
        {"turn": 1, "ops": memo_delta("", memo), "chars": len(memo)}) + "\n")
    scores = {"summary": "1/2 criteria passed", "pass_rate": 0.5, "all_pass": False,
              "judge": {"name": "reference"}, "pass_rate_by_type": {"fact": {"pass_rate": 1.0}},
              "criteria_results": [
                  {"id": "C-001", "title": "change of control", "verdict": "pass",
                   "reasoning": "stated together at line 3: - Change of control at Acme"},
                  {"id": "C-002", "title": "the amount", "verdict": "error",
                   "reasoning": "the judge's reply could not be parsed"}]}
    (run / "scores.json").write_text(json.dumps(scores))
    return run


@pytest.fixture(scope="session")
def copied_sweep(scripted_run, tmp_path_factory) -> Path:
    """A sweep of real run folders (copies of the scripted run) as ``dealroom eval sweep``
    lays them out: two policies x 2 samples at T = 8, with scores scaled per policy and seed."""
    sweep = tmp_path_factory.mktemp("report-sweep") / "sweep"
    config = json.loads((scripted_run / "config.json").read_text())
    entries = []
    for root, scale in (("scripted", 1.0), ("scripted:coverage=0.3", 0.5)):
        for seed in (0, 1):
            eid = f"g20/{root}__oracle/d1-T8-s{seed}"
            run = sweep / "episodes" / eid
            shutil.copytree(scripted_run, run)
            (run / "config.json").write_text(json.dumps({**config, "root": root}))
            scores = json.loads((run / "scores.json").read_text())
            scores["pass_rate"] *= scale - 0.1 * seed
            (run / "scores.json").write_text(json.dumps(scores))
            entries.append({"id": eid, "room": "g20", "room_path": config["room"],
                            "root": root, "sub": "oracle", "depth": 1, "max_turns": 8,
                            "seed": seed, "status": "done"})
    spec = {"budget_visible": True, "max_turns": [8], "samples": 2}
    (sweep / "sweep.json").write_text(json.dumps({"version": 1, "spec": spec,
                                                  "episodes": entries}))
    return sweep


QUIT = "```python\nsubmit()\n```"


@pytest.fixture(scope="session")
def small_generated_room(tmp_path_factory) -> Path:
    """A generated 12-document room: with ``generated_room``, rooms of two sizes."""
    from dealroom.room import generate_room

    room = tmp_path_factory.mktemp("generated") / "g12"
    generate_room(room, docs=12, seed=3, secret="tests", tokens=12_000)
    return room


@pytest.fixture(scope="session")
def recovery_folder(generated_room, tmp_path_factory) -> Path:
    """A real ``dealroom eval recover`` folder: a run that replies without code (turn 1) and
    raises (turn 2), pooled, each prefix continued twice by the scripted root."""
    from dealroom.eval import pool_prefixes, recover
    from dealroom.harness import run_agent
    from dealroom.models import ScriptedModel

    tmp = tmp_path_factory.mktemp("recovery")
    root = ScriptedModel(["Let me think.", "```python\nprint(undefined_name)\n```", QUIT])
    run_agent(generated_room, tmp / "runs" / "episodes" / "a", root=root, sub="oracle",
              max_turns=6)
    pool = pool_prefixes([tmp / "runs"], tmp / "pool")
    recover(pool.path, ["scripted"], 2, tmp / "rec")
    return tmp / "rec"


def _metrics(coverage: float, cost: float, sub_calls: int) -> dict:
    return {"usage": {"total": {"input_tokens": 1000, "output_tokens": 100, "cost_usd": cost},
                      "by_role": {"root": {"input_tokens": 100, "output_tokens": 50}},
                      "split": {"root": {"input_tokens": 100, "output_tokens": 50},
                                "sub.default": {"input_tokens": 900, "output_tokens": 50,
                                                "cost_usd": cost}}},
            "behaviour": {"sub_calls": sub_calls, "turns": 3},
            "coverage": {"coverage": coverage}, "wall_s": 2.0}


@pytest.fixture
def mixed_sources(sweep_builder, generated_room, small_generated_room, recovery_folder):
    """A budget-visible sweep (T = 4 and 16, 3 samples, rooms of 12 and 20 documents), a
    hidden-budget sweep (its runs at T = 16 judged by turn) and a recovery folder."""
    rooms = {"g12": small_generated_room, "g20": generated_room}
    visible = sweep_builder("vis", max_turns=[4, 16], samples=3)
    hidden = sweep_builder("hid", max_turns=[4, 16], samples=3, budget_visible=False)
    for name, room in rooms.items():
        docs = 12 if name == "g12" else 20
        for seed in range(3):
            for turns in (4, 16):
                rate = (0.2 if turns == 4 else 0.6) + 0.1 * seed + (0.1 if docs == 20 else 0)
                calls = 2 + seed if turns == 4 else docs // 2
                visible.episode(name, "scripted", max_turns=turns, seed=seed, pass_rate=rate,
                                room_path=str(room), by_type={"fact": rate, "citation": 0.5},
                                by_turn=[rate / 2, rate],
                                metrics=_metrics(0.0 if seed == 0 else 0.01 * turns * (seed + 1),
                                                 0.1 * rate, calls))
            by_turn = [min(1.0, 0.05 * t + 0.1 * seed) for t in range(1, 17)]
            hidden.episode(name, "scripted", max_turns=16, seed=seed, pass_rate=by_turn[-1],
                           room_path=str(room), by_turn=by_turn,
                           metrics=_metrics(0.3, 0.0, docs // 2))
    return [visible.write(), hidden.write(), recovery_folder]


@pytest.fixture
def roots_sweep(sweep_builder):
    """Two roots x two rooms x depth 1 and 2 x two samples at T = 8, with costs: the grid,
    depth and difference plots."""
    sweep = sweep_builder("roots", max_turns=[8], samples=2)
    for room in ("r1", "r2"):
        for root, base in (("a", 0.8), ("b", 0.3)):
            for depth in (1, 2):
                for seed in (0, 1):
                    rate = base - 0.1 * seed - 0.2 * (depth - 1) + (0.1 if room == "r2" else 0)
                    sweep.episode(room, root, depth=depth, seed=seed, pass_rate=rate,
                                  all_pass=rate > 0.6, by_type={"fact": rate, "citation": 0.5},
                                  metrics=_metrics(0.5 * rate, 0.1 + rate, 4))
    return sweep.write()
