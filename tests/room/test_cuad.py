"""``dealroom cuad import`` on a fixture in CUAD v1's own format (text of our own)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dealroom.cli import app
from dealroom.errors import ConfigError
from dealroom.judge import judge_memo, judge_run
from dealroom.room import (
    CuadSettings,
    Room,
    import_cuad,
    load_cuad,
    load_manifest,
    validate_room,
    write_cuad_sample,
)
from dealroom.room._cuad_rubric import TERMS


@pytest.fixture(scope="module")
def cuad(tmp_path_factory) -> Path:
    return write_cuad_sample(tmp_path_factory.mktemp("cuad") / "CUAD_v1", contracts=6, seed=3)


@pytest.fixture(scope="module")
def room(cuad, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rooms") / "cuad-6"
    import_cuad(cuad, out, CuadSettings(workers=1))
    return out


def _result(scores, cid: str):
    return next(r for r in scores.criteria_results if r.id == cid)


def _memo(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_the_room_holds_the_contracts_pdfs_first_and_validates(cuad, room):
    docs = load_manifest(room).documents
    assert len(docs) == 6 and sorted(d.format for d in docs) == ["pdf"] * 3 + ["txt"] * 3
    assert [p for p in validate_room(room, deep=True) if p.level == "error"] == []
    assert load_manifest(room).meta["kind"] == "real"
    task = json.loads((room / "task.json").read_text())
    contracts = load_cuad(cuad)
    assert len(task["criteria"]) == 6 * len(TERMS)
    text = json.dumps(task)
    spans = [s for c in contracts for k, v in c.spans.items() if k in TERMS for s, _ in v]
    assert spans and not any(s[:60] in text for s in spans)  # the task never holds answers
    assert "Change Of Control" in task["instructions"]
    (kept := json.loads((room / "answer_key" / "cuad_labels.json").read_text()))
    assert {c["doc"] for c in kept["contracts"]} == {d.id for d in docs}


def test_labelled_spans_point_at_the_pages_they_are_on(room):
    labels = json.loads((room / "answer_key" / "cuad_labels.json").read_text())
    with Room.open(room) as r:
        for contract in labels["contracts"]:
            for spans in contract["labels"].values():
                for span in spans:
                    first = " ".join(r.text(contract["doc"], span["pages"][0]).split())
                    assert " ".join(span["text"].split())[:30] in first


def test_gold_empty_and_claim_everything_memos(room, tmp_path):
    gold = judge_memo(room, room / "answer_key" / "gold_memo.md")
    assert gold.pass_rate >= 0.95
    assert judge_memo(room, _memo(tmp_path / "empty.md", "")).pass_rate <= 0.10
    docs = [d.id for d in load_manifest(room).documents]
    claims = "\n\n".join(
        f"## {d}\n\nReviewed [{d}].\n\n" + "\n".join(
            f"- The {terms[0]} clause of this contract [{d} p.1]." for terms in TERMS.values())
        for d in docs)
    every = judge_memo(room, _memo(tmp_path / "every.md", claims))
    task = json.loads((room / "task.json").read_text())
    negatives = [c["id"] for c in task["criteria"] if c["expect"].get("negative")]
    verdicts = {r.id: r.verdict for r in every.criteria_results}
    assert negatives and all(verdicts[i] == "fail" for i in negatives)


def test_a_citation_on_the_wrong_page_does_not_count(room, tmp_path):
    task = json.loads((room / "task.json").read_text())
    crit = next(c for c in task["criteria"] if "pages" in c["expect"])
    doc, pages = next(iter(crit["expect"]["pages"].items()))
    term = crit["expect"]["terms"][0][0]
    wrong = next(p for p in range(1, 99) if p not in pages)
    right = judge_memo(room, _memo(tmp_path / "r.md", f"- The {term} clause [{doc} p.{pages[0]}]."))
    miss = judge_memo(room, _memo(tmp_path / "w.md", f"- The {term} clause [{doc} p.{wrong}]."))
    assert _result(right, crit["id"]).verdict == "pass"
    assert _result(miss, crit["id"]).verdict == "fail"
    assert f"citation of {doc} at p." in _result(miss, crit["id"]).reasoning


def test_a_scripted_run_on_the_room_is_judged(room, tmp_path):
    from dealroom.harness import run_agent

    run_agent(room, tmp_path / "run", root="scripted", sub="oracle")
    scores = judge_run(tmp_path / "run")
    assert 0 < scores.pass_rate < 1 and scores.by_type()["citation"]["passed"] > 0


def test_picking_contracts_and_categories(cuad, tmp_path):
    titles = sorted(c.title for c in load_cuad(cuad))
    two = import_cuad(cuad, tmp_path / "a", CuadSettings(contracts=2, seed=5, workers=1,
                                                         categories=("governing law",)))
    again = import_cuad(cuad, tmp_path / "b", CuadSettings(contracts=2, seed=5, workers=1))
    assert [d.path for d in two.manifest.documents] == [d.path for d in again.manifest.documents]
    task = json.loads((tmp_path / "a" / "task.json").read_text())
    assert len(task["criteria"]) == 2 and "Governing Law" in task["instructions"]
    picked = import_cuad(cuad, tmp_path / "c", CuadSettings(ids=(titles[4],), workers=1))
    assert len(picked.manifest.documents) == 1
    with pytest.raises(ConfigError, match="no contract"):
        import_cuad(cuad, tmp_path / "d", CuadSettings(ids=("nope",)))
    with pytest.raises(ConfigError, match="no category 'Vibes'"):
        import_cuad(cuad, tmp_path / "d", CuadSettings(categories=("Vibes",)))
    with pytest.raises(ConfigError, match="not both"):
        CuadSettings(contracts=1, ids=("x",))
    with pytest.raises(ConfigError, match="is not a CUAD folder"):
        import_cuad(tmp_path, tmp_path / "d")


def test_cli_cuad_import(cuad, tmp_path):
    result = CliRunner().invoke(app, ["cuad", "import", str(cuad), str(tmp_path / "room"),
                                      "--contracts", "2", "--categories",
                                      "Change Of Control,Governing Law", "--workers", "1"])
    assert result.exit_code == 0, result.output
    task = json.loads((tmp_path / "room" / "task.json").read_text())
    assert len(task["criteria"]) == 4
