"""room.json and task.json as typed, versioned records: a bad file is one error naming the file,
the key, what is allowed and what it holds; every room written before still opens."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dealroom._util.files import write_json_atomic
from dealroom._util.records import migrate
from dealroom.errors import InputError, RoomError
from dealroom.room import (
    DocumentRecord,
    LabTask,
    RoomManifest,
    RoomTask,
    load_manifest,
    load_task,
)
from dealroom.room._lab import check_lab_task

HERE = Path(__file__).parent
V1_ROOM = HERE / "fixtures" / "v1-room"
"""room.json and task.json of a room generated before they were typed records (dealroom
generate --docs 4 --seed 3 --profile software --tokens 3000, secret "fixture")."""
JUDGE_ROOM = HERE.parent / "judge" / "fixtures" / "room"
HAND_ROOM = HERE.parent / "judge" / "fixtures" / "handroom"


@pytest.fixture
def room(tmp_path: Path) -> Path:
    """A copy of the v1 room's two files, to break."""
    out = tmp_path / "room"
    out.mkdir()
    for name in ("room.json", "task.json"):
        shutil.copy(V1_ROOM / name, out / name)
    return out


def _edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


# -- rooms written before still open -------------------------------------------------------------

def test_a_room_written_before_loads_and_is_written_back_byte_for_byte(tmp_path: Path) -> None:
    manifest = load_manifest(V1_ROOM)
    assert manifest.version == 1 and len(manifest.documents) == 4
    assert isinstance(manifest.documents[0], DocumentRecord)
    assert manifest.documents[0].pages == 3
    write_json_atomic(tmp_path / "room.json", manifest.to_dict())
    assert (tmp_path / "room.json").read_bytes() == (V1_ROOM / "room.json").read_bytes()


def test_hand_made_rooms_without_version_totals_or_bytes_still_load(tmp_path: Path) -> None:
    assert load_manifest(JUDGE_ROOM).name == "aravon-mini"
    record = json.loads((V1_ROOM / "room.json").read_text())["documents"][0]
    del record["bytes"]
    (tmp_path / "room.json").write_text(json.dumps({"name": "old", "documents": [record]}))
    manifest = load_manifest(tmp_path)
    assert (manifest.version, manifest.tokenizer, manifest.meta) == (1, "dealroom-words-v1", {})
    assert manifest.documents[0].bytes == 0


def test_tasks_written_before_load_as_written() -> None:
    for folder in (V1_ROOM, JUDGE_ROOM, HAND_ROOM):
        written = json.loads((folder / "task.json").read_text())
        assert load_task(folder) == written  # no version or defaults added
        assert RoomTask.model_validate(written).version == 1


def test_the_fast_path_and_the_migrating_path_read_the_same(room: Path) -> None:
    data = json.loads((room / "room.json").read_text())
    assert load_manifest(room) == RoomManifest.from_dict(data)


# -- malformed room.json -----------------------------------------------------------------------

@pytest.mark.parametrize("change, message", [
    (lambda d: d["documents"][3].update(pages="2"),
     "documents[3].pages must be an integer, got '2'"),
    (lambda d: d["documents"][1].pop("sha256"), "missing required key 'documents[1].sha256'"),
    (lambda d: d["documents"][0].update(colour="blue"), "unknown key 'documents[0].colour'; the "
     "keys are id, path, title, category, folder, format, pages, tokens, sha256, bytes"),
    (lambda d: d["documents"][2].update(tokens=-1), "documents[2].tokens must be an integer of "
     "at least 0, got -1"),
    (lambda d: d.update(meta=[]), "meta must be an object, got []"),
    (lambda d: d.update(name=None), "name must be a string, got None"),
    (lambda d: d.pop("documents"), "missing required key 'documents'"),
    (lambda d: d.update(version=2), "format version 2; this dealroom reads 1 to 1: upgrade "
     "dealroom to read it"),
], ids=["wrong-type", "missing-key", "unknown-key", "out-of-range", "meta", "name", "documents",
        "newer"])
def test_a_malformed_room_json_names_the_file_and_the_key(room: Path, change: Any,
                                                          message: str) -> None:
    _edit(room / "room.json", change)
    with pytest.raises(RoomError) as caught:
        load_manifest(room)
    assert str(room / "room.json") in str(caught.value)
    assert message in str(caught.value)


def test_a_room_json_with_many_problems_names_three_and_counts_the_rest(room: Path) -> None:
    _edit(room / "room.json", lambda d: [doc.update(pages="x") for doc in d["documents"]])
    with pytest.raises(RoomError, match=r"documents\[2\]\.pages must be an integer, got 'x' "
                                        r"\(and 1 more\)"):
        load_manifest(room)


