"""``dealroom judge RUN --by-turn``: the memo judged as of each turn, from its history."""

import json

from support.events import fields
from typer.testing import CliRunner

from dealroom.cli import app
from dealroom.judge import judge_by_turn, judge_memo
from dealroom.runs import RunFolder, RunRecorder


def _run_with_history(tmp_path, room, states: dict[int, str], turns: int):
    folder = RunFolder.create(tmp_path / "run", {"room": str(room), "harness": "rlm"})
    rec = RunRecorder(folder)
    rec.event("run_start", **fields("run_start"))
    for turn, memo in states.items():
        folder.write_deliverable("memo", memo)
        rec.memo_turn(turn, memo)
    rec.event("run_end", **fields("run_end", status="max_turns", ended="max_turns",
                                 reason="turns", turns=turns))
    rec.close()
    return folder.path


def test_each_turn_is_judged_on_the_memo_as_it_stood(tmp_path, generated_room):
    gold = (generated_room / "answer_key" / "gold_memo.md").read_text()
    half = gold[: len(gold) // 2]
    run = _run_with_history(tmp_path, generated_room, {2: half, 4: gold}, turns=5)
    result = judge_by_turn(run)
    rates = [row["pass_rate"] for row in result["by_turn"]]
    assert [row["turn"] for row in result["by_turn"]] == [1, 2, 3, 4, 5]
    full = judge_memo(generated_room, gold).pass_rate
    assert rates[0] == judge_memo(generated_room, "").pass_rate
    assert rates[1] == rates[2] == judge_memo(generated_room, half).pass_rate
    assert rates[3] == rates[4] == full == 1.0 and result["by_turn"][4]["all_pass"]
    assert set(result["by_turn"][1]["pass_rate_by_type"]) >= {"fact", "formatting"}
    written = json.loads((run / "scores_by_turn.json").read_text())
    assert written == result and written["judge"]["name"] == "reference"


def test_the_command_writes_and_shows_the_turns(tmp_path, generated_room):
    gold = (generated_room / "answer_key" / "gold_memo.md").read_text()
    run = _run_with_history(tmp_path, generated_room, {3: gold}, turns=3)
    result = CliRunner().invoke(app, ["judge", str(run), "--by-turn"])
    assert result.exit_code == 0, result.output
    assert "100.0%" in result.output and "3 turns" in result.output
    assert (run / "scores_by_turn.json").is_file()
    refused = CliRunner().invoke(app, ["judge", "--by-turn", "--room", str(generated_room),
                                       "--memo", str(run / "output" / "memo.md")])
    assert refused.exit_code != 0
