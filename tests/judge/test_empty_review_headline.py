"""The headline: a figure a memo without findings cannot raise (docs/judging.md, "The
headline"). On a generated room whose rubric has negative criteria, a memo that lists every
document as "reviewed, nothing to report" passes the negatives (its total is above 5%) but
scores a headline of at most 5%; the gold memo keeps its 100%."""

from __future__ import annotations

import json

import pytest
from support.cli import dealroom

from dealroom import generate_room
from dealroom.judge import judge_memo
from dealroom.room import load_manifest


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    out = tmp_path_factory.mktemp("headline") / "room"
    generate_room(out, docs=120, seed=0, tokens=300_000, secret="tests")
    task = json.loads((out / "task.json").read_text())
    negatives = [c for c in task["criteria"] if (c.get("expect") or {}).get("negative")]
    assert negatives and len(negatives) < len(task["criteria"])
    return out


@pytest.fixture(scope="module")
def nothing(room, tmp_path_factory):
    """A memo that reviews every document of the room and reports nothing."""
    lines = ["# Due Diligence Memorandum", "", "## Documents", ""]
    lines += [f"- {d.title}: reviewed, nothing to report [{d.id}]"
              for d in load_manifest(room).documents]
    memo = tmp_path_factory.mktemp("memo") / "memo.md"
    memo.write_text("\n".join(lines) + "\n")
    return memo


def test_a_memo_that_reports_nothing_gets_a_headline_of_at_most_5_percent(room, nothing):
    record = judge_memo(room, nothing).to_dict()
    assert record["pass_rate"] > 0.05, "the total it games: the negatives pass"
    assert record["headline_kind"] == "positive"
    assert record["headline"] <= 0.05
    assert record["headline"] == record["pass_rate_positive"]
    assert record["pass_rate"] == record["n_passed"] / record["n_criteria"]  # kept beside it


def test_the_gold_memo_keeps_a_high_headline(room):
    record = judge_memo(room, room / "answer_key" / "gold_memo.md").to_dict()
    assert record["headline_kind"] == "positive" and record["headline"] >= 0.9


def test_judge_prints_the_headline_first_and_writes_it(room, nothing, tmp_path):
    out = tmp_path / "scores.json"
    done = dealroom("judge", "--room", str(room), "--memo", str(nothing), "--out", str(out))
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert " positive criteria pass rate (headline; total " in first, first
    written = json.loads(out.read_text())
    assert written["headline_kind"] == "positive" and written["headline"] <= 0.05
    assert first.startswith(f"{100 * written['headline']:.1f}%"), first


def test_a_headline_of_version_1_scores_comes_from_their_counts(tmp_path):
    from dealroom.runs import RunFolder

    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    (run / "scores.json").write_text(json.dumps({
        "n_criteria": 31, "n_passed": 3, "pass_rate": 3 / 31, "n_positive": 28,
        "n_positive_passed": 0, "pass_rate_positive": 0.0}))
    scores = RunFolder.open(run).scores()
    assert scores is not None
    assert (scores["headline"], scores["headline_kind"]) == (0.0, "positive")
