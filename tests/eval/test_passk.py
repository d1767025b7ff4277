"""Pass@(K,T) in both settings, the table with its intervals, and what passk refuses."""

import json
import warnings

import pytest
from support.cli import dealroom
from typer.testing import CliRunner

from dealroom.cli import app
from dealroom.errors import ConfigError, DealroomWarning
from dealroom.eval import pass_at_k, passk, table
from dealroom.harness import run_agent
from dealroom.judge import judge_by_turn, judge_memo, judge_run
from dealroom.runs import RunFolder, RunRecorder

KEYS = {"root", "sub", "depth", "max_turns", "k", "pass_at_k", "rooms"}


def cell(rows, **where):
    return [r for r in rows if all(r[k] == v for k, v in where.items())]


def test_budget_visible_pass_at_k_is_the_mean_over_rooms(sweep_builder):
    sweep = sweep_builder(max_turns=[4, 8], samples=3)
    outcomes = {("r1", 4): [0.6, 0.2, 0.1], ("r2", 4): [0.1, 0.0, 0.2],
                ("r1", 8): [0.7, 0.9, 0.4], ("r2", 8): [0.5, 0.1, 0.3]}
    for (room, turns), rates in outcomes.items():
        for seed, rate in enumerate(rates):
            sweep.episode(room, "scripted", max_turns=turns, seed=seed, pass_rate=rate)
    rows = passk(sweep.write(), tau=0.5)
    assert len(rows) == 2 * 3 and all(set(r) >= KEYS for r in rows)
    t4 = cell(rows, max_turns=4)
    assert [r["pass_at_k"] for r in t4] == pytest.approx(
        [(1 / 3 + 0) / 2, (pass_at_k(3, 1, 2) + 0) / 2, 0.5])
    t8 = cell(rows, max_turns=8, k=1)[0]
    assert t8["pass_at_k"] == pytest.approx((2 / 3 + 1 / 3) / 2) and t8["rooms"] == 2
    assert t8["simulated"] and t8["setting"] == "visible"
    all_pass = passk(sweep.path, tau=None)
    assert {r["pass_at_k"] for r in all_pass} == {0.0}
    with pytest.raises(ConfigError, match="k = 4 is more than the 3 samples"):
        passk(sweep.path, k=4)


def _scripted_history(tmp_path, room, states, turns):
    folder = RunFolder.create(tmp_path, {"room": str(room), "harness": "rlm",
                                         "root": "scripted", "sub": "oracle",
                                         "settings": {"depth": 1, "max_turns": 8}})
    rec = RunRecorder(folder)
    for turn, memo in states.items():
        folder.write_deliverable("memo", memo)
        rec.memo_turn(turn, memo)
    rec.event("run_end", status="max_turns", reason="turns", turns=turns)
    rec.close()
    judge_run(folder.path)
    judge_by_turn(folder.path)
    return folder.path


def test_truncation_reads_each_run_as_of_turn_t_from_its_memo_history(sweep_builder,
                                                                      generated_room):
    gold = (generated_room / "answer_key" / "gold_memo.md").read_text()
    sweep = sweep_builder(max_turns=[2, 4, 8], samples=2, budget_visible=False)
    sweep.episode("g20", "scripted", seed=0, room_path=str(generated_room))
    sweep.episode("g20", "scripted", seed=1, room_path=str(generated_room))
    base = sweep.path / "episodes" / "g20" / "scripted__oracle"
    for seed, states in ((0, {1: "# Memo\n", 5: gold}), (1, {2: gold})):
        run = base / f"d1-T8-s{seed}"
        for name in ("config.json", "trajectory.jsonl", "scores.json"):
            (run / name).unlink()
        _scripted_history(run, generated_room, states, turns=8)
    rows = passk(sweep.write(), tau=0.5)
    assert {r["setting"] for r in rows} == {"truncation"}
    got = {(r["max_turns"], r["k"]): r["pass_at_k"] for r in rows}
    # seed 0 passes from turn 5, seed 1 from turn 2: at T=2 and T=4 one of two samples passes
    assert got == {(2, 1): 0.5, (2, 2): 1.0, (4, 1): 0.5, (4, 2): 1.0, (8, 1): 1.0, (8, 2): 1.0}
    assert judge_memo(generated_room, "# Memo\n").pass_rate < 0.5


def test_truncation_agrees_with_judging_a_real_scripted_run_turn_by_turn(tmp_path,
                                                                         generated_room):
    run = tmp_path / "runs" / "one"
    run_agent(generated_room, run, root="scripted", sub="oracle", max_turns=8,
              budget_visible=False)
    judge_run(run)
    by_turn = judge_by_turn(run)["by_turn"]
    folder = RunFolder.open(run)
    for row in by_turn:
        assert row["pass_rate"] == judge_memo(generated_room,
                                              folder.memo_at(row["turn"])).pass_rate
    rows = passk(tmp_path / "runs", tau=0.5, setting="truncation")
    assert rows[0]["max_turns"] == 8 and rows[0]["pass_at_k"] == float(
        by_turn[-1]["pass_rate"] >= 0.5)


def test_truncation_needs_the_runs_judged_by_turn(sweep_builder):
    sweep = sweep_builder(max_turns=[4, 8], budget_visible=False)
    sweep.episode("r1", "scripted", pass_rate=0.6)
    with pytest.raises(ConfigError, match="not judged by turn"):
        passk(sweep.write())


