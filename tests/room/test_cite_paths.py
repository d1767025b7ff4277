"""A rubric names documents by path as well as by id (issue 39, item 6): ``expect.cite``,
``expect.pages`` and ``expect.reviewed`` take ``documents/...`` or the path under it."""

from __future__ import annotations

from pathlib import Path

import pytest

from dealroom.judge import judge_memo
from dealroom.room import ingest, load_manifest, load_task, validate_room

FILES = {
    "03 Contracts/msa.md": "# Master Services Agreement\n\nThe Customer may terminate this "
                           "Agreement upon a change of control of the Supplier.\n",
    "01 Corporate/charter.md": "# Charter\n\nThe company has one class of shares.\n",
}


def _criterion(cid: str, expect: dict) -> dict:
    return {"id": cid, "title": f"criterion {cid}", "match_criteria": "PASS if it says so.",
            "type": "citation", "expect": expect}


TASK = {"title": "Review", "instructions": "Review the room.", "deliverables": {"memo": "memo.md"},
        "criteria": [
            _criterion("C-001", {"cite": ["03 Contracts/msa.md"],
                                 "pages": {"documents/03 Contracts/msa.md": [1]},
                                 "terms": ["change of control"]}),
            _criterion("C-002", {"cite": ["documents/01 Corporate/charter.md"],
                                 "terms": ["change of control"], "negative": True,
                                 "reviewed": ["01 Corporate/charter.md"]})]}


@pytest.fixture
def room(tmp_path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(text)
    ingest(tmp_path / "src", tmp_path / "room", task=TASK)
    return tmp_path / "room"


def test_a_rubric_may_cite_documents_by_path(room):
    ids = {d.path: d.id for d in load_manifest(room).documents}
    msa, charter = ids["documents/03 Contracts/msa.md"], ids["documents/01 Corporate/charter.md"]
    assert [p for p in validate_room(room) if p.level == "error"] == []
    expect = [c["expect"] for c in load_task(room)["criteria"]]
    assert expect[0]["cite"] == [msa] and expect[0]["pages"] == {msa: [1]}
    assert expect[1]["cite"] == [charter] and expect[1]["reviewed"] == [charter]
    good = judge_memo(room, f"- A change of control termination right [{msa} p.1].\n"
                            f"- The charter has one class of shares [{charter}].")
    assert {r.id: r.verdict for r in good.criteria_results} == {"C-001": "pass",
                                                                "C-002": "pass"}
    wrong = judge_memo(room, f"- A change of control termination right [{charter} p.1].")
    assert {r.id: r.verdict for r in wrong.criteria_results}["C-001"] == "fail"


def test_a_path_that_names_no_document_is_reported(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.md").write_text("# A\n\ntext\n")
    task = {**TASK, "criteria": [_criterion("C-001", {"cite": ["03 Contracts/nope.md"],
                                                      "terms": ["x"]})]}
    ingest(tmp_path / "src", tmp_path / "room", task=task)
    errors = [p.message for p in validate_room(tmp_path / "room") if p.level == "error"]
    assert errors == ["expect.cite names '03 Contracts/nope.md', which is not in room.json"]
