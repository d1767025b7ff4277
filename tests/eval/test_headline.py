"""The pass rate on positive criteria beside the total, and ``--headline`` choosing which one
Pass@(K,T), ``eval table``, ``summary`` and the report lead with: an empty memo passes the
negative criteria of the hand-written room, so it scores above 0 in total and 0 on positives."""

from __future__ import annotations

import json

import pytest
from support.cli import dealroom

from dealroom.errors import ConfigError
from dealroom.eval import passk, summarize_runs, table
from dealroom.judge import judge_run
from dealroom.report import build_report
from tests.conftest import HAND_ROOM

GOLD = (HAND_ROOM / "gold_memo.md").read_text()
TAU = 0.15
"""Below the empty memo's total (3 of 19 criteria, all negative), above its positive 0."""


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


def by_root(rows, k=1):
    return {r["root"]: r for r in rows if r.get("k", k) == k}


def test_passk_leads_with_the_chosen_rate_and_gives_the_positive_one_beside(sweep):
    total = by_root(passk(sweep, tau=TAU))
    assert total["empty"]["pass_at_k"] == 1.0 and total["empty"]["headline"] == "total"
    assert total["empty"]["pass_at_k_positive"] == 0.0
    positive = by_root(passk(sweep, tau=TAU, headline="positive"))
    assert positive["empty"]["pass_at_k"] == 0.0 and positive["empty"]["headline"] == "positive"
    assert positive["gold"]["pass_at_k"] == 1.0
    with pytest.raises(ConfigError, match="--headline must be total or positive"):
        passk(sweep, headline="negative")


def test_table_and_summary_show_the_positive_rate(sweep):
    rows = by_root(table(sweep, by=["root"]))
    assert rows["empty"]["pass_rate"] == pytest.approx(3 / 19)
    assert rows["empty"]["pass_rate_positive"] == 0.0
    assert by_root(table(sweep, by=["root"], headline="positive"))["empty"]["pass_rate"] == 0.0
    summary = summarize_runs(sorted((sweep / "episodes").rglob("*-s0")))
    assert sorted(r["pass_rate_positive"] for r in summary["runs"]) == [0.0, 15 / 16]
    assert summary["totals"]["pass_rate_positive_mean"] == pytest.approx(15 / 32)


def test_the_report_names_its_headline_rate(sweep, tmp_path):
    index = build_report([sweep], tmp_path / "report", headline_rate="positive")
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["headline_rate"] == "positive"
    empty = next(r for r in report["headline"] if r["policy"].startswith("empty"))
    assert empty["pass_rate"] == 0.0 and empty["pass_rate_positive"] == 0.0
    assert all(c["headline"] == "positive" for c in report["passk"])
    assert "over positive criteria only" in index.read_text()
    build_report([sweep], tmp_path / "total")
    total = json.loads((tmp_path / "total" / "report.json").read_text())
    empty = next(r for r in total["headline"] if r["policy"].startswith("empty"))
    assert empty["pass_rate"] == pytest.approx(3 / 19) and empty["pass_rate_positive"] == 0.0


def test_the_cli_flag(sweep):
    done = dealroom("eval", "passk", str(sweep), "--tau", str(TAU), "--headline", "positive",
                    "--json")
    assert done.returncode == 0, done.stderr
    assert by_root(json.loads(done.stdout))["empty"]["pass_at_k"] == 0.0