def test_the_cli_prints_the_problem_without_a_traceback(room: Path) -> None:
    _edit(room / "room.json", lambda d: d["documents"][3].update(pages="2"))
    done = subprocess.run([sys.executable, "-m", "dealroom", "inspect", str(room)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "documents[3].pages must be an integer, got '2'" in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr


# -- malformed task.json -----------------------------------------------------------------------

@pytest.mark.parametrize("change, message", [
    (lambda t: t["criteria"][0]["expect"].update(severity="huge"),
     "criteria[0].expect.severity must be high, medium or low, got 'huge'"),
    (lambda t: t["criteria"][1].pop("match_criteria"),
     "missing required key 'criteria[1].match_criteria'"),
    (lambda t: t["criteria"][2]["expect"].update(colour="blue"),
     "unknown key 'criteria[2].expect.colour'; the keys are cite, pages, amounts"),
    (lambda t: t["criteria"][0].update(type="vibes"), "criteria[0].type must be fact, conclusion, "
     "citation, severity, recommendation, timeline, monetary or formatting, got 'vibes'"),
    (lambda t: t["criteria"][0]["expect"].update(amounts=[{"value": 5, "tolerance": -1}]),
     "criteria[0].expect.amounts[0].tolerance must be a number of at least 0, got -1"),
    (lambda t: t.update(deliverables={"memo": 3}), "deliverables.memo must be a string, got 3"),
    (lambda t: t.update(criteria={"C-001": {}}), "criteria must be a list"),
    (lambda t: t.update(version=2), "format version 2; this dealroom reads 1 to 1"),
], ids=["enum", "missing-key", "unknown-expect-key", "type", "bound", "deliverables", "criteria",
        "newer"])
def test_a_malformed_task_json_names_the_file_and_the_key(room: Path, change: Any,
                                                          message: str) -> None:
    _edit(room / "task.json", change)
    with pytest.raises(RoomError) as caught:
        load_task(room)
    assert str(room / "task.json") in str(caught.value)
    assert message in str(caught.value)


def test_keys_a_task_does_not_name_are_kept_but_expect_refuses_them(room: Path) -> None:
    def change(task: dict[str, Any]) -> None:
        task["language"] = "en"
        task["criteria"][0]["sources"] = ["2 Contracts/msa.docx"]
        task["criteria"][0]["expect"]["terms"] = ["Kinion"]  # a phrase alone: a group of one

    _edit(room / "task.json", change)
    task = load_task(room)
    assert task["language"] == "en" and task["criteria"][0]["sources"] == ["2 Contracts/msa.docx"]
    assert RoomTask.model_validate(task).criteria[0].expect.terms == [["Kinion"]]  # type: ignore[union-attr]


# -- LAB's public shape ------------------------------------------------------------------------

PUBLIC = {"title": "Antitrust review", "instructions": "Write the antitrust memo.",
          "deliverables": {"antitrust-risk-memo.docx": "antitrust-risk-memo.docx"},
          "criteria": [{"id": "C-001", "title": "Filing",
                        "match_criteria": "PASS if the memo says a filing is required."}],
          "jurisdiction": "US"}


def test_lab_public_shape_validates_with_its_own_keys() -> None:
    check_lab_task(PUBLIC)
    assert LabTask.model_validate(PUBLIC).model_extra == {"jurisdiction": "US"}


@pytest.mark.parametrize("task, message", [
    ({**PUBLIC, "criteria": [{"id": "C-001", "match_criteria": "PASS if x."}]},
     "missing required key 'criteria[0].title'"),
    ({**PUBLIC, "tags": "antitrust"}, "tags must be a list"),
    ({**PUBLIC, "criteria": [{**PUBLIC["criteria"][0], "deliverables": "memo"}]},
     "criteria[0].deliverables must be a list"),
    ({k: v for k, v in PUBLIC.items() if k != "instructions"},
     "missing required key 'instructions'"),
], ids=["no-title", "tags", "criterion-deliverables", "no-instructions"])
def test_lab_tasks_of_the_wrong_shape_are_input_errors_naming_the_key(task: dict[str, Any],
                                                                      message: str) -> None:
    with pytest.raises(InputError, match="task.json: ") as caught:
        check_lab_task(task)
    assert message in str(caught.value)


# -- versions ----------------------------------------------------------------------------------

def test_migrations_apply_in_turn_from_the_files_version() -> None:
    steps = {1: lambda d: {**d, "b": d["a"] + 1}, 2: lambda d: {**d, "c": d["b"] + 1}}
    assert migrate({"a": 1}, 3, steps, "room.json", RoomError) == {"a": 1, "b": 2, "c": 3,
                                                                    "version": 3}
    assert migrate({"version": 2, "b": 5}, 3, steps, "room.json",
                   RoomError) == {"b": 5, "c": 6, "version": 3}
    with pytest.raises(RoomError, match="format version 'x'"):
        migrate({"version": "x"}, 3, steps, "room.json", RoomError)
