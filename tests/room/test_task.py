"""What the agent is told: instructions and deliverable names, and a clear error for a bad task."""

import json

import pytest

from dealroom.errors import RoomError
from dealroom.room import DEFAULT_INSTRUCTIONS, Instructions, load_instructions


def test_a_room_without_a_task_gets_the_default_request(tmp_path):
    assert load_instructions(tmp_path) == Instructions(DEFAULT_INSTRUCTIONS, {"memo": "memo.md"})


def test_only_instructions_and_deliverables_come_back(tmp_path):
    task = {"title": "T", "instructions": "Review the leases.", "criteria": [{"id": "C-001"}],
            "deliverables": {"report": "antitrust-risk-memo.docx"}}
    (tmp_path / "task.json").write_text(json.dumps(task))
    got = load_instructions(tmp_path)
    assert got == Instructions("Review the leases.", {"report": "antitrust-risk-memo.docx"})
    assert not hasattr(got, "criteria")


def test_empty_instructions_fall_back_to_the_default(tmp_path):
    (tmp_path / "task.json").write_text(json.dumps({"instructions": ""}))
    assert load_instructions(tmp_path).text == DEFAULT_INSTRUCTIONS


@pytest.mark.parametrize("content, message", [
    ("{not json", "cannot be read"),
    (b"\xff\xfe{}", "cannot be read"),
    ("[1, 2]", "must hold a JSON object"),
    ('{"instructions": 3}', "instructions must be a string"),
    ('{"deliverables": ["memo.md"]}',
     r"deliverables must be an object, got \['memo.md'\]: it maps deliverable names to file "
     "names"),
    ('{"deliverables": {"memo": 3}}', "deliverables.memo must be a string, got 3"),
])
def test_a_task_that_cannot_be_read_is_an_error_naming_the_file(tmp_path, content, message):
    path = tmp_path / "task.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(RoomError, match=message) as err:
        load_instructions(tmp_path)
    assert str(path) in str(err.value)


def test_a_task_that_is_a_folder_is_an_error(tmp_path):
    (tmp_path / "task.json").mkdir()
    with pytest.raises(RoomError, match="task.json cannot be read"):
        load_instructions(tmp_path)
