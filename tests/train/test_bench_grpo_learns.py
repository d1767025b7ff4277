"""benchmarks/bench_grpo_learns.py on the tiny in-code model at its --quick size: every stage
writes its records, the figures have their fields, and a second run trains on from the last
GRPO checkpoint without redoing the SFT (the figures themselves are not checked: the tiny
model learns nothing)."""

import argparse
import json
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_grpo_learns
    finally:
        sys.path.remove(str(BENCHMARKS))
    return bench_grpo_learns


def test_training_stops_before_a_step_that_would_pass_the_budget(bench):
    args = argparse.Namespace(minutes=1.0, max_steps=3)
    assert not bench.should_stop([], argparse.Namespace(minutes=1e-6, max_steps=3))
    assert not bench.should_stop([{"step_s": 20.0}], args)  # 20 + 20 <= 60
    assert bench.should_stop([{"step_s": 31.0}], args)  # 31 + 31 > 60
    assert not bench.should_stop([{"step_s": 10.0}] * 2, args)
    assert bench.should_stop([{"step_s": 1.0}] * 3, args)  # --max-steps


def test_quick_sets_small_defaults_and_explicit_flags_win(bench):
    args = bench.parse(["--quick", "--group", "3"])
    assert (args.turns, args.tokens, args.group, args.coverages) == (3, 128, 3, [1.0, 0.3])
    assert bench.parse([]).turns == 6 and bench.parse([]).tokens == 1536
    with pytest.raises(SystemExit):
        bench.parse(["--programs", "0,1"])


def _run(bench, tiny_model_dir, out, steps):
    return bench.run(bench.parse(["--quick", "--model", f"hf:{tiny_model_dir}", "--out",
                                  str(out), "--max-steps", str(steps), "--max-length", "8192"]))


@pytest.mark.slow  # about 70 s of CPU: two runs of every stage
def test_the_benchmark_writes_its_figures_and_trains_on_when_run_again(
        bench, tiny_model_dir, tmp_path, monkeypatch, capsys):
    import dealroom.train

    out = tmp_path / "bench"
    first = _run(bench, tiny_model_dir, out, 1)
    saved = json.loads((out / "results.json").read_text())
    assert saved["grpo"] == json.loads(json.dumps(first["grpo"]))
    assert len(saved["rooms"]["train"]) == 2 and len(saved["rooms"]["heldout"]) == 2
    programs = saved["start_policy"]["programs"]
    assert set(programs) == {"scripted", "scripted:coverage=0.3"}
    assert all(len(p["pass_rate"]) == 3 and p["episodes"] == 2 for p in programs.values())
    assert saved["start_policy"]["export"]["kept"] == 4
    assert saved["start_policy"]["sft"]["steps"] == 4
    grpo = saved["grpo"]
    assert (grpo["steps"], grpo["stopped_by"], grpo["resumed_from"]) == (1, "max_steps", None)
    assert grpo["checkpoint"].endswith("checkpoint-1") and saved["curve"] == grpo["curve"]
    assert set(grpo["curve"][0]) == set(bench.CURVE) and grpo["curve"][0]["step"] == 1
    evaluation = saved["evaluation"]
    for name in ("start", "trained", "scripted"):
        assert evaluation[name]["episodes"] == 2 and evaluation[name]["judged"] == 2
        assert len(evaluation[name]["pass_rate"]) == len(evaluation[name]["coverage"]) == 3
    assert evaluation["trained - start"]["rooms"] == 2
    assert saved["roots"]["trained"].startswith(f"hf:{out.resolve()}/grpo/checkpoint-1")
    assert len(saved["load_start"]) == 3 and len(saved["load_end"]) == 3
    assert (out / bench.PLOT).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert "GRPO: 1 steps" in printed and "trained - start over 2 rooms" in printed

    def redo(*_, **__):
        raise AssertionError("the SFT start was made again")

    monkeypatch.setattr(dealroom.train, "train_sft", redo)
    monkeypatch.setattr(dealroom.train, "export_sft", redo)
    again = _run(bench, tiny_model_dir, out, 2)
    assert (again["grpo"]["steps"], again["grpo"]["resumed_from"]) == (2, 1)
    assert [r["step"] for r in again["curve"]] == [1, 2]
    assert again["curve"][0] == grpo["curve"][0]  # step 1 kept, not sampled again
    assert again["roots"]["trained"].startswith(f"hf:{out.resolve()}/grpo/checkpoint-2")
    assert (out / "eval-step-2" / "sweep.json").is_file()
    assert again["start_policy"]["sft"] == saved["start_policy"]["sft"]


def test_the_compact_programs_score_in_their_order(bench, tmp_path):
    """--family compact: the one-cell programs run with oracle sub-agents and score apart
    (sections > a plain list > nothing), so a start SFT-trained on their mix has room to
    improve; its defaults fit them (2 turns x 256 tokens)."""
    from dealroom.room import generate_room

    room = tmp_path / "room"
    generate_room(room, docs=6, seed=3, secret="tests")
    figures = bench.compact_figures(bench.compact_runs(tmp_path / "programs", [str(room)], 2))
    rates = {name: f["pass_rate"][0] for name, f in figures.items()}
    assert rates["full"] > rates["plain"] > rates["none"] == 0.0
    args = bench.parse(["--family", "compact"])
    assert (args.turns, args.tokens, args.family) == (2, 256, "compact")
    assert bench.parse(["--family", "compact", "--turns", "3"]).turns == 3
