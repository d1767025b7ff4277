"""The evidence F1 (``scores.json`` ``evidence``) in ``dealroom summary``, ``eval table`` and
the report: the gold memo of the hand-written room cites its evidence (F1 1), an empty memo
cites nothing (F1 0)."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console
from support.cli import dealroom

from dealroom.cli.display_scores import render_summary
from dealroom.eval import summarize_runs, table
from dealroom.judge import judge_run
from dealroom.report import build_report
from tests.conftest import HAND_ROOM

GOLD = (HAND_ROOM / "gold_memo.md").read_text()


@pytest.fixture
def sweep(sweep_builder, hand_room):
    built = sweep_builder("sweep")
    for root, memo in (("empty", ""), ("gold", GOLD)):
        for seed in (0, 1):
            run = built.episode("harbor", root, sub=None, seed=seed, room_path=str(hand_room))
            (run / "output").mkdir()
            (run / "output" / "memo.md").write_text(memo)
            judge_run(run)
    return built.write()


def by_root(rows):
    return {r["root"]: r for r in rows}


def test_summary_gives_each_runs_evidence_and_the_mean(sweep):
    runs = sorted((sweep / "episodes").rglob("*-s0"))
    summary = summarize_runs(runs)
    assert sorted(r["evidence_f1"] for r in summary["runs"]) == [0.0, 1.0]
    assert summary["totals"]["evidence_f1_mean"] == 0.5
    wide = io.StringIO()
    render_summary(summary, Console(file=wide, width=220, color_system=None))
    header = next(line for line in wide.getvalue().splitlines() if "status" in line)
    assert [c.strip() for c in header.split("┃")[2:6]] == ["status", "headline", "total",
                                                          "evidence F1"]
    assert "0.50 mean" in wide.getvalue()


def test_eval_table_gives_the_mean_evidence_f1(sweep):
    rows = by_root(table(sweep, by=["root"]))
    assert rows["gold"]["evidence_f1"] == 1.0 and rows["empty"]["evidence_f1"] == 0.0
    done = dealroom("eval", "table", str(sweep), "--by", "root")
    assert done.returncode == 0, done.stderr
    assert "evid: evidence F1" in done.stdout
    gold = next(line for line in done.stdout.splitlines() if line.strip().startswith("gold"))
    assert "1.00" in gold.split()


def test_the_report_has_an_evidence_column(sweep, tmp_path):
    index = build_report([sweep], tmp_path / "report")
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    gold = next(r for r in report["headline"] if r["policy"].startswith("gold"))
    assert gold["evidence_f1"] == 1.0
    assert ">evidence F1<" in index.read_text()


def test_judge_prints_the_evidence_line(hand_room, tmp_path):
    memo = tmp_path / "memo.md"
    memo.write_text(GOLD)
    done = dealroom("judge", "--room", str(hand_room), "--memo", str(memo))
    assert done.returncode == 0, done.stderr
    assert "evidence F1 1.00" in done.stdout
