"""Error-prefix evaluation end to end: prefixes continued K times by two policies, judged,
reported per policy and kind and paired; resumable; a spec mismatch refused."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import dealroom

from dealroom.errors import ConfigError
from dealroom.eval import pool_prefixes, recover, recovery_report
from dealroom.harness import run_agent
from dealroom.models import ScriptedModel
from dealroom.room import generate_room
from dealroom.testing import MockOpenAIServer

QUIT = "```python\nsubmit()\n```"


def reader(request):
    """A sub-agent that reports one issue per document it is shown."""
    content = request["messages"][-1]["content"]
    return "\n".join(f"ISSUE: consent required in {d} | SEVERITY: high | AMOUNT: none | DOC: "
                     f"{d} | PAGE: 1" for d in re.findall(r"^=== (D\d{5}) \|", content, re.M))


@pytest.fixture(scope="module")
def servers():
    with MockOpenAIServer(reader) as sub, MockOpenAIServer(QUIT) as quitter:
        yield f"mock@{sub.base_url}", f"mock@{quitter.base_url}", quitter


@pytest.fixture(scope="module")
def pool(servers, tmp_path_factory):
    """A generated room; one run that replies without code (turn 1) and raises (turn 2)."""
    tmp = tmp_path_factory.mktemp("recover")
    room = tmp / "room"
    generate_room(room, docs=12, seed=3, secret="tests", tokens=12_000)
    root = ScriptedModel(["Let me think.", "```python\nprint(undefined_name)\n```", QUIT])
    run_agent(room, tmp / "sweep" / "episodes" / "a", root=root, sub=servers[0], max_turns=6)
    return pool_prefixes([tmp / "sweep"], tmp / "pool")


def scores(run: Path) -> dict:
    return json.loads((run / "scores.json").read_text())


def prefix_kind(pool, episode: dict) -> str:
    return next(p.kind for p in pool.prefixes if p.id == episode["prefix"])


def test_each_policy_continues_each_prefix_k_times_and_is_compared(pool, servers, tmp_path):
    _, quitter, _ = servers
    assert [(p.turn, p.kind) for p in pool.prefixes] == [(1, "no_code"), (2, "cell_error")]
    report = recover(pool.path, ["scripted", quitter], 2, tmp_path / "rec")
    state = json.loads((tmp_path / "rec" / "recover.json").read_text())
    assert len(state["episodes"]) == 2 * 2 * 2
    assert all(e["status"] == "done" for e in state["episodes"]), state["episodes"]
    runs = {e["id"]: tmp_path / "rec" / e["run"] for e in state["episodes"]}
    for e in state["episodes"]:
        config = json.loads((runs[e["id"]] / "config.json").read_text())
        prefix = next(p for p in pool.prefixes if p.id == e["prefix"])
        assert config["forked_from"]["turn"] == prefix.turn
    rows = {(r["root"], r["kind"]): r for r in report["by_policy"]}
    quits = rows[(quitter, "all")]
    assert (quits["next_step"], quits["turns"], quits["continuations"]) == (1.0, 1.0, 4)
    assert rows[("scripted", "no_code")]["next_step"] == 1.0
    original = state["originals"][pool.prefixes[0].run]
    assert original["passed"] == [] and report["tau"] == 0.5
    assert report["original_passed_nothing"] == ["p00001", "p00002"]
    for root in ("scripted", quitter):
        mine = [scores(runs[e["id"]]) for e in state["episodes"] if e["root"] == root]
        assert rows[(root, "all")]["pass_rate"] == pytest.approx(
            sum(s["pass_rate"] for s in mine) / len(mine))
    # success-based figures at a tau the scripted continuations reach after turn 1 only
    again = recovery_report(tmp_path / "rec", tau=0.05)
    assert [(r["pass_rate"], r["next_step"]) for r in again["by_policy"]] == \
        [(r["pass_rate"], r["next_step"]) for r in report["by_policy"]]
    for row in again["by_policy"]:
        mine = [(e["prefix"], scores(runs[e["id"]])) for e in state["episodes"]
                if e["root"] == row["root"] and row["kind"] in ("all", prefix_kind(pool, e))]
        # the original passed nothing: every memo would "recover" it, so recovery says n/a
        assert row["recovery"] is None and row["original_passed_nothing"] == row["prefixes"]
        assert row["success"] == pytest.approx(
            sum(s["pass_rate"] >= 0.05 for _, s in mine) / len(mine))
        assert row["beat_original"] == pytest.approx(
            sum(s["pass_rate"] > original["pass_rate"] for _, s in mine) / len(mine))
        per_prefix = {}
        for p, s in mine:
            per_prefix.setdefault(p, []).append(s["pass_rate"] >= 0.05)
        assert row["pass_at_k"]["2"] == pytest.approx(
            sum(any(v) for v in per_prefix.values()) / len(per_prefix))
    figures = {(r["root"], r["kind"]): (r["success"], r["pass_at_k"]["2"], r["beat_original"])
               for r in again["by_policy"]}
    assert figures[("scripted", "no_code")] == (1.0, 1.0, 1.0)
    assert figures[("scripted", "all")] == (0.5, 0.5, 0.5)
    assert figures[(quitter, "all")] == (0.0, 0.0, 0.0)
    # an original that passed a criterion the scripted continuations pass: recovery is real
    passed = [{r["id"] for r in scores(runs[e["id"]])["criteria_results"]
               if r["verdict"] == "pass"} for e in state["episodes"] if e["root"] == "scripted"
              and prefix_kind(pool, e) == "no_code"]
    criterion = sorted(set.intersection(*passed))[0]
    state["originals"][pool.prefixes[0].run] = {"passed": [criterion], "pass_rate": 0.05}
    (tmp_path / "rec" / "recover.json").write_text(json.dumps(state))
    real = {(r["root"], r["kind"]): r for r in recovery_report(tmp_path / "rec")["by_policy"]}
    assert real[("scripted", "no_code")]["recovery"] == 1.0
    assert real[("scripted", "no_code")]["original_passed_nothing"] == 0
    assert real[(quitter, "all")]["recovery"] == 0.0
    assert real[("scripted", "no_code")]["beat_original"] == 1.0
    pair = next(p for p in report["paired"] if p["kind"] == "all")
    assert (pair["a"], pair["b"], pair["pairs"]) == ("scripted", quitter, 2)
    assert pair["mean_diff"] == pytest.approx(
        quits["pass_rate"] - rows[("scripted", "all")]["pass_rate"])
    assert json.loads((tmp_path / "rec" / "report.json").read_text())["paired"] == \
        report["paired"]


def test_the_k_continuations_of_a_seeded_policy_differ(pool, tmp_path):
    recover(pool.path, ["scripted:coverage=0.3"], 3, tmp_path / "rec", kinds=["no_code"])
    state = json.loads((tmp_path / "rec" / "recover.json").read_text())
    runs = [tmp_path / "rec" / e["run"] for e in state["episodes"]]
    assert len(runs) == 3
    roots = [json.loads((r / "config.json").read_text())["root"] for r in runs]
    assert roots == [f"scripted:coverage=0.3,seed={s}" for s in range(3)]
    delegated = []
    for run in runs:
        sent = [e for e in map(json.loads, (run / "trajectory.jsonl").read_text().splitlines())
                if e.get("type") == "model_call" and e.get("role") == "sub"]
        delegated.append(frozenset(re.findall(r"D\d{5}", json.dumps([e["input"] for e in sent]))))
    assert all(delegated) and len(set(delegated)) == 3, delegated
    memos = {(r / "output" / "memo.md").read_text() for r in runs}
    assert len(memos) == 3


def test_running_again_plays_nothing_twice_and_resumes_what_was_cut(pool, servers, tmp_path):
    _, quitter, server = servers
    first = recover(pool.path, [quitter], 1, tmp_path / "rec")
    calls = server.calls
    assert recover(pool.path, [quitter], 1, tmp_path / "rec") == first
    assert server.calls == calls, "a finished continuation was played again"
    state = json.loads((tmp_path / "rec" / "recover.json").read_text())
    cut = tmp_path / "rec" / state["episodes"][0]["run"]
    lines = (cut / "trajectory.jsonl").read_text().splitlines()
    (cut / "trajectory.jsonl").write_text("\n".join(lines[:-1]) + "\n")  # drop its run_end
    (cut / "scores.json").unlink()
    assert recover(pool.path, [quitter], 1, tmp_path / "rec") == first
    assert server.calls == calls, "the cut continuation had played its only turn already"
    with pytest.raises(ConfigError, match="another spec"):
        recover(pool.path, [quitter], 2, tmp_path / "rec")
    with pytest.raises(ConfigError, match="unknown prefix kind typo"):
        recover(pool.path, [quitter], 1, tmp_path / "rec", kinds=["typo"])
    assert json.loads((tmp_path / "rec" / "recover.json").read_text())["k"] == 1
    with pytest.raises(ConfigError, match="is not a recovery"):
        recovery_report(pool.path)
    assert recovery_report(tmp_path / "rec") == first


def test_a_failing_continuation_is_recorded_and_the_rest_go_on(pool, servers, tmp_path):
    _, quitter, _ = servers
    report = recover(pool.path, [quitter, "nowhere@http://127.0.0.1:9/v1"], 1,
                     tmp_path / "rec", kinds=["cell_error"])
    assert [f["root"] for f in report["failed"]] == ["nowhere@http://127.0.0.1:9/v1"]
    assert report["failed"][0]["error"]
    assert next(r for r in report["by_policy"] if r["root"] == quitter)["continuations"] == 1


def test_a_process_pool_gives_the_same_report(pool, servers, tmp_path):
    _, quitter, _ = servers
    here = recover(pool.path, ["scripted", quitter], 1, tmp_path / "here")
    there = recover(pool.path, ["scripted", quitter], 1, tmp_path / "there", workers=2)
    assert there["by_policy"] == here["by_policy"] and there["paired"] == here["paired"]


def test_cli_recover(pool, servers, tmp_path):
    _, quitter, _ = servers
    done = dealroom("eval", "recover", str(pool.path), "--root", quitter, "--k", "1", "--out",
                    str(tmp_path / "rec"), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["continuations"] == 2
    table = subprocess.run([sys.executable, "-m", "dealroom", "eval", "recover", str(pool.path),
                            "--root", quitter, "--k", "1", "--out", str(tmp_path / "rec"),
                            "--tau", "0.3"], capture_output=True, text=True, timeout=180,
                           env={**os.environ, "COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    assert "pass rate >= 0.3" in table.stdout and "Pass@1" in table.stdout
    assert "(2 vacuous)" in table.stdout and "2 prefixes come from runs that passed no" in \
        table.stdout
