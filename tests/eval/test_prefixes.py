"""Pooling failure points of recorded runs (``dealroom eval prefixes``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import dealroom

from dealroom.errors import ConfigError, ModelError
from dealroom.eval import PrefixPool, pool_prefixes, run_sweep
from dealroom.harness import fork_run, run_agent
from dealroom.models import ScriptedModel

ROOT = [
    "I will think first.",                                                     # 1 no_code
    "```python\nprint(1 / 0)\n```",                                            # 2 cell_error
    "```python\nr = llm_batch(['read it', 'FAIL this one'])\nprint(r)\n```",   # 3 failed_wave
    "```python\nx = 1\n```",
    "```python\nx += 1\n```",
    "```python\nx += 1\n```",                                                  # 6 low_budget
    "```python\nmemo.section('Findings', 'None.')\n```",
    "```python\nsubmit()\n```",
]


def sub_reply(messages):
    if "FAIL" in messages[-1]["content"]:
        raise ModelError("provider down", model="sub")
    return "NONE"


@pytest.fixture(scope="module")
def sweep(small_room, tmp_path_factory):
    """A folder of two runs: the RLM run above (judged) and a tool-loop run with a bad read."""
    tmp = tmp_path_factory.mktemp("prefixes") / "sweep" / "episodes"
    sub = ScriptedModel([sub_reply], cycle=True, name="sub", context_window=8192)
    run_agent(small_room, tmp / "rlm", root=ScriptedModel(ROOT, name="r"), sub=sub,
              max_turns=8)
    (tmp / "rlm" / "scores.json").write_text(json.dumps({"pass_rate": 0.5, "criteria_results": [
        {"id": "C-002", "verdict": "pass"}, {"id": "C-001", "verdict": "fail"},
        {"id": "C-003", "verdict": "pass"}]}))
    tools = ScriptedModel(['```tool\n{"name": "list", "arguments": {}}\n```',
                           '```tool\n{"name": "read", "arguments": {"doc": "D99999"}}\n```',
                           '```tool\n{"name": "list", "arguments": {}}\n```', "done"], name="t")
    run_agent(small_room, tmp / "tools", harness="toolloop", root=tools, max_turns=10)
    return tmp.parent


def test_every_kind_of_failure_is_pooled_with_its_remaining_budget(sweep, tmp_path):
    pool = pool_prefixes([sweep], tmp_path / "pool")
    got = [(p.run.rsplit("/", 1)[1], p.turn, p.kind, p.remaining) for p in pool.prefixes]
    assert got == [("rlm", 1, "no_code", 7), ("rlm", 2, "cell_error", 6),
                   ("rlm", 3, "failed_wave", 5), ("rlm", 6, "low_budget", 2),
                   ("tools", 2, "tool_error", 8)]
    first = pool.prefixes[1]
    assert first.id == "p00002" and first.detail == "ZeroDivisionError: division by zero"
    assert first.passed == ["C-002", "C-003"] and first.pass_rate == 0.5
    assert pool.prefixes[2].detail == "1 of 2 calls failed"
    assert pool.prefixes[4].passed is None and pool.prefixes[4].root == "t"
    again = PrefixPool.load(tmp_path / "pool")
    assert again.prefixes == pool.prefixes and again.info["counts"]["no_code"] == 1


def test_kinds_select_and_pooled_points_fork(sweep, tmp_path):
    pool = pool_prefixes([sweep], tmp_path / "pool", kinds=["failed_wave"])
    assert [p.kind for p in pool.prefixes] == ["failed_wave"]
    p = pool.prefixes[0]
    fork = fork_run(p.run, p.turn, tmp_path / "fork",
                    root=ScriptedModel(["```python\nprint(r)\nsubmit()\n```"]),
                    sub=ScriptedModel(["unused"], name="sub"))
    assert fork.status == "submitted" and fork.turns == p.turn + 1


def test_a_fork_pools_only_its_own_turns(sweep, tmp_path):
    fork_run(sweep / "episodes" / "rlm", 2, tmp_path / "runs" / "fork",
             root=ScriptedModel(["no code again", "```python\nsubmit()\n```"]),
             sub=ScriptedModel(["unused"], name="sub"))
    pool = pool_prefixes([tmp_path / "runs"], tmp_path / "pool")
    assert [(p.turn, p.kind) for p in pool.prefixes] == [(3, "no_code")]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"kinds": ["typo"]}, "unknown prefix kind typo"), ({"near": 1.5}, "between 0 and 1")])
def test_bad_choices_are_refused(sweep, tmp_path, kwargs, match):
    with pytest.raises(ConfigError, match=match):
        pool_prefixes([sweep], tmp_path / "pool", **kwargs)


def test_cli_prefixes_refuses_a_used_folder(sweep, tmp_path):
    cli = ["eval", "prefixes", str(sweep)]
    done = dealroom(*cli, "--out", str(tmp_path / "pool"), "--kinds", "cell_error,no_code")
    assert done.returncode == 0, done.stderr
    assert "2 prefixes" in done.stdout
    rows = (tmp_path / "pool" / "prefixes.jsonl").read_text().splitlines()
    assert [json.loads(r)["kind"] for r in rows] == ["no_code", "cell_error"]
    again = dealroom(*cli, "--out", str(tmp_path / "pool"))
    assert again.returncode == 1 and "already holds files" in again.stderr
    assert len((tmp_path / "pool" / "prefixes.jsonl").read_text().splitlines()) == 2


@pytest.fixture(scope="module")
def scripted_sweep(generated_room, tmp_path_factory):
    """An offline sweep (scripted root, oracle sub, reference judge), kept two folders deep."""
    tmp = tmp_path_factory.mktemp("offline")
    spec = tmp / "spec.toml"
    spec.write_text(f'rooms = ["{generated_room}"]\nroots = ["scripted", "scripted:coverage=0.3"]\n'
                    'subs = ["oracle"]\nmax_turns = [4, 8]\n')
    run_sweep(spec, tmp / "studies" / "a" / "sweep", workers=1)
    return tmp / "studies"


def test_an_offline_scripted_sweep_yields_failure_points_of_the_new_kinds(scripted_sweep,
                                                                          tmp_path):
    sweep = scripted_sweep / "a" / "sweep"
    runs = {e["id"]: e for e in json.loads((sweep / "sweep.json").read_text())["episodes"]}
    assert all(e["status"] == "done" for e in runs.values())
    old = pool_prefixes([scripted_sweep], tmp_path / "old",
                        kinds=["cell_error", "failed_wave", "no_code", "low_budget"])
    assert old.prefixes == []  # nothing fails on its own offline: the pool was empty
    pool = pool_prefixes([scripted_sweep], tmp_path / "pool", kinds=["failed_run", "turn=2"])
    assert {p.kind for p in pool.prefixes} == {"failed_run", "turn=2"}
    failed = {p.run for p in pool.prefixes if p.kind == "failed_run"}
    assert failed == {str((sweep / "episodes" / i).resolve()) for i, e in runs.items()
                      if e["pass_rate"] < 0.5}
    for run in failed:  # every turn a fork can continue: 1 .. the turn before the last
        turns = [p.turn for p in pool.prefixes if p.run == run and p.kind == "failed_run"]
        last = json.loads((Path(run) / "metrics.json").read_text())["behaviour"]["turns"]
        assert turns == list(range(1, last))
    second = [(p.run, p.remaining) for p in pool.prefixes if p.kind == "turn=2"]
    assert len(second) == 4 and {r for _, r in second} == {2, 6}
    assert pool.info["counts"] == {"failed_run": len(pool.prefixes) - 4, "turn=2": 4}


def test_a_selector_chooses_the_runs_pooled(scripted_sweep, tmp_path):
    sweep = scripted_sweep / "a" / "sweep"
    pool = pool_prefixes([f"{sweep}:root=scripted,max_turns=8"], tmp_path / "pool",
                         kinds=["turn=3"])
    assert [(Path(p.run).parent.name, Path(p.run).name) for p in pool.prefixes] == \
        [("scripted__oracle", "d1-T8-s0")]
    assert pool.info["sources"] == [f"{sweep.resolve()}:root=scripted,max_turns=8"]
    with pytest.raises(ConfigError, match="unknown selector key 'model'.*root, sub, depth"):
        pool_prefixes([f"{sweep}:model=x"], tmp_path / "other")
    with pytest.raises(ConfigError, match="unknown prefix kind turn=0"):
        pool_prefixes([sweep], tmp_path / "other", kinds=["turn=0"])
