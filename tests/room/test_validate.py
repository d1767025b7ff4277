"""``validate_room`` and ``dealroom validate``: every problem reported, clearly."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cli import dealroom
from typer.testing import CliRunner

from dealroom.cli import app
from dealroom.room import Problem, generate_room, validate_room


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("val") / "room"
    generate_room(out, docs=60, secret="tests", seed=2, profile="software", tokens=90_000,
                  workers=1)
    return out


@pytest.fixture
def room(generated: Path, tmp_path: Path) -> Path:
    """A private copy to break."""
    return Path(shutil.copytree(generated, tmp_path / "room"))


def _edit(path: Path, change: Callable[[Any], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _errors(room: Path, **kwargs: Any) -> list[str]:
    return [f"{p.where}: {p.message}" for p in validate_room(room, **kwargs) if p.level == "error"]


def test_a_generated_room_is_valid_even_deep(generated: Path) -> None:
    assert validate_room(generated, deep=True) == []


def test_a_hand_made_lab_room_is_valid_with_warnings(tmp_path: Path) -> None:
    room = tmp_path / "hand"
    (room / "documents/01 Corporate/1.1 Charter").mkdir(parents=True)
    doc = room / "documents/01 Corporate/1.1 Charter/charter.txt"
    doc.write_text("Certificate of Incorporation\fArticle II")
    record = {"id": "D00001", "path": "documents/01 Corporate/1.1 Charter/charter.txt",
              "title": "Charter", "category": "01 Corporate", "folder": "01 Corporate/1.1 Charter",
              "format": "txt", "pages": 2, "tokens": 5,
              "sha256": hashlib.sha256(doc.read_bytes()).hexdigest()}
    (room / "room.json").write_text(json.dumps({"name": "Hand", "documents": [record]}))
    (room / "task.json").write_text(json.dumps({
        "title": "Review", "instructions": "Write a memo.", "deliverables": {"memo": "memo.md"},
        "criteria": [{"id": "C-001", "title": "Charter", "match_criteria": "PASS if it cites "
                      "the charter.", "deliverables": ["memo"], "source": "expert"}]}))
    problems = validate_room(room, deep=True)
    assert {p.level for p in problems} == {"warning"}
    assert any("no expect block" in p.message for p in problems)
    assert any("no type" in p.message for p in problems)


def test_not_a_room(tmp_path: Path) -> None:
    assert _errors(tmp_path / "nothing") == [f"{tmp_path / 'nothing'}: is not a folder"]
    assert "room.json: is missing" in _errors(tmp_path)
    (tmp_path / "room.json").write_text("{not json")
    assert any("room.json: is not valid JSON" in e for e in _errors(tmp_path))


def test_changed_missing_and_unlisted_files(room: Path) -> None:
    docs = json.loads((room / "room.json").read_text())["documents"]
    (room / docs[0]["path"]).write_bytes(b"tampered")
    (room / docs[1]["path"]).unlink()
    (room / "documents" / "stray.txt").write_text("who put this here")
    errors = _errors(room)
    assert f"{docs[0]['path']}: sha256 does not match the file (changed since room.json was " \
           "written)" in errors
    assert any(e.startswith(docs[0]["path"]) and "bytes" in e for e in errors)
    assert f"{docs[1]['path']}: file is missing" in errors
    assert "documents/stray.txt: is not listed in room.json" in errors


def test_manifest_record_errors(room: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        docs = data["documents"]
        docs[1]["id"] = docs[0]["id"]
        docs[2]["id"] = "doc-3"
        docs[3]["format"] = "pdf" if docs[3]["format"] != "pdf" else "md"
        docs[4]["category"] = "99 Elsewhere"
        docs[5]["folder"] = "01 Nowhere/1.1 Nothing"
        del docs[6]["sha256"]
        docs[7]["pages"] = "2"
        docs[8]["colour"] = "blue"
        data["totals"]["tokens"] += 1

    _edit(room / "room.json", change)
    errors = "\n".join(_errors(room))
    for text in ("duplicate id", "'doc-3' is not D followed by five digits",
                 "does not match the file name", "is not the top folder",
                 "is not the file's folder",
                 "room.json: documents[6]: missing required key 'documents[6].sha256'",
                 "room.json: documents[7]: documents[7].pages must be an integer, got '2'",
                 "room.json: documents[8]: unknown key 'documents[8].colour'; the keys are id, "
                 "path, title, category, folder, format, pages, tokens, sha256, bytes",
                 "totals.tokens is"):
        assert text in errors


def test_criterion_errors(room: Path) -> None:
    def change(task: dict[str, Any]) -> None:
        c = task["criteria"]
        c[0]["id"] = "criterion one"
        c[1]["match_criteria"] = "The memo is good."
        c[2]["type"] = "vibes"
        c[3]["expect"] = {"cite": ["D99999"], "dates": ["next week"], "severity": "huge"}
        c[4]["expect"] = {"negative": True}
        c[5]["expect"] = {"colour": "blue"}
        c[6]["deliverables"] = ["report"]
        c[7]["expect"] = {"amounts": [{"value": "lots"}], "terms": [[]]}

    _edit(room / "task.json", change)
    errors = "\n".join(_errors(room))
    for text in ("id 'criterion one' is not like C-001", "must read 'PASS if ... [FAIL if ...]'",
                 "task.json: C-003: criteria[2].type must be fact, conclusion, citation, "
                 "severity, recommendation, timeline, monetary or formatting, got 'vibes'",
                 "'D99999', which is not in room.json", "'next week' is not an ISO date",
                 "task.json: C-004: criteria[3].expect.severity must be high, medium or low, "
                 "got 'huge'",
                 "a negative criterion needs the claim's terms or cite",
                 "task.json: C-006: unknown key 'criteria[5].expect.colour'; the keys are cite, "
                 "pages, amounts", "deliverables must list names",
                 "task.json: C-008: criteria[7].expect.amounts[0].value must be a number, got "
                 "'lots'", "is not a list of phrases"):
        assert text in errors


def test_answer_key_errors(room: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        f = data["findings"][0]
        f["evidence"][0]["page"] = 9999
        f["criteria"].append("C-999")
        data["findings"][1]["evidence"][0]["fact"] = "a fact that appears nowhere"

    _edit(room / "answer_key/findings.json", change)
    (room / "documents" / "answer_key").mkdir()
    errors = "\n".join(_errors(room, deep=True))
    assert "evidence page 9999 is outside" in errors
    assert "criterion 'C-999' is not in task.json" in errors
    assert "fact 'a fact that appears nowhere' is not on" in errors
    assert "answer_key must sit beside documents/, never inside it" in errors


def test_deep_check_catches_wrong_page_counts(room: Path) -> None:
    _edit(room / "room.json", lambda d: d["documents"][0].update(pages=d["documents"][0]["pages"]
                                                                 + 1))
    assert any("pages, room.json says" in e for e in _errors(room, deep=True))
    assert not any("pages, room.json says" in e for e in _errors(room))


def test_problem_renders_as_one_line() -> None:
    p = Problem("error", "task.json: C-001", "needs a non-empty 'title'")
    assert str(p) == "error: task.json: C-001: needs a non-empty 'title'"
    assert p.to_dict() == {"level": "error", "where": "task.json: C-001",
                           "message": "needs a non-empty 'title'"}


def test_cli_validate_exit_status_and_output(generated: Path, room: Path) -> None:
    ok = CliRunner().invoke(app, ["validate", str(generated)])
    assert ok.exit_code == 0 and "valid" in ok.output
    (room / "documents" / "stray.txt").write_text("x")
    bad = CliRunner().invoke(app, ["validate", str(room), "--json"])
    assert bad.exit_code == 1
    report = json.loads(bad.output)
    assert report["valid"] is False
    assert {"level": "error", "where": "documents/stray.txt",
            "message": "is not listed in room.json"} in report["problems"]
    done = dealroom("validate", str(room))
    assert done.returncode == 1
    assert "documents/stray.txt: is not listed in room.json" in done.stdout
    assert "invalid" in done.stdout and "Traceback" not in done.stderr


def test_json_nested_too_deep_is_a_problem_not_a_crash(room: Path) -> None:
    (room / "task.json").write_text("[" * 100_000 + "]" * 100_000)
    assert "task.json: is nested too deep to read" in _errors(room)
    from dealroom.errors import RoomError
    from dealroom.room import inspect_room

    with pytest.raises(RoomError, match="nested too deep"):
        inspect_room(room)
