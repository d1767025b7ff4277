"""``dealroom judge`` on the fixture room."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from support.cli import dealroom
from typer.testing import CliRunner

from dealroom.cli import app


def test_judge_memo_file_prints_and_writes(room: Path, tmp_path: Path) -> None:
    gold = room / "answer_key" / "gold_memo.md"
    out = tmp_path / "scores.json"
    result = CliRunner().invoke(
        app, ["judge", "--room", str(room), "--memo", str(gold), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "100.0% positive criteria pass rate (headline; total 100.0%)" in result.output
    assert json.loads(out.read_text())["all_pass"] is True


def test_judge_run_json(room: Path, tmp_path: Path, run_maker) -> None:
    run = run_maker(tmp_path / "run", "- Beta may terminate on a change of control [D00002].")
    result = CliRunner().invoke(app, ["judge", str(run), "--json"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    stored = json.loads((run / "scores.json").read_text())
    assert printed == stored
    assert {r["id"]: r["verdict"] for r in stored["criteria_results"]}["C-001"] == "pass"


def _main(*args: str) -> subprocess.CompletedProcess[str]:
    return dealroom(*args)  # in this process (support.cli)


def test_bad_invocations_are_one_line_errors(room: Path, tmp_path: Path) -> None:
    for args in ([], ["--room", str(room)], ["--memo", "x.md"], [str(tmp_path), "--memo", "m"]):
        done = _main("judge", *args)
        assert done.returncode == 1 and "error:" in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr


def test_reference_refuses_a_rubric_without_expect(room: Path, tmp_path: Path) -> None:
    copy = Path(shutil.copytree(room, tmp_path / "room"))
    task = json.loads((copy / "task.json").read_text())
    for c in task["criteria"]:
        c.pop("expect")
    (copy / "task.json").write_text(json.dumps(task))
    done = _main("judge", "--room", str(copy), "--memo", str(room / "answer_key" / "gold_memo.md"))
    assert done.returncode == 1 and "--judge MODEL" in done.stderr
