"""The headline (``scores.json`` ``headline``: the positive criteria's rate where a rubric has
negatives) leading Pass@(K,T), ``eval table``, ``eval compare``, ``summary`` and the report by
default, the total beside it, and ``--headline`` choosing another: an empty memo passes the
negative criteria of the hand-written room, so it scores above 0 in total and 0 on the
headline."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console
from support.cli import dealroom

from dealroom.cli.display_scores import render_summary
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


def test_passk_leads_with_the_headline_and_gives_the_total_beside(sweep):
    rows = by_root(passk(sweep, tau=TAU))
    assert rows["empty"]["pass_at_k"] == 0.0 and rows["gold"]["pass_at_k"] == 1.0
    assert (rows["empty"]["headline"], rows["empty"]["headline_kind"]) == ("headline",
                                                                           "positive")
    assert rows["empty"]["pass_at_k_total"] == 1.0


def test_passk_leads_with_the_chosen_rate_and_gives_the_positive_one_beside(sweep):
    total = by_root(passk(sweep, tau=TAU, headline="total"))
    assert total["empty"]["pass_at_k"] == 1.0 and total["empty"]["headline"] == "total"
    assert total["empty"]["pass_at_k_positive"] == 0.0
    positive = by_root(passk(sweep, tau=TAU, headline="positive"))
    assert positive["empty"]["pass_at_k"] == 0.0 and positive["empty"]["headline"] == "positive"
    assert positive["gold"]["pass_at_k"] == 1.0
    with pytest.raises(ConfigError, match="--headline must be headline, total, positive"):
        passk(sweep, headline="negative")


def test_table_and_summary_lead_with_the_headline(sweep):
    rows = by_root(table(sweep, by=["root"]))
    assert rows["empty"]["pass_rate"] == 0.0 and rows["empty"]["headline_kind"] == "positive"
    assert rows["empty"]["pass_rate_total"] == pytest.approx(3 / 19)
    assert rows["gold"]["pass_rate"] == pytest.approx(15 / 16)
    summary = summarize_runs(sorted((sweep / "episodes").rglob("*-s0")))
    assert sorted(r["headline"] for r in summary["runs"]) == [0.0, 15 / 16]
    assert summary["totals"]["headline_mean"] == pytest.approx(15 / 32)
    assert summary["totals"]["pass_rate_mean"] == pytest.approx((3 / 19 + 18 / 19) / 2)


def test_table_and_summary_show_the_positive_rate(sweep):
    rows = by_root(table(sweep, by=["root"], headline="total"))
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
    build_report([sweep], tmp_path / "total", headline_rate="total")
    total = json.loads((tmp_path / "total" / "report.json").read_text())
    empty = next(r for r in total["headline"] if r["policy"].startswith("empty"))
    assert empty["pass_rate"] == pytest.approx(3 / 19) and empty["pass_rate_positive"] == 0.0


def test_the_report_leads_with_the_headline_by_default(sweep, tmp_path):
    index = build_report([sweep], tmp_path / "report")
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["headline_rate"] == "headline"
    empty = next(r for r in report["headline"] if r["policy"].startswith("empty"))
    assert empty["pass_rate"] == 0.0 and empty["pass_rate_total"] == pytest.approx(3 / 19)
    html = index.read_text()
    assert html.index("headline [95% CI]") < html.index(">total<")


def test_eval_table_and_summary_print_the_headline_first(sweep):
    done = dealroom("eval", "table", str(sweep), "--by", "root")
    assert done.returncode == 0, done.stderr
    header = next(line for line in done.stdout.splitlines() if "rooms" in line)
    assert header.split()[2:5] == ["rooms", "headline", "95%"], header
    empty = next(line for line in done.stdout.splitlines() if line.strip().startswith("empty"))
    assert empty.split()[3] == "0.0%" and empty.split()[5] == "15.8%", empty
    runs = sorted(str(p) for p in (sweep / "episodes").rglob("*-s0"))
    summary = dealroom("summary", *runs, "--json")
    assert summary.returncode == 0, summary.stderr
    assert [r["headline"] for r in json.loads(summary.stdout)["runs"]].count(0.0) == 1
    wide = io.StringIO()
    render_summary(summarize_runs(runs), Console(file=wide, width=200, color_system=None))
    header = next(line for line in wide.getvalue().splitlines() if "status" in line)
    assert [c.strip() for c in header.split("┃")[2:5]] == ["status", "headline", "total"]


def test_compare_pairs_the_headline(sweep):
    from dealroom.eval import compare

    result = compare(f"{sweep}:root=gold", f"{sweep}:root=empty")
    assert result["headline_kind"] == "positive"
    assert result["mean_diff"] == pytest.approx(15 / 16)
    assert result["mean_diff_total"] == pytest.approx(15 / 19)


def test_the_cli_flag(sweep):
    done = dealroom("eval", "passk", str(sweep), "--tau", str(TAU), "--headline", "positive",
                    "--json")
    assert done.returncode == 0, done.stderr
    assert by_root(json.loads(done.stdout))["empty"]["pass_at_k"] == 0.0
