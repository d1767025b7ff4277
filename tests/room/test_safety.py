"""A room never serves a file from outside its documents/: links and ``..`` are refused."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from support.cli import dealroom
from test_store import make_room

from dealroom.errors import RoomError
from dealroom.room import Room, build_index, validate_room
from dealroom.room._index import ensure_index
from dealroom.room._manifest import document_path
from dealroom.testing import MockOpenAIServer

CANARY = "CANARY-shadow root:$6$saltsalt$hash:19000:0:99999:7:::"
CHARTER = "documents/01 Corporate/1.1 Charter/charter.txt"


@pytest.fixture
def shadow(tmp_path: Path) -> Path:
    """A host file standing in for /etc/shadow (mode 600, outside every room)."""
    path = tmp_path / "etc" / "shadow"
    path.parent.mkdir()
    path.write_text(CANARY)
    path.chmod(0o600)
    return path


def _edit_manifest(room: Path, path: str) -> None:
    manifest = json.loads((room / "room.json").read_text())
    manifest["documents"][0]["path"] = path
    (room / "room.json").write_text(json.dumps(manifest))


def _linked_room(tmp_path: Path, shadow: Path) -> Path:
    room = make_room(tmp_path / "room")
    (room / CHARTER).unlink()
    os.symlink(shadow, room / CHARTER)
    return room


def _dotdot_room(tmp_path: Path, shadow: Path) -> Path:
    room = make_room(tmp_path / "room")
    depth = "../" * (len(room.parts) + 2)
    _edit_manifest(room, f"documents/{depth}{shadow.relative_to('/')}")
    return room


def _linked_folder_room(tmp_path: Path, shadow: Path) -> Path:
    room = make_room(tmp_path / "room")
    folder = room / "documents" / "01 Corporate" / "1.1 Charter"
    (folder / "charter.txt").unlink()
    folder.rmdir()
    os.symlink(shadow.parent, folder)
    _edit_manifest(room, "documents/01 Corporate/1.1 Charter/shadow")
    return room


UNSAFE = {"symlink": _linked_room, "dotdot": _dotdot_room, "linked-folder": _linked_folder_room}


@pytest.mark.parametrize("make", UNSAFE.values(), ids=UNSAFE.keys())
def test_an_unsafe_room_stops_before_anything_is_read(tmp_path, shadow, make):
    room = make(tmp_path, shadow)
    with pytest.raises(RoomError, match="cannot be opened, nothing was read: D00001"):
        Room.open(room)
    with pytest.raises(RoomError, match="nothing was read"):
        build_index(room)
    assert not (room / ".index").exists()
    errors = [p for p in validate_room(room, deep=True) if p.level == "error"]
    assert errors and all(CANARY not in str(p) for p in errors)


def test_a_link_made_after_the_index_was_built_still_stops_the_room(tmp_path, shadow):
    room = make_room(tmp_path / "room")
    Room.open(room).close()
    (room / CHARTER).unlink()
    os.symlink(shadow, room / CHARTER)
    with pytest.raises(RoomError, match="is a symbolic link to .*outside the room's documents/"):
        ensure_index(room)


RUBRIC = {"criteria": [{"id": "C-1", "title": "Fee",
                         "match_criteria": "PASS if the memo states the fee of $4,488,000."}]}


@pytest.mark.parametrize("hidden", ["task.json", "answer_key/findings.json",
                                    "answer_key/deep/generation.json"])
@pytest.mark.parametrize("indexed_first", [False, True])
def test_a_document_hard_linked_to_a_hidden_file_is_refused(tmp_path, hidden, indexed_first):
    room = make_room(tmp_path / "room")
    secret = room / hidden
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text(json.dumps(RUBRIC))
    if indexed_first:  # the link made after a clean index was built
        Room.open(room).close()
    (room / CHARTER).unlink()
    os.link(secret, room / CHARTER)
    with pytest.raises(RoomError, match=f"D00001: {CHARTER} is a hard link to the room's "
                                        f"{hidden}"):
        Room.open(room)
    with pytest.raises(RoomError, match="hard link"):
        build_index(room)
    errors = [p for p in validate_room(room, deep=True) if p.level == "error"]
    assert errors and all("match_criteria" not in str(p) for p in errors)


def test_grep_never_returns_the_rubric(tmp_path):
    room = make_room(tmp_path / "room")
    (room / "task.json").write_text(json.dumps(RUBRIC))
    (room / CHARTER).unlink()
    os.link(room / "task.json", room / CHARTER)
    with pytest.raises(RoomError, match="hard link"):
        Room.open(room).grep("match_criteria")
    (room / CHARTER).unlink()
    (room / "task.json").rename(room / "rubric.json")  # the link stays; no longer the rubric
    os.link(room / "rubric.json", room / CHARTER)
    (room / "task.json").write_text(json.dumps(RUBRIC))
    with Room.open(room) as opened:  # a document with several names (not hidden) is read
        assert [h.doc for h in opened.grep("match_criteria")] == ["D00001"]


def test_a_linked_documents_folder_is_refused(tmp_path, shadow):
    room = make_room(tmp_path / "room")
    (shadow.parent / "01 Corporate" / "1.1 Charter").mkdir(parents=True)
    (shadow.parent / "01 Corporate" / "1.1 Charter" / "charter.txt").write_text(CANARY)
    os.rename(room / "documents", tmp_path / "elsewhere")
    os.symlink(shadow.parent, room / "documents")
    with pytest.raises(RoomError, match="documents is a symbolic link"):
        Room.open(room)


def test_links_that_stay_inside_documents_are_read(tmp_path):
    room = make_room(tmp_path / "room")
    target = room / "documents" / "01 Corporate" / "charter-copy.txt"
    os.replace(room / CHARTER, target)
    os.symlink("../charter-copy.txt", room / CHARTER)
    with Room.open(room) as opened:
        assert "CERTIFICATE OF INCORPORATION" in opened.doc("D00001").text
    assert document_path(room, CHARTER) == target.resolve()


@pytest.mark.parametrize("path", ["documents", "documents/", "documents/./x.txt", "/etc/shadow",
                                  "answer_key/findings.json", "documents/a/../../room.json"])
def test_malformed_manifest_paths_are_refused(tmp_path, path):
    room = make_room(tmp_path / "room")
    with pytest.raises(RoomError):
        document_path(room, path)


def _dealroom(*args: str) -> subprocess.CompletedProcess[str]:
    return dealroom(*args)  # in this process (support.cli)


@pytest.mark.parametrize("make", UNSAFE.values(), ids=UNSAFE.keys())
def test_repl_and_run_refuse_an_unsafe_room_with_one_line(tmp_path, shadow, make):
    room = make(tmp_path, shadow)
    repl = _dealroom("repl", str(room), "-c", "print(room.doc('D00001').text)")
    with MockOpenAIServer("NONE") as srv:
        run = _dealroom("run", str(room), "--out", str(tmp_path / "run"), "--root", "scripted",
                        "--sub", f"reader@{srv.base_url}", "--max-turns", "3")
    for done in (repl, run):
        assert done.returncode == 1, done.stdout + done.stderr
        assert "cannot be opened, nothing was read" in done.stderr
        assert "Traceback" not in done.stderr
        assert CANARY not in done.stdout + done.stderr