def test_the_table_groups_with_an_interval_over_rooms(sweep_builder):
    sweep = sweep_builder()
    for room, rate in (("r1", 0.2), ("r2", 0.4), ("r3", 0.9)):
        sweep.episode(room, "scripted", pass_rate=rate, by_type={"fact": rate / 2},
                      metrics={"coverage": {"coverage": 0.5},
                               "usage": {"total": {"cost_usd": 1.0}},
                               "behaviour": {"sub_calls": 4}})
        sweep.episode(room, "scripted", sub="local", pass_rate=rate / 2, all_pass=True)
    rows = table(sweep.write(), by=["sub"])
    oracle = next(r for r in rows if r["sub"] == "oracle")
    assert oracle["pass_rate"] == pytest.approx(0.5) and oracle["rooms"] == 3
    assert oracle["ci_low"] < 0.5 < oracle["ci_high"] and oracle["simulated"]
    assert oracle["coverage"] == 0.5 and oracle["cost_usd"] == 1.0 and oracle["all_pass"] == 0
    local = next(r for r in rows if r["sub"] == "local")
    assert local["all_pass"] == 1.0 and not local["simulated"] and local["coverage"] is None
    by_type = table(sweep.path, by=["type"])
    assert [r["type"] for r in by_type] == ["fact"]
    with pytest.raises(ConfigError, match="--by colour"):
        table(sweep.path, by=["colour"])


def test_the_commands_print_json_and_tables(sweep_builder):
    sweep = sweep_builder(max_turns=[8], samples=2)
    for seed in range(2):
        sweep.episode("r1", "scripted", seed=seed, pass_rate=0.5 + seed / 4)
    path = sweep.write()
    out = CliRunner().invoke(app, ["eval", "passk", str(path), "--tau", "0.6", "--json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)
    assert [(r["k"], r["pass_at_k"]) for r in rows] == [(1, 0.5), (2, 1.0)]
    shown = CliRunner().invoke(app, ["eval", "passk", str(path), "--all-pass"])
    assert "pass@2" in shown.output and "simulated sub-agent" in shown.output
    both = CliRunner().invoke(app, ["eval", "passk", str(path), "--all-pass", "--tau", "0.3"])
    assert isinstance(both.exception, ConfigError)
    assert CliRunner().invoke(app, ["eval", "table", str(path)]).exit_code == 0


def test_the_table_orders_turn_budgets_as_numbers(sweep_builder):
    sweep = sweep_builder(max_turns=[4, 16, 32])
    for turns in (32, 16, 4):
        sweep.episode("r1", "scripted", max_turns=turns, pass_rate=0.5)
    rows = table(sweep.write(), by=["max_turns"])
    assert [r["max_turns"] for r in rows] == [4, 16, 32]


def test_an_unknown_selector_key_names_the_keys(sweep_builder):
    sweep = sweep_builder()
    sweep.episode("r1", "scripted", pass_rate=0.5)
    path = sweep.write()
    for run in (lambda s: passk(s), lambda s: table(s)):
        with pytest.raises(ConfigError, match="unknown selector key 'policy'.*root, sub, depth, "
                                              "max_turns, room, seed"):
            run(f"{path}:policy=scripted")
    assert table(f"{path}:root=scripted")[0]["episodes"] == 1


def test_the_visible_setting_of_a_budget_hidden_sweep_is_warned_about(sweep_builder):
    sweep = sweep_builder(max_turns=[4, 8], budget_visible=False)
    sweep.episode("r1", "scripted", max_turns=8, pass_rate=0.6, by_turn=[0.0] * 4 + [0.6] * 4)
    path = sweep.write()
    with pytest.warns(DealroomWarning, match="budget-hidden sweep"):
        assert passk(path, setting="visible")[0]["setting"] == "visible"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert {r["setting"] for r in passk(path)} == {"truncation"}
        visible = sweep_builder("visible", max_turns=[4, 8])
        visible.episode("r1", "scripted", max_turns=8, pass_rate=0.6, by_turn=[0.6] * 8)
        assert passk(visible.write(), setting="truncation")[0]["max_turns"] == 4
    shown = dealroom("eval", "passk", str(path), "--setting", "visible")
    assert shown.returncode == 0 and "warning: " in shown.stderr
    assert "budget-hidden sweep" in shown.stderr and "Traceback" not in shown.stderr


def test_an_interval_over_three_rooms_is_warned_about(sweep_builder):
    sweep = sweep_builder()
    for room, rate in (("r1", 0.2), ("r2", 0.4), ("r3", 0.9), ("r4", 0.5)):
        sweep.episode(room, "scripted", pass_rate=rate)
        if room != "r4":
            sweep.episode(room, "scripted", sub="local", pass_rate=rate)
    path = sweep.write()
    with pytest.warns(DealroomWarning, match=r"degenerate intervals \(1 of 2 groups over 3 "):
        rows = table(path, by=["sub"])
    local = next(r for r in rows if r["sub"] == "local")
    assert (local["ci_low"], local["ci_high"]) == pytest.approx((0.2, 0.9))  # lowest, highest
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table(f"{path}:sub=oracle")
