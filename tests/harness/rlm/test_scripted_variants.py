"""Scripted root variants (coverage, waves, memo=end), the hidden turn budget, and the memo
history a run keeps, each through real runs with the oracle sub-agent."""

import json
import shutil
from collections import Counter

import pytest

from dealroom.errors import ConfigError
from dealroom.harness import get_harness, resume_run, run_agent
from dealroom.harness.rlm import scripted_root
from dealroom.room import Room
from dealroom.runs import RunFolder


def events_of(run):
    return RunFolder.open(run).events()


def delegated(run) -> set[str]:
    return {d["id"] for e in events_of(run) if e["type"] == "model_call" and e["role"] == "sub"
            for d in e["input"]["docs"]}


def test_variant_options_are_checked_and_named():
    assert scripted_root().name == "scripted"
    assert scripted_root(coverage="0.3", seed="2").name == "scripted:coverage=0.3,seed=2"
    with pytest.raises(ConfigError, match="no option speed"):
        scripted_root(speed="2")
    with pytest.raises(ConfigError, match=r"coverage must be in \(0, 1\]"):
        scripted_root(coverage="0")
    with pytest.raises(ConfigError, match="memo must be incremental or end"):
        scripted_root(memo="never")
    with pytest.raises(ConfigError, match="takes no options"):
        get_harness("toolloop").scripted_root(coverage="0.5")


def test_coverage_delegates_a_seeded_share_of_each_category(generated_room, tmp_path):
    room = Room.open(generated_room)
    per_category = Counter(d.category for d in room.docs)
    want = sum(max(1, round(n * 0.3)) for n in per_category.values())
    seen = []
    for seed in (1, 2):
        run = tmp_path / f"s{seed}"
        run_agent(generated_room, run, root=f"scripted:coverage=0.3,seed={seed}", sub="oracle")
        docs = delegated(run)
        assert len(docs) == want
        assert Counter(room.doc(d).category for d in docs).keys() == per_category.keys()
        seen.append(docs)
    assert seen[0] != seen[1]  # seeds give distinct samples
    assert json.loads((tmp_path / "s1" / "config.json").read_text())["root"] == \
        "scripted:coverage=0.3,seed=1"


def test_waves_one_sends_one_call_per_turn(generated_room, tmp_path):
    run_agent(generated_room, tmp_path / "run", root="scripted:waves=1", sub="oracle",
              max_turns=8)
    waves = [e for e in events_of(tmp_path / "run") if e["type"] == "wave"]
    assert len(waves) == 3 and {w["calls"] for w in waves} == {1}  # turns 4-6; 7 finishes


def test_memo_end_writes_nothing_until_the_waves_are_done(generated_room, tmp_path):
    run_agent(generated_room, tmp_path / "end", root="scripted:memo=end", sub="oracle")
    run_agent(generated_room, tmp_path / "inc", root="scripted", sub="oracle")
    end, inc = RunFolder.open(tmp_path / "end"), RunFolder.open(tmp_path / "inc")
    last_turn = end.memo_history()[-1][0]
    assert all("Key Findings" not in memo for turn, memo in end.memo_history()
               if turn < last_turn)
    assert any("Key Findings" in memo for turn, memo in inc.memo_history()
               if turn < inc.memo_history()[-1][0])
    assert end.memo_path.read_text() == inc.memo_path.read_text()


def test_a_hidden_budget_says_turn_k_only(generated_room, tmp_path):
    root = scripted_root()
    run_agent(generated_room, tmp_path / "run", root=root, sub="oracle", max_turns=6,
              budget_visible=False)
    told = [m["content"] for call in root.calls for m in call.messages if m["role"] == "user"]
    assert "Turn 1." in told[0] and all(" of 6" not in t for t in told)
    first_cell = next(e for e in events_of(tmp_path / "run") if e["type"] == "cell")
    assert "turns_left=None" in first_cell["output"] and "max_turns=None" in first_cell["output"]
    assert RunFolder.open(tmp_path / "run").config["settings"]["budget_visible"] is False


def test_the_memo_history_rebuilds_every_turn_and_survives_a_resume(generated_room, tmp_path):
    run = tmp_path / "run"
    result = run_agent(generated_room, run, root="scripted:coverage=0.5,seed=3", sub="oracle")
    folder = RunFolder.open(run)
    history = folder.memo_history()
    assert history[-1][1] == folder.memo_path.read_text() and folder.memo_at(0) == ""
    assert [t for t, _ in history] == sorted({t for t, _ in history})
    assert len(history) == len({e["seq"] for e in events_of(run) if e["type"] == "memo"})
    assert folder.memo_at(result.turns) == history[-1][1]
    cut = shutil.copytree(run, tmp_path / "cut")
    lines = (cut / "trajectory.jsonl").read_text().splitlines()
    keep = next(i for i, x in enumerate(lines) if '"type": "wave"' in x)
    (cut / "trajectory.jsonl").write_text("\n".join(lines[:keep]) + "\n")
    records = (cut / "memo_history.jsonl").read_text().splitlines()
    (cut / "memo_history.jsonl").write_text("\n".join(records[:1]) + "\n" + records[1][:9])
    (cut / "metrics.json").unlink()
    resume_run(cut)
    assert RunFolder.open(cut).memo_history() == history


def test_slices_left_when_the_turns_run_out_are_never_called_unsent(generated_room, tmp_path):
    """With too few turns for any wave, the memo lists every slice as not read because the
    turns ran out: whether or not a slice was sent, it is never said to be unsent."""
    result = run_agent(generated_room, tmp_path / "run", sub="oracle", max_turns=4)
    memo = (tmp_path / "run" / "output" / "memo.md").read_text()
    assert result.status == "submitted"
    assert "never sent" not in memo and "We reviewed all" not in memo
    not_reviewed = memo.split("## Documents Not Reviewed")[1].split("##")[0]
    assert "the turns ran out before its answer was used" in not_reviewed
    assert "from 0 bounded reading tasks whose answers were read" in memo
