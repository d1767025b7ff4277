"""The one JSONL reader: a kill's torn last line is left out; a damaged line with records
after it, a line nested too deep or a line that is no object is an InputError, never a
silent stop that drops every later record."""

from __future__ import annotations

import pytest

from dealroom._util.files import read_json
from dealroom.errors import ConfigError, InputError, RoomError
from dealroom.runs import read_jsonl

DEEP = "[" * 100_000 + "]" * 100_000


def test_a_torn_last_line_is_left_out(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text('{"seq": 0}\n{"seq": 1}\n{"seq": 2, "ty')
    assert [r["seq"] for r in read_jsonl(path)] == [0, 1]


def test_a_garbage_line_with_records_after_it_is_an_error(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text('{"seq": 0}\ngarbage\n{"seq": 2}\n')
    with pytest.raises(InputError, match="line 2 is not JSON .* records follow it"):
        list(read_jsonl(path))


@pytest.mark.parametrize("line,message", [(DEEP, "line 2 is nested too deep to read"),
                                          ("[1, 2]", "line 2 is list, not a JSON object"),
                                          ("7", "line 2 is int, not a JSON object")])
def test_a_line_too_deep_or_not_an_object_is_an_error(tmp_path, line, message):
    path = tmp_path / "a.jsonl"
    path.write_text('{"seq": 0}\n' + line + "\n")
    with pytest.raises(InputError, match=message):
        list(read_jsonl(path))


def test_read_json_says_a_file_is_nested_too_deep(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(DEEP)
    with pytest.raises(InputError, match="a.json is nested too deep to read"):
        read_json(path, ConfigError, "missing")
    with pytest.raises(RoomError, match="a.json is nested too deep to read"):
        read_json(path, RoomError, "missing")
