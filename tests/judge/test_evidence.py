"""Evidence figures (docs/judging.md, "Evidence"): whether a memo cites the documents and pages
of the answer key. The room's gold memo scores F1 of at least 0.9, an empty memo 0, a memo
citing the wrong pages low; every judge's scores.json carries them."""

import json
import math
import re

import pytest

from dealroom.judge import judge_memo, judge_run
from dealroom.judge._evidence import cited, evidence_key, measure_evidence


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    from dealroom.room import generate_room

    path = tmp_path_factory.mktemp("evidence") / "g20"
    generate_room(path, docs=20, seed=2, secret="tests")
    return path


def gold(room):
    return (room / "answer_key" / "gold_memo.md").read_text(encoding="utf-8")


def test_the_gold_memo_is_grounded(room):
    evidence = judge_memo(room, gold(room)).evidence
    assert evidence is not None and evidence.f1 >= 0.9
    assert evidence.recall == 1.0 and evidence.n_findings_cited == evidence.n_findings > 0


@pytest.mark.parametrize(("profile", "docs", "seed"), [
    ("bank", 6, 0), ("software", 20, 5), ("manufacturer", 12, 3)])
def test_the_gold_memo_is_grounded_in_every_profile(profile, docs, seed, tmp_path):
    from dealroom.room import generate_room

    generate_room(tmp_path / "room", docs=docs, seed=seed, profile=profile, secret="tests")
    evidence = judge_memo(tmp_path / "room", gold(tmp_path / "room")).evidence
    assert evidence.f1 >= 0.9 and evidence.n_findings > 0


def test_the_gold_memo_of_a_cuad_room_is_grounded(tmp_path):
    """A ``cuad import`` room: its rubric's ``pages`` are where the labelled clauses are."""
    from dealroom.room import CuadSettings, import_cuad, write_cuad_sample

    cuad = write_cuad_sample(tmp_path / "CUAD_v1", contracts=4, seed=3)
    import_cuad(cuad, tmp_path / "room", CuadSettings(workers=1))
    evidence = judge_memo(tmp_path / "room", gold(tmp_path / "room")).evidence
    assert evidence.f1 >= 0.9 and evidence.n_findings > 0
    wrong = re.sub(r"p\.(\d+)", lambda m: f"p.{int(m.group(1)) + 7}", gold(tmp_path / "room"))
    assert judge_memo(tmp_path / "room", wrong).evidence.recall < 0.5


def test_an_empty_memo_scores_zero(room):
    evidence = judge_memo(room, "").evidence
    assert evidence.f1 == 0.0 and evidence.recall == 0.0 and evidence.n_citations == 0
    assert math.isnan(evidence.precision)  # nothing cited: no precision, not a guess


def test_a_memo_citing_the_wrong_pages_scores_low(room):
    wrong = re.sub(r"p\.(\d+)", lambda m: f"p.{int(m.group(1)) + 7}", gold(room))
    evidence = judge_memo(room, wrong).evidence
    assert evidence.n_citations > 0 and evidence.f1 < 0.2 and evidence.precision < 0.2


def test_citing_every_page_of_every_document_has_low_precision(room):
    from dealroom.room import load_manifest

    docs = [d.id for d in load_manifest(room).documents]
    spray = " ".join(f"[{d} pp.1-30]" for d in docs)
    evidence = judge_memo(room, spray).evidence
    assert evidence.recall == 1.0 and evidence.precision < 0.05 and evidence.f1 < 0.1


def test_scores_json_carries_evidence_for_any_judge(room, tmp_path):

    class Nobody:
        name, args = "nobody", {}

        async def __call__(self, task, deliverables):
            from dealroom.judge._scores import make_scores

            return make_scores(task, {}, {"name": "nobody"})

    run = tmp_path / "run"
    (run / "output").mkdir(parents=True)
    (run / "output" / "memo.md").write_text(gold(room), encoding="utf-8")
    judge_run(run, Nobody(), room=room)
    written = json.loads((run / "scores.json").read_text())["evidence"]
    assert written["f1"] >= 0.9 and written["n_gold"] == written["n_gold_cited"] > 0
    assert set(written) >= {"precision", "recall", "f1", "n_citations", "n_findings"}


def test_a_rubric_without_an_answer_key_grounds_on_its_expected_pages():
    task = {"criteria": [
        {"id": "C-001", "finding": "F-1", "expect": {"cite": ["D00001"], "pages": {
            "D00001": [3]}}},
        {"id": "C-002", "expect": {"cite": ["D00002"], "negative": True,
                                   "reviewed": ["D00002"]}},
    ]}
    key = evidence_key(task)
    assert key.gold == {"F-1": {"D00001": frozenset({3})}}  # negatives are not findings
    right = measure_evidence(key, ["[D00001 p.3] [D00002]"])
    assert right.recall == 1.0 and right.precision == 1.0
    off = measure_evidence(key, ["[D00001 p.4] [D00009 p.1]"])
    assert off.recall == 0.0 and off.precision == 0.0 and off.f1 == 0.0
    assert measure_evidence(evidence_key({"criteria": []}), ["[D00001]"]) is None


def test_citations_are_document_page_pairs():
    assert cited("[D00001 p.3] (D00002, pp. 4-5) [D00003]") == {
        ("D00001", 3), ("D00002", 4), ("D00002", 5), ("D00003", None)}
