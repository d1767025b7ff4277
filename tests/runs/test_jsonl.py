"""The one JSONL reader: a kill's torn last line is left out; a damaged line with records
after it, a line nested too deep or a line that is no object is an InputError, never a
silent stop that drops every later record."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import dealroom.runs._jsonl
from dealroom._util.files import MAX_JSON_DEPTH, read_json
from dealroom.errors import ConfigError, InputError, RoomError
from dealroom.runs import RunFolder, read_jsonl

JUDGE_ROOM = Path(__file__).parents[1] / "judge" / "fixtures" / "room"
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


def nested(depth: int) -> list:
    """Lists ``depth`` deep: ``[[...]]``."""
    return json.loads("[" * depth + "]" * depth)


def test_read_json_takes_a_record_at_the_depth_limit_and_refuses_one_past_it(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps({"x": nested(MAX_JSON_DEPTH - 1)}))
    assert read_json(path, ConfigError, "missing")["x"] == nested(MAX_JSON_DEPTH - 1)
    path.write_text(json.dumps({"x": nested(MAX_JSON_DEPTH)}))
    with pytest.raises(InputError, match=f"a.json is nested too deep to read .lists and "
                                         f"objects more than {MAX_JSON_DEPTH} deep"):
        read_json(path, ConfigError, "missing")


def _deep_config(run: Path) -> None:
    config = json.loads((run / "config.json").read_text())
    (run / "config.json").write_text(json.dumps({**config, "x": nested(MAX_JSON_DEPTH)}))


def _deep_event(run: Path) -> None:
    with open(run / "trajectory.jsonl", "a") as fh:
        fh.write(json.dumps({"seq": 9, "type": "note", "x": nested(MAX_JSON_DEPTH)}) + "\n")


def _deep_file(name: str):
    def write(folder: Path) -> None:
        data = json.loads((folder / name).read_text()) if (folder / name).is_file() else {}
        (folder / name).write_text(json.dumps({**data, "x": nested(MAX_JSON_DEPTH)}))
    return write


def _deep_meta(room: Path) -> None:
    manifest = json.loads((room / "room.json").read_text())
    manifest["meta"]["x"] = nested(MAX_JSON_DEPTH - 1)  # the file: 1 + 1 + 99 levels
    (room / "room.json").write_text(json.dumps(manifest))


def _sweep(tmp: Path) -> Path:
    from dealroom.eval import read_sweep

    (tmp / "sweep.json").write_text(json.dumps({"x": nested(MAX_JSON_DEPTH)}))
    return read_sweep(tmp / "sweep.json")


RUN_READERS = {
    "config.json": (_deep_config, lambda run: RunFolder.open(run)),
    "metrics.json": (_deep_file("metrics.json"), lambda run: RunFolder(run).metrics()),
    "scores.json": (_deep_file("scores.json"), lambda run: RunFolder(run).scores()),
    "trajectory.jsonl": (_deep_event, lambda run: RunFolder(run).events()),
}


@pytest.mark.parametrize("name", RUN_READERS)
def test_every_run_record_past_the_depth_limit_is_an_input_error(run_maker, tmp_path, name):
    run = run_maker(tmp_path / "run", "memo")
    (run / "metrics.json").write_text("{}")
    (run / "scores.json").write_text("{}")
    change, read = RUN_READERS[name]
    read(run)  # as made, it reads
    change(run)
    with pytest.raises(InputError, match=f"{name}(: line 1)? is nested too deep to read"):
        read(run)


def test_room_task_and_sweep_records_past_the_depth_limit_are_refused(tmp_path):
    from dealroom.room import load_instructions, load_manifest, load_task

    room = Path(shutil.copytree(JUDGE_ROOM, tmp_path / "room"))
    load_manifest(room)
    _deep_meta(room)
    with pytest.raises(RoomError, match="room.json is nested too deep to read"):
        load_manifest(room)
    task = json.loads((room / "task.json").read_text())
    task["metadata"] = {"x": nested(MAX_JSON_DEPTH - 1)}
    (room / "task.json").write_text(json.dumps(task))
    for read in (load_instructions, load_task):
        with pytest.raises(RoomError, match="task.json is nested too deep to read"):
            read(room)
    with pytest.raises(InputError, match="sweep.json is nested too deep to read"):
        _sweep(tmp_path)


def test_a_line_longer_than_the_limit_is_too_large_not_damaged(monkeypatch, tmp_path):
    """The limit is a module constant, lowered here so that the test holds no 300 MB line: the
    reader's own path is what refuses it."""
    monkeypatch.setattr(dealroom.runs._jsonl, "MAX_LINE", 1000)
    path = tmp_path / "a.jsonl"
    fits = json.dumps({"seq": 1, "output": "x" * (1000 - 24)})
    assert len(fits) == 1000
    path.write_text('{"seq": 0}\n' + fits + "\n")
    assert [r["seq"] for r in read_jsonl(path)] == [0, 1]
    big = json.dumps({"seq": 1, "output": "x" * 5000})
    for tail in ("\n", '\n{"seq": 2}\n'):  # the last line or followed by records
        path.write_text('{"seq": 0}\n' + big + tail)
        with pytest.raises(InputError, match=r"line 2 is too large to read \(over 1,000 "
                                             r"characters\)"):
            list(read_jsonl(path))
